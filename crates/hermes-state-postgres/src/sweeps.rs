//! The end-of-life sweeps (`api.md` §2.5, §11.4) with the SQLite backend's
//! rules: promoting an end to a session reset, finalizing compressions that
//! died half way, deleting the TUI's ghost sessions, and the automatic
//! archive and prune runs.
//!
//! The automatic runs differ from SQLite in one way a caller can rely on:
//! the "ran recently" check, the work and the new time stamp are one write
//! transaction under the store's writer lock, so hosts sharing a store run
//! each at most once per interval between them. The prune never vacuums
//! (docs/DECISIONS.md, "PostgreSQL backend").

use std::path::Path;

use hermes_state_core::prune::{PruneOptions, remove_transcripts};
use hermes_state_core::rich_listing::idle_cutoff;
use hermes_state_types::pyjson;
use hermes_state_types::pyvalue::float_from_text;
use postgres::Transaction;

use crate::PgStore;
use crate::cleanup::archive_stale;
use crate::deletes::delete_rows;
use crate::error::{Context, PgError, Result};
use crate::prune::{candidate_ids, checked_candidates};

/// `state_meta` key of the last automatic prune (`schema-v23.md` §8).
pub const LAST_AUTO_PRUNE: &str = "last_auto_prune";
/// `state_meta` key of the last automatic archive run.
pub const LAST_AUTO_ARCHIVE: &str = "last_auto_archive";

pub(crate) const PROMOTE_TO_RESET: &str = "UPDATE sessions SET ended_at = $1, end_reason = $2
WHERE id = $3 AND (ended_at IS NULL OR end_reason IN ('agent_close', 'ws_orphan_reap'))";

/// Compression continuations that never made an API call, still live a week
/// after they started, whose parent was ended by compression, and that hold
/// messages.
pub(crate) const FINALIZE_ORPHANED_COMPRESSIONS: &str = "UPDATE sessions s
SET ended_at = $1, end_reason = 'orphaned_compression'
WHERE s.api_call_count = 0
  AND s.ended_at IS NULL
  AND s.started_at < $2
  AND EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id AND p.end_reason = 'compression')
  AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)";

/// Ended, untitled TUI sessions older than a day that never got a message.
pub(crate) const GHOST_SESSIONS: &str = "SELECT s.id FROM sessions s
WHERE s.source = 'tui'
  AND s.title IS NULL
  AND s.ended_at IS NOT NULL
  AND s.started_at < $1
  AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
ORDER BY s.started_at, s.id";

const UPSERT_META: &str = "INSERT INTO state_meta (key, value) VALUES ($1, $2)
ON CONFLICT (key) DO UPDATE SET value = excluded.value";

/// What an automatic maintenance run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoRun {
    /// The last run is more recent than the interval: nothing was done.
    Skipped,
    /// The run happened and touched this many sessions.
    Ran(usize),
}

impl PgStore {
    /// Archives sessions idle for `idle_days`, at most once per
    /// `min_interval_hours` (`api.md` §11.4): skipped while
    /// `state_meta.last_auto_archive` says the last run is less than the
    /// interval old (read as the original reads it, see `ran_recently`);
    /// otherwise archives as [`PgStore::archive_stale_sessions`](hermes_state_core::store::Cleanup::archive_stale_sessions) (a negative
    /// or NaN `idle_days` archives nothing) and stores now as
    /// `last_auto_archive` (shortest round-trip float text), all in one
    /// write transaction.
    ///
    /// Errors: a run that is due on a read-only handle is
    /// [`PgError::ReadOnly`]. The facade's `maybe_auto_archive` turns errors
    /// into a report, as on SQLite.
    pub fn maybe_auto_archive(
        &self,
        idle_days: f64,
        min_interval_hours: f64,
        exclude_pinned: bool,
    ) -> Result<AutoRun> {
        let now = self.now();
        if self.check_auto_run(LAST_AUTO_ARCHIVE, min_interval_hours, now)? {
            return Ok(AutoRun::Skipped);
        }
        let stamp = pyjson::float_repr(now);
        let idle_before = idle_cutoff(now, idle_days);
        self.write("archiving stale sessions", |tx| {
            if ran_recently(tx, LAST_AUTO_ARCHIVE, min_interval_hours, now)? {
                return Ok(AutoRun::Skipped);
            }
            let archived = match idle_before {
                Some(before) => archive_stale(tx, before, exclude_pinned)?,
                None => 0,
            };
            tx.execute(UPSERT_META, &[&LAST_AUTO_ARCHIVE, &stamp])
                .context("writing state_meta")?;
            Ok(AutoRun::Ran(archived))
        })
    }

