//! The open algorithm: from any file to a v23 store (`migrations.md` §2).
//!
//! The order of steps is the original's, because it fixes the order of objects
//! in `sqlite_master` and what a fresh file looks like. Unlike the original,
//! every step after the connection pragmas runs inside one `BEGIN IMMEDIATE`
//! transaction: that transaction is the cross-process migration lock (a second
//! process opening the same old file waits, then finds the work done), and it
//! makes an interrupted upgrade roll back to the old file instead of leaving a
//! half-upgraded one.

use std::path::Path;

use rusqlite::Connection;

use crate::detect::{self, FileShape, FtsLayout, StoreShape};
use crate::error::SchemaError;
use crate::fts::{self, FtsSetup};
use crate::history::{self, HistoryReport};
use crate::reconcile::{self, AddedColumn};
use crate::{ddl, legacy, permissions};
use hermes_state_sqlite::connection::{self, JournalMode};
use hermes_state_sqlite::{Context as SqliteContext, sqlite_error_kind};
use hermes_state_sqlite::{retry, transaction};
use hermes_state_types::{ErrorKind, SCHEMA_VERSION};

/// What opening did to the file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct OpenReport {
    /// The file had no schema objects: a new store was created.
    pub created: bool,
    /// The stored `schema_version` before the open (`None` for new files or an empty table).
    pub from_version: Option<i64>,
    /// The stored `schema_version` after the open (never lower than before).
    pub to_version: i64,
    /// The journal mode of the connection.
    pub journal_mode: JournalMode,
    /// Columns the reconciler appended.
    pub added_columns: Vec<AddedColumn>,
    /// What the FTS step did.
    pub fts: FtsSetup,
    /// What refinery recorded or applied.
    pub history: HistoryReport,
}

/// Opens (creating if needed) a writable store and brings it to v23.
///
/// Refuses, leaving the file byte-for-byte unchanged: files that are not SQLite
/// databases, SQLite files of other applications, and stores newer than this
/// library writes ([`SchemaError::SchemaTooNew`]; open those read-only). Waits
/// for the migration lock with the write-retry policy when another process holds it.
///
/// A missing file is created here, private (0600) from the moment it exists,
/// and gets the journal-mode rule of a new store (WAL). An existing file keeps
/// its journal mode and its permissions: only a file this call created is
/// ours to set up.
pub fn open_writable(path: &Path) -> Result<(Connection, OpenReport), SchemaError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        permissions::create_private_dir_all(parent)?;
    }
    let created_file = permissions::create_private_file(path)?;
    let conn = connection::open_read_write(path)?;
    // Classify before the first pragma that could write (journal mode changes the header).
    let before = retry::with_retries(|| detect::inspect(&conn, path), SchemaError::kind)?;
    if let FileShape::Store(shape) = &before {
        detect::ensure_writable(shape, path)?;
    }
    let new_store = before == FileShape::Empty;
    let journal_mode = retry::with_retries(
        || connection::configure_writable(&conn, new_store).map_err(Into::into),
        SchemaError::kind,
    )?;
    let mut report = retry::with_retries(|| migrate_under_lock(&conn, path), SchemaError::kind)?;
    report.journal_mode = journal_mode;
    if created_file {
        permissions::restrict(path)?;
    }
    Ok((conn, report))
}

/// Runs the open algorithm in one `BEGIN IMMEDIATE` transaction on an already
/// configured writable connection. Public so tests and tools can drive it on a
/// connection they set up themselves.
pub fn migrate_under_lock(conn: &Connection, path: &Path) -> Result<OpenReport, SchemaError> {
    transaction::immediate(conn, |conn| migrate_locked(conn, path))
}

