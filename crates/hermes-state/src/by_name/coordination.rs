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
