//! Cleanup beyond `prune_sessions`: batch and conditional deletes, the
//! automatic prune and archive runs, the import of the original's export
//! shape and the Telegram topic opt-in (`api.md` §11.2–11.6, §12.4).

mod auto;
pub(crate) mod import;

pub use auto::{AutoArchiveOptions, AutoArchiveReport, AutoPruneOptions, AutoPruneReport};
pub use import::{RefusedSession, SessionsImportReport};

use std::path::Path;

use rusqlite::Connection;

use crate::cleanup::auto::LAST_AUTO_ARCHIVE;
use crate::cleanup::auto::LAST_AUTO_PRUNE;
use crate::db::SessionDb;
use crate::error::{Result, WriteContext};
use crate::maintenance::PruneOptions;
use crate::maintenance::remove_transcripts;
use crate::messages::collect_delegates;
use crate::rich_listing::archive_lineages;
use crate::rich_listing::archive_stale;
use crate::rich_listing::checked;
use crate::session_updates::GHOST_SESSIONS;
use hermes_state_core::session_updates::GHOST_AGE;
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Coordination;
use hermes_state_query::prune;
use hermes_state_query::prune::ArchiveSelection;
use hermes_state_query::prune::PruneCandidate;
use hermes_state_query::prune::PruneReport;
use hermes_state_query::prune::PruneSelection;
use hermes_state_query::rich_listing;
use hermes_state_query::rich_listing::idle_cutoff;
use hermes_state_types::pyjson;

/// A session that can go without losing anything: untitled, no message rows,
/// no child sessions.
const IS_EMPTY_SESSION: &str = "SELECT 1 FROM sessions s
WHERE s.id = ?1
  AND (s.title IS NULL OR s.title = '')
  AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
  AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = s.id)";

impl SessionDb {
    /// Deletes several sessions as [`SessionDb::delete_session`] does, in one
    /// write transaction (`api.md` §11.6): each session's delegate children
    /// go with it, its other children are orphaned. Empty ids are ignored,
    /// unknown ids skipped; returns how many of the given sessions existed.
    ///
    /// With `sessions_dir`, the transcript files (`<id>.json`, `<id>.jsonl`,
    /// `request_dump_<id>_*.json`) of every deleted session, delegates
    /// included, are removed after the commit (errors ignored).
    pub fn delete_sessions<I, S>(&self, ids: I, sessions_dir: Option<&Path>) -> Result<usize>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let ids: Vec<String> = ids
            .into_iter()
            .map(|id| id.as_ref().to_owned())
            .filter(|id| !id.is_empty())
            .collect();
        let (count, deleted) = self.write("deleting sessions", |conn| {
            let mut count = 0;
            let mut deleted = Vec::new();
            for id in &ids {
                if let Some(gone) = delete_with_delegates(conn, id)? {
                    count += 1;
                    deleted.extend(gone);
                }
            }
            Ok((count, deleted))
        })?;
        if let Some(dir) = sessions_dir {
            remove_transcripts(dir, &deleted);
        }
        Ok(count)
    }
}

/// Deletes one session with its delegate descendants, orphaning every other
/// child, inside the caller's transaction; the ids deleted (the session
/// last), or `None` for an unknown id.
fn delete_with_delegates(conn: &Connection, session_id: &str) -> Result<Option<Vec<String>>> {
    if !hermes_state_query::session_exists(conn, session_id)? {
        return Ok(None);
    }
    let mut ids = collect_delegates(conn, session_id)?;
    ids.push(session_id.to_owned());
    for id in &ids {
        delete_row(conn, id)?;
    }
    Ok(Some(ids))
}

/// Orphans the session's children, deletes its messages and its row (usage
/// rows cascade, FTS entries follow through the triggers), inside the
/// caller's transaction: every delete of a session (single, batch, empty,
/// prune) ends here.
pub(crate) fn delete_row(conn: &Connection, id: &str) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?1",
    )
    .and_then(|mut stmt| stmt.execute([id]))
    .context("orphaning children")?;
    conn.prepare_cached("DELETE FROM messages WHERE session_id = ?1")
        .and_then(|mut stmt| stmt.execute([id]))
        .context("deleting messages")?;
    conn.prepare_cached("DELETE FROM sessions WHERE id = ?1")
        .and_then(|mut stmt| stmt.execute([id]))
        .context("deleting a session")?;
    Ok(())
}

