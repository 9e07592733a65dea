//! Reads of the opt-in Telegram DM topic tables (`api.md` §12.4): topic mode
//! per chat, the binding of a chat's topic thread to a session, and the
//! user's Telegram sessions no topic is bound to. The types both backends
//! share (a binding, a binding to make, the refusal's text) are the
//! contract crate's (`hermes_state_core::telegram_topics`).
//!
//! The tables exist only once someone opted in, so every read first asks
//! whether its table is there and answers as the original does without it
//! (`false`, `None`, `[]`, every session unlinked): it catches the
//! `no such table` error, and these reads never create the tables.

pub use hermes_state_core::telegram_topics::{ALREADY_LINKED, TopicBinding, TopicBindingRequest};
use hermes_state_sqlite::catalog::object_exists;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::error::{QueryContext, QueryError};
use crate::lookups::query_sessions;
use crate::rich_listing::{RichSession, preview};
use crate::values::{real, text};

/// The topic-mode table (one row per private chat).
pub const TOPIC_MODE: &str = "telegram_dm_topic_mode";
/// The bindings table (one row per chat topic thread).
pub const TOPIC_BINDINGS: &str = "telegram_dm_topic_bindings";

const BINDING_BY_TOPIC: &str =
    "SELECT * FROM telegram_dm_topic_bindings WHERE chat_id = ?1 AND thread_id = ?2";
const BINDINGS_OF_CHAT: &str =
    "SELECT * FROM telegram_dm_topic_bindings WHERE chat_id = ?1 ORDER BY updated_at DESC";
const BINDING_OF_SESSION: &str = "SELECT * FROM telegram_dm_topic_bindings WHERE session_id = ?1";
const MODE_ENABLED: &str =
    "SELECT enabled FROM telegram_dm_topic_mode WHERE chat_id = ?1 AND user_id = ?2";

/// The original's query of a user's Telegram sessions, newest activity
/// first: every session column, the raw preview of the first user message
/// and the last activity; `{unbound}` is empty or the clause leaving out
/// bound sessions.
const UNLINKED_SESSIONS: &str = "SELECT s.*,
    COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, X'0A', ' '), X'0D', ' '), 1, 63)
        FROM messages m
        WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
        ORDER BY m.timestamp, m.id LIMIT 1), '') AS _preview_raw,
    COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id),
        s.started_at) AS last_active
FROM sessions s
WHERE s.source = 'telegram' AND s.user_id = ?1{unbound}
ORDER BY last_active DESC, s.started_at DESC
LIMIT ?2";
const NOT_BOUND: &str = "
  AND NOT EXISTS (SELECT 1 FROM telegram_dm_topic_bindings b WHERE b.session_id = s.id)";

fn has_table(conn: &Connection, table: &str) -> Result<bool, QueryError> {
    Ok(object_exists(conn, "table", table)?)
}

/// Whether topic mode is on for this chat and user: the stored `enabled`
/// read as Python's truth value; `false` without a row or the table.
pub fn is_topic_mode_enabled(
    conn: &Connection,
    chat_id: &str,
    user_id: &str,
) -> Result<bool, QueryError> {
    if !has_table(conn, TOPIC_MODE)? {
        return Ok(false);
    }
    conn.prepare_cached(MODE_ENABLED)
        .context("reading the Telegram topic mode")?
        .query_row(params![chat_id, user_id], |row| {
            Ok(python_truth(row.get_ref(0)?))
        })
        .optional()
        .context("reading the Telegram topic mode")
        .map(|enabled| enabled.unwrap_or(false))
        .map_err(Into::into)
}

/// Python's `bool()` of a value SQLite hands back.
fn python_truth(value: ValueRef<'_>) -> bool {
    match value {
        ValueRef::Null => false,
        ValueRef::Integer(i) => i != 0,
        ValueRef::Real(f) => f != 0.0,
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => !bytes.is_empty(),
    }
}

/// The binding of one chat topic thread, `None` without one (or the table).
pub fn binding_by_topic(
    conn: &Connection,
    chat_id: &str,
    thread_id: &str,
) -> Result<Option<TopicBinding>, QueryError> {
    Ok(
        bindings(conn, BINDING_BY_TOPIC, params![chat_id, thread_id])?
            .into_iter()
            .next(),
    )
}

/// Every binding of a chat, most recently updated first; `[]` without the
/// table.
pub fn bindings_of_chat(conn: &Connection, chat_id: &str) -> Result<Vec<TopicBinding>, QueryError> {
    bindings(conn, BINDINGS_OF_CHAT, params![chat_id])
}

/// The binding of a session (at most one: `session_id` is unique), `None`
/// without one (or the table).
pub fn binding_of_session(
    conn: &Connection,
    session_id: &str,
) -> Result<Option<TopicBinding>, QueryError> {
    Ok(bindings(conn, BINDING_OF_SESSION, params![session_id])?
        .into_iter()
        .next())
}

/// Whether the session is bound to a topic; `false` without the table.
pub fn is_session_linked(conn: &Connection, session_id: &str) -> Result<bool, QueryError> {
    Ok(binding_of_session(conn, session_id)?.is_some())
}

fn bindings(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<TopicBinding>, QueryError> {
    const WHAT: &str = "reading Telegram topic bindings";
    if !has_table(conn, TOPIC_BINDINGS)? {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(sql).context(WHAT)?;
    let rows = stmt.query_map(params, binding_from_row).context(WHAT)?;
    rows.collect::<Result<_, _>>()
        .context(WHAT)
        .map_err(Into::into)
}

fn binding_from_row(row: &Row<'_>) -> rusqlite::Result<TopicBinding> {
    let text_of = |name: &str| -> rusqlite::Result<String> {
        Ok(text(row.get_ref(name)?).unwrap_or_default())
    };
    let time_of =
        |name: &str| -> rusqlite::Result<f64> { Ok(real(row.get_ref(name)?).unwrap_or_default()) };
    Ok(TopicBinding {
        chat_id: text_of("chat_id")?,
        thread_id: text_of("thread_id")?,
        user_id: text_of("user_id")?,
        session_key: text_of("session_key")?,
        session_id: text_of("session_id")?,
        managed_mode: text_of("managed_mode")?,
        linked_at: time_of("linked_at")?,
        updated_at: time_of("updated_at")?,
    })
}

/// The user's `telegram` sessions that no topic is bound to (all of them
/// when the bindings table does not exist), newest activity first, then
/// newest start; at most `limit` (a negative limit is none, as SQLite's).
/// Each row is the session with its `last_active` and the one-line
/// `preview` of its first user message, as
/// [`crate::rich_listing::list_sessions_rich`] gives them.
pub fn unlinked_sessions_for_user(
    conn: &Connection,
    user_id: &str,
    limit: i64,
) -> Result<Vec<RichSession>, QueryError> {
    let unbound = if has_table(conn, TOPIC_BINDINGS)? {
        NOT_BOUND
    } else {
        ""
    };
    let sql = UNLINKED_SESSIONS.replace("{unbound}", unbound);
    query_sessions(
        conn,
        &sql,
        params![user_id, limit],
        "listing unlinked Telegram sessions",
        2,
        |session, row, at| {
            Ok(RichSession {
                session,
                last_active: real(row.get_ref(at + 1)?).unwrap_or_default(),
                preview: preview(&text(row.get_ref(at)?).unwrap_or_default()),
                lineage_root_id: None,
                compact: false,
            })
        },
    )
}
