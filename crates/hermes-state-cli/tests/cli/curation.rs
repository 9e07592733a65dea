//! Curating sessions: `sessions archive|unarchive|pin|unpin|rewind|restore`,
//! the picker filters of `sessions list`, every filter of `prune`,
//! `maintenance auto` and `sessions delete` of several ids. Each test reads
//! the store back with raw SQL (or the CLI's own `--json`) to see that it
//! changed as the command says.

use std::path::Path;

use hermes_state::rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};

use crate::common::*;

fn sql_i64(db: &Path, sql: &str, id: &str) -> i64 {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("inspect");
    conn.query_row(sql, [id], |row| row.get(0)).expect("query")
}

fn flag(db: &Path, id: &str, column: &str) -> i64 {
    sql_i64(
        db,
        &format!("SELECT {column} FROM sessions WHERE id = ?1"),
        id,
    )
}

fn exists(db: &Path, id: &str) -> bool {
    sql_i64(db, "SELECT COUNT(*) FROM sessions WHERE id = ?1", id) == 1
}

fn live_messages(db: &Path, id: &str) -> i64 {
    sql_i64(
        db,
        "SELECT COUNT(*) FROM messages WHERE session_id = ?1 AND active = 1",
        id,
    )
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

#[test]
fn archive_and_unarchive_take_the_compression_lineage() {
    let env = Env::new();
    let db = env.demo("a.db");
    let archived = env.json(&db, &["sessions", "archive", "demo-refactor-2"]);
    assert_eq!(keys(&archived), ["id", "archived", "changed", "sessions"]);
    assert_eq!(archived["archived"], true);
    // The continuation and the compression-ended session it continues.
    assert_eq!(
        archived["sessions"],
        json!(["demo-refactor", "demo-refactor-2"])
    );
    assert_eq!(archived["changed"], 2);
    assert_eq!(flag(&db, "demo-refactor", "archived"), 1);
    assert_eq!(flag(&db, "demo-refactor-2", "archived"), 1);
    assert_eq!(flag(&db, "demo-paris", "archived"), 0);
    let listed = env.json(&db, &["sessions", "list", "--archived", "--children"]);
    assert!(ids(&listed).contains(&"demo-refactor-2".to_owned()));
    assert!(!ids(&listed).contains(&"demo-paris".to_owned()));
    // Again: nothing changes, and the human line says so.
    env.run(&db, &["sessions", "archive", "demo-refactor-2"])
        .ok()
        .stdout_has("already archived; nothing changed");
    env.run(&db, &["sessions", "unarchive", "demo-refactor-2"])
        .ok()
        .stdout_has("unarchived session demo-refactor-2")
        .stdout_has("2 session(s) changed");
    assert_eq!(flag(&db, "demo-refactor", "archived"), 0);
    assert_eq!(flag(&db, "demo-refactor-2", "archived"), 0);
    env.run(&db, &["sessions", "archive", "nope"])
        .fails(1)
        .one_error_line()
        .stderr_has("does not exist");
}

#[test]
fn pin_and_unpin() {
    let env = Env::new();
    let db = env.demo("p.db");
    env.run(&db, &["sessions", "pin", "demo-paris"])
        .ok()
        .stdout_has("pinned session demo-paris");
    assert_eq!(flag(&db, "demo-paris", "pinned"), 1);
    let pinned = env.json(&db, &["sessions", "list", "--pinned"]);
    assert_eq!(ids(&pinned), ["demo-paris"]);
    assert_eq!(pinned[0]["pinned"], 1);
    env.run(&db, &["sessions", "list", "--pinned"])
        .ok()
        .stdout_has("[pinned] Weather in Paris");
    let again = env.json(&db, &["sessions", "pin", "demo-paris"]);
    assert_eq!(again["changed"], 0);
    let unpinned = env.json(&db, &["sessions", "unpin", "demo-paris"]);
    assert_eq!(
        unpinned,
        json!({"id": "demo-paris", "pinned": false, "changed": 1, "sessions": ["demo-paris"]})
    );
    assert_eq!(flag(&db, "demo-paris", "pinned"), 0);
    assert_eq!(
        env.json(&db, &["sessions", "list", "--pinned"]),
        Value::Array(Vec::new())
    );
}

#[test]
fn rewind_then_restore() {
    let env = Env::new();
    let db = env.demo("r.db");
    // demo-paris: #1 user, #2–#4 the weather turn, #5 user, #6 assistant.
    env.run(&db, &["sessions", "rewind", "demo-paris", "--to", "5"])
        .ok()
        .stdout_has("2 message(s) rewound")
        .stdout_has("user message #5")
        .stdout_has("ends at message #4");
    assert_eq!(live_messages(&db, "demo-paris"), 4);
    assert_eq!(flag(&db, "demo-paris", "rewind_count"), 1);
    let shown = env.json(&db, &["messages", "list", "demo-paris"]);
    assert_eq!(shown.as_array().map(Vec::len), Some(4));
    // Only a user message is a rewind target.
    env.run(&db, &["sessions", "rewind", "demo-paris", "--to", "2"])
        .fails(1)
        .one_error_line()
        .stderr_has("must be a 'user' message");
    env.run(&db, &["sessions", "rewind", "demo-paris", "--to", "x"])
        .fails(2);
    let restored = env.json(&db, &["sessions", "restore", "demo-paris", "--since", "5"]);
    assert_eq!(
        restored,
        json!({"session_id": "demo-paris", "since": 5, "restored": 2})
    );
    assert_eq!(live_messages(&db, "demo-paris"), 6);

    let rewound = env.json(&db, &["sessions", "rewind", "demo-paris", "--to", "1"]);
    assert_eq!(rewound["rewound_count"], 6);
    assert_eq!(rewound["target_message"]["id"], 1);
    assert_eq!(rewound["new_head_id"], Value::Null);
    assert_eq!(rewound["session_id"], "demo-paris");
    env.run(&db, &["sessions", "restore", "demo-paris"])
        .ok()
        .stdout_has("restored 6 rewound message(s)");
    assert_eq!(live_messages(&db, "demo-paris"), 6);
    env.run(&db, &["sessions", "restore", "nope"])
        .fails(1)
        .stderr_has("does not exist");
}

#[test]
fn sessions_list_picker_filters() {
    let env = Env::new();
    let db = env.demo("l.db");
    // The default listing is unchanged: every session.
    assert_eq!(ids(&env.json(&db, &["sessions", "list"])).len(), 8);
    let below = env.json(
        &db,
        &["sessions", "list", "--cwd", "/home/demo/src", "--children"],
    );
    assert_eq!(
        sorted(ids(&below)),
        [
            "demo-refactor",
            "demo-refactor-2",
            "demo-refactor-docs",
            "demo-refactor-serde"
        ]
    );
    let qwen = env.json(&db, &["sessions", "list", "--model", "QWEN"]);
    assert_eq!(ids(&qwen), ["demo-tokyo"]);
    let mini = env.json(&db, &["sessions", "list", "--model", "mini", "--children"]);
    assert_eq!(
        sorted(ids(&mini)),
        ["demo-digest-old", "demo-dinner", "demo-refactor-docs"]
    );
    // Paging counts the matching rows.
    let second = env.json(
        &db,
        &[
            "sessions",
            "list",
            "--model",
            "mini",
            "--children",
            "--limit",
            "1",
            "--offset",
            "1",
        ],
    );
    assert_eq!(ids(&second), [ids(&mini)[1].clone()]);
    let long = env.json(
        &db,
        &["sessions", "list", "--min-messages", "5", "--children"],
    );
    assert_eq!(sorted(ids(&long)), ["demo-paris", "demo-refactor"]);
    let telegram = env.json(
        &db,
        &[
            "sessions",
            "list",
            "--source",
            "telegram",
            "--min-messages",
            "1",
        ],
    );
    assert_eq!(ids(&telegram), ["demo-dinner"]);
    // Archived sessions: hidden by the picker unless asked for.
    env.run(&db, &["sessions", "archive", "demo-tokyo"]).ok();
    let picker = env.json(&db, &["sessions", "list", "--min-messages", "0"]);
    assert!(!ids(&picker).contains(&"demo-tokyo".to_owned()));
    let with = env.json(&db, &["sessions", "list", "--include-archived"]);
    assert!(ids(&with).contains(&"demo-tokyo".to_owned()));
    let only = env.json(&db, &["sessions", "list", "--archived"]);
    assert_eq!(ids(&only), ["demo-tokyo"]);
    env.run(&db, &["sessions", "list", "--archived"])
        .ok()
        .stdout_has("[archived] 东京旅行计划");
    env.run(
        &db,
        &["sessions", "list", "--archived", "--include-archived"],
    )
    .fails(2);
    env.run(&db, &["sessions", "list", "--model", "nothing-like-this"])
        .ok()
        .stderr_has("no sessions match");
}

#[test]
fn prune_with_every_kind_of_filter() {
    let env = Env::new();
    let db = env.demo("f.db");
    let dry = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["prune", "--dry-run"];
        all.extend_from_slice(args);
        let value = env.json(&db, &all);
        sorted(
            value["ids"]
                .as_array()
                .expect("ids")
                .iter()
                .map(|v| v.as_str().unwrap_or_default().to_owned())
                .collect(),
        )
    };
    assert_eq!(
        dry(&["--any-age", "--title-like", "DIGEST"]),
        ["demo-digest-old"]
    );
    assert_eq!(
        dry(&["--any-age", "--end-reason", "compression"]),
        ["demo-refactor"]
    );
    assert_eq!(
        dry(&["--any-age", "--cwd", "/home/demo/src/parser/"]),
        ["demo-refactor", "demo-refactor-2", "demo-refactor-docs"]
    );
    assert_eq!(
        dry(&["--any-age", "--min-messages", "6"]),
        ["demo-paris", "demo-refactor"]
    );
    assert_eq!(
        dry(&["--any-age", "--max-messages", "2"]),
        ["demo-digest-old", "demo-refactor-docs"]
    );
    assert_eq!(dry(&["--any-age", "--model-like", "qwen"]), ["demo-tokyo"]);
    assert_eq!(
        dry(&["--any-age", "--provider", "openrouter"]),
        ["demo-tokyo"]
    );
    assert_eq!(
        dry(&["--any-age", "--chat-type", "channel"]),
        ["demo-tokyo"]
    );
    assert_eq!(
        dry(&["--any-age", "--branch-like", "refactor"]),
        ["demo-refactor", "demo-refactor-2"]
    );
    assert_eq!(
        dry(&["--any-age", "--user-id", "nobody"]),
        Vec::<String>::new()
    );
    assert_eq!(
        dry(&["--any-age", "--chat-id", "nobody"]),
        Vec::<String>::new()
    );
    assert_eq!(
        dry(&[
            "--any-age",
            "--min-tool-calls",
            "1",
            "--max-tool-calls",
            "1"
        ]),
        ["demo-paris", "demo-refactor-2"]
    );
    assert_eq!(
        dry(&["--any-age", "--min-tokens", "1000000000"]),
        Vec::<String>::new()
    );
    assert_eq!(
        dry(&["--any-age", "--max-tokens", "0"]),
        Vec::<String>::new()
    );
    assert_eq!(
        dry(&["--any-age", "--min-cost", "1000"]),
        Vec::<String>::new()
    );
    assert_eq!(
        dry(&["--any-age", "--max-cost", "0.0015", "--model-like", "mini"]),
        ["demo-digest-old"]
    );
    assert_eq!(
        dry(&["--started-before", "1970-01-02"]),
        Vec::<String>::new()
    );
    assert_eq!(
        dry(&["--started-before", "2999-01-01", "--source", "cron"]),
        ["demo-digest-old"]
    );
    assert_eq!(
        dry(&["--any-age", "--started-after", "2999-01-01"]),
        Vec::<String>::new()
    );
    assert_eq!(dry(&["--any-age", "--archived"]), Vec::<String>::new());
    assert_eq!(
        dry(&["--any-age", "--not-archived", "--source", "cron"]),
        ["demo-digest-old"]
    );
    // The JSON names the filters by the library's fields.
    let value = env.json(
        &db,
        &[
            "prune",
            "--dry-run",
            "--any-age",
            "--title-like",
            "x",
            "--archived",
        ],
    );
    assert_eq!(
        value["filters"],
        json!({"title_like": "x", "archived": true})
    );
    assert_eq!(value["older_than_days"], Value::Null);
    // Nothing was deleted by the dry runs.
    assert!(exists(&db, "demo-tokyo"));
    // Bad values are usage errors.
    for args in [
        &["prune", "--started-before", "yesterday"][..],
        &["prune", "--started-before", "2025-02-30"],
        &["prune", "--any-age", "--min-cost", "nan"],
        &["prune", "--any-age", "--older-than-days", "3"],
        &["prune", "--any-age", "--archived", "--not-archived"],
        &["prune", "--title-like", "x"],
    ] {
        env.run(&db, args).fails(2);
    }
    // For real, with the transcripts of the pruned session.
    let dir = env.path("sessions");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("demo-tokyo.json"), "{}").expect("write");
    std::fs::write(dir.join("demo-paris.json"), "{}").expect("write");
    let dir_arg = dir.to_str().expect("utf-8");
    env.run(
        &db,
        &[
            "prune",
            "--any-age",
            "--chat-type",
            "channel",
            "--sessions-dir",
            dir_arg,
            "--yes",
        ],
    )
    .ok()
    .stdout_has("pruned 1 ended sessions of any age, chat_type \"channel\"");
    assert!(!exists(&db, "demo-tokyo"));
    assert!(exists(&db, "demo-paris"));
    assert!(!dir.join("demo-tokyo.json").exists());
    assert!(dir.join("demo-paris.json").exists());
}

