//! `search` with a query that can only find nothing says why on stderr,
//! after "no messages match", and still exits 0 with an empty `--json` list.

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;

fn hermes_state(home: &Path, args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_hermes-state"))
        .env("HERMES_HOME", home)
        .env_remove("NO_COLOR")
        .current_dir(home)
        .args(args)
        .output()
        .expect("run hermes-state");
    assert_eq!(
        output.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn an_unsearchable_query_is_named_when_nothing_is_found() {
    let home = tempfile::tempdir().expect("tempdir");
    let db = home.path().join("state.db");
    let db = db.to_str().expect("utf-8 path");
    hermes_state(home.path(), &["--db", db, "demo"]);

    // FTS5 cannot parse what the sanitizer makes of these.
    for (query, error, searched) in [
        ("50%", "fts5: syntax error near \"%\"", "\"50%\""),
        ("AND OR NOT", "fts5: syntax error near \"OR\"", "\"OR\""),
        (
            "alice@example.com",
            "fts5: syntax error near \"@\"",
            "\"alice@\\\"example.com\\\"\"",
        ),
    ] {
        let run = hermes_state(home.path(), &["--db", db, "search", query]);
        assert!(run.stdout.is_empty(), "{query:?}: no hits on stdout");
        let text = stderr(&run);
        assert_eq!(
            text,
            format!(
                "no messages match {query:?}\nquery cannot be parsed: {error} (searched as {searched})\n"
            ),
            "{query:?}"
        );
        // --json keeps stdout one JSON document and stderr clean.
        let json = hermes_state(home.path(), &["--db", db, "--json", "search", query]);
        assert_eq!(String::from_utf8_lossy(&json.stdout).trim(), "[]");
        assert!(stderr(&json).is_empty(), "{query:?}: {}", stderr(&json));
    }

    // Nothing left once the sanitizer has removed FTS5's specials.
    let run = hermes_state(home.path(), &["--db", db, "search", "\"("]);
    assert!(
        stderr(&run).ends_with(
            "nothing is left to search for once FTS5 operators and special characters are removed\n"
        ),
        "{}",
        stderr(&run)
    );

    // A well-formed query that matches nothing has no problem to report.
    let run = hermes_state(home.path(), &["--db", db, "search", "zebra"]);
    assert_eq!(stderr(&run), "no messages match \"zebra\"\n");
}
