//! api.md §7–9: search and lineage.

use super::kwargs::{Args, Call, CallError};
use super::shared::*;

/// Makes `op` if it belongs to this section.
pub(super) fn call(db: &dyn SessionStore, op: &str, args: &Args<'_>) -> Call<Value> {
    match op {
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
        other => Err(CallError::UnknownOperation(other.to_owned())),
    }
}
