//! Finding sessions: by title, by id prefix, along compression lineages and
//! by gateway peer (`api.md` §2.4, §6.2, §9.2, §12.2). Thin calls of
//! `hermes_state_query::lookups` under the handle's mutex.

use hermes_state_query::lookups::{self, PeerLookup, SessionActivity};
use hermes_state_types::Session;

use crate::db::SessionDb;
use crate::error::Result;

impl SessionDb {
    /// `api.md` §6.2: the session holding exactly this title
    /// (case-sensitive), or `None`.
    pub fn get_session_by_title(&self, title: &str) -> Result<Option<Session>> {
        self.read(|conn| Ok(lookups::get_session_by_title(conn, title)?))
    }

    /// `api.md` §2.4: the full id for an id or a unique id prefix: the
    /// argument when such a session exists, else the only session whose id
    /// starts with it (ASCII case-insensitive, `%` `_` `\` literal); `None`
    /// when none or several match, and for an empty prefix.
    pub fn resolve_session_id(&self, id_or_prefix: &str) -> Result<Option<String>> {
        self.read(|conn| Ok(lookups::resolve_session_id(conn, id_or_prefix)?))
    }

    /// `api.md` §9.2: the session to resume for `session_id`: its compression
    /// tip, then down the newest non-branch, non-delegate, non-tool children
    /// (at most 32 steps); the deepest of them with messages, else
    /// `session_id` itself (an unknown id included).
    pub fn resolve_resume_session_id(&self, session_id: &str) -> Result<String> {
        self.read(|conn| Ok(lookups::resolve_resume_session_id(conn, session_id)?))
    }

    /// `api.md` §9.2: the newest continuation of a compressed conversation,
    /// following the best child of each compression-ended session; the id
    /// itself when there is none (an unknown id included).
    pub fn get_compression_tip(&self, session_id: &str) -> Result<String> {
        self.read(|conn| Ok(lookups::get_compression_tip(conn, session_id)?))
    }

    /// `api.md` §9.2: the compression chain through `session_id`, root
    /// first, following the earliest non-branch child of each
    /// compression-ended session; `[session_id]` outside any chain.
    pub fn get_compression_lineage(&self, session_id: &str) -> Result<Vec<String>> {
        self.read(|conn| Ok(lookups::get_compression_lineage(conn, session_id)?))
    }

    /// `api.md` §9.2: the first session of the lineage root-to-tip (parent
    /// links walked up, at most 100 steps, stopping at a missing row or a
    /// repeat); the id itself for a root or an unknown id.
    pub fn get_conversation_root(&self, session_id: &str) -> Result<String> {
        self.read(|conn| Ok(lookups::get_conversation_root(conn, session_id)?))
    }

    /// `api.md` §12.2: the newest live gateway session of a chat (and thread,
    /// when given), preferring `user_id`'s; `None` when the chat's live
    /// sessions belong to several users and none is the given one, and for an
    /// empty platform or chat.
    pub fn find_session_by_origin(
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
    pub fn find_latest_gateway_session_for_peer(
        &self,
        peer: &PeerLookup,
    ) -> Result<Option<Session>> {
        self.read(|conn| Ok(lookups::find_latest_gateway_session_for_peer(conn, peer)?))
    }

    /// `api.md` §12.2: the newest session of each gateway `session_key`, with
    /// `last_active`, most recently active first; of one platform (ASCII
    /// case-insensitive) when given; live ones only with `active_only`.
    pub fn list_gateway_sessions(
        &self,
        platform: Option<&str>,
        active_only: bool,
    ) -> Result<Vec<SessionActivity>> {
        self.read(|conn| Ok(lookups::list_gateway_sessions(conn, platform, active_only)?))
    }
}
