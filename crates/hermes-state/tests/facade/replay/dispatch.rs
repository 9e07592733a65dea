//! One recorded call, made through `SessionDb`'s public API.
//!
//! Each arm reads the original's keyword arguments with the original's
//! defaults (`api.md`, the original's signatures), calls
//! the method of the same name, and turns its answer into the original's
//! value with serde: the library's types serialise to the original's dicts,
//! so nothing here reshapes an answer. Arguments only Python can express are
//! read by the library's own readers of loose values
//! (`hermes_state_types::dynamic`), as a Python binding would.

use std::path::Path;

use hermes_state::{
    ArchiveSelection, AutoArchiveOptions, AutoPruneOptions, AuxiliaryUsage, GatewayPeer,
    MessagePage, NewMessage, NewSession, PeerLookup, PruneFilters, PruneOptions, RichListOptions,
    SearchOptions, SessionCountOptions, SessionDb, SessionStore, TokenUpdate,
};
use hermes_state_types::dynamic::{content_from_json, new_message_from_dict, python_float};
use serde::Serialize;
use serde_json::Value;

use super::args::{Args, Call, CallError};

/// The original's answer of a method returning nothing.
const NONE: Value = Value::Null;

fn json(value: impl Serialize) -> Value {
    serde_json::to_value(value).expect("every answer serialises")
}

