//! Set-up helpers for the listing tests (`rich_listing`): sessions with a
//! chosen start, end and parent, written raw. The lookups themselves
//! (`api.md` §2.4, §6.2, §9.2, §12.2) are the conformance suite's cases
//! (`lookups`, `more_ops`), on every backend.

use hermes_state::NewMessage;
use hermes_state::rusqlite::types::Value as Sql;

use crate::common::Store;
use hermes_state_core::store::Messages;

/// A session row with a chosen start, source and parent (raw SQL: the API
/// stamps `started_at` with the clock).
pub fn add(store: &Store, id: &str, source: &str, started_at: f64, parent: Option<&str>) {
    store.exec(
        "INSERT INTO sessions (id, source, started_at, parent_session_id) VALUES (?1, ?2, ?3, ?4)",
        (id, source, started_at, parent),
    );
}

/// Ends a session with a reason at a chosen time.
pub fn end(store: &Store, id: &str, reason: &str, at: f64) {
    store.exec(
        "UPDATE sessions SET ended_at = ?2, end_reason = ?3 WHERE id = ?1",
        (id, at, reason),
    );
}

/// Sets one column of a session.
pub fn set(store: &Store, id: &str, column: &str, value: Sql) {
    store.exec(
        &format!("UPDATE sessions SET {column} = ?2 WHERE id = ?1"),
        (id, value),
    );
}

/// Appends a message through the API (counters and FTS maintained).
pub fn message(store: &Store, id: &str, role: &str, text: &str, at: f64) {
    store
        .db
        .append_message(&NewMessage::new(id, role).content(text).timestamp(at))
        .expect("append_message");
}
