//! What every section shares: the original's keyword lists, readers of
//! its composite arguments, and the conversions of answers.

pub(super) use std::path::PathBuf;

pub(super) use hermes_state_types::dynamic::{
    content_from_json, new_message_from_dict, python_float, python_truthy,
};
pub(super) use serde_json::Value;

pub(super) use super::kwargs::python_type;
pub(super) use crate::{
    ArchiveSelection, AutoArchiveOptions, AutoPruneOptions, AuxiliaryUsage, GatewayPeer,
    MessagePage, NewMessage, NewSession, PeerLookup, PruneFilters, PruneOptions, RichListOptions,
    SearchOptions, SessionCountOptions, SessionDb, SessionStore, TokenUpdate, TopicBindingRequest,
};
use serde::Serialize;

use super::kwargs::{Args, Call, CallError};
use crate::backend::AsSqlite;

/// The original's answer of a method returning nothing.
pub(super) const NONE: Value = Value::Null;

/// An answer as the original's value: the library's types serialise to the
/// original's dicts.
pub(super) fn json(value: impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_else(|error| {
        // Every answer type serialises to JSON; keep a broken one visible
        // as an error text rather than a panic across a binding.
        Value::String(format!("unserialisable answer: {error}"))
    })
}

/// `create_session`'s keywords (the original's session-row writer).
pub(super) const SESSION_ROW_KEYS: [&str; 14] = [
    "session_id",
    "source",
    "model",
    "model_config",
    "system_prompt",
    "user_id",
    "session_key",
    "chat_id",
    "chat_type",
    "thread_id",
    "parent_session_id",
    "cwd",
    "profile_name",
    "git_repo_root",
];

pub(super) const TOKEN_KEYS: [&str; 17] = [
    "session_id",
    "input_tokens",
    "output_tokens",
    "model",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "estimated_cost_usd",
    "actual_cost_usd",
    "cost_status",
    "cost_source",
    "pricing_version",
    "billing_provider",
    "billing_base_url",
    "billing_mode",
    "api_call_count",
    "absolute",
];

pub(super) const MESSAGE_KEYS: [&str; 20] = [
    "session_id",
    "role",
    "content",
    "tool_name",
    "tool_calls",
    "tool_call_id",
    "token_count",
    "finish_reason",
    "reasoning",
    "reasoning_content",
    "reasoning_details",
    "codex_reasoning_items",
    "codex_message_items",
    "platform_message_id",
    "observed",
    "effect_disposition",
    "timestamp",
    "api_content",
    "display_kind",
    "display_metadata",
];

/// The keyword filters of the prune family (the original's filter builder).
pub(super) const PRUNE_FILTER_KEYS: [&str; 20] = [
    "started_before",
    "started_after",
    "title_like",
    "end_reason",
    "cwd_prefix",
    "min_messages",
    "max_messages",
    "archived",
    "model_like",
    "provider",
    "user_id",
    "chat_id",
    "chat_type",
    "branch_like",
    "min_tokens",
    "max_tokens",
    "min_cost",
    "max_cost",
    "min_tool_calls",
    "max_tool_calls",
];

