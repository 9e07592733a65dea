//! The original itself beside this package on one file (issue 26, item 6):
//! `hermes-agent` 0.19.0 (schema 22), from its PyPI sdist, writes a store,
//! then runs as the live agent appending to it while this package opens the
//! same file — its writable open upgrades the file to schema 23 under the
//! running agent (docs/DECISIONS.md) — reads the original's rows, searches
//! them and writes its own. Afterwards every append the agent acknowledged
//! is stored, counters equal rows, and the original reopens the upgraded
//! file, reads and searches this package's rows and writes again
//! (`tests/coexistence/live_original.py` does the steps and the checks).

use std::process::Command;

use super::environment::{crate_dir, prepared};
use super::original_suite::{extract_all, sdist};
use super::process::run;

#[test]
fn the_original_keeps_writing_while_this_package_upgrades_reads_and_writes_its_file() {
    let environment = match prepared() {
        Ok(environment) => environment,
        Err(reason) => {
            println!("skipped: {reason} (the live original needs it)");
            return;
        }
    };
    let Some(sdist) = sdist(environment) else {
        return;
    };
    let original = tempfile::tempdir_in(&environment.scratch).expect("a folder for the original");
    extract_all(environment, &sdist, original.path());
    let work = tempfile::tempdir_in(&environment.scratch).expect("a scratch folder");
    let output = run(
        Command::new(&environment.python)
            .arg(crate_dir().join("tests/coexistence/live_original.py"))
            .arg(original.path())
            .arg(work.path())
            .current_dir(work.path()),
        "the original as the live agent beside this package",
    );
    let report = String::from_utf8_lossy(&output.stdout);
    println!("live original beside hermes_state_rs: {report}");
    assert!(report.lines().any(|line| line == "OK"), "{report}");
    assert!(report.contains("\"schema_after\": 23"), "{report}");
    assert!(report.contains("\"agent_acks\": 150"), "{report}");
}
