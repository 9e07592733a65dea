//! The real `hermes-state` binary against temporary stores: every command in
//! human and `--json` form, and the bad inputs a user meets (unknown session,
//! a file that is not a database, a malformed FTS query, a duplicate title,
//! an unreadable path, bad usage). `read_only`: reading commands never change
//! the store, errors are never empty answers, `export --output` is atomic.
#![allow(missing_docs)]

use std::path::{Path, PathBuf};

#[path = "cli/cjk.rs"]
mod cjk;
#[path = "cli/read_only.rs"]
mod read_only;

use assert_cmd::Command;
use hermes_state::rusqlite::Connection;
use serde_json::Value;

// ---------------------------------------------------------------------------
// Harness

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    #[track_caller]
    fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "expected success\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        self
    }

    /// Fails with `code` and exactly one line on stderr (clap's usage errors aside).
    #[track_caller]
    fn fails(self, code: i32) -> Run {
        assert_eq!(
            self.code, code,
            "expected exit {code}\nstdout: {}\nstderr: {}",
            self.stdout, self.stderr
        );
        assert!(
            self.stderr.starts_with("error: "),
            "stderr: {}",
            self.stderr
        );
        self
    }

    #[track_caller]
    fn one_error_line(self) -> Run {
        assert_eq!(
            self.stderr.lines().count(),
            1,
            "expected one line on stderr, got: {}",
            self.stderr
        );
        self
    }

    #[track_caller]
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", self.stdout))
    }

    #[track_caller]
    fn stdout_has(self, needle: &str) -> Run {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}: {}",
            self.stdout
        );
        self
    }

    #[track_caller]
    fn stderr_has(self, needle: &str) -> Run {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}: {}",
            self.stderr
        );
        self
    }
}