impl Cleanup for SessionDb {
    /// `api.md` §11.6, with the ids as a slice: see the generic inherent
    /// method of the same name.
    fn delete_sessions(&self, ids: &[&str], sessions_dir: Option<&Path>) -> Result<usize> {
        SessionDb::delete_sessions(self, ids.iter().copied(), sessions_dir)
    }

    /// Prunes old ended sessions and gives the space back, at most once per
    /// `min_interval_hours` (`api.md` §11.4).
    ///
    /// Skipped when `state_meta.last_auto_prune` is a number less than the
    /// interval old (an unparsable value counts as "never ran"). Otherwise
    /// prunes as [`SessionDb::prune_sessions`] with `retention_days`, runs
    /// [`SessionDb::vacuum`] only if something was pruned (and `vacuum` is
    /// set), then stores the handle's clock time as `last_auto_prune`
    /// (shortest round-trip float text). Never fails: an error (a read-only
    /// handle included) is reported in `error` and `error_kind`, and the time
    /// is then not stored.
    fn maybe_auto_prune_and_vacuum(&self, options: &AutoPruneOptions) -> AutoPruneReport {
        let mut report = AutoPruneReport::default();
        let mut run = || -> Result<()> {
            if self.ran_recently(LAST_AUTO_PRUNE, options.min_interval_hours)? {
                report.skipped = true;
                return Ok(());
            }
            report.pruned = self
                .prune_sessions(&PruneOptions {
                    older_than_days: Some(options.retention_days),
                    sessions_dir: options.sessions_dir.clone(),
                    ..PruneOptions::default()
                })?
                .count;
            if report.pruned > 0 && options.vacuum {
                self.vacuum()?;
                report.vacuumed = true;
            }
            self.set_meta(LAST_AUTO_PRUNE, &pyjson::float_repr(self.now()))
        };
        if let Err(error) = run() {
            report.error_kind = Some(error.kind());
            report.error = Some(error.to_string());
        }
        report
    }

    /// Archives sessions idle for `idle_days`, at most once per
    /// `min_interval_hours` (`api.md` §11.4), the pattern of
    /// [`SessionDb::maybe_auto_prune_and_vacuum`] with `last_auto_archive`.
    ///
    /// Archives as [`SessionDb::archive_stale_sessions`] (the same rule and
    /// count: candidates idle by the handle's clock, not archived, not ended
    /// by `compression`, unpinned with `exclude_pinned`; each with its
    /// compression lineage); the archive and the new `last_auto_archive` are
    /// written in one transaction, also when nothing was archived. Never
    /// fails: an error is reported in `error` and `error_kind`.
    fn maybe_auto_archive(&self, options: &AutoArchiveOptions) -> AutoArchiveReport {
        let mut report = AutoArchiveReport::default();
        let mut run = || -> Result<()> {
            if self.ran_recently(LAST_AUTO_ARCHIVE, options.min_interval_hours)? {
                report.skipped = true;
                return Ok(());
            }
            let now = self.now();
            let idle_before = idle_cutoff(now, options.idle_days);
            let stamp = pyjson::float_repr(now);
            report.archived = self.write("archiving stale sessions", |conn| {
                let archived = match idle_before {
                    Some(before) => archive_stale(conn, before, options.exclude_pinned)?,
                    None => 0,
                };
                conn.execute(
                    hermes_state_schema::ddl::UPSERT_META,
                    [LAST_AUTO_ARCHIVE, stamp.as_str()],
                )
                .context("writing state_meta")?;
                Ok(archived)
            })?;
            Ok(())
        };
        if let Err(error) = run() {
            report.error_kind = Some(error.kind());
            report.error = Some(error.to_string());
        }
        report
    }

