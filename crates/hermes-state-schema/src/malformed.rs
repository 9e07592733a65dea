//! The one-shot malformed-schema repair (`migrations.md` §2.1).
//!
//! When the open algorithm meets SQLite's `SQLITE_CORRUPT` ("malformed
//! database schema", "database disk image is malformed"), the original
//! backs the file up, then tries a ladder of ever more invasive steps, each
//! followed by a health check, and stops at the first step after which the
//! store is healthy:
//!
//! - (0) FTS5 `'rebuild'` of the FTS tables;
//! - (0.5) `REINDEX`;
//! - (1) with `writable_schema=ON`, delete duplicate `sqlite_master` rows,
//!   keeping the lowest rowid per (type, name);
//! - (2) delete every `sqlite_master` row whose name starts with
//!   `messages_fts`, then `VACUUM` (the next open recreates the FTS objects
//!   and rebuilds them).
//!
//! Rows of `sessions` and `messages` are never modified, and no file is
//! deleted but a backup this module created and could not complete.
//!
//! Unlike the original, the backup is made through SQLite's backup API from
//! a connection, never by copying the file: a copy of a live WAL store can
//! be torn, and opening the live file with `std::fs` would drop this
//! process's POSIX locks on it (docs/ARCHITECTURE.md, "Invariants"). The
//! backup API copies pages, so it also copies a schema SQLite cannot parse
//! (`VACUUM INTO` would re-run the broken schema and fail). And a store that
//! is healthy already is left alone: no backup is made (the original's check
//! after its copy would pass and stop there, with a copy nobody needs).
//!
//! The statements here are the only ones of the workspace that edit
//! `sqlite_master` directly; they belong to this crate, which alone issues DDL.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode};

use crate::error::SchemaError;
use crate::{detect, fts, permissions};
use hermes_state_sqlite::Context as SqliteContext;
use hermes_state_sqlite::connection;
use hermes_state_sqlite::names::{FTS_BASE, FTS_CJK, FTS_TABLES};

/// The session id of the health check's rolled-back probe insert.
pub const PROBE_SESSION_ID: &str = "__hermes_state_malformed_repair_probe__";

/// Deletes every `sqlite_master` row but the lowest rowid of each (type, name).
const DELETE_DUPLICATE_SCHEMA_ROWS: &str = "DELETE FROM sqlite_master WHERE rowid NOT IN \
     (SELECT MIN(rowid) FROM sqlite_master GROUP BY type, name)";

/// Deletes every FTS object (tables, shadow tables, triggers, the CJK view):
/// every name that starts with `messages_fts` (compared by prefix, not with
/// `LIKE`, whose `_` is a wildcard).
const DELETE_FTS_SCHEMA_ROWS: &str =
    "DELETE FROM sqlite_master WHERE substr(name, 1, 12) = 'messages_fts'";

/// Pages copied per backup step; the backup yields between steps so that a
/// writer of another process is not starved.
const BACKUP_PAGES_PER_STEP: std::ffi::c_int = 1024;

/// Whether an error is the condition that triggers the repair: SQLite's
/// `SQLITE_CORRUPT` or one of its extended codes ("malformed database
/// schema", "database disk image is malformed"), by result code.
pub fn is_malformed(error: &rusqlite::Error) -> bool {
    matches!(
        error,
        rusqlite::Error::SqliteFailure(failure, _) if failure.code == ErrorCode::DatabaseCorrupt
    )
}

/// [`is_malformed`] on a schema error.
pub fn is_malformed_error(error: &SchemaError) -> bool {
    error.sqlite_source().is_some_and(is_malformed)
}

/// One step of the repair ladder, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RepairStep {
    /// (0) FTS5 `'rebuild'` of every FTS table.
    FtsRebuild,
    /// (0.5) `REINDEX`.
    Reindex,
    /// (1) Duplicate `sqlite_master` rows deleted (lowest rowid kept).
    DuplicateSchemaRows,
    /// (2) Every `messages_fts*` schema row deleted, then `VACUUM`.
    DropFtsAndVacuum,
}

