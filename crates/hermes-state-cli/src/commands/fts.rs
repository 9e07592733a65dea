//! `fts rebuild`, `fts optimize-storage` and `fts rebuild-cjk`: the FTS
//! maintenance of the library (`SessionDb::rebuild_fts_in_background`,
//! `SessionDb::optimize_fts_storage`, `SessionDb::rebuild_cjk_index`), each
//! step its own short transaction, so agents writing to the store meanwhile
//! are only briefly held up; a run that is interrupted continues where it
//! stopped the next time.

use hermes_state::{FtsIndex, MigrationPlan, OptimizeProgress, Refusal, SCHEMA_VERSION, SessionDb};
use serde_json::json;

use crate::cli::OptimizeStorageArgs;
use crate::error::{CliError, CliResult};
use crate::progress::Progress;
use crate::store::{Access, Context};

/// The store for the maintenance steps (refusing what is not a store),
/// and what its upgrade would leave: nothing is written yet.
fn maintenance_store(ctx: &Context) -> CliResult<(SessionDb, MigrationPlan)> {
    let db = ctx.open_file(Access::Write)?;
    let plan = db
        .migration_plan()
        .map_err(|e| ctx.fail(&e))?
        .ok_or_else(|| {
            CliError::failed(format!(
                "{}: {} holds no store yet",
                ctx.command,
                ctx.path.display()
            ))
            .hint("`hermes-state migrate` creates the schema in it")
        })?;
    Ok((db, plan))
}

/// The refusal the library's maintenance would meet after the upgrade, told
/// on the read side so that a refused run leaves an older file as it was:
/// the upgrade keeps the v11–v22 (inline) FTS layout, which the background
/// rebuild and the CJK index do not work on.
fn legacy_layout_after_upgrade(plan: &MigrationPlan) -> bool {
    plan.fts_optimize_available
}

fn family(index: FtsIndex) -> &'static str {
    match index {
        FtsIndex::Base => "indexing messages",
        FtsIndex::Cjk => "indexing CJK text",
    }
}

/// Moves the bar along the maintenance events.
fn follow(bar: &Progress, event: &OptimizeProgress) {
    match event {
        OptimizeProgress::Demoted { high_water } => {
            bar.set_message("indexing messages");
            bar.set_length(u64::try_from(*high_water).unwrap_or(0));
            bar.set_position(0);
        }
        OptimizeProgress::RebuildStarted { index, high_water } => {
            bar.set_message(family(*index));
            bar.set_length(u64::try_from(*high_water).unwrap_or(0));
            bar.set_position(0);
        }
        OptimizeProgress::Backfilled(step) => {
            bar.set_message(family(step.index));
            bar.set_length(u64::try_from(step.high_water).unwrap_or(0));
            bar.set_position(u64::try_from(step.progress).unwrap_or(0));
        }
        OptimizeProgress::TornDown(step) => {
            bar.set_message(&format!(
                "removing {}",
                step.table.as_deref().unwrap_or("old tables")
            ));
        }
        OptimizeProgress::Vacuumed { .. } => bar.set_message("vacuumed"),
        _ => {}
    }
}

fn refused(ctx: &Context, refusal: Refusal) -> CliError {
    let hint = match refusal {
        Refusal::LegacyLayout => "run `hermes-state fts optimize-storage` to convert it first",
        Refusal::NewerFtsStorage => "a newer Hermes wrote this index; upgrade hermes-state",
        Refusal::ReadOnly => "the file cannot be written; check its permissions",
        Refusal::Fts5Unavailable => "this SQLite build lacks FTS5",
        Refusal::NoFtsIndex => "`hermes-state migrate` creates the index",
    };
    CliError::failed(format!(
        "{}: refused on {} ({})",
        ctx.command,
        ctx.path.display(),
        refusal.reason()
    ))
    .hint(hint)
}

/// `fts rebuild`
pub fn rebuild(ctx: &Context) -> CliResult {
    let (db, plan) = maintenance_store(ctx)?;
    if legacy_layout_after_upgrade(&plan) {
        return Err(refused(ctx, Refusal::LegacyLayout));
    }
    ctx.start_writing(&db)?;
    let bar = Progress::bar(&ctx.out, 0, "starting", "ids");
    let report = db
        .rebuild_fts_in_background(|event| follow(&bar, &event))
        .map_err(|e| ctx.fail(&e))?;
    bar.finish();
    if let Some(refusal) = report.refused {
        return Err(refused(ctx, refusal));
    }
    if ctx.out.json {
        return ctx.out.json(&json!({
            "path": ctx.path.display().to_string(),
            "started": report.started,
            "base_chunks": report.base_chunks,
            "cjk_chunks": report.cjk_chunks,
            "cjk_skipped": report.cjk_skipped,
        }));
    }
    if ctx.out.quiet {
        return Ok(());
    }
    let what = if report.started {
        "rebuilt"
    } else {
        "finished the pending rebuild of"
    };
    ctx.out.line(format!(
        "{what} the full-text indexes of {} ({} + {} chunk(s))",
        ctx.path.display(),
        report.base_chunks,
        report.cjk_chunks
    ))
}

