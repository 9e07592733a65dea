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
            "tool_name",
            "source",
            "model",
            "session_started",
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
fn a_malformed_fts_query_finds_nothing_without_failing() {
    let env = Env::new();
    let db = env.demo("q.db");
    env.run(&db, &["search", "\"("])
        .ok()
        .stderr_has("no messages match");
    assert_eq!(env.json(&db, &["search", "\"("]), Value::Array(Vec::new()));
    assert_eq!(
        env.json(&db, &["search", "AND OR NOT"]),
        Value::Array(Vec::new())
    );
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
