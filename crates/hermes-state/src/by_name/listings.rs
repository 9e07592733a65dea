//! api.md §10: listings.

use super::kwargs::{Args, Call, CallError};
use super::shared::*;

/// Makes `op` if it belongs to this section.
pub(super) fn call(db: &dyn SessionStore, op: &str, args: &Args<'_>) -> Call<Value> {
    match op {
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
        other => Err(CallError::UnknownOperation(other.to_owned())),
    }
}
