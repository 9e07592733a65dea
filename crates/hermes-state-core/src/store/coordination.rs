//! The `Coordination` part of the contract: what processes share besides
//! sessions: `state_meta`, compression locks, gateway routing and peers, async
//! delegations, Telegram topic bindings (`api.md` §12).

use crate::coordination::{Delegation, DelegationFilter};
use crate::error::Result;
use crate::gateway::GatewayPeer;
use crate::rich_listing::RichSession;
use crate::telegram_topics::{TopicBinding, TopicBindingRequest};
use hermes_state_types::NewDelegation;
use std::collections::BTreeMap;

/// What processes share besides sessions: `state_meta`, compression locks,
/// gateway routing and peers, async delegations, Telegram topic bindings
/// (`api.md` §12).
///
/// Every method has the SQLite store's meaning (`api.md`); a backend that
/// cannot offer one says so with an error, never with an empty answer.
pub trait Coordination {
    /// A `state_meta` value.
    fn get_meta(&self, key: &str) -> Result<Option<String>>;
    /// `api.md` §12.4: sets a `state_meta` value.
    fn set_meta(&self, key: &str, value: &str) -> Result<()>;
    /// `api.md` §12.4: creates the Telegram topic tables (on request only).
    fn apply_telegram_topic_migration(&self) -> Result<()>;
    /// `api.md` §12.2.
    fn save_gateway_routing_entry(
        &self,
        session_key: &str,
        entry_json: &str,
        scope: &str,
    ) -> Result<()>;
    /// `api.md` §12.2: `session_key → entry_json` of one scope.
    fn load_gateway_routing_entries(&self, scope: &str) -> Result<BTreeMap<String, String>>;
    /// `api.md` §12.2.
    fn delete_gateway_routing_entries(&self, session_keys: &[&str], scope: &str) -> Result<()>;
    /// `api.md` §12.2.
    fn replace_gateway_routing_entries(&self, entries: &[(&str, &str)], scope: &str) -> Result<()>;
    /// `api.md` §12.1 (never fails: errors give `false`). PostgreSQL
    /// reclaims on expiry only (docs/POSTGRES.md).
    fn try_acquire_compression_lock(
        &self,
        session_id: &str,
        holder: &str,
        ttl_seconds: f64,
    ) -> bool;
    /// `api.md` §12.1 (never fails: errors give `false`).
    fn refresh_compression_lock(&self, session_id: &str, holder: &str, ttl_seconds: f64) -> bool;
    /// `api.md` §12.1 (never fails).
    fn release_compression_lock(&self, session_id: &str, holder: &str);
    /// `api.md` §12.1: the holder of an unexpired lock.
    fn get_compression_lock_holder(&self, session_id: &str) -> Result<Option<String>>;
    /// `api.md` §12.3: records a new async delegation.
    fn record_delegation(&self, delegation: &NewDelegation) -> Result<()>;
    /// `api.md` §12.3: whether the delegation exists.
    fn update_delegation_state(
        &self,
        delegation_id: &str,
        state: &str,
        event_json: Option<&str>,
    ) -> Result<bool>;
    /// `api.md` §12.3: whether the delegation exists.
    fn finish_delegation(
        &self,
        delegation_id: &str,
        state: &str,
        result_json: Option<&str>,
    ) -> Result<bool>;
    /// `api.md` §12.3.
    fn get_delegation(&self, delegation_id: &str) -> Result<Option<Delegation>>;
    /// `api.md` §12.3: oldest dispatch first, ties by id.
    fn list_delegations(&self, filter: &DelegationFilter) -> Result<Vec<Delegation>>;
    /// `api.md` §2.5.
    fn record_gateway_session_peer(&self, session_id: &str, peer: &GatewayPeer) -> Result<()>;
    /// The original's `enable_telegram_topic_mode` (runs the opt-in first).
    fn enable_telegram_topic_mode(
        &self,
        chat_id: &str,
        user_id: &str,
        has_topics_enabled: Option<bool>,
        allows_users_to_create_topics: Option<bool>,
    ) -> Result<()>;
    /// The original's `disable_telegram_topic_mode`.
    fn disable_telegram_topic_mode(&self, chat_id: &str, clear_bindings: bool) -> Result<()>;
    /// The original's `is_telegram_topic_mode_enabled`.
    fn is_telegram_topic_mode_enabled(&self, chat_id: &str, user_id: &str) -> Result<bool>;
    /// The original's `get_telegram_topic_binding`.
    fn get_telegram_topic_binding(
        &self,
        chat_id: &str,
        thread_id: &str,
    ) -> Result<Option<TopicBinding>>;
    /// The original's `list_telegram_topic_bindings_for_chat`.
    fn list_telegram_topic_bindings_for_chat(&self, chat_id: &str) -> Result<Vec<TopicBinding>>;
    /// The original's `get_telegram_topic_binding_by_session`.
    fn get_telegram_topic_binding_by_session(
        &self,
        session_id: &str,
    ) -> Result<Option<TopicBinding>>;
    /// The original's `delete_telegram_topic_binding`.
    fn delete_telegram_topic_binding(&self, chat_id: &str, thread_id: &str) -> Result<usize>;
    /// The original's `bind_telegram_topic` (runs the opt-in first).
    fn bind_telegram_topic(&self, binding: &TopicBindingRequest<'_>) -> Result<()>;
    /// The original's `is_telegram_session_linked_to_topic`.
    fn is_telegram_session_linked_to_topic(&self, session_id: &str) -> Result<bool>;
    /// The original's `list_unlinked_telegram_sessions_for_user`.
    fn list_unlinked_telegram_sessions_for_user(
        &self,
        user_id: &str,
        limit: i64,
    ) -> Result<Vec<RichSession>>;
}
