//! The store handle: opening, closing, and the single write path.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_state_schema::{JournalMode, OpenReport, retry};
use hermes_state_types::ErrorKind;
use rusqlite::Connection;

use crate::error::{Error, Result};
use crate::paths;

/// Every this many successful writes, a PASSIVE WAL checkpoint keeps the WAL short.
pub const CHECKPOINT_EVERY: u64 = 50;
/// Every this many successful writes, a bounded FTS5 `'merge'` folds index
/// segments together (the original runs a full `'optimize'` here).
pub const FTS_MERGE_EVERY: u64 = 1000;

/// The work of one periodic merge, in index pages per FTS table: a bounded
/// step, so a writer never holds the lock for a whole-index rewrite (a full
/// `'optimize'` takes about 10 s at a million messages).
pub const FTS_MERGE_PAGES: u32 = 256;

/// The FTS tables the store may maintain; each is used only when it exists.
pub(crate) const FTS_TABLES: [&str; 3] =
    ["messages_fts", "messages_fts_trigram", "messages_fts_cjk"];

/// The FTS tables present in the file.
pub(crate) fn existing_fts_tables(conn: &Connection) -> Vec<&'static str> {
    FTS_TABLES
        .into_iter()
        .filter(|table| {
            hermes_state_schema::detect::object_exists(conn, "table", table).unwrap_or(false)
        })
        .collect()
}

/// A handle on one `state.db`.
///
/// One connection per handle, shared by all threads behind a mutex, as in the
/// original. Every mutation goes through one write path: a `BEGIN IMMEDIATE`
/// transaction, retried on lock errors with random 20–150 ms sleeps up to 15
/// attempts, so an operation is either fully committed or not at all; when the
/// retries run out the error's kind is [`ErrorKind::Busy`].
#[derive(Debug)]
pub struct SessionDb {
    conn: Mutex<Option<Connection>>,
    path: PathBuf,
    read_only: bool,
    report: Option<OpenReport>,
    successful_writes: AtomicU64,
    fts_repair_tried: AtomicBool,
    /// The FTS objects seen by the last search, with the schema cookie they belong to.
    pub(crate) fts_objects: Mutex<Option<hermes_state_query::FtsObjects>>,
}

impl SessionDb {
    /// Opens (creating if needed) the store at `path` for reading and writing,
    /// bringing it to schema version 23.
    ///
    /// Files that must not be touched are refused with the file left
    /// byte-for-byte unchanged: not a database ([`ErrorKind::NotADatabase`]),
    /// another application's SQLite file (same kind), a store newer than this
    /// library writes ([`ErrorKind::SchemaTooNew`]; use [`SessionDb::open_read_only`]).
    pub fn open(path: impl AsRef<Path>) -> Result<SessionDb> {
        let path = path.as_ref();
        let (conn, report) = hermes_state_schema::open_writable(path)?;
        Ok(SessionDb::from_parts(conn, path, false, Some(report)))
    }

    /// Opens the default store, `$HERMES_HOME/state.db` (else `~/.hermes/state.db`),
    /// creating its folder.
    pub fn open_default() -> Result<SessionDb> {
        SessionDb::open(paths::default_db_path()?)
    }