impl RepairStep {
    /// Every step, in the order they run.
    pub const ALL: [RepairStep; 4] = [
        RepairStep::FtsRebuild,
        RepairStep::Reindex,
        RepairStep::DuplicateSchemaRows,
        RepairStep::DropFtsAndVacuum,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            RepairStep::FtsRebuild => "fts_rebuild",
            RepairStep::Reindex => "reindex",
            RepairStep::DuplicateSchemaRows => "duplicate_schema_rows",
            RepairStep::DropFtsAndVacuum => "drop_fts_and_vacuum",
        }
    }
}

/// The result of one health check (`migrations.md` §2.1).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HealthCheck {
    /// Every check passed.
    pub healthy: bool,
    /// The first check that failed, and how.
    pub failure: Option<String>,
    /// The check could not run because another connection held a lock: it
    /// says nothing about the file, so the repair stops rather than go on to
    /// steps that drop objects of a store that may be fine.
    pub busy: bool,
}

/// What one step did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StepOutcome {
    /// The step.
    pub step: RepairStep,
    /// The error the step itself ended with (the ladder goes on regardless).
    pub error: Option<String>,
    /// The health check after it.
    pub health: HealthCheck,
}

/// What [`repair`] did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MalformedRepairReport {
    /// The health check before anything was done.
    pub before: HealthCheck,
    /// The backup made before the first step; `None` when the store was
    /// healthy and nothing was done.
    pub backup: Option<PathBuf>,
    /// The steps run, in order, up to the first after which the store was healthy.
    pub steps: Vec<StepOutcome>,
    /// The step after which the store was healthy (`None`: healthy before, or not repaired).
    pub fixed_by: Option<RepairStep>,
    /// The last health check: whether the store is healthy now.
    pub health: HealthCheck,
}

impl MalformedRepairReport {
    /// Whether the store is healthy after the repair.
    pub fn is_healthy(&self) -> bool {
        self.health.healthy
    }
}

/// Runs the repair on the store at `path` (`migrations.md` §2.1).
///
/// A healthy store is left alone. Otherwise a backup
/// `<name>.malformed-backup-<YYYYmmdd_HHMMSS>` is made first (the time is
/// `unix_seconds`, in UTC); if it cannot be made nothing is done and the
/// error is returned. Then the steps run in order until a health check
/// passes. A store no step repairs is reported (`is_healthy()` false), not
/// returned as an error: the backup holds what it held.
///
/// The caller closes its own connections first where it can: `VACUUM` needs
/// the write lock, and a schema edited underneath a connection is re-read
/// through the schema cookie, which the edits bump.
pub fn repair(path: &Path, unix_seconds: i64) -> Result<MalformedRepairReport, SchemaError> {
    let before = health_check(path);
    if before.healthy || before.busy {
        return Ok(MalformedRepairReport {
            health: before.clone(),
            before,
            backup: None,
            steps: Vec::new(),
            fixed_by: None,
        });
    }
    let backup = backup(path, unix_seconds)?;
    let mut steps = Vec::new();
    let mut health = before.clone();
    let mut fixed_by = None;
    for step in RepairStep::ALL {
        let error = run_step(path, step).err().map(|error| error.to_string());
        health = health_check(path);
        steps.push(StepOutcome {
            step,
            error,
            health: health.clone(),
        });
        if health.healthy {
            fixed_by = Some(step);
            break;
        }
        if health.busy {
            break;
        }
    }
    Ok(MalformedRepairReport {
        before,
        backup: Some(backup),
        steps,
        fixed_by,
        health,
    })
}

/// The backup's path for a time: `<name>.malformed-backup-<YYYYmmdd_HHMMSS>`.
pub fn backup_path(path: &Path, unix_seconds: i64) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".malformed-backup-");
    name.push(utc_stamp(unix_seconds));
    PathBuf::from(name)
}

/// Copies the store, pages as they are, into a new private (0600) file
/// next to it, through SQLite's backup API on a read-only connection; the
/// WAL's committed content is included. An existing file is never
/// overwritten: a second backup in the same second gets `.2`, `.3`, ….
/// On failure the file this call created is removed.
pub fn backup(path: &Path, unix_seconds: i64) -> Result<PathBuf, SchemaError> {
    let base = backup_path(path, unix_seconds);
    let mut target = base.clone();
    let mut n = 1;
    while !permissions::create_private_file(&target)? {
        n += 1;
        if n > 100 {
            return Err(SchemaError::Io {
                path: base,
                source: std::io::Error::from(std::io::ErrorKind::AlreadyExists),
            });
        }
        let mut name = base.as_os_str().to_owned();
        name.push(format!(".{n}"));
        target = PathBuf::from(name);
    }
    match copy_pages(path, &target) {
        Ok(()) => Ok(target),
        Err(error) => {
            // Ours: created empty above by this call.
            let _ = std::fs::remove_file(&target);
            Err(error)
        }
    }
}