    /// Deletes a session with its messages (`api.md` §11.6); returns `false`
    /// for an unknown id. [`SessionDb::delete_session_with`] without a
    /// transcript folder.
    fn delete_session(&self, session_id: &str) -> Result<bool> {
        self.delete_session_with(session_id, None)
    }

    /// Deletes a session with its messages (`api.md` §11.6
    /// `delete_session(session_id, sessions_dir)`), in one write
    /// transaction; returns `false` for an unknown id.
    ///
    /// Delegate (subagent) children, marked `$._delegate_from`, are deleted
    /// with it, recursively; every other child (branches, compression
    /// continuations) is kept and orphaned (`parent_session_id = NULL`).
    /// Usage rows go with their session. With `sessions_dir`, the transcript
    /// files of the session and of each deleted delegate are removed after
    /// the commit, as [`SessionDb::delete_sessions`] does.
    fn delete_session_with(&self, session_id: &str, sessions_dir: Option<&Path>) -> Result<bool> {
        let deleted = self.write("deleting a session", |conn| {
            delete_with_delegates(conn, session_id)
        })?;
        let Some(deleted) = deleted else {
            return Ok(false);
        };
        if let Some(dir) = sessions_dir {
            remove_transcripts(dir, &deleted);
        }
        Ok(true)
    }

    /// Deletes a session only when it is untitled, has no message rows and
    /// no child sessions (`api.md` §11.6); returns whether it was deleted
    /// (`false` for an unknown id). One write transaction.
    fn delete_session_if_empty(&self, session_id: &str) -> Result<bool> {
        self.write("deleting an empty session", |conn| {
            let empty = conn
                .prepare_cached(IS_EMPTY_SESSION)
                .and_then(|mut stmt| stmt.exists([session_id]))
                .context("checking that a session is empty")?;
            if empty {
                conn.execute("DELETE FROM sessions WHERE id = ?1", [session_id])
                    .context("deleting an empty session")?;
            }
            Ok(empty)
        })
    }

    /// Deletes every empty session (`api.md` §11.6: `message_count = 0`,
    /// ended, not archived; the sessions [`SessionDb::count_empty_sessions`]
    /// counts), orphaning their children (`parent_session_id =
    /// NULL`, never deleted) and removing any message rows left uncounted.
    /// One write transaction; then their transcripts leave `sessions_dir`.
    /// Returns how many sessions were deleted.
    fn delete_empty_sessions_with(&self, sessions_dir: Option<&Path>) -> Result<usize> {
        let ids = self.write("deleting empty sessions", |conn| {
            let ids = hermes_state_query::rich_listing::empty_session_ids(conn)?;
            for id in &ids {
                delete_row(conn, id)?;
            }
            Ok(ids)
        })?;
        if let Some(dir) = sessions_dir {
            remove_transcripts(dir, &ids);
        }
        Ok(ids.len())
    }