fn migrate_locked(conn: &Connection, path: &Path) -> Result<OpenReport, SchemaError> {
    // Re-read under the lock: another process may have migrated meanwhile.
    let shape = match detect::inspect(conn, path)? {
        FileShape::Empty => None,
        FileShape::Store(shape) => {
            detect::ensure_writable(&shape, path)?;
            Some(shape)
        }
    };
    let created = shape.is_none();
    let from_version = shape.as_ref().and_then(|s| s.version);
    let mut layout_before = shape.as_ref().map_or(FtsLayout::Absent, |s| s.fts_layout);
    if layout_before == FtsLayout::LegacyContentOnly {
        // Files from v10 and older: the original would leave a broken, mixed
        // index here (`migrations.md` §4.1). Their external-content tables hold
        // no text, so they are dropped and rebuilt in the v23 layout below.
        fts::drop_content_only_layout(conn)?;
        layout_before = FtsLayout::Absent;
    }
    let triggers_before = fts::count_fts_triggers(conn)?;

    for (_, create) in ddl::TABLES {
        conn.execute_batch(create).context("creating tables")?;
    }
    for create in ddl::MAIN_INDEXES {
        conn.execute_batch(create).context("creating indexes")?;
    }
    let added_columns = reconcile::reconcile_columns(conn)?;
    tolerate(
        conn.execute_batch(ddl::PLATFORM_MESSAGE_ID_INDEX),
        "creating idx_messages_platform_msg_id",
    )?;
    for create in ddl::DEFERRED_INDEXES {
        conn.execute_batch(create)
            .context("creating deferred indexes")?;
    }
    tolerate(
        conn.execute_batch(ddl::HEAL_NULL_ACTIVE),
        "healing NULL active flags",
    )?;

    // The original reads sessions.json from its Hermes home; for a store at a
    // custom path, the store's own folder stands in (the same folder for the
    // default path), so that opening a file never reads an unrelated home.
    let hermes_home = path.parent();
    let to_version = bookkeep_version(conn, hermes_home, shape.as_ref(), layout_before)?;
    legacy::heal_keys(conn)?;
    create_title_index(conn)?;
    let fts = fts::set_up(
        conn,
        triggers_before,
        connection::has_cjk_tokenizer(conn),
        created && connection::cjk_index_in_new_stores(),
    )?;
    let history = history::apply(conn)?;
    Ok(OpenReport {
        created,
        from_version,
        to_version,
        journal_mode: JournalMode::Other,
        added_columns,
        fts,
        history,
    })
}

/// Step 12: insert the version of a new store, or run the gated chain, the FTS
/// storage stamp and the bump of an existing one. Never lowers the number.
fn bookkeep_version(
    conn: &Connection,
    hermes_home: Option<&Path>,
    shape: Option<&StoreShape>,
    layout_before: FtsLayout,
) -> Result<i64, SchemaError> {
    let Some(stored) = shape.and_then(|s| s.version) else {
        // No row: the store is treated as new, with no data migrations, as the original does.
        conn.execute(
            "INSERT INTO schema_version (version) VALUES (?1)",
            [SCHEMA_VERSION],
        )
        .context("recording the schema version")?;
        return Ok(SCHEMA_VERSION);
    };
    if stored < SCHEMA_VERSION {
        legacy::run_gated_chain(conn, stored, layout_before, hermes_home)?;
    }
    if !layout_before.is_legacy() && !fts_rebuild_pending(conn)? && !has_trash_tables(conn)? {
        conn.execute(ddl::UPSERT_META, ["fts_storage_version", "1"])
            .context("stamping fts_storage_version")?;
    }
    if stored < SCHEMA_VERSION {
        conn.execute("UPDATE schema_version SET version = ?1", [SCHEMA_VERSION])
            .context("raising the schema version")?;
        return Ok(SCHEMA_VERSION);
    }
    Ok(stored)
}

fn fts_rebuild_pending(conn: &Connection) -> Result<bool, SchemaError> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM state_meta WHERE key = ?1)",
        [fts::REBUILD_HIGH_WATER_KEY],
        |row| row.get(0),
    )
    .context("reading state_meta")
    .map_err(Into::into)
}

fn has_trash_tables(conn: &Connection) -> Result<bool, SchemaError> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name LIKE 'fts\\_v22\\_trash\\_%' ESCAPE '\\')",
        [],
        |row| row.get(0),
    )
    .context("reading the schema").map_err(Into::into)
}

/// Step 13: the unique title index; on an old file with duplicate titles, only
/// the most recently inserted holder keeps its title.
fn create_title_index(conn: &Connection) -> Result<(), SchemaError> {
    match conn.execute_batch(ddl::TITLE_UNIQUE_INDEX) {
        Ok(()) => Ok(()),
        Err(error) if sqlite_error_kind(&error) == ErrorKind::Constraint => {
            // Errors of the repair leave the index missing, as in the original.
            tolerate(
                conn.execute_batch(ddl::CLEAR_DUPLICATE_TITLES),
                "clearing duplicate titles",
            )?;
            tolerate(
                conn.execute_batch(ddl::TITLE_UNIQUE_INDEX),
                "creating the unique title index",
            )
        }
        Err(error) => tolerate(Err(error), "creating the unique title index"),
    }
}

/// Ignores an error the original ignores, but never a lock error (the open is
/// retried) nor one that ended the transaction.
fn tolerate(result: Result<(), rusqlite::Error>, what: &str) -> Result<(), SchemaError> {
    match result {
        Ok(()) => Ok(()),
        Err(error) if sqlite_error_kind(&error) == ErrorKind::Busy => {
            Err(SchemaError::sqlite(what, error))
        }
        Err(error)
            if matches!(
                sqlite_error_kind(&error),
                ErrorKind::Corrupt | ErrorKind::Io
            ) =>
        {
            Err(SchemaError::sqlite(what, error))
        }
        Err(_) => Ok(()),
    }
}
