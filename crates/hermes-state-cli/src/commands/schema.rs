//! `schema` and `migrate`.
//!
//! Both inspect the file as it is on disk: `schema` and `migrate --dry-run`
//! open it read-only (whatever `--read-only` says), so an old file is shown
//! as it is, not as the open would upgrade it.

use std::fmt::Write as _;

use hermes_state::{OpenReport, SCHEMA_VERSION, SessionDb};
use serde_json::{Value, json};

use crate::cli::MigrateArgs;
use crate::error::{CliError, CliResult};
use crate::output::count;
use crate::progress::Progress;
use crate::store::{Context, upgrade_summary};

/// Opens the file read-only (refusing files that are not stores).
fn open_inspect(ctx: &Context) -> CliResult<SessionDb> {
    ctx.require_existing()?;
    let what = format!("cannot open {}", ctx.path.display());
    SessionDb::open_read_only(&ctx.path).map_err(|e| CliError::store(&what, &ctx.path, &e))
}

/// `schema`
pub fn schema(ctx: &Context) -> CliResult {
    let db = open_inspect(ctx)?;
    let info = db.schema_info().map_err(|e| ctx.fail(&e))?;
    let out = &ctx.out;
    if out.json {
        let mut value = crate::commands::to_json!(&info);
        if let Some(map) = value.as_object_mut() {
            map.insert("path".to_owned(), json!(ctx.path.display().to_string()));
            map.remove("empty");
        }
        return out.json(&value);
    }
    let (version, layout, fts_storage) = (
        info.schema_version,
        info.fts_layout,
        info.fts_storage_version.clone(),
    );
    let mut text = String::new();
    let _ = writeln!(text, "{}", out.bold(&ctx.path.display().to_string()));
    let version_text = match version {
        Some(v) if v == SCHEMA_VERSION => format!("{v} (current)"),
        Some(v) if v < SCHEMA_VERSION => {
            format!("{v} (older; `hermes-state migrate` upgrades it to {SCHEMA_VERSION})")
        }
        Some(v) => format!("{v} (newer than this tool's {SCHEMA_VERSION})"),
        None if info.empty => "none (an empty file)".to_owned(),
        None => "unknown (empty schema_version table)".to_owned(),
    };
    let _ = writeln!(text, "  schema version:   {version_text}");
    let _ = writeln!(
        text,
        "  FTS layout:       {} (storage version {})",
        layout,
        fts_storage.as_deref().unwrap_or("-")
    );
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let _ = writeln!(
        text,
        "  FTS indexes:      unicode61 {}, trigram {}, CJK {}",
        yes_no(info.fts.messages_fts),
        yes_no(info.fts.messages_fts_trigram),
        if info.fts.messages_fts_cjk {
            "yes"
        } else if info.fts.cjk_healthy {
            "built"
        } else {
            "no"
        }
    );
    let _ = writeln!(text, "  journal mode:     {}", info.journal_mode);
    if let (Some(size), Some(pages)) = (info.page_size, info.page_count) {
        let _ = writeln!(
            text,
            "  size:             {} bytes ({} pages of {size})",
            count(size * pages),
            count(pages)
        );
    }
    let _ = writeln!(text, "  SQLite:           {}", info.sqlite_version);
    let _ = writeln!(text, "\n{}", out.bold("Tables"));
    for t in info.tables.iter().filter(|t| !t.shadow) {
        let rows = t.rows.map_or_else(|| "?".to_owned(), count);
        let kind = if t.is_virtual { "  (FTS5)" } else { "" };
        let unit = if t.rows == Some(1) { "row" } else { "rows" };
        let _ = writeln!(text, "  {:<28} {:>10} {unit}{kind}", t.name, rows);
    }
    let shadows = info.tables.iter().filter(|t| t.shadow).count();
    let _ = writeln!(
        text,
        "\n  {} indexes, {} triggers, {} views, {shadows} FTS shadow tables",
        info.indexes.len(),
        info.triggers.len(),
        info.views.len()
    );
    out.text(text)
}

/// `migrate`
pub fn migrate(ctx: &Context, args: &MigrateArgs) -> CliResult {
    if args.dry_run {
        return migrate_dry_run(ctx);
    }
    if ctx.read_only {
        return Err(
            CliError::usage("`migrate` writes to the store, but --read-only was given")
                .hint("drop --read-only, or use `migrate --dry-run`"),
        );
    }
    if std::fs::metadata(&ctx.path).is_ok_and(|m| m.is_dir()) {
        return Err(
            CliError::failed(format!("{} is a directory", ctx.path.display()))
                .hint("--db takes the database file, e.g. ~/.hermes/state.db"),
        );
    }
    let spinner = Progress::spinner(&ctx.out, &format!("migrating {}", ctx.path.display()));
    let migrated =
        SessionDb::open(&ctx.path).and_then(|db| db.migrate().map(|report| (db, report)));
    spinner.finish();
    let (db, report) = migrated.map_err(|e| CliError::store("migrate", &ctx.path, &e))?;
    db.close().map_err(|e| ctx.fail(&e))?;
    let out = &ctx.out;
    if out.json {
        return out.json(&report_json(ctx, &report));
    }
    let path = ctx.path.display();
    if report.created {
        return out.line(format!(
            "created a new store at {path} (schema {})",
            report.to_version
        ));
    }
    match upgrade_summary(&report) {
        Some(summary) => {
            let mut line = format!("migrated {path}: {summary}");
            if !report.added_columns.is_empty() {
                let columns: Vec<String> = report
                    .added_columns
                    .iter()
                    .map(|c| format!("{}.{}", c.table, c.column))
                    .collect();
                let _ = write!(line, " ({})", columns.join(", "));
            }
            out.line(line)
        }
        None => out.line(format!(
            "{path} is up to date (schema {}); nothing to do",
            report.to_version
        )),
    }
}

