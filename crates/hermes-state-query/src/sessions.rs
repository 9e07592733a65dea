//! Reading sessions.

use std::collections::HashSet;

use hermes_state_types::Session;
use rusqlite::{Connection, OptionalExtension};

use crate::error::{QueryContext, QueryError};
use crate::rows::session_from_row;

/// How far lineage walks go before giving up: a damaged file can hold a
/// parent chain that never ends; walks also stop at the first repeated id.
pub const MAX_LINEAGE_STEPS: usize = 100;

/// One session row (`SELECT *`), or `None` for an unknown id.
pub fn get_session(conn: &Connection, session_id: &str) -> Result<Option<Session>, QueryError> {
    let mut stmt = conn
        .prepare_cached("SELECT * FROM sessions WHERE id = ?1")
        .context("reading a session")?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    stmt.query_row([session_id], |row| session_from_row(row, &columns))
        .optional()
        .context("reading a session")
        .map_err(Into::into)
}

/// The parent of a session, `None` for roots and unknown ids; a parent link
/// that is not text (a file another tool wrote) is no link.
pub fn parent_of(conn: &Connection, session_id: &str) -> Result<Option<String>, QueryError> {
    conn.prepare_cached("SELECT parent_session_id FROM sessions WHERE id = ?1")
        .context("reading a parent link")?
        .query_row([session_id], |row| {
            Ok(match row.get_ref(0)? {
                rusqlite::types::ValueRef::Text(bytes) => {
                    Some(String::from_utf8_lossy(bytes).into_owned())
                }
                _ => None,
            })
        })
        .optional()
        .context("reading a parent link")
        .map(Option::flatten)
        .map_err(Into::into)
}

/// The lineage from its root down to `session_id` (`api.md` §9.2): walk
/// `parent_session_id` upwards at most [`MAX_LINEAGE_STEPS`] steps, stopping at
/// a missing row or a repeated id, then reverse. An unknown id gives `[id]`.
pub fn lineage_root_to_tip(conn: &Connection, session_id: &str) -> Result<Vec<String>, QueryError> {
    let mut chain = vec![session_id.to_owned()];
    let mut seen: HashSet<String> = chain.iter().cloned().collect();
    let mut current = session_id.to_owned();
    for _ in 0..MAX_LINEAGE_STEPS {
        let Some(parent) = parent_of(conn, &current)? else {
            break;
        };
        if !seen.insert(parent.clone()) || !session_exists(conn, &parent)? {
            break;
        }
        chain.push(parent.clone());
        current = parent;
    }
    chain.reverse();
    Ok(chain)
}

/// Whether a session row exists.
pub fn session_exists(conn: &Connection, session_id: &str) -> Result<bool, QueryError> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)")
        .context("checking a session")?
        .query_row([session_id], |row| row.get(0))
        .context("checking a session")
        .map_err(Into::into)
}

/// A `state_meta` value, `None` when the key is absent.
pub fn get_meta(conn: &Connection, key: &str) -> Result<Option<String>, QueryError> {
    conn.prepare_cached("SELECT value FROM state_meta WHERE key = ?1")
        .context("reading state_meta")?
        .query_row([key], |row| row.get::<_, Option<String>>(0))
        .optional()
        .context("reading state_meta")
        .map(Option::flatten)
        .map_err(Into::into)
}

/// Number of sessions, of one source when `source` is given (`api.md` §10).
pub fn session_count(conn: &Connection, source: Option<&str>) -> Result<i64, QueryError> {
    match source {
        Some(source) => conn.query_row(
            "SELECT COUNT(*) FROM sessions WHERE source = ?1",
            [source],
            |r| r.get(0),
        ),
        None => conn.query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0)),
    }
    .context("counting sessions")
    .map_err(Into::into)
}
