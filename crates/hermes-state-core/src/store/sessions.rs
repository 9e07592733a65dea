//! The `Sessions` part of the contract: creating, ending and reading
//! sessions, and the updates of their columns (`api.md` §2; the handoff state
//! machine and the compression-failure helpers included).

use crate::error::Result;
use crate::session_updates::{CompressionCooldown, HandoffState};
use crate::sessions::SessionCountOptions;
use hermes_state_types::{NewSession, Session};

/// §2: creating, ending and reading sessions, and the updates of their columns
/// (`api.md` §2; the handoff state machine and the compression-failure helpers
/// included).
///
/// Every method has the SQLite store's meaning (`api.md`); a backend that
/// cannot offer one says so with an error, never with an empty answer.
pub trait Sessions {
    /// `api.md` §2.1.
    fn create_session(&self, session: &NewSession) -> Result<String>;
    /// `api.md` §2.2.
    fn end_session(&self, session_id: &str, end_reason: &str) -> Result<()>;
    /// `api.md` §2.3.
    fn reopen_session(&self, session_id: &str) -> Result<()>;
    /// `api.md` §2.4.
    fn get_session(&self, session_id: &str) -> Result<Option<Session>>;
    /// `api.md` §2.4: by default the sessions that are not archived.
    fn session_count(&self, options: &SessionCountOptions) -> Result<i64>;
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
    /// `api.md` §2.1: creates the session if it is missing.
    fn ensure_session(&self, session_id: &str, source: &str, model: Option<&str>)
    -> Result<String>;
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
    /// `api.md` §2.5 (never fails: errors give `false`).
    fn promote_to_session_reset(&self, session_id: &str, reason: &str) -> bool;
    /// `api.md` §2.5.
    fn finalize_orphaned_compression_sessions(&self) -> Result<usize>;
    /// `api.md` §2.5: `(cwd, root)` pairs fill missing roots only.
    fn backfill_repo_roots(&self, roots: &[(&str, &str)]) -> Result<()>;
    /// `api.md` §2.4.
    fn resolve_session_id(&self, id_or_prefix: &str) -> Result<Option<String>>;
}
