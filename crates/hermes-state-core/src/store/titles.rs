//! The `Titles` part of the contract: unique session titles and their lineage
//! numbering (`api.md` §6).

use crate::error::Result;
use hermes_state_types::Session;

/// Unique session titles and their lineage numbering (`api.md` §6).
///
/// Every method has the SQLite store's meaning (`api.md`); a backend that
/// cannot offer one says so with an error, never with an empty answer.
pub trait Titles {
    /// `api.md` §6.2.
    fn set_session_title(&self, session_id: &str, title: Option<&str>) -> Result<bool>;
    /// `api.md` §6.
    fn get_session_title(&self, session_id: &str) -> Result<Option<String>>;
    /// `api.md` §6.3.
    fn resolve_session_by_title(&self, title: &str) -> Result<Option<String>>;
    /// `api.md` §6.4.
    fn get_next_title_in_lineage(&self, base_title: &str) -> Result<String>;
    /// `api.md` §6.2.
    fn get_session_by_title(&self, title: &str) -> Result<Option<Session>>;
    /// `api.md` §6.2.
    fn set_auto_title_if_empty(&self, session_id: &str, title: &str) -> Result<bool>;
}
