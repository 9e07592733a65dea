//! The runs of a cron job (`api.md` §10.4) on PostgreSQL, with the SQLite
//! backend's selection: `source = 'cron'` exactly, and an id in the
//! original's range `[cron_<job_id>_, cron_<job_id>`)` (`sessions.id` has
//! the `C` collation, so this is byte order: the ids starting with
//! `cron_<job_id>_`, case-sensitively).

use hermes_state_core::rich_listing::{RichSession, cron_id_range};

use crate::PgStore;
use crate::error::{Context, Result};
use crate::rich_listing::{rich_from_row, rich_select};

impl PgStore {
    /// `api.md` §10.4: the sessions of cron job `job_id`, newest start
    /// first (ties by id, descending), as rich rows (`last_active`,
    /// `preview`); `limit` rows after skipping `offset`.
    pub fn list_cron_job_runs(
        &self,
        job_id: &str,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<RichSession>> {
        let (low, high) = cron_id_range(job_id);
        let sql = format!(
            "SELECT {} FROM sessions s
             WHERE s.source = 'cron' AND s.id >= $1 AND s.id < $2
             ORDER BY s.started_at DESC, s.id DESC LIMIT $3 OFFSET $4",
            rich_select()
        );
        let (limit, offset) = (i64::from(limit), i64::from(offset));
        self.read(|tx| {
            Ok(tx
                .query(&sql, &[&low, &high, &limit, &offset])
                .context("listing cron job runs")?
                .iter()
                .map(|row| rich_from_row(row, false))
                .collect())
        })
    }
}
