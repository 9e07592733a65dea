//! Recent sessions with a preview and their last activity (`api.md` §10).

use hermes_state_core::listing::{DEFAULT_LIST_LIMIT, ListFilter, SessionListing};

use crate::PgStore;
use crate::error::{Context, Result};
use crate::rows::{SESSION_COLUMNS, select_list, session_from_row};

impl PgStore {
    /// Recent sessions, newest start first, with the first 63 characters of
    /// the earliest user message (`""` for structured content, as SQLite's
    /// string functions give) and the newest message's time.
    pub fn recent_sessions(&self, filter: &ListFilter) -> Result<Vec<SessionListing>> {
        let source = filter.source.as_deref().filter(|s| !s.is_empty());
        let sql = format!(
            "SELECT {},
                COALESCE((SELECT CASE WHEN left(m.content, 1) = chr(1) THEN '' ELSE substr(m.content, 1, 63) END
                          FROM messages m
                          WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
                          ORDER BY m.timestamp, m.id LIMIT 1), '') AS preview,
                COALESCE((SELECT max(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id),
                         s.started_at) AS last_active
             FROM sessions s
             WHERE ($1::TEXT IS NULL OR s.source = $1)
             ORDER BY s.started_at DESC LIMIT $2 OFFSET $3",
            select_list("s", &SESSION_COLUMNS)
        );
        let limit = i64::from(filter.limit.unwrap_or(DEFAULT_LIST_LIMIT));
        let offset = i64::from(filter.offset);
        self.read(|tx| {
            Ok(tx
                .query(&sql, &[&source, &limit, &offset])
                .context("listing sessions")?
                .iter()
                .map(|row| SessionListing {
                    session: session_from_row(row),
                    preview: row.get("preview"),
                    last_active: row.get("last_active"),
                })
                .collect())
        })
    }
}
