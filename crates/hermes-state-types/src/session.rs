use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ExtraColumns;

/// One row of `sessions`, as the original's `get_session` returns it.
///
/// Every v23 column has a field, in table order; columns written by other builds
/// (older off-main releases, v24+) land in [`Session::extra`] so nothing is lost.
/// `model_config` is the raw JSON text as stored, like the original returns it.
#[allow(missing_docs)] // the fields are the columns of schema-v23.md §4.2
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Session {
    pub id: String,
    pub source: String,
    pub user_id: Option<String>,
    pub session_key: Option<String>,
    pub chat_id: Option<String>,
    pub chat_type: Option<String>,
    pub thread_id: Option<String>,
    pub display_name: Option<String>,
    pub origin_json: Option<String>,
    pub expiry_finalized: Option<i64>,
    pub model: Option<String>,
    pub model_config: Option<String>,
    pub system_prompt: Option<String>,
    pub parent_session_id: Option<String>,
    pub started_at: f64,
    pub ended_at: Option<f64>,
    pub end_reason: Option<String>,
    pub message_count: Option<i64>,
    pub tool_call_count: Option<i64>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub cache_read_tokens: Option<i64>,
    pub cache_write_tokens: Option<i64>,
    pub reasoning_tokens: Option<i64>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub git_repo_root: Option<String>,
    pub billing_provider: Option<String>,
    pub billing_base_url: Option<String>,
    pub billing_mode: Option<String>,
    pub estimated_cost_usd: Option<f64>,
    pub actual_cost_usd: Option<f64>,
    pub cost_status: Option<String>,
    pub cost_source: Option<String>,
    pub pricing_version: Option<String>,
    pub title: Option<String>,
    pub api_call_count: Option<i64>,
    pub handoff_state: Option<String>,
    pub handoff_platform: Option<String>,
    pub handoff_error: Option<String>,
    pub compression_failure_cooldown_until: Option<f64>,
    pub compression_failure_error: Option<String>,
    pub compression_fallback_streak: i64,
    pub compression_ineffective_count: i64,
    pub profile_name: Option<String>,
    pub rewind_count: i64,
    pub archived: i64,
    pub pinned: i64,
    /// Columns the v23 schema does not declare, by name, in table order.
    #[serde(flatten)]
    pub extra: ExtraColumns,
}

/// The arguments of `create_session` (`api.md` §2.1).
///
/// Only `id` and `source` are required; every other field defaults to NULL.
/// Build it with [`NewSession::new`] and the setters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NewSession {
    /// Caller-chosen id (any string, the empty one included).
    pub id: String,
    /// The platform the session comes from (`cli`, `telegram`, ...).
    pub source: String,
    /// Model id.
    pub model: Option<String>,
    /// Model configuration; stored as Python-compatible JSON text when "truthy"
    /// (a non-empty object, array or string, a non-zero number, `true`).
    pub model_config: Option<Value>,
    /// System prompt snapshot.
    pub system_prompt: Option<String>,
    /// Platform user id.
    pub user_id: Option<String>,
    /// Gateway routing key.
    pub session_key: Option<String>,
    /// Gateway chat or room.
    pub chat_id: Option<String>,
    /// Chat type, e.g. `dm`.
    pub chat_type: Option<String>,
    /// Gateway thread.
    pub thread_id: Option<String>,
    /// The session this one continues (lineage link); must exist.
    pub parent_session_id: Option<String>,
    /// Working directory.
    pub cwd: Option<String>,
    /// Profile name.
    pub profile_name: Option<String>,
    /// Repository root of `cwd`.
    pub git_repo_root: Option<String>,
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty),* $(,)?) => {
        $(
            $(#[$doc])*
            #[must_use]
            pub fn $name(mut self, value: impl Into<$ty>) -> Self {
                self.$name = Some(value.into());
                self
            }
        )*
    };
}

impl NewSession {
    /// A session with this id and source and every other field NULL.
    pub fn new(id: impl Into<String>, source: impl Into<String>) -> Self {
        NewSession {
            id: id.into(),
            source: source.into(),
            ..Default::default()
        }
    }

    setters! {
        /// Sets `model`.
        model: String,
        /// Sets `model_config`.
        model_config: Value,
        /// Sets `system_prompt`.
        system_prompt: String,
        /// Sets `user_id`.
        user_id: String,
        /// Sets `session_key`.
        session_key: String,
        /// Sets `chat_id`.
        chat_id: String,
        /// Sets `chat_type`.
        chat_type: String,
        /// Sets `thread_id`.
        thread_id: String,
        /// Sets `parent_session_id` (lineage).
        parent_session_id: String,
        /// Sets `cwd`.
        cwd: String,
        /// Sets `profile_name`.
        profile_name: String,
        /// Sets `git_repo_root`.
        git_repo_root: String,
    }
}

/// The arguments of `update_token_counts` (`api.md` §3.1).
///
/// Counts are deltas unless [`TokenUpdate::absolute`] is set, in which case
/// they replace the session's totals (and no usage row is written).
#[allow(missing_docs)] // the fields are the keyword arguments of api.md §3.1
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TokenUpdate {
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub model: Option<String>,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub reasoning_tokens: i64,
    pub estimated_cost_usd: Option<f64>,
    pub actual_cost_usd: Option<f64>,
    pub cost_status: Option<String>,
    pub cost_source: Option<String>,
    pub pricing_version: Option<String>,
    pub billing_provider: Option<String>,
    pub billing_base_url: Option<String>,
    pub billing_mode: Option<String>,
    pub api_call_count: i64,
    pub absolute: bool,
}

impl TokenUpdate {
    /// Whether the update carries any usage: a non-zero count or a cost.
    pub fn has_usage(&self) -> bool {
        self.input_tokens != 0
            || self.output_tokens != 0
            || self.cache_read_tokens != 0
            || self.cache_write_tokens != 0
            || self.reasoning_tokens != 0
            || self.api_call_count != 0
            || self.estimated_cost_usd.is_some_and(|c| c != 0.0)
            || self.actual_cost_usd.is_some_and(|c| c != 0.0)
    }
}

/// The arguments of `record_auxiliary_usage` (`api.md` §3.2): usage of an
/// auxiliary task (vision, compression, ...) that never touches the session's counters.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AuxiliaryUsage {
    pub task: String,
    pub model: Option<String>,
    pub billing_provider: Option<String>,
    pub billing_base_url: Option<String>,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub reasoning_tokens: i64,
    pub estimated_cost_usd: Option<f64>,
}
