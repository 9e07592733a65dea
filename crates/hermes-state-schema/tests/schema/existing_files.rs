//! Existing files (`migrations.md` §2, §4): the version-gated steps, the
//! unique-title clean-up, a v23 file opened again unchanged, and concurrent
//! opens migrating once.

use std::sync::{Arc, Barrier};

use hermes_state_schema::rusqlite::Connection;
use hermes_state_schema::rusqlite::types::Value;
use hermes_state_schema::{OpenReport, open_writable};

use crate::common::*;
use crate::spec;

#[test]
fn v22_rebuild_ignores_operational_errors() {
    // A stored version below 22 with a 5-column-key usage table, plus a table
    // already named session_model_usage_v21: the v22 block's RENAME fails with
    // an operational error ("there is already another table ..."), which the
    // original ignores (migrations.md §3.2, v22 row: "operational errors
    // ignored; integrity errors propagate"). The open must succeed.
    let (_dir, path) = store_edited_by_hand(
        "DROP TABLE session_model_usage;
         CREATE TABLE session_model_usage (
             session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
             model TEXT NOT NULL,
             billing_provider TEXT NOT NULL DEFAULT '',
             billing_base_url TEXT NOT NULL DEFAULT '',
             billing_mode TEXT NOT NULL DEFAULT '',
             PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode)
         );
         CREATE TABLE session_model_usage_v21 (leftover TEXT);
         UPDATE schema_version SET version = 21;",
    );
    let (conn, report) =
        open_writable(&path).unwrap_or_else(|error| panic!("open failed: {error}"));
    assert_eq!(report.from_version, Some(21));
    assert_eq!(report.to_version, 23);
    assert_eq!(schema_versions(&conn), vec![23]);
}

#[test]
fn duplicate_titles_are_cleared_except_newest() {
    // Inserted in this order (rowid order), ids deliberately not sorted.
    let (_dir, path) = store_edited_by_hand(
        "DROP INDEX idx_sessions_title_unique;
         INSERT INTO sessions (id, source, started_at, title) VALUES
             ('z', 'cli', 1.0, 'Alpha'),
             ('a', 'cli', 2.0, 'Alpha'),
             ('m', 'cli', 3.0, 'Beta'),
             ('b', 'cli', 4.0, 'Alpha'),
             ('y', 'cli', 5.0, 'Beta'),
             ('c', 'cli', 6.0, NULL),
             ('d', 'cli', 7.0, 'Gamma');",
    );
    let (conn, _) = open(&path);
    let titles: Vec<(String, Option<String>)> = {
        let mut stmt = conn
            .prepare("SELECT id, title FROM sessions ORDER BY rowid")
            .expect("prepare");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    let expected: Vec<(String, Option<String>)> = [
        ("z", None),
        ("a", None),
        ("m", None),
        ("b", Some("Alpha")),
        ("y", Some("Beta")),
        ("c", None),
        ("d", Some("Gamma")),
    ]
    .iter()
    .map(|(id, t)| ((*id).to_owned(), t.map(str::to_owned)))
    .collect();
    assert_eq!(titles, expected);
    let sql: Option<String> = conn
        .query_row("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'idx_sessions_title_unique'", [], |r| {
            r.get(0)
        })
        .expect("the unique title index exists");
    let (_, want) = spec::INDEX_SQL
        .iter()
        .find(|(n, _)| *n == "idx_sessions_title_unique")
        .expect("spec");
    assert_eq!(sql.as_deref(), Some(*want));
}

#[test]
fn existing_store_opens_without_changes() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    conn.execute_batch(
        "INSERT INTO sessions (id, source, started_at, title) VALUES ('s1', 'cli', 1.0, 'First');
         INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', 'hello world', 2.0);
         INSERT INTO messages (session_id, role, content, tool_name, timestamp) VALUES ('s1', 'tool', 'ok', 'shell', 3.0);
         INSERT INTO session_model_usage (session_id, model, input_tokens) VALUES ('s1', 'm', 10);
         INSERT INTO state_meta (key, value) VALUES ('custom_key', 'kept');",
    )
    .expect("seed");
    let master_1 = master(&conn);
    let dump_1 = dump(&conn);
    drop(conn);

    let (conn, report) = open(&path);
    assert!(!report.created);
    assert_eq!(report.from_version, Some(23));
    assert_eq!(report.to_version, 23);
    assert!(report.added_columns.is_empty());
    assert!(!report.fts.rebuilt);
    assert!(!report.fts.cjk_rebuilt);
    assert_eq!(master(&conn), master_1, "sqlite_master unchanged");
    let dump_2 = dump(&conn);
    // The only difference the second open may make is the fts_storage_version stamp (`schema-v23.md` §8).
    let without_meta = |d: &[(String, Vec<Vec<Value>>)]| -> Vec<(String, Vec<Vec<Value>>)> {
        d.iter()
            .filter(|(t, _)| t != "state_meta")
            .cloned()
            .collect()
    };
    assert_eq!(
        without_meta(&dump_2),
        without_meta(&dump_1),
        "rows unchanged"
    );
    assert_eq!(
        meta(&conn),
        vec![
            ("custom_key".to_owned(), Some("kept".to_owned())),
            ("fts_storage_version".to_owned(), Some("1".to_owned())),
        ]
    );
    let hits: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'hello'",
            [],
            |r| r.get(0),
        )
        .expect("fts query");
    assert_eq!(
        hits, 1,
        "the FTS index still serves the row written before the reopen"
    );
    drop(conn);

    let (conn, report) = open(&path);
    assert!(!report.created);
    assert_eq!((report.from_version, report.to_version), (Some(23), 23));
    assert_eq!(master(&conn), master_1);
    assert_eq!(dump(&conn), dump_2, "the third open changes nothing at all");
}

#[test]
fn concurrent_opens_migrate_once() {
    const THREADS: usize = 4;
    let (_dir, path) = temp_db();
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            let path = path.clone();
            std::thread::spawn(move || {
                barrier.wait();
                open_writable(&path).map_err(|error| format!("{error} (kind {:?})", error.kind()))
            })
        })
        .collect();
    let results: Vec<(Connection, OpenReport)> = handles
        .into_iter()
        .map(|h| h.join().expect("thread").expect("every open succeeds"))
        .collect();
    let created = results.iter().filter(|(_, r)| r.created).count();
    let baselined = results.iter().filter(|(_, r)| r.history.baselined).count();
    assert_eq!((created, baselined), (1, 1), "exactly one open migrated");
    let cjk_built = results.iter().filter(|(_, r)| r.fts.cjk_rebuilt).count();
    assert_eq!(cjk_built, 1, "exactly one open built the CJK index");
    drop(results);

    let conn = plain(&path);
    assert_eq!(schema_versions(&conn), vec![23]);
    assert_eq!(count(&conn, HISTORY_TABLE), 1);
    let (_dir2, reference_path) = temp_db();
    let (reference, _) = open(&reference_path);
    assert_eq!(
        master(&conn),
        master(&reference),
        "same sqlite_master as a single open"
    );
}
