//! Rows to the shared domain types, by column name.

use hermes_state_core::compat;
use hermes_state_types::{Message, Session, stored};
use postgres::Row;

use crate::content;

/// The columns of `sessions`, in table order (`schema-v23.md` §4.2): the
/// contract crate's list, the one the SQLite side reads by.
pub const SESSION_COLUMNS: [&str; 48] = compat::column_names(compat::SESSIONS);

/// The columns of `messages`, in table order (`schema-v23.md` §4.3).
pub const MESSAGE_COLUMNS: [&str; 23] = compat::column_names(compat::MESSAGES);

/// `SELECT` list of the given columns, each prefixed by `alias.`.
pub fn select_list(alias: &str, columns: &[&str]) -> String {
    columns
        .iter()
        .map(|c| format!("{alias}.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A session from a row selected with [`SESSION_COLUMNS`].
pub fn session_from_row(row: &Row) -> Session {
    Session {
        id: row.get("id"),
        source: row.get("source"),
        user_id: row.get("user_id"),
        session_key: row.get("session_key"),
        chat_id: row.get("chat_id"),
        chat_type: row.get("chat_type"),
        thread_id: row.get("thread_id"),
        display_name: row.get("display_name"),
        origin_json: row.get("origin_json"),
        expiry_finalized: row.get("expiry_finalized"),
        model: row.get("model"),
        model_config: row.get("model_config"),
        system_prompt: row.get("system_prompt"),
        parent_session_id: row.get("parent_session_id"),
        started_at: row.get("started_at"),
        ended_at: row.get("ended_at"),
        end_reason: row.get("end_reason"),
        message_count: row.get("message_count"),
        tool_call_count: row.get("tool_call_count"),
        input_tokens: row.get("input_tokens"),
        output_tokens: row.get("output_tokens"),
        cache_read_tokens: row.get("cache_read_tokens"),
        cache_write_tokens: row.get("cache_write_tokens"),
        reasoning_tokens: row.get("reasoning_tokens"),
        cwd: row.get("cwd"),
        git_branch: row.get("git_branch"),
        git_repo_root: row.get("git_repo_root"),
        billing_provider: row.get("billing_provider"),
        billing_base_url: row.get("billing_base_url"),
        billing_mode: row.get("billing_mode"),
        estimated_cost_usd: row.get("estimated_cost_usd"),
        actual_cost_usd: row.get("actual_cost_usd"),
        cost_status: row.get("cost_status"),
        cost_source: row.get("cost_source"),
        pricing_version: row.get("pricing_version"),
        title: row.get("title"),
        api_call_count: row.get("api_call_count"),
        handoff_state: row.get("handoff_state"),
        handoff_platform: row.get("handoff_platform"),
        handoff_error: row.get("handoff_error"),
        compression_failure_cooldown_until: row.get("compression_failure_cooldown_until"),
        compression_failure_error: row.get("compression_failure_error"),
        compression_fallback_streak: row.get("compression_fallback_streak"),
        compression_ineffective_count: row.get("compression_ineffective_count"),
        profile_name: row.get("profile_name"),
        rewind_count: row.get("rewind_count"),
        archived: row.get("archived"),
        pinned: row.get("pinned"),
        extra: Default::default(),
    }
}

/// A message from a row selected with [`MESSAGE_COLUMNS`], decoded as
/// `get_messages` returns it (`api.md` §5.1).
pub fn message_from_row(row: &Row) -> Message {
    let stored_content = content::from_pg(row.get("content"));
    let tool_calls: Option<String> = row.get("tool_calls");
    let tool_calls = tool_calls.map(stored::StoredValue::Text);
    Message {
        id: row.get("id"),
        session_id: row.get("session_id"),
        role: row.get("role"),
        content: stored::decode_content(stored_content.as_ref()),
        tool_call_id: row.get("tool_call_id"),
        tool_calls: tool_calls.and_then(|t| stored::decode_tool_calls(t.as_ref())),
        tool_name: row.get("tool_name"),
        effect_disposition: row.get("effect_disposition"),
        timestamp: row.get("timestamp"),
        token_count: row.get("token_count"),
        finish_reason: row.get("finish_reason"),
        reasoning: row.get("reasoning"),
        reasoning_content: row.get("reasoning_content"),
        reasoning_details: row.get("reasoning_details"),
        codex_reasoning_items: row.get("codex_reasoning_items"),
        codex_message_items: row.get("codex_message_items"),
        platform_message_id: row.get("platform_message_id"),
        observed: row.get("observed"),
        active: row.get("active"),
        compacted: row.get("compacted"),
        api_content: row.get("api_content"),
        display_kind: row.get("display_kind"),
        display_metadata: row.get("display_metadata"),
        extra: Default::default(),
    }
}
