//! The backend seam: the operations both stores offer, as one trait, and
//! the one function that turns a database URL into a store.
//!
//! [`SessionDb`] (SQLite, the reference) implements [`SessionStore`]; with
//! the `postgres` feature, so does [`hermes_state_postgres::PgStore`].
//! Code written against `dyn SessionStore` runs on either; the default
//! build links no PostgreSQL code.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use hermes_state_query::MessagePage;
use hermes_state_query::conversation_search::{ConversationHit, ConversationScope};
use hermes_state_query::coordination::{Delegation, DelegationFilter};
use hermes_state_query::lineage::LineageEntry;
use hermes_state_query::listing::{ListFilter, SessionListing};
use hermes_state_query::lookups::{PeerLookup, SessionActivity};
use hermes_state_query::message_reads::{
    AnchoredView, MessagesAround, RecentUserMessage, RewindResult,
};
use hermes_state_query::messages::ResumeConversations;
use hermes_state_query::prune::{
    ArchiveSelection, PruneCandidate, PruneOptions, PruneReport, PruneSelection,
};
use hermes_state_query::rich_listing::{RichListOptions, RichSession, SessionCwd};
use hermes_state_query::search::{SearchHit, SearchOptions};
use hermes_state_query::session_updates::{CompressionCooldown, HandoffState};
use hermes_state_query::sessions::SessionCountOptions;
use hermes_state_query::stats::{ModelTotals, TopSession, UsageAttribution};
use hermes_state_query::telegram_topics::{TopicBinding, TopicBindingRequest};
use hermes_state_types::{
    AuxiliaryUsage, Content, ConversationMessage, Message, NewDelegation, NewMessage, NewSession,
    Session, TokenUpdate,
};

use serde_json::Value;

use crate::cleanup::{
    AutoArchiveOptions, AutoArchiveReport, AutoPruneOptions, AutoPruneReport, SessionsImportReport,
};
use crate::db::{SessionDb, StoreOptions};
use crate::error::{Error, Result};
use crate::export::{
    ExportFilter, ExportPart, ExportSummary, ImportOptions, ImportReport, LineageExport,
    SessionExport,
};
use crate::session_updates::GatewayPeer;

/// The `state_meta` key a moved store's old copy carries: where the store
/// moved (a URL without credentials, or `sqlite:PATH`). Readers of the old
/// copy can tell it is no longer written.
pub const SUPERSEDED_BY: &str = "superseded_by";
/// The `state_meta` key holding when the store moved (Unix seconds).
pub const SUPERSEDED_AT: &str = "superseded_at";

/// The environment variable naming the store (`postgres://…` or a SQLite path).
pub const DATABASE_URL_VAR: &str = "HERMES_STATE_DATABASE_URL";

