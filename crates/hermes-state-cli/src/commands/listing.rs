//! `sessions list`: every session (the default), or the agent's session
//! picker (`list_sessions_rich`, `api.md` §10.3) when one of its filters is
//! given.

use std::fmt::Write as _;

use hermes_state::{ListFilter, RichListOptions, RichSession, Session, SessionDb};

use crate::cli::ListArgs;
use crate::commands::to_json;
use crate::error::CliResult;
use crate::output::{Output, datetime, one_line, pad, shorten};
use crate::paging::{Verdict, filtered_page};
use crate::row_format::RowFormat;
use crate::store::{Access, Context};

/// Rows fetched per page when the CLI filters the picker's rows itself
/// (`--pinned`, `--model`: `RichListOptions` has no such fields).
const PAGE: u32 = 500;

/// One line of the listing, whichever query produced it.
struct Row<'a> {
    session: &'a Session,
    preview: &'a str,
    last_active: f64,
}

/// `sessions list`
pub fn list(ctx: &Context, args: &ListArgs) -> CliResult {
    let format = RowFormat::chosen(&ctx.out, args.format)?;
    let db = ctx.open(Access::Read)?;
    if args.picker() {
        let rows = picker_rows(ctx, &db, args)?;
        if format.print(&ctx.out, &to_json!(&rows))? {
            return Ok(());
        }
        let lines: Vec<Row<'_>> = rows
            .iter()
            .map(|r| Row {
                session: &r.session,
                preview: &r.preview,
                last_active: r.last_active,
            })
            .collect();
        return print_table(ctx, args, &lines);
    }
    let rows = recent_in_window(&db, args).map_err(|e| ctx.fail(&e))?;
    if format.print(&ctx.out, &to_json!(&rows))? {
        return Ok(());
    }
    let lines: Vec<Row<'_>> = rows
        .iter()
        .map(|r| Row {
            session: &r.session,
            preview: &r.preview,
            last_active: r.last_active,
        })
        .collect();
    print_table(ctx, args, &lines)
}

/// The picker's rows, with `--pinned` and `--model` applied here: the
/// library's rows are read page by page and filtered until `--offset` +
/// `--limit` matches are found, so paging counts matching rows only.
fn picker_rows(ctx: &Context, db: &SessionDb, args: &ListArgs) -> CliResult<Vec<RichSession>> {
    let mut options = RichListOptions {
        source: args.source.clone(),
        cwd_prefix: args.cwd.clone(),
        limit: args.limit,
        offset: args.offset,
        include_children: args.children,
        min_message_count: args.min_messages.unwrap_or(0),
        include_archived: args.include_archived,
        archived_only: args.archived,
        ..RichListOptions::default()
    };
    if args.children {
        // Each continuation is listed as itself, not as its chain's tip.
        options.project_compression_tips = false;
    }
    let model = args.model.as_deref().map(str::to_ascii_lowercase);
    let keep = |row: &RichSession| {
        (!args.pinned || row.session.pinned != 0)
            && args.window.contains(row.session.started_at)
            && model.as_deref().is_none_or(|m| {
                row.session
                    .model
                    .as_deref()
                    .is_some_and(|own| own.to_ascii_lowercase().contains(m))
            })
    };
    if !args.pinned && model.is_none() && !args.window.is_set() {
        return db.list_sessions_rich(&options).map_err(|e| ctx.fail(&e));
    }
    let wanted = args.limit as usize;
    let mut to_skip = args.offset as usize;
    let mut rows = Vec::new();
    options.limit = PAGE;
    options.offset = 0;
    while rows.len() < wanted {
        let page = db.list_sessions_rich(&options).map_err(|e| ctx.fail(&e))?;
        let fetched = page.len();
        for row in page.into_iter().filter(|row| keep(row)) {
            if to_skip > 0 {
                to_skip -= 1;
            } else if rows.len() < wanted {
                rows.push(row);
            }
        }
        if fetched < PAGE as usize {
            break;
        }
        options.offset += PAGE;
    }
    Ok(rows)
}

/// The default listing (newest start first), with `--since` / `--until` on
/// `started_at` applied here: the library's listing has no time filter.
fn recent_in_window(
    db: &SessionDb,
    args: &ListArgs,
) -> hermes_state::Result<Vec<hermes_state::SessionListing>> {
    let fetch = |offset, limit| {
        db.recent_sessions(&ListFilter {
            source: args.source.clone(),
            limit: Some(limit),
            offset,
        })
    };
    if !args.window.is_set() {
        return fetch(args.offset, args.limit);
    }
    filtered_page(args.limit, args.offset, fetch, |row| {
        let started = row.session.started_at;
        if args.window.contains(started) {
            Verdict::Keep
        } else if args.window.is_after(started) {
            Verdict::Stop
        } else {
            Verdict::Skip
        }
    })
}

fn print_table(ctx: &Context, args: &ListArgs, rows: &[Row<'_>]) -> CliResult {
    let out = &ctx.out;
    if rows.is_empty() {
        out.note(match &args.source {
            Some(source) => format!("no sessions from {source:?}"),
            None if args.picker() => "no sessions match".to_owned(),
            None => "no sessions".to_owned(),
        });
        return Ok(());
    }
    let id_width = rows
        .iter()
        .map(|r| r.session.id.chars().count())
        .max()
        .unwrap_or(2)
        .clamp(2, 36);
    let source_width = rows
        .iter()
        .map(|r| r.session.source.chars().count())
        .max()
        .unwrap_or(6)
        .clamp(6, 12);
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{}",
        out.bold(&format!(
            "{}  {}  {}  {:>5}  {}  {}  TITLE / PREVIEW",
            pad("ID", id_width),
            pad("SOURCE", source_width),
            pad("MODEL", 18),
            "MSGS",
            pad("LAST ACTIVE (UTC)", 17),
            pad("STATUS", 11),
        ))
    );
    for row in rows {
        let session = row.session;
        let status = match &session.end_reason {
            None if session.ended_at.is_none() => "live".to_owned(),
            None => "ended".to_owned(),
            Some(reason) => reason.clone(),
        };
        let _ = writeln!(
            text,
            "{}  {}  {}  {:>5}  {}  {}  {}{}",
            pad(&session.id, id_width),
            pad(&session.source, source_width),
            pad(session.model.as_deref().unwrap_or("-"), 18),
            session.message_count.unwrap_or(0),
            pad(&datetime(row.last_active), 17),
            pad(&status, 11),
            flags(out, session),
            described(out, session, row.preview)
        );
    }
    out.text(text)
}

/// `[pinned] ` / `[archived] ` before the title, when set.
fn flags(out: &Output, session: &Session) -> String {
    let mut flags = String::new();
    if session.pinned != 0 {
        flags.push_str(&out.style("1;33", "[pinned] "));
    }
    if session.archived != 0 {
        flags.push_str(&out.dim("[archived] "));
    }
    flags
}

fn described(out: &Output, session: &Session, preview: &str) -> String {
    let preview = shorten(&one_line(preview), 60);
    match (&session.title, preview.is_empty()) {
        (Some(title), true) => out.bold(title),
        (Some(title), false) => format!("{}  {}", out.bold(title), out.dim(&preview)),
        (None, false) => preview,
        (None, true) => out.dim("(no user message)"),
    }
}
