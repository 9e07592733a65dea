//! `schema` and `migrate`.
//!
//! Both inspect the file as it is on disk: `schema` and `migrate --dry-run`
//! open it read-only (whatever `--read-only` says), so an old file is shown
//! as it is, not as the open would upgrade it.

use std::fmt::Write as _;

use hermes_state::rusqlite::Connection;
use hermes_state::schema::{FileShape, FtsLayout, JournalMode, OpenReport, detect, fts, reconcile};
use hermes_state::{FtsCapabilities, SCHEMA_VERSION, SessionDb};
use serde_json::{Value, json};

use crate::cli::MigrateArgs;
use crate::commands::query_error;
use crate::error::{CliError, CliResult};
use crate::output::count;
use crate::progress::Progress;
use crate::store::{Context, upgrade_summary};

/// The name of an FTS layout in JSON and text.
pub fn layout_name(layout: FtsLayout) -> &'static str {
    match layout {
        FtsLayout::Absent => "absent",
        FtsLayout::External => "external",
        FtsLayout::LegacyInline => "legacy_inline",
        FtsLayout::LegacyContentOnly => "legacy_content_only",
    }
}

fn journal_name(mode: JournalMode) -> &'static str {
    match mode {
        JournalMode::Wal => "wal",
        JournalMode::Delete => "delete",
        JournalMode::Other => "other",
    }
}

/// Opens the file read-only and classifies it (refusing files that are not stores).
fn open_inspect(ctx: &Context) -> CliResult<(SessionDb, FileShape)> {
    ctx.require_existing()?;
    let what = format!("cannot open {}", ctx.path.display());
    let db =
        SessionDb::open_read_only(&ctx.path).map_err(|e| CliError::store(&what, &ctx.path, &e))?;
    let shape = db
        .read(|conn| Ok(detect::inspect(conn, &ctx.path)?))
        .map_err(|e| CliError::store(&what, &ctx.path, &e))?;
    Ok((db, shape))
}

struct TableInfo {
    name: String,
    rows: Option<i64>,
    is_virtual: bool,
    shadow: bool,
}

fn tables(conn: &Connection) -> Result<Vec<TableInfo>, hermes_state::Error> {
    let mut stmt = conn
        .prepare(
            "SELECT name, COALESCE(sql, '') FROM sqlite_master WHERE type = 'table' ORDER BY rowid",
        )
        .map_err(|e| query_error("reading the schema", e))?;
    let rows: Vec<(String, String)> = stmt
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .and_then(Iterator::collect)
        .map_err(|e| query_error("reading the schema", e))?;
    let virtual_names: Vec<&str> = rows
        .iter()
        .filter(|(_, sql)| sql.to_ascii_uppercase().starts_with("CREATE VIRTUAL TABLE"))
        .map(|(name, _)| name.as_str())
        .collect();
    Ok(rows
        .iter()
        .map(|(name, sql)| {
            let is_virtual = sql.to_ascii_uppercase().starts_with("CREATE VIRTUAL TABLE");
            let shadow = !is_virtual
                && virtual_names.iter().any(|v| {
                    name.strip_prefix(v)
                        .is_some_and(|rest| rest.starts_with('_'))
                });
            let rows = conn
                .query_row(
                    &format!("SELECT count(*) FROM {}", reconcile::quote_identifier(name)),
                    [],
                    |row| row.get(0),
                )
                .ok();
            TableInfo {
                name: name.clone(),
                rows,
                is_virtual,
                shadow,
            }
        })
        .collect())
}

fn names_of(conn: &Connection, kind: &str) -> Result<Vec<String>, hermes_state::Error> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = ?1 AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
        .map_err(|e| query_error("reading the schema", e))?;
    stmt.query_map([kind], |row| row.get(0))
        .and_then(Iterator::collect)
        .map_err(|e| query_error("reading the schema", e))
}

fn pragma_text(conn: &Connection, pragma: &str) -> Option<String> {
    conn.query_row(&format!("PRAGMA {pragma}"), [], |row| {
        row.get::<_, hermes_state::rusqlite::types::Value>(0)
    })
    .ok()
    .map(|value| match value {
        hermes_state::rusqlite::types::Value::Integer(i) => i.to_string(),
        hermes_state::rusqlite::types::Value::Text(t) => t,
        other => format!("{other:?}"),
    })
}

