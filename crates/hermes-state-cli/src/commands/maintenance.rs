//! `vacuum`, `backup`, `doctor`.

use hermes_state::{CounterMismatch, DoctorReport, FtsCheck, FtsNote, FtsRebuild};
use serde_json::{Value, json};

use crate::cli::{BackupArgs, DoctorArgs};
use crate::error::{CliError, CliResult};
use crate::output::count;
use crate::progress::Progress;
use crate::render;
use crate::store::{Access, Context};

fn file_size(path: &std::path::Path) -> u64 {
    let mut total = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    total += std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    total
}

/// `vacuum`
pub fn vacuum(ctx: &Context) -> CliResult {
    let db = ctx.open_file(Access::Write)?;
    ctx.start_writing(&db)?;
    let before = file_size(&ctx.path);
    let spinner = Progress::spinner(&ctx.out, "optimising the FTS indexes and vacuuming");
    let optimised = db.vacuum().map_err(|e| ctx.fail(&e))?;
    spinner.finish();
    let after = file_size(&ctx.path);
    if ctx.out.json {
        return ctx.out.json(&json!({
            "path": ctx.path.display().to_string(),
            "fts_tables_optimized": optimised,
            "bytes_before": before,
            "bytes_after": after,
        }));
    }
    if ctx.out.quiet {
        return Ok(());
    }
    ctx.out.line(format!(
        "vacuumed {}: {} → {} bytes ({optimised} FTS index(es) optimised)",
        ctx.path.display(),
        count(before as i64),
        count(after as i64)
    ))
}

/// `backup`
pub fn backup(ctx: &Context, args: &BackupArgs) -> CliResult {
    let db = ctx.open_file(Access::Read)?;
    if std::fs::symlink_metadata(&args.path).is_ok() {
        return Err(
            CliError::failed(format!("backup: {} already exists", args.path.display()))
                .hint("name a new file; a backup never overwrites"),
        );
    }
    let spinner = Progress::spinner(&ctx.out, &format!("backing up to {}", args.path.display()));
    db.backup_to(&args.path).map_err(|e| {
        CliError::store(&format!("backup to {}", args.path.display()), &ctx.path, &e)
    })?;
    spinner.finish();
    let bytes = std::fs::metadata(&args.path).map(|m| m.len()).unwrap_or(0);
    if ctx.out.json {
        return ctx.out.json(&json!({
            "path": args.path.display().to_string(),
            "source": ctx.path.display().to_string(),
            "bytes": bytes,
        }));
    }
    if ctx.out.quiet {
        return Ok(());
    }
    ctx.out.line(format!(
        "backed up {} to {} ({} bytes)",
        ctx.path.display(),
        args.path.display(),
        count(bytes as i64)
    ))
}

fn fts_check_json(check: &FtsCheck) -> (&'static str, Option<String>) {
    match check {
        FtsCheck::Ok => ("ok", None),
        FtsCheck::IndexOnly(why) => ("index_only", Some(why.clone())),
        FtsCheck::Failed(message) => ("failed", Some(message.clone())),
        FtsCheck::Skipped(why) => ("skipped", Some(why.clone())),
    }
}

fn counter_json(c: &CounterMismatch) -> Value {
    json!({
        "session_id": c.session_id,
        "message_count": c.message_count,
        "real_message_count": c.real_message_count,
        "tool_call_count": c.tool_call_count,
        "real_tool_call_count": c.real_tool_call_count,
        "counted_by_old_rule": c.counted_by_old_rule,
    })
}

fn note_kind(note: &FtsNote) -> &'static str {
    match note {
        FtsNote::LegacyLayout => "legacy_layout",
        FtsNote::RebuildPending { .. } => "rebuild_pending",
        FtsNote::CjkRebuildPending { .. } => "cjk_rebuild_pending",
        FtsNote::CjkStale => "cjk_stale",
        FtsNote::TrashTables(_) => "trash_tables",
    }
}