/// The operations every backend offers, with the SQLite store's semantics
/// (`api.md`); see each `SessionDb` method of the same name.
pub trait SessionStore: Send + Sync + std::fmt::Debug {
    /// `api.md` §2.1.
    fn create_session(&self, session: &NewSession) -> Result<String>;
    /// `api.md` §2.2.
    fn end_session(&self, session_id: &str, end_reason: &str) -> Result<()>;
    /// `api.md` §2.3.
    fn reopen_session(&self, session_id: &str) -> Result<()>;
    /// `api.md` §2.4.
    fn get_session(&self, session_id: &str) -> Result<Option<Session>>;
    /// `api.md` §11.6.
    fn delete_session(&self, session_id: &str) -> Result<bool>;
    /// `api.md` §4.
    fn append_message(&self, message: &NewMessage) -> Result<i64>;
    /// Several messages in one transaction.
    fn append_messages(&self, messages: &[NewMessage]) -> Result<Vec<i64>>;
    /// `api.md` §5.1.
    fn get_messages(&self, session_id: &str) -> Result<Vec<Message>>;
    /// Rows of one session or of the store.
    fn message_count(&self, session_id: Option<&str>) -> Result<i64>;
    /// `api.md` §10.2.
    fn recent_sessions(&self, filter: &ListFilter) -> Result<Vec<SessionListing>>;
    /// `api.md` §8.
    fn search_messages(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>>;
    /// `api.md` §6.2.
    fn set_session_title(&self, session_id: &str, title: Option<&str>) -> Result<bool>;
    /// `api.md` §6.
    fn get_session_title(&self, session_id: &str) -> Result<Option<String>>;
    /// `api.md` §6.3.
    fn resolve_session_by_title(&self, title: &str) -> Result<Option<String>>;
    /// A `state_meta` value.
    fn get_meta(&self, key: &str) -> Result<Option<String>>;
    /// `api.md` §2.4: by default the sessions that are not archived.
    fn session_count(&self, options: &SessionCountOptions) -> Result<i64>;
    /// `api.md` §3.1, §3.3.
    fn update_token_counts(&self, session_id: &str, update: &TokenUpdate) -> Result<()>;
    /// `api.md` §3.2.
    fn record_auxiliary_usage(&self, session_id: &str, usage: &AuxiliaryUsage) -> Result<()>;
    /// `api.md` §9.2: the session, then its ancestors up to the root.
    fn ancestors(&self, session_id: &str) -> Result<Vec<LineageEntry>>;
    /// `api.md` §9.2: the session, then its descendants level by level.
    fn descendants(&self, session_id: &str) -> Result<Vec<LineageEntry>>;
    /// `api.md` §9.2.
    fn lineage_root(&self, session_id: &str) -> Result<String>;
    /// `api.md` §6.4.
    fn get_next_title_in_lineage(&self, base_title: &str) -> Result<String>;
    /// `api.md` §3.4: totals per model, most expensive first.
    fn model_totals(&self) -> Result<Vec<ModelTotals>>;
    /// `api.md` §3.4: the sessions with the most tokens.
    fn top_sessions(&self, limit: u32) -> Result<Vec<TopSession>>;
    /// `api.md` §3.4: usage per model and task.
    fn usage_by_model_and_task(&self) -> Result<Vec<UsageAttribution>>;
    /// `api.md` §5.1 with inactive rows and paging.
    fn get_messages_page(&self, session_id: &str, page: MessagePage) -> Result<Vec<Message>>;
    /// `api.md` §5.2.
    fn get_messages_as_conversation(
        &self,
        session_id: &str,
        include_ancestors: bool,
    ) -> Result<Vec<ConversationMessage>>;
    /// `api.md` §11.5.
    fn clear_messages(&self, session_id: &str) -> Result<()>;
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
    /// `api.md` §11.3.
    fn prune_sessions(&self, options: &PruneOptions) -> Result<PruneReport>;
    /// `api.md` §2.5.
    fn update_system_prompt(&self, session_id: &str, system_prompt: &str) -> Result<()>;
    /// `api.md` §2.5.
    fn update_session_model(&self, session_id: &str, model: Option<&str>) -> Result<()>;
    /// `api.md` §2.5.
    fn update_session_meta(
        &self,
        session_id: &str,
        model_config_json: Option<&str>,
        model: Option<&str>,
    ) -> Result<()>;
    /// `api.md` §2.5.
    fn update_session_billing_route(
        &self,
        session_id: &str,
        provider: Option<&str>,
        base_url: Option<&str>,
        billing_mode: Option<&str>,
    ) -> Result<()>;
    /// `api.md` §2.5.
    fn update_session_cwd(
        &self,
        session_id: &str,
        cwd: &str,
        git_branch: Option<&str>,
        git_repo_root: Option<&str>,
    ) -> Result<()>;
    /// `api.md` §2.5: the whole compression lineage.
    fn set_session_archived(&self, session_id: &str, archived: bool) -> Result<bool>;
    /// `api.md` §2.5: the whole compression lineage.
    fn set_session_pinned(&self, session_id: &str, pinned: bool) -> Result<bool>;
    /// `api.md` §2.5.
    fn set_expiry_finalized(&self, session_id: &str, finalized: bool) -> Result<()>;
    /// `api.md` §2.5.
    fn record_compression_failure_cooldown(
        &self,
        session_id: &str,
        cooldown_until: f64,
        error: Option<&str>,
    ) -> Result<()>;
    /// `api.md` §2.5.
    fn get_compression_failure_cooldown(
        &self,
        session_id: &str,
    ) -> Result<Option<CompressionCooldown>>;
    /// `api.md` §2.5.
    fn clear_compression_failure_cooldown(&self, session_id: &str) -> Result<()>;
    /// `api.md` §2.5.
    fn get_compression_fallback_streak(&self, session_id: &str) -> Result<i64>;
    /// `api.md` §2.5.
    fn set_compression_fallback_streak(&self, session_id: &str, streak: i64) -> Result<()>;
    /// `api.md` §2.5.
    fn get_compression_ineffective_count(&self, session_id: &str) -> Result<i64>;
    /// `api.md` §2.5.
    fn set_compression_ineffective_count(&self, session_id: &str, count: i64) -> Result<()>;
    /// `api.md` §5.3.
    fn get_messages_around(
        &self,
        session_id: &str,
        message_id: i64,
        window: i64,
    ) -> Result<MessagesAround>;
    /// `api.md` §5.3.
    fn list_recent_user_messages(
        &self,
        session_id: &str,
        limit: u32,
        include_inactive: bool,
    ) -> Result<Vec<RecentUserMessage>>;
    /// `api.md` §5.3.
    fn has_platform_message_id(&self, session_id: &str, platform_message_id: &str) -> Result<bool>;
    /// `api.md` §6.2.
    fn get_session_by_title(&self, title: &str) -> Result<Option<Session>>;
    /// `api.md` §2.4.
    fn resolve_session_id(&self, id_or_prefix: &str) -> Result<Option<String>>;
    /// `api.md` §9.2.
    fn resolve_resume_session_id(&self, session_id: &str) -> Result<String>;
    /// `api.md` §9.2.
    fn get_compression_tip(&self, session_id: &str) -> Result<String>;
    /// `api.md` §9.2.
    fn get_conversation_root(&self, session_id: &str) -> Result<String>;
    /// `api.md` §4.5.
    fn rewind_to_message(&self, session_id: &str, message_id: i64) -> Result<RewindResult>;
    /// `api.md` §4.5.
    fn restore_rewound(&self, session_id: &str, since_id: i64) -> Result<usize>;
    /// `api.md` §4.5.
    fn archive_and_compact(&self, session_id: &str, messages: &[NewMessage]) -> Result<usize>;
    /// `api.md` §4.5.
    fn replace_messages(
        &self,
        session_id: &str,
        messages: &[NewMessage],
        active_only: bool,
    ) -> Result<()>;
    /// `api.md` §10.3.
    fn list_sessions_rich(&self, options: &RichListOptions) -> Result<Vec<RichSession>>;
    /// `api.md` §10.1.
    fn search_sessions(
        &self,
        source: Option<&str>,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<SessionActivity>>;
    /// `api.md` §10.4, §11.3.
    fn list_prune_candidates(&self, selection: &PruneSelection) -> Result<Vec<PruneCandidate>>;
    /// `api.md` §10.4.
    fn archive_sessions(&self, selection: &ArchiveSelection) -> Result<usize>;
    /// `api.md` §11.6.
    fn count_empty_sessions(&self) -> Result<i64>;
    /// `api.md` §2.5: settled → `pending`.
    fn request_handoff(&self, session_id: &str, platform: &str) -> Result<bool>;
    /// `api.md` §2.5: `pending` → `running`.
    fn claim_handoff(&self, session_id: &str) -> Result<bool>;
    /// `api.md` §2.5.
    fn complete_handoff(&self, session_id: &str) -> Result<()>;
    /// `api.md` §2.5.
    fn fail_handoff(&self, session_id: &str, error: &str) -> Result<()>;
    /// `api.md` §2.5.
    fn get_handoff_state(&self, session_id: &str) -> Result<Option<HandoffState>>;
    /// `api.md` §2.5.
    fn list_pending_handoffs(&self) -> Result<Vec<Session>>;
    /// `api.md` §12.2.
    fn replace_gateway_routing_entries(&self, entries: &[(&str, &str)], scope: &str) -> Result<()>;
    /// `api.md` §9.2.
    fn get_compression_lineage(&self, session_id: &str) -> Result<Vec<String>>;
    /// `api.md` §10.4.
    fn distinct_session_cwds(&self, include_archived: bool) -> Result<Vec<SessionCwd>>;
    /// `api.md` §10.4.
    fn search_sessions_by_id(
        &self,
        query: &str,
        limit: u32,
        include_archived: bool,
    ) -> Result<Vec<RichSession>>;
    /// `api.md` §4.5.
    fn set_latest_user_api_content(
        &self,
        session_id: &str,
        content: Option<&Content>,
        api_content: &str,
    ) -> Result<usize>;
    /// `api.md` §4.5.
    fn set_latest_matching_message_display_kind(
        &self,
        session_id: &str,
        role: &str,
        content: &str,
        display_kind: &str,
        display_metadata: Option<&Value>,
    ) -> Result<bool>;
    /// `api.md` §10.4, §11.4.
    fn archive_stale_sessions(&self, idle_days: f64, exclude_pinned: bool) -> Result<usize>;
    /// `api.md` §2.5.
    fn record_gateway_session_peer(&self, session_id: &str, peer: &GatewayPeer) -> Result<()>;
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
    /// `api.md` §2.1: creates the session if it is missing.
    fn ensure_session(&self, session_id: &str, source: &str, model: Option<&str>)
    -> Result<String>;
    /// `api.md` §11.6, removing transcripts from `sessions_dir`.
    fn delete_session_with(&self, session_id: &str, sessions_dir: Option<&Path>) -> Result<bool>;
    /// `api.md` §11.6: how many of the given sessions existed.
    fn delete_sessions(&self, ids: &[&str], sessions_dir: Option<&Path>) -> Result<usize>;
    /// `api.md` §11.6.
    fn delete_session_if_empty(&self, session_id: &str) -> Result<bool>;
    /// `api.md` §11.6.
    fn delete_empty_sessions(&self) -> Result<usize>;
    /// `api.md` §5.3.
    fn has_archived_messages(&self, session_id: &str) -> Result<bool>;
    /// `api.md` §2.5 (never fails: errors give `false`).
    fn promote_to_session_reset(&self, session_id: &str, reason: &str) -> bool;
    /// `api.md` §6.2.
    fn set_auto_title_if_empty(&self, session_id: &str, title: &str) -> Result<bool>;
    /// `api.md` §5.2 with `include_inactive`.
    fn get_messages_as_conversation_with(
        &self,
        session_id: &str,
        include_ancestors: bool,
        include_inactive: bool,
    ) -> Result<Vec<ConversationMessage>>;
    /// `api.md` §2.5.
    fn finalize_orphaned_compression_sessions(&self) -> Result<usize>;
    /// `api.md` §2.5.
    fn prune_empty_ghost_sessions(&self, sessions_dir: Option<&Path>) -> Result<usize>;
    /// `api.md` §11.4 (never fails: errors are reported).
    fn maybe_auto_archive(&self, options: &AutoArchiveOptions) -> AutoArchiveReport;
    /// `api.md` §11.4 (never fails: errors are reported). PostgreSQL never
    /// vacuums (docs/DECISIONS.md): `vacuumed` stays `false` there.
    fn maybe_auto_prune_and_vacuum(&self, options: &AutoPruneOptions) -> AutoPruneReport;
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
    /// `api.md` §10.4: the runs of a cron job, newest first.
    fn list_cron_job_runs(&self, job_id: &str, limit: u32, offset: u32)
    -> Result<Vec<RichSession>>;
    /// Messages of the sessions of one source.
    fn message_count_of_source(&self, source: &str) -> Result<i64>;
    /// `api.md` §2.5: `(cwd, root)` pairs fill missing roots only.
    fn backfill_repo_roots(&self, roots: &[(&str, &str)]) -> Result<()>;
    /// `api.md` §8 by conversation (§9.2): hits collapsed by compression
    /// chain; `options.limit`/`offset` count conversations.
    fn search_conversations(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<ConversationHit>>;
    /// [`SessionStore::search_conversations`] over the hits `scope` takes.
    fn search_conversations_in(
        &self,
        query: &str,
        options: &SearchOptions,
        scope: &ConversationScope,
    ) -> Result<Vec<ConversationHit>>;
    /// `api.md` §11.1: one session with its active messages, from one snapshot.
    fn export_session(&self, session_id: &str) -> Result<Option<SessionExport>>;
    /// The original's `export_session_lineage`: the session's compression
    /// lineage as one logical session; `None` for an unknown id.
    fn export_session_lineage(&self, session_id: &str) -> Result<Option<LineageExport>>;
    /// `api.md` §11.1 in parts (`SessionDb::export_session_parts`).
    fn export_session_parts(
        &self,
        session_id: &str,
        each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<bool>;
    /// `api.md` §11.2: every session with its active messages.
    fn export_all(&self, source: Option<&str>) -> Result<Vec<SessionExport>>;
    /// `api.md` §11.2, one session at a time (`SessionDb::export_all_each`).
    fn export_all_each(
        &self,
        source: Option<&str>,
        each: &mut dyn FnMut(SessionExport) -> ControlFlow<()>,
    ) -> Result<u64>;
    /// `api.md` §11.2 in parts (`SessionDb::export_all_parts`).
    fn export_all_parts(
        &self,
        source: Option<&str>,
        each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<u64>;
    /// The lossless JSONL export (`docs/EXPORT-FORMAT.md`), streamed from
    /// one snapshot; the same bytes on every backend for the same store.
    fn export_jsonl(
        &self,
        writer: &mut dyn Write,
        filter: &ExportFilter,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ExportSummary>;
    /// A session's messages one at a time (`SessionDb::walk_messages`).
    fn walk_messages(
        &self,
        session_id: &str,
        include_inactive: bool,
        count: &mut dyn FnMut(u64) -> ControlFlow<()>,
        each: &mut dyn FnMut(Message) -> ControlFlow<()>,
    ) -> Result<u64>;
    /// Imports a JSONL export (`SessionDb::import_jsonl`); on PostgreSQL
    /// in one transaction.
    fn import_jsonl(
        &self,
        reader: &mut dyn BufRead,
        options: &ImportOptions,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportReport>;
    /// `api.md` §11.2: restores the original's export shape.
    fn import_sessions(&self, sessions: &Value) -> Result<SessionsImportReport>;
    /// The original's `get_anchored_view` (docs/DECISIONS.md, "The
    /// original's methods beyond `api.md`"): the window around a message,
    /// role-filtered, with the session's bookends.
    fn get_anchored_view(
        &self,
        session_id: &str,
        message_id: i64,
        window: i64,
        bookend: i64,
        keep_roles: Option<&[&str]>,
    ) -> Result<AnchoredView>;
    /// The original's `get_resume_conversations`: the repaired model
    /// history and the lineage's display history.
    fn get_resume_conversations(&self, session_id: &str) -> Result<ResumeConversations>;
    /// The original's `get_ancestor_display_prefix`.
    fn get_ancestor_display_prefix(&self, session_id: &str) -> Result<Vec<ConversationMessage>>;
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
    /// Which backend this is, e.g. for messages: `sqlite` or `postgres`.
    fn backend_name(&self) -> &'static str;
    /// The SQLite store behind this handle, for what only a file offers
    /// (the rest of `SessionDb`'s API); `None` on other backends.
    fn as_sqlite(&self) -> Option<&SessionDb> {
        None
    }
}

/// Forwards every trait method to the inherent method of the same name.
macro_rules! forward_store {
    ($name:literal, $err:expr) => {
        fn create_session(&self, session: &NewSession) -> Result<String> {
            Self::create_session(self, session).map_err($err)
        }
        fn end_session(&self, session_id: &str, end_reason: &str) -> Result<()> {
            Self::end_session(self, session_id, end_reason).map_err($err)
        }
        fn reopen_session(&self, session_id: &str) -> Result<()> {
            Self::reopen_session(self, session_id).map_err($err)
        }
        fn get_session(&self, session_id: &str) -> Result<Option<Session>> {
            Self::get_session(self, session_id).map_err($err)
        }
        fn delete_session(&self, session_id: &str) -> Result<bool> {
            Self::delete_session(self, session_id).map_err($err)
        }
        fn append_message(&self, message: &NewMessage) -> Result<i64> {
            Self::append_message(self, message).map_err($err)
        }
        fn append_messages(&self, messages: &[NewMessage]) -> Result<Vec<i64>> {
            Self::append_messages(self, messages).map_err($err)
        }
        fn get_messages(&self, session_id: &str) -> Result<Vec<Message>> {
            Self::get_messages(self, session_id).map_err($err)
        }
        fn message_count(&self, session_id: Option<&str>) -> Result<i64> {
            Self::message_count(self, session_id).map_err($err)
        }
        fn recent_sessions(&self, filter: &ListFilter) -> Result<Vec<SessionListing>> {
            Self::recent_sessions(self, filter).map_err($err)
        }
        fn search_messages(&self, query: &str, options: &SearchOptions) -> Result<Vec<SearchHit>> {
            Self::search_messages(self, query, options).map_err($err)
        }
        fn set_session_title(&self, session_id: &str, title: Option<&str>) -> Result<bool> {
            Self::set_session_title(self, session_id, title).map_err($err)
        }
        fn get_session_title(&self, session_id: &str) -> Result<Option<String>> {
            Self::get_session_title(self, session_id).map_err($err)
        }
        fn resolve_session_by_title(&self, title: &str) -> Result<Option<String>> {
            Self::resolve_session_by_title(self, title).map_err($err)
        }
        fn get_meta(&self, key: &str) -> Result<Option<String>> {
            Self::get_meta(self, key).map_err($err)
        }
        fn get_anchored_view(
            &self,
            session_id: &str,
            message_id: i64,
            window: i64,
            bookend: i64,
            keep_roles: Option<&[&str]>,
        ) -> Result<AnchoredView> {
            Self::get_anchored_view(self, session_id, message_id, window, bookend, keep_roles)
                .map_err($err)
        }
        fn get_resume_conversations(&self, session_id: &str) -> Result<ResumeConversations> {
            Self::get_resume_conversations(self, session_id).map_err($err)
        }
        fn get_ancestor_display_prefix(
            &self,
            session_id: &str,
        ) -> Result<Vec<ConversationMessage>> {
            Self::get_ancestor_display_prefix(self, session_id).map_err($err)
        }
        fn enable_telegram_topic_mode(
            &self,
            chat_id: &str,
            user_id: &str,
            has_topics_enabled: Option<bool>,
            allows_users_to_create_topics: Option<bool>,
        ) -> Result<()> {
            Self::enable_telegram_topic_mode(
                self,
                chat_id,
                user_id,
                has_topics_enabled,
                allows_users_to_create_topics,
            )
            .map_err($err)
        }
        fn disable_telegram_topic_mode(&self, chat_id: &str, clear_bindings: bool) -> Result<()> {
            Self::disable_telegram_topic_mode(self, chat_id, clear_bindings).map_err($err)
        }
        fn is_telegram_topic_mode_enabled(&self, chat_id: &str, user_id: &str) -> Result<bool> {
            Self::is_telegram_topic_mode_enabled(self, chat_id, user_id).map_err($err)
        }
        fn get_telegram_topic_binding(
            &self,
            chat_id: &str,
            thread_id: &str,
        ) -> Result<Option<TopicBinding>> {
            Self::get_telegram_topic_binding(self, chat_id, thread_id).map_err($err)
        }
        fn list_telegram_topic_bindings_for_chat(
            &self,
            chat_id: &str,
        ) -> Result<Vec<TopicBinding>> {
            Self::list_telegram_topic_bindings_for_chat(self, chat_id).map_err($err)
        }
        fn get_telegram_topic_binding_by_session(
            &self,
            session_id: &str,
        ) -> Result<Option<TopicBinding>> {
            Self::get_telegram_topic_binding_by_session(self, session_id).map_err($err)
        }
        fn delete_telegram_topic_binding(&self, chat_id: &str, thread_id: &str) -> Result<usize> {
            Self::delete_telegram_topic_binding(self, chat_id, thread_id).map_err($err)
        }
        fn bind_telegram_topic(&self, binding: &TopicBindingRequest<'_>) -> Result<()> {
            Self::bind_telegram_topic(self, binding).map_err($err)
        }
        fn is_telegram_session_linked_to_topic(&self, session_id: &str) -> Result<bool> {
            Self::is_telegram_session_linked_to_topic(self, session_id).map_err($err)
        }
        fn list_unlinked_telegram_sessions_for_user(
            &self,
            user_id: &str,
            limit: i64,
        ) -> Result<Vec<RichSession>> {
            Self::list_unlinked_telegram_sessions_for_user(self, user_id, limit).map_err($err)
        }
        fn session_count(&self, options: &SessionCountOptions) -> Result<i64> {
            Self::session_count(self, options).map_err($err)
        }
        fn update_token_counts(&self, session_id: &str, update: &TokenUpdate) -> Result<()> {
            Self::update_token_counts(self, session_id, update).map_err($err)
        }
        fn record_auxiliary_usage(&self, session_id: &str, usage: &AuxiliaryUsage) -> Result<()> {
            Self::record_auxiliary_usage(self, session_id, usage).map_err($err)
        }
        fn ancestors(&self, session_id: &str) -> Result<Vec<LineageEntry>> {
            Self::ancestors(self, session_id).map_err($err)
        }
        fn descendants(&self, session_id: &str) -> Result<Vec<LineageEntry>> {
            Self::descendants(self, session_id).map_err($err)
        }
        fn lineage_root(&self, session_id: &str) -> Result<String> {
            Self::lineage_root(self, session_id).map_err($err)
        }
        fn get_next_title_in_lineage(&self, base_title: &str) -> Result<String> {
            Self::get_next_title_in_lineage(self, base_title).map_err($err)
        }
        fn model_totals(&self) -> Result<Vec<ModelTotals>> {
            Self::model_totals(self).map_err($err)
        }
        fn top_sessions(&self, limit: u32) -> Result<Vec<TopSession>> {
            Self::top_sessions(self, limit).map_err($err)
        }
        fn usage_by_model_and_task(&self) -> Result<Vec<UsageAttribution>> {
            Self::usage_by_model_and_task(self).map_err($err)
        }
        fn get_messages_page(&self, session_id: &str, page: MessagePage) -> Result<Vec<Message>> {
            Self::get_messages_page(self, session_id, page).map_err($err)
        }
        fn get_messages_as_conversation(
            &self,
            session_id: &str,
            include_ancestors: bool,
        ) -> Result<Vec<ConversationMessage>> {
            Self::get_messages_as_conversation(self, session_id, include_ancestors).map_err($err)
        }
        fn clear_messages(&self, session_id: &str) -> Result<()> {
            Self::clear_messages(self, session_id).map_err($err)
        }
        fn set_meta(&self, key: &str, value: &str) -> Result<()> {
            // `&str` for SessionDb, `Some(&str)` for PgStore (which can also store NULL).
            Self::set_meta(self, key, value.into()).map_err($err)
        }
        fn apply_telegram_topic_migration(&self) -> Result<()> {
            Self::apply_telegram_topic_migration(self).map_err($err)
        }
        fn save_gateway_routing_entry(
            &self,
            session_key: &str,
            entry_json: &str,
            scope: &str,
        ) -> Result<()> {
            Self::save_gateway_routing_entry(self, session_key, entry_json, scope).map_err($err)
        }
        fn load_gateway_routing_entries(&self, scope: &str) -> Result<BTreeMap<String, String>> {
            Self::load_gateway_routing_entries(self, scope).map_err($err)
        }
        fn delete_gateway_routing_entries(&self, session_keys: &[&str], scope: &str) -> Result<()> {
            Self::delete_gateway_routing_entries(self, session_keys, scope).map_err($err)
        }
        fn try_acquire_compression_lock(
            &self,
            session_id: &str,
            holder: &str,
            ttl_seconds: f64,
        ) -> bool {
            Self::try_acquire_compression_lock(self, session_id, holder, ttl_seconds)
        }
        fn refresh_compression_lock(
            &self,
            session_id: &str,
            holder: &str,
            ttl_seconds: f64,
        ) -> bool {
            Self::refresh_compression_lock(self, session_id, holder, ttl_seconds)
        }
        fn release_compression_lock(&self, session_id: &str, holder: &str) {
            Self::release_compression_lock(self, session_id, holder)
        }
        fn get_compression_lock_holder(&self, session_id: &str) -> Result<Option<String>> {
            Self::get_compression_lock_holder(self, session_id).map_err($err)
        }
        fn prune_sessions(&self, options: &PruneOptions) -> Result<PruneReport> {
            Self::prune_sessions(self, options).map_err($err)
        }
        fn update_system_prompt(&self, session_id: &str, system_prompt: &str) -> Result<()> {
            Self::update_system_prompt(self, session_id, system_prompt).map_err($err)
        }
        fn update_session_model(&self, session_id: &str, model: Option<&str>) -> Result<()> {
            Self::update_session_model(self, session_id, model).map_err($err)
        }
        fn update_session_meta(
            &self,
            session_id: &str,
            model_config_json: Option<&str>,
            model: Option<&str>,
        ) -> Result<()> {
            Self::update_session_meta(self, session_id, model_config_json, model).map_err($err)
        }
        fn update_session_billing_route(
            &self,
            session_id: &str,
            provider: Option<&str>,
            base_url: Option<&str>,
            billing_mode: Option<&str>,
        ) -> Result<()> {
            Self::update_session_billing_route(self, session_id, provider, base_url, billing_mode)
                .map_err($err)
        }
        fn update_session_cwd(
            &self,
            session_id: &str,
            cwd: &str,
            git_branch: Option<&str>,
            git_repo_root: Option<&str>,
        ) -> Result<()> {
            Self::update_session_cwd(self, session_id, cwd, git_branch, git_repo_root).map_err($err)
        }
        fn set_session_archived(&self, session_id: &str, archived: bool) -> Result<bool> {
            Self::set_session_archived(self, session_id, archived).map_err($err)
        }
        fn set_session_pinned(&self, session_id: &str, pinned: bool) -> Result<bool> {
            Self::set_session_pinned(self, session_id, pinned).map_err($err)
        }
        fn set_expiry_finalized(&self, session_id: &str, finalized: bool) -> Result<()> {
            Self::set_expiry_finalized(self, session_id, finalized).map_err($err)
        }
        fn record_compression_failure_cooldown(
            &self,
            session_id: &str,
            cooldown_until: f64,
            error: Option<&str>,
        ) -> Result<()> {
            Self::record_compression_failure_cooldown(self, session_id, cooldown_until, error)
                .map_err($err)
        }
        fn get_compression_failure_cooldown(
            &self,
            session_id: &str,
        ) -> Result<Option<CompressionCooldown>> {
            Self::get_compression_failure_cooldown(self, session_id).map_err($err)
        }
        fn clear_compression_failure_cooldown(&self, session_id: &str) -> Result<()> {
            Self::clear_compression_failure_cooldown(self, session_id).map_err($err)
        }
        fn get_compression_fallback_streak(&self, session_id: &str) -> Result<i64> {
            Self::get_compression_fallback_streak(self, session_id).map_err($err)
        }
        fn set_compression_fallback_streak(&self, session_id: &str, streak: i64) -> Result<()> {
            Self::set_compression_fallback_streak(self, session_id, streak).map_err($err)
        }
        fn get_compression_ineffective_count(&self, session_id: &str) -> Result<i64> {
            Self::get_compression_ineffective_count(self, session_id).map_err($err)
        }
        fn set_compression_ineffective_count(&self, session_id: &str, count: i64) -> Result<()> {
            Self::set_compression_ineffective_count(self, session_id, count).map_err($err)
        }
        fn get_messages_around(
            &self,
            session_id: &str,
            message_id: i64,
            window: i64,
        ) -> Result<MessagesAround> {
            Self::get_messages_around(self, session_id, message_id, window).map_err($err)
        }
        fn list_recent_user_messages(
            &self,
            session_id: &str,
            limit: u32,
            include_inactive: bool,
        ) -> Result<Vec<RecentUserMessage>> {
            Self::list_recent_user_messages(self, session_id, limit, include_inactive).map_err($err)
        }
        fn has_platform_message_id(
            &self,
            session_id: &str,
            platform_message_id: &str,
        ) -> Result<bool> {
            Self::has_platform_message_id(self, session_id, platform_message_id).map_err($err)
        }
        fn get_session_by_title(&self, title: &str) -> Result<Option<Session>> {
            Self::get_session_by_title(self, title).map_err($err)
        }
        fn resolve_session_id(&self, id_or_prefix: &str) -> Result<Option<String>> {
            Self::resolve_session_id(self, id_or_prefix).map_err($err)
        }
        fn resolve_resume_session_id(&self, session_id: &str) -> Result<String> {
            Self::resolve_resume_session_id(self, session_id).map_err($err)
        }
        fn get_compression_tip(&self, session_id: &str) -> Result<String> {
            Self::get_compression_tip(self, session_id).map_err($err)
        }
        fn get_conversation_root(&self, session_id: &str) -> Result<String> {
            Self::get_conversation_root(self, session_id).map_err($err)
        }
        fn rewind_to_message(&self, session_id: &str, message_id: i64) -> Result<RewindResult> {
            Self::rewind_to_message(self, session_id, message_id).map_err($err)
        }
        fn restore_rewound(&self, session_id: &str, since_id: i64) -> Result<usize> {
            Self::restore_rewound(self, session_id, since_id).map_err($err)
        }
        fn archive_and_compact(&self, session_id: &str, messages: &[NewMessage]) -> Result<usize> {
            Self::archive_and_compact(self, session_id, messages).map_err($err)
        }
        fn replace_messages(
            &self,
            session_id: &str,
            messages: &[NewMessage],
            active_only: bool,
        ) -> Result<()> {
            Self::replace_messages(self, session_id, messages, active_only).map_err($err)
        }
        fn list_sessions_rich(&self, options: &RichListOptions) -> Result<Vec<RichSession>> {
            Self::list_sessions_rich(self, options).map_err($err)
        }
        fn search_sessions(
            &self,
            source: Option<&str>,
            limit: u32,
            offset: u32,
        ) -> Result<Vec<SessionActivity>> {
            Self::search_sessions(self, source, limit, offset).map_err($err)
        }
        fn list_prune_candidates(&self, selection: &PruneSelection) -> Result<Vec<PruneCandidate>> {
            Self::list_prune_candidates(self, selection).map_err($err)
        }
        fn archive_sessions(&self, selection: &ArchiveSelection) -> Result<usize> {
            Self::archive_sessions(self, selection).map_err($err)
        }
        fn count_empty_sessions(&self) -> Result<i64> {
            Self::count_empty_sessions(self).map_err($err)
        }
        fn request_handoff(&self, session_id: &str, platform: &str) -> Result<bool> {
            Self::request_handoff(self, session_id, platform).map_err($err)
        }
        fn claim_handoff(&self, session_id: &str) -> Result<bool> {
            Self::claim_handoff(self, session_id).map_err($err)
        }
        fn complete_handoff(&self, session_id: &str) -> Result<()> {
            Self::complete_handoff(self, session_id).map_err($err)
        }
        fn fail_handoff(&self, session_id: &str, error: &str) -> Result<()> {
            Self::fail_handoff(self, session_id, error).map_err($err)
        }
        fn get_handoff_state(&self, session_id: &str) -> Result<Option<HandoffState>> {
            Self::get_handoff_state(self, session_id).map_err($err)
        }
        fn list_pending_handoffs(&self) -> Result<Vec<Session>> {
            Self::list_pending_handoffs(self).map_err($err)
        }
        fn replace_gateway_routing_entries(
            &self,
            entries: &[(&str, &str)],
            scope: &str,
        ) -> Result<()> {
            Self::replace_gateway_routing_entries(self, entries.iter().copied(), scope)
                .map_err($err)
        }
        fn get_compression_lineage(&self, session_id: &str) -> Result<Vec<String>> {
            Self::get_compression_lineage(self, session_id).map_err($err)
        }
        fn distinct_session_cwds(&self, include_archived: bool) -> Result<Vec<SessionCwd>> {
            Self::distinct_session_cwds(self, include_archived).map_err($err)
        }
        fn search_sessions_by_id(
            &self,
            query: &str,
            limit: u32,
            include_archived: bool,
        ) -> Result<Vec<RichSession>> {
            Self::search_sessions_by_id(self, query, limit, include_archived).map_err($err)
        }
        fn set_latest_user_api_content(
            &self,
            session_id: &str,
            content: Option<&Content>,
            api_content: &str,
        ) -> Result<usize> {
            Self::set_latest_user_api_content(self, session_id, content, api_content).map_err($err)
        }
        fn set_latest_matching_message_display_kind(
            &self,
            session_id: &str,
            role: &str,
            content: &str,
            display_kind: &str,
            display_metadata: Option<&Value>,
        ) -> Result<bool> {
            Self::set_latest_matching_message_display_kind(
                self,
                session_id,
                role,
                content,
                display_kind,
                display_metadata,
            )
            .map_err($err)
        }
        fn archive_stale_sessions(&self, idle_days: f64, exclude_pinned: bool) -> Result<usize> {
            Self::archive_stale_sessions(self, idle_days, exclude_pinned).map_err($err)
        }
        fn find_session_by_origin(
            &self,
            platform: &str,
            chat_id: &str,
            thread_id: Option<&str>,
            user_id: Option<&str>,
        ) -> Result<Option<String>> {
            Self::find_session_by_origin(self, platform, chat_id, thread_id, user_id).map_err($err)
        }
        fn find_latest_gateway_session_for_peer(
            &self,
            peer: &PeerLookup,
        ) -> Result<Option<Session>> {
            Self::find_latest_gateway_session_for_peer(self, peer).map_err($err)
        }
        fn list_gateway_sessions(
            &self,
            platform: Option<&str>,
            active_only: bool,
        ) -> Result<Vec<SessionActivity>> {
            Self::list_gateway_sessions(self, platform, active_only).map_err($err)
        }
        fn ensure_session(
            &self,
            session_id: &str,
            source: &str,
            model: Option<&str>,
        ) -> Result<String> {
            Self::ensure_session(self, session_id, source, model).map_err($err)
        }
        fn delete_session_with(
            &self,
            session_id: &str,
            sessions_dir: Option<&Path>,
        ) -> Result<bool> {
            Self::delete_session_with(self, session_id, sessions_dir).map_err($err)
        }
        fn delete_sessions(&self, ids: &[&str], sessions_dir: Option<&Path>) -> Result<usize> {
            Self::delete_sessions(self, ids.iter().copied(), sessions_dir).map_err($err)
        }
        fn delete_session_if_empty(&self, session_id: &str) -> Result<bool> {
            Self::delete_session_if_empty(self, session_id).map_err($err)
        }
        fn delete_empty_sessions(&self) -> Result<usize> {
            Self::delete_empty_sessions(self).map_err($err)
        }
        fn has_archived_messages(&self, session_id: &str) -> Result<bool> {
            Self::has_archived_messages(self, session_id).map_err($err)
        }
        fn promote_to_session_reset(&self, session_id: &str, reason: &str) -> bool {
            Self::promote_to_session_reset(self, session_id, reason)
        }
        fn set_auto_title_if_empty(&self, session_id: &str, title: &str) -> Result<bool> {
            Self::set_auto_title_if_empty(self, session_id, title).map_err($err)
        }
        fn get_messages_as_conversation_with(
            &self,
            session_id: &str,
            include_ancestors: bool,
            include_inactive: bool,
        ) -> Result<Vec<ConversationMessage>> {
            Self::get_messages_as_conversation_with(
                self,
                session_id,
                include_ancestors,
                include_inactive,
            )
            .map_err($err)
        }
        fn finalize_orphaned_compression_sessions(&self) -> Result<usize> {
            Self::finalize_orphaned_compression_sessions(self).map_err($err)
        }
        fn prune_empty_ghost_sessions(&self, sessions_dir: Option<&Path>) -> Result<usize> {
            Self::prune_empty_ghost_sessions(self, sessions_dir).map_err($err)
        }
        fn record_delegation(&self, delegation: &NewDelegation) -> Result<()> {
            Self::record_delegation(self, delegation).map_err($err)
        }
        fn update_delegation_state(
            &self,
            delegation_id: &str,
            state: &str,
            event_json: Option<&str>,
        ) -> Result<bool> {
            Self::update_delegation_state(self, delegation_id, state, event_json).map_err($err)
        }
        fn finish_delegation(
            &self,
            delegation_id: &str,
            state: &str,
            result_json: Option<&str>,
        ) -> Result<bool> {
            Self::finish_delegation(self, delegation_id, state, result_json).map_err($err)
        }
        fn get_delegation(&self, delegation_id: &str) -> Result<Option<Delegation>> {
            Self::get_delegation(self, delegation_id).map_err($err)
        }
        fn list_delegations(&self, filter: &DelegationFilter) -> Result<Vec<Delegation>> {
            Self::list_delegations(self, filter).map_err($err)
        }
        fn list_cron_job_runs(
            &self,
            job_id: &str,
            limit: u32,
            offset: u32,
        ) -> Result<Vec<RichSession>> {
            Self::list_cron_job_runs(self, job_id, limit, offset).map_err($err)
        }
        fn message_count_of_source(&self, source: &str) -> Result<i64> {
            Self::message_count_of_source(self, source).map_err($err)
        }
        fn backfill_repo_roots(&self, roots: &[(&str, &str)]) -> Result<()> {
            Self::backfill_repo_roots(self, roots.iter().copied()).map_err($err)
        }
        fn search_conversations(
            &self,
            query: &str,
            options: &SearchOptions,
        ) -> Result<Vec<ConversationHit>> {
            Self::search_conversations(self, query, options).map_err($err)
        }
        fn search_conversations_in(
            &self,
            query: &str,
            options: &SearchOptions,
            scope: &ConversationScope,
        ) -> Result<Vec<ConversationHit>> {
            Self::search_conversations_in(self, query, options, scope).map_err($err)
        }
        fn backend_name(&self) -> &'static str {
            $name
        }
    };
}

impl SessionStore for SessionDb {
    forward_store!("sqlite", std::convert::identity);
    crate::export::seam::sqlite_export_methods!();

    fn record_gateway_session_peer(&self, session_id: &str, peer: &GatewayPeer) -> Result<()> {
        Self::record_gateway_session_peer(self, session_id, peer)
    }

    fn maybe_auto_archive(&self, options: &AutoArchiveOptions) -> AutoArchiveReport {
        Self::maybe_auto_archive(self, options)
    }

    fn maybe_auto_prune_and_vacuum(&self, options: &AutoPruneOptions) -> AutoPruneReport {
        Self::maybe_auto_prune_and_vacuum(self, options)
    }

    fn as_sqlite(&self) -> Option<&SessionDb> {
        Some(self)
    }
}

#[cfg(feature = "postgres")]
impl SessionStore for hermes_state_postgres::PgStore {
    forward_store!("postgres", Error::from);
    crate::export::seam::postgres_export_methods!();

    /// `GatewayPeer` is the facade's type: its fields go over one by one.
    fn record_gateway_session_peer(&self, session_id: &str, peer: &GatewayPeer) -> Result<()> {
        let lookup = PeerLookup {
            source: peer.source.clone(),
            session_key: Some(peer.session_key.clone()),
            user_id: peer.user_id.clone(),
            chat_id: peer.chat_id.clone(),
            chat_type: peer.chat_type.clone(),
            thread_id: peer.thread_id.clone(),
        };
        Self::record_gateway_session_peer(
            self,
            session_id,
            &lookup,
            peer.display_name.as_deref(),
            peer.origin_json.as_deref(),
        )
        .map_err(Error::from)
    }

    /// The options and the report are the facade's types: the fields go
    /// over one by one, and an error becomes the report's `error`.
    fn maybe_auto_archive(&self, options: &AutoArchiveOptions) -> AutoArchiveReport {
        use hermes_state_postgres::AutoRun;
        let mut report = AutoArchiveReport::default();
        match Self::maybe_auto_archive(
            self,
            options.idle_days,
            options.min_interval_hours,
            options.exclude_pinned,
        ) {
            Ok(AutoRun::Skipped) => report.skipped = true,
            Ok(AutoRun::Ran(archived)) => report.archived = archived,
            Err(error) => {
                let error = Error::from(error);
                report.error_kind = Some(error.kind());
                report.error = Some(error.to_string());
            }
        }
        report
    }

    /// The prune half only: `options.vacuum` is not acted on and
    /// `vacuumed` stays `false` (docs/DECISIONS.md).
    fn maybe_auto_prune_and_vacuum(&self, options: &AutoPruneOptions) -> AutoPruneReport {
        use hermes_state_postgres::AutoRun;
        let mut report = AutoPruneReport::default();
        match Self::maybe_auto_prune(
            self,
            options.retention_days,
            options.min_interval_hours,
            options.sessions_dir.as_deref(),
        ) {
            Ok(AutoRun::Skipped) => report.skipped = true,
            Ok(AutoRun::Ran(pruned)) => report.pruned = pruned,
            Err(error) => {
                let error = Error::from(error);
                report.error_kind = Some(error.kind());
                report.error = Some(error.to_string());
            }
        }
        report
    }
}

/// Where a store lives, as a database URL names it.
///
/// `Debug` shows a PostgreSQL location redacted, as everything else does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    /// A SQLite file (`sqlite:PATH`, or a plain path).
    Sqlite(PathBuf),
    /// A PostgreSQL database and schema (`postgres://…`, `postgresql://…`
    /// or a libpq key=value string; `schema=NAME`), parsed.
    Postgres(PostgresUrl),
}

impl StoreLocation {
    /// Reads a database URL: `postgres://…`, `postgresql://…`, a libpq
    /// key=value string (`host=… dbname=…`: text that starts with a
    /// lowercase `name=`), `sqlite:PATH` or a path. Another `scheme://`
    /// or an empty text is refused, never taken as a file name. Errors
    /// never repeat the text (it may hold a password).
    pub fn parse(url: &str) -> Result<StoreLocation> {
        let url = url.trim();
        if url.is_empty() {
            return Err(Error::InvalidInput("the database URL is empty".into()));
        }
        if url.starts_with("postgres://")
            || url.starts_with("postgresql://")
            || looks_like_key_values(url)
        {
            return Ok(StoreLocation::Postgres(PostgresUrl::parse(url)?));
        }
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"))
        {
            if path.is_empty() {
                return Err(Error::InvalidInput("sqlite: needs a path".into()));
            }
            return Ok(StoreLocation::Sqlite(PathBuf::from(path)));
        }
        if looks_like_postgres_typo(url) || holds_a_password(url) {
            return Err(Error::InvalidInput(
                "the database URL is neither a PostgreSQL URL (postgres://… or postgresql://…), \
                 a key=value string nor a file name (it is not shown: it holds a password or \
                 looks like a PostgreSQL URL)"
                    .into(),
            ));
        }
        if let Some((scheme, _)) = url.split_once("://") {
            // Only a scheme-like prefix is repeated, never the rest.
            let scheme = if scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            {
                format!(" {scheme:?}")
            } else {
                String::new()
            };
            return Err(Error::InvalidInput(format!(
                "unknown database URL scheme{scheme}: use postgres://, postgresql:// or sqlite:PATH"
            )));
        }
        Ok(StoreLocation::Sqlite(PathBuf::from(url)))
    }

    /// The location without a password, for messages and files: the
    /// PostgreSQL form is [`PostgresUrl::redacted`].
    pub fn redacted(&self) -> String {
        match self {
            StoreLocation::Sqlite(path) => format!("sqlite:{}", path.display()),
            StoreLocation::Postgres(url) => url.redacted(),
        }
    }

    /// A location as some text names it (a `superseded_by` marker, which
    /// an older release may have written with a password in it), shown
    /// redacted; text that does not parse is not shown at all.
    pub fn redact_text(text: &str) -> String {
        match StoreLocation::parse(text) {
            Ok(location) => location.redacted(),
            Err(_) => "(a location that cannot be read; not shown)".to_owned(),
        }
    }
}

/// `postgres:` or `postgresql:` without `//`: a mistyped URL, which as a
/// file name would be shown (password and all) in every message.
fn looks_like_postgres_typo(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["postgres:", "postgresql:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
}

/// Text naming a secret option (`password=`, `sslpassword=`, …) is never
/// taken as a file name, whose every mention would show it.
fn holds_a_password(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower
        .match_indices("password")
        .any(|(at, word)| lower[at + word.len()..].trim_start().starts_with('='))
        || [
            "scram_client_key",
            "scram_server_key",
            "oauth_client_secret",
        ]
        .iter()
        .any(|option| lower.contains(option))
}

/// Whether the text is a libpq key=value connection string: it starts
/// with a lowercase option name and `=` (`host=db dbname=app`). A file
/// whose name looks so is named `sqlite:PATH` or `./PATH`.
fn looks_like_key_values(text: &str) -> bool {
    let name_end = text
        .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(text.len());
    name_end > 0
        && text.starts_with(|c: char| c.is_ascii_lowercase())
        && text[name_end..].trim_start().starts_with('=')
}

/// A PostgreSQL store's connection settings, parsed (the PostgreSQL
/// backend's `StoreUrl`). `Display` and `Debug` are its redacted form:
/// no password, whatever form it was written in.
#[derive(Clone, PartialEq, Eq)]
pub struct PostgresUrl(PostgresUrlInner);

#[cfg(feature = "postgres")]
type PostgresUrlInner = Box<hermes_state_postgres::StoreUrl>;
/// Without the backend no PostgreSQL location can be made: `parse` refuses.
#[cfg(not(feature = "postgres"))]
type PostgresUrlInner = std::convert::Infallible;

impl PostgresUrl {
    /// Parses a PostgreSQL URL or key=value string (see
    /// [`StoreLocation::parse`]); without the `postgres` feature every
    /// text is refused ([`Error::InvalidInput`]).
    pub fn parse(text: &str) -> Result<PostgresUrl> {
        #[cfg(feature = "postgres")]
        {
            Ok(PostgresUrl(Box::new(
                hermes_state_postgres::StoreUrl::parse(text)?,
            )))
        }
        #[cfg(not(feature = "postgres"))]
        {
            let _ = text;
            Err(Error::InvalidInput(
                "this build has no PostgreSQL support (build with the `postgres` feature)".into(),
            ))
        }
    }

    /// The settings without any secret, as a URL (`postgresql://user@host:port/db?schema=…`).
    pub fn redacted(&self) -> String {
        #[cfg(feature = "postgres")]
        {
            self.0.redacted()
        }
        #[cfg(not(feature = "postgres"))]
        {
            match self.0 {}
        }
    }

    /// The backend's parsed URL.
    #[cfg(feature = "postgres")]
    pub fn store_url(&self) -> &hermes_state_postgres::StoreUrl {
        &self.0
    }
}

impl std::fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl std::fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// Opens the store at `location`, read-only or not.
///
/// SQLite paths open as [`SessionDb::open_with`] does; PostgreSQL URLs need
/// the `postgres` feature (without it [`StoreLocation::parse`] refuses
/// them, never falling back to a SQLite file). An unreachable server is an
/// error of kind `Unavailable`.
pub fn open_store(location: &StoreLocation, read_only: bool) -> Result<Box<dyn SessionStore>> {
    match location {
        StoreLocation::Sqlite(path) => {
            let options = StoreOptions {
                read_only,
                ..StoreOptions::default()
            };
            Ok(Box::new(SessionDb::open_with(path, &options)?))
        }
        StoreLocation::Postgres(url) => open_postgres(url, read_only),
    }
}

#[cfg(feature = "postgres")]
fn open_postgres(url: &PostgresUrl, read_only: bool) -> Result<Box<dyn SessionStore>> {
    use hermes_state_postgres::PgStore;
    let store = if read_only {
        PgStore::open_read_only(url.store_url())?
    } else {
        PgStore::open(url.store_url())?
    };
    Ok(Box::new(store))
}

#[cfg(not(feature = "postgres"))]
fn open_postgres(url: &PostgresUrl, _read_only: bool) -> Result<Box<dyn SessionStore>> {
    match url.0 {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_one_backend_or_are_refused() {
        assert!(matches!(
            StoreLocation::parse("postgresql://u:pw@h:5/db?schema=a").unwrap(),
            StoreLocation::Postgres(_)
        ));
        assert!(matches!(
            StoreLocation::parse("host=h user=u password=pw schema=a").unwrap(),
            StoreLocation::Postgres(_)
        ));
        assert_eq!(
            StoreLocation::parse("./host=h").unwrap(),
            StoreLocation::Sqlite("./host=h".into())
        );
        assert_eq!(
            StoreLocation::parse("sqlite:/tmp/x.db").unwrap(),
            StoreLocation::Sqlite("/tmp/x.db".into())
        );
        assert_eq!(
            StoreLocation::parse("state.db").unwrap(),
            StoreLocation::Sqlite("state.db".into())
        );
        for bad in [
            "",
            "  ",
            "mysql://h/db",
            "sqlite:",
            "host=h bogus=1",
            "postgres:/alice:secret@h/db",
            "@host=h password=secret",
        ] {
            assert_eq!(
                StoreLocation::parse(bad).unwrap_err().kind(),
                hermes_state_types::ErrorKind::InvalidInput,
                "{bad:?}"
            );
        }
        assert_eq!(
            StoreLocation::parse("postgres://u:secret@h/db?schema=a")
                .unwrap()
                .redacted(),
            "postgresql://u@h:5432/db?schema=a"
        );
        let location = StoreLocation::parse("postgres://u:secret@h/db?schema=a").unwrap();
        assert!(!format!("{location:?}").contains("secret"));
        assert_eq!(
            StoreLocation::redact_text("postgres://alice:pa/ss@host/db"),
            "postgresql://alice@host:5432/db?schema=hermes"
        );
        assert!(!StoreLocation::redact_text("postgres://alice:pa@ss@host/db").contains("ss@"));
    }
}
