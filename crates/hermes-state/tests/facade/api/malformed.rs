//! The one-shot malformed-schema repair (`migrations.md` §2.1):
//! `SessionDb::repair_malformed_schema`, and its single automatic run by the
//! writable open. Reads never run it; every session and message row is kept;
//! the backup (made through SQLite's backup API) stays next to the file.

use std::path::{Path, PathBuf};

use hermes_state::malformed_repair::RepairStep;
use hermes_state::rusqlite::{Connection, types::Value};
use hermes_state::{ErrorKind, NewMessage, NewSession, SearchOptions, SessionDb};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Search;
use hermes_state_core::store::Sessions;
use tempfile::TempDir;

/// A closed store with two sessions and three messages (one holds `needle`).
fn store() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let db = SessionDb::open(&path).expect("open");
    db.create_session(&NewSession::new("a", "cli").model("gpt"))
        .expect("a");
    db.create_session(&NewSession::new("b", "telegram"))
        .expect("b");
    for message in [
        NewMessage::new("a", "user").content("where is the needle"),
        NewMessage::new("a", "assistant").content("in the haystack"),
        NewMessage::new("b", "user").content("数据库迁移"),
    ] {
        db.append_message(&message).expect("message");
    }
    db.close().expect("close");
    (dir, path)
}

/// A raw connection that reads even a schema SQLite cannot parse.
fn lenient(path: &Path) -> Connection {
    let conn = Connection::open(path).expect("raw open");
    conn.execute_batch("PRAGMA writable_schema=ON")
        .expect("writable_schema");
    conn
}

/// Every row of `sessions` and `messages`, in a stable order.
fn rows(path: &Path) -> Vec<Vec<Value>> {
    let conn = lenient(path);
    let mut all = Vec::new();
    for sql in [
        "SELECT * FROM sessions ORDER BY id",
        "SELECT * FROM messages ORDER BY id",
    ] {
        let mut stmt = conn.prepare(sql).expect("prepare");
        let width = stmt.column_count();
        let mapped = stmt
            .query_map([], |row| {
                (0..width)
                    .map(|i| row.get::<_, Value>(i))
                    .collect::<Result<Vec<_>, _>>()
            })
            .expect("query");
        all.extend(mapped.map(|row| row.expect("row")));
    }
    all
}

/// Inserts a `sqlite_master` row with `writable_schema=ON`.
fn edit_schema(path: &Path, sql: &str) {
    let conn = lenient(path);
    conn.execute_batch(sql).expect("schema edit");
}

/// Duplicates the row of an index: opening fails with "malformed database
/// schema (…) - index … already exists" (fixed by step 1).
fn duplicate_an_index_row(path: &Path) {
    edit_schema(
        path,
        "INSERT INTO sqlite_master SELECT * FROM sqlite_master WHERE type = 'index' AND name = 'idx_messages_session'",
    );
    assert_malformed(path);
}

/// Adds an index on a table that does not exist, under `name`.
fn add_a_dangling_index(path: &Path, name: &str) {
    edit_schema(
        path,
        &format!(
            "INSERT INTO sqlite_master (type, name, tbl_name, rootpage, sql) \
             SELECT 'index', '{name}', 'no_such_table', rootpage, \
                    'CREATE INDEX {name} ON no_such_table(x)' \
             FROM sqlite_master WHERE name = 'idx_messages_session'"
        ),
    );
    assert_malformed(path);
}

fn assert_malformed(path: &Path) {
    let conn = Connection::open(path).expect("raw open");
    let error = conn
        .query_row("SELECT COUNT(*) FROM sessions", [], |row| {
            row.get::<_, i64>(0)
        })
        .expect_err("the schema is malformed");
    assert!(
        error.to_string().contains("malformed database schema"),
        "{error}"
    );
}

/// The backups next to the store.
fn backups(path: &Path) -> Vec<PathBuf> {
    let dir = path.parent().expect("parent");
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|entry| entry.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("state.db.malformed-backup-"))
        })
        .collect();
    found.sort();
    found
}

fn needle_hits(db: &SessionDb) -> usize {
    db.search_messages("needle", &SearchOptions::default())
        .expect("search")
        .len()
}

#[test]
fn reads_of_a_malformed_schema_fail_as_corrupt_naming_the_repair_and_change_nothing() {
    let (_dir, path) = store();
    duplicate_an_index_row(&path);
    let before = std::fs::read(&path).expect("bytes");

    let error = SessionDb::open_read_only(&path).expect_err("read-only open");
    assert_eq!(error.kind(), ErrorKind::Corrupt, "{error}");
    assert!(
        error.to_string().contains("repair_malformed_schema"),
        "{error}"
    );

    let db = SessionDb::open(&path).expect("a writable handle opens without writing");
    for error in [
        db.get_session("a").expect_err("read").to_string(),
        db.get_messages("a").expect_err("read").to_string(),
    ] {
        assert!(error.contains("repair_malformed_schema"), "{error}");
    }
    assert_eq!(db.get_session("a").unwrap_err().kind(), ErrorKind::Corrupt);
    assert!(db.malformed_repair_report().is_none());
    drop(db);

    assert_eq!(std::fs::read(&path).expect("bytes"), before);
    assert!(backups(&path).is_empty());
}