/// The doctor's report as JSON (the library's field names), after `path` when given.
fn doctor_json(path: Option<&str>, report: &DoctorReport) -> Value {
    let fts: Vec<Value> = report
        .fts
        .iter()
        .map(|c| {
            let (status, detail) = fts_check_json(&c.check);
            json!({"table": c.table, "status": status, "detail": detail})
        })
        .collect();
    let mut map = serde_json::Map::new();
    if let Some(path) = path {
        map.insert("path".to_owned(), path.into());
    }
    let body = json!({
        "healthy": report.is_healthy(),
        "problems": report.problem_count(),
        "integrity": report.integrity,
        "fts_missing": report.fts_missing,
        "fts": fts,
        "counters": report.counters.iter().map(counter_json).collect::<Vec<_>>(),
        "dangling_parents": report.dangling_parents.iter()
            .map(|d| json!({"session_id": d.session_id, "missing_parent": d.missing_parent}))
            .collect::<Vec<_>>(),
        "orphaned_messages": report.orphaned_messages.iter()
            .map(|o| json!({"session_id": o.session_id, "messages": o.messages}))
            .collect::<Vec<_>>(),
        "cycles": report.cycles.iter()
            .map(|c| json!({"sessions": c.sessions, "closing": c.closing}))
            .collect::<Vec<_>>(),
        "duplicate_titles": report.duplicate_titles.iter()
            .map(|d| json!({"title": d.title, "holders": d.holders}))
            .collect::<Vec<_>>(),
        "title_index_missing": report.title_index_missing,
        "awaited": report.awaited,
        "notes": report.notes.iter()
            .map(|n| json!({"kind": note_kind(n), "text": render::doctor::note_text(n)}))
            .collect::<Vec<_>>(),
    });
    if let Value::Object(body) = body {
        map.extend(body);
    }
    Value::Object(map)
}

fn indented(text: &str) -> String {
    text.lines().map(|line| format!("  {line}\n")).collect()
}

/// `doctor`: exit 0 when healthy, 1 when problems are found (or remain after `--repair`).
pub fn doctor(ctx: &Context, args: &DoctorArgs) -> CliResult {
    let out = &ctx.out;
    let path = ctx.path.display().to_string();
    let unhealthy = |report: &DoctorReport, after_repair: bool| {
        let n = report.problem_count();
        if after_repair {
            CliError::failed(format!("doctor --repair: {n} problem(s) remain in {path}"))
                .hint("what the repair cannot fix (SQLite integrity errors, messages of missing sessions) needs a backup: `hermes-state backup` keeps a copy, then restore an older one")
        } else {
            CliError::failed(format!("doctor: {n} problem(s) found in {path}"))
                .hint("`hermes-state doctor --repair` fixes what can be fixed (take a `hermes-state backup` first)")
        }
    };
    if !args.repair {
        // A reading command: read-only, so the FTS indexes are checked on
        // their own (the check against the messages is an FTS5 `INSERT`
        // command, refused on a read-only handle); `--repair` checks fully.
        let db = ctx.open_file(Access::Read)?;
        let spinner = Progress::spinner(out, "checking the store");
        let report = db.doctor().map_err(|e| ctx.fail(&e))?;
        spinner.finish();
        if out.json {
            out.json(&doctor_json(Some(&path), &report))?;
        } else {
            out.text(format!(
                "{}\n{}",
                out.bold(&path),
                indented(&render::doctor::doctor_text(&report))
            ))?;
        }
        return if report.is_healthy() {
            Ok(())
        } else {
            Err(unhealthy(&report, false))
        };
    }
    let db = ctx.open_file(Access::Write)?;
    ctx.start_writing(&db)?;
    let spinner = Progress::spinner(
        out,
        "repairing (FTS indexes are rebuilt; this can take a while)",
    );
    let report = db.repair().map_err(|e| ctx.fail(&e))?;
    spinner.finish();
    if out.json {
        out.json(&json!({
            "path": path,
            "fts_rebuilt": report.fts_rebuilt,
            "fts_mode": match report.fts_mode {
                FtsRebuild::OneShot => "one_shot",
                FtsRebuild::Background => "background",
            },
            "counters_fixed": report.counters_fixed.iter().map(counter_json).collect::<Vec<_>>(),
            "parents_cleared": report.parents_cleared.iter()
                .map(|d| json!({"session_id": d.session_id, "missing_parent": d.missing_parent}))
                .collect::<Vec<_>>(),
            "cycles_broken": report.cycles_broken.iter()
                .map(|b| json!({"session_id": b.session_id, "former_parent": b.former_parent}))
                .collect::<Vec<_>>(),
            "titles_cleared": report.titles_cleared.iter()
                .map(|t| json!({"session_id": t.session_id, "title": t.title}))
                .collect::<Vec<_>>(),
            "title_index_restored": report.title_index_restored,
            "after": doctor_json(None, &report.after),
        }))?;
    } else {
        let repaired = render::doctor::repair_text(&report);
        // The repair's own report ends with the doctor's report after it.
        out.text(format!(
            "{}\n{}",
            out.bold(&format!("{path}: repaired")),
            indented(&repaired)
        ))?;
    }
    if report.after.is_healthy() {
        Ok(())
    } else {
        Err(unhealthy(&report.after, true))
    }
}
