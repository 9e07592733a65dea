//! api.md §12: coordination, gateway routing, metadata; the file's own maintenance.

use super::kwargs::{Args, Call, CallError};
use super::shared::*;

/// Makes `op` if it belongs to this section.
pub(super) fn call(db: &dyn SessionStore, op: &str, args: &Args<'_>) -> Call<Value> {
    match op {
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
        // Telegram DM topic mode.
        "enable_telegram_topic_mode" => {
            args.only(&[
                "chat_id",
                "user_id",
                "has_topics_enabled",
                "allows_users_to_create_topics",
            ])?;
            let flag = |key| args.present(key).map(python_truthy);
            db.enable_telegram_topic_mode(
                &args.python_str("chat_id")?,
                &args.python_str("user_id")?,
                flag("has_topics_enabled"),
                flag("allows_users_to_create_topics"),
            )?;
            Ok(NONE)
        }
        "disable_telegram_topic_mode" => {
            args.only(&["chat_id", "clear_bindings"])?;
            db.disable_telegram_topic_mode(
                &args.python_str("chat_id")?,
                args.bool_or("clear_bindings", true),
            )?;
            Ok(NONE)
        }
        "is_telegram_topic_mode_enabled" => {
            args.only(&["chat_id", "user_id"])?;
            Ok(json(db.is_telegram_topic_mode_enabled(
                &args.python_str("chat_id")?,
                &args.python_str("user_id")?,
            )?))
        }
        "get_telegram_topic_binding" => {
            args.only(&["chat_id", "thread_id"])?;
            Ok(json(db.get_telegram_topic_binding(
                &args.python_str("chat_id")?,
                &args.python_str("thread_id")?,
            )?))
        }
        "list_telegram_topic_bindings_for_chat" => {
            args.only(&["chat_id"])?;
            Ok(json(db.list_telegram_topic_bindings_for_chat(
                &args.python_str("chat_id")?,
            )?))
        }
        "get_telegram_topic_binding_by_session" => {
            args.only(&["session_id"])?;
            Ok(json(db.get_telegram_topic_binding_by_session(
                &args.python_str("session_id")?,
            )?))
        }
        "delete_telegram_topic_binding" => {
            args.only(&["chat_id", "thread_id"])?;
            Ok(json(db.delete_telegram_topic_binding(
                &args.python_str("chat_id")?,
                &args.python_str("thread_id")?,
            )?))
        }
        "bind_telegram_topic" => {
            args.only(&[
                "chat_id",
                "thread_id",
                "user_id",
                "session_key",
                "session_id",
                "managed_mode",
            ])?;
            let managed_mode = match args.get("managed_mode") {
                None => "auto",
                Some(Value::Null) => {
                    return Err(not_null("telegram_dm_topic_bindings.managed_mode"));
                }
                Some(value) => string(value)?,
            };
            let (chat_id, thread_id, user_id, session_key, session_id) = (
                args.python_str("chat_id")?,
                args.python_str("thread_id")?,
                args.python_str("user_id")?,
                args.python_str("session_key")?,
                args.python_str("session_id")?,
            );
            db.bind_telegram_topic(&TopicBindingRequest {
                chat_id: &chat_id,
                thread_id: &thread_id,
                user_id: &user_id,
                session_key: &session_key,
                session_id: &session_id,
                managed_mode,
            })?;
            Ok(NONE)
        }
        "is_telegram_session_linked_to_topic" => {
            args.only(&["session_id"])?;
            Ok(json(db.is_telegram_session_linked_to_topic(
                &args.python_str("session_id")?,
            )?))
        }
        "list_unlinked_telegram_sessions_for_user" => {
            args.only(&["chat_id", "user_id", "limit"])?;
            // `chat_id` is required but unused, as in the original.
            args.python_str("chat_id")?;
            Ok(json(db.list_unlinked_telegram_sessions_for_user(
                &args.python_str("user_id")?,
                args.i64_or("limit", 10)?,
            )?))
        }
        // The FTS maintenance steps of the file.
        "fts_rebuild_status" => {
            args.only(&[])?;
            Ok(json(file_only(db, op)?.fts_rebuild_status()?))
        }
        "fts_rebuild_step" => {
            args.only(&[])?;
            Ok(json(file_only(db, op)?.fts_rebuild_step()?))
        }
        "fts_cjk_rebuild_status" => {
            args.only(&[])?;
            Ok(json(file_only(db, op)?.fts_cjk_rebuild_status()?))
        }
        "fts_cjk_rebuild_step" => {
            args.only(&[])?;
            Ok(json(file_only(db, op)?.fts_cjk_rebuild_step()?))
        }
        "fts_optimize_available" => {
            args.only(&[])?;
            Ok(json(file_only(db, op)?.fts_optimize_available()?))
        }
        "optimize_fts_storage" => {
            args.only(&["progress_cb", "vacuum"])?;
            // A callback cannot travel as a value: a binding passes its own
            // to `SessionDb::optimize_fts_storage_in_phases`.
            if let Some(callback) = args.present("progress_cb") {
                return Err(CallError::type_error(format!(
                    "{} object is not callable",
                    python_type(callback)
                )));
            }
            Ok(json(file_only(db, op)?.optimize_fts_storage_in_phases(
                args.bool_or("vacuum", true),
                |_| {},
            )?))
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
        other => Err(CallError::UnknownOperation(other.to_owned())),
    }
}
