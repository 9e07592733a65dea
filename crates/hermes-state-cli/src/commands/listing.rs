//! `sessions list`: every session (the default), or the agent's session
//! picker (`list_sessions_rich`, `api.md` §10.3) when one of its filters is
//! given.

use std::fmt::Write as _;

use hermes_state::paging::{Verdict, filtered_page};
use hermes_state::time_window::recent_sessions_in;
use hermes_state::{ListFilter, RichListOptions, RichSession, Session, SessionStore};

use crate::cli::ListArgs;
use crate::columns::{self, fit};
use crate::commands::to_json;
use crate::error::CliResult;
use crate::output::{Output, datetime, one_line, shorten};
use crate::row_format::RowFormat;
use crate::store::{Access, Context};
use crate::{clock, local_time};

/// One line of the listing, whichever query produced it.
struct Row<'a> {
    session: &'a Session,
    preview: &'a str,
    last_active: f64,
}

/// `sessions list`
pub fn list(ctx: &Context, args: &ListArgs) -> CliResult {
    let db = &*ctx.open(Access::Read)?;
    let format = RowFormat::chosen(&ctx.out, args.format)?;
    if args.picker() {
        let rows = picker_rows(ctx, db, args)?;
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
    let rows = recent_in_window(db, args).map_err(|e| ctx.fail(&e))?;
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
fn picker_rows(
    ctx: &Context,
    db: &dyn SessionStore,
    args: &ListArgs,
) -> CliResult<Vec<RichSession>> {
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
    let fetch = |offset, limit| {
        db.list_sessions_rich(&RichListOptions {
            offset,
            limit,
            ..options.clone()
        })
    };
    let judge = |row: &RichSession| {
        if keep(row) {
            Verdict::Keep
        } else {
            Verdict::Skip
        }
    };
    filtered_page(args.limit, args.offset, fetch, judge).map_err(|e| ctx.fail(&e))
}

/// The default listing (newest start first), with `--since` / `--until` on
/// `started_at`: the library reads the window, the listing having no time
/// filter.
fn recent_in_window(
    db: &dyn SessionStore,
    args: &ListArgs,
) -> hermes_state::Result<Vec<hermes_state::SessionListing>> {
    let filter = ListFilter {
        source: args.source.clone(),
        limit: Some(args.limit),
        offset: args.offset,
    };
    recent_sessions_in(db, &filter, args.window.bounds())
}

/// The narrowest the title / preview column gets before other columns give
/// way.
const TITLE_MIN: usize = 16;

/// The optional columns, in the order they are dropped when the table does
/// not fit: the age column already tells how recent a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Optional {
    Status,
    LastActive,
    Source,
}

/// The widths of the columns for the terminal (`crate::columns`): the title
/// and preview shrink first (down to [`TITLE_MIN`]), then the model (down to
/// its last `/`-segment), then the status, last-active time and source
/// columns are left out, in that order.
struct Layout {
    id: usize,
    source: Option<usize>,
    model: usize,
    last_active: Option<usize>,
    age: usize,
    status: Option<usize>,
    title: usize,
}

fn layout(total: usize, rows: &[Line<'_>], header_time: &str) -> Layout {
    let widest = |f: &dyn Fn(&Line<'_>) -> usize, floor: usize| {
        rows.iter().map(f).max().unwrap_or(0).max(floor)
    };
    let id = widest(&|r| columns::width(&r.id), 2).min(36);
    let source = widest(&|r| columns::width(&r.source), 6).min(12);
    let model_natural = widest(&|r| columns::width(&r.model), 5);
    let model_floor = widest(&|r| columns::model_floor(&r.model), 5);
    let last_active = columns::width(header_time).max(16);
    let age = widest(&|r| columns::width(&r.age), 3);
    let status = widest(&|r| columns::width(&r.status), 6).min(11);
    let title_natural = widest(&|r| columns::width(&r.described_plain()), 15);
    let mut shown = [Optional::Status, Optional::LastActive, Optional::Source].to_vec();
    let fixed = |model: usize, shown: &[Optional]| {
        let mut sum = id + model + 5 + age;
        let mut count = 5; // id, model, msgs, age, title
        for column in shown {
            sum += match column {
                Optional::Status => status,
                Optional::LastActive => last_active,
                Optional::Source => source,
            };
            count += 1;
        }
        sum + 2 * (count - 1)
    };
    let mut model = model_natural;
    let title = loop {
        let rest = total.saturating_sub(fixed(model, &shown));
        if rest >= title_natural {
            break title_natural;
        }
        if rest >= TITLE_MIN {
            break rest;
        }
        // The title is at its narrowest: the model gives way, down to its
        // floor; then a column goes (and the model may widen again).
        if model > model_floor {
            model = model.saturating_sub(TITLE_MIN - rest).max(model_floor);
            continue;
        }
        if shown.is_empty() {
            break TITLE_MIN;
        }
        shown.remove(0);
        model = model_natural;
    };
    // A model cut at a `/` may come out narrower than its column: the
    // columns it leaves go to the title.
    let model_used = rows
        .iter()
        .map(|r| columns::width(&columns::shorten_model(&r.model, model)))
        .max()
        .unwrap_or(0)
        .max(5);
    let title = (title + model.saturating_sub(model_used)).min(title_natural.max(title));
    let model = model_used;
    let has = |c: Optional| shown.contains(&c);
    Layout {
        id,
        source: has(Optional::Source).then_some(source),
        model,
        last_active: has(Optional::LastActive).then_some(last_active),
        age,
        status: has(Optional::Status).then_some(status),
        title,
    }
}

/// One row of the table as plain text, before widths and styles.
struct Line<'a> {
    session: &'a Session,
    id: String,
    source: String,
    model: String,
    last_active: f64,
    age: String,
    status: String,
    flags: String,
    title: Option<String>,
    preview: String,
}

impl Line<'_> {
    fn described_plain(&self) -> String {
        let mut text = self.flags.clone();
        match (&self.title, self.preview.is_empty()) {
            (Some(title), true) => text.push_str(title),
            (Some(title), false) => {
                text.push_str(title);
                text.push_str("  ");
                text.push_str(&self.preview);
            }
            (None, false) => text.push_str(&self.preview),
            (None, true) => text.push_str("(no user message)"),
        }
        text
    }
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
    let now = clock::now();
    let lines: Vec<Line<'_>> = rows
        .iter()
        .map(|row| {
            let session = row.session;
            let mut flags = String::new();
            if session.pinned != 0 {
                flags.push_str("[pinned] ");
            }
            if session.archived != 0 {
                flags.push_str("[archived] ");
            }
            Line {
                session,
                id: session.id.clone(),
                source: session.source.clone(),
                model: session.model.clone().unwrap_or_else(|| "-".to_owned()),
                last_active: row.last_active,
                age: local_time::age(row.last_active, now),
                status: match &session.end_reason {
                    None if session.ended_at.is_none() => "live".to_owned(),
                    None => "ended".to_owned(),
                    Some(reason) => reason.clone(),
                },
                flags,
                title: session.title.clone(),
                preview: shorten(&one_line(row.preview), 60),
            }
        })
        .collect();
    let header_time = format!("LAST ACTIVE ({})", local_time::label(now));
    let width = columns::table_width(out.stdout_tty);
    let l = layout(width, &lines, &header_time);
    let mut text = String::new();
    let mut header = vec![fit("ID", l.id)];
    if let Some(w) = l.source {
        header.push(fit("SOURCE", w));
    }
    header.push(fit("MODEL", l.model));
    header.push(format!("{:>5}", "MSGS"));
    if let Some(w) = l.last_active {
        header.push(fit(&header_time, w));
    }
    header.push(format!("{:>w$}", "AGE", w = l.age));
    if let Some(w) = l.status {
        header.push(fit("STATUS", w));
    }
    header.push(columns::cut("TITLE / PREVIEW", l.title));
    let _ = writeln!(text, "{}", out.bold(&header.join("  ")));
    for line in &lines {
        let mut cells = vec![fit(&line.id, l.id)];
        if let Some(w) = l.source {
            cells.push(fit(&line.source, w));
        }
        let model = columns::shorten_model(&line.model, l.model);
        cells.push(fit(&model, l.model.max(columns::width(&model))));
        cells.push(format!("{:>5}", line.session.message_count.unwrap_or(0)));
        if let Some(w) = l.last_active {
            cells.push(fit(&datetime(line.last_active), w));
        }
        cells.push(format!("{:>w$}", line.age, w = l.age));
        if let Some(w) = l.status {
            cells.push(fit(&line.status, w));
        }
        cells.push(described(out, line, l.title));
        let _ = writeln!(text, "{}", cells.join("  "));
    }
    out.text(text)
}

/// The flags (`[pinned] ` yellow, `[archived] ` dim), the title (bold) and
/// the preview (dim) in `width` columns: the title first, the preview in
/// what is left (left out under 8 columns).
fn described(out: &Output, line: &Line<'_>, width: usize) -> String {
    let session = line.session;
    let mut text = String::new();
    let mut used = 0;
    for (on, flag, code) in [
        (session.pinned != 0, "[pinned] ", "1;33"),
        (session.archived != 0, "[archived] ", "2"),
    ] {
        if on && used + columns::width(flag) <= width {
            text.push_str(&out.style(code, flag));
            used += columns::width(flag);
        }
    }
    let budget = width - used;
    match &line.title {
        Some(title) => {
            let title = columns::cut(title, budget);
            let left = budget.saturating_sub(columns::width(&title) + 2);
            text.push_str(&out.bold(&title));
            if !line.preview.is_empty() && left >= 8 {
                text.push_str("  ");
                text.push_str(&out.dim(&columns::cut(&line.preview, left)));
            }
        }
        None if line.preview.is_empty() => {
            text.push_str(&out.dim(&columns::cut("(no user message)", budget)));
        }
        None => text.push_str(&columns::cut(&line.preview, budget)),
    }
    text
}
