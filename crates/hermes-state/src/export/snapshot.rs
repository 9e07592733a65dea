//! One read transaction of a SQLite store as the contract's
//! [`ExportSource`]: the rows every export reads, in SQLite's storage
//! classes (converted to plain values here, at the edge).

use std::ops::ControlFlow;

use hermes_state_core::export::{ExportSource, SessionExport};
use hermes_state_query::rows::session_from_row;
use hermes_state_query::values::{self, real};
use hermes_state_types::stored::StoredValueRef;
use hermes_state_types::{Message, SCHEMA_VERSION, Session};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, Row};
use serde_json::Value;

use crate::error::{Result, WriteContext};

/// The JSONL order ([`ExportSource::session_rows`]): parents first. `UNION`
/// keeps the recursion finite on a parent cycle (damaged files).
const SESSIONS_IN_LINEAGE_ORDER: &str = "WITH RECURSIVE lineage(id, depth) AS (
    SELECT s.id, 0 FROM sessions s
    WHERE s.parent_session_id IS NULL
       OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id)
    UNION
    SELECT c.id, l.depth + 1 FROM sessions c JOIN lineage l ON c.parent_session_id = l.id
)
SELECT s.* FROM sessions s
LEFT JOIN (SELECT id, MIN(depth) AS depth FROM lineage GROUP BY id) d ON d.id = s.id
WHERE (?1 IS NULL OR s.source = ?1)
  AND (?2 IS NULL OR s.id IN (SELECT value FROM json_each(?2)))
ORDER BY d.depth IS NULL, d.depth, s.started_at, s.id";

const SESSION_MESSAGES: &str = "SELECT * FROM messages WHERE session_id = ?1 ORDER BY id";

/// `search_sessions(source, limit=100000)` of `api.md` §10.1.
const SESSIONS_BY_LAST_ACTIVE: &str =
    "SELECT s.*, COALESCE(m.last_active, s.started_at) AS last_active
FROM sessions s
LEFT JOIN (SELECT session_id, MAX(timestamp) AS last_active FROM messages GROUP BY session_id) m
    ON m.session_id = s.id
WHERE ?1 IS NULL OR s.source = ?1
ORDER BY last_active DESC, s.started_at DESC, s.id DESC
LIMIT 100000";

/// A connection inside a read transaction.
pub(super) struct Snapshot<'c>(pub(super) &'c Connection);

/// A plain value to bind, as SQLite holds it.
pub(super) fn bind(value: StoredValueRef<'_>) -> ToSqlOutput<'_> {
    ToSqlOutput::Borrowed(match value {
        StoredValueRef::Null => ValueRef::Null,
        StoredValueRef::Integer(i) => ValueRef::Integer(i),
        StoredValueRef::Real(f) => ValueRef::Real(f),
        StoredValueRef::Text(bytes) => ValueRef::Text(bytes),
        StoredValueRef::Blob(bytes) => ValueRef::Blob(bytes),
    })
}

/// Every value of `row` (of `columns` columns) as a plain value.
fn plain_row<'r>(row: &'r Row<'_>, columns: usize) -> Result<Vec<StoredValueRef<'r>>> {
    Ok((0..columns)
        .map(|index| row.get_ref(index).map(values::stored))
        .collect::<rusqlite::Result<Vec<_>>>()
        .context("reading a row to export")?)
}

impl ExportSource for Snapshot<'_> {
    fn schema_version(&mut self) -> Result<i64> {
        Ok(self
            .0
            .query_row("SELECT MAX(version) FROM schema_version", [], |row| {
                row.get::<_, Option<i64>>(0)
            })
            .ok()
            .flatten()
            .unwrap_or(SCHEMA_VERSION))
    }

    fn row_columns(&mut self) -> Result<(Vec<String>, Vec<String>)> {
        let names = |sql: &str, what: &str| -> Result<Vec<String>> {
            let stmt = self.0.prepare_cached(sql).context(what)?;
            Ok(stmt.column_names().map(str::to_owned).collect())
        };
        Ok((
            names(SESSIONS_IN_LINEAGE_ORDER, "listing sessions to export")?,
            names(SESSION_MESSAGES, "reading messages to export")?,
        ))
    }

    fn session_rows(
        &mut self,
        source: Option<&str>,
        ids: Option<&[String]>,
        each: &mut dyn FnMut(&mut Self, &[StoredValueRef<'_>]) -> Result<()>,
    ) -> Result<()> {
        const WHAT: &str = "listing sessions to export";
        let conn = self.0;
        let mut sessions = conn.prepare(SESSIONS_IN_LINEAGE_ORDER).context(WHAT)?;
        let columns = sessions.column_count();
        let ids = ids.map(|ids| Value::from(ids.to_vec()).to_string());
        let mut rows = sessions
            .query(rusqlite::params![source, ids])
            .context(WHAT)?;
        while let Some(row) = rows.next().context(WHAT)? {
            each(self, &plain_row(row, columns)?)?;
        }
        Ok(())
    }

    fn message_rows(
        &mut self,
        session_id: StoredValueRef<'_>,
        each: &mut dyn FnMut(&[StoredValueRef<'_>]) -> Result<()>,
    ) -> Result<()> {
        const WHAT: &str = "reading messages to export";
        let mut messages = self.0.prepare_cached(SESSION_MESSAGES).context(WHAT)?;
        let columns = messages.column_count();
        let mut rows = messages.query([bind(session_id)]).context(WHAT)?;
        while let Some(row) = rows.next().context(WHAT)? {
            each(&plain_row(row, columns)?)?;
        }
        Ok(())
    }

    fn session(&mut self, session_id: &str) -> Result<Option<Session>> {
        Ok(hermes_state_query::get_session(self.0, session_id)?)
    }

    fn sessions_by_last_active(
        &mut self,
        source: Option<&str>,
        each: &mut dyn FnMut(&mut Self, SessionExport) -> Result<ControlFlow<()>>,
    ) -> Result<()> {
        const WHAT: &str = "listing sessions";
        let conn = self.0;
        let mut stmt = conn.prepare(SESSIONS_BY_LAST_ACTIVE).context(WHAT)?;
        let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
        let session_columns = columns.len() - 1;
        let mut rows = stmt.query([source]).context(WHAT)?;
        while let Some(row) = rows.next().context(WHAT)? {
            let session = session_from_row(row, &columns[..session_columns]).context(WHAT)?;
            let last_active = real(row.get_ref(session_columns).context(WHAT)?);
            let export = SessionExport {
                session,
                last_active: Some(last_active.unwrap_or_default()),
                messages: Vec::new(),
            };
            if each(self, export)?.is_break() {
                break;
            }
        }
        Ok(())
    }

    fn count_messages(&mut self, session_id: &str, include_inactive: bool) -> Result<u64> {
        Ok(hermes_state_query::messages::count_session_messages(
            self.0,
            session_id,
            include_inactive,
        )?)
    }

    fn messages(
        &mut self,
        session_id: &str,
        include_inactive: bool,
        each: &mut dyn FnMut(Message) -> ControlFlow<()>,
    ) -> Result<u64> {
        Ok(hermes_state_query::messages::for_each_message(
            self.0,
            session_id,
            include_inactive,
            each,
        )?)
    }
}
