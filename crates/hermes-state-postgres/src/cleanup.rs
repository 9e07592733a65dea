//! Cleanup on PostgreSQL (`api.md` §11.3–11.6): the contract's `Cleanup` —
//! deleting, pruning and archiving sessions and the automatic runs, each a
//! transaction of its own, with the SQLite backend's rules.

use crate::PgStore;
use crate::WriteScope;
use crate::deletes::EMPTY_SESSIONS;
use crate::deletes::IS_EMPTY_SESSION;
use crate::deletes::delete_rows;
use crate::deletes::delete_with_delegates;
use crate::error::Context;
use crate::error::Result;
use crate::prune::candidate_ids;
use crate::prune::checked_candidates;
use crate::rich_listing::LAST_ACTIVE;
use crate::session_updates::archive_lineages;
use crate::sweeps::AutoRun;
use crate::sweeps::GHOST_SESSIONS;
use hermes_state_core::Result as CoreResult;
use hermes_state_core::cleanup::{
    AutoArchiveOptions, AutoArchiveReport, AutoPruneOptions, AutoPruneReport,
};
use hermes_state_core::prune::ArchiveSelection;
use hermes_state_core::prune::PruneCandidate;
use hermes_state_core::prune::PruneOptions;
use hermes_state_core::prune::PruneReport;
use hermes_state_core::prune::PruneSelection;
use hermes_state_core::prune::remove_transcripts;
use hermes_state_core::rich_listing;
use hermes_state_core::session_updates::GHOST_AGE;
use hermes_state_core::store::Cleanup;
use postgres::Transaction;
use std::path::Path;

impl Cleanup for PgStore {
    /// `api.md` §11.6, with the ids as a slice: see the generic inherent
    /// method of the same name.
    fn delete_sessions(&self, ids: &[&str], sessions_dir: Option<&Path>) -> CoreResult<usize> {
        Ok(PgStore::delete_sessions(
            self,
            ids.iter().copied(),
            sessions_dir,
        )?)
    }

    /// `api.md` §11.4 (never fails): the inherent run's outcome as the
    /// original's report; an error becomes the report's `error`.
    fn maybe_auto_archive(&self, options: &AutoArchiveOptions) -> AutoArchiveReport {
        let mut report = AutoArchiveReport::default();
        match PgStore::maybe_auto_archive(
            self,
            options.idle_days,
            options.min_interval_hours,
            options.exclude_pinned,
        ) {
            Ok(AutoRun::Skipped) => report.skipped = true,
            Ok(AutoRun::Ran(archived)) => report.archived = archived,
            Err(error) => {
                let error = hermes_state_core::Error::from(error);
                report.error_kind = Some(error.kind());
                report.error = Some(error.to_string());
            }
        }
        report
    }

    /// `api.md` §11.4, the prune half only: `options.vacuum` is not acted on
    /// and `vacuumed` stays `false` (docs/DECISIONS.md).
    fn maybe_auto_prune_and_vacuum(&self, options: &AutoPruneOptions) -> AutoPruneReport {
        let mut report = AutoPruneReport::default();
        match PgStore::maybe_auto_prune(
            self,
            options.retention_days,
            options.min_interval_hours,
            options.sessions_dir.as_deref(),
        ) {
            Ok(AutoRun::Skipped) => report.skipped = true,
            Ok(AutoRun::Ran(pruned)) => report.pruned = pruned,
            Err(error) => {
                let error = hermes_state_core::Error::from(error);
                report.error_kind = Some(error.kind());
                report.error = Some(error.to_string());
            }
        }
        report
    }

    /// Deletes a session with its messages (`api.md` §11.6), in one write
    /// transaction; `false` for an unknown id. Delegate children (marked
    /// `_delegate_from`) go with it, recursively; every other child is
    /// orphaned. With `sessions_dir`, the transcript files of the session
    /// and of each deleted delegate are removed after the commit.
    fn delete_session_with(
        &self,
        session_id: &str,
        sessions_dir: Option<&Path>,
    ) -> CoreResult<bool> {
        let Some(deleted) = self.write("deleting a session", |tx| {
            delete_with_delegates(tx, session_id)
        })?
        else {
            return Ok(false);
        };
        if let Some(dir) = sessions_dir {
            remove_transcripts(dir, &deleted);
        }
        Ok(true)
    }