    /// Prunes ended sessions started more than `retention_days` ago, at most
    /// once per `min_interval_hours` (`api.md` §11.4), the pattern of
    /// [`PgStore::maybe_auto_archive`] with `last_auto_prune`: the prune is
    /// [`PgStore::prune_sessions`](hermes_state_core::store::Cleanup::prune_sessions)'s, in the same transaction as the check
    /// and the new time stamp; with `sessions_dir`, the pruned sessions'
    /// transcripts are removed after the commit. There is no VACUUM here:
    /// the server's autovacuum gives the space back.
    ///
    /// Errors: as [`PgStore::maybe_auto_archive`], for `retention_days`.
    pub fn maybe_auto_prune(
        &self,
        retention_days: f64,
        min_interval_hours: f64,
        sessions_dir: Option<&Path>,
    ) -> Result<AutoRun> {
        let now = self.now();
        if self.check_auto_run(LAST_AUTO_PRUNE, min_interval_hours, now)? {
            return Ok(AutoRun::Skipped);
        }
        let stamp = pyjson::float_repr(now);
        let options = PruneOptions {
            older_than_days: Some(retention_days),
            ..PruneOptions::default()
        };
        let pruned = self.write("pruning sessions", |tx| {
            if ran_recently(tx, LAST_AUTO_PRUNE, min_interval_hours, now)? {
                return Ok(None);
            }
            let conditions = checked_candidates(&options.selection(), now)?;
            let ids = candidate_ids(tx, &conditions)?;
            delete_rows(tx, &ids)?;
            tx.execute(UPSERT_META, &[&LAST_AUTO_PRUNE, &stamp])
                .context("writing state_meta")?;
            Ok(Some(ids))
        })?;
        let Some(ids) = pruned else {
            return Ok(AutoRun::Skipped);
        };
        if let Some(dir) = sessions_dir {
            remove_transcripts(dir, &ids);
        }
        Ok(AutoRun::Ran(ids.len()))
    }

    /// On a read-only handle, what SQLite answers before writing: whether
    /// the run is skipped (the stamp is recent), else [`PgError::ReadOnly`].
    /// A writable handle checks the stamp in its write transaction
    /// (`false` here).
    fn check_auto_run(&self, key: &str, interval_hours: f64, now: f64) -> Result<bool> {
        if !self.is_read_only() {
            return Ok(false);
        }
        if self.read(|tx| ran_recently(tx, key, interval_hours, now))? {
            return Ok(true);
        }
        Err(PgError::ReadOnly(format!("automatic maintenance ({key})")))
    }
}

/// Whether the `state_meta` time stamp `key` says the last run is less than
/// `interval_hours` old at `now`, as the original reads it: a non-empty
/// value Python's `float()` parses, compared with IEEE arithmetic (an
/// infinite stamp is always recent, a NaN one or a NaN interval never).
fn ran_recently(
    tx: &mut Transaction<'_>,
    key: &str,
    interval_hours: f64,
    now: f64,
) -> Result<bool> {
    let last = tx
        .query_opt("SELECT value FROM state_meta WHERE key = $1", &[&key])
        .context("reading state_meta")?
        .and_then(|row| row.get::<_, Option<String>>(0))
        .filter(|text| !text.is_empty())
        .and_then(|text| float_from_text(&text));
    Ok(last.is_some_and(|last| now - last < interval_hours * 3600.0))
}
