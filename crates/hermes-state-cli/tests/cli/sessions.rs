//! The `sessions` commands.

use serde_json::Value;

use crate::common::*;

#[test]
fn sessions_list_human_and_json() {
    let env = Env::new();
    let db = env.demo("s.db");
    env.run(&db, &["sessions", "list"])
        .ok()
        .stdout_has("LAST ACTIVE")
        .stdout_has("demo-dinner")
        .stdout_has("Dinner ideas")
        .stdout_has("东京旅行计划");
    let all = env.json(&db, &["sessions", "list"]);
    let first = &all[0];
    for key in [
        "id",
        "source",
        "model",
        "title",
        "started_at",
        "message_count",
        "preview",
        "last_active",
    ] {
        assert!(first.get(key).is_some(), "missing {key} in {first}");
    }
    // Newest first; the preview is the first user message.
    assert_eq!(first["id"], "demo-dinner");
    assert!(
        first["preview"]
            .as_str()
            .unwrap_or_default()
            .starts_with("I have chickpeas")
    );
    let telegram = env.json(&db, &["sessions", "list", "--source", "telegram"]);
    assert_eq!(ids(&telegram), ["demo-dinner"]);
    let two = env.json(&db, &["sessions", "list", "--limit", "2"]);
    assert_eq!(ids(&two).len(), 2);
    let none = env.json(&db, &["sessions", "list", "--source", "nowhere"]);
    assert_eq!(none, Value::Array(Vec::new()));
    env.run(&db, &["sessions", "ls", "--source", "nowhere"])
        .ok()
        .stderr_has("no sessions");
}

