//! `search` and `stats`.

use serde_json::Value;

use crate::common::*;

#[test]
fn search_human_and_json() {
    let env = Env::new();
    let db = env.demo("q.db");
    // Piped: the library's markers, verbatim.
    env.run(&db, &["search", "bike"])
        .ok()
        .stdout_has("demo-paris")
        .stdout_has(">>>bike<<<")
        .stderr_has("2 results");
    let hits = env.json(&db, &["search", "bike"]);
    let hit = &hits[0];
    assert_eq!(
        keys(hit),
        [
            "id",
            "session_id",
            "role",
            "snippet",
            "timestamp",
            "timestamp_iso",
            "tool_name",
            "source",
            "model",
            "session_started",
            "session_started_iso",
            "context"
        ]
    );
    assert_eq!(hit["session_id"], "demo-paris");
    // CJK.
    let cjk = env.json(&db, &["search", "东京"]);
    assert!(!cjk.as_array().expect("array").is_empty());
    assert!(
        cjk.as_array()
            .expect("array")
            .iter()
            .all(|h| h["session_id"] == "demo-tokyo")
    );
    env.run(&db, &["search", "浅草寺"])
        .ok()
        .stdout_has("demo-tokyo");
    // Filters.
    let tool_only = env.json(&db, &["search", "tests", "--role", "tool"]);
    assert!(
        tool_only
            .as_array()
            .expect("array")
            .iter()
            .all(|h| h["role"] == "tool")
    );
    let telegram = env.json(&db, &["search", "spinach", "--source", "telegram"]);
    assert_eq!(telegram.as_array().map(Vec::len), Some(2));
    let excluded = env.json(&db, &["search", "spinach", "--exclude-source", "telegram"]);
    assert_eq!(excluded, Value::Array(Vec::new()));
    let one = env.json(&db, &["search", "parser", "--limit", "1"]);
    let next = env.json(&db, &["search", "parser", "--limit", "1", "--offset", "1"]);
    assert_eq!(one.as_array().map(Vec::len), Some(1));
    assert_ne!(one[0]["id"], next[0]["id"]);
    env.run(&db, &["search", "bike", "--context", "--sort", "newest"])
        .ok()
        .stdout_has("assistant:");
}

#[test]
fn a_malformed_fts_query_is_a_usage_error_not_an_empty_answer() {
    let env = Env::new();
    let db = env.demo("q.db");
    for query in ["\"(", "AND OR NOT"] {
        for json in [false, true] {
            let mut args = vec!["search", query];
            if json {
                args.insert(0, "--json");
            }
            let run = env.run(&db, &args).fails(2).one_error_line();
            assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        }
    }
}

#[test]
fn stats_human_and_json() {
    let env = Env::new();
    let db = env.demo("st.db");
    env.run(&db, &["stats"])
        .ok()
        .stdout_has("8 sessions, 30 messages")
        .stdout_has("claude-sonnet-4")
        .stdout_has("compression")
        .stdout_has("Top sessions");
    // A total line sums the per-model rows: the demo's four models.
    let text = env.run(&db, &["stats"]).ok().stdout;
    let total = text
        .lines()
        .find(|line| line.trim_start().starts_with("TOTAL"))
        .unwrap_or_else(|| panic!("a TOTAL line: {text}"));
    let cells: Vec<&str> = total.split_whitespace().collect();
    assert_eq!(
        cells[1..6],
        ["8", "75,740", "9,396", "43,000", "0"],
        "{total}"
    );
    let value = env.json(&db, &["stats", "--top", "3"]);
    assert_eq!(value["sessions"], 8);
    assert_eq!(value["messages"], 30);
    assert_eq!(value["top_sessions"].as_array().map(Vec::len), Some(3));
    assert_eq!(value["top_sessions"][0]["id"], "demo-refactor");
    assert_eq!(value["models"][0]["model"], "claude-sonnet-4");
    for key in [
        "model",
        "session_count",
        "total_input",
        "total_output",
        "total_cost",
    ] {
        assert!(value["models"][0].get(key).is_some(), "missing {key}");
    }
    assert!(
        value["usage"]
            .as_array()
            .expect("usage")
            .iter()
            .any(|u| u["task"] == "compression")
    );
}

/// `--limit 0` means all, as in sqlite-utils and `llm logs` (it used to
/// show nothing): `sessions list`, `search` (and `--by-conversation`) and
/// `messages list`.
#[test]
fn a_limit_of_zero_lists_everything() {
    let env = Env::new();
    let db = env.demo("all.db");
    // 30 sessions: more than the default 20.
    for n in 0..22 {
        let id = format!("extra-{n:02}");
        env.run(&db, &["sessions", "create", "--source", "cli", "--id", &id])
            .ok();
        env.run(
            &db,
            &[
                "messages",
                "append",
                &id,
                "--role",
                "user",
                "--content",
                "bike shed",
            ],
        )
        .ok();
    }
    let count = |args: &[&str]| env.json(&db, args).as_array().expect("a JSON array").len();
    assert_eq!(count(&["sessions", "list"]), 20);
    assert_eq!(count(&["sessions", "list", "--limit", "0"]), 30);
    assert_eq!(
        count(&["sessions", "list", "--limit", "0", "--offset", "25"]),
        5
    );
    assert_eq!(count(&["search", "bike"]), 20);
    assert_eq!(count(&["search", "bike", "--limit", "0"]), 24);
    assert_eq!(
        count(&["search", "bike", "--by-conversation", "--limit", "0"]),
        23
    );
    assert_eq!(
        count(&["messages", "list", "demo-paris", "--limit", "0"]),
        6
    );
    assert_eq!(
        count(&["messages", "list", "demo-paris", "--limit", "2"]),
        2
    );
    // Human output: no "more with --offset" note when everything was shown.
    let run = env.run(&db, &["search", "bike", "--limit", "0"]).ok();
    assert!(run.stderr.contains("24 results"), "{}", run.stderr);
    assert!(!run.stderr.contains("more with"), "{}", run.stderr);
}
