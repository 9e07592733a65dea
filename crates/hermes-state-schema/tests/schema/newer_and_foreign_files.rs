//! Newer files (`migrations.md` §5) and files that are not stores: opened
//! writable where allowed, otherwise refused untouched.

use hermes_state_schema::rusqlite::{self};
use hermes_state_types::ErrorKind;

use crate::common::*;

#[test]
fn versions_24_and_25_open_writable_and_keep_their_number() {
    for version in [24, 25] {
        let (_dir, path) =
            store_edited_by_hand(&format!("UPDATE schema_version SET version = {version}"));
        let (conn, report) = open(&path);
        assert_eq!(report.from_version, Some(version));
        assert_eq!(report.to_version, version, "never lowered");
        assert_eq!(schema_versions(&conn), vec![version]);
        conn.execute(
            "INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1.0)",
            [],
        )
        .expect("the connection is writable");
        drop(conn);
        let (conn, _) = open(&path);
        assert_eq!(schema_versions(&conn), vec![version]);
    }
}

#[test]
fn versions_above_25_are_refused_untouched() {
    for version in [26, 99] {
        let (_dir, path) =
            store_edited_by_hand(&format!("UPDATE schema_version SET version = {version}"));
        assert_refused_untouched(&path, ErrorKind::SchemaTooNew);
    }
}

#[test]
fn fts_storage_version_2_is_refused_untouched() {
    let (_dir, path) = store_edited_by_hand(
        "INSERT INTO state_meta (key, value) VALUES ('fts_storage_version', '2')",
    );
    assert_refused_untouched(&path, ErrorKind::SchemaTooNew);
}

#[test]
fn random_bytes_are_refused_untouched() {
    let (_dir, path) = temp_db();
    std::fs::write(&path, pseudo_random_bytes(8192, 0x5eed_1234_abcd_ef01)).expect("write");
    assert_refused_untouched(&path, ErrorKind::NotADatabase);
}

#[test]
fn foreign_sqlite_file_is_refused_untouched() {
    let (_dir, path) = temp_db();
    {
        let conn = plain(&path);
        conn.execute_batch(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
             INSERT INTO users (name) VALUES ('alice'), ('bob');",
        )
        .expect("foreign db");
    }
    assert_refused_untouched(&path, ErrorKind::NotADatabase);
}

/// SQLite reads a 1-byte file as an empty database (zero pages) and would
/// write a new database over it; found by the damaged-store walk of the
/// facade (`hostile::truncations_*`).
#[test]
fn a_one_byte_file_is_refused_untouched() {
    let (_dir, path) = temp_db();
    std::fs::write(&path, b"S").expect("write");
    assert_refused_untouched(&path, ErrorKind::NotADatabase);
}

#[test]
fn zero_length_file_becomes_a_new_store() {
    let (_dir, path) = temp_db();
    std::fs::write(&path, b"").expect("write");
    let (conn, report) = open(&path);
    assert!(report.created);
    assert_eq!(report.to_version, 23);
    let (_dir2, reference_path) = temp_db();
    let (reference, _) = open(&reference_path);
    assert_eq!(
        master(&conn),
        master(&reference),
        "same schema as a store created from nothing"
    );
    assert_eq!(schema_versions(&conn), vec![23]);
}

#[test]
fn truncated_store_is_an_error() {
    let (dir, path) = temp_db();
    {
        let (conn, _) = open(&path);
        conn.execute(
            "INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1.0)",
            [],
        )
        .expect("session");
        let text = "lorem ipsum dolor sit amet ".repeat(20);
        for i in 0..200 {
            conn.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', ?1, ?2)",
                rusqlite::params![format!("{text} {i}"), f64::from(i)],
            )
            .expect("message");
        }
    }
    let bytes = std::fs::read(&path).expect("read");
    assert!(
        bytes.len() > 4 * 4096,
        "the store spans several pages ({} bytes)",
        bytes.len()
    );
    let truncated = dir.path().join("truncated.db");
    std::fs::write(&truncated, &bytes[..4096]).expect("write");
    let kind = open_error_kind(&truncated);
    assert!(
        matches!(kind, ErrorKind::Corrupt | ErrorKind::NotADatabase),
        "kind {kind:?}"
    );
}
