//! Mapping rows of `sessions` and `messages` to the domain types, by column
//! name: upgraded files have their columns in other orders and may carry
//! columns of other builds, which land in `extra`.

use hermes_state_types::{Content, Message, Session, stored};
use rusqlite::Row;
use rusqlite::types::ValueRef;
use serde_json::Value;

use crate::values::{self, integer, json, real, text};

/// Builds a [`Session`] from a `SELECT *` (or wider) row of `sessions`.
/// `columns` are the statement's column names.
pub fn session_from_row(row: &Row<'_>, columns: &[String]) -> rusqlite::Result<Session> {
    let mut session = Session::default();
    for (index, name) in columns.iter().enumerate() {
        let value = row.get_ref(index)?;
        if !set_session_field(&mut session, name, value) {
            session.extra.insert(name.clone(), json(value));
        }
    }
    Ok(session)
}

fn set_session_field(s: &mut Session, name: &str, v: ValueRef<'_>) -> bool {
    match name {
        "id" => s.id = text(v).unwrap_or_default(),
        "source" => s.source = text(v).unwrap_or_default(),
        "user_id" => s.user_id = text(v),
        "session_key" => s.session_key = text(v),
        "chat_id" => s.chat_id = text(v),
        "chat_type" => s.chat_type = text(v),
        "thread_id" => s.thread_id = text(v),
        "display_name" => s.display_name = text(v),
        "origin_json" => s.origin_json = text(v),
        "expiry_finalized" => s.expiry_finalized = integer(v),
        "model" => s.model = text(v),
        "model_config" => s.model_config = text(v),
        "system_prompt" => s.system_prompt = text(v),
        "parent_session_id" => s.parent_session_id = text(v),
        "started_at" => s.started_at = real(v).unwrap_or_default(),
        "ended_at" => s.ended_at = real(v),
        "end_reason" => s.end_reason = text(v),
        "message_count" => s.message_count = integer(v),
        "tool_call_count" => s.tool_call_count = integer(v),
        "input_tokens" => s.input_tokens = integer(v),
        "output_tokens" => s.output_tokens = integer(v),
        "cache_read_tokens" => s.cache_read_tokens = integer(v),
        "cache_write_tokens" => s.cache_write_tokens = integer(v),
        "reasoning_tokens" => s.reasoning_tokens = integer(v),
        "cwd" => s.cwd = text(v),
        "git_branch" => s.git_branch = text(v),
        "git_repo_root" => s.git_repo_root = text(v),
        "billing_provider" => s.billing_provider = text(v),
        "billing_base_url" => s.billing_base_url = text(v),
        "billing_mode" => s.billing_mode = text(v),
        "estimated_cost_usd" => s.estimated_cost_usd = real(v),
        "actual_cost_usd" => s.actual_cost_usd = real(v),
        "cost_status" => s.cost_status = text(v),
        "cost_source" => s.cost_source = text(v),
        "pricing_version" => s.pricing_version = text(v),
        "title" => s.title = text(v),
        "api_call_count" => s.api_call_count = integer(v),
        "handoff_state" => s.handoff_state = text(v),
        "handoff_platform" => s.handoff_platform = text(v),
        "handoff_error" => s.handoff_error = text(v),
        "compression_failure_cooldown_until" => s.compression_failure_cooldown_until = real(v),
        "compression_failure_error" => s.compression_failure_error = text(v),
        "compression_fallback_streak" => s.compression_fallback_streak = integer(v).unwrap_or(0),
        "compression_ineffective_count" => {
            s.compression_ineffective_count = integer(v).unwrap_or(0)
        }
        "profile_name" => s.profile_name = text(v),
        "rewind_count" => s.rewind_count = integer(v).unwrap_or(0),
        "archived" => s.archived = integer(v).unwrap_or(0),
        "pinned" => s.pinned = integer(v).unwrap_or(0),
        _ => return false,
    }
    true
}

/// Builds a [`Message`] from a `SELECT *` row of `messages`, decoded as the
/// original's `get_messages` does: content decoded, `tool_calls` parsed
/// (invalid JSON → `[]`), other JSON columns raw.
pub fn message_from_row(row: &Row<'_>, columns: &[String]) -> rusqlite::Result<Message> {
    let mut message = Message::default();
    for (index, name) in columns.iter().enumerate() {
        let value = row.get_ref(index)?;
        if !set_message_field(&mut message, name, value) {
            message.extra.insert(name.clone(), json(value));
        }
    }
    Ok(message)
}

fn set_message_field(m: &mut Message, name: &str, v: ValueRef<'_>) -> bool {
    match name {
        "id" => m.id = integer(v).unwrap_or_default(),
        "session_id" => m.session_id = text(v).unwrap_or_default(),
        "role" => m.role = text(v).unwrap_or_default(),
        "content" => m.content = decode_content(v),
        "tool_call_id" => m.tool_call_id = text(v),
        "tool_calls" => m.tool_calls = decode_tool_calls(v),
        "tool_name" => m.tool_name = text(v),
        "effect_disposition" => m.effect_disposition = text(v),
        "timestamp" => m.timestamp = real(v).unwrap_or_default(),
        "token_count" => m.token_count = integer(v),
        "finish_reason" => m.finish_reason = text(v),
        "reasoning" => m.reasoning = text(v),
        "reasoning_content" => m.reasoning_content = text(v),
        "reasoning_details" => m.reasoning_details = text(v),
        "codex_reasoning_items" => m.codex_reasoning_items = text(v),
        "codex_message_items" => m.codex_message_items = text(v),
        "platform_message_id" => m.platform_message_id = text(v),
        "observed" => m.observed = integer(v),
        "active" => m.active = integer(v).unwrap_or(1),
        "compacted" => m.compacted = integer(v).unwrap_or(0),
        "api_content" => m.api_content = text(v),
        "display_kind" => m.display_kind = text(v),
        "display_metadata" => m.display_metadata = text(v),
        _ => return false,
    }
    true
}

/// Decodes a stored content value (`api.md` §5.1) with the types crate's
/// codec ([`stored::decode_content`]).
pub fn decode_content(value: ValueRef<'_>) -> Option<Content> {
    stored::decode_content(values::stored(value))
}

/// Parses stored `tool_calls` with the types crate's codec
/// ([`stored::decode_tool_calls`]): non-empty text is parsed as JSON (invalid
/// → `[]`); the empty string stays a string, as in the original.
pub fn decode_tool_calls(value: ValueRef<'_>) -> Option<Value> {
    stored::decode_tool_calls(values::stored(value))
}
