//! api.md §11: export, import and cleanup.

use super::kwargs::{Args, Call, CallError};
use super::shared::*;

/// Makes `op` if it belongs to this section.
pub(super) fn call(db: &dyn SessionStore, op: &str, args: &Args<'_>) -> Call<Value> {
    match op {
        // api.md §11: export, import, cleanup
        "export_session" => {
            args.only(&["session_id"])?;
            Ok(db
                .export_session(args.str("session_id")?)?
                .map_or(Value::Null, |export| export.to_value()))
        }
        "export_session_lineage" => {
            args.only(&["session_id"])?;
            Ok(db
                .export_session_lineage(args.str("session_id")?)?
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
            let dir = sessions_dir(args)?;
            Ok(json(db.delete_session_with(
                args.str("session_id")?,
                dir.as_deref(),
            )?))
        }
        "delete_session_if_empty" => {
            args.only(&["session_id", "sessions_dir"])?;
            let session_id = args.str("session_id")?;
            let deleted = db.delete_session_if_empty(session_id)?;
            if deleted && let Some(dir) = sessions_dir(args)? {
                // As the original: the session's transcript files go with it.
                crate::maintenance::remove_transcripts(&dir, &[session_id.to_owned()]);
            }
            Ok(json(deleted))
        }
        "delete_sessions" => {
            args.only(&["session_ids", "sessions_dir"])?;
            let ids = session_ids(args)?;
            let dir = sessions_dir(args)?;
            Ok(json(db.delete_sessions(&borrowed(&ids), dir.as_deref())?))
        }
        "count_empty_sessions" => {
            args.only(&[])?;
            Ok(json(db.count_empty_sessions()?))
        }
        "delete_empty_sessions" => {
            args.only(&["sessions_dir"])?;
            let dir = sessions_dir(args)?;
            Ok(json(db.delete_empty_sessions_with(dir.as_deref())?))
        }
        "prune_empty_ghost_sessions" => {
            args.only(&["sessions_dir"])?;
            let dir = sessions_dir(args)?;
            Ok(json(db.prune_empty_ghost_sessions(dir.as_deref())?))
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
                sessions_dir: sessions_dir(args)?,
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
        other => Err(CallError::UnknownOperation(other.to_owned())),
    }
}
