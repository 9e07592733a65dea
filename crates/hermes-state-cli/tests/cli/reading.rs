//! Reading a conversation: `sessions show` as a person reads it, the pager
//! (never when piped), `export --format markdown`, `search --context`.

use std::path::PathBuf;

use crate::common::Env;

/// A store with one session: a question, a tool call with reasoning, a long
/// tool result, an answer.
fn conversation(env: &Env) -> PathBuf {
    let db = env.path("read.db");
    let long_line = format!("{{\"rows\": \"{}\"}}", "x".repeat(2_000));
    let calls = r#"[{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"city\": \"Lyon\"}"}}]"#;
    env.run(
        &db,
        &[
            "sessions",
            "create",
            "--source",
            "cli",
            "--id",
            "s1",
            "--model",
            "anthropic/claude-sonnet-4-5-20250929",
        ],
    )
    .ok();
    env.run(&db, &["title", "set", "s1", "Trip to Lyon"]).ok();
    env.run(
        &db,
        &[
            "messages",
            "append",
            "s1",
            "--role",
            "user",
            "--content",
            "How warm is Lyon today?",
        ],
    )
    .ok();
    env.run(
        &db,
        &[
            "messages",
            "append",
            "s1",
            "--role",
            "assistant",
            "--content",
            "",
            "--tool-calls",
            calls,
            "--reasoning",
            "The user wants weather; call the tool.",
            "--finish-reason",
            "tool_calls",
        ],
    )
    .ok();
    env.run(
        &db,
        &[
            "messages",
            "append",
            "s1",
            "--role",
            "tool",
            "--tool-name",
            "lookup",
            "--tool-call-id",
            "call_1",
            "--content",
            &long_line,
        ],
    )
    .ok();
    env.run(
        &db,
        &[
            "messages",
            "append",
            "s1",
            "--role",
            "assistant",
            "--content",
            "It is 21°C in Lyon, sunny.",
        ],
    )
    .ok();
    db
}

#[test]
fn show_folds_tool_calls_and_hides_reasoning() {
    let env = Env::new();
    let db = conversation(&env);
    let run = env.run(&db, &["sessions", "show", "s1"]).ok();
    let text = &run.stdout;
    assert!(text.contains("── user  #1"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.trim() == r#"→ lookup({"city": "Lyon"})  [call_1]"#),
        "{text}"
    );
    assert!(!text.contains("call the tool"), "{text}");
    assert!(text.contains("▸ reasoning"), "{text}");
    // The one-line tool result is shortened.
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest < 400, "a line of {widest} characters");
    assert!(text.contains("It is 21°C in Lyon, sunny."), "{text}");

    let run = env
        .run(&db, &["sessions", "show", "s1", "--reasoning", "--full"])
        .ok();
    assert!(
        run.stdout
            .contains("The user wants weather; call the tool.")
    );
    assert!(run.stdout.contains(&"x".repeat(2_000)));
}

#[test]
fn piped_output_never_goes_through_the_pager() {
    let env = Env::new();
    let db = conversation(&env);
    // A pager that would swallow everything: piped, it is never started.
    let output = env
        .command()
        .env("PAGER", "false")
        .args(["--db", db.to_str().unwrap(), "sessions", "show", "s1"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("It is 21°C in Lyon, sunny."), "{stdout}");
    // --no-pager is accepted, and changes nothing when piped.
    let run = env.run(&db, &["sessions", "show", "s1", "--no-pager"]).ok();
    assert_eq!(run.stdout, stdout);
}

#[test]
fn export_markdown_writes_one_conversation() {
    let env = Env::new();
    let db = conversation(&env);
    let run = env
        .run(
            &db,
            &[
                "export",
                "--format",
                "markdown",
                "--session",
                "Trip to Lyon",
            ],
        )
        .ok();
    let doc = &run.stdout.clone();
    assert!(
        doc.starts_with("# Trip to Lyon\n\n- **Session:** `s1`\n"),
        "{doc}"
    );
    assert!(
        doc.contains("- **Model:** `anthropic/claude-sonnet-4-5-20250929`"),
        "{doc}"
    );
    assert!(doc.contains("- **Messages:** 4"), "{doc}");
    assert_eq!(doc.matches("\n## ").count(), 4, "{doc}");
    assert!(doc.contains("## User · "), "{doc}");
    assert!(doc.contains("## Tool: lookup · "), "{doc}");
    assert!(
        doc.contains(
            "**Tool call** `lookup` (`call_1`):\n\n```json\n{\n  \"city\": \"Lyon\"\n}\n```"
        ),
        "{doc}"
    );
    assert!(
        doc.contains("<details><summary>Reasoning</summary>"),
        "{doc}"
    );
    // An export shortens nothing.
    assert!(doc.contains(&"x".repeat(2_000)));
    assert!(doc.ends_with("It is 21°C in Lyon, sunny.\n"), "{doc}");
    assert!(!doc.contains("\n\n\n"), "{doc}");
    run.stderr_has("exported 1 session(s), 4 message(s)");

    // One conversation only: without --session it is a usage error.
    env.run(&db, &["export", "--format", "markdown"])
        .fails(2)
        .one_error_line();
    // To a file, with --json: the usual report.
    let path = env.path("lyon.md");
    let report = env.json(
        &db,
        &[
            "export",
            "--format",
            "markdown",
            "--session",
            "s1",
            "-o",
            path.to_str().unwrap(),
        ],
    );
    assert_eq!(report["format"], "markdown");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), *doc);
}

/// The lines of a search's output under its one hit's header.
fn hit_body(stdout: &str) -> Vec<&str> {
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("s1  "), "{stdout}");
    lines[1..].to_vec()
}

#[test]
fn search_context_marks_the_hit_between_its_neighbours() {
    let env = Env::new();
    let db = conversation(&env);
    // The first message: nothing before it.
    let run = env.run(&db, &["search", "warm", "--context"]).ok();
    assert_eq!(
        hit_body(&run.stdout),
        [
            "  ▶ How >>>warm<<< is Lyon today?",
            "    assistant: (no text)"
        ]
    );
    // The last message: nothing after it.
    let run = env.run(&db, &["search", "sunny", "--context"]).ok();
    let body = hit_body(&run.stdout);
    assert_eq!(body.len(), 2, "{}", run.stdout);
    assert!(
        body[0].starts_with("    tool: {\"rows\": \"xxx"),
        "{}",
        run.stdout
    );
    assert_eq!(body[1], "  ▶ It is 21°C in Lyon, >>>sunny<<<.");
    // Without --context: the snippet alone, unmarked.
    let run = env.run(&db, &["search", "sunny"]).ok();
    assert_eq!(
        hit_body(&run.stdout),
        ["    It is 21°C in Lyon, >>>sunny<<<."]
    );
    // JSON keeps the original's context dicts: role and content only.
    let hits = env.json(&db, &["search", "sunny", "--context"]);
    let context = hits[0]["context"].as_array().unwrap();
    assert_eq!(context.len(), 2);
    assert_eq!(context[1].as_object().unwrap().len(), 2);
}