fn copy_pages(path: &Path, target: &Path) -> Result<(), SchemaError> {
    let source = connection::open_read_only(path)?;
    let mut destination =
        Connection::open(target).context(&format!("opening the backup {}", target.display()))?;
    let backup =
        rusqlite::backup::Backup::new(&source, &mut destination).context("starting the backup")?;
    backup
        .run_to_completion(BACKUP_PAGES_PER_STEP, Duration::from_millis(10), None)
        .context("copying the store into the backup")?;
    drop(backup);
    destination
        .close()
        .map_err(|(_, error)| SchemaError::sqlite("closing the backup", error))
}

/// The health check of `migrations.md` §2.1, on a new connection: open,
/// `PRAGMA journal_mode`, `PRAGMA integrity_check` = `ok`, `SELECT COUNT(*)
/// FROM sessions`, a `MATCH '""'` probe on each FTS table, and a rolled-back
/// probe insert of a session and a message. The CJK index is probed only
/// when this connection has its tokenizer (without it, the index cannot be
/// read by this process at all, healthy or not).
pub fn health_check(path: &Path) -> HealthCheck {
    let busy = std::cell::Cell::new(false);
    match check(path, &busy) {
        Ok(()) => HealthCheck {
            healthy: true,
            failure: None,
            busy: false,
        },
        Err(failure) => HealthCheck {
            healthy: false,
            failure: Some(failure),
            busy: busy.get(),
        },
    }
}

fn check(path: &Path, busy: &std::cell::Cell<bool>) -> Result<(), String> {
    let conn = connection::open_read_write(path).map_err(|e| e.to_string())?;
    let step = |what: &str, e: rusqlite::Error| {
        if hermes_state_sqlite::sqlite_error_kind(&e) == hermes_state_types::ErrorKind::Busy {
            busy.set(true);
        }
        format!("{what}: {e}")
    };
    conn.query_row("PRAGMA journal_mode", [], |row| row.get::<_, String>(0))
        .map_err(|e| step("PRAGMA journal_mode", e))?;
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .map_err(|e| step("PRAGMA integrity_check", e))?;
    if integrity != "ok" {
        return Err(format!("PRAGMA integrity_check: {integrity}"));
    }
    conn.query_row("SELECT COUNT(*) FROM sessions", [], |row| {
        row.get::<_, i64>(0)
    })
    .map_err(|e| step("counting sessions", e))?;
    for table in probed_fts_tables(&conn).map_err(|e| e.to_string())? {
        conn.query_row(
            &format!("SELECT COUNT(*) FROM {table} WHERE {table} MATCH '\"\"'"),
            [],
            |row| row.get::<_, i64>(0),
        )
        .map_err(|e| step(&format!("probing {table}"), e))?;
    }
    let probe = conn
        .unchecked_transaction()
        .map_err(|e| step("starting the probe insert", e))?;
    probe
        .execute(
            "INSERT INTO sessions (id, source, started_at) VALUES (?1, 'health_probe', 0)",
            [PROBE_SESSION_ID],
        )
        .map_err(|e| step("probe insert of a session", e))?;
    probe
        .execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, 'user', 'health probe', 0)",
            [PROBE_SESSION_ID],
        )
        .map_err(|e| step("probe insert of a message", e))?;
    probe
        .rollback()
        .map_err(|e| step("rolling the probe back", e))
}

/// The FTS tables present that this connection can read.
fn probed_fts_tables(conn: &Connection) -> Result<Vec<&'static str>, SchemaError> {
    let tokenizer = connection::has_cjk_tokenizer(conn);
    let mut tables = Vec::new();
    for table in FTS_TABLES {
        if detect::object_exists(conn, "table", table)? && (table != FTS_CJK || tokenizer) {
            tables.push(table);
        }
    }
    Ok(tables)
}

