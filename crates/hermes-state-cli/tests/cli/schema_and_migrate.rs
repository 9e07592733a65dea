//! `schema`, `migrate`, and the FTS rebuild and storage commands.

use hermes_state::rusqlite::Connection;

use crate::common::*;

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
