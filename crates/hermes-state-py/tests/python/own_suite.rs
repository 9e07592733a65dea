//! The binding's own pytest suite (`tests/pytest/`).

use super::environment::{crate_dir, prepared};
use super::process::run;

#[test]
fn the_bindings_own_pytest_suite_passes() {
    let environment = match prepared() {
        Ok(environment) => environment,
        Err(reason) => {
            println!("skipped: {reason} (the binding's pytest suite needs it)");
            return;
        }
    };
    let workdir = tempfile::tempdir_in(&environment.scratch).expect("a scratch folder");
    let output = run(
        environment
            .pytest(workdir.path())
            .arg(crate_dir().join("tests").join("pytest"))
            .env("HERMES_HOME", workdir.path().join("hermes-home")),
        "the binding's pytest suite",
    );
    let report = String::from_utf8_lossy(&output.stdout);
    println!("{}", report.lines().last().unwrap_or_default());
}