#[test]
fn migrate_repairs_a_duplicated_schema_row_and_keeps_every_row_and_a_backup() {
    let (_dir, path) = store();
    let original = rows(&path);
    duplicate_an_index_row(&path);

    let db = SessionDb::open(&path).expect("open");
    db.migrate().expect("migrate repairs, then opens");
    let report = db
        .malformed_repair_report()
        .expect("the repair ran")
        .clone();
    assert_eq!(report.fixed_by, Some(RepairStep::DuplicateSchemaRows));
    assert!(report.is_healthy() && !report.before.healthy, "{report:?}");
    assert_eq!(
        report.steps.iter().map(|s| s.step).collect::<Vec<_>>(),
        [
            RepairStep::FtsRebuild,
            RepairStep::Reindex,
            RepairStep::DuplicateSchemaRows
        ]
    );

    assert_eq!(rows(&path), original);
    assert_eq!(db.get_messages("a").expect("messages").len(), 2);
    assert_eq!(needle_hits(&db), 1);
    let doctor = db.doctor().expect("doctor");
    assert!(doctor.is_healthy(), "{doctor:?}");

    // The backup: next to the file, named by the time, holding the original
    // rows and the original (malformed) schema.
    let backup = report.backup.expect("backup");
    assert_eq!(backups(&path), std::slice::from_ref(&backup));
    assert_eq!(rows(&backup), original);
    assert_malformed(&backup);
    db.close().expect("close");
}

#[test]
fn the_explicit_repair_rebuilds_damaged_fts_shadow_rows() {
    let (_dir, path) = store();
    let original = rows(&path);
    // The index's structure record: every query of the index now fails.
    edit_schema(&path, "DELETE FROM messages_fts_data WHERE id = 10");

    let db = SessionDb::open(&path).expect("open");
    assert_eq!(
        db.search_messages("needle", &SearchOptions::default())
            .expect_err("a damaged index is reported, not rebuilt, by a read")
            .kind(),
        ErrorKind::Corrupt
    );
    let report = db.repair_malformed_schema().expect("repair");
    assert_eq!(report.fixed_by, Some(RepairStep::FtsRebuild), "{report:?}");
    assert!(report.backup.as_deref().is_some_and(Path::exists));
    assert_eq!(rows(&path), original);
    assert_eq!(needle_hits(&db), 1);
    assert!(db.doctor().expect("doctor").is_healthy());

    // Healthy now: a second call does nothing, and makes no backup.
    let again = db.repair_malformed_schema().expect("repair");
    assert!(again.before.healthy && again.backup.is_none() && again.steps.is_empty());
    assert_eq!(backups(&path).len(), 1);
}

#[test]
fn a_damaged_fts_schema_row_is_removed_and_the_next_open_rebuilds_the_index() {
    let (_dir, path) = store();
    let original = rows(&path);
    add_a_dangling_index(&path, "messages_fts_damaged");

    let db = SessionDb::open(&path).expect("open");
    db.migrate().expect("migrate");
    let report = db.malformed_repair_report().expect("ran");
    assert_eq!(report.fixed_by, Some(RepairStep::DropFtsAndVacuum));
    assert_eq!(rows(&path), original);
    // The open after the repair recreated the FTS objects and rebuilt them.
    assert!(db.open_report().expect("opened").fts.rebuilt, "{report:?}");
    assert_eq!(needle_hits(&db), 1);
    assert!(db.doctor().expect("doctor").is_healthy());
}

#[test]
fn an_irreparable_schema_is_reported_and_left_with_its_backup() {
    let (_dir, path) = store();
    let original = rows(&path);
    add_a_dangling_index(&path, "idx_damaged");

    let db = SessionDb::open(&path).expect("open");
    let error = db.migrate().expect_err("no step repairs it");
    assert_eq!(error.kind(), ErrorKind::Corrupt);
    assert!(error.to_string().contains("backup"), "{error}");
    let report = db.malformed_repair_report().expect("ran").clone();
    assert!(!report.is_healthy() && report.fixed_by.is_none());
    assert_eq!(report.steps.len(), RepairStep::ALL.len());
    let backup = report.backup.expect("backup");
    assert_eq!(backups(&path), std::slice::from_ref(&backup));
    assert_eq!(rows(&backup), original);
    assert_eq!(rows(&path), original);
    // Reads still fail naming the repair.
    assert_eq!(db.get_session("a").unwrap_err().kind(), ErrorKind::Corrupt);

    // The explicit operation runs again when asked, and never overwrites the
    // first backup (a second one in the same second gets a suffix).
    let again = db
        .repair_malformed_schema()
        .expect("reported, not an error");
    assert!(!again.is_healthy());
    assert_eq!(backups(&path).len(), 2);
    assert_eq!(rows(&backup), original);
}

#[test]
fn the_automatic_repair_runs_at_most_once_per_path_per_process() {
    let (_dir, path) = store();
    add_a_dangling_index(&path, "idx_damaged");

    let first = SessionDb::open(&path).expect("open");
    first.migrate().expect_err("not repaired");
    assert!(first.malformed_repair_report().is_some());
    assert_eq!(backups(&path).len(), 1);

    // Another handle, another write: no second attempt, no second backup.
    let second = SessionDb::open(&path).expect("open");
    let error = second
        .create_session(&NewSession::new("c", "cli"))
        .expect_err("still malformed");
    assert_eq!(error.kind(), ErrorKind::Corrupt);
    assert!(
        error.to_string().contains("repair_malformed_schema"),
        "{error}"
    );
    assert!(second.malformed_repair_report().is_none());
    assert_eq!(backups(&path).len(), 1);
}

#[test]
fn a_read_only_handle_cannot_repair() {
    let (_dir, path) = store();
    let db = SessionDb::open_read_only(&path).expect("open");
    assert_eq!(
        db.repair_malformed_schema().unwrap_err().kind(),
        ErrorKind::ReadOnly
    );
}