/// `schema`
pub fn schema(ctx: &Context) -> CliResult {
    let (db, shape) = open_inspect(ctx)?;
    let store = match &shape {
        FileShape::Store(store) => Some(store.clone()),
        FileShape::Empty => None,
    };
    let (tables, indexes, triggers, views, journal, page_size, page_count, caps, cjk_healthy) = db
        .read(|conn| {
            Ok((
                tables(conn)?,
                names_of(conn, "index")?,
                names_of(conn, "trigger")?,
                names_of(conn, "view")?,
                pragma_text(conn, "journal_mode").unwrap_or_default(),
                pragma_text(conn, "page_size").and_then(|p| p.parse::<i64>().ok()),
                pragma_text(conn, "page_count").and_then(|p| p.parse::<i64>().ok()),
                FtsCapabilities::detect(conn)?,
                fts::cjk_index_healthy(conn).unwrap_or(false),
            ))
        })
        .map_err(|e| ctx.fail(&e))?;
    let version = store.as_ref().and_then(|s| s.version);
    let layout = store.as_ref().map_or(FtsLayout::Absent, |s| s.fts_layout);
    let fts_storage = store.as_ref().and_then(|s| s.fts_storage_version.clone());
    let out = &ctx.out;
    if out.json {
        let table_list: Vec<Value> = tables
            .iter()
            .map(|t| json!({"name": t.name, "rows": t.rows, "virtual": t.is_virtual, "shadow": t.shadow}))
            .collect();
        return out.json(&json!({
            "path": ctx.path.display().to_string(),
            "schema_version": version,
            "library_schema_version": SCHEMA_VERSION,
            "fts_layout": layout_name(layout),
            "fts_storage_version": fts_storage,
            "fts": {
                "messages_fts": caps.fts,
                "messages_fts_trigram": caps.trigram,
                "messages_fts_cjk": caps.cjk_serving,
                "cjk_healthy": cjk_healthy,
            },
            "journal_mode": journal,
            "sqlite_version": hermes_state::rusqlite::version(),
            "page_size": page_size,
            "page_count": page_count,
            "tables": table_list,
            "indexes": indexes,
            "triggers": triggers,
            "views": views,
        }));
    }
    let mut text = String::new();
    let _ = writeln!(text, "{}", out.bold(&ctx.path.display().to_string()));
    let version_text = match version {
        Some(v) if v == SCHEMA_VERSION => format!("{v} (current)"),
        Some(v) if v < SCHEMA_VERSION => {
            format!("{v} (older; `hermes-state migrate` upgrades it to {SCHEMA_VERSION})")
        }
        Some(v) => format!("{v} (newer than this tool's {SCHEMA_VERSION})"),
        None if store.is_none() => "none (an empty file)".to_owned(),
        None => "unknown (empty schema_version table)".to_owned(),
    };
    let _ = writeln!(text, "  schema version:   {version_text}");
    let _ = writeln!(
        text,
        "  FTS layout:       {} (storage version {})",
        layout_name(layout),
        fts_storage.as_deref().unwrap_or("-")
    );
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let _ = writeln!(
        text,
        "  FTS indexes:      unicode61 {}, trigram {}, CJK {}",
        yes_no(caps.fts),
        yes_no(caps.trigram),
        if caps.cjk_serving {
            "yes"
        } else if cjk_healthy {
            "built"
        } else {
            "no"
        }
    );
    let _ = writeln!(text, "  journal mode:     {journal}");
    if let (Some(size), Some(pages)) = (page_size, page_count) {
        let _ = writeln!(
            text,
            "  size:             {} bytes ({} pages of {size})",
            count(size * pages),
            count(pages)
        );
    }
    let _ = writeln!(
        text,
        "  SQLite:           {}",
        hermes_state::rusqlite::version()
    );
    let _ = writeln!(text, "\n{}", out.bold("Tables"));
    for t in tables.iter().filter(|t| !t.shadow) {
        let rows = t.rows.map_or_else(|| "?".to_owned(), count);
        let kind = if t.is_virtual { "  (FTS5)" } else { "" };
        let unit = if t.rows == Some(1) { "row" } else { "rows" };
        let _ = writeln!(text, "  {:<28} {:>10} {unit}{kind}", t.name, rows);
    }
    let shadows = tables.iter().filter(|t| t.shadow).count();
    let _ = writeln!(
        text,
        "\n  {} indexes, {} triggers, {} views, {shadows} FTS shadow tables",
        indexes.len(),
        triggers.len(),
        views.len()
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
        "journal_mode": journal_name(report.journal_mode),
        "added_columns": added,
        "fts": {
            "layout": layout_name(report.fts.layout),
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
    let (db, shape) = open_inspect(ctx)?;
    let FileShape::Store(store) = shape else {
        if out.json {
            return out.json(&would_create(&path, true));
        }
        return out.line(format!(
            "{path} is an empty file; `hermes-state migrate` would create the schema (version {SCHEMA_VERSION}) in it"
        ));
    };
    detect::ensure_writable(&store, &ctx.path).map_err(|e| {
        CliError::store(
            "migrate --dry-run",
            &ctx.path,
            &hermes_state::Error::from(e),
        )
    })?;
    let (missing_tables, missing_columns, cjk_present) = db
        .read(|conn| {
            let mut tables = Vec::new();
            let mut columns = Vec::new();
            for wanted in reconcile::wanted_tables()? {
                let live = reconcile::live_columns(conn, &wanted.name)?;
                if live.is_empty() {
                    tables.push(wanted.name.clone());
                    continue;
                }
                for column in &wanted.columns {
                    if !live.iter().any(|c| c.name == column.name) {
                        columns.push((wanted.name.clone(), column.name.clone()));
                    }
                }
            }
            let cjk = detect::object_exists(conn, "table", "messages_fts_cjk")?;
            Ok((tables, columns, cjk))
        })
        .map_err(|e| ctx.fail(&e))?;
    let to_version = store
        .version
        .map_or(SCHEMA_VERSION, |v| v.max(SCHEMA_VERSION));
    let version_change = store.version != Some(to_version);
    // The open rebuilds a missing index and the v1–v10 layout in the v23
    // layout; it keeps the v11–v22 (inline) layout, which only the explicit
    // `fts optimize-storage` converts.
    let fts_rebuild = matches!(
        store.fts_layout,
        FtsLayout::Absent | FtsLayout::LegacyContentOnly
    );
    let legacy_kept = store.fts_layout == FtsLayout::LegacyInline;
    let cjk_build = !cjk_present && !legacy_kept;
    let up_to_date = !version_change
        && missing_tables.is_empty()
        && missing_columns.is_empty()
        && !fts_rebuild
        && !cjk_build;
    if out.json {
        let columns: Vec<Value> = missing_columns
            .iter()
            .map(|(table, column)| json!({"table": table, "column": column}))
            .collect();
        return out.json(&json!({
            "path": path,
            "dry_run": true,
            "exists": true,
            "create": false,
            "from_version": store.version,
            "to_version": to_version,
            "up_to_date": up_to_date,
            "missing_tables": missing_tables,
            "missing_columns": columns,
            "fts_layout": layout_name(store.fts_layout),
            "fts_rebuild": fts_rebuild,
            "cjk_build": cjk_build,
            "fts_optimize_available": legacy_kept,
        }));
    }
    let mut text = String::new();
    let from = store
        .version
        .map_or_else(|| "unknown".to_owned(), |v| v.to_string());
    let legacy_note =
        "the v11–v22 full-text layout is kept; `hermes-state fts optimize-storage` converts it";
    if up_to_date {
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
        let _ = writeln!(text, "  schema version {from} → {to_version}");
    }
    for table in &missing_tables {
        let _ = writeln!(text, "  create table {table}");
    }
    for (table, column) in &missing_columns {
        let _ = writeln!(text, "  add column {table}.{column}");
    }
    if fts_rebuild {
        let _ = writeln!(
            text,
            "  full-text index: {} → external (v23 layout), rebuilt from the messages",
            layout_name(store.fts_layout)
        );
    }
    if cjk_build {
        let _ = writeln!(text, "  build the CJK index");
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
