//! Session lineage (`api.md` §9): one session of a chain of
//! `parent_session_id` links, as the lineage reads give it.

use serde::Serialize;

/// One session of a lineage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LineageEntry {
    /// Session id.
    pub id: String,
    /// Its title.
    pub title: Option<String>,
    /// When it started (Unix seconds).
    pub started_at: f64,
    /// Its parent.
    pub parent_session_id: Option<String>,
}
