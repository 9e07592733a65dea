//! `stats`: one report of three tables (per model, per model and task, the
//! top sessions). `--json` / `--format json` print the whole report; the row
//! formats (`jsonl`, `csv`) print one table's rows, chosen by `--rows`
//! (per model by default), as `--format json --rows …` does as an array; a
//! table with `--rows` shows that section only.

use std::fmt::Write as _;

use clap::ValueEnum;
use serde_json::{Value, json};

use hermes_state::usage_window::{UsageReport, usage_report};

use crate::cli::StatsArgs;

use crate::commands::to_json;
use crate::error::CliResult;
use crate::output::{cost, count, pad};
use crate::row_format::RowFormat;
use crate::store::{Access, Context};

/// The tables of the report, for `stats --rows`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StatsRows {
    /// Totals per model
    Models,
    /// Usage per model and task
    Tasks,
    /// The sessions with the most tokens
    Top,
}

/// `stats`
pub fn stats(ctx: &Context, args: &StatsArgs) -> CliResult {
    let db = &*ctx.open(Access::Read)?;
    let format = RowFormat::chosen(&ctx.out, args.format)?;
    let out = &ctx.out;
    let report = usage_report(db, args.window.bounds(), args.top).map_err(|e| ctx.fail(&e))?;
    if args.window.is_set() {
        // The library's windowed report has no per-task rows: they carry no time.
        out.note("note: per-task usage is not split by time; left out with --since/--until");
    }
    let UsageReport {
        sessions,
        messages,
        models,
        top_sessions: top,
        usage,
    } = report;
    let section = |rows: StatsRows| args.rows.is_none_or(|asked| asked == rows);
    if format == RowFormat::Json && args.rows.is_none() {
        return out.json(&json!({
            "sessions": sessions,
            "messages": messages,
            "models": to_json!(&models),
            "top_sessions": to_json!(&top),
            "usage": to_json!(&usage),
        }));
    }
    if format != RowFormat::Table {
        let rows: Value = match args.rows.unwrap_or(StatsRows::Models) {
            StatsRows::Models => to_json!(&models),
            StatsRows::Tasks => to_json!(&usage),
            StatsRows::Top => to_json!(&top),
        };
        format.print(out, &rows)?;
        return Ok(());
    }
    let mut text = String::new();
    if args.rows.is_none() {
        let _ = writeln!(
            text,
            "{} sessions, {} messages\n",
            count(sessions),
            count(messages)
        );
    }
    if section(StatsRows::Models) && !models.is_empty() {
        let _ = writeln!(text, "{}", out.bold("Per model"));
        let _ = writeln!(
            text,
            "{}",
            out.dim(&format!(
                "  {}  {:>8}  {:>12}  {:>12}  {:>12}  {:>10}  {:>10}",
                pad("MODEL", 28),
                "SESSIONS",
                "INPUT",
                "OUTPUT",
                "CACHE READ",
                "REASONING",
                "COST"
            ))
        );
        for m in &models {
            let _ = writeln!(
                text,
                "  {}  {:>8}  {:>12}  {:>12}  {:>12}  {:>10}  {:>10}",
                model_cell(&m.model, 28),
                m.session_count,
                count(m.total_input.unwrap_or(0)),
                count(m.total_output.unwrap_or(0)),
                count(m.total_cache_read.unwrap_or(0)),
                count(m.total_reasoning.unwrap_or(0)),
                cost(m.total_cost)
            );
        }
        if models.len() > 1 {
            // The sum of the rows above (a session that changed model counts
            // once per model, as in its rows).
            let sum = |field: fn(&hermes_state::ModelTotals) -> Option<i64>| {
                models.iter().filter_map(field).sum::<i64>()
            };
            let total_cost = models
                .iter()
                .filter_map(|m| m.total_cost)
                .reduce(|a, b| a + b);
            let _ = writeln!(
                text,
                "{}",
                out.bold(&format!(
                    "  {}  {:>8}  {:>12}  {:>12}  {:>12}  {:>10}  {:>10}",
                    pad("TOTAL", 28),
                    models.iter().map(|m| m.session_count).sum::<i64>(),
                    count(sum(|m| m.total_input)),
                    count(sum(|m| m.total_output)),
                    count(sum(|m| m.total_cache_read)),
                    count(sum(|m| m.total_reasoning)),
                    cost(total_cost)
                ))
            );
        }
        text.push('\n');
    }
    // Usage by task adds nothing to the per-model table while every row is
    // the agent loop's, unless it was asked for.
    let tasks_differ = !usage.iter().all(|u| u.task.is_empty());
    if section(StatsRows::Tasks)
        && !usage.is_empty()
        && (tasks_differ || args.rows == Some(StatsRows::Tasks))
    {
        let _ = writeln!(text, "{}", out.bold("Per model and task"));
        for u in &usage {
            let task = if u.task.is_empty() { "agent" } else { &u.task };
            let _ = writeln!(
                text,
                "  {}  {}  {:>5} calls  {:>12} in  {:>12} out  {:>10}",
                model_cell(&u.model, 28),
                pad(task, 12),
                u.api_call_count,
                count(u.input_tokens),
                count(u.output_tokens),
                cost(Some(u.estimated_cost_usd))
            );
        }
        text.push('\n');
    }
    if section(StatsRows::Top) && !top.is_empty() {
        let _ = writeln!(text, "{}", out.bold("Top sessions by tokens"));
        for s in &top {
            let _ = writeln!(
                text,
                "  {}  {:>12} tokens  {:>10}  {}  {}",
                pad(&s.id, 28),
                count(s.total_tokens.unwrap_or(0)),
                cost(s.estimated_cost_usd),
                model_cell(s.model.as_deref().unwrap_or("-"), 20),
                s.title.as_deref().unwrap_or("")
            );
        }
    }
    out.text(text)
}

/// A model in a column of `width`: cut from the provider side, never in its
/// own name (`…/claude-sonnet-4-5`), padded; a name wider than that shows
/// whole and pushes the row.
fn model_cell(model: &str, width: usize) -> String {
    let shown = crate::columns::shorten_model(model, width);
    crate::columns::fit(&shown, width.max(crate::columns::width(&shown)))
}