fn report_json(ctx: &Context, report: &OpenReport) -> Value {
    let added: Vec<Value> = report
        .added_columns
        .iter()
        .map(|c| json!({"table": c.table, "column": c.column}))
        .collect();
    json!({
        "path": ctx.path.display().to_string(),
        "dry_run": false,
        "created": report.created,
        "from_version": report.from_version,
        "to_version": report.to_version,
        "journal_mode": report.journal_mode.name(),
        "added_columns": added,
        "fts": {
            "layout": report.fts.layout.name(),
            "rebuilt": report.fts.rebuilt,
            "cjk_rebuilt": report.fts.cjk_rebuilt,
            "cjk_marked_stale": report.fts.cjk_marked_stale,
        },
        "history": {
            "baselined": report.history.baselined,
            "applied": report.history.applied,
        },
    })
}

/// The dry run's answer for a missing or empty file: everything is created.
fn would_create(path: &str, exists: bool) -> Value {
    json!({
        "path": path, "dry_run": true, "exists": exists, "create": true,
        "from_version": null, "to_version": SCHEMA_VERSION,
        "up_to_date": false, "missing_tables": [], "missing_columns": [],
        "fts_layout": "absent", "fts_rebuild": true, "cjk_build": true,
        "fts_optimize_available": false,
    })
}

/// What an open would change, found without writing.
fn migrate_dry_run(ctx: &Context) -> CliResult {
    let out = &ctx.out;
    let path = ctx.path.display().to_string();
    match std::fs::metadata(&ctx.path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if out.json {
                return out.json(&would_create(&path, false));
            }
            return out.line(format!(
                "no store at {path}; `hermes-state migrate` would create one at schema {SCHEMA_VERSION}"
            ));
        }
        _ => ctx.require_existing()?,
    }
    let db = open_inspect(ctx)?;
    let Some(plan) = db
        .migration_plan()
        .map_err(|e| CliError::store("migrate --dry-run", &ctx.path, &e))?
    else {
        if out.json {
            return out.json(&would_create(&path, true));
        }
        return out.line(format!(
            "{path} is an empty file; `hermes-state migrate` would create the schema (version {SCHEMA_VERSION}) in it"
        ));
    };
    let version_change = plan.from_version != Some(plan.to_version);
    let legacy_kept = plan.fts_optimize_available;
    if out.json {
        let columns: Vec<Value> = plan
            .missing_columns
            .iter()
            .map(|(table, column)| json!({"table": table, "column": column}))
            .collect();
        return out.json(&json!({
            "path": path,
            "dry_run": true,
            "exists": true,
            "create": false,
            "from_version": plan.from_version,
            "to_version": plan.to_version,
            "up_to_date": plan.up_to_date,
            "missing_tables": plan.missing_tables,
            "missing_columns": columns,
            "fts_layout": plan.fts_layout,
            "fts_rebuild": plan.fts_rebuild,
            "cjk_build": false,
            "fts_optimize_available": legacy_kept,
        }));
    }
    let mut text = String::new();
    let from = plan
        .from_version
        .map_or_else(|| "unknown".to_owned(), |v| v.to_string());
    let legacy_note =
        "the v11–v22 full-text layout is kept; `hermes-state fts optimize-storage` converts it";
    if plan.up_to_date {
        let _ = writeln!(
            text,
            "{path} is up to date (schema {from}); migrate would change nothing"
        );
        if legacy_kept {
            let _ = writeln!(text, "  ({legacy_note})");
        }
        return out.text(text);
    }
    let _ = writeln!(text, "{path}: migrate would change:");
    if version_change {
        let _ = writeln!(text, "  schema version {from} → {}", plan.to_version);
    }
    for table in &plan.missing_tables {
        let _ = writeln!(text, "  create table {table}");
    }
    for (table, column) in &plan.missing_columns {
        let _ = writeln!(text, "  add column {table}.{column}");
    }
    if plan.fts_rebuild {
        let _ = writeln!(
            text,
            "  full-text index: {} → external (v23 layout), rebuilt from the messages",
            plan.fts_layout
        );
    }
    if legacy_kept {
        let _ = writeln!(text, "  ({legacy_note})");
    }
    let _ = writeln!(
        text,
        "nothing was written; run `hermes-state migrate` to apply"
    );
    out.text(text)
}
