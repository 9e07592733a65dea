//! The `messages` and `titles` commands.

use serde_json::Value;

use crate::common::*;

#[test]
fn messages_append_from_every_source() {
    let env = Env::new();
    let db = env.path("m.db");
    env.run(&db, &["sessions", "create", "--source", "cli", "--id", "s"])
        .ok();
    let first = env
        .run(
            &db,
            &[
                "messages",
                "append",
                "s",
                "--role",
                "user",
                "--content",
                "hello there",
            ],
        )
        .ok()
        .stdout
        .trim()
        .parse::<i64>()
        .expect("a message id");
    let file = env.path("content.txt");
    std::fs::write(&file, "from a file\nwith two lines").expect("write");
    let from_file = env.json(
        &db,
        &[
            "messages",
            "append",
            "s",
            "--role",
            "assistant",
            "--content-file",
            file.to_str().expect("utf-8"),
            "--token-count",
            "12",
            "--finish-reason",
            "stop",
            "--reasoning",
            "thinking",
        ],
    );
    assert_eq!(from_file["id"], first + 1);
    assert_eq!(from_file["session_id"], "s");
    env.run_stdin(
        &db,
        &["messages", "append", "s", "--role", "user"],
        Some("piped 日本語"),
    )
    .ok();
    let calls = r#"[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]"#;
    env.run(
        &db,
        &[
            "messages",
            "append",
            "s",
            "--role",
            "assistant",
            "--tool-calls",
            calls,
        ],
    )
    .ok();
    env.run(
        &db,
        &[
            "messages",
            "append",
            "s",
            "--role",
            "tool",
            "--tool-name",
            "ls",
            "--tool-call-id",
            "c1",
            "--content",
            "a.txt b.txt",
        ],
    )
    .ok();

    let listed = env.json(&db, &["messages", "list", "s"]);
    let rows = listed.as_array().expect("array");
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0]["content"], "hello there");
    assert_eq!(rows[1]["content"], "from a file\nwith two lines");
    assert_eq!(rows[1]["token_count"], 12);
    assert_eq!(rows[1]["finish_reason"], "stop");
    assert_eq!(rows[1]["reasoning"], "thinking");
    assert_eq!(rows[2]["content"], "piped 日本語");
    assert_eq!(rows[3]["content"], Value::Null);
    assert_eq!(rows[3]["tool_calls"][0]["id"], "c1");
    assert_eq!(rows[4]["tool_name"], "ls");
    let session = env.json(&db, &["sessions", "show", "s"]);
    assert_eq!(session["message_count"], 5);
    assert_eq!(session["tool_call_count"], 1);
    env.run(&db, &["messages", "list", "s"])
        .ok()
        .stdout_has("hello there")
        .stdout_has("[1 tool call(s)]");
    env.run(&db, &["sessions", "show", "s"])
        .ok()
        .stdout_has("→ ls({})  [c1]")
        .stdout_has("piped 日本語");
}

#[test]
fn titles_set_get_resolve_next() {
    let env = Env::new();
    let db = env.demo("t.db");
    env.run(
        &db,
        &["title", "set", "demo-dinner", "  Weeknight   dinners "],
    )
    .ok()
    .stdout_has("“Weeknight dinners”");
    let set = env.json(&db, &["title", "set", "demo-paris", "Paris by bike"]);
    assert_eq!(
        set,
        serde_json::json!({"id": "demo-paris", "title": "Paris by bike"})
    );
    env.run(&db, &["title", "get", "demo-dinner"])
        .ok()
        .stdout_has("Weeknight dinners");
    assert_eq!(
        env.json(&db, &["title", "get", "demo-dinner"])["title"],
        "Weeknight dinners"
    );
    // The numbered continuation wins a resolve.
    env.run(&db, &["title", "resolve", "Refactor the config parser"])
        .ok()
        .stdout_has("demo-refactor-2");
    let resolved = env.json(&db, &["title", "resolve", "Paris by bike"]);
    assert_eq!(resolved["session_id"], "demo-paris");
    env.run(&db, &["title", "next", "Refactor the config parser"])
        .ok()
        .stdout_has("Refactor the config parser #3");
    assert_eq!(
        env.json(&db, &["title", "next", "Brand new"])["title"],
        "Brand new"
    );
    // Clearing.
    env.run(&db, &["title", "set", "demo-dinner", ""])
        .ok()
        .stdout_has("cleared");
    env.run(&db, &["title", "resolve", "Weeknight dinners"])
        .fails(1)
        .one_error_line()
        .stderr_has("no session has the title");
}
