//! The `Listings` part of the contract: recent sessions, rich listings and the
//! look-ups by origin and peer (`api.md` §10).

use crate::error::Result;
use crate::listing::{ListFilter, SessionListing};
use crate::lookups::{PeerLookup, SessionActivity};
use crate::rich_listing::{RichListOptions, RichSession, SessionCwd};
use hermes_state_types::Session;

/// Recent sessions, rich listings and the look-ups by origin and peer (`api.md`
/// §10).
///
/// Every method has the SQLite store's meaning (`api.md`); a backend that
/// cannot offer one says so with an error, never with an empty answer.
pub trait Listings {
    /// `api.md` §10.2.
    fn recent_sessions(&self, filter: &ListFilter) -> Result<Vec<SessionListing>>;
    /// `api.md` §10.3.
    fn list_sessions_rich(&self, options: &RichListOptions) -> Result<Vec<RichSession>>;
    /// `api.md` §10.1.
    fn search_sessions(
        &self,
        source: Option<&str>,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<SessionActivity>>;
    /// `api.md` §10.4.
    fn distinct_session_cwds(&self, include_archived: bool) -> Result<Vec<SessionCwd>>;
    /// `api.md` §10.4.
    fn search_sessions_by_id(
        &self,
        query: &str,
        limit: u32,
        include_archived: bool,
    ) -> Result<Vec<RichSession>>;
    /// `api.md` §10.4: the runs of a cron job, newest first.
    fn list_cron_job_runs(&self, job_id: &str, limit: u32, offset: u32)
    -> Result<Vec<RichSession>>;
    /// `api.md` §12.2.
    fn find_session_by_origin(
        &self,
        platform: &str,
        chat_id: &str,
        thread_id: Option<&str>,
        user_id: Option<&str>,
    ) -> Result<Option<String>>;
    /// `api.md` §12.2.
    fn find_latest_gateway_session_for_peer(&self, peer: &PeerLookup) -> Result<Option<Session>>;
    /// `api.md` §12.2.
    fn list_gateway_sessions(
        &self,
        platform: Option<&str>,
        active_only: bool,
    ) -> Result<Vec<SessionActivity>>;
}