/// `older_than_days`, `source` and the filters of the prune family;
/// `default_age` is `prune_sessions`' 90 days (the others have none).
pub(super) fn prune_options(args: &Args<'_>, default_age: Option<f64>) -> Call<PruneOptions> {
    let mut known: Vec<&str> = vec!["older_than_days", "source", "sessions_dir"];
    known.extend(PRUNE_FILTER_KEYS);
    if let Err(CallError::Boundary { message, .. }) = args.only(&known) {
        // The original reports the filter builder as the caller.
        let keyword = message.rsplit(' ').next().unwrap_or_default().to_owned();
        return Err(CallError::type_error(format!(
            "SessionDB._prune_filter_where() got an unexpected keyword argument {keyword}"
        )));
    }
    let older_than_days = match args.get("older_than_days") {
        None => default_age,
        Some(_) => args.opt_f64("older_than_days")?,
    };
    let filters = PruneFilters {
        started_before: args.opt_f64("started_before")?,
        started_after: args.opt_f64("started_after")?,
        title_like: owned(args.opt_str("title_like")?),
        end_reason: owned(args.opt_str("end_reason")?),
        cwd_prefix: owned(args.opt_str("cwd_prefix")?),
        min_messages: args.opt_i64("min_messages")?,
        max_messages: args.opt_i64("max_messages")?,
        archived: args
            .present("archived")
            .map(hermes_state_types::dynamic::python_truthy),
        model_like: owned(args.opt_str("model_like")?),
        provider: owned(args.opt_str("provider")?),
        user_id: owned(args.opt_str("user_id")?),
        chat_id: owned(args.opt_str("chat_id")?),
        chat_type: owned(args.opt_str("chat_type")?),
        branch_like: owned(args.opt_str("branch_like")?),
        min_tokens: args.opt_i64("min_tokens")?,
        max_tokens: args.opt_i64("max_tokens")?,
        min_cost: args.opt_f64("min_cost")?,
        max_cost: args.opt_f64("max_cost")?,
        min_tool_calls: args.opt_i64("min_tool_calls")?,
        max_tool_calls: args.opt_i64("max_tool_calls")?,
    };
    Ok(PruneOptions {
        older_than_days,
        source: owned(args.opt_str("source")?),
        filters,
        sessions_dir: sessions_dir(args)?,
        ..PruneOptions::default()
    })
}

/// The transcript folder a cleanup removes files from (`sessions_dir`, a
/// path as text; absent or `None`: no files are touched).
pub(super) fn sessions_dir(args: &Args<'_>) -> Call<Option<PathBuf>> {
    Ok(args.opt_str("sessions_dir")?.map(PathBuf::from))
}

/// `delete_sessions`' ids: the strings of the list; other entries are
/// ignored, as the original ignores them (`api.md` §11.6).
pub(super) fn session_ids(args: &Args<'_>) -> Call<Vec<String>> {
    match args.present("session_ids") {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect()),
        Some(other) => Err(CallError::type_error(format!(
            "{} object is not iterable",
            python_type(other)
        ))),
    }
}

/// A list of message dicts, read as the original reads each one.
pub(super) fn message_dicts(session_id: &str, messages: Option<&Value>) -> Call<Vec<NewMessage>> {
    match messages {
        Some(Value::Array(items)) => Ok(items
            .iter()
            .map(|item| new_message_from_dict(session_id, item))
            .collect()),
        Some(Value::Null) | None => Ok(Vec::new()),
        Some(other) => Err(CallError::type_error(format!(
            "{} object is not iterable",
            python_type(other)
        ))),
    }
}

/// The original's NOT NULL failure of a row written without a required value.
pub(super) fn not_null(column: &str) -> CallError {
    CallError::Boundary {
        kind: "integrity.not_null",
        message: format!("NOT NULL constraint failed: {column}"),
    }
}

pub(super) fn string(value: &Value) -> Call<&str> {
    value
        .as_str()
        .ok_or_else(|| CallError::type_error(format!("expected str, got {}", python_type(value))))
}

/// The SQLite file's own operations (maintenance of the file, closing the
/// handle): not part of the store contract, so a server backend has none.
pub(super) fn file_only<'s>(store: &'s dyn SessionStore, op: &str) -> Call<&'s SessionDb> {
    store.as_sqlite().ok_or_else(|| CallError::Boundary {
        kind: FILE_ONLY,
        message: format!("{op} is an operation of the SQLite file"),
    })
}

/// The kind of a file-only operation asked of a server backend.
pub const FILE_ONLY: &str = "backend.file_only";

pub(super) fn borrowed(items: &[String]) -> Vec<&str> {
    items.iter().map(String::as_str).collect()
}

pub(super) fn borrowed_pairs(pairs: &[(String, String)]) -> Vec<(&str, &str)> {
    pairs
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect()
}

pub(super) fn owned(text: Option<&str>) -> Option<String> {
    text.map(str::to_owned)
}
