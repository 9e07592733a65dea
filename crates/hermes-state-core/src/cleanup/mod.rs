//! The reports and options of the cleanup operations (`api.md` §11): the
//! automatic prune and archive runs, and `import_sessions` of the
//! original's export shape. Serialised with serde they are the original's
//! dicts, key for key.

mod import_document;
mod import_payload;
mod import_rows;

pub use import_document::original_json_to_jsonl;
use import_payload::Limits;
pub use import_rows::{MESSAGE_COLUMNS, Prepared, Row, SESSION_COLUMNS};

use std::path::PathBuf;

use hermes_state_types::ErrorKind;
use serde::Serialize;

/// The arguments of `maybe_auto_prune_and_vacuum`, with the
/// original's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoPruneOptions {
    /// Prune ended sessions started more than this many days ago (default 90).
    pub retention_days: f64,
    /// Do nothing if the last run is more recent than this (default 24).
    pub min_interval_hours: f64,
    /// `VACUUM` after a prune that removed something (default true).
    pub vacuum: bool,
    /// Transcript folder, as `PruneOptions::sessions_dir`.
    pub sessions_dir: Option<PathBuf>,
}

impl Default for AutoPruneOptions {
    fn default() -> Self {
        AutoPruneOptions {
            retention_days: 90.0,
            min_interval_hours: 24.0,
            vacuum: true,
            sessions_dir: None,
        }
    }
}

/// What `maybe_auto_prune_and_vacuum` did: the original's
/// `{"skipped", "pruned", "vacuumed"}` (+ `"error"`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct AutoPruneReport {
    /// The last run was too recent: nothing was done.
    pub skipped: bool,
    /// Sessions pruned.
    pub pruned: usize,
    /// Whether the store was vacuumed.
    pub vacuumed: bool,
    /// Why the run failed, if it did (nothing is raised).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The kind of that failure, to match on.
    #[serde(skip)]
    pub error_kind: Option<ErrorKind>,
}

/// The arguments of `maybe_auto_archive`, with the original's
/// defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoArchiveOptions {
    /// Archive sessions idle for more than this many days (default 3).
    pub idle_days: f64,
    /// Do nothing if the last run is more recent than this (default 24).
    pub min_interval_hours: f64,
    /// Leave pinned sessions alone (default true).
    pub exclude_pinned: bool,
}

impl Default for AutoArchiveOptions {
    fn default() -> Self {
        AutoArchiveOptions {
            idle_days: 3.0,
            min_interval_hours: 24.0,
            exclude_pinned: true,
        }
    }
}

/// What `maybe_auto_archive` did: the original's
/// `{"skipped", "archived"}` (+ `"error"`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct AutoArchiveReport {
    /// The last run was too recent: nothing was done.
    pub skipped: bool,
    /// Sessions archived.
    pub archived: usize,
    /// Why the run failed, if it did (nothing is raised).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The kind of that failure, to match on.
    #[serde(skip)]
    pub error_kind: Option<ErrorKind>,
}

/// What `import_sessions` did: the original's dict. Serialised
/// with serde it is that dict, key for key: `{"ok", "imported", "skipped",
/// "detached", "imported_ids", "skipped_ids", "errors"}` after a write, and
/// `{"ok": false, "imported": 0, "skipped": 0, "detached": 0, "errors"}`
/// (no id lists) when a session was refused.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionsImportReport {
    /// False when a session was refused; then nothing was written, the
    /// counts are 0 and the id lists absent.
    pub ok: bool,
    /// Sessions written.
    pub imported: usize,
    /// Sessions left out because the store already has their id.
    pub skipped: usize,
    /// Written sessions whose parent is missing (or would close a cycle):
    /// they stay roots, `parent_session_id` NULL.
    pub detached: usize,
    /// The ids written, in payload order (as normalised: `str(id).strip()`);
    /// `None` when a session was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported_ids: Option<Vec<String>>,
    /// The ids skipped, in payload order; `None` when a session was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_ids: Option<Vec<String>>,
    /// Each refused session, in payload order (empty when `ok`).
    pub errors: Vec<RefusedSession>,
}

/// A session `import_sessions` refused: the original's
/// `{"index", "session_id", "error"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RefusedSession {
    /// Its position in the payload, from 0.
    pub index: usize,
    /// Its id as normalised; `None` (no key) when it has none, or is not
    /// an object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The original's text, e.g. `session id is required`,
    /// `duplicate session id`, `title must be a string`,
    /// `messages[2].role must be a non-empty string`.
    pub error: String,
}

impl SessionsImportReport {
    /// The report of a payload with refused sessions.
    pub fn refused(errors: Vec<RefusedSession>) -> SessionsImportReport {
        SessionsImportReport {
            errors,
            ..SessionsImportReport::default()
        }
    }

    /// The report of a written import.
    pub fn written(imported_ids: Vec<String>, skipped_ids: Vec<String>, detached: usize) -> Self {
        SessionsImportReport {
            ok: true,
            imported: imported_ids.len(),
            skipped: skipped_ids.len(),
            detached,
            imported_ids: Some(imported_ids),
            skipped_ids: Some(skipped_ids),
            errors: Vec::new(),
        }
    }
}

/// What `import_sessions` writes for a payload of the original's export
/// shape (`api.md` §11.2), decided alike for every backend.
#[derive(Debug)]
pub enum SessionsImport {
    /// Every session passed the original's checks: their rows, in payload
    /// order, for the backend to write in one transaction.
    Write(Vec<Prepared>),
    /// At least one session was refused: this report, and nothing written.
    Refused(SessionsImportReport),
}

/// The original's first pass over an `import_sessions` payload (its checks
/// and their texts) and the rows the accepted sessions become (its
/// columns and coercions), `now` being the import's clock reading.
///
/// Errors: a payload that is not a list, or of more than 500 sessions,
/// [`crate::Error::InvalidValue`] with the original's text.
pub fn plan_sessions_import(
    sessions: &serde_json::Value,
    now: f64,
) -> crate::Result<SessionsImport> {
    Ok(match import_payload::check(sessions, Limits::PerCall)? {
        import_payload::Checked::Accepted(accepted) => SessionsImport::Write(
            accepted
                .iter()
                .map(|item| import_rows::prepare(item, now))
                .collect(),
        ),
        import_payload::Checked::Refused(errors) => {
            SessionsImport::Refused(SessionsImportReport::refused(errors))
        }
    })
}
