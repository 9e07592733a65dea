//! Listing sessions for pickers and cleanups, and archiving them (`api.md`
//! §10, §11.3 filters, §11.4, §11.6). Reads are `hermes_state_query::rich_listing`;
//! the archiving writes go through the write path.

use hermes_state_query::lookups::SessionActivity;
use hermes_state_query::rich_listing::{self, RichListOptions, RichSession, SessionFilter};

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};

/// Which sessions [`SessionDb::list_prune_candidates`] lists and
/// [`SessionDb::archive_sessions`] archives (`api.md` §11.3): ended sessions
/// started more than `older_than_days` ago (unless `filter.started_before`
/// is given) matching every filter.
#[derive(Debug, Clone, PartialEq)]
pub struct PruneFilter {
    /// Age bound in days (default 90, as the original); `None`: no bound.
    pub older_than_days: Option<f64>,
    /// The other filters.
    pub filter: SessionFilter,
}

impl Default for PruneFilter {
    fn default() -> Self {
        PruneFilter {
            older_than_days: Some(90.0),
            filter: SessionFilter::default(),
        }
    }
}

impl SessionDb {
    /// `api.md` §10.1: every session (children and archived included) with
    /// `last_active`, most recently active first; of `source` when given
    /// and non-empty.
    pub fn search_sessions(
        &self,
        source: Option<&str>,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<SessionActivity>> {
        self.read(|conn| Ok(rich_listing::search_sessions(conn, source, limit, offset)?))
    }

    /// `api.md` §10.3: sessions for a picker with `last_active` and a
    /// one-line preview, filtered, ordered and projected onto their
    /// compression tips as [`RichListOptions`] says.
    pub fn list_sessions_rich(&self, options: &RichListOptions) -> Result<Vec<RichSession>> {
        self.read(|conn| Ok(rich_listing::list_sessions_rich(conn, options)?))
    }

    /// `api.md` §10.4: the runs of a cron job (`source = 'cron'`, id
    /// starting with `cron_<job_id>_`), newest first, with `last_active`.
    pub fn list_cron_job_runs(
        &self,
        job_id: &str,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<SessionActivity>> {
        self.read(|conn| {
            Ok(rich_listing::list_cron_job_runs(
                conn, job_id, limit, offset,
            )?)
        })
    }

    /// `api.md` §10.4: sessions whose id contains `query` (ASCII
    /// case-insensitive), newest first; archived ones only with
    /// `include_archived` (the original's default is `true`).
    pub fn search_sessions_by_id(
        &self,
        query: &str,
        limit: u32,
        include_archived: bool,
    ) -> Result<Vec<SessionActivity>> {
        self.read(|conn| {
            Ok(rich_listing::search_sessions_by_id(
                conn,
                query,
                limit,
                include_archived,
            )?)
        })
    }

    /// `api.md` §10.4: the distinct non-empty working directories, sorted;
    /// of archived sessions too with `include_archived`.
    pub fn distinct_session_cwds(&self, include_archived: bool) -> Result<Vec<String>> {
        self.read(|conn| Ok(rich_listing::distinct_session_cwds(conn, include_archived)?))
    }

    /// `api.md` §10.4, §11.3: the sessions a prune with this filter would
    /// remove (ended, old enough, matching every filter), oldest first.
    ///
    /// Errors: a non-finite age or time or cost bound is
    /// [`crate::ErrorKind::InvalidInput`].
    pub fn list_prune_candidates(&self, filter: &PruneFilter) -> Result<Vec<SessionActivity>> {
        let filter = self.resolve_prune_filter(filter)?;
        self.read(|conn| Ok(rich_listing::list_prune_candidates(conn, &filter)?))
    }

    /// `api.md` §10.4: archives (`archived = 1`) the sessions
    /// [`SessionDb::list_prune_candidates`] lists for this filter, in one
    /// write transaction, instead of deleting them; returns how many were
    /// not archived before.
    pub fn archive_sessions(&self, filter: &PruneFilter) -> Result<usize> {
        let filter = self.resolve_prune_filter(filter)?;
        self.write("archiving sessions", |conn| {
            let ids: Vec<String> = rich_listing::list_prune_candidates(conn, &filter)?
                .into_iter()
                .map(|row| row.session.id)
                .collect();
            archive(conn, &ids)
        })
    }

    /// `api.md` §10.4, §11.4: archives every session idle for more than
    /// `idle_days` (no message and no start since), pinned ones excepted with
    /// `exclude_pinned` (the original's default), in one write transaction;
    /// returns how many.
    ///
    /// Errors: a non-finite `idle_days` is [`crate::ErrorKind::InvalidInput`].
    pub fn archive_stale_sessions(&self, idle_days: f64, exclude_pinned: bool) -> Result<usize> {
        if !idle_days.is_finite() {
            return Err(Error::InvalidInput(format!(
                "idle_days must be finite, got {idle_days}"
            )));
        }
        let idle_before = self.now() - idle_days * 86_400.0;
        self.write("archiving stale sessions", |conn| {
            let ids = rich_listing::stale_session_ids(conn, idle_before, exclude_pinned)?;
            archive(conn, &ids)
        })
    }

    /// `api.md` §11.6: the number of empty sessions (`message_count = 0`,
    /// ended, not archived).
    pub fn count_empty_sessions(&self) -> Result<i64> {
        self.read(|conn| Ok(rich_listing::count_empty_sessions(conn)?))
    }

    /// The filter with its age bound turned into `started_before` (an
    /// explicit `started_before` wins), bounds checked.
    fn resolve_prune_filter(&self, filter: &PruneFilter) -> Result<SessionFilter> {
        let mut resolved = filter.filter.clone();
        if let Some(days) = filter.older_than_days {
            if !days.is_finite() {
                return Err(Error::InvalidInput(format!(
                    "older_than_days must be finite, got {days}"
                )));
            }
            if resolved.started_before.is_none() {
                resolved.started_before = Some(self.now() - days * 86_400.0);
            }
        }
        if !resolved.is_finite() {
            return Err(Error::InvalidInput(
                "time and cost bounds must be finite".to_owned(),
            ));
        }
        Ok(resolved)
    }
}

/// Sets `archived = 1` on each session that is not archived yet; returns how many.
fn archive(conn: &rusqlite::Connection, ids: &[String]) -> Result<usize> {
    let mut changed = 0;
    for id in ids {
        changed += conn
            .prepare_cached("UPDATE sessions SET archived = 1 WHERE id = ?1 AND archived = 0")
            .and_then(|mut stmt| stmt.execute([id]))
            .context("archiving a session")?;
    }
    Ok(changed)
}
