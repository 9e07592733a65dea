//! Recent sessions with a preview and their last activity (`api.md` §10).

pub use hermes_state_core::listing::{DEFAULT_LIST_LIMIT, ListFilter, SessionListing};
use rusqlite::{Connection, params_from_iter, types::Value as SqlValue};

use crate::error::{QueryContext, QueryError};
use crate::rows::session_from_row;
use crate::values::real;

const RECENT_WITH_PREVIEW: &str = "SELECT s.*,
    COALESCE(
        (SELECT SUBSTR(m.content, 1, 63)
         FROM messages m
         WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
         ORDER BY m.timestamp, m.id LIMIT 1),
        ''
    ) AS preview,
    COALESCE(
        (SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id),
        s.started_at
    ) AS last_active
FROM sessions s";

/// Recent sessions, newest start first, with preview and last activity: the
/// seed document's "recent sessions with preview" query, plus an optional
/// source filter and paging.
pub fn recent_sessions(
    conn: &Connection,
    filter: &ListFilter,
) -> Result<Vec<SessionListing>, QueryError> {
    let mut sql = String::from(RECENT_WITH_PREVIEW);
    let mut params: Vec<SqlValue> = Vec::new();
    if let Some(source) = filter.source.as_deref().filter(|s| !s.is_empty()) {
        sql.push_str(" WHERE s.source = ?1");
        params.push(SqlValue::Text(source.to_owned()));
    }
    sql.push_str(&format!(
        " ORDER BY s.started_at DESC LIMIT ?{} OFFSET ?{}",
        params.len() + 1,
        params.len() + 2
    ));
    params.push(SqlValue::Integer(i64::from(
        filter.limit.unwrap_or(DEFAULT_LIST_LIMIT),
    )));
    params.push(SqlValue::Integer(i64::from(filter.offset)));

    let mut stmt = conn.prepare_cached(&sql).context("listing sessions")?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let session_columns = columns.len() - 2;
    let rows = stmt
        .query_map(params_from_iter(params), |row| {
            Ok(SessionListing {
                session: session_from_row(row, &columns[..session_columns])?,
                preview: crate::values::text(row.get_ref(session_columns)?).unwrap_or_default(),
                last_active: real(row.get_ref(session_columns + 1)?).unwrap_or_default(),
            })
        })
        .context("listing sessions")?;
    rows.collect::<Result<_, _>>()
        .context("listing sessions")
        .map_err(Into::into)
}
