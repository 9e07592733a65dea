//! Reading the coordination tables (`api.md` §12): compression locks, the
//! gateway routing map and async delegations.
//!
//! None of these tables references `sessions`: a lock, a routing entry or a
//! delegation may name a session id that has no row. The clock is the
//! caller's (`now`, Unix seconds), so a read inside a write transaction and
//! the write that follows judge expiry against the same instant.

use std::collections::BTreeMap;

pub use hermes_state_core::coordination::{CompressionLock, Delegation, DelegationFilter};
use rusqlite::{Connection, OptionalExtension, Row};

use crate::error::{QueryContext, QueryError};

const LOCK_STATE: &str =
    "SELECT holder, expires_at < ?2 FROM compression_locks WHERE session_id = ?1";
const LOCK_HOLDER: &str = "SELECT holder FROM compression_locks WHERE session_id = ?1";
const LIVE_LOCK_HOLDER: &str =
    "SELECT holder FROM compression_locks WHERE session_id = ?1 AND expires_at >= ?2";
const LOAD_ROUTES: &str =
    "SELECT session_key, entry_json FROM gateway_routing WHERE scope = ?1 ORDER BY session_key";
/// Every column of `async_delegations` in v23 table order; rows written by
/// newer subsystems may carry more columns, which are not read.
const DELEGATION_COLUMNS: &str = "delegation_id, origin_session, origin_ui_session_id, parent_session_id, state, dispatched_at, completed_at, updated_at, event_json, result_json, delivery_state, delivery_attempts, delivered_at, owner_pid, owner_started_at, task_json, delivery_claim, delivery_claimed_at";

/// The compression lock of a session, expired or not; `None` when there is
/// none.
pub fn compression_lock(
    conn: &Connection,
    session_id: &str,
    now: f64,
) -> Result<Option<CompressionLock>, QueryError> {
    conn.query_row(LOCK_STATE, rusqlite::params![session_id, now], |row| {
        Ok(CompressionLock {
            holder: row.get(0)?,
            expired: row.get::<_, Option<bool>>(1)?.unwrap_or(false),
        })
    })
    .optional()
    .context("reading a compression lock")
    .map_err(Into::into)
}

/// The holder of a session's compression lock, expired or not; `None` when
/// there is none.
pub fn compression_lock_holder(
    conn: &Connection,
    session_id: &str,
) -> Result<Option<String>, QueryError> {
    conn.query_row(LOCK_HOLDER, [session_id], |row| row.get(0))
        .optional()
        .context("reading a compression lock")
        .map_err(Into::into)
}

/// The holder of a session's unexpired compression lock (`expires_at >=
/// now`), or `None`.
pub fn live_compression_lock_holder(
    conn: &Connection,
    session_id: &str,
    now: f64,
) -> Result<Option<String>, QueryError> {
    conn.query_row(
        LIVE_LOCK_HOLDER,
        rusqlite::params![session_id, now],
        |row| row.get(0),
    )
    .optional()
    .context("reading a compression lock")
    .map_err(Into::into)
}

/// The routing map of `scope`: `session_key → entry_json`, in key order
/// (byte order of the UTF-8 text, SQLite's `BINARY` collation, which is
/// also the order of the table's index that the original returns).
pub fn gateway_routing_entries(
    conn: &Connection,
    scope: &str,
) -> Result<BTreeMap<String, String>, QueryError> {
    const WHAT: &str = "loading the gateway routing entries";
    let mut stmt = conn.prepare_cached(LOAD_ROUTES).context(WHAT)?;
    let rows = stmt
        .query_map([scope], |row| Ok((row.get(0)?, row.get(1)?)))
        .context(WHAT)?;
    rows.collect::<Result<BTreeMap<_, _>, _>>()
        .context(WHAT)
        .map_err(Into::into)
}

/// One delegation, or `None` for an unknown id.
pub fn get_delegation(
    conn: &Connection,
    delegation_id: &str,
) -> Result<Option<Delegation>, QueryError> {
    conn.query_row(
        &format!("SELECT {DELEGATION_COLUMNS} FROM async_delegations WHERE delegation_id = ?1"),
        [delegation_id],
        delegation_from_row,
    )
    .optional()
    .context("reading a delegation")
    .map_err(Into::into)
}

/// The delegations matching every given field of `filter` (all of them for
/// the default filter), oldest dispatch first, ties by id.
pub fn list_delegations(
    conn: &Connection,
    filter: &DelegationFilter,
) -> Result<Vec<Delegation>, QueryError> {
    const WHAT: &str = "listing delegations";
    let mut sql = format!("SELECT {DELEGATION_COLUMNS} FROM async_delegations WHERE 1 = 1");
    let mut params: Vec<&str> = Vec::new();
    for (column, value) in [
        ("state", &filter.state),
        ("delivery_state", &filter.delivery_state),
        ("origin_session", &filter.origin_session),
    ] {
        if let Some(value) = value {
            params.push(value);
            sql.push_str(&format!(" AND {column} = ?{}", params.len()));
        }
    }
    sql.push_str(" ORDER BY dispatched_at, delegation_id");
    let mut stmt = conn.prepare(&sql).context(WHAT)?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(params), delegation_from_row)
        .context(WHAT)?;
    rows.collect::<Result<Vec<_>, _>>()
        .context(WHAT)
        .map_err(Into::into)
}

/// Maps a row selected with [`DELEGATION_COLUMNS`], by position.
fn delegation_from_row(row: &Row<'_>) -> rusqlite::Result<Delegation> {
    Ok(Delegation {
        delegation_id: row.get(0)?,
        origin_session: row.get(1)?,
        origin_ui_session_id: row.get(2)?,
        parent_session_id: row.get(3)?,
        state: row.get(4)?,
        dispatched_at: row.get(5)?,
        completed_at: row.get(6)?,
        updated_at: row.get(7)?,
        event_json: row.get(8)?,
        result_json: row.get(9)?,
        delivery_state: row.get(10)?,
        delivery_attempts: row.get(11)?,
        delivered_at: row.get(12)?,
        owner_pid: row.get(13)?,
        owner_started_at: row.get(14)?,
        task_json: row.get(15)?,
        delivery_claim: row.get(16)?,
        delivery_claimed_at: row.get(17)?,
    })
}