/// What every explicit (re)creation of the CJK index tells the user first.
const CJK_WARNING: &str = "warning: the CJK index's triggers fire on every message write: every other process that writes this store (a running Hermes agent included) needs the cjk_unicode61 tokenizer; one without it will mark the index stale and drop its triggers on its next open";

/// `fts rebuild-cjk`: the explicit opt-in that (re)creates the CJK index.
pub fn rebuild_cjk(ctx: &Context) -> CliResult {
    let (db, plan) = maintenance_store(ctx)?;
    // The library's refusals (`SessionDb::rebuild_cjk_index`), before the
    // upgrade and before the warning.
    let refusal = if !db.has_cjk_tokenizer().map_err(|e| ctx.fail(&e))? {
        Some("the cjk_unicode61 tokenizer is switched off (HERMES_CJK_FTS); cannot build the CJK index".to_owned())
    } else if legacy_layout_after_upgrade(&plan) {
        Some("the FTS layout is not the v23 one; optimise the FTS storage first".to_owned())
    } else if plan.to_version > SCHEMA_VERSION {
        Some(format!(
            "schema_version {} is newer than {SCHEMA_VERSION}: its CJK index belongs to the newer release",
            plan.to_version
        ))
    } else {
        None
    };
    if let Some(refusal) = refusal {
        return Err(ctx.fail(&hermes_state::Error::InvalidInput(refusal)));
    }
    ctx.start_writing(&db)?;
    ctx.out.note(CJK_WARNING);
    let spinner = Progress::spinner(&ctx.out, "indexing CJK text");
    let outcome = db.rebuild_cjk_index();
    spinner.finish();
    outcome.map_err(|e| ctx.fail(&e))?;
    db.close().map_err(|e| ctx.fail(&e))?;
    if ctx.out.json {
        return ctx.out.json(&json!({
            "path": ctx.path.display().to_string(),
            "cjk_rebuilt": true,
        }));
    }
    ctx.out
        .line(format!("rebuilt the CJK index of {}", ctx.path.display()))
}

/// `fts optimize-storage`
pub fn optimize_storage(ctx: &Context, args: &OptimizeStorageArgs) -> CliResult {
    let (db, _) = maintenance_store(ctx)?;
    ctx.start_writing(&db)?;
    if db.has_cjk_tokenizer().map_err(|e| ctx.fail(&e))? {
        ctx.out.note(CJK_WARNING);
    }
    let bar = Progress::bar(&ctx.out, 0, "checking", "ids");
    let report = db
        .optimize_fts_storage(args.vacuum, |event| follow(&bar, &event))
        .map_err(|e| ctx.fail(&e))?;
    bar.finish();
    if let Some(refusal) = report.refused {
        return Err(refused(ctx, refusal));
    }
    if ctx.out.json {
        return ctx.out.json(&json!({
            "path": ctx.path.display().to_string(),
            "ok": report.ok(),
            "demoted": report.demoted,
            "base_chunks": report.base_chunks,
            "cjk_reset": report.cjk_reset,
            "cjk_chunks": report.cjk_chunks,
            "trash_dropped": report.trash_dropped,
            "vacuumed": report.vacuumed,
            "settled": report.settled,
        }));
    }
    if ctx.out.quiet {
        return Ok(());
    }
    let mut done = Vec::new();
    if report.demoted {
        done.push("converted the legacy layout".to_owned());
    }
    if report.base_chunks > 0 {
        done.push(format!("{} index chunk(s)", report.base_chunks));
    }
    if report.cjk_reset || report.cjk_chunks > 0 {
        done.push(format!("CJK index: {} chunk(s)", report.cjk_chunks));
    }
    if !report.trash_dropped.is_empty() {
        done.push(format!(
            "dropped {} old table(s)",
            report.trash_dropped.len()
        ));
    }
    if report.vacuumed == Some(true) {
        done.push("vacuumed".to_owned());
    }
    let summary = if done.is_empty() {
        "nothing to do".to_owned()
    } else {
        done.join(", ")
    };
    ctx.out.line(format!(
        "{}: {summary}; FTS storage {}",
        ctx.path.display(),
        if report.settled {
            "is current (version 1)"
        } else {
            "is not settled yet (run again)"
        }
    ))
}