#[test]
fn maintenance_auto_runs_once_per_interval() {
    let env = Env::new();
    let db = env.demo("m.db");
    let first = env.json(&db, &["maintenance", "auto"]);
    assert_eq!(first["prune"]["skipped"], false);
    assert_eq!(first["prune"]["pruned"], 1);
    assert_eq!(first["prune"]["vacuumed"], true);
    assert_eq!(first["prune"]["last_run"], Value::Null);
    assert_eq!(first["prune"]["retention_days"], 90.0);
    assert_eq!(first["archive"]["skipped"], false);
    assert_eq!(first["archive"]["exclude_pinned"], true);
    assert!(!exists(&db, "demo-digest-old"));
    let archived = first["archive"]["archived"].as_i64().expect("archived");
    // The count is of the idle sessions selected (never compression-ended
    // ones); each took its compression chain along, as the original.
    let in_store = sql_i64(
        &db,
        "SELECT COUNT(*) FROM sessions WHERE archived = ?1 AND COALESCE(end_reason, '') <> 'compression'",
        "1",
    );
    assert_eq!(archived, in_store);
    // Both ran just now: skipped, with when they last ran.
    env.run(&db, &["maintenance", "auto"])
        .ok()
        .stdout_has("auto prune: skipped: last ran")
        .stdout_has("auto archive: skipped: last ran");
    let second = env.json(&db, &["maintenance", "auto"]);
    assert_eq!(second["prune"]["skipped"], true);
    assert!(second["prune"]["last_run"].is_f64());
    // A zero interval runs again; --no-archive leaves the archive out.
    let third = env.json(
        &db,
        &[
            "maintenance",
            "auto",
            "--prune-interval-hours",
            "0",
            "--no-archive",
            "--retention-days",
            "0",
        ],
    );
    assert_eq!(third["prune"]["skipped"], false);
    assert_eq!(third["archive"], Value::Null);
    assert!(third["prune"]["pruned"].as_i64().unwrap_or_default() >= 1);
    env.run(
        &db,
        &[
            "maintenance",
            "auto",
            "--no-prune",
            "--archive-interval-hours",
            "0",
        ],
    )
    .ok()
    .stdout_has("auto prune: not run (--no-prune)")
    .stdout_has("auto archive: ran: archived");
}