    /// Removes old ended sessions with their messages (`api.md` §11.3).
    ///
    /// Only **ended** sessions are candidates. In one write transaction,
    /// every session whose parent is a candidate is orphaned
    /// (`parent_session_id = NULL`; children are never deleted by a prune,
    /// delegate children included, unless they are candidates themselves);
    /// then each candidate's messages and row are deleted. Usage rows go with
    /// their session and the FTS indexes follow through the triggers. With
    /// `dry_run` the candidates are listed and nothing is written.
    ///
    /// Errors: a non-finite `older_than_days` or float filter is
    /// [`crate::ErrorKind::InvalidInput`].
    fn prune_sessions(&self, options: &PruneOptions) -> Result<PruneReport> {
        let candidates = checked(&options.selection(), self.now())?;
        let ids = if options.dry_run {
            self.read(|conn| Ok(candidates.ids(conn)?))?
        } else {
            self.write("pruning sessions", |conn| {
                let ids = candidates.ids(conn)?;
                for id in &ids {
                    delete_row(conn, id)?;
                }
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

    /// Deletes every message of a session (inactive ones too) and zeroes its
    /// message and tool-call counters; token counters, title and times stay.
    /// Unknown ids are ignored.
    fn clear_messages(&self, session_id: &str) -> Result<()> {
        self.write("clearing messages", |conn| {
            conn.execute("DELETE FROM messages WHERE session_id = ?1", [session_id])
                .context("clearing messages")?;
            conn.execute(
                "UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = ?1",
                [session_id],
            )
            .context("clearing messages")?;
            Ok(())
        })
    }

    /// `api.md` §10.4, §11.3: the sessions this selection picks (ended, old
    /// enough, of the source, matching every filter; by default every ended
    /// session), oldest start first, as the original's candidate rows.
    ///
    /// Errors: a non-finite age or time or cost bound is
    /// [`crate::ErrorKind::InvalidInput`].
    fn list_prune_candidates(&self, selection: &PruneSelection) -> Result<Vec<PruneCandidate>> {
        let candidates = checked(selection, self.now())?;
        self.read(|conn| Ok(prune::list_prune_candidates(conn, &candidates)?))
    }

    /// `api.md` §10.4: archives the compression lineage (as
    /// [`SessionDb::set_session_archived`](hermes_state_core::store::Sessions::set_session_archived)) of every session this selection
    /// picks (by default every ended session not archived yet), in one
    /// write transaction; returns how many sessions the selection picked.
    /// Nothing is deleted; transcripts stay.
    ///
    /// Errors: as [`SessionDb::list_prune_candidates`].
    fn archive_sessions(&self, selection: &ArchiveSelection) -> Result<usize> {
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
    /// lineage is archived, as [`SessionDb::set_session_archived`](hermes_state_core::store::Sessions::set_session_archived) does. A
    /// negative or NaN `idle_days` archives nothing. The rule
    /// [`SessionDb::maybe_auto_archive`] applies.
    fn archive_stale_sessions(&self, idle_days: f64, exclude_pinned: bool) -> Result<usize> {
        let Some(idle_before) = rich_listing::idle_cutoff(self.now(), idle_days) else {
            return Ok(0);
        };
        self.write("archiving stale sessions", |conn| {
            archive_stale(conn, idle_before, exclude_pinned)
        })
    }

    /// `api.md` §11.6: the number of empty sessions (`message_count = 0`,
    /// ended, not archived).
    fn count_empty_sessions(&self) -> Result<i64> {
        self.read(|conn| Ok(rich_listing::count_empty_sessions(conn)?))
    }

    /// Deletes the ghost sessions the TUI leaves behind (`api.md` §2.5):
    /// source `tui`, no title, ended, started more than 24 hours ago, and no
    /// message. Returns how many. With `sessions_dir`, their transcript files
    /// are then removed as for a prune (`api.md` §11.3; errors ignored).
    ///
    /// A ghost that is some session's parent (which the original would fail
    /// on with a foreign-key error) has its children orphaned first
    /// (`parent_session_id = NULL`), as every other deletion does.
    fn prune_empty_ghost_sessions(&self, sessions_dir: Option<&Path>) -> Result<usize> {
        let ids = self.write("pruning ghost sessions", |conn| {
            let ids: Vec<String> = conn
                .prepare_cached(GHOST_SESSIONS)
                .and_then(|mut stmt| {
                    stmt.query_map([self.now() - GHOST_AGE], |row| row.get(0))?
                        .collect()
                })
                .context("finding ghost sessions")?;
            for id in &ids {
                conn.prepare_cached(
                    "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?1",
                )
                .and_then(|mut stmt| stmt.execute([id]))
                .context("orphaning children of ghost sessions")?;
            }
            for id in &ids {
                conn.prepare_cached("DELETE FROM sessions WHERE id = ?1")
                    .and_then(|mut stmt| stmt.execute([id]))
                    .context("deleting ghost sessions")?;
            }
            Ok(ids)
        })?;
        if let Some(dir) = sessions_dir {
            remove_transcripts(dir, &ids);
        }
        Ok(ids.len())
    }
}
