//! `malformed`: the repair ladder of `migrations.md` §2.1 on the schema
//! crate's own terms: classification by result code, the health check, the
//! backup through SQLite's backup API (never overwriting a file), and the
//! open failing before the repair and succeeding after it.

use std::path::Path;

use hermes_state_schema::malformed::{self, RepairStep};
use hermes_state_schema::open_writable;
use rusqlite::Connection;

use crate::common::{open, temp_db};

fn store_with_rows(path: &Path) {
    let (conn, _) = open(path);
    conn.execute_batch(
        "INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1);
         INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'hello', 1);",
    )
    .expect("rows");
}

fn duplicate_an_index_row(path: &Path) {
    let conn = Connection::open(path).expect("raw");
    conn.execute_batch(
        "PRAGMA writable_schema=ON;
         INSERT INTO sqlite_master SELECT * FROM sqlite_master WHERE name = 'idx_messages_session';",
    )
    .expect("duplicate");
}

#[test]
fn the_open_fails_with_sqlite_corrupt_and_succeeds_after_the_repair() {
    let (_dir, path) = temp_db();
    store_with_rows(&path);
    duplicate_an_index_row(&path);

    let error = open_writable(&path).expect_err("malformed");
    assert!(malformed::is_malformed_error(&error), "{error}");
    assert!(!malformed::health_check(&path).healthy);

    let report = malformed::repair(&path, 1_700_000_000).expect("repair");
    assert_eq!(report.fixed_by, Some(RepairStep::DuplicateSchemaRows));
    assert_eq!(
        report.backup.as_deref(),
        Some(malformed::backup_path(&path, 1_700_000_000).as_path())
    );
    assert!(malformed::health_check(&path).healthy);
    let (conn, _) = open_writable(&path).expect("open after the repair");
    let count: i64 = conn
        .query_row("SELECT COUNT(*) FROM messages", [], |row| row.get(0))
        .expect("count");
    assert_eq!(count, 1);
}

#[test]
fn a_healthy_store_is_left_alone() {
    let (_dir, path) = temp_db();
    store_with_rows(&path);
    let report = malformed::repair(&path, 0).expect("repair");
    assert!(report.before.healthy && report.backup.is_none() && report.steps.is_empty());
    assert!(!malformed::backup_path(&path, 0).exists());
}

#[test]
fn the_health_check_rolls_its_probe_back() {
    let (_dir, path) = temp_db();
    store_with_rows(&path);
    assert!(malformed::health_check(&path).healthy);
    let (conn, _) = open(&path);
    let probes: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sessions WHERE id = ?1",
            [malformed::PROBE_SESSION_ID],
            |row| row.get(0),
        )
        .expect("count");
    assert_eq!(probes, 0);
}

#[test]
fn a_backup_never_overwrites_an_existing_file() {
    let (_dir, path) = temp_db();
    store_with_rows(&path);
    let taken = malformed::backup_path(&path, 42);
    std::fs::write(&taken, b"someone else's file").expect("write");

    let backup = malformed::backup(&path, 42).expect("backup");
    assert_ne!(backup, taken);
    assert_eq!(std::fs::read(&taken).expect("read"), b"someone else's file");
    let conn = Connection::open(&backup).expect("backup opens");
    let count: i64 = conn
        .query_row("SELECT COUNT(*) FROM sessions", [], |row| row.get(0))
        .expect("count");
    assert_eq!(count, 1);
}

#[test]
fn a_backup_that_cannot_be_made_is_an_error_and_leaves_no_file() {
    let (dir, _) = temp_db();
    let missing = dir.path().join("absent.db");
    malformed::backup(&missing, 0).expect_err("no source");
    assert!(!malformed::backup_path(&missing, 0).exists());
    assert!(!missing.exists());
}

#[test]
fn only_sqlite_corrupt_codes_trigger_the_repair() {
    let corrupt =
        |code| rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), Some("text".into()));
    assert!(malformed::is_malformed(&corrupt(
        rusqlite::ffi::SQLITE_CORRUPT
    )));
    assert!(malformed::is_malformed(&corrupt(
        rusqlite::ffi::SQLITE_CORRUPT_VTAB
    )));
    assert!(!malformed::is_malformed(&rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
        Some("malformed database schema (x)".into()),
    )));
}

/// A health check that meets another connection's write lock says nothing
/// about the file: it is marked busy, and the repair stops before any step
/// that could drop objects of a store that may be fine (no backup either).
#[test]
fn a_busy_health_check_stops_the_repair() {
    let (_dir, path) = temp_db();
    store_with_rows(&path);
    let holder = Connection::open(&path).expect("another process");
    holder
        .execute_batch("BEGIN IMMEDIATE; INSERT INTO sessions (id, source, started_at) VALUES ('h', 'cli', 2);")
        .expect("hold the write lock");

    let health = malformed::health_check(&path);
    assert!(!health.healthy && health.busy, "{health:?}");
    let report = malformed::repair(&path, 1_700_000_000).expect("repair");
    assert!(report.steps.is_empty(), "no step ran: {report:?}");
    assert_eq!(report.backup, None);

    holder.execute_batch("ROLLBACK").expect("release");
    assert!(malformed::health_check(&path).healthy);
}
