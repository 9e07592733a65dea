//! Listing sessions for dashboards and cleanups (`api.md` §10.1, §11.6),
//! the SQLite backend's queries spelled for PostgreSQL. The prune-filter
//! listings (`list_prune_candidates`, `archive_sessions`) live with the
//! prune selection in `prune`.

use hermes_state_query::lookups::SessionActivity;
use postgres::Row;

use crate::PgStore;
use crate::error::{Context, Result};
use crate::rows::{SESSION_COLUMNS, select_list, session_from_row};

/// `COALESCE(newest message timestamp, started_at)` of `sessions s`.
pub(crate) const LAST_ACTIVE: &str =
    "COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), s.started_at)";

/// A row selected as `SESSION_COLUMNS…, last_active`.
pub(crate) fn activity_from_row(row: &Row) -> SessionActivity {
    SessionActivity {
        session: session_from_row(row),
        last_active: row.get::<_, Option<f64>>("last_active").unwrap_or_default(),
    }
}

impl PgStore {
    /// `api.md` §10.1: every session (children and archived included) with
    /// `last_active`, most recently active first; of `source` when given
    /// and non-empty.
    pub fn search_sessions(
        &self,
        source: Option<&str>,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<SessionActivity>> {
        let source = source.filter(|s| !s.is_empty());
        let sql = format!(
            "SELECT {columns}, {LAST_ACTIVE} AS last_active FROM sessions s
             WHERE ($1::text IS NULL OR s.source = $1)
             ORDER BY last_active DESC NULLS LAST, s.started_at DESC, s.id DESC
             LIMIT $2 OFFSET $3",
            columns = select_list("s", &SESSION_COLUMNS),
        );
        self.read(|tx| {
            Ok(tx
                .query(&sql, &[&source, &i64::from(limit), &i64::from(offset)])
                .context("searching sessions")?
                .iter()
                .map(activity_from_row)
                .collect())
        })
    }

    /// `api.md` §11.6: the number of empty sessions (`message_count = 0`,
    /// ended, not archived).
    pub fn count_empty_sessions(&self) -> Result<i64> {
        self.read(|tx| {
            Ok(tx
                .query_one(
                    "SELECT COUNT(*) FROM sessions s \
                     WHERE s.message_count = 0 AND s.ended_at IS NOT NULL AND s.archived = 0",
                    &[],
                )
                .context("counting empty sessions")?
                .get(0))
        })
    }
}
