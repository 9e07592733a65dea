//! `prune`: ended sessions by age and by every filter of `api.md` §11.3.

use std::fmt::Write as _;

use hermes_state::{PruneFilters, PruneOptions};
use serde_json::{Map, Value, json};

use crate::cli::PruneArgs;
use crate::commands::to_json;
use crate::confirm::{Consent, id_list, sessions_summary};
use crate::error::CliResult;
use crate::output::{datetime, when_seconds};
use crate::progress::Progress;
use crate::store::{Access, Context};

/// The library's filters from the flags; an empty text means no filter.
fn filters(args: &PruneArgs) -> PruneFilters {
    PruneFilters {
        started_before: args.started_before,
        started_after: args.started_after,
        title_like: args.title_like.clone(),
        end_reason: args.end_reason.clone(),
        cwd_prefix: args.cwd.clone(),
        min_messages: args.min_messages,
        max_messages: args.max_messages,
        archived: match (args.archived, args.not_archived) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
        model_like: args.model_like.clone(),
        provider: args.provider.clone(),
        user_id: args.user_id.clone(),
        chat_id: args.chat_id.clone(),
        chat_type: args.chat_type.clone(),
        branch_like: args.branch_like.clone(),
        min_tokens: args.min_tokens,
        max_tokens: args.max_tokens,
        min_cost: args.min_cost,
        max_cost: args.max_cost,
        min_tool_calls: args.min_tool_calls,
        max_tool_calls: args.max_tool_calls,
    }
}

/// The filters that were given, by the library's field names, for JSON.
fn given_filters(args: &PruneArgs) -> Map<String, Value> {
    let all = json!({
        "started_before": args.started_before,
        "started_after": args.started_after,
        "title_like": args.title_like,
        "end_reason": args.end_reason,
        "cwd_prefix": args.cwd,
        "min_messages": args.min_messages,
        "max_messages": args.max_messages,
        "archived": filters(args).archived,
        "model_like": args.model_like,
        "provider": args.provider,
        "user_id": args.user_id,
        "chat_id": args.chat_id,
        "chat_type": args.chat_type,
        "branch_like": args.branch_like,
        "min_tokens": args.min_tokens,
        "max_tokens": args.max_tokens,
        "min_cost": args.min_cost,
        "max_cost": args.max_cost,
        "min_tool_calls": args.min_tool_calls,
        "max_tool_calls": args.max_tool_calls,
    });
    match all {
        Value::Object(map) => map.into_iter().filter(|(_, v)| !v.is_null()).collect(),
        _ => Map::new(),
    }
}

/// "ended cli sessions started more than 90 day(s) ago, title contains …".
fn scope(args: &PruneArgs) -> String {
    let mut text = match &args.source {
        Some(source) => format!("ended {source} sessions"),
        None => "ended sessions".to_owned(),
    };
    match (args.started_before, args.older_than_days) {
        (Some(before), _) => {
            let _ = write!(text, " started before {}", when_seconds(before));
        }
        (None, Some(days)) => {
            let _ = write!(text, " started more than {days} day(s) ago");
        }
        (None, None) => text.push_str(" of any age"),
    }
    if let Some(after) = args.started_after {
        let _ = write!(text, ", started after {}", when_seconds(after));
    }
    let mut parts = Vec::new();
    for (name, value) in given_filters(args) {
        if name.starts_with("started_") {
            continue;
        }
        let shown = match value {
            Value::String(s) => format!("{s:?}"),
            other => other.to_string(),
        };
        parts.push(format!("{name} {shown}"));
    }
    if !parts.is_empty() {
        let _ = write!(text, ", {}", parts.join(", "));
    }
    text
}

/// `--since` / `--until` as the library's `started_after` / `started_before`
/// (the later lower bound, the earlier upper bound, when both spellings are given).
fn with_window(args: &PruneArgs) -> PruneArgs {
    let mut args = args.clone();
    args.started_after = crate::time_window::later(args.started_after, args.window.since);
    args.started_before = crate::time_window::earlier(args.started_before, args.window.until);
    args
}

/// `prune`
/// `prune` (opened read-only for `--dry-run`)
pub fn prune(ctx: &Context, args: &PruneArgs) -> CliResult {
    let args = &with_window(args);
    let consent = Consent::new(args.consent.yes);
    let access = if args.dry_run {
        Access::Read
    } else {
        consent.require(ctx)?;
        Access::Write
    };
    let db = &*ctx.open(access)?;
    let options = PruneOptions {
        older_than_days: args.older_than_days.map(f64::from),
        source: args.source.clone(),
        filters: filters(args),
        dry_run: args.dry_run,
        sessions_dir: args.sessions_dir.clone(),
    };
    if !args.dry_run && consent.must_ask() {
        // What would go, first; the prune itself re-applies the filters, so
        // a session an agent ends meanwhile may join (its report says so).
        let preview = PruneOptions {
            dry_run: true,
            ..options.clone()
        };
        let planned = db.prune_sessions(&preview).map_err(|e| ctx.fail(&e))?;
        if planned.count > 0 {
            consent.ask(
                ctx,
                &format!(
                    "prune {} ({})?",
                    sessions_summary(&planned.ids),
                    scope(args)
                ),
            )?;
        }
    }
    if !args.dry_run {
        ctx.start_writing(db)?;
    }
    let spinner = Progress::spinner(
        &ctx.out,
        if args.dry_run {
            "finding sessions to prune"
        } else {
            "pruning"
        },
    );
    let report = db.prune_sessions(&options).map_err(|e| ctx.fail(&e))?;
    spinner.finish();
    let out = &ctx.out;
    // In a dry run, the sessions themselves (they still exist) say what would go.
    let mut details = Vec::new();
    if args.dry_run {
        for id in &report.ids {
            if let Some(session) = db.get_session(id).map_err(|e| ctx.fail(&e))? {
                details.push(session);
            }
        }
    }
    if out.json {
        let mut value = json!({
            "dry_run": args.dry_run,
            "older_than_days": args.older_than_days,
            "source": args.source,
            "filters": given_filters(args),
            "count": report.count,
            "ids": report.ids,
        });
        if args.dry_run
            && let Value::Object(map) = &mut value
        {
            map.insert("sessions".to_owned(), to_json!(&details));
        }
        return out.json(&value);
    }
    let scope = scope(args);
    if report.count == 0 {
        if !out.quiet {
            out.line(format!("no {scope}; nothing to prune"))?;
        }
        return Ok(());
    }
    let mut text = String::new();
    if args.dry_run {
        let _ = writeln!(
            text,
            "would prune {} {scope} (nothing was deleted):",
            report.count
        );
        for s in &details {
            let _ = writeln!(
                text,
                "  {}  {}  started {}  {} message(s)  {}",
                s.id,
                s.source,
                datetime(s.started_at),
                s.message_count.unwrap_or(0),
                s.title.as_deref().unwrap_or("")
            );
        }
    } else {
        let _ = writeln!(
            text,
            "pruned {} {scope}: {}",
            report.count,
            id_list(&report.ids)
        );
        let _ = writeln!(
            text,
            "(`hermes-state vacuum` gives the space back to the file system)"
        );
    }
    if out.quiet && !args.dry_run {
        return Ok(());
    }
    out.text(text)
}