#[test]
fn delete_several_sessions() {
    let env = Env::new();
    let db = env.demo("d.db");
    // An unknown id deletes nothing.
    env.run(&db, &["sessions", "delete", "demo-tokyo", "nope", "--yes"])
        .fails(1)
        .one_error_line()
        .stderr_has("\"nope\" does not exist");
    assert!(exists(&db, "demo-tokyo"));
    let dir = env.path("transcripts");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("demo-refactor-docs.jsonl"), "").expect("write");
    let value = env.json(
        &db,
        &[
            "sessions",
            "delete",
            "demo-tokyo",
            "demo-refactor-2",
            "demo-tokyo",
            "--sessions-dir",
            dir.to_str().expect("utf-8"),
            "--yes",
        ],
    );
    assert_eq!(
        value,
        json!({"ids": ["demo-tokyo", "demo-refactor-2"], "deleted": true, "sessions_deleted": 3})
    );
    for gone in ["demo-tokyo", "demo-refactor-2", "demo-refactor-docs"] {
        assert!(!exists(&db, gone), "{gone} is still there");
    }
    // The delegate's transcript went with it.
    assert!(!dir.join("demo-refactor-docs.jsonl").exists());
    // One id: the shape of before, plus `ids`.
    let one = env.json(&db, &["sessions", "rm", "demo-paris", "--yes"]);
    assert_eq!(one["id"], "demo-paris");
    assert_eq!(one["sessions_deleted"], 1);
    env.run(
        &db,
        &[
            "sessions",
            "delete",
            "demo-dinner",
            "demo-digest-old",
            "--yes",
        ],
    )
    .ok()
    .stdout_has("deleted 2 sessions (demo-dinner, demo-digest-old)");
    env.run(&db, &["sessions", "delete"]).fails(2);
}

