//! The v23 columns of the tables a reader reads (`schema-v23.md` §4), in
//! table order, with the literal a missing column reads as: the one list
//! every backend names them from (the SQLite read crate's `compat` shims
//! older files with it; the PostgreSQL backend selects its columns by these
//! names).
//!
//! The defaults are SQLite's stored defaults of the v23 DDL (`active` → 1,
//! `compacted` → 0, counters → 0, the rest NULL), transcribed from the spec
//! on purpose, not taken from the schema crate: the read side must describe
//! the file it reads, not the writer's DDL.

/// One v23 column: its name and the literal a missing column reads as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V23Column {
    /// Column name.
    pub name: &'static str,
    /// SQL literal of its stored default (`schema-v23.md` §4), `NULL` when none.
    pub default: &'static str,
}

const fn col(name: &'static str, default: &'static str) -> V23Column {
    V23Column { name, default }
}

/// The names of `columns`, in order, as an array: the one list of a v23
/// table's columns, for code that selects them by name (the PostgreSQL
/// backend). `N` must be the number of columns (checked when compiled).
pub const fn column_names<const N: usize>(columns: &[V23Column]) -> [&'static str; N] {
    assert!(columns.len() == N, "N must be the table's column count");
    let mut names = [""; N];
    let mut i = 0;
    while i < N {
        names[i] = columns[i].name;
        i += 1;
    }
    names
}

/// `sessions` (`schema-v23.md` §4.2), 48 columns in v23 order.
pub const SESSIONS: &[V23Column] = &[
    col("id", "NULL"),
    col("source", "NULL"),
    col("user_id", "NULL"),
    col("session_key", "NULL"),
    col("chat_id", "NULL"),
    col("chat_type", "NULL"),
    col("thread_id", "NULL"),
    col("display_name", "NULL"),
    col("origin_json", "NULL"),
    col("expiry_finalized", "0"),
    col("model", "NULL"),
    col("model_config", "NULL"),
    col("system_prompt", "NULL"),
    col("parent_session_id", "NULL"),
    col("started_at", "NULL"),
    col("ended_at", "NULL"),
    col("end_reason", "NULL"),
    col("message_count", "0"),
    col("tool_call_count", "0"),
    col("input_tokens", "0"),
    col("output_tokens", "0"),
    col("cache_read_tokens", "0"),
    col("cache_write_tokens", "0"),
    col("reasoning_tokens", "0"),
    col("cwd", "NULL"),
    col("git_branch", "NULL"),
    col("git_repo_root", "NULL"),
    col("billing_provider", "NULL"),
    col("billing_base_url", "NULL"),
    col("billing_mode", "NULL"),
    col("estimated_cost_usd", "NULL"),
    col("actual_cost_usd", "NULL"),
    col("cost_status", "NULL"),
    col("cost_source", "NULL"),
    col("pricing_version", "NULL"),
    col("title", "NULL"),
    col("api_call_count", "0"),
    col("handoff_state", "NULL"),
    col("handoff_platform", "NULL"),
    col("handoff_error", "NULL"),
    col("compression_failure_cooldown_until", "NULL"),
    col("compression_failure_error", "NULL"),
    col("compression_fallback_streak", "0"),
    col("compression_ineffective_count", "0"),
    col("profile_name", "NULL"),
    col("rewind_count", "0"),
    col("archived", "0"),
    col("pinned", "0"),
];

/// `messages` (`schema-v23.md` §4.3), 23 columns in v23 order.
pub const MESSAGES: &[V23Column] = &[
    col("id", "NULL"),
    col("session_id", "NULL"),
    col("role", "NULL"),
    col("content", "NULL"),
    col("tool_call_id", "NULL"),
    col("tool_calls", "NULL"),
    col("tool_name", "NULL"),
    col("effect_disposition", "NULL"),
    col("timestamp", "NULL"),
    col("token_count", "NULL"),
    col("finish_reason", "NULL"),
    col("reasoning", "NULL"),
    col("reasoning_content", "NULL"),
    col("reasoning_details", "NULL"),
    col("codex_reasoning_items", "NULL"),
    col("codex_message_items", "NULL"),
    col("platform_message_id", "NULL"),
    col("observed", "0"),
    col("active", "1"),
    col("compacted", "0"),
    col("api_content", "NULL"),
    col("display_kind", "NULL"),
    col("display_metadata", "NULL"),
];

/// `session_model_usage` (`schema-v23.md` §4.4), 18 columns in v23 order.
pub const SESSION_MODEL_USAGE: &[V23Column] = &[
    col("session_id", "NULL"),
    col("model", "NULL"),
    col("billing_provider", "''"),
    col("billing_base_url", "''"),
    col("billing_mode", "''"),
    col("task", "''"),
    col("api_call_count", "0"),
    col("input_tokens", "0"),
    col("output_tokens", "0"),
    col("cache_read_tokens", "0"),
    col("cache_write_tokens", "0"),
    col("reasoning_tokens", "0"),
    col("estimated_cost_usd", "0"),
    col("actual_cost_usd", "0"),
    col("cost_status", "NULL"),
    col("cost_source", "NULL"),
    col("first_seen", "NULL"),
    col("last_seen", "NULL"),
];

/// `state_meta` (`schema-v23.md` §4.5).
pub const STATE_META: &[V23Column] = &[col("key", "NULL"), col("value", "NULL")];
