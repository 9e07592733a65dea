//! Listing sessions for pickers and cleanups, and archiving them (`api.md`
//! §10, §11.3 filters, §11.4, §11.6). Reads are `hermes_state_query::rich_listing`;
//! the archiving writes go through the write path.

use hermes_state_query::lookups::SessionActivity;
use hermes_state_query::prune;
use hermes_state_query::rich_listing::{self, RichListOptions, RichSession};

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};
use crate::maintenance::{PruneOptions, checked_candidates};

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

    /// `api.md` §10.4, §11.3: the sessions [`SessionDb::prune_sessions`]
    /// would remove with these options (ended, old enough, of the source,
    /// matching every filter), oldest start first. `dry_run` and
    /// `sessions_dir` play no part: listing never writes.
    ///
    /// Errors: a non-finite age or time or cost bound is
    /// [`crate::ErrorKind::InvalidInput`].
    pub fn list_prune_candidates(&self, options: &PruneOptions) -> Result<Vec<SessionActivity>> {
        let candidates = checked_candidates(options, self.now())?;
        self.read(|conn| Ok(prune::list_prune_candidates(conn, &candidates)?))
    }

    /// `api.md` §10.4: archives (`archived = 1`) the sessions
    /// [`SessionDb::prune_sessions`] would remove with these options, in one
    /// write transaction, instead of deleting them; returns how many were
    /// not archived before. With `dry_run`, returns that number and writes
    /// nothing. `sessions_dir` is not used: archived sessions keep their
    /// transcripts.
    ///
    /// Errors: as [`SessionDb::list_prune_candidates`].
    pub fn archive_sessions(&self, options: &PruneOptions) -> Result<usize> {
        let candidates = checked_candidates(options, self.now())?;
        if options.dry_run {
            return self.read(|conn| {
                Ok(prune::list_prune_candidates(conn, &candidates)?
                    .iter()
                    .filter(|row| row.session.archived == 0)
                    .count())
            });
        }
        self.write("archiving sessions", |conn| {
            archive(conn, &candidates.ids(conn)?)
        })
    }

    /// `api.md` §10.4, §11.4: archives every session idle for more than
    /// `idle_days` (no message and no start since), pinned ones excepted with
    /// `exclude_pinned` (the original's default), in one write transaction;
    /// returns how many. The rule [`SessionDb::maybe_auto_archive`] applies.
    ///
    /// Errors: a non-finite `idle_days` is [`crate::ErrorKind::InvalidInput`].
    pub fn archive_stale_sessions(&self, idle_days: f64, exclude_pinned: bool) -> Result<usize> {
        let idle_before = idle_cutoff(self.now(), idle_days)?;
        self.write("archiving stale sessions", |conn| {
            archive_stale(conn, idle_before, exclude_pinned)
        })
    }

    /// `api.md` §11.6: the number of empty sessions (`message_count = 0`,
    /// ended, not archived).
    pub fn count_empty_sessions(&self) -> Result<i64> {
        self.read(|conn| Ok(rich_listing::count_empty_sessions(conn)?))
    }
}

/// The start of the idle window of `idle_days` at `now`: a session whose
/// last activity is before it is stale (`api.md` §11.4).
///
/// Errors: a non-finite `idle_days` is [`crate::ErrorKind::InvalidInput`].
pub(crate) fn idle_cutoff(now: f64, idle_days: f64) -> Result<f64> {
    if !idle_days.is_finite() {
        return Err(Error::InvalidInput(format!(
            "idle_days must be finite, got {idle_days}"
        )));
    }
    Ok(now - idle_days * 86_400.0)
}

/// Archives the sessions idle since before `idle_before`, not archived yet,
/// unpinned ones only with `exclude_pinned` (`api.md` §11.4), inside the
/// caller's transaction; returns how many. The one idle-session rule of
/// `archive_stale_sessions` and `maybe_auto_archive`.
pub(crate) fn archive_stale(
    conn: &rusqlite::Connection,
    idle_before: f64,
    exclude_pinned: bool,
) -> Result<usize> {
    let ids = rich_listing::stale_session_ids(conn, idle_before, exclude_pinned)?;
    archive(conn, &ids)
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
