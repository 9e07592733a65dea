//! Recent sessions with a preview and their last activity (`api.md` §10):
//! what a listing takes and gives.

use hermes_state_types::Session;
use serde::Serialize;

/// A session as listed: all its columns, then `preview` and `last_active`
/// (the key order of the seed document's query).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionListing {
    /// The session row.
    #[serde(flatten)]
    pub session: Session,
    /// The first 63 characters of the earliest user message with content
    /// (raw, newlines kept); `""` when there is none, or when that message is
    /// multimodal (SQLite's string functions stop at its leading NUL).
    pub preview: String,
    /// The newest message's timestamp, else `started_at`.
    pub last_active: f64,
}

/// Which sessions a listing returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    /// Only sessions of this source (when `Some` and non-empty).
    pub source: Option<String>,
    /// At most this many (default 20).
    pub limit: Option<u32>,
    /// Skip this many.
    pub offset: u32,
}

/// The number of sessions a listing returns when no limit is given.
pub const DEFAULT_LIST_LIMIT: u32 = 20;
