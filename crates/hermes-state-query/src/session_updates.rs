//! Reading the per-session state the agent keeps between turns (`api.md`
//! §2.5): the compression-failure cooldown, the compression fallback streak
//! and ineffective-compaction count, and the cross-platform handoff state.
//!
//! The writes are the facade's; these reads work on any connection,
//! read-only ones included. Stored values are converted leniently
//! ([`crate::values`]), so a file another writer filled with odd storage
//! classes still reads.

pub use hermes_state_core::session_updates::{
    CompressionCooldown, HANDOFF_ERROR_MAX_CHARS, HandoffState, active_cooldown, handoff_error_text,
};
use hermes_state_types::Session;
use rusqlite::{Connection, OptionalExtension};

use crate::error::{QueryContext, QueryError};
use crate::rows::session_from_row;
use crate::values;

const COOLDOWN: &str = "SELECT compression_failure_cooldown_until, compression_failure_error FROM sessions WHERE id = ?1";
const FALLBACK_STREAK: &str = "SELECT compression_fallback_streak FROM sessions WHERE id = ?1";
const INEFFECTIVE_COUNT: &str = "SELECT compression_ineffective_count FROM sessions WHERE id = ?1";
const HANDOFF_STATE: &str =
    "SELECT handoff_state, handoff_platform, handoff_error FROM sessions WHERE id = ?1";
const PENDING_HANDOFFS: &str =
    "SELECT * FROM sessions WHERE handoff_state = 'pending' ORDER BY started_at ASC";

/// The session's compression-failure cooldown if one is set and ends after
/// `now` (Unix seconds); `None` when it is unset, expired (`cooldown_until
/// <= now`), or the session does not exist.
pub fn compression_failure_cooldown(
    conn: &Connection,
    session_id: &str,
    now: f64,
) -> Result<Option<CompressionCooldown>, QueryError> {
    let row = conn
        .prepare_cached(COOLDOWN)
        .context("reading a compression cooldown")?
        .query_row([session_id], |row| {
            Ok((values::real(row.get_ref(0)?), values::text(row.get_ref(1)?)))
        })
        .optional()
        .context("reading a compression cooldown")?;
    Ok(row.and_then(|(until, error)| active_cooldown(until, error, now)))
}

/// The session's compression fallback streak; 0 for a missing session (or
/// a value that is not a number).
pub fn compression_fallback_streak(conn: &Connection, session_id: &str) -> Result<i64, QueryError> {
    counter(
        conn,
        FALLBACK_STREAK,
        session_id,
        "reading a compression fallback streak",
    )
}

/// The session's ineffective-compaction count; 0 for a missing session (or
/// a value that is not a number).
pub fn compression_ineffective_count(
    conn: &Connection,
    session_id: &str,
) -> Result<i64, QueryError> {
    counter(
        conn,
        INEFFECTIVE_COUNT,
        session_id,
        "reading a compression ineffective count",
    )
}

fn counter(conn: &Connection, sql: &str, session_id: &str, what: &str) -> Result<i64, QueryError> {
    let value = conn
        .prepare_cached(sql)
        .context(what)?
        .query_row([session_id], |row| Ok(values::integer(row.get_ref(0)?)))
        .optional()
        .context(what)?;
    Ok(value.flatten().unwrap_or(0))
}

/// The handoff columns of a session, `None` when the session does not exist
/// (a session never handed off gives a state of `None`).
pub fn handoff_state(
    conn: &Connection,
    session_id: &str,
) -> Result<Option<HandoffState>, QueryError> {
    conn.prepare_cached(HANDOFF_STATE)
        .context("reading a handoff state")?
        .query_row([session_id], |row| {
            Ok(HandoffState {
                state: values::text(row.get_ref(0)?),
                platform: values::text(row.get_ref(1)?),
                error: values::text(row.get_ref(2)?),
            })
        })
        .optional()
        .context("reading a handoff state")
        .map_err(Into::into)
}

/// Every session whose handoff is `pending`, oldest start first.
pub fn pending_handoffs(conn: &Connection) -> Result<Vec<Session>, QueryError> {
    let mut stmt = conn
        .prepare_cached(PENDING_HANDOFFS)
        .context("listing pending handoffs")?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    stmt.query_map([], |row| session_from_row(row, &columns))
        .and_then(Iterator::collect)
        .context("listing pending handoffs")
        .map_err(Into::into)
}
