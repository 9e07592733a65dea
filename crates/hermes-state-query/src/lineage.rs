//! Session lineage (`api.md` §9): the chains of `parent_session_id` links
//! that context compression, branching and delegation create.
//!
//! The seed document's recursive queries use `UNION ALL`, which never ends
//! on a damaged file whose links form a cycle. These use `UNION` over the
//! selected columns: a session revisited through a cycle produces a row equal
//! to one already queued, which `UNION` discards, so the recursion stops. On
//! well-formed data they return the same rows in the same order.

pub use hermes_state_core::lineage::LineageEntry;
use rusqlite::Connection;

use crate::error::{QueryContext, QueryError};
use crate::sessions::lineage_root_to_tip;

const ANCESTORS: &str = "WITH RECURSIVE lineage(id, title, started_at, parent_session_id) AS (
    SELECT id, title, started_at, parent_session_id FROM sessions WHERE id = ?1
    UNION
    SELECT s.id, s.title, s.started_at, s.parent_session_id
    FROM sessions s JOIN lineage l ON s.id = l.parent_session_id
)
SELECT id, title, started_at, parent_session_id FROM lineage";

const DESCENDANTS: &str =
    "WITH RECURSIVE descendants(id, title, started_at, parent_session_id) AS (
    SELECT id, title, started_at, parent_session_id FROM sessions WHERE id = ?1
    UNION
    SELECT s.id, s.title, s.started_at, s.parent_session_id
    FROM sessions s JOIN descendants d ON s.parent_session_id = d.id
)
SELECT id, title, started_at, parent_session_id FROM descendants";

/// The session and its ancestors, walking up: the session first, its root
/// last. Empty for an unknown id.
pub fn ancestors(conn: &Connection, session_id: &str) -> Result<Vec<LineageEntry>, QueryError> {
    run(conn, ANCESTORS, session_id)
}

/// The session and all its descendants, level by level: the session first.
/// Empty for an unknown id.
pub fn descendants(conn: &Connection, session_id: &str) -> Result<Vec<LineageEntry>, QueryError> {
    run(conn, DESCENDANTS, session_id)
}

/// The root of the session's lineage: the last distinct ancestor reached by
/// walking parent links (the session itself when it has no parent); the walk
/// stops at a missing row or at the first repeated id, so a cycle ends it.
pub fn lineage_root(conn: &Connection, session_id: &str) -> Result<String, QueryError> {
    let chain = lineage_root_to_tip(conn, session_id)?;
    Ok(chain
        .into_iter()
        .next()
        .unwrap_or_else(|| session_id.to_owned()))
}

fn run(conn: &Connection, sql: &str, session_id: &str) -> Result<Vec<LineageEntry>, QueryError> {
    let mut stmt = conn.prepare_cached(sql).context("reading the lineage")?;
    let rows = stmt
        .query_map([session_id], |row| {
            Ok(LineageEntry {
                id: row.get(0)?,
                title: row.get(1)?,
                started_at: crate::values::real(row.get_ref(2)?).unwrap_or_default(),
                parent_session_id: row.get(3)?,
            })
        })
        .context("reading the lineage")?;
    rows.collect::<Result<_, _>>()
        .context("reading the lineage")
        .map_err(Into::into)
}
