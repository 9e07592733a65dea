//! api.md §4–5: writing and reading messages.

use super::kwargs::{Args, Call, CallError};
use super::shared::*;

/// Makes `op` if it belongs to this section.
pub(super) fn call(db: &dyn SessionStore, op: &str, args: &Args<'_>) -> Call<Value> {
    match op {
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
            let conversation = db.get_messages_as_conversation_with(
                args.str("session_id")?,
                args.bool_or("include_ancestors", false),
                args.bool_or("include_inactive", false),
            )?;
            if args.bool_or("repair_alternation", false) {
                // The original's agent helper, applied to either backend's view.
                let dicts = hermes_state_query::conversation_repair::repaired(&conversation)
                    .map_err(hermes_state_query::QueryError::from)
                    .map_err(crate::Error::from)?;
                return Ok(json(dicts));
            }
            Ok(json(conversation))
        }
        "get_messages_around" => {
            args.only(&["session_id", "around_message_id", "window"])?;
            Ok(json(db.get_messages_around(
                args.str("session_id")?,
                args.i64_or("around_message_id", 0)?,
                args.i64_or("window", 5)?,
            )?))
        }
        "get_anchored_view" => {
            args.only(&[
                "session_id",
                "around_message_id",
                "window",
                "bookend",
                "keep_roles",
            ])?;
            let keep_roles = match args.get("keep_roles") {
                None => Some(vec!["user".to_owned(), "assistant".to_owned()]),
                Some(_) => args.opt_strings("keep_roles")?,
            };
            let keep_roles = keep_roles.as_deref().map(borrowed);
            Ok(json(db.get_anchored_view(
                args.str("session_id")?,
                args.i64_or("around_message_id", 0)?,
                args.i64_or("window", 5)?,
                args.i64_or("bookend", 3)?,
                keep_roles.as_deref(),
            )?))
        }
        "get_resume_conversations" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_resume_conversations(args.str("session_id")?)?))
        }
        "get_ancestor_display_prefix" => {
            args.only(&["session_id"])?;
            Ok(json(
                db.get_ancestor_display_prefix(args.str("session_id")?)?,
            ))
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
        other => Err(CallError::UnknownOperation(other.to_owned())),
    }
}
