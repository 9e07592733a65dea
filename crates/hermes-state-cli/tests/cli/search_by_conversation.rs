//! `search --by-conversation`: one result per compression lineage.

use serde_json::Value;

use crate::common::*;

#[test]
fn segments_of_one_conversation_show_once_human_and_json() {
    let env = Env::new();
    let db = env.demo("c.db");
    // The refactoring session and its compression continuation are one
    // conversation; the delegate and the branch are their own.
    env.run(&db, &["search", "parse*", "--by-conversation"])
        .ok()
        .stdout_has("demo-refactor  Refactor the config parser #2")
        .stdout_has("6 hits in 2 segments")
        .stdout_has("best in demo-refactor-2")
        .stdout_has("demo-refactor-docs")
        .stdout_has("demo-refactor-serde")
        .stderr_has("3 conversations");
    let plain = env.json(&db, &["search", "parse*"]);
    assert_eq!(plain.as_array().map(Vec::len), Some(8));
    let found = env.json(&db, &["search", "parse*", "--by-conversation"]);
    let list = found.as_array().expect("array");
    assert_eq!(
        list.iter()
            .map(|c| c["root_session_id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["demo-refactor", "demo-refactor-docs", "demo-refactor-serde"]
    );
    let first = &list[0];
    assert_eq!(
        keys(first),
        [
            "root_session_id",
            "title",
            "best",
            "hits",
            "session_ids",
            "first_timestamp",
            "last_timestamp"
        ]
    );
    assert_eq!(first["title"], "Refactor the config parser #2");
    assert_eq!(first["hits"], 6);
    assert_eq!(
        first["session_ids"],
        serde_json::json!(["demo-refactor", "demo-refactor-2"])
    );
    // The best hit is the plain search's first hit, with its own fields.
    assert_eq!(first["best"], plain[0]);
    assert!(first["first_timestamp"].as_f64() < first["last_timestamp"].as_f64());
}

#[test]
fn limit_and_offset_count_conversations_and_the_sort_applies() {
    let env = Env::new();
    let db = env.demo("p.db");
    let page = env.json(
        &db,
        &[
            "search",
            "parse*",
            "--by-conversation",
            "--sort",
            "newest",
            "--limit",
            "1",
            "--offset",
            "1",
        ],
    );
    // Newest best hits: the branch (day 5), the delegate, the lineage.
    assert_eq!(page.as_array().map(Vec::len), Some(1));
    assert_eq!(page[0]["root_session_id"], "demo-refactor-docs");
    env.run(
        &db,
        &["search", "parse*", "--by-conversation", "--limit", "1"],
    )
    .ok()
    .stderr_has("1 conversation (more with --offset 1)");
    let filtered = env.json(
        &db,
        &[
            "search",
            "parse*",
            "--by-conversation",
            "--role",
            "assistant",
        ],
    );
    assert!(
        filtered
            .as_array()
            .expect("array")
            .iter()
            .all(|c| c["best"]["role"] == "assistant")
    );
}

#[test]
fn no_match_and_an_unsearchable_query_say_so() {
    let env = Env::new();
    let db = env.demo("n.db");
    env.run(&db, &["search", "submarine", "--by-conversation"])
        .ok()
        .stderr_has("no conversations match");
    let run = env
        .run(&db, &["search", "\"(", "--by-conversation"])
        .fails(2)
        .one_error_line()
        .stderr_has("nothing is left to search for");
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert_eq!(
        env.json(&db, &["search", "submarine", "--by-conversation"]),
        Value::Array(Vec::new())
    );
}
