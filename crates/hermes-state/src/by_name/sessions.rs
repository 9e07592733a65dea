//! api.md §2: creating, reading and updating sessions; compression state and handoffs.

use super::kwargs::{Args, Call, CallError};
use super::shared::*;

/// Makes `op` if it belongs to this section.
pub(super) fn call(db: &dyn SessionStore, op: &str, args: &Args<'_>) -> Call<Value> {
    match op {
        // api.md §2.1: sessions
        "create_session" => {
            args.only(&SESSION_ROW_KEYS)?;
            let Some(source) = args.present("source") else {
                return Err(not_null("sessions.source"));
            };
            let mut session = NewSession::new(args.str("session_id")?, string(source)?);
            session.model = args.opt_column_text("model")?;
            session.model_config = args.present("model_config").cloned();
            session.system_prompt = args.opt_column_text("system_prompt")?;
            session.user_id = args.opt_column_text("user_id")?;
            session.session_key = args.opt_column_text("session_key")?;
            session.chat_id = args.opt_column_text("chat_id")?;
            session.chat_type = args.opt_column_text("chat_type")?;
            session.thread_id = args.opt_column_text("thread_id")?;
            session.parent_session_id = args.opt_column_text("parent_session_id")?;
            session.cwd = args.opt_column_text("cwd")?;
            session.profile_name = args.opt_column_text("profile_name")?;
            session.git_repo_root = args.opt_column_text("git_repo_root")?;
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
        other => Err(CallError::UnknownOperation(other.to_owned())),
    }
}
