//! `search --session` and `search --since/--until`: hits restricted to a
//! session's compression lineage and to a time window.
//!
//! The library's search has neither filter, so the hits are read page by page
//! and filtered here ([`crate::paging`]): `--offset` and `--limit` count the
//! matching hits only, in the order `--sort` asked for.

use std::collections::HashSet;

use hermes_state::{SearchHit, SearchOptions, SessionStore};

use crate::cli::{SearchArgs, SortOrder};
use crate::error::CliResult;
use crate::paging::{Verdict, filtered_page};
use crate::store::Context;

/// The sessions whose hits count: `--session`'s whole compression lineage
/// (`get_compression_lineage`, root first), or only itself with
/// `--segment-only`; `None` without `--session`.
pub(super) fn scope(
    ctx: &Context,
    db: &dyn SessionStore,
    args: &SearchArgs,
) -> CliResult<Option<HashSet<String>>> {
    let Some(id) = &args.session else {
        return Ok(None);
    };
    ctx.require_session(db, id)?;
    if args.segment_only {
        return Ok(Some(HashSet::from([id.clone()])));
    }
    let lineage = db.get_compression_lineage(id).map_err(|e| ctx.fail(&e))?;
    Ok(Some(lineage.into_iter().collect()))
}

/// The hits of the search, with `--session` and `--since` / `--until` applied.
pub fn hits(
    ctx: &Context,
    db: &dyn SessionStore,
    args: &SearchArgs,
    options: &SearchOptions,
) -> CliResult<Vec<SearchHit>> {
    let sessions = scope(ctx, db, args)?;
    if sessions.is_none() && !args.window.is_set() {
        return db
            .search_messages(&args.query, options)
            .map_err(|e| ctx.fail(&e));
    }
    let window = args.window;
    let fetch = |offset, limit| {
        let page = SearchOptions {
            offset,
            limit,
            ..options.clone()
        };
        db.search_messages(&args.query, &page)
    };
    let judge = |hit: &SearchHit| {
        let t = hit.timestamp;
        let past_the_window = match args.sort {
            SortOrder::Newest => window.is_after(t),
            SortOrder::Oldest => window.until.is_some_and(|until| t >= until),
            SortOrder::Relevance => false,
        };
        if past_the_window {
            Verdict::Stop
        } else if window.contains(t)
            && sessions
                .as_ref()
                .is_none_or(|s| s.contains(&hit.session_id))
        {
            Verdict::Keep
        } else {
            Verdict::Skip
        }
    };
    filtered_page(args.limit, args.offset, fetch, judge).map_err(|e| ctx.fail(&e))
}
