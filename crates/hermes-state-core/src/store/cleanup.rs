//! The `Cleanup` part of the contract: deleting, pruning and archiving
//! sessions, and the automatic runs (`api.md` §11.3–11.6).

use crate::cleanup::{AutoArchiveOptions, AutoArchiveReport, AutoPruneOptions, AutoPruneReport};
use crate::error::Result;
use crate::prune::{ArchiveSelection, PruneCandidate, PruneOptions, PruneReport, PruneSelection};
use std::path::Path;

/// Deleting, pruning and archiving sessions, and the automatic runs (`api.md`
/// §11.3–11.6).
///
/// Every method has the SQLite store's meaning (`api.md`); a backend that
/// cannot offer one says so with an error, never with an empty answer.
pub trait Cleanup {
    /// `api.md` §11.6.
    fn delete_session(&self, session_id: &str) -> Result<bool>;
    /// `api.md` §11.6, removing transcripts from `sessions_dir`.
    fn delete_session_with(&self, session_id: &str, sessions_dir: Option<&Path>) -> Result<bool>;
    /// `api.md` §11.6: how many of the given sessions existed.
    fn delete_sessions(&self, ids: &[&str], sessions_dir: Option<&Path>) -> Result<usize>;
    /// `api.md` §11.6.
    fn delete_session_if_empty(&self, session_id: &str) -> Result<bool>;
    /// `api.md` §11.6, leaving transcript files where they are.
    fn delete_empty_sessions(&self) -> Result<usize> {
        self.delete_empty_sessions_with(None)
    }
    /// `api.md` §11.6, removing the deleted sessions' transcripts from
    /// `sessions_dir` after the commit (as the original's `sessions_dir`).
    fn delete_empty_sessions_with(&self, sessions_dir: Option<&Path>) -> Result<usize>;
    /// `api.md` §11.5.
    fn clear_messages(&self, session_id: &str) -> Result<()>;
    /// `api.md` §11.3.
    fn prune_sessions(&self, options: &PruneOptions) -> Result<PruneReport>;
    /// `api.md` §10.4, §11.3.
    fn list_prune_candidates(&self, selection: &PruneSelection) -> Result<Vec<PruneCandidate>>;
    /// `api.md` §10.4.
    fn archive_sessions(&self, selection: &ArchiveSelection) -> Result<usize>;
    /// `api.md` §10.4, §11.4.
    fn archive_stale_sessions(&self, idle_days: f64, exclude_pinned: bool) -> Result<usize>;
    /// `api.md` §11.6.
    fn count_empty_sessions(&self) -> Result<i64>;
    /// `api.md` §2.5.
    fn prune_empty_ghost_sessions(&self, sessions_dir: Option<&Path>) -> Result<usize>;
    /// `api.md` §11.4 (never fails: errors are reported).
    fn maybe_auto_archive(&self, options: &AutoArchiveOptions) -> AutoArchiveReport;
    /// `api.md` §11.4 (never fails: errors are reported). PostgreSQL never
    /// vacuums (docs/DECISIONS.md): `vacuumed` stays `false` there.
    fn maybe_auto_prune_and_vacuum(&self, options: &AutoPruneOptions) -> AutoPruneReport;
}
