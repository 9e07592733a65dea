//! SQLite failures classed as the original's exceptions by their extended
//! result code (never by text), with SQLite's own text as the original's
//! message; and a closed store. The both-backend cases are in
//! `conformance::original_errors`.

use hermes_state::query::SqliteError;
use hermes_state::rusqlite;
use hermes_state::{ErrorKind, NewMessage, OriginalError, Result};

use crate::common::Store;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

/// Runs `sql` on the store's writer as a write of the store, so that its
/// failure is a `hermes_state::Error` as an operation's would be.
fn raw_write(store: &Store, sql: &str) -> Result<()> {
    store.db.write_raw(|conn| {
        conn.execute_batch(sql)
            .map_err(|source| SqliteError::new("a raw write", source).into())
    })
}

#[test]
fn constraint_failures_are_classed_by_their_extended_code() {
    let store = Store::new();
    store.session("s");
    // (statement, class, SQLite's text = the original's message)
    let cases = [
        (
            "INSERT INTO messages (session_id, role, timestamp) VALUES ('s', NULL, 1.0)",
            OriginalError::NotNull,
            "NOT NULL constraint failed: messages.role",
        ),
        (
            "INSERT INTO sessions (id, source, started_at) VALUES ('n', NULL, 1.0)",
            OriginalError::NotNull,
            "NOT NULL constraint failed: sessions.source",
        ),
        (
            "INSERT INTO messages (session_id, role, timestamp) VALUES ('ghost', 'user', 1.0)",
            OriginalError::ForeignKey,
            "FOREIGN KEY constraint failed",
        ),
        (
            "INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1.0)",
            OriginalError::Unique,
            "UNIQUE constraint failed: sessions.id",
        ),
        (
            "INSERT INTO state_meta (key, value) VALUES ('k', 'a'); \
             INSERT INTO state_meta (key, value) VALUES ('k', 'b')",
            OriginalError::Unique,
            "UNIQUE constraint failed: state_meta.key",
        ),
    ];
    for (sql, class, message) in cases {
        let error = raw_write(&store, sql).expect_err(sql);
        assert_eq!(error.kind(), ErrorKind::Constraint, "{sql}");
        assert_eq!(error.original_class(), Some(class), "{sql}");
        assert_eq!(error.original_message().as_deref(), Some(message), "{sql}");
    }
    // A CHECK or other failure is no class of the original's.
    let error = raw_write(&store, "SELECT * FROM no_such_table").expect_err("no table");
    assert_eq!(error.original_class(), None);
    assert_eq!(error.original_message(), None);
}

#[test]
fn a_closed_store_is_the_originals_closed_connection() {
    let store = Store::new();
    store.session("s");
    store.db.close().unwrap();
    let read = store.db.get_session("s").expect_err("read after close");
    assert_eq!(read.original_class(), Some(OriginalError::Closed));
    let write = store
        .db
        .append_message(&NewMessage::new("s", "user").content("x"))
        .expect_err("write after close");
    assert_eq!(write.original_class(), Some(OriginalError::Closed));
    // A second close is no error, as in the original.
    store.db.close().unwrap();
}

#[test]
fn errors_without_a_class_of_the_original_have_none() {
    let store = Store::new();
    let reader = hermes_state::SessionDb::open_read_only(&store.path).unwrap();
    let error = reader
        .create_session(&hermes_state::NewSession::new("x", "cli"))
        .expect_err("read-only");
    assert_eq!(error.kind(), ErrorKind::ReadOnly);
    assert_eq!(error.original_class(), None);
    // A SQLite error that is not a constraint failure.
    let error = rusqlite::Error::InvalidQuery;
    let error: hermes_state::Error = SqliteError::new("x", error).into();
    assert_eq!(error.original_class(), None);
}
