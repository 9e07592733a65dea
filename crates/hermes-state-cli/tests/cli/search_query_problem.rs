//! `search` with a query that cannot be run — FTS5 cannot parse it, or
//! nothing is left once its operators are removed — is an error: one line
//! on stderr saying why, exit 2, nothing on stdout in any format (not an
//! empty `[]`, which a script would take for "nothing matches"). A
//! well-formed query that matches nothing is no error: exit 0.

use crate::common::Env;

#[test]
fn a_query_that_cannot_be_run_exits_2_and_says_why() {
    let env = Env::new();
    let db = env.demo("q.db");

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
        let reason = format!("query cannot be parsed: {error} (searched as {searched})");
        for extra in [
            &[][..],
            &["--json"],
            &["--format", "jsonl"],
            &["--format", "csv"],
            &["--by-conversation"],
            &["--by-conversation", "--json"],
        ] {
            let mut args = vec!["search", query];
            args.extend_from_slice(extra);
            let run = env
                .run(&db, &args)
                .fails(2)
                .one_error_line()
                .stderr_has(&format!("error: search: {reason}; "))
                .stderr_has("put special characters inside double quotes");
            assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        }
    }

    // Nothing left once the sanitizer has removed FTS5's specials.
    let run = env
        .run(&db, &["search", "\"("])
        .fails(2)
        .one_error_line()
        .stderr_has(
            "nothing is left to search for once FTS5 operators and special characters are removed",
        )
        .stderr_has("give at least one word");
    assert!(run.stdout.is_empty(), "{}", run.stdout);

    // A well-formed query that matches nothing is no error.
    let run = env.run(&db, &["search", "zebra"]).ok();
    assert_eq!(run.stderr, "no messages match \"zebra\"\n");
    assert_eq!(
        env.json(&db, &["search", "zebra"]),
        serde_json::Value::Array(Vec::new())
    );
}