    /// Opens an existing store read-only, as the original's `read_only=True`:
    /// nothing is created, migrated or written; every write fails with
    /// [`ErrorKind::ReadOnly`]. Works on stores newer than this library writes.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<SessionDb> {
        let path = path.as_ref();
        let conn = hermes_state_schema::open_read_only(path)?;
        Ok(SessionDb::from_parts(conn, path, true, None))
    }

    fn from_parts(
        conn: Connection,
        path: &Path,
        read_only: bool,
        report: Option<OpenReport>,
    ) -> SessionDb {
        SessionDb {
            conn: Mutex::new(Some(conn)),
            path: path.to_owned(),
            read_only,
            report,
            successful_writes: AtomicU64::new(0),
            fts_repair_tried: AtomicBool::new(false),
            fts_objects: Mutex::new(None),
        }
    }

    /// The path of the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the handle was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// What the open did (versions, added columns, FTS work); `None` for read-only handles.
    pub fn open_report(&self) -> Option<&OpenReport> {
        self.report.as_ref()
    }

    /// The journal mode of a writable handle.
    pub fn journal_mode(&self) -> Option<JournalMode> {
        self.report.as_ref().map(|r| r.journal_mode)
    }

    /// Checkpoints the WAL into the database file (TRUNCATE, errors ignored)
    /// and closes the connection. A second `close` does nothing; any other
    /// call after it fails with [`Error::Closed`].
    pub fn close(&self) -> Result<()> {
        let mut guard = self
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(conn) = guard.take() {
            if !self.read_only {
                let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
            }
            conn.close()
                .map_err(|(_, source)| Error::sqlite("closing the store", source))?;
        }
        Ok(())
    }

    /// Runs `read` on the connection, under the handle's mutex.
    ///
    /// This is the way to call the `hermes_state_query` functions, or your
    /// own SQL, on the store's connection. Do not write through it: writes
    /// belong to the write path, which owns retries and checkpoints.
    pub fn read<T>(&self, read: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let guard = self.lock()?;
        let conn = guard.as_ref().ok_or(Error::Closed)?;
        read(conn)
    }

    fn lock(&self) -> Result<MutexGuard<'_, Option<Connection>>> {
        // A panic in another thread while holding the lock cannot leave a
        // transaction open (writes roll back on every error path), so a
        // poisoned mutex is safe to keep using.
        let guard = self
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if guard.is_none() {
            return Err(Error::Closed);
        }
        Ok(guard)
    }

    /// The single write path (`api.md` §13).
    ///
    /// `op` runs inside `BEGIN IMMEDIATE … COMMIT`; on any error the
    /// transaction is rolled back. Lock errors are retried (the whole `op`
    /// again, so it must be idempotent given a rolled-back state); other errors
    /// are returned at once. An FTS-corruption error triggers, once per handle,
    /// an in-place rebuild of the FTS indexes and one more attempt.
    pub(crate) fn write<T>(
        &self,
        what: &str,
        mut op: impl FnMut(&Connection) -> Result<T>,
    ) -> Result<T> {
        if self.read_only {
            return Err(Error::ReadOnly(what.to_owned()));
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            let outcome = {
                let guard = self.lock()?;
                let conn = guard.as_ref().ok_or(Error::Closed)?;
                run_in_immediate(conn, &mut op)
            };
            match outcome {
                Ok(value) => {
                    self.after_commit();
                    return Ok(value);
                }
                Err(error) if error.kind() == ErrorKind::Busy => {
                    if attempt >= retry::MAX_ATTEMPTS {
                        return Err(give_up(what, attempt, error));
                    }
                    std::thread::sleep(retry::jitter());
                }
                Err(error) if is_fts_corruption(&error) && attempt < retry::MAX_ATTEMPTS => {
                    if !self.claim_fts_repair() {
                        return Err(error);
                    }
                    self.rebuild_fts_indexes()?;
                }
                Err(error) => return Err(error),
            }
        }
    }

    fn after_commit(&self) {
        let count = self.successful_writes.fetch_add(1, Ordering::Relaxed) + 1;
        if !count.is_multiple_of(CHECKPOINT_EVERY) && !count.is_multiple_of(FTS_MERGE_EVERY) {
            return;
        }
        let Ok(guard) = self.lock() else { return };
        let Some(conn) = guard.as_ref() else { return };
        if count.is_multiple_of(CHECKPOINT_EVERY) {
            // Best effort, as the original: a checkpoint that cannot run now runs later.
            let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        }
        if count.is_multiple_of(FTS_MERGE_EVERY) {
            for table in existing_fts_tables(conn) {
                let _ = conn.execute_batch(&format!(
                    "INSERT INTO {table}({table}, rank) VALUES('merge', {FTS_MERGE_PAGES})"
                ));
            }
        }
    }

    /// Runs `work` on the connection under the handle's mutex, for
    /// maintenance that manages its own short transactions (it must not be
    /// wrapped in one write transaction, e.g. a chunked FTS backfill).
    pub(crate) fn with_writable_connection<T>(
        &self,
        what: &str,
        work: impl FnOnce(&Connection) -> Result<T>,
    ) -> Result<T> {
        if self.read_only {
            return Err(Error::ReadOnly(what.to_owned()));
        }
        let guard = self.lock()?;
        let conn = guard.as_ref().ok_or(Error::Closed)?;
        work(conn)
    }

    /// Takes the handle's single FTS repair: true the first time only.
    pub(crate) fn claim_fts_repair(&self) -> bool {
        !self.fts_repair_tried.swap(true, Ordering::SeqCst)
    }

    /// Rebuilds every FTS index from its content, in one write transaction.
    pub(crate) fn rebuild_fts_indexes(&self) -> Result<()> {
        let guard = self.lock()?;
        let conn = guard.as_ref().ok_or(Error::Closed)?;
        run_in_immediate(conn, &mut |conn: &Connection| {
            for table in existing_fts_tables(conn) {
                hermes_state_schema::fts::rebuild(conn, table)?;
            }
            // A full rebuild completes any pending gated backfill: its markers
            // must go, or the triggers would stay gated (`schema-v23.md` §8).
            conn.execute(
                "DELETE FROM state_meta WHERE key IN (?1, ?2, ?3, ?4)",
                [
                    hermes_state_schema::fts::REBUILD_HIGH_WATER_KEY,
                    hermes_state_schema::fts::REBUILD_PROGRESS_KEY,
                    hermes_state_schema::fts::CJK_HIGH_WATER_KEY,
                    hermes_state_schema::fts::CJK_PROGRESS_KEY,
                ],
            )
            .map_err(|e| Error::sqlite("clearing FTS rebuild markers", e))?;
            Ok(())
        })
    }
}

fn run_in_immediate<T>(
    conn: &Connection,
    op: &mut impl FnMut(&Connection) -> Result<T>,
) -> Result<T> {
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(|e| Error::sqlite("starting a write transaction", e))?;
    let result = op(conn).and_then(|value| {
        conn.execute_batch("COMMIT")
            .map_err(|e| Error::sqlite("committing", e))?;
        Ok(value)
    });
    if result.is_err() && !conn.is_autocommit() {
        // SQLite may already have rolled back; nothing else to do if this fails.
        let _ = conn.execute_batch("ROLLBACK");
    }
    result
}

fn give_up(what: &str, attempts: u32, error: Error) -> Error {
    match error {
        Error::Sqlite { source, .. } => Error::Busy {
            context: what.to_owned(),
            attempts,
            source,
        },
        other => other,
    }
}

fn is_fts_corruption(error: &Error) -> bool {
    let text = error.to_string().to_ascii_lowercase();
    error.kind() == ErrorKind::Corrupt && hermes_state_schema::is_fts_corruption_text(&text)
}

/// Now, as Unix seconds with sub-second precision (Python's `time.time()`).
pub(crate) fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
