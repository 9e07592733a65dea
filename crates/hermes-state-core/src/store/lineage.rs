//! The `Lineage` part of the contract: compression lineage: ancestors,
//! descendants, roots and tips (`api.md` §9).

use crate::error::Result;
use crate::lineage::LineageEntry;

/// Compression lineage: ancestors, descendants, roots and tips (`api.md` §9).
///
/// Every method has the SQLite store's meaning (`api.md`); a backend that
/// cannot offer one says so with an error, never with an empty answer.
pub trait Lineage {
    /// `api.md` §9.2: the session, then its ancestors up to the root.
    fn ancestors(&self, session_id: &str) -> Result<Vec<LineageEntry>>;
    /// `api.md` §9.2: the session, then its descendants level by level.
    fn descendants(&self, session_id: &str) -> Result<Vec<LineageEntry>>;
    /// `api.md` §9.2.
    fn lineage_root(&self, session_id: &str) -> Result<String>;
    /// `api.md` §9.2.
    fn get_compression_tip(&self, session_id: &str) -> Result<String>;
    /// `api.md` §9.2.
    fn get_conversation_root(&self, session_id: &str) -> Result<String>;
    /// `api.md` §9.2.
    fn get_compression_lineage(&self, session_id: &str) -> Result<Vec<String>>;
    /// `api.md` §9.2.
    fn resolve_resume_session_id(&self, session_id: &str) -> Result<String>;
}
