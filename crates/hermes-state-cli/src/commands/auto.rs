//! `maintenance auto`: the agent's periodic upkeep (`api.md` §11.4), run by
//! hand: each part at most once per interval, remembered in the store.

use hermes_state::prelude::*;
use hermes_state::{AutoArchiveOptions, AutoPruneOptions, SessionStore};
use serde_json::{Value, json};

use crate::cli::AutoArgs;
use crate::commands::to_json;
use crate::error::{CliError, CliResult};
use crate::output::when_seconds;
use crate::progress::Progress;
use crate::store::{Access, Context};

/// `state_meta` keys of the last runs (`schema-v23.md` §8), read only to
/// say why a run was skipped.
const LAST_AUTO_PRUNE: &str = "last_auto_prune";
const LAST_AUTO_ARCHIVE: &str = "last_auto_archive";

/// When a part last ran, as stored (Unix seconds); `None` if never or unreadable.
fn last_run(ctx: &Context, db: &dyn SessionStore, key: &str) -> CliResult<Option<f64>> {
    Ok(db
        .get_meta(key)
        .map_err(|e| ctx.fail(&e))?
        .and_then(|text| text.trim().parse::<f64>().ok())
        .filter(|t| t.is_finite()))
}

/// "skipped: last ran … UTC, less than N hour(s) ago".
fn skipped_why(last: Option<f64>, hours: f64) -> String {
    match last {
        Some(at) => format!(
            "skipped: last ran {}, less than {hours} hour(s) ago",
            when_seconds(at)
        ),
        None => format!("skipped: last ran less than {hours} hour(s) ago"),
    }
}

/// `maintenance auto`
/// `maintenance auto` (PostgreSQL never vacuums: autovacuum reclaims the
/// space there).
pub fn auto(ctx: &Context, args: &AutoArgs) -> CliResult {
    let db = &*ctx.open(Access::Write)?;
    let on_file = db.as_sqlite().is_some();
    ctx.start_writing(db)?;
    let mut lines = Vec::new();
    let mut errors = Vec::new();

    let prune = if args.no_prune {
        lines.push("auto prune: not run (--no-prune)".to_owned());
        Value::Null
    } else {
        let last = last_run(ctx, db, LAST_AUTO_PRUNE)?;
        let options = AutoPruneOptions {
            retention_days: args.retention_days,
            min_interval_hours: args.prune_interval_hours,
            vacuum: !args.no_vacuum,
            sessions_dir: args.sessions_dir.clone(),
        };
        let spinner = Progress::spinner(&ctx.out, "auto prune");
        let report = db.maybe_auto_prune_and_vacuum(&options);
        spinner.finish();
        lines.push(format!(
            "auto prune: {}",
            match (&report.error, report.skipped) {
                (Some(error), _) => format!("failed: {error}"),
                (None, true) => skipped_why(last, args.prune_interval_hours),
                (None, false) => format!(
                    "ran: pruned {} ended session(s) started more than {} day(s) ago{}",
                    report.pruned,
                    args.retention_days,
                    if report.vacuumed {
                        ", then vacuumed"
                    } else if report.pruned > 0 && !on_file && !args.no_vacuum {
                        " (PostgreSQL: no vacuum; autovacuum reclaims the space)"
                    } else if report.pruned > 0 {
                        " (not vacuumed: --no-vacuum)"
                    } else {
                        ""
                    }
                ),
            }
        ));
        if let Some(error) = &report.error {
            errors.push(format!("auto prune: {error}"));
        }
        let mut value = to_json!(&report);
        if let Value::Object(map) = &mut value {
            map.insert("last_run".to_owned(), json!(last));
            map.insert("retention_days".to_owned(), json!(args.retention_days));
            map.insert(
                "min_interval_hours".to_owned(),
                json!(args.prune_interval_hours),
            );
        }
        value
    };

    let archive = if args.no_archive {
        lines.push("auto archive: not run (--no-archive)".to_owned());
        Value::Null
    } else {
        let last = last_run(ctx, db, LAST_AUTO_ARCHIVE)?;
        let options = AutoArchiveOptions {
            idle_days: args.archive_idle_days,
            min_interval_hours: args.archive_interval_hours,
            exclude_pinned: !args.archive_pinned,
        };
        let report = db.maybe_auto_archive(&options);
        lines.push(format!(
            "auto archive: {}",
            match (&report.error, report.skipped) {
                (Some(error), _) => format!("failed: {error}"),
                (None, true) => skipped_why(last, args.archive_interval_hours),
                (None, false) => format!(
                    "ran: archived {} session(s) idle for more than {} day(s){}",
                    report.archived,
                    args.archive_idle_days,
                    if args.archive_pinned {
                        ""
                    } else {
                        " (pinned ones left alone)"
                    }
                ),
            }
        ));
        if let Some(error) = &report.error {
            errors.push(format!("auto archive: {error}"));
        }
        let mut value = to_json!(&report);
        if let Value::Object(map) = &mut value {
            map.insert("last_run".to_owned(), json!(last));
            map.insert("idle_days".to_owned(), json!(args.archive_idle_days));
            map.insert(
                "min_interval_hours".to_owned(),
                json!(args.archive_interval_hours),
            );
            map.insert("exclude_pinned".to_owned(), json!(!args.archive_pinned));
        }
        value
    };

    let out = &ctx.out;
    if out.json {
        out.json(&json!({"prune": prune, "archive": archive}))?;
    } else if !out.quiet || !errors.is_empty() {
        out.text(lines.iter().map(|l| format!("{l}\n")).collect::<String>())?;
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(CliError::failed(format!(
            "maintenance auto: {} (in {})",
            errors.join("; "),
            ctx.path.display()
        )))
    }
}