#[test]
fn sessions_show_human_and_json() {
    let env = Env::new();
    let db = env.demo("s.db");
    let shown = env
        .run(&db, &["sessions", "show", "demo-paris"])
        .ok()
        .stdout_has("Session demo-paris")
        .stdout_has("Weather in Paris")
        .stdout_has("── user")
        .stdout_has("── tool weather")
        .stdout_has("weather({\"city\": \"Paris\"")
        .stdout_has("[call_weather_1]")
        .stdout_has("reasoning (")
        .stdout_has("1,240 in");
    // Reasoning is folded unless asked for.
    assert!(!shown.stdout.contains("I should call the weather tool"));
    env.run(&db, &["sessions", "show", "demo-paris", "--reasoning"])
        .ok()
        .stdout_has("I should call the weather tool");
    // A title works where an id is expected.
    env.run(&db, &["sessions", "show", "Dinner ideas"])
        .ok()
        .stdout_has("Session demo-dinner");
    // CJK content comes back intact.
    env.run(&db, &["sessions", "show", "demo-tokyo"])
        .ok()
        .stdout_has("浅草寺");

    let value = env.json(&db, &["sessions", "show", "demo-paris"]);
    assert_eq!(value["id"], "demo-paris");
    assert_eq!(value["source"], "cli");
    assert_eq!(value["message_count"], 6);
    assert_eq!(keys(&value).last(), Some(&"messages"));
    let messages = value["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 6);
    assert_eq!(messages[1]["tool_calls"][0]["function"]["name"], "weather");
    assert_eq!(messages[2]["tool_name"], "weather");
    assert_eq!(messages[2]["tool_call_id"], "call_weather_1");
    assert!(messages[1]["reasoning"].as_str().is_some());
}

#[test]
fn sessions_create_end_reopen_clear_delete() {
    let env = Env::new();
    let db = env.path("w.db");
    // create makes the store, prints the id.
    let id = env
        .run(
            &db,
            &["sessions", "create", "--source", "cli", "--model", "gpt-5"],
        )
        .ok()
        .stderr_has("created a new store")
        .stdout
        .trim()
        .to_owned();
    assert_eq!(id.len(), "20260101_000000_abcdef".len(), "{id}");
    let child = env.json(
        &db,
        &[
            "sessions",
            "create",
            "--source",
            "telegram",
            "--id",
            "child",
            "--parent",
            &id,
            "--user-id",
            "u1",
        ],
    );
    assert_eq!(child["id"], "child");
    assert_eq!(child["parent_session_id"], id.as_str());
    assert_eq!(child["user_id"], "u1");
    assert_eq!(child["source"], "telegram");

    env.run(&db, &["sessions", "end", &id, "--reason", "user_exit"])
        .ok()
        .stdout_has("ended session");
    let again = env
        .run(&db, &["sessions", "end", &id, "--reason", "other"])
        .ok()
        .stdout_has("already ended (user_exit)");
    assert!(again.stderr.is_empty());
    let ended = env.json(&db, &["sessions", "end", "child", "--reason", "timeout"]);
    assert_eq!(ended["end_reason"], "timeout");
    assert!(ended["ended_at"].as_f64().is_some());

    env.run(&db, &["sessions", "reopen", &id])
        .ok()
        .stdout_has("reopened");
    let reopened = env.json(&db, &["sessions", "reopen", "child"]);
    assert_eq!(reopened["ended_at"], Value::Null);
    assert_eq!(reopened["end_reason"], Value::Null);

    env.run(
        &db,
        &[
            "messages",
            "append",
            "child",
            "--role",
            "user",
            "--content",
            "one",
        ],
    )
    .ok();
    env.run(
        &db,
        &[
            "messages",
            "append",
            "child",
            "--role",
            "user",
            "--content",
            "two",
        ],
    )
    .ok();
    env.run(&db, &["sessions", "clear", "child", "--yes"])
        .ok()
        .stdout_has("2 message(s) deleted");
    let cleared = env.json(&db, &["sessions", "clear", "child", "--yes"]);
    assert_eq!(cleared["messages_deleted"], 0);
    let row = env.json(&db, &["sessions", "show", "child"]);
    assert_eq!(row["message_count"], 0);

    let deleted = env.json(&db, &["sessions", "delete", "child", "--yes"]);
    assert_eq!(deleted["deleted"], true);
    env.run(&db, &["sessions", "rm", &id, "--yes"])
        .ok()
        .stdout_has("deleted session");
    let left = env.json(&db, &["sessions", "list"]);
    assert_eq!(left, Value::Array(Vec::new()));
}

#[test]
fn sessions_lineage_is_a_tree() {
    let env = Env::new();
    let db = env.demo("l.db");
    let tree = env
        .run(&db, &["sessions", "lineage", "demo-refactor"])
        .ok()
        .stdout_has("├─ ")
        .stdout_has("└─ ")
        .stdout_has("← this session")
        .stdout;
    for id in [
        "demo-refactor-2",
        "demo-refactor-docs",
        "demo-refactor-serde",
    ] {
        assert!(tree.contains(id), "{id} missing from {tree}");
    }
    // From the middle: its ancestor above, its delegate below, not the sibling branch.
    let middle = env
        .run(&db, &["sessions", "lineage", "demo-refactor-2"])
        .ok()
        .stdout;
    let lines: Vec<&str> = middle.lines().collect();
    assert!(lines[0].starts_with("demo-refactor "), "{middle}");
    assert!(lines[1].contains("demo-refactor-2") && lines[1].contains("this session"));
    assert!(lines[2].contains("demo-refactor-docs"));
    assert!(!middle.contains("demo-refactor-serde"));

    let value = env.json(&db, &["sessions", "lineage", "demo-refactor-docs"]);
    assert_eq!(value["root"], "demo-refactor");
    assert_eq!(
        ids(&value["ancestors"]),
        ["demo-refactor-docs", "demo-refactor-2", "demo-refactor"]
    );
    assert_eq!(ids(&value["descendants"]), ["demo-refactor-docs"]);
    assert_eq!(
        keys(&value["ancestors"][0]),
        ["id", "title", "started_at", "parent_session_id"]
    );
}
