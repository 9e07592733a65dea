//! `export`, `import`, `prune`, `backup`, `vacuum` and `doctor`.

use hermes_state::rusqlite::Connection;
use serde_json::Value;

use crate::common::*;

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
        &[
            "import",
            "--overwrite",
            "--yes",
            jsonl.to_str().expect("utf-8"),
        ],
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
    // A `json` export is read by the library's `import_sessions` checks.
    let refused = env.path("refused.json");
    std::fs::write(&refused, r#"[{"id": "a", "title": 5}, {"id": "b"}]"#).expect("write");
    env.run(&db, &["import", refused.to_str().expect("utf-8")])
        .fails(1)
        .one_error_line()
        .stderr_has(r#"session 0 ("a"): title must be a string"#);
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
        &[
            "prune",
            "--older-than-days",
            "90",
            "--source",
            "telegram",
            "--yes",
        ],
    );
    assert_eq!(none["count"], 0);
    env.run(&db, &["prune", "--older-than-days", "90", "--yes"])
        .ok()
        .stdout_has("pruned 1")
        .stdout_has("vacuum");
    assert_eq!(env.json(&db, &["stats"])["sessions"], 7);
    // Everything ended, whatever its age; live sessions stay.
    let all = env.json(&db, &["prune", "--older-than-days", "0", "--yes"]);
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
