//! Read operations of the facade: thin calls of `hermes_state_query` on a
//! pooled read connection, each in one read transaction with the schema
//! cookie check ([`SessionDb::snapshot_read`]).

use hermes_state_query::lineage::{self, LineageEntry};
use hermes_state_query::listing::{self, ListFilter, SessionListing};
use hermes_state_query::stats::{self, ModelTotals, TopSession, UsageAttribution};
use hermes_state_query::titles;

use crate::db::SessionDb;
use crate::error::Result;

impl SessionDb {
    /// The session and its ancestors, walking up (session first, root last).
    pub fn ancestors(&self, session_id: &str) -> Result<Vec<LineageEntry>> {
        self.snapshot_read(|conn| Ok(lineage::ancestors(conn, session_id)?))
    }

    /// The session and its descendants, level by level (session first).
    pub fn descendants(&self, session_id: &str) -> Result<Vec<LineageEntry>> {
        self.snapshot_read(|conn| Ok(lineage::descendants(conn, session_id)?))
    }

    /// The root of the session's lineage.
    pub fn lineage_root(&self, session_id: &str) -> Result<String> {
        self.snapshot_read(|conn| Ok(lineage::lineage_root(conn, session_id)?))
    }

    /// Recent sessions with preview and last activity, newest first.
    pub fn recent_sessions(&self, filter: &ListFilter) -> Result<Vec<SessionListing>> {
        self.snapshot_read(|conn| Ok(listing::recent_sessions(conn, filter)?))
    }

    /// Token and cost totals per model, most expensive first.
    pub fn model_totals(&self) -> Result<Vec<ModelTotals>> {
        self.snapshot_read(|conn| Ok(stats::model_totals(conn)?))
    }

    /// The sessions with the most input + output tokens.
    pub fn top_sessions(&self, limit: u32) -> Result<Vec<TopSession>> {
        self.snapshot_read(|conn| Ok(stats::top_sessions(conn, limit)?))
    }

    /// Usage per model and task (`session_model_usage`).
    pub fn usage_by_model_and_task(&self) -> Result<Vec<UsageAttribution>> {
        self.snapshot_read(|conn| Ok(stats::usage_by_model_and_task(conn)?))
    }

    /// The title of a session.
    pub fn get_session_title(&self, session_id: &str) -> Result<Option<String>> {
        self.snapshot_read(|conn| Ok(titles::get_session_title(conn, session_id)?))
    }

    /// The session a title names: its newest numbered continuation, else its exact holder.
    pub fn resolve_session_by_title(&self, title: &str) -> Result<Option<String>> {
        self.snapshot_read(|conn| Ok(titles::resolve_session_by_title(conn, title)?))
    }

    /// The next title of a lineage: `X` → `X #2` → `X #3`.
    pub fn get_next_title_in_lineage(&self, base_title: &str) -> Result<String> {
        self.snapshot_read(|conn| Ok(titles::get_next_title_in_lineage(conn, base_title)?))
    }

    /// A `state_meta` value.
    pub fn get_meta(&self, key: &str) -> Result<Option<String>> {
        self.snapshot_read(|conn| Ok(hermes_state_query::get_meta(conn, key)?))
    }
}