/// Makes one call; the answer as the trace records it.
pub fn call(db: &dyn SessionStore, op: &str, args: &Args<'_>) -> Call<Value> {
    match op {
        // api.md §2.1: sessions
        "create_session" => {
            args.only(&SESSION_ROW_KEYS)?;
            let Some(source) = args.present("source") else {
                return Err(not_null("sessions.source"));
            };
            let mut session = NewSession::new(args.str("session_id")?, string(source)?);
            session.model = owned(args.opt_str("model")?);
            session.model_config = args.present("model_config").cloned();
            session.system_prompt = owned(args.opt_str("system_prompt")?);
            session.user_id = owned(args.opt_str("user_id")?);
            session.session_key = owned(args.opt_str("session_key")?);
            session.chat_id = owned(args.opt_str("chat_id")?);
            session.chat_type = owned(args.opt_str("chat_type")?);
            session.thread_id = owned(args.opt_str("thread_id")?);
            session.parent_session_id = owned(args.opt_str("parent_session_id")?);
            session.cwd = owned(args.opt_str("cwd")?);
            session.profile_name = owned(args.opt_str("profile_name")?);
            session.git_repo_root = owned(args.opt_str("git_repo_root")?);
            Ok(json(db.create_session(&session)?))
        }
        "ensure_session" => {
            args.only(&["session_id", "source", "model"])?;
            let source = args.opt_str("source")?.unwrap_or("unknown");
            Ok(json(db.ensure_session(
                args.str("session_id")?,
                source,
                args.opt_str("model")?,
            )?))
        }
        "end_session" => {
            args.only(&["session_id", "end_reason"])?;
            db.end_session(args.str("session_id")?, args.str("end_reason")?)?;
            Ok(NONE)
        }
        "reopen_session" => {
            args.only(&["session_id"])?;
            db.reopen_session(args.str("session_id")?)?;
            Ok(NONE)
        }
        // api.md §2.4: reads
        "get_session" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_session(args.str("session_id")?)?))
        }
        "resolve_session_id" => {
            args.only(&["session_id_or_prefix"])?;
            Ok(json(
                db.resolve_session_id(args.str("session_id_or_prefix")?)?,
            ))
        }
        "session_count" => {
            args.only(&[
                "source",
                "cwd_prefix",
                "min_message_count",
                "include_archived",
                "archived_only",
                "exclude_children",
                "exclude_sources",
            ])?;
            let options = SessionCountOptions {
                source: owned(args.opt_str("source")?),
                exclude_sources: args.opt_strings("exclude_sources")?.unwrap_or_default(),
                cwd_prefix: owned(args.opt_str("cwd_prefix")?),
                min_message_count: args.i64_or("min_message_count", 0)?,
                include_archived: args.bool_or("include_archived", false),
                archived_only: args.bool_or("archived_only", false),
                exclude_children: args.bool_or("exclude_children", false),
            };
            Ok(json(db.session_count(&options)?))
        }
        "message_count" => {
            args.only(&["session_id"])?;
            Ok(json(db.message_count(args.opt_str("session_id")?)?))
        }
        // api.md §2.5: updates
        "update_system_prompt" => {
            args.only(&["session_id", "system_prompt"])?;
            db.update_system_prompt(args.str("session_id")?, args.str("system_prompt")?)?;
            Ok(NONE)
        }
        "update_session_model" => {
            args.only(&["session_id", "model"])?;
            db.update_session_model(args.str("session_id")?, args.opt_str("model")?)?;
            Ok(NONE)
        }
        "update_session_meta" => {
            args.only(&["session_id", "model_config_json", "model"])?;
            db.update_session_meta(
                args.str("session_id")?,
                args.opt_str("model_config_json")?,
                args.opt_str("model")?,
            )?;
            Ok(NONE)
        }
        "update_session_billing_route" => {
            args.only(&["session_id", "provider", "base_url", "billing_mode"])?;
            db.update_session_billing_route(
                args.str("session_id")?,
                args.opt_str("provider")?,
                args.opt_str("base_url")?,
                args.opt_str("billing_mode")?,
            )?;
            Ok(NONE)
        }
        "update_session_cwd" => {
            args.only(&["session_id", "cwd", "git_branch", "git_repo_root"])?;
            db.update_session_cwd(
                args.str("session_id")?,
                args.str("cwd")?,
                args.opt_str("git_branch")?,
                args.opt_str("git_repo_root")?,
            )?;
            Ok(NONE)
        }
        "backfill_repo_roots" => {
            args.only(&["cwd_to_root"])?;
            let pairs = args.string_pairs("cwd_to_root")?;
            db.backfill_repo_roots(&borrowed_pairs(&pairs))?;
            Ok(NONE)
        }
        "set_session_archived" => {
            args.only(&["session_id", "archived"])?;
            Ok(json(db.set_session_archived(
                args.str("session_id")?,
                args.bool_or("archived", false),
            )?))
        }
        "set_session_pinned" => {
            args.only(&["session_id", "pinned"])?;
            Ok(json(db.set_session_pinned(
                args.str("session_id")?,
                args.bool_or("pinned", false),
            )?))
        }
        "set_expiry_finalized" => {
            args.only(&["session_id", "finalized"])?;
            db.set_expiry_finalized(args.str("session_id")?, args.bool_or("finalized", true))?;
            Ok(NONE)
        }
        "promote_to_session_reset" => {
            args.only(&["session_id", "reason"])?;
            let reason = args.opt_str("reason")?.unwrap_or("session_reset");
            Ok(json(
                db.promote_to_session_reset(args.str("session_id")?, reason),
            ))
        }
        "record_compression_failure_cooldown" => {
            args.only(&["session_id", "cooldown_until", "error"])?;
            db.record_compression_failure_cooldown(
                args.str("session_id")?,
                args.f64_or("cooldown_until", 0.0)?,
                args.opt_str("error")?,
            )?;
            Ok(NONE)
        }
        "get_compression_failure_cooldown" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_compression_failure_cooldown(
                args.str("session_id")?,
            )?))
        }
        "clear_compression_failure_cooldown" => {
            args.only(&["session_id"])?;
            db.clear_compression_failure_cooldown(args.str("session_id")?)?;
            Ok(NONE)
        }
        "get_compression_fallback_streak" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_compression_fallback_streak(
                args.str("session_id")?,
            )?))
        }
        "set_compression_fallback_streak" => {
            args.only(&["session_id", "streak"])?;
            db.set_compression_fallback_streak(args.str("session_id")?, args.i64_or("streak", 0)?)?;
            Ok(NONE)
        }
        "get_compression_ineffective_count" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_compression_ineffective_count(
                args.str("session_id")?,
            )?))
        }
        "set_compression_ineffective_count" => {
            args.only(&["session_id", "count"])?;
            db.set_compression_ineffective_count(
                args.str("session_id")?,
                args.i64_or("count", 0)?,
            )?;
            Ok(NONE)
        }
        "request_handoff" => {
            args.only(&["session_id", "platform"])?;
            Ok(json(db.request_handoff(
                args.str("session_id")?,
                args.str("platform")?,
            )?))
        }
        "claim_handoff" => {
            args.only(&["session_id"])?;
            Ok(json(db.claim_handoff(args.str("session_id")?)?))
        }
        "complete_handoff" => {
            args.only(&["session_id"])?;
            db.complete_handoff(args.str("session_id")?)?;
            Ok(NONE)
        }
        "fail_handoff" => {
            args.only(&["session_id", "error"])?;
            db.fail_handoff(args.str("session_id")?, args.str("error")?)?;
            Ok(NONE)
        }
        "get_handoff_state" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_handoff_state(args.str("session_id")?)?))
        }
        "list_pending_handoffs" => {
            args.only(&[])?;
            Ok(json(db.list_pending_handoffs()?))
        }
        "finalize_orphaned_compression_sessions" => {
            args.only(&[])?;
            Ok(json(db.finalize_orphaned_compression_sessions()?))
        }
        // api.md §3: accounting
        "update_token_counts" => {
            args.only(&TOKEN_KEYS)?;
            let update = TokenUpdate {
                input_tokens: args.i64_or("input_tokens", 0)?,
                output_tokens: args.i64_or("output_tokens", 0)?,
                model: owned(args.opt_str("model")?),
                cache_read_tokens: args.i64_or("cache_read_tokens", 0)?,
                cache_write_tokens: args.i64_or("cache_write_tokens", 0)?,
                reasoning_tokens: args.i64_or("reasoning_tokens", 0)?,
                estimated_cost_usd: args.opt_f64("estimated_cost_usd")?,
                actual_cost_usd: args.opt_f64("actual_cost_usd")?,
                cost_status: owned(args.opt_str("cost_status")?),
                cost_source: owned(args.opt_str("cost_source")?),
                pricing_version: owned(args.opt_str("pricing_version")?),
                billing_provider: owned(args.opt_str("billing_provider")?),
                billing_base_url: owned(args.opt_str("billing_base_url")?),
                billing_mode: owned(args.opt_str("billing_mode")?),
                api_call_count: args.i64_or("api_call_count", 0)?,
                absolute: args.bool_or("absolute", false),
            };
            db.update_token_counts(args.str("session_id")?, &update)?;
            Ok(NONE)
        }
        "record_auxiliary_usage" => {
            args.only(&[
                "session_id",
                "task",
                "model",
                "billing_provider",
                "billing_base_url",
                "input_tokens",
                "output_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
                "reasoning_tokens",
                "estimated_cost_usd",
            ])?;
            let usage = AuxiliaryUsage {
                task: args.str("task")?.to_owned(),
                model: owned(args.opt_str("model")?),
                billing_provider: owned(args.opt_str("billing_provider")?),
                billing_base_url: owned(args.opt_str("billing_base_url")?),
                input_tokens: args.i64_or("input_tokens", 0)?,
                output_tokens: args.i64_or("output_tokens", 0)?,
                cache_read_tokens: args.i64_or("cache_read_tokens", 0)?,
                cache_write_tokens: args.i64_or("cache_write_tokens", 0)?,
                reasoning_tokens: args.i64_or("reasoning_tokens", 0)?,
                estimated_cost_usd: args.opt_f64("estimated_cost_usd")?,
            };
            db.record_auxiliary_usage(args.str("session_id")?, &usage)?;
            Ok(NONE)
        }
        // api.md §4: message writes
        "append_message" => {
            args.only(&MESSAGE_KEYS)?;
            let Some(role) = args.present("role") else {
                return Err(not_null("messages.role"));
            };
            let message = NewMessage {
                session_id: args.str("session_id")?.to_owned(),
                role: string(role)?.to_owned(),
                content: args.get("content").and_then(content_from_json),
                tool_name: owned(args.opt_str("tool_name")?),
                tool_calls: args.present("tool_calls").cloned(),
                tool_call_id: owned(args.opt_str("tool_call_id")?),
                token_count: args.opt_i64("token_count")?,
                finish_reason: owned(args.opt_str("finish_reason")?),
                reasoning: owned(args.opt_str("reasoning")?),
                reasoning_content: owned(args.opt_str("reasoning_content")?),
                reasoning_details: args.present("reasoning_details").cloned(),
                codex_reasoning_items: args.present("codex_reasoning_items").cloned(),
                codex_message_items: args.present("codex_message_items").cloned(),
                platform_message_id: owned(args.opt_str("platform_message_id")?),
                observed: args.bool_or("observed", false),
                effect_disposition: owned(args.opt_str("effect_disposition")?),
                timestamp: args.present("timestamp").and_then(python_float),
                api_content: args
                    .present("api_content")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                display_kind: args
                    .present("display_kind")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                display_metadata: args.present("display_metadata").cloned(),
            };
            Ok(json(db.append_message(&message)?))
        }
        "set_latest_matching_message_display_kind" => {
            args.only(&[
                "session_id",
                "role",
                "content",
                "display_kind",
                "display_metadata",
            ])?;
            Ok(json(db.set_latest_matching_message_display_kind(
                args.str("session_id")?,
                args.str("role")?,
                args.str("content")?,
                args.str("display_kind")?,
                args.present("display_metadata"),
            )?))
        }
        "set_latest_user_api_content" => {
            args.only(&["session_id", "content", "api_content"])?;
            let content = args.get("content").and_then(content_from_json);
            Ok(json(db.set_latest_user_api_content(
                args.str("session_id")?,
                content.as_ref(),
                args.str("api_content")?,
            )?))
        }
        "replace_messages" => {
            args.only(&["session_id", "messages", "active_only"])?;
            let session_id = args.str("session_id")?;
            let messages = message_dicts(session_id, args.get("messages"))?;
            db.replace_messages(session_id, &messages, args.bool_or("active_only", false))?;
            Ok(NONE)
        }
        "archive_and_compact" => {
            args.only(&["session_id", "compacted_messages"])?;
            let session_id = args.str("session_id")?;
            let messages = message_dicts(session_id, args.get("compacted_messages"))?;
            Ok(json(db.archive_and_compact(session_id, &messages)?))
        }
        "rewind_to_message" => {
            args.only(&["session_id", "target_message_id"])?;
            Ok(json(db.rewind_to_message(
                args.str("session_id")?,
                args.i64_or("target_message_id", 0)?,
            )?))
        }
        "restore_rewound" => {
            args.only(&["session_id", "since_message_id"])?;
            Ok(json(db.restore_rewound(
                args.str("session_id")?,
                args.i64_or("since_message_id", 0)?,
            )?))
        }
        "clear_messages" => {
            args.only(&["session_id"])?;
            db.clear_messages(args.str("session_id")?)?;
            Ok(NONE)
        }
        // api.md §5: message reads
        "get_messages" => {
            args.only(&["session_id", "include_inactive", "limit", "offset"])?;
            let page = MessagePage {
                include_inactive: args.bool_or("include_inactive", false),
                limit: args.opt_i64("limit")?,
                offset: args.i64_or("offset", 0)?,
            };
            Ok(json(db.get_messages_page(args.str("session_id")?, page)?))
        }
        "get_messages_as_conversation" => {
            args.only(&[
                "session_id",
                "include_ancestors",
                "include_inactive",
                "repair_alternation",
            ])?;
            Ok(json(db.get_messages_as_conversation_with(
                args.str("session_id")?,
                args.bool_or("include_ancestors", false),
                args.bool_or("include_inactive", false),
            )?))
        }
        "get_messages_around" => {
            args.only(&["session_id", "around_message_id", "window"])?;
            Ok(json(db.get_messages_around(
                args.str("session_id")?,
                args.i64_or("around_message_id", 0)?,
                args.i64_or("window", 5)?,
            )?))
        }
        "list_recent_user_messages" => {
            args.only(&["session_id", "limit", "include_inactive"])?;
            Ok(json(db.list_recent_user_messages(
                args.str("session_id")?,
                args.u32_or("limit", 20)?,
                args.bool_or("include_inactive", false),
            )?))
        }
        "has_archived_messages" => {
            args.only(&["session_id"])?;
            Ok(json(db.has_archived_messages(args.str("session_id")?)?))
        }
        "has_platform_message_id" => {
            args.only(&["session_id", "platform_message_id"])?;
            Ok(json(db.has_platform_message_id(
                args.str("session_id")?,
                args.str("platform_message_id")?,
            )?))
        }
        // api.md §6: titles
        "sanitize_title" => {
            args.only(&["title"])?;
            Ok(json(SessionDb::sanitize_title(args.opt_str("title")?)?))
        }
        "set_session_title" => {
            args.only(&["session_id", "title"])?;
            Ok(json(db.set_session_title(
                args.str("session_id")?,
                args.opt_str("title")?,
            )?))
        }
        "set_auto_title_if_empty" => {
            args.only(&["session_id", "title"])?;
            Ok(json(db.set_auto_title_if_empty(
                args.str("session_id")?,
                args.str("title")?,
            )?))
        }
        "get_session_title" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_session_title(args.str("session_id")?)?))
        }
        "get_session_by_title" => {
            args.only(&["title"])?;
            Ok(json(db.get_session_by_title(args.str("title")?)?))
        }
        "resolve_session_by_title" => {
            args.only(&["title"])?;
            Ok(json(db.resolve_session_by_title(args.str("title")?)?))
        }
        "get_next_title_in_lineage" => {
            args.only(&["base_title"])?;
            Ok(json(db.get_next_title_in_lineage(args.str("base_title")?)?))
        }
        // api.md §7–8: search
        "search_messages" => {
            args.only(&[
                "query",
                "source_filter",
                "exclude_sources",
                "role_filter",
                "limit",
                "offset",
                "sort",
                "include_inactive",
            ])?;
            let options = SearchOptions {
                source_filter: args.opt_strings("source_filter")?,
                exclude_sources: args.opt_strings("exclude_sources")?,
                role_filter: args.opt_strings("role_filter")?,
                limit: args.u32_or("limit", 20)?,
                offset: args.u32_or("offset", 0)?,
                sort: owned(args.opt_str("sort")?),
                include_inactive: args.bool_or("include_inactive", false),
            };
            Ok(json(db.search_messages(args.str("query")?, &options)?))
        }
        "search_sessions" => {
            args.only(&["source", "limit", "offset"])?;
            Ok(json(db.search_sessions(
                args.opt_str("source")?,
                args.u32_or("limit", 20)?,
                args.u32_or("offset", 0)?,
            )?))
        }
        "search_sessions_by_id" => {
            args.only(&["query", "limit", "include_archived"])?;
            Ok(json(db.search_sessions_by_id(
                args.str("query")?,
                args.u32_or("limit", 20)?,
                args.bool_or("include_archived", true),
            )?))
        }
        // api.md §9: lineage
        "get_compression_tip" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_compression_tip(args.str("session_id")?)?))
        }
        "get_conversation_root" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_conversation_root(args.str("session_id")?)?))
        }
        "resolve_resume_session_id" => {
            args.only(&["session_id"])?;
            Ok(json(db.resolve_resume_session_id(args.str("session_id")?)?))
        }
        "get_compression_lineage" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_compression_lineage(args.str("session_id")?)?))
        }
        // api.md §10: listings
        "list_sessions_rich" => {
            args.only(&[
                "source",
                "exclude_sources",
                "cwd_prefix",
                "limit",
                "offset",
                "include_children",
                "min_message_count",
                "project_compression_tips",
                "order_by_last_active",
                "include_archived",
                "archived_only",
                "id_query",
                "search_query",
                "compact_rows",
            ])?;
            let options = RichListOptions {
                source: owned(args.opt_str("source")?),
                exclude_sources: args.opt_strings("exclude_sources")?.unwrap_or_default(),
                cwd_prefix: owned(args.opt_str("cwd_prefix")?),
                limit: args.u32_or("limit", 20)?,
                offset: args.u32_or("offset", 0)?,
                include_children: args.bool_or("include_children", false),
                min_message_count: args.i64_or("min_message_count", 0)?,
                project_compression_tips: args.bool_or("project_compression_tips", true),
                order_by_last_active: args.bool_or("order_by_last_active", false),
                include_archived: args.bool_or("include_archived", false),
                archived_only: args.bool_or("archived_only", false),
                id_query: owned(args.opt_str("id_query")?),
                search_query: owned(args.opt_str("search_query")?),
                compact_rows: args.bool_or("compact_rows", false),
            };
            Ok(json(db.list_sessions_rich(&options)?))
        }
        "list_cron_job_runs" => {
            args.only(&["job_id", "limit", "offset"])?;
            Ok(json(db.list_cron_job_runs(
                args.str("job_id")?,
                args.u32_or("limit", 20)?,
                args.u32_or("offset", 0)?,
            )?))
        }
        "distinct_session_cwds" => {
            args.only(&["include_archived"])?;
            Ok(json(db.distinct_session_cwds(
                args.bool_or("include_archived", false),
            )?))
        }
        "list_prune_candidates" => {
            let options = prune_options(args, None)?;
            Ok(json(db.list_prune_candidates(&options.selection())?))
        }
        "archive_sessions" => {
            let options = prune_options(args, None)?;
            let mut selection = ArchiveSelection {
                older_than_days: options.older_than_days,
                source: options.source,
                filters: options.filters,
            };
            // The original's `archived=False` default of this call.
            if args.get("archived").is_none() {
                selection.filters.archived = ArchiveSelection::default().filters.archived;
            }
            Ok(json(db.archive_sessions(&selection)?))
        }
        "archive_stale_sessions" => {
            args.only(&["idle_days", "exclude_pinned"])?;
            Ok(json(db.archive_stale_sessions(
                args.f64_or("idle_days", 0.0)?,
                args.bool_or("exclude_pinned", true),
            )?))
        }
        // api.md §11: export, import, cleanup
        "export_session" => {
            args.only(&["session_id"])?;
            Ok(db
                .export_session(args.str("session_id")?)?
                .map_or(Value::Null, |export| export.to_value()))
        }
        "export_all" => {
            args.only(&["source"])?;
            let exports = db.export_all(args.opt_str("source")?)?;
            Ok(Value::Array(exports.iter().map(|e| e.to_value()).collect()))
        }
        "import_sessions" => {
            args.only(&["sessions"])?;
            let sessions = args.get("sessions").cloned().unwrap_or(Value::Null);
            Ok(json(db.import_sessions(&sessions)?))
        }
        "prune_sessions" => {
            let options = prune_options(args, Some(90.0))?;
            Ok(json(db.prune_sessions(&options)?.count))
        }
        "delete_session" => {
            args.only(&["session_id", "sessions_dir"])?;
            Ok(json(db.delete_session(args.str("session_id")?)?))
        }
        "delete_session_if_empty" => {
            args.only(&["session_id", "sessions_dir"])?;
            Ok(json(db.delete_session_if_empty(args.str("session_id")?)?))
        }
        "delete_sessions" => {
            args.only(&["session_ids", "sessions_dir"])?;
            let ids = args.opt_strings("session_ids")?.unwrap_or_default();
            Ok(json(db.delete_sessions(&borrowed(&ids), None::<&Path>)?))
        }
        "count_empty_sessions" => {
            args.only(&[])?;
            Ok(json(db.count_empty_sessions()?))
        }
        "delete_empty_sessions" => {
            args.only(&["sessions_dir"])?;
            Ok(json(db.delete_empty_sessions()?))
        }
        "prune_empty_ghost_sessions" => {
            args.only(&["sessions_dir"])?;
            Ok(json(db.prune_empty_ghost_sessions(None)?))
        }
        "maybe_auto_prune_and_vacuum" => {
            args.only(&[
                "retention_days",
                "min_interval_hours",
                "vacuum",
                "sessions_dir",
            ])?;
            let options = AutoPruneOptions {
                retention_days: args.f64_or("retention_days", 90.0)?,
                min_interval_hours: args.f64_or("min_interval_hours", 24.0)?,
                vacuum: args.bool_or("vacuum", true),
                sessions_dir: None,
            };
            Ok(json(db.maybe_auto_prune_and_vacuum(&options)))
        }
        "maybe_auto_archive" => {
            args.only(&["idle_days", "min_interval_hours", "exclude_pinned"])?;
            let options = AutoArchiveOptions {
                idle_days: args.f64_or("idle_days", 3.0)?,
                min_interval_hours: args.f64_or("min_interval_hours", 24.0)?,
                exclude_pinned: args.bool_or("exclude_pinned", true),
            };
            Ok(json(db.maybe_auto_archive(&options)))
        }
        // api.md §12: coordination, gateway, meta
        "try_acquire_compression_lock" => {
            args.only(&["session_id", "holder", "ttl_seconds"])?;
            Ok(json(db.try_acquire_compression_lock(
                args.str("session_id")?,
                args.str("holder")?,
                args.f64_or("ttl_seconds", 300.0)?,
            )))
        }
        "refresh_compression_lock" => {
            args.only(&["session_id", "holder", "ttl_seconds"])?;
            Ok(json(db.refresh_compression_lock(
                args.str("session_id")?,
                args.str("holder")?,
                args.f64_or("ttl_seconds", 300.0)?,
            )))
        }
        "release_compression_lock" => {
            args.only(&["session_id", "holder"])?;
            db.release_compression_lock(args.str("session_id")?, args.str("holder")?);
            Ok(NONE)
        }
        "get_compression_lock_holder" => {
            args.only(&["session_id"])?;
            Ok(json(
                db.get_compression_lock_holder(args.str("session_id")?)?,
            ))
        }
        "record_gateway_session_peer" => {
            args.only(&[
                "session_id",
                "source",
                "user_id",
                "session_key",
                "chat_id",
                "chat_type",
                "thread_id",
                "display_name",
                "origin_json",
            ])?;
            let peer = GatewayPeer {
                source: args.str("source")?.to_owned(),
                session_key: args.opt_str("session_key")?.unwrap_or_default().to_owned(),
                user_id: owned(args.opt_str("user_id")?),
                chat_id: owned(args.opt_str("chat_id")?),
                chat_type: owned(args.opt_str("chat_type")?),
                thread_id: owned(args.opt_str("thread_id")?),
                display_name: owned(args.opt_str("display_name")?),
                origin_json: owned(args.opt_str("origin_json")?),
            };
            db.record_gateway_session_peer(args.str("session_id")?, &peer)?;
            Ok(NONE)
        }
        "save_gateway_routing_entry" => {
            args.only(&["session_key", "entry_json", "scope"])?;
            db.save_gateway_routing_entry(
                args.str("session_key")?,
                args.str("entry_json")?,
                args.opt_str("scope")?.unwrap_or(""),
            )?;
            Ok(NONE)
        }
        "replace_gateway_routing_entries" => {
            args.only(&["entries", "scope"])?;
            let pairs = args.string_pairs("entries")?;
            db.replace_gateway_routing_entries(
                &borrowed_pairs(&pairs),
                args.opt_str("scope")?.unwrap_or(""),
            )?;
            Ok(NONE)
        }
        "load_gateway_routing_entries" => {
            args.only(&["scope"])?;
            Ok(json(db.load_gateway_routing_entries(
                args.opt_str("scope")?.unwrap_or(""),
            )?))
        }
        "delete_gateway_routing_entries" => {
            args.only(&["session_keys", "scope"])?;
            let keys = args.opt_strings("session_keys")?.unwrap_or_default();
            db.delete_gateway_routing_entries(
                &borrowed(&keys),
                args.opt_str("scope")?.unwrap_or(""),
            )?;
            Ok(NONE)
        }
        "list_gateway_sessions" => {
            args.only(&["platform", "active_only"])?;
            Ok(json(db.list_gateway_sessions(
                args.opt_str("platform")?,
                args.bool_or("active_only", true),
            )?))
        }
        "find_session_by_origin" => {
            args.only(&["platform", "chat_id", "thread_id", "user_id"])?;
            Ok(json(db.find_session_by_origin(
                args.str("platform")?,
                args.str("chat_id")?,
                args.opt_str("thread_id")?,
                args.opt_str("user_id")?,
            )?))
        }
        "find_latest_gateway_session_for_peer" => {
            args.only(&[
                "source",
                "user_id",
                "session_key",
                "chat_id",
                "chat_type",
                "thread_id",
            ])?;
            let peer = PeerLookup {
                source: args.str("source")?.to_owned(),
                session_key: owned(args.opt_str("session_key")?),
                user_id: owned(args.opt_str("user_id")?),
                chat_id: owned(args.opt_str("chat_id")?),
                chat_type: owned(args.opt_str("chat_type")?),
                thread_id: owned(args.opt_str("thread_id")?),
            };
            Ok(json(db.find_latest_gateway_session_for_peer(&peer)?))
        }
        "get_meta" => {
            args.only(&["key"])?;
            Ok(json(db.get_meta(args.str("key")?)?))
        }
        "set_meta" => {
            args.only(&["key", "value"])?;
            db.set_meta(args.str("key")?, args.str("value")?)?;
            Ok(NONE)
        }
        "apply_telegram_topic_migration" => {
            args.only(&[])?;
            db.apply_telegram_topic_migration()?;
            Ok(NONE)
        }
        // Maintenance of the file.
        "vacuum" => {
            args.only(&[])?;
            Ok(json(file_only(db, "vacuum")?.vacuum()?))
        }
        "optimize_fts" => {
            args.only(&[])?;
            Ok(json(file_only(db, "optimize_fts")?.optimize_fts()?))
        }
        "rebuild_fts" => {
            args.only(&[])?;
            Ok(json(file_only(db, "rebuild_fts")?.rebuild_fts()?))
        }
        "close" => {
            args.only(&[])?;
            file_only(db, "close")?.close()?;
            Ok(NONE)
        }
        other => panic!("the replay knows no operation {other:?}: add it to dispatch.rs"),
    }
}

