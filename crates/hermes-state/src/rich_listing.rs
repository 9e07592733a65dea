//! Listing sessions for pickers and cleanups, and archiving them (`api.md`
//! §10, §11.3 filters, §11.4, §11.6). Reads are `hermes_state_query::rich_listing`;
//! the archiving writes go through the write path.

use hermes_state_query::lookups::SessionActivity;
use hermes_state_query::prune::{self, ArchiveSelection, PruneCandidate, PruneSelection};
use hermes_state_query::rich_listing::{self, RichListOptions, RichSession, SessionCwd};

use crate::db::SessionDb;
use crate::error::{Error, Result};
use crate::session_updates::set_lineage_flag_in;

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
    /// starting with `cron_<job_id>_`, case-sensitively), newest first, as
    /// rich rows (`last_active`, `preview`).
    pub fn list_cron_job_runs(
        &self,
        job_id: &str,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<RichSession>> {
        self.read(|conn| {
            Ok(rich_listing::list_cron_job_runs(
                conn, job_id, limit, offset,
            )?)
        })
    }

    /// `api.md` §10.4: the picker's conversations whose id (or the id of a
    /// session of their compression chain) contains `query` (trimmed,
    /// lower-cased), ranked exact id, then prefix, then substring (a
    /// projected chain also by its root's id), at most `limit`; archived
    /// ones only with `include_archived` (the original's default is `true`).
    /// Nothing for an empty query or a zero `limit`.
    pub fn search_sessions_by_id(
        &self,
        query: &str,
        limit: u32,
        include_archived: bool,
    ) -> Result<Vec<RichSession>> {
        self.read(|conn| {
            Ok(rich_listing::search_sessions_by_id(
                conn,
                query,
                limit,
                include_archived,
            )?)
        })
    }

    /// `api.md` §10.4: every working directory that is not empty, with its
    /// number of sessions and its last activity; of archived sessions too
    /// with `include_archived`.
    pub fn distinct_session_cwds(&self, include_archived: bool) -> Result<Vec<SessionCwd>> {
        self.read(|conn| Ok(rich_listing::distinct_session_cwds(conn, include_archived)?))
    }

    /// `api.md` §10.4, §11.3: the sessions this selection picks (ended, old
    /// enough, of the source, matching every filter; by default every ended
    /// session), oldest start first, as the original's candidate rows.
    ///
    /// Errors: a non-finite age or time or cost bound is
    /// [`crate::ErrorKind::InvalidInput`].
    pub fn list_prune_candidates(&self, selection: &PruneSelection) -> Result<Vec<PruneCandidate>> {
        let candidates = checked(selection, self.now())?;
        self.read(|conn| Ok(prune::list_prune_candidates(conn, &candidates)?))
    }

    /// `api.md` §10.4: archives the compression lineage (as
    /// [`SessionDb::set_session_archived`]) of every session this selection
    /// picks (by default every ended session not archived yet), in one
    /// write transaction; returns how many sessions the selection picked.
    /// Nothing is deleted; transcripts stay.
    ///
    /// Errors: as [`SessionDb::list_prune_candidates`].
    pub fn archive_sessions(&self, selection: &ArchiveSelection) -> Result<usize> {
        let candidates = checked(&selection.selection(), self.now())?;
        self.write("archiving sessions", |conn| {
            archive_lineages(conn, &candidates.ids(conn)?)
        })
    }

    /// `api.md` §10.4, §11.4: archives every session idle for `idle_days`
    /// (its newest message, else its start, is older), in one write
    /// transaction, and returns how many. Archived sessions, sessions ended by
    /// `compression` and, with `exclude_pinned` (the original's default),
    /// pinned ones are not candidates; each candidate's whole compression
    /// lineage is archived, as [`SessionDb::set_session_archived`] does. A
    /// negative or NaN `idle_days` archives nothing. The rule
    /// [`SessionDb::maybe_auto_archive`] applies.
    pub fn archive_stale_sessions(&self, idle_days: f64, exclude_pinned: bool) -> Result<usize> {
        let Some(idle_before) = rich_listing::idle_cutoff(self.now(), idle_days) else {
            return Ok(0);
        };
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

/// The candidates of `selection` at `now`, after refusing a non-finite
/// `older_than_days` or float filter as [`crate::ErrorKind::InvalidInput`].
pub(crate) fn checked(selection: &PruneSelection, now: f64) -> Result<prune::PruneCandidates> {
    if let Some((name, value)) = selection.non_finite() {
        return Err(Error::InvalidInput(format!(
            "{name} must be finite, got {value}"
        )));
    }
    Ok(prune::PruneCandidates::of(selection, now))
}

/// Archives the sessions idle since before `idle_before` (the selection of
/// [`rich_listing::stale_session_ids`]) with their compression lineages,
/// inside the caller's transaction; returns how many sessions were selected.
/// The one idle-session rule of `archive_stale_sessions` and
/// `maybe_auto_archive`.
pub(crate) fn archive_stale(
    conn: &rusqlite::Connection,
    idle_before: f64,
    exclude_pinned: bool,
) -> Result<usize> {
    let ids = rich_listing::stale_session_ids(conn, idle_before, exclude_pinned)?;
    archive_lineages(conn, &ids)
}

/// Archives the compression lineage of each session; returns how many
/// sessions were given (the original's count, whatever changed).
fn archive_lineages(conn: &rusqlite::Connection, ids: &[String]) -> Result<usize> {
    for id in ids {
        set_lineage_flag_in(conn, "archiving a session", "archived", id, true)?;
    }
    Ok(ids.len())
}
