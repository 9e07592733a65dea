//! `NO_COLOR` on a terminal: the CLI styles its output (bold headers, the
//! search hit in bold yellow) only when stdout is a terminal, and not at all
//! when `NO_COLOR` holds a value (no-color.org: an empty value does not
//! count). The terminal is a pseudo-terminal from util-linux's `script`; the
//! tests skip, saying why, where it is missing.

use std::path::Path;
use std::process::Command;

use crate::common::*;

/// Runs the binary on a pseudo-terminal; `None` when `script` is missing
/// (the test then says so on stderr and passes: a machine without util-linux).
#[allow(clippy::print_stderr)]
fn on_a_terminal(env: &Env, db: &Path, no_color: Option<&str>, args: &str) -> Option<String> {
    let probe = Command::new("script").arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: util-linux `script` (a pseudo-terminal) is not installed");
        return None;
    }
    let line = format!(
        "'{}' --db '{}' {args}",
        env!("CARGO_BIN_EXE_hermes-state"),
        db.display()
    );
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &line, "/dev/null"])
        .env("HERMES_HOME", env.dir.path())
        .env("TZ", "UTC")
        .env("COLUMNS", "120")
        .env("PAGER", "cat")
        .env_remove("NO_COLOR")
        .current_dir(env.dir.path());
    if let Some(value) = no_color {
        cmd.env("NO_COLOR", value);
    }
    let output = cmd.output().expect("run script");
    assert!(output.status.success(), "{output:?}");
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn styles_on_a_terminal_and_none_with_no_color() {
    let env = Env::new();
    let db = env.demo("c.db");
    for args in ["sessions list", "search bike"] {
        let Some(styled) = on_a_terminal(&env, &db, None, args) else {
            return;
        };
        assert!(
            styled.contains("\x1b["),
            "{args}: no style on a terminal: {styled:?}"
        );
        let empty = on_a_terminal(&env, &db, Some(""), args).unwrap_or_default();
        assert!(
            empty.contains("\x1b["),
            "{args}: an empty NO_COLOR still styles"
        );
        let plain = on_a_terminal(&env, &db, Some("1"), args).unwrap_or_default();
        assert!(
            !plain.contains('\x1b'),
            "{args}: escapes with NO_COLOR=1: {plain:?}"
        );
        // The same text, only unstyled.
        assert!(plain.contains(if args == "search bike" {
            ">>>bike<<<"
        } else {
            "demo-paris"
        }));
    }
    // On a terminal a search hit is bold yellow, the markers gone.
    let hit = on_a_terminal(&env, &db, None, "search bike").unwrap_or_default();
    assert!(hit.contains("\x1b[1;33mbike\x1b[0m"), "{hit:?}");
}