    /// Deletes a session only when it is untitled, has no message rows and
    /// no child sessions (`api.md` §11.6); returns whether it was deleted
    /// (`false` for an unknown id).
    fn delete_session_if_empty(&self, session_id: &str) -> CoreResult<bool> {
        Ok(self.write("deleting an empty session", |tx| {
            let empty = tx
                .query_opt(IS_EMPTY_SESSION, &[&session_id])
                .context("checking that a session is empty")?
                .is_some();
            if empty {
                tx.execute("DELETE FROM sessions WHERE id = $1", &[&session_id])
                    .context("deleting an empty session")?;
            }
            Ok(empty)
        })?)
    }

    /// Deletes every empty session (`message_count = 0`, ended, not
    /// archived: what [`PgStore::count_empty_sessions`] counts), orphaning
    /// their children and removing any message rows left uncounted;
    /// then their transcripts leave `sessions_dir`; returns how many.
    fn delete_empty_sessions_with(&self, sessions_dir: Option<&Path>) -> CoreResult<usize> {
        let ids = self.write("deleting empty sessions", |tx| {
            let ids: Vec<String> = tx
                .query(EMPTY_SESSIONS, &[])
                .context("finding empty sessions")?
                .iter()
                .map(|row| row.get(0))
                .collect();
            delete_rows(tx, &ids)?;
            Ok(ids)
        })?;
        if let Some(dir) = sessions_dir {
            remove_transcripts(dir, &ids);
        }
        Ok(ids.len())
    }

