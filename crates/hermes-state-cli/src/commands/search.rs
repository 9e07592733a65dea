//! `search`.

use std::fmt::Write as _;

use hermes_state::search_scope::{lineage_scope, search_messages_in};
use hermes_state::{ConversationScope, SearchOptions, SessionStore};
use hermes_state::{QueryProblem, query_problem};

use crate::cli::{SearchArgs, SortOrder};
use crate::commands::to_json;
use crate::error::{CliError, CliResult};
use crate::output::{one_line, shorten, when};
use crate::row_format::RowFormat;
use crate::store::{Access, Context};

/// `search` (but `-i`)
pub fn search(ctx: &Context, args: &SearchArgs) -> CliResult {
    let db = &*ctx.open(Access::Read)?;
    let format = RowFormat::chosen(&ctx.out, args.format)?;
    let options = options(args);
    if args.by_conversation {
        return super::search_conversations::search(ctx, db, args, &options, format);
    }
    let hits = search_messages_in(db, &args.query, &options, &scope(ctx, db, args)?)
        .map_err(|e| ctx.fail(&e))?;
    print_hits(ctx, args, &hits, format)
}

/// The hits that count: `--session`'s compression lineage (only itself with
/// `--segment-only`), refused when it does not exist, and `--since` /
/// `--until`.
pub(crate) fn scope(
    ctx: &Context,
    db: &dyn SessionStore,
    args: &SearchArgs,
) -> CliResult<ConversationScope> {
    let sessions = match &args.session {
        None => None,
        Some(id) => {
            ctx.require_session(db, id)?;
            Some(lineage_scope(db, id, args.segment_only).map_err(|e| ctx.fail(&e))?)
        }
    };
    Ok(ConversationScope {
        sessions,
        since: args.window.since,
        until: args.window.until,
    })
}

/// The library's search options for the command's arguments.
pub(super) fn options(args: &SearchArgs) -> SearchOptions {
    SearchOptions {
        source_filter: (!args.source.is_empty()).then(|| args.source.clone()),
        exclude_sources: (!args.exclude_source.is_empty()).then(|| args.exclude_source.clone()),
        role_filter: Some(args.roles()).filter(|roles| !roles.is_empty()),
        limit: args.limit,
        offset: args.offset,
        sort: match args.sort {
            SortOrder::Relevance => None,
            SortOrder::Newest => Some("newest".to_owned()),
            SortOrder::Oldest => Some("oldest".to_owned()),
        },
        include_inactive: args.include_inactive,
    }
}

/// Prints search hits as `format` says (a table of hits with their
/// snippets for people): shared by every store the command line reaches.
pub(super) fn print_hits(
    ctx: &Context,
    args: &SearchArgs,
    hits: &[hermes_state::SearchHit],
    format: RowFormat,
) -> CliResult {
    let out = &ctx.out;
    if hits.is_empty()
        && let Some(error) = unrunnable(ctx, &args.query)
    {
        return Err(error);
    }
    if format.print(out, &to_json!(&hits))? {
        return Ok(());
    }
    if hits.is_empty() {
        out.note(format!("no messages match {:?}", args.query));
        return Ok(());
    }
    let mut text = String::new();
    for hit in hits {
        let mut origin = hit.source.clone().unwrap_or_else(|| "?".to_owned());
        if let Some(model) = &hit.model {
            let _ = write!(origin, " · {model}");
        }
        let mut role = hit.role.clone();
        if let Some(tool) = &hit.tool_name {
            let _ = write!(role, " {tool}");
        }
        let _ = writeln!(
            text,
            "{}  {}  {}  {}",
            out.bold(&hit.session_id),
            out.dim(&format!("[{origin}]")),
            out.style("36", &role),
            out.dim(&format!("{}  #{}", when(hit.timestamp), hit.id)),
        );
        write_hit_body(&mut text, out, hit, args.context);
    }
    out.text(text)?;
    out.note(format!(
        "{} result{}{}",
        hits.len(),
        if hits.len() == 1 { "" } else { "s" },
        if hits.len() as u32 == args.limit {
            format!(
                " (more with --offset {})",
                args.offset.saturating_add(args.limit)
            )
        } else {
            String::new()
        }
    ));
    Ok(())
}

/// The error for a query that cannot be run, when search found nothing:
/// the library answers such a query with no results, as the original does
/// (`api.md` §8.4), so that "nothing matches" and "this cannot be searched"
/// look alike; the command line tells them apart (`query_problem`) and
/// makes the second a usage error (exit 2), never an empty answer, in
/// every format. `None`: nothing matches, which is no error.
pub(super) fn unrunnable(ctx: &Context, query: &str) -> Option<CliError> {
    let problem = query_problem(query)?;
    let hint = match problem {
        QueryProblem::NothingToSearch => "give at least one word to search for",
        _ => {
            "search takes FTS5 syntax (words, \"a phrase\", OR, NOT, prefix*); put special characters inside double quotes"
        }
    };
    Some(CliError::usage(format!("{}: {problem}", ctx.command)).hint(hint))
}

/// The lines under a hit's header: with `--context`, the message before
/// the hit, the hit itself marked `▶` and shown by its snippet, and the
/// message after; without, the snippet alone. Shared by the per-message and
/// the per-conversation listings.
pub(super) fn write_hit_body(
    text: &mut String,
    out: &crate::output::Output,
    hit: &hermes_state::SearchHit,
    with_context: bool,
) {
    let neighbour = |text: &mut String, n: &hermes_state::ContextMessage| {
        let _ = writeln!(
            text,
            "    {}",
            out.dim(&format!("{}: {}", n.role, preview(&n.content)))
        );
    };
    let at = hit.context.iter().position(|n| n.is_hit);
    let (before, after) = match (with_context, at) {
        (true, Some(at)) => (&hit.context[..at], &hit.context[at + 1..]),
        _ => (&[][..], &[][..]),
    };
    for n in before {
        neighbour(text, n);
    }
    let mark = if with_context && at.is_some() {
        format!("  {} ", out.style("1;33", "▶"))
    } else {
        "    ".to_owned()
    };
    let _ = writeln!(text, "{mark}{}", out.snippet(&hit.snippet));
    for n in after {
        neighbour(text, n);
    }
}

/// A neighbour's content on one line; a message without text (a tool call)
/// says so rather than leaving its role dangling.
fn preview(content: &str) -> String {
    match one_line(content) {
        line if line.is_empty() => "(no text)".to_owned(),
        line => shorten(&line, 100),
    }
}
