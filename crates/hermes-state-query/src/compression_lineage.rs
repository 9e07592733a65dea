//! The compression chain through a session (`api.md` §9.2) on a SQLite
//! store: the rule of `hermes_state_core::compression_lineage` over this
//! crate's reads of a session and its children.

use rusqlite::{Connection, OptionalExtension};

pub use hermes_state_core::compression_lineage::{LineageNode, LineageReads, compression_lineage};

use crate::error::{QueryContext, QueryError};
use crate::lookups::has_marker;
use crate::values::text;

/// The compression chain through `session_id` on a SQLite store.
pub fn get_compression_lineage(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<String>, QueryError> {
    compression_lineage(&mut SqliteLineage { conn }, session_id)
}

const NODE: &str =
    "SELECT id, parent_session_id, end_reason, model_config FROM sessions WHERE id = ?1";
/// The original's order: `started_at` only (ties as SQLite gives them).
const CHILDREN: &str = "SELECT id, parent_session_id, end_reason, model_config FROM sessions
     WHERE parent_session_id = ?1 ORDER BY started_at ASC";

struct SqliteLineage<'c> {
    conn: &'c Connection,
}

fn node_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<LineageNode> {
    let model_config = text(row.get_ref(3)?);
    Ok(LineageNode {
        id: text(row.get_ref(0)?).unwrap_or_default(),
        parent: text(row.get_ref(1)?),
        end_reason: text(row.get_ref(2)?),
        branched: has_marker(model_config.as_deref(), "_branched_from"),
    })
}

impl LineageReads for SqliteLineage<'_> {
    type Error = QueryError;

    fn node(&mut self, id: &str) -> Result<Option<LineageNode>, QueryError> {
        const WHAT: &str = "reading a session of a compression chain";
        self.conn
            .prepare_cached(NODE)
            .context(WHAT)?
            .query_row([id], node_from_row)
            .optional()
            .context(WHAT)
            .map_err(Into::into)
    }

    fn children(&mut self, id: &str) -> Result<Vec<LineageNode>, QueryError> {
        const WHAT: &str = "following a compression chain";
        let mut stmt = self.conn.prepare_cached(CHILDREN).context(WHAT)?;
        let rows = stmt.query_map([id], node_from_row).context(WHAT)?;
        rows.collect::<Result<_, _>>()
            .context(WHAT)
            .map_err(Into::into)
    }
}