    /// Deletes every message of a session (inactive ones too) and zeroes its
    /// message and tool-call counters; token counters, title and times stay.
    /// Unknown ids are ignored.
    fn clear_messages(&self, session_id: &str) -> CoreResult<()> {
        Ok(self.write_in(
            "clearing messages",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute("DELETE FROM messages WHERE session_id = $1", &[&session_id])
                    .context("clearing messages")?;
                tx.execute(
                    "UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = $1",
                    &[&session_id],
                )
                .context("clearing messages")?;
                Ok(())
            },
        )?)
    }

    /// `api.md` §10.4, §11.4: archives every session idle for `idle_days`
    /// with its compression lineage, in one write transaction; returns how
    /// many sessions were selected (the SQLite backend's rule: not archived,
    /// not ended by `compression`, unpinned with `exclude_pinned`; a negative
    /// or NaN `idle_days` archives nothing).
    fn archive_stale_sessions(&self, idle_days: f64, exclude_pinned: bool) -> CoreResult<usize> {
        let Some(idle_before) = rich_listing::idle_cutoff(self.now(), idle_days) else {
            return Ok(0);
        };
        Ok(self.write("archiving stale sessions", |tx| {
            archive_stale(tx, idle_before, exclude_pinned)
        })?)
    }

    /// `api.md` §10.4, §11.3: the sessions this selection picks, oldest
    /// start first, as the original's candidate rows (the SQLite backend's
    /// selection; ties by id).
    ///
    /// Errors: a non-finite age, time or cost bound is
    /// [`PgError::InvalidInput`](crate::PgError::InvalidInput).
    fn list_prune_candidates(&self, selection: &PruneSelection) -> CoreResult<Vec<PruneCandidate>> {
        let conditions = checked_candidates(selection, self.now())?;
        let sql = format!(
            "SELECT s.id, s.source, s.title, s.model, s.started_at, s.ended_at,
                    s.message_count, s.archived
             FROM sessions s{} ORDER BY s.started_at, s.id",
            conditions.where_clause(),
        );
        Ok(self.read(|tx| {
            Ok(tx
                .query(&sql, &conditions.params())
                .context("listing prune candidates")?
                .iter()
                .map(|row| PruneCandidate {
                    id: row.get(0),
                    source: row.get(1),
                    title: row.get(2),
                    model: row.get(3),
                    started_at: row.get(4),
                    ended_at: row.get(5),
                    message_count: row.get(6),
                    archived: row.get(7),
                })
                .collect())
        })?)
    }

    /// `api.md` §10.4: archives the compression lineage of every session
    /// this selection picks, in one write transaction; returns how many
    /// sessions it picked (the SQLite backend's rule).
    ///
    /// Errors: as [`PgStore::list_prune_candidates`].
    fn archive_sessions(&self, selection: &ArchiveSelection) -> CoreResult<usize> {
        let conditions = checked_candidates(&selection.selection(), self.now())?;
        Ok(self.write("archiving sessions", |tx| {
            let ids = candidate_ids(tx, &conditions)?;
            archive_lineages(tx, &ids)
        })?)
    }

    /// Removes old ended sessions with their messages (`api.md` §11.3), as
    /// the SQLite backend: in one write transaction the sessions whose
    /// parent is pruned are orphaned, then the candidates' messages and
    /// rows are deleted (usage rows go with them); with `dry_run` the
    /// candidates are listed and nothing is written. Afterwards the pruned
    /// sessions' transcripts in `sessions_dir` are deleted.
    ///
    /// Errors: a non-finite `older_than_days` or float filter is
    /// [`PgError::InvalidInput`](crate::PgError::InvalidInput).
    fn prune_sessions(&self, options: &PruneOptions) -> CoreResult<PruneReport> {
        let conditions = checked_candidates(&options.selection(), self.now())?;
        let find = |tx: &mut postgres::Transaction<'_>| candidate_ids(tx, &conditions);
        let ids = if options.dry_run {
            self.read(find)?
        } else {
            self.write("pruning sessions", |tx| {
                let ids = find(tx)?;
                delete_rows(tx, &ids)?;
                Ok(ids)
            })?
        };
        if !options.dry_run
            && let Some(dir) = &options.sessions_dir
        {
            remove_transcripts(dir, &ids);
        }
        Ok(PruneReport {
            count: ids.len(),
            ids,
        })
    }

    /// `api.md` §11.6: the number of empty sessions (`message_count = 0`,
    /// ended, not archived).
    fn count_empty_sessions(&self) -> CoreResult<i64> {
        Ok(self.read(|tx| {
            Ok(tx
                .query_one(
                    "SELECT COUNT(*) FROM sessions s \
                     WHERE s.message_count = 0 AND s.ended_at IS NOT NULL AND s.archived = 0",
                    &[],
                )
                .context("counting empty sessions")?
                .get(0))
        })?)
    }

    /// Deletes a session with its messages (`api.md` §11.6): delegate
    /// children (marked `_delegate_from` in their `model_config`) go with
    /// it, recursively; other children are orphaned. `false` for an unknown id.
    fn delete_session(&self, session_id: &str) -> CoreResult<bool> {
        self.delete_session_with(session_id, None)
    }

    /// Deletes the ghost sessions the TUI leaves behind (`api.md` §2.5):
    /// source `tui`, no title, ended, started more than 24 hours ago, no
    /// message; their children are orphaned first. Returns how many. With
    /// `sessions_dir`, their transcript files are removed after the commit.
    fn prune_empty_ghost_sessions(&self, sessions_dir: Option<&Path>) -> CoreResult<usize> {
        let started_before = self.now() - GHOST_AGE;
        let ids = self.write("pruning ghost sessions", |tx| {
            let ids: Vec<String> = tx
                .query(GHOST_SESSIONS, &[&started_before])
                .context("finding ghost sessions")?
                .iter()
                .map(|row| row.get(0))
                .collect();
            delete_rows(tx, &ids)?;
            Ok(ids)
        })?;
        if let Some(dir) = sessions_dir {
            remove_transcripts(dir, &ids);
        }
        Ok(ids.len())
    }
}

/// Archives the sessions idle since before `idle_before` with their
/// compression lineages, inside the caller's transaction; returns how many
/// were selected. The one idle-session rule of `archive_stale_sessions`
/// and `maybe_auto_archive` (`hermes_state_core::rich_listing::stale_session_ids`).
pub(crate) fn archive_stale(
    tx: &mut Transaction<'_>,
    idle_before: f64,
    exclude_pinned: bool,
) -> Result<usize> {
    let sql = format!(
        "SELECT s.id FROM sessions s
         WHERE s.archived = 0 AND COALESCE(s.end_reason, '') <> 'compression'
           AND ($2 OR s.pinned = 0) AND {LAST_ACTIVE} < $1
         ORDER BY s.started_at, s.id"
    );
    let ids: Vec<String> = tx
        .query(&sql, &[&idle_before, &!exclude_pinned])
        .context("finding stale sessions")?
        .iter()
        .map(|row| row.get(0))
        .collect();
    archive_lineages(tx, &ids)
}