/// A scratch folder used as `HERMES_HOME`, so the real `~/.hermes` is never touched.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A store filled by `demo`.
    fn demo(&self, name: &str) -> PathBuf {
        let db = self.path(name);
        self.run(&db, &["demo"]).ok();
        db
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hermes-state"));
        cmd.env("HERMES_HOME", self.dir.path())
            .env_remove("NO_COLOR")
            .env_remove("RUST_BACKTRACE")
            .current_dir(self.dir.path());
        cmd
    }

    fn raw(&self, args: &[&str], stdin: Option<&str>) -> Run {
        let mut cmd = self.command();
        cmd.args(args);
        if let Some(input) = stdin {
            cmd.write_stdin(input.to_owned());
        }
        let output = cmd.output().expect("run hermes-state");
        let run = Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        for bad in ["panicked", "RUST_BACKTRACE", "stack backtrace"] {
            assert!(
                !run.stderr.contains(bad),
                "stderr of {args:?} shows a panic: {}",
                run.stderr
            );
        }
        // Piped output never carries ANSI styles or progress bars.
        assert!(
            !run.stdout.contains('\x1b') && !run.stderr.contains('\x1b'),
            "escape codes in piped output of {args:?}"
        );
        run
    }

    fn run(&self, db: &Path, args: &[&str]) -> Run {
        self.run_stdin(db, args, None)
    }

    fn run_stdin(&self, db: &Path, args: &[&str], stdin: Option<&str>) -> Run {
        let db = db.to_str().expect("utf-8 path");
        let mut all = vec!["--db", db];
        all.extend_from_slice(args);
        self.raw(&all, stdin)
    }

    fn json(&self, db: &Path, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        self.run(db, &all).ok().json()
    }
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a JSON array")
        .iter()
        .map(|item| item["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn keys(object: &Value) -> Vec<&str> {
    object
        .as_object()
        .expect("a JSON object")
        .keys()
        .map(String::as_str)
        .collect()
}

// ---------------------------------------------------------------------------
// demo, and the README's quick start

#[test]
fn demo_fills_a_fresh_store_and_refuses_a_used_one() {
    let env = Env::new();
    let db = env.path("demo.db");
    env.run(&db, &["demo"])
        .ok()
        .stdout_has("8 sessions")
        .stdout_has("search");
    // A second demo would mix the sample into real data: refused.
    env.run(&db, &["demo"])
        .fails(1)
        .one_error_line()
        .stderr_has("already has 8 session(s)")
        .stderr_has("--force");
    // --force replaces the sample's own sessions: still 8, not 16.
    let forced = env.json(&db, &["demo", "--force"]);
    assert_eq!(forced["sessions"].as_array().map(Vec::len), Some(8));
    assert_eq!(forced["messages"], 30);
    let listed = env.json(&db, &["sessions", "list", "--limit", "100"]);
    assert_eq!(ids(&listed).len(), 8);
}

#[test]
fn readme_quick_start_works_as_written() {
    // README: hermes-state --db demo.db demo && hermes-state --db demo.db search bike
    let env = Env::new();
    env.raw(&["--db", "demo.db", "demo"], None).ok();
    env.raw(&["--db", "demo.db", "search", "bike"], None)
        .ok()
        .stdout_has("demo-paris")
        .stdout_has(">>>bike<<<");
    env.raw(&["--db", "demo.db", "sessions", "show", "demo-paris"], None)
        .ok()
        .stdout_has("weather(");
}

#[test]
fn the_default_store_is_hermes_home_state_db() {
    let env = Env::new();
    env.raw(&["demo"], None).ok();
    assert!(env.path("state.db").is_file());
    let listed: Value =
        serde_json::from_str(&env.raw(&["--json", "sessions", "list"], None).ok().stdout)
            .expect("json");
    assert!(ids(&listed).contains(&"demo-paris".to_owned()));
}

// ---------------------------------------------------------------------------
// sessions

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
    env.run(&db, &["sessions", "clear", "child"])
        .ok()
        .stdout_has("2 message(s) deleted");
    let cleared = env.json(&db, &["sessions", "clear", "child"]);
    assert_eq!(cleared["messages_deleted"], 0);
    let row = env.json(&db, &["sessions", "show", "child"]);
    assert_eq!(row["message_count"], 0);

    let deleted = env.json(&db, &["sessions", "delete", "child"]);
    assert_eq!(deleted["deleted"], true);
    env.run(&db, &["sessions", "rm", &id])
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

// ---------------------------------------------------------------------------
// messages and titles

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

// ---------------------------------------------------------------------------
// search and stats

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

// ---------------------------------------------------------------------------
// export, import, prune, backup, vacuum

#[test]
fn export_and_import_round_trip_in_both_formats() {
    let env = Env::new();
    let db = env.demo("e.db");
    // JSON (the original's export_all shape) to stdout.
    let exported = env.json(&db, &["export"]);
    let sessions = exported.as_array().expect("array");
    assert_eq!(sessions.len(), 8);
    let k = keys(&sessions[0]);
    assert_eq!(&k[k.len() - 2..], ["last_active", "messages"]);
    // One session.
    let one = env.json(&db, &["export", "--session", "demo-tokyo"]);
    assert_eq!(ids(&one), ["demo-tokyo"]);
    assert_eq!(one[0]["messages"].as_array().map(Vec::len), Some(4));
    // By source, JSON Lines.
    let lines = env
        .run(
            &db,
            &["export", "--source", "telegram", "--format", "jsonl"],
        )
        .ok()
        .stdout;
    let parsed: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(parsed[0]["format"], "hermes-state-export");
    assert_eq!(parsed[1]["type"], "session");
    assert_eq!(parsed[1]["id"], "demo-dinner");
    assert_eq!(parsed.last().expect("end")["type"], "end");

    // To files, then into fresh stores.
    let jsonl = env.path("all.jsonl");
    let json = env.path("all.json");
    let summary = env.json(
        &db,
        &[
            "export",
            "--format",
            "jsonl",
            "--output",
            jsonl.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(summary["sessions"], 8);
    assert_eq!(summary["messages"], 30);
    env.run(&db, &["export", "-o", json.to_str().expect("utf-8")])
        .ok()
        .stderr_has("exported 8 session(s), 30 message(s)");

    let from_jsonl = env.path("from-jsonl.db");
    env.run(&from_jsonl, &["import", jsonl.to_str().expect("utf-8")])
        .ok()
        .stdout_has("imported 8 session(s), 30 message(s)");
    let from_json = env.path("from-json.db");
    let report = env.json(&from_json, &["import", json.to_str().expect("utf-8")]);
    assert_eq!(report["imported"], 8);
    assert_eq!(report["messages"], 30);
    assert_eq!(report["orphaned"], Value::Array(Vec::new()));

    // Lossless: the JSONL of the copy equals the original's (header time aside).
    let again = env
        .run(&from_jsonl, &["export", "--format", "jsonl"])
        .ok()
        .stdout;
    let original = std::fs::read_to_string(&jsonl).expect("read");
    let body = |text: &str| text.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(body(&again), body(&original));
    // The JSON import kept the lineage and the conversation.
    let lineage = env.json(&from_json, &["sessions", "lineage", "demo-refactor-docs"]);
    assert_eq!(lineage["root"], "demo-refactor");
    let paris = env.json(&from_json, &["sessions", "show", "demo-paris"]);
    assert_eq!(
        paris["messages"][1]["tool_calls"][0]["function"]["name"],
        "weather"
    );
    env.run(&from_json, &["search", "东京"])
        .ok()
        .stdout_has("demo-tokyo");

    // Importing again skips what is there; --overwrite replaces it.
    let skipped = env.json(&from_jsonl, &["import", jsonl.to_str().expect("utf-8")]);
    assert_eq!(skipped["imported"], 0);
    assert_eq!(
        skipped["skipped_existing"].as_array().map(Vec::len),
        Some(8)
    );
    let replaced = env.json(
        &from_jsonl,
        &["import", "--overwrite", jsonl.to_str().expect("utf-8")],
    );
    assert_eq!(replaced["replaced"].as_array().map(Vec::len), Some(8));
    // From stdin.
    let piped = env.path("piped.db");
    env.run_stdin(&piped, &["import", "-"], Some(&original))
        .ok()
        .stdout_has("from stdin");
}

#[test]
fn import_refuses_what_is_not_an_export() {
    let env = Env::new();
    let db = env.path("i.db");
    let junk = env.path("junk.txt");
    std::fs::write(&junk, "hello, world").expect("write");
    env.run(&db, &["import", junk.to_str().expect("utf-8")])
        .fails(1)
        .one_error_line()
        .stderr_has("is not a hermes-state export");
    // Nothing was created for a file that is not an export.
    assert!(!db.exists());
    let wrong_version = env.path("v9.jsonl");
    std::fs::write(
        &wrong_version,
        "{\"format\":\"hermes-state-export\",\"version\":9}\n{\"type\":\"end\",\"sessions\":0,\"messages\":0}\n",
    )
    .expect("write");
    env.run(&db, &["import", wrong_version.to_str().expect("utf-8")])
        .fails(1)
        .stderr_has("unsupported export version");
    let empty = env.path("empty.json");
    std::fs::write(&empty, "  \n").expect("write");
    env.run(&db, &["import", empty.to_str().expect("utf-8")])
        .fails(1)
        .stderr_has("empty");
    env.run(
        &db,
        &["import", env.path("missing.jsonl").to_str().expect("utf-8")],
    )
    .fails(1)
    .one_error_line()
    .stderr_has("cannot read");
}

#[test]
fn export_and_import_never_touch_the_store_file() {
    let env = Env::new();
    let db = env.demo("self.db");
    let before = std::fs::metadata(&db).expect("stat").len();
    let path = db.to_str().expect("utf-8");
    env.run(&db, &["export", "--output", path])
        .fails(2)
        .one_error_line()
        .stderr_has("is the store itself");
    env.run(&db, &["import", path])
        .fails(2)
        .one_error_line()
        .stderr_has("is the store itself");
    assert_eq!(std::fs::metadata(&db).expect("stat").len(), before);
    assert_eq!(env.json(&db, &["stats"])["sessions"], 8);
}

#[test]
fn prune_dry_run_then_for_real() {
    let env = Env::new();
    let db = env.demo("p.db");
    env.run(&db, &["prune", "--older-than-days", "90", "--dry-run"])
        .ok()
        .stdout_has("would prune 1")
        .stdout_has("demo-digest-old");
    let dry = env.json(&db, &["prune", "--older-than-days", "90", "--dry-run"]);
    assert_eq!(dry["count"], 1);
    assert_eq!(dry["ids"], serde_json::json!(["demo-digest-old"]));
    assert_eq!(dry["sessions"][0]["title"], "Nightly issue digest");
    // Nothing was deleted by the dry runs.
    assert_eq!(env.json(&db, &["stats"])["sessions"], 8);
    let none = env.json(
        &db,
        &["prune", "--older-than-days", "90", "--source", "telegram"],
    );
    assert_eq!(none["count"], 0);
    env.run(&db, &["prune", "--older-than-days", "90"])
        .ok()
        .stdout_has("pruned 1")
        .stdout_has("vacuum");
    assert_eq!(env.json(&db, &["stats"])["sessions"], 7);
    // Everything ended, whatever its age; live sessions stay.
    let all = env.json(&db, &["prune", "--older-than-days", "0"]);
    assert_eq!(all["count"], 5);
    let left = env.json(&db, &["sessions", "list"]);
    let mut left = ids(&left);
    left.sort();
    assert_eq!(left, ["demo-dinner", "demo-refactor-serde"]);
    // The branch whose parent was pruned is orphaned, not deleted.
    let branch = env.json(&db, &["sessions", "show", "demo-refactor-serde"]);
    assert_eq!(branch["parent_session_id"], Value::Null);
}

#[test]
fn backup_and_vacuum() {
    let env = Env::new();
    let db = env.demo("b.db");
    let copy = env.path("copy.db");
    let copy_text = copy.to_str().expect("utf-8");
    env.run(&db, &["backup", copy_text])
        .ok()
        .stdout_has("backed up");
    assert_eq!(env.json(&copy, &["stats"])["sessions"], 8);
    // Never overwritten.
    env.run(&db, &["backup", copy_text])
        .fails(1)
        .one_error_line()
        .stderr_has("already exists");
    let second = env.path("copy2.db");
    let value = env.json(&db, &["backup", second.to_str().expect("utf-8")]);
    assert!(value["bytes"].as_u64().is_some_and(|b| b > 0));
    // A read-only handle can back up too.
    let third = env.path("copy3.db");
    env.run(
        &db,
        &["--read-only", "backup", third.to_str().expect("utf-8")],
    )
    .ok();

    env.run(&db, &["vacuum"]).ok().stdout_has("vacuumed");
    let vacuumed = env.json(&db, &["vacuum"]);
    assert_eq!(vacuumed["fts_tables_optimized"], 3);
}

#[test]
fn doctor_checks_and_repairs() {
    let env = Env::new();
    let db = env.demo("doc.db");
    env.run(&db, &["doctor"])
        .ok()
        .stdout_has("healthy")
        .stdout_has("integrity_check: ok")
        .stdout_has("messages_fts_cjk: ok");
    let healthy = env.json(&db, &["doctor"]);
    assert_eq!(healthy["healthy"], true);
    assert_eq!(healthy["problems"], 0);
    assert_eq!(healthy["integrity"], serde_json::json!(["ok"]));
    assert_eq!(healthy["fts"].as_array().map(Vec::len), Some(3));
    env.run(&db, &["--read-only", "doctor"])
        .ok()
        .stdout_has("index only");

    // Damage what the agent derives: counters, a parent link, the FTS index.
    {
        let conn = Connection::open(&db).expect("open");
        conn.execute_batch(
            "UPDATE sessions SET message_count = 99 WHERE id = 'demo-paris';
             PRAGMA foreign_keys = OFF;
             UPDATE sessions SET parent_session_id = 'ghost' WHERE id = 'demo-dinner';
             INSERT INTO messages_fts(rowid, content, tool_name, tool_calls) VALUES (987654, 'phantom words', '', '');",
        )
        .expect("damage");
    }
    let sick = env
        .run(&db, &["doctor"])
        .fails(1)
        .one_error_line()
        .stderr_has("problem(s) found")
        .stderr_has("doctor --repair")
        .stdout_has("wrong counters: demo-paris")
        .stdout_has("dangling parent: demo-dinner names missing session ghost")
        .stdout;
    // `doctor` is a reading command: it opens read-only, so each FTS index is
    // checked on its own (the phantom row is a well-formed index entry); the
    // check against the messages needs the write lock, which --repair takes.
    assert!(
        sick.contains("messages_fts: ok (index only: read-only handle)"),
        "{sick}"
    );
    let report = env.run(&db, &["--json", "doctor"]).fails(1).json();
    assert_eq!(report["healthy"], false);
    assert_eq!(report["counters"][0]["session_id"], "demo-paris");
    assert_eq!(report["counters"][0]["real_message_count"], 6);
    assert_eq!(report["dangling_parents"][0]["missing_parent"], "ghost");
    assert_eq!(report["fts"][0]["status"], "index_only");

    env.run(&db, &["doctor", "--repair"])
        .ok()
        .stdout_has("repaired")
        .stdout_has("fixed counters: demo-paris")
        .stdout_has("after repair: healthy");
    let again = env.json(&db, &["doctor"]);
    assert_eq!(again["healthy"], true);
    // The phantom row is gone from search; real rows are found.
    assert_eq!(
        env.json(&db, &["search", "phantom"]),
        Value::Array(Vec::new())
    );
    assert!(
        !env.json(&db, &["search", "bike"])
            .as_array()
            .expect("array")
            .is_empty()
    );
    let repaired = env.json(&db, &["doctor", "--repair"]);
    assert_eq!(repaired["after"]["healthy"], true);
    assert_eq!(repaired["fts_mode"], "one_shot");
    env.run(&db, &["--read-only", "doctor", "--repair"])
        .fails(2);
}

// ---------------------------------------------------------------------------
// schema and migrate

#[test]
fn schema_human_and_json() {
    let env = Env::new();
    let db = env.demo("sc.db");
    env.run(&db, &["schema"])
        .ok()
        .stdout_has("schema version:   23 (current)")
        .stdout_has("FTS layout:       external")
        .stdout_has("journal mode:     wal")
        .stdout_has("sessions");
    let value = env.json(&db, &["schema"]);
    assert_eq!(value["schema_version"], 23);
    assert_eq!(value["fts_layout"], "external");
    // Stamped from the second writable open on (schema itself opens read-only).
    assert!(value.get("fts_storage_version").is_some());
    assert_eq!(value["journal_mode"], "wal");
    assert!(value["sqlite_version"].as_str().is_some());
    let sessions = value["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .find(|t| t["name"] == "sessions")
        .expect("sessions table");
    assert_eq!(sessions["rows"], 8);
    assert_eq!(value["fts"]["messages_fts_cjk"], true);
}

#[test]
fn migrate_reports_and_upgrades_an_old_store() {
    let env = Env::new();
    let db = env.demo("mg.db");
    env.run(&db, &["migrate", "--dry-run"])
        .ok()
        .stdout_has("up to date");
    let current = env.json(&db, &["migrate", "--dry-run"]);
    assert_eq!(current["up_to_date"], true);
    assert_eq!(current["from_version"], 23);

    // Make the file look older: a lower version and a missing column.
    {
        let conn = Connection::open(&db).expect("open");
        conn.execute_batch(
            "UPDATE schema_version SET version = 21; ALTER TABLE sessions DROP COLUMN pinned;",
        )
        .expect("age the file");
    }
    let dry = env.json(&db, &["migrate", "--dry-run"]);
    assert_eq!(dry["from_version"], 21);
    assert_eq!(dry["to_version"], 23);
    assert_eq!(dry["up_to_date"], false);
    assert_eq!(
        dry["missing_columns"],
        serde_json::json!([{"table": "sessions", "column": "pinned"}])
    );
    env.run(&db, &["migrate", "--dry-run"])
        .ok()
        .stdout_has("schema version 21 → 23")
        .stdout_has("add column sessions.pinned")
        .stdout_has("nothing was written");
    // The dry run wrote nothing.
    assert_eq!(env.json(&db, &["schema"])["schema_version"], 21);

    let done = env.json(&db, &["migrate"]);
    assert_eq!(done["from_version"], 21);
    assert_eq!(done["to_version"], 23);
    assert_eq!(
        done["added_columns"],
        serde_json::json!([{"table": "sessions", "column": "pinned"}])
    );
    env.run(&db, &["migrate"]).ok().stdout_has("up to date");

    // A missing file: the dry run says it would be created, migrate creates it.
    let fresh = env.path("fresh.db");
    env.run(&fresh, &["migrate", "--dry-run"])
        .ok()
        .stdout_has("would create");
    assert!(!fresh.exists());
    assert_eq!(env.json(&fresh, &["migrate"])["created"], true);
}

#[test]
fn fts_rebuild_and_optimize_storage() {
    let env = Env::new();
    let db = env.demo("fts.db");
    env.run(&db, &["fts", "rebuild"]).ok().stdout_has("rebuilt");
    let rebuilt = env.json(&db, &["fts", "rebuild"]);
    assert_eq!(rebuilt["started"], true);
    assert_eq!(
        env.json(&db, &["search", "bike"]).as_array().map(Vec::len),
        Some(2)
    );
    env.run(&db, &["fts", "optimize-storage"])
        .ok()
        .stdout_has("nothing to do");

    // A store with the v11–v22 inline FTS layout, as the original leaves it.
    {
        use hermes_state::schema::{connection, ddl};
        let conn = connection::open_read_write(&db).expect("open");
        for name in ddl::FTS_TRIGGER_NAMES.iter().chain(&ddl::CJK_TRIGGER_NAMES) {
            conn.execute_batch(&format!("DROP TRIGGER {name}"))
                .expect("drop trigger");
        }
        conn.execute_batch(
            "DROP VIEW messages_fts_trigram_src; DROP TABLE messages_fts_trigram; DROP TABLE messages_fts;
             DROP TABLE messages_fts_cjk; DROP VIEW messages_fts_cjk_src;",
        )
        .expect("drop v23 FTS");
        for statement in ddl::LEGACY_FTS_BASE.iter().chain(&ddl::LEGACY_FTS_TRIGRAM) {
            conn.execute_batch(statement).expect("legacy DDL");
        }
        // One trigger missing: the next open refills the legacy index.
        conn.execute_batch(&format!(
            "DROP TRIGGER {};
             UPDATE schema_version SET version = 22;
             INSERT INTO state_meta (key, value) VALUES ('fts_optimize_available', '1');
             DELETE FROM state_meta WHERE key = 'fts_storage_version';",
            ddl::FTS_TRIGGER_NAMES[0]
        ))
        .expect("stamp 22");
    }
    assert_eq!(env.json(&db, &["schema"])["fts_layout"], "legacy_inline");
    let dry = env.json(&db, &["migrate", "--dry-run"]);
    assert_eq!(dry["from_version"], 22);
    assert_eq!(dry["fts_optimize_available"], true);
    assert_eq!(dry["fts_rebuild"], false);
    env.run(&db, &["migrate", "--dry-run"])
        .ok()
        .stdout_has("fts optimize-storage");
    // The legacy layout is kept by an ordinary (writable) open, which
    // refills the index this test left empty; reading commands open
    // read-only and change nothing, so `migrate` does that open here.
    env.run(&db, &["migrate"]).ok();
    assert_eq!(env.json(&db, &["schema"])["fts_layout"], "legacy_inline");
    assert_eq!(
        env.json(&db, &["search", "bike"]).as_array().map(Vec::len),
        Some(2)
    );
    env.run(&db, &["fts", "rebuild"])
        .fails(1)
        .one_error_line()
        .stderr_has("legacy_layout")
        .stderr_has("optimize-storage");
    let converted = env.json(&db, &["fts", "optimize-storage", "--vacuum"]);
    assert_eq!(converted["demoted"], true);
    assert_eq!(converted["settled"], true);
    assert_eq!(converted["vacuumed"], true);
    let schema = env.json(&db, &["schema"]);
    assert_eq!(schema["fts_layout"], "external");
    assert_eq!(schema["fts_storage_version"], "1");
    assert_eq!(
        env.json(&db, &["search", "bike"]).as_array().map(Vec::len),
        Some(2)
    );
    assert!(
        !env.json(&db, &["search", "东京"])
            .as_array()
            .expect("array")
            .is_empty()
    );
    assert_eq!(env.json(&db, &["doctor"])["healthy"], true);
}

// ---------------------------------------------------------------------------
// Bad input

#[test]
fn unknown_sessions_fail_with_one_line_naming_them() {
    let env = Env::new();
    let db = env.demo("u.db");
    let cases: &[&[&str]] = &[
        &["sessions", "show", "nope-123"],
        &["sessions", "end", "nope-123", "--reason", "x"],
        &["sessions", "reopen", "nope-123"],
        &["sessions", "delete", "nope-123"],
        &["sessions", "clear", "nope-123"],
        &["sessions", "lineage", "nope-123"],
        &[
            "messages",
            "append",
            "nope-123",
            "--role",
            "user",
            "--content",
            "hi",
        ],
        &["messages", "list", "nope-123"],
        &["title", "set", "nope-123", "A title"],
        &["title", "get", "nope-123"],
        &["export", "--session", "nope-123"],
        &[
            "sessions", "create", "--source", "cli", "--parent", "nope-123",
        ],
    ];
    for args in cases {
        for json in [false, true] {
            let mut all: Vec<&str> = Vec::new();
            if json {
                all.push("--json");
            }
            all.extend_from_slice(args);
            let run = env
                .run(&db, &all)
                .fails(1)
                .one_error_line()
                .stderr_has("\"nope-123\"");
            assert!(run.stdout.is_empty(), "{args:?} printed {}", run.stdout);
        }
    }
}

#[test]
fn a_file_that_is_not_a_database_is_refused_untouched() {
    let env = Env::new();
    let junk = env.path("junk.db");
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&junk, &bytes).expect("write");
    for args in [
        &["sessions", "list"][..],
        &["--json", "search", "x"],
        &["sessions", "create", "--source", "cli"],
        &["schema"],
        &["migrate"],
        &["migrate", "--dry-run"],
        &["--read-only", "stats"],
        &["demo"],
        &["doctor"],
        &["doctor", "--repair"],
    ] {
        env.run(&junk, args)
            .fails(1)
            .one_error_line()
            .stderr_has("not a database")
            .stderr_has("junk.db")
            .stderr_has("is this the right file?");
    }
    assert_eq!(std::fs::read(&junk).expect("read"), bytes);

    // Another application's SQLite file.
    let foreign = env.path("foreign.db");
    {
        let conn = Connection::open(&foreign).expect("open");
        conn.execute_batch("CREATE TABLE photos(id INTEGER PRIMARY KEY, path TEXT);")
            .expect("create");
    }
    let before = std::fs::read(&foreign).expect("read");
    env.run(&foreign, &["sessions", "list"])
        .fails(1)
        .one_error_line()
        .stderr_has("another application");
    env.run(&foreign, &["schema"]).fails(1).one_error_line();
    assert_eq!(std::fs::read(&foreign).expect("read"), before);
}

#[test]
fn a_duplicate_title_is_refused() {
    let env = Env::new();
    let db = env.demo("d.db");
    for json in [false, true] {
        let mut args = vec!["title", "set", "demo-dinner", "Weather in Paris"];
        if json {
            args.insert(0, "--json");
        }
        env.run(&db, &args)
            .fails(1)
            .one_error_line()
            .stderr_has("already in use by session demo-paris")
            .stderr_has("title next");
    }
    let too_long = "x".repeat(101);
    env.run(&db, &["title", "set", "demo-dinner", &too_long])
        .fails(1)
        .one_error_line()
        .stderr_has("too long");
}

#[test]
fn unreadable_paths_fail_cleanly() {
    let env = Env::new();
    let file = env.path("plain-file");
    std::fs::write(&file, "x").expect("write");
    let under_a_file = file.join("state.db");
    for args in [
        &["sessions", "list"][..],
        &["--json", "stats"],
        &["sessions", "create", "--source", "cli"],
        &["demo"],
    ] {
        env.run(&under_a_file, args)
            .fails(1)
            .one_error_line()
            .stderr_has("plain-file");
    }
    // An import into such a path fails on the store, after reading a valid file.
    let export = env.path("one.jsonl");
    let demo = env.demo("src.db");
    env.run(
        &demo,
        &[
            "export",
            "--format",
            "jsonl",
            "-o",
            export.to_str().expect("utf-8"),
        ],
    )
    .ok();
    env.run(&under_a_file, &["import", export.to_str().expect("utf-8")])
        .fails(1)
        .one_error_line()
        .stderr_has("plain-file");
    // A directory given as the store.
    env.run(env.dir.path(), &["sessions", "list"])
        .fails(1)
        .one_error_line()
        .stderr_has("is a directory");
    env.run(env.dir.path(), &["sessions", "create", "--source", "cli"])
        .fails(1)
        .one_error_line()
        .stderr_has("is a directory");

    // A folder without permission (meaningless as root, who may read anything).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let locked = env.path("locked");
        std::fs::create_dir(&locked).expect("mkdir");
        let inside = locked.join("state.db");
        env.run(&inside, &["sessions", "create", "--source", "cli"])
            .ok();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
        let root = std::fs::read_dir(&locked).is_ok();
        if !root {
            env.run(&inside, &["sessions", "list"])
                .fails(1)
                .one_error_line()
                .stderr_has("locked");
            env.run(&inside, &["sessions", "create", "--source", "cli"])
                .fails(1)
                .one_error_line();
        }
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    }
}

#[test]
fn read_commands_never_create_a_store() {
    let env = Env::new();
    let missing = env.path("missing.db");
    for args in [
        &["sessions", "list"][..],
        &["sessions", "show", "x"],
        &["search", "x"],
        &["stats"],
        &["export"],
        &["schema"],
        &["--read-only", "sessions", "list"],
        &["sessions", "end", "x", "--reason", "y"],
        &[
            "messages",
            "append",
            "x",
            "--role",
            "user",
            "--content",
            "c",
        ],
        &["prune", "--older-than-days", "1"],
        &["backup", "b.db"],
    ] {
        env.run(&missing, args)
            .fails(1)
            .one_error_line()
            .stderr_has("no store at")
            .stderr_has("hermes-state demo");
        assert!(!missing.exists(), "{args:?} created the store");
    }
}

#[test]
fn read_only_reads_and_refuses_writes() {
    let env = Env::new();
    let db = env.demo("ro.db");
    let listed = env.json(&db, &["--read-only", "sessions", "list"]);
    assert_eq!(ids(&listed).len(), 8);
    env.run(&db, &["--read-only", "search", "bike"])
        .ok()
        .stdout_has("demo-paris");
    env.run(&db, &["--read-only", "-v", "stats"])
        .ok()
        .stderr_has("read-only");
    for args in [
        &[
            "--read-only",
            "sessions",
            "end",
            "demo-dinner",
            "--reason",
            "x",
        ][..],
        &["--read-only", "title", "set", "demo-dinner", "X"],
        &["--read-only", "prune", "--older-than-days", "1"],
        &["--read-only", "migrate"],
        &["--read-only", "demo", "--force"],
    ] {
        env.run(&db, args)
            .fails(2)
            .one_error_line()
            .stderr_has("--read-only");
    }
}

#[test]
fn a_store_from_a_newer_release_is_read_only() {
    let env = Env::new();
    let db = env.demo("new.db");
    {
        let conn = Connection::open(&db).expect("open");
        conn.execute_batch("UPDATE schema_version SET version = 99")
            .expect("bump");
    }
    // A writing command says it once: what, which version, what still works.
    let refused = env
        .run(&db, &["sessions", "end", "demo-dinner", "--reason", "x"])
        .fails(1)
        .one_error_line()
        .stderr_has("newer Hermes release")
        .stderr_has("schema_version 99")
        .stderr_has("reading commands")
        .stderr_has("still work")
        .stderr;
    for once in ["newer", "upgrade hermes-state", &db.display().to_string()] {
        assert_eq!(
            refused.matches(once).count(),
            1,
            "{once:?} not said once: {refused}"
        );
    }
    assert!(
        !refused.contains("--read-only"),
        "reads need no flag: {refused}"
    );
    // Reading commands work on it without --read-only (they open read-only anyway).
    env.run(&db, &["sessions", "show", "demo-dinner"])
        .ok()
        .stdout_has("Dinner ideas");
    env.run(&db, &["--read-only", "sessions", "show", "demo-dinner"])
        .ok()
        .stdout_has("Dinner ideas");
    assert_eq!(env.json(&db, &["schema"])["schema_version"], 99);
    // The doctor examines it, read-only.
    env.run(&db, &["doctor"]).ok().stdout_has("index only");
    env.run(&db, &["doctor", "--repair"])
        .fails(1)
        .stderr_has("newer");
}

#[test]
fn bad_usage_exits_2() {
    let env = Env::new();
    let db = env.demo("bad.db");
    let cases: &[&[&str]] = &[
        &["bogus"],
        &["sessions"],
        &["sessions", "show"],
        &["sessions", "end", "demo-dinner"],
        &["sessions", "create"],
        &["search"],
        &["search", "x", "--limit", "many"],
        &["export", "--format", "xml"],
        &["prune"],
        &["prune", "--older-than-days", "-3"],
        &[
            "messages",
            "append",
            "demo-dinner",
            "--role",
            "user",
            "--tool-calls",
            "[{",
        ],
        &[
            "messages",
            "append",
            "demo-dinner",
            "--role",
            "user",
            "--content",
            "a",
            "--content-file",
            "f",
        ],
        &["export", "--session", "a", "--source", "b"],
        &["-q", "-v", "stats"],
    ];
    for args in cases {
        let run = env.run(&db, args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        // clap answers a missing subcommand with the group's help, else with one error.
        assert!(
            run.stderr.starts_with("error: ") || run.stderr.contains("Usage:"),
            "{args:?}: {}",
            run.stderr
        );
    }
    // Help and version are not errors.
    env.raw(&["--help"], None).ok().stdout_has("sessions");
    env.raw(&["sessions", "--help"], None)
        .ok()
        .stdout_has("lineage");
    env.raw(&["--version"], None)
        .ok()
        .stdout_has("hermes-state");
}

#[test]
fn quiet_and_json_keep_stderr_clean() {
    let env = Env::new();
    let db = env.demo("quiet.db");
    let out = env.path("q.jsonl");
    let quiet = env.run(
        &db,
        &[
            "-q",
            "export",
            "--format",
            "jsonl",
            "-o",
            out.to_str().expect("utf-8"),
        ],
    );
    let quiet = quiet.ok();
    assert!(quiet.stderr.is_empty() && quiet.stdout.is_empty());
    let json = env
        .run(&db, &["--json", "prune", "--older-than-days", "1000"])
        .ok();
    assert!(json.stderr.is_empty(), "{}", json.stderr);
    let q = env
        .run(
            &db,
            &["-q", "sessions", "end", "demo-dinner", "--reason", "x"],
        )
        .ok();
    assert!(q.stdout.is_empty() && q.stderr.is_empty());
}