#[test]
fn read_only_refuses_every_new_writing_command() {
    let env = Env::new();
    let db = env.demo("ro.db");
    let before = std::fs::read(&db).expect("read");
    for args in [
        &["sessions", "archive", "demo-paris"][..],
        &["sessions", "unarchive", "demo-paris"],
        &["sessions", "pin", "demo-paris"],
        &["sessions", "unpin", "demo-paris"],
        &["sessions", "rewind", "demo-paris", "--to", "5"],
        &["sessions", "restore", "demo-paris"],
        &["sessions", "delete", "demo-paris", "demo-tokyo"],
        &["prune", "--any-age", "--title-like", "digest"],
        &["maintenance", "auto"],
    ] {
        let mut all = vec!["--read-only"];
        all.extend_from_slice(args);
        env.run(&db, &all)
            .fails(2)
            .one_error_line()
            .stderr_has("--read-only");
    }
    assert_eq!(std::fs::read(&db).expect("read"), before);
    // The reading forms still work.
    env.run(&db, &["--read-only", "sessions", "list", "--pinned"])
        .ok();
    env.run(
        &db,
        &[
            "--read-only",
            "prune",
            "--any-age",
            "--dry-run",
            "--title-like",
            "digest",
        ],
    )
    .ok()
    .stdout_has("would prune 1");
}