/// Runs one step on a new connection.
fn run_step(path: &Path, step: RepairStep) -> Result<(), SchemaError> {
    let conn = connection::open_read_write(path)?;
    match step {
        RepairStep::FtsRebuild => rebuild_fts(&conn),
        RepairStep::Reindex => conn
            .execute_batch("REINDEX")
            .context("REINDEX")
            .map_err(Into::into),
        RepairStep::DuplicateSchemaRows => edit_schema(&conn, DELETE_DUPLICATE_SCHEMA_ROWS),
        RepairStep::DropFtsAndVacuum => {
            edit_schema(&conn, DELETE_FTS_SCHEMA_ROWS)?;
            drop(conn);
            // A new connection: it reads the edited schema afresh.
            let conn = connection::open_read_write(path)?;
            conn.execute_batch("VACUUM")
                .context("VACUUM")
                .map_err(Into::into)
        }
    }
}

/// Step 0: rebuilds each FTS index from its content, in one transaction, as
/// the write path's FTS repair does: the CJK index only while it is live and
/// this connection has its tokenizer, and the gated-backfill markers cleared
/// (a full rebuild completes any pending backfill, `schema-v23.md` §8).
fn rebuild_fts(conn: &Connection) -> Result<(), SchemaError> {
    hermes_state_sqlite::transaction::immediate(conn, |conn| {
        for table in FTS_TABLES {
            if !detect::object_exists(conn, "table", table)? {
                continue;
            }
            if table == FTS_CJK
                && !(connection::has_cjk_tokenizer(conn) && fts::cjk_index_live(conn)?)
            {
                continue;
            }
            fts::rebuild(conn, table)?;
        }
        if detect::object_exists(conn, "table", FTS_BASE)? {
            conn.execute(
                "DELETE FROM state_meta WHERE key IN (?1, ?2, ?3, ?4)",
                [
                    fts::REBUILD_HIGH_WATER_KEY,
                    fts::REBUILD_PROGRESS_KEY,
                    fts::CJK_HIGH_WATER_KEY,
                    fts::CJK_PROGRESS_KEY,
                ],
            )
            .context("clearing FTS rebuild markers")?;
        }
        Ok::<(), SchemaError>(())
    })
}

/// Runs one `sqlite_master` edit with `writable_schema=ON`, in one
/// transaction that also bumps the schema cookie (so every connection,
/// this process's and others', re-reads the schema), then turns
/// `writable_schema` off again.
fn edit_schema(conn: &Connection, edit: &str) -> Result<(), SchemaError> {
    conn.execute_batch("PRAGMA writable_schema=ON")
        .context("PRAGMA writable_schema=ON")?;
    let outcome = hermes_state_sqlite::transaction::immediate(conn, |conn| {
        conn.execute(edit, []).context("editing sqlite_master")?;
        let cookie: i64 = conn
            .query_row("PRAGMA schema_version", [], |row| row.get(0))
            .context("reading the schema cookie")?;
        conn.execute_batch(&format!("PRAGMA schema_version={}", cookie + 1))
            .context("bumping the schema cookie")?;
        Ok::<(), SchemaError>(())
    });
    let reset = conn
        .execute_batch("PRAGMA writable_schema=OFF")
        .context("PRAGMA writable_schema=OFF");
    outcome?;
    reset.map_err(Into::into)
}

/// `YYYYmmdd_HHMMSS` of a Unix time, in UTC.
fn utc_stamp(unix_seconds: i64) -> String {
    let days = unix_seconds.div_euclid(86_400);
    let secs = unix_seconds.rem_euclid(86_400);
    let (year, month, day) = hermes_state_types::civil::civil_from_days(days);
    format!(
        "{year:04}{month:02}{day:02}_{:02}{:02}{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_names_carry_the_utc_time() {
        assert_eq!(utc_stamp(0), "19700101_000000");
        assert_eq!(utc_stamp(1_709_251_199), "20240229_235959");
        assert_eq!(
            backup_path(Path::new("/x/state.db"), 1_700_000_000),
            PathBuf::from("/x/state.db.malformed-backup-20231114_221320")
        );
    }
}