/// `create_session`'s keywords (the original's session-row writer).
const SESSION_ROW_KEYS: [&str; 14] = [
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

const TOKEN_KEYS: [&str; 17] = [
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

const MESSAGE_KEYS: [&str; 20] = [
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
const PRUNE_FILTER_KEYS: [&str; 20] = [
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
fn prune_options(args: &Args<'_>, default_age: Option<f64>) -> Call<PruneOptions> {
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
        ..PruneOptions::default()
    })
}

/// A list of message dicts, read as the original reads each one.
fn message_dicts(session_id: &str, messages: Option<&Value>) -> Call<Vec<NewMessage>> {
    match messages {
        Some(Value::Array(items)) => Ok(items
            .iter()
            .map(|item| new_message_from_dict(session_id, item))
            .collect()),
        Some(Value::Null) | None => Ok(Vec::new()),
        Some(other) => Err(CallError::type_error(format!(
            "{} object is not iterable",
            super::args::python_type(other)
        ))),
    }
}

/// The original's NOT NULL failure of a row written without a required value.
fn not_null(column: &str) -> CallError {
    CallError::Boundary {
        kind: "integrity.not_null",
        message: format!("NOT NULL constraint failed: {column}"),
    }
}

fn string(value: &Value) -> Call<&str> {
    value.as_str().ok_or_else(|| {
        CallError::type_error(format!(
            "expected str, got {}",
            super::args::python_type(value)
        ))
    })
}

/// The SQLite file's own operations (maintenance of the file, closing the
/// handle): not part of the store contract, so a server backend has none.
fn file_only<'s>(store: &'s dyn SessionStore, op: &str) -> Call<&'s SessionDb> {
    store.as_sqlite().ok_or_else(|| CallError::Boundary {
        kind: FILE_ONLY,
        message: format!("{op} is an operation of the SQLite file"),
    })
}

/// The kind of a file-only operation asked of a server backend.
pub const FILE_ONLY: &str = "backend.file_only";

fn borrowed(items: &[String]) -> Vec<&str> {
    items.iter().map(String::as_str).collect()
}

fn borrowed_pairs(pairs: &[(String, String)]) -> Vec<(&str, &str)> {
    pairs
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect()
}

fn owned(text: Option<&str>) -> Option<String> {
    text.map(str::to_owned)
}
