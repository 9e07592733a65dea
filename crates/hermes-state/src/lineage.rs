//! Compression lineage on a file (`api.md` §9): the contract's `Lineage`,
//! answered by the query crate's recursive reads (which stop on cycles).

use crate::db::SessionDb;
use crate::error::Result;
use hermes_state_core::store::Lineage;
use hermes_state_query::lineage;
use hermes_state_query::lineage::LineageEntry;
use hermes_state_query::lookups;

impl Lineage for SessionDb {
    /// `api.md` §9.2: the session to resume for `session_id`: its compression
    /// tip, then down the newest non-branch, non-delegate, non-tool children
    /// (at most 32 steps); the deepest of them with messages, else
    /// `session_id` itself (an unknown id included).
    fn resolve_resume_session_id(&self, session_id: &str) -> Result<String> {
        self.read(|conn| Ok(lookups::resolve_resume_session_id(conn, session_id)?))
    }

    /// `api.md` §9.2: the newest continuation of a compressed conversation,
    /// following the best child of each compression-ended session; the id
    /// itself when there is none (an unknown id included).
    fn get_compression_tip(&self, session_id: &str) -> Result<String> {
        self.read(|conn| Ok(lookups::get_compression_tip(conn, session_id)?))
    }

    /// `api.md` §9.2: the compression chain through `session_id`, root
    /// first, following the earliest non-branch child of each
    /// compression-ended session; `[session_id]` outside any chain.
    fn get_compression_lineage(&self, session_id: &str) -> Result<Vec<String>> {
        self.read(|conn| Ok(lookups::get_compression_lineage(conn, session_id)?))
    }

    /// `api.md` §9.2: the first session of the lineage root-to-tip (parent
    /// links walked up, at most 100 steps, stopping at a missing row or a
    /// repeat); the id itself for a root or an unknown id.
    fn get_conversation_root(&self, session_id: &str) -> Result<String> {
        self.read(|conn| Ok(lookups::get_conversation_root(conn, session_id)?))
    }

    /// The session and its ancestors, walking up (session first, root last).
    fn ancestors(&self, session_id: &str) -> Result<Vec<LineageEntry>> {
        self.snapshot_read(|conn| Ok(lineage::ancestors(conn, session_id)?))
    }

    /// The session and its descendants, level by level (session first).
    fn descendants(&self, session_id: &str) -> Result<Vec<LineageEntry>> {
        self.snapshot_read(|conn| Ok(lineage::descendants(conn, session_id)?))
    }

    /// The root of the session's lineage.
    fn lineage_root(&self, session_id: &str) -> Result<String> {
        self.snapshot_read(|conn| Ok(lineage::lineage_root(conn, session_id)?))
    }
}
