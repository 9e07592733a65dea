//! Listings on a file (`api.md` §10): the contract's `Listings` — recent
//! sessions, the rich listing, the look-ups by origin and by gateway peer.

use crate::db::SessionDb;
use crate::error::Result;
use hermes_state_core::store::Listings;
use hermes_state_query::listing;
use hermes_state_query::listing::ListFilter;
use hermes_state_query::listing::SessionListing;
use hermes_state_query::lookups;
use hermes_state_query::lookups::PeerLookup;
use hermes_state_query::lookups::SessionActivity;
use hermes_state_query::rich_listing;
use hermes_state_query::rich_listing::RichListOptions;
use hermes_state_query::rich_listing::RichSession;
use hermes_state_query::rich_listing::SessionCwd;
use hermes_state_types::Session;

impl Listings for SessionDb {
    /// `api.md` §12.2: the newest live gateway session of a chat (and thread,
    /// when given), preferring `user_id`'s; `None` when the chat's live
    /// sessions belong to several users and none is the given one, and for an
    /// empty platform or chat.
    fn find_session_by_origin(
        &self,
        platform: &str,
        chat_id: &str,
        thread_id: Option<&str>,
        user_id: Option<&str>,
    ) -> Result<Option<String>> {
        self.read(|conn| {
            Ok(lookups::find_session_by_origin(
                conn, platform, chat_id, thread_id, user_id,
            )?)
        })
    }

    /// `api.md` §12.2: the newest recoverable session of a gateway peer (live,
    /// or ended by `agent_close` / `ws_orphan_reap`, with messages), by its
    /// session key, else by its whole peer tuple; `None` without a key.
    fn find_latest_gateway_session_for_peer(&self, peer: &PeerLookup) -> Result<Option<Session>> {
        self.read(|conn| Ok(lookups::find_latest_gateway_session_for_peer(conn, peer)?))
    }

    /// `api.md` §12.2: the newest session of each gateway `session_key`, with
    /// `last_active`, most recently active first; of one platform (ASCII
    /// case-insensitive) when given; live ones only with `active_only`.
    fn list_gateway_sessions(
        &self,
        platform: Option<&str>,
        active_only: bool,
    ) -> Result<Vec<SessionActivity>> {
        self.read(|conn| Ok(lookups::list_gateway_sessions(conn, platform, active_only)?))
    }

    /// Recent sessions with preview and last activity, newest first.
    fn recent_sessions(&self, filter: &ListFilter) -> Result<Vec<SessionListing>> {
        self.snapshot_read(|conn| Ok(listing::recent_sessions(conn, filter)?))
    }

    /// `api.md` §10.1: every session (children and archived included) with
    /// `last_active`, most recently active first; of `source` when given
    /// and non-empty.
    fn search_sessions(
        &self,
        source: Option<&str>,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<SessionActivity>> {
        self.read(|conn| Ok(rich_listing::search_sessions(conn, source, limit, offset)?))
    }

    /// `api.md` §10.3: sessions for a picker with `last_active` and a
    /// one-line preview, filtered, ordered and projected onto their
    /// compression tips as [`RichListOptions`] says.
    fn list_sessions_rich(&self, options: &RichListOptions) -> Result<Vec<RichSession>> {
        self.read(|conn| Ok(rich_listing::list_sessions_rich(conn, options)?))
    }

    /// `api.md` §10.4: the runs of a cron job (`source = 'cron'`, id
    /// starting with `cron_<job_id>_`, case-sensitively), newest first, as
    /// rich rows (`last_active`, `preview`).
    fn list_cron_job_runs(
        &self,
        job_id: &str,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<RichSession>> {
        self.read(|conn| {
            Ok(rich_listing::list_cron_job_runs(
                conn, job_id, limit, offset,
            )?)
        })
    }

    /// `api.md` §10.4: the picker's conversations whose id (or the id of a
    /// session of their compression chain) contains `query` (trimmed,
    /// lower-cased), ranked exact id, then prefix, then substring (a
    /// projected chain also by its root's id), at most `limit`; archived
    /// ones only with `include_archived` (the original's default is `true`).
    /// Nothing for an empty query or a zero `limit`.
    fn search_sessions_by_id(
        &self,
        query: &str,
        limit: u32,
        include_archived: bool,
    ) -> Result<Vec<RichSession>> {
        self.read(|conn| {
            Ok(rich_listing::search_sessions_by_id(
                conn,
                query,
                limit,
                include_archived,
            )?)
        })
    }

    /// `api.md` §10.4: every working directory that is not empty, with its
    /// number of sessions and its last activity; of archived sessions too
    /// with `include_archived`.
    fn distinct_session_cwds(&self, include_archived: bool) -> Result<Vec<SessionCwd>> {
        self.read(|conn| Ok(rich_listing::distinct_session_cwds(conn, include_archived)?))
    }
}
