//! The store handle: opening, closing, and the single write path.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use hermes_state_schema::malformed::{self, MalformedRepairReport};
use hermes_state_schema::{FileShape, JournalMode, OpenReport, SchemaError, detect};
use hermes_state_sqlite::writer_queue::WriterQueue;
use hermes_state_sqlite::{SqliteError, retry, sqlite_error_kind};
use hermes_state_types::ErrorKind;
use rusqlite::Connection;

use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};
use crate::group_commit::WriteGate;
use crate::read_pool::{PooledReader, ReaderPool};
use crate::{malformed_repair, paths};

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
pub(crate) use hermes_state_sqlite::names::FTS_TABLES;

/// The FTS tables present in the file.
pub(crate) fn existing_fts_tables(conn: &Connection) -> Vec<&'static str> {
    FTS_TABLES
        .into_iter()
        .filter(|table| {
            hermes_state_schema::detect::object_exists(conn, "table", table).unwrap_or(false)
        })
        .collect()
}

/// The bounded merge of every FTS index, each in its own autocommit
/// statement. Best effort, as the checkpoint: a store busy with another
/// writer merges next time, and a merge that fails leaves its index as it
/// was. (One transaction for the three was measured and gave nothing on
/// this machine: docs/PERFORMANCE.md, "The every-1000th merge in one
/// transaction".)
fn merge_fts_indexes(conn: &Connection) {
    for table in existing_fts_tables(conn) {
        let _ = conn.execute_batch(&format!(
            "INSERT INTO {table}({table}, rank) VALUES('merge', {FTS_MERGE_PAGES})"
        ));
    }
}

/// How [`SessionDb::open_with`] opens a store.
#[derive(Debug, Clone, Default)]
pub struct StoreOptions {
    /// Open read-only ([`SessionDb::open_read_only`]).
    pub read_only: bool,
    /// The clock of the handle (default: the system clock); e.g. a
    /// [`crate::FixedClock`] for reproducible timestamps.
    pub clock: Option<Arc<dyn Clock>>,
}

/// The writable connection of a handle, once it has written.
///
/// Reads go through the pool of read-only (`mode=ro`) connections; the
/// first write (or [`SessionDb::migrate`]) opens the writable connection,
/// which runs the open algorithm (upgrade, FTS set-up) under the
/// cross-process migration lock. So a handle that only reads never writes a
/// byte, never takes a write lock and never waits for one. Who may use the
/// writable connection, and when, is the write gate's business
/// ([`crate::group_commit`]); this mutex is only ever taken by the thread
/// whose turn it is.
#[derive(Debug, Default)]
pub(crate) struct Connections {
    pub(crate) writer: Option<Connection>,
}

/// What the writable connection means for reads.
const NO_WRITER: u8 = 0;
/// A writer in WAL mode: reads use the pool beside it.
const WAL_WRITER: u8 = 1;
/// A writer in rollback-journal mode: this handle's readers and its writer
/// would block each other (busy timeout), so reads share the writer, in turn.
const JOURNAL_WRITER: u8 = 2;

/// A handle on one `state.db`.
///
/// `Send + Sync`: share one handle between threads (e.g. in an `Arc`).
/// Opening never writes to an existing file: reads use a small pool of
/// read-only connections, and the first write upgrades the file (see
/// [`SessionDb::migrate`]). In WAL mode reads never wait for writes. Every
/// mutation goes through one write path: a `BEGIN IMMEDIATE` transaction,
/// shared by the writers of the handle that arrive while a commit is in
/// flight (group commit, each operation in its own savepoint, acknowledged
/// only after the commit), retried on lock errors with random 20–150 ms
/// sleeps up to 15 attempts, so an operation is either fully committed or
/// not at all; when the retries run out the error's kind is
/// [`ErrorKind::Busy`]. A write returned is seen by every later read.
#[derive(Debug)]
pub struct SessionDb {
    /// The read connections (declared first: dropped before the writer, so
    /// the writer is the last connection to close and removes the WAL).
    readers: ReaderPool,
    /// Who may use the writable connection, and the batch in flight.
    pub(crate) gate: WriteGate,
    conns: Mutex<Connections>,
    /// [`NO_WRITER`], [`WAL_WRITER`] or [`JOURNAL_WRITER`].
    writer_mode: AtomicU8,
    closed: AtomicBool,
    /// SQLite could not read the file's schema (`SQLITE_CORRUPT`): the
    /// error's text. Reads fail naming the repair; the first write (or
    /// [`SessionDb::migrate`]) runs it (`migrations.md` §2.1).
    malformed: Mutex<Option<String>>,
    path: PathBuf,
    read_only: bool,
    report: OnceLock<OpenReport>,
    successful_writes: AtomicU64,
    fts_repair_tried: AtomicBool,
    /// What the open's automatic malformed-schema repair did, if it ran.
    pub(crate) malformed_repair: OnceLock<MalformedRepairReport>,
    /// The clock every time-reading operation uses.
    clock: Arc<dyn Clock>,
    /// The FTS objects seen by the last search, with the schema cookie they
    /// belong to (a fact of the file, shared by the read connections).
    pub(crate) fts_objects: Mutex<Option<hermes_state_query::FtsObjects>>,
    /// The lock files that order this store's writers across processes,
    /// opened at the first write transaction on a WAL store (`None`: they
    /// could not be opened, and writes go on without turns).
    pub(crate) writer_queue: OnceLock<Option<WriterQueue>>,
}

impl SessionDb {
    /// Opens the store at `path` for reading and writing, creating it when
    /// the file does not exist.
    ///
    /// An existing file is not changed by opening: it is classified through
    /// a read-only connection, and upgraded to schema version 23 by the
    /// first write (or [`SessionDb::migrate`]), so a handle used only for
    /// reading leaves the file byte-for-byte unchanged.
    ///
    /// Refused: not a database ([`ErrorKind::NotADatabase`]), another
    /// application's SQLite file (same kind), a store newer than this
    /// library writes ([`ErrorKind::SchemaTooNew`]; use
    /// [`SessionDb::open_read_only`]).
    ///
    /// A file whose schema SQLite cannot read (`SQLITE_CORRUPT`, "malformed
    /// database schema") opens: its reads fail with [`ErrorKind::Corrupt`]
    /// naming the repair, and the first write (or [`SessionDb::migrate`])
    /// runs [`SessionDb::repair_malformed_schema`] once per path per process.
    pub fn open(path: impl AsRef<Path>) -> Result<SessionDb> {
        let path = path.as_ref();
        let db = SessionDb::new(path, false);
        let existing = match existing_reader(path) {
            Err(error) if malformed_repair::is_malformed(&error) => {
                *db.malformed_state() = Some(error.to_string());
                return Ok(db);
            }
            other => other?,
        };
        let reader = match existing {
            Some((reader, FileShape::Store(shape))) => {
                detect::ensure_writable(&shape, path)?;
                reader
            }
            // Missing or empty: nobody else can be using it; make the store now.
            Some((_, FileShape::Empty)) | None => {
                db.open_writer(&mut db.connections())?;
                return Ok(db);
            }
        };
        db.readers.add(reader);
        Ok(db)
    }

    /// [`SessionDb::open`] or [`SessionDb::open_read_only`] (per
    /// [`StoreOptions::read_only`]) with the options' clock.
    pub fn open_with(path: impl AsRef<Path>, options: &StoreOptions) -> Result<SessionDb> {
        let mut db = if options.read_only {
            SessionDb::open_read_only(path)?
        } else {
            SessionDb::open(path)?
        };
        if let Some(clock) = &options.clock {
            db.clock = Arc::clone(clock);
        }
        Ok(db)
    }

    /// Now, by the handle's clock (Unix seconds, sub-second precision).
    pub fn now(&self) -> f64 {
        self.clock.now()
    }

    /// Opens the default store, `$HERMES_HOME/state.db` (else `~/.hermes/state.db`),
    /// creating its folder.
    pub fn open_default() -> Result<SessionDb> {
        SessionDb::open(paths::default_db_path()?)
    }

    /// Opens an existing store read-only: nothing is created, migrated or
    /// written; every write fails with [`ErrorKind::ReadOnly`]. Works on every
    /// version the original wrote and on newer ones. Files that are not a
    /// store are refused as by [`SessionDb::open`].
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<SessionDb> {
        let path = path.as_ref();
        let db = SessionDb::new(path, true);
        let conn = hermes_state_schema::open_read_only(path)?;
        detect::inspect(&conn, path).map_err(|e| malformed_repair::naming_the_repair(e.into()))?;
        db.readers.add(conn);
        Ok(db)
    }

    fn new(path: &Path, read_only: bool) -> SessionDb {
        SessionDb {
            readers: ReaderPool::default(),
            gate: WriteGate::default(),
            conns: Mutex::new(Connections::default()),
            writer_mode: AtomicU8::new(NO_WRITER),
            closed: AtomicBool::new(false),
            malformed: Mutex::new(None),
            path: path.to_owned(),
            read_only,
            report: OnceLock::new(),
            successful_writes: AtomicU64::new(0),
            fts_repair_tried: AtomicBool::new(false),
            malformed_repair: OnceLock::new(),
            clock: Arc::new(SystemClock),
            fts_objects: Mutex::new(None),
            writer_queue: OnceLock::new(),
        }
    }

    /// Brings the file to the current schema now, instead of at the first
    /// write, and returns what that did. Idempotent: later calls return the
    /// first report. Fails with [`ErrorKind::ReadOnly`] on a read-only handle.
    pub fn migrate(&self) -> Result<OpenReport> {
        if self.read_only {
            return Err(Error::ReadOnly("migrating".to_owned()));
        }
        self.exclusive(|conns| self.writer(conns).map(|_| ()))?;
        self.report
            .get()
            .cloned()
            .ok_or_else(|| Error::ReadOnly("migrating".to_owned()))
    }

    /// Opens the writable connection (running the open algorithm) and
    /// retires the read-only one.
    ///
    /// When the open meets a malformed schema (`SQLITE_CORRUPT`) and this
    /// process has not tried yet for this path, the handle's connection is
    /// closed, the repair runs once and, if it leaves the store healthy, the
    /// open is repeated once (`migrations.md` §2, "Failure handling around
    /// steps 2–15").
    fn open_writer(&self, conns: &mut Connections) -> Result<()> {
        let (conn, report) = match hermes_state_schema::open_writable(&self.path) {
            Err(error) if malformed::is_malformed_error(&error) => {
                if !malformed_repair::claim_automatic_repair(&self.path) {
                    return Err(malformed_repair::naming_the_repair(error.into()));
                }
                self.readers.close_all(false)?;
                let repair = malformed::repair(&self.path, self.now().floor() as i64);
                if let Ok(repair) = &repair {
                    let _ = self.malformed_repair.set(repair.clone());
                }
                match repair {
                    Ok(repair) if repair.is_healthy() => {
                        // Read connections of the repaired file from now on.
                        self.readers.resume(None);
                        hermes_state_schema::open_writable(&self.path)?
                    }
                    outcome => {
                        // Reads go on as before the attempt (failing, naming the repair).
                        let _ = self.reconnect_reader();
                        return Err(match outcome {
                            Ok(repair) => malformed_repair::not_repaired(error, &repair),
                            Err(backup_error) => backup_error.into(),
                        });
                    }
                }
            }
            // The open algorithm retried its lock errors already: a lock
            // error here is a spent budget, named as one so that the write
            // path does not spend it again (15 × 15 attempts).
            Err(SchemaError::Sqlite(SqliteError { source, .. }))
                if sqlite_error_kind(&source) == ErrorKind::Busy =>
            {
                return Err(crate::error::busy(
                    "opening the store for writing",
                    retry::MAX_ATTEMPTS,
                    source,
                ));
            }
            other => other?,
        };
        let mode = if report.journal_mode == JournalMode::Wal {
            WAL_WRITER
        } else {
            JOURNAL_WRITER
        };
        let _ = self.report.set(report);
        conns.writer = Some(conn);
        *self.malformed_state() = None;
        self.writer_mode.store(mode, Ordering::SeqCst);
        Ok(())
    }

    /// Runs `work` (the malformed-schema repair) with the handle's
    /// connections closed (in its turn at the write gate, once every read in
    /// flight returned its connection), then reconnects for reading: the
    /// next write opens the writable connection through the open algorithm
    /// again (which recreates FTS objects a repair removed).
    pub(crate) fn with_connections_closed<T>(
        &self,
        what: &str,
        work: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        if self.read_only {
            return Err(Error::ReadOnly(what.to_owned()));
        }
        self.exclusive(|conns| {
            if self.is_closed() {
                return Err(Error::Closed);
            }
            self.readers.close_all(false)?;
            self.writer_mode.store(NO_WRITER, Ordering::SeqCst);
            conns.writer = None;
            let outcome = work();
            match self.reconnect_reader() {
                Err(error) if outcome.is_ok() => Err(error),
                _ => outcome,
            }
        })
    }

    /// Opens a new read-only connection after the file changed under the
    /// handle (a repair), or notes that its schema is still unreadable.
    fn reconnect_reader(&self) -> Result<()> {
        match existing_reader(&self.path) {
            Ok(reader) => {
                self.readers.resume(reader.map(|(reader, _)| reader));
                *self.malformed_state() = None;
                Ok(())
            }
            Err(error) if malformed_repair::is_malformed(&error) => {
                self.readers.resume(None);
                *self.malformed_state() = Some(error.to_string());
                Ok(())
            }
            Err(error) => {
                self.readers.resume(None);
                *self.malformed_state() = None;
                Err(error)
            }
        }
    }

    /// The path of the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the writable connection is open on a WAL store.
    pub(crate) fn writes_in_wal(&self) -> bool {
        self.writer_mode.load(Ordering::SeqCst) == WAL_WRITER
    }

    /// Whether the handle was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// What the open algorithm did (versions, added columns, FTS work), once
    /// the handle has written or migrated; `None` before that and for
    /// read-only handles.
    pub fn open_report(&self) -> Option<&OpenReport> {
        self.report.get()
    }

    /// The journal mode of the writable connection, once there is one.
    pub fn journal_mode(&self) -> Option<JournalMode> {
        self.report.get().map(|r| r.journal_mode)
    }

    /// Checkpoints the WAL into the database file (TRUNCATE, errors ignored,
    /// only when this handle has written) and closes the connection. A second
    /// `close` does nothing; any other call after it fails with [`Error::Closed`].
    ///
    /// Writes and reads in flight on other threads finish first; the read
    /// connections close before the writable one, so that the checkpoint
    /// meets no reader and the last connection removes the WAL.
    pub fn close(&self) -> Result<()> {
        self.closed.store(true, Ordering::SeqCst);
        self.exclusive(|conns| {
            let readers = self.readers.close_all(true);
            self.writer_mode.store(NO_WRITER, Ordering::SeqCst);
            if let Some(conn) = conns.writer.take() {
                let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
                conn.close()
                    .map_err(|(_, source)| crate::error::sqlite("closing the store", source))?;
            }
            readers
        })
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    fn malformed_state(&self) -> MutexGuard<'_, Option<String>> {
        self.malformed
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `read` on a read connection of the handle (feature `raw-sql`:
    /// raw SQL is an escape hatch for tests and tools, not part of the
    /// stable API).
    ///
    /// Do not write through it: it is a read-only connection (older files
    /// are presented in the v23 shape there, see
    /// `hermes_state_query::compat`), except in rollback-journal mode once
    /// the handle has written, where reads share the writable connection;
    /// writes belong to the write path, which owns retries and checkpoints.
    #[cfg(feature = "raw-sql")]
    pub fn read<T>(&self, read: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        self.read_connection(read)
    }

    /// [`SessionDb::read_connection`] for this crate's modules.
    #[cfg(not(feature = "raw-sql"))]
    pub(crate) fn read<T>(&self, read: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        self.read_connection(read)
    }

    /// Runs `write` on the writable connection (opening it, and upgrading
    /// the file, as a first write does), alone, in autocommit mode, outside
    /// the write path: no transaction, no retries, not counted for the
    /// periodic checkpoint (feature `raw-sql`: for tests and tools that set
    /// up rows the API has no method for, or run FTS5 commands).
    #[cfg(feature = "raw-sql")]
    pub fn write_raw<T>(&self, write: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        self.with_writable_connection("writing raw SQL", write)
    }

    /// Runs `op` through the write path (feature `raw-sql`): in its own
    /// savepoint of a transaction shared with the handle's other writers,
    /// retried on lock errors, acknowledged after the commit, counted for
    /// the periodic checkpoint, as every write operation of the API is.
    #[cfg(feature = "raw-sql")]
    pub fn write_in_transaction<T>(
        &self,
        what: &str,
        op: impl FnMut(&Connection) -> Result<T>,
    ) -> Result<T> {
        self.write(what, op)
    }

    /// Runs `read` on a connection reads use: a pooled read-only one, or,
    /// in rollback-journal mode once the handle has written, the writable
    /// one in its turn (never inside a batch's open transaction).
    fn read_connection<T>(&self, read: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        if self.is_closed() {
            return Err(Error::Closed);
        }
        if self.writer_mode.load(Ordering::SeqCst) == JOURNAL_WRITER {
            return self.exclusive(|conns| match conns.writer.as_ref() {
                Some(conn) => read(conn),
                None => self.pooled_read(|reader| read(&reader.conn)),
            });
        }
        self.pooled_read(|reader| read(&reader.conn))
    }

    /// Runs `read` on a connection reads use, on the file as it is stored:
    /// without the compatibility views of [`SessionDb::prepare_reader`],
    /// which need the store's tables. For classifying the file itself: an
    /// empty file (no table at all) is a new store, not a damaged one.
    pub(crate) fn read_as_stored<T>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T>,
    ) -> Result<T> {
        if self.is_closed() {
            return Err(Error::Closed);
        }
        let open = || Ok(hermes_state_schema::open_read_only(&self.path)?);
        let mode = self.writer_mode.load(Ordering::SeqCst);
        if mode == JOURNAL_WRITER {
            return self.exclusive(|conns| match conns.writer.as_ref() {
                Some(conn) => read(conn),
                None => self.readers.with_reader(open, |reader| read(&reader.conn)),
            });
        }
        if mode == NO_WRITER
            && let Some(malformed) = self.malformed_state().clone()
        {
            return Err(malformed_repair::read_error(&malformed));
        }
        self.readers.with_reader(open, |reader| read(&reader.conn))
    }

    /// [`SessionDb::read`] in one read transaction that also checks the
    /// schema cookie: for reads of a few statements (lineage, listings,
    /// stats, search), where taking the file's shared lock and a WAL read
    /// mark once instead of twice (once for the cookie, once for the read)
    /// is a visible share of the call. `read` sees one snapshot; it must
    /// not stream a whole store (a long read transaction holds back the
    /// WAL's reset). When the cookie is not the one the connection was
    /// adapted for, the transaction ends and the read runs as
    /// [`SessionDb::read`] runs it, after the adaptation.
    pub(crate) fn snapshot_read<T>(
        &self,
        read: impl FnOnce(&Connection) -> Result<T>,
    ) -> Result<T> {
        if self.is_closed() {
            return Err(Error::Closed);
        }
        if self.writer_mode.load(Ordering::SeqCst) == JOURNAL_WRITER {
            return self.read_connection(read);
        }
        if self.writer_mode.load(Ordering::SeqCst) == NO_WRITER
            && let Some(malformed) = self.malformed_state().clone()
        {
            return Err(malformed_repair::read_error(&malformed));
        }
        self.readers.with_reader(
            || Ok(hermes_state_schema::open_read_only(&self.path)?),
            |reader| {
                let adapted = reader.adapted_cookie;
                let conn = &reader.conn;
                let outcome = hermes_state_query::search::in_read_snapshot(conn, move || {
                    if hermes_state_query::compat::schema_cookie(conn)? != adapted {
                        // Handed back unread, to run after the adaptation.
                        return Ok(Err(read));
                    }
                    read(conn).map(Ok)
                })?;
                match outcome {
                    Ok(value) => Ok(value),
                    Err(read) => {
                        self.prepare_reader(reader)?;
                        read(&reader.conn)
                    }
                }
            },
        )
    }

    /// Runs `read` on a pooled read-only connection, adapted to the file's
    /// shape (see [`SessionDb::prepare_reader`]).
    fn pooled_read<T>(&self, read: impl FnOnce(&PooledReader) -> Result<T>) -> Result<T> {
        if self.writer_mode.load(Ordering::SeqCst) == NO_WRITER
            && let Some(malformed) = self.malformed_state().clone()
        {
            return Err(malformed_repair::read_error(&malformed));
        }
        self.readers.with_reader(
            || Ok(hermes_state_schema::open_read_only(&self.path)?),
            |reader| {
                self.prepare_reader(reader)?;
                read(reader)
            },
        )
    }

    /// Presents an older or newer file in the v23 shape on a read-only
    /// connection (temporary views, made on that connection only; nothing
    /// reaches the file), again only when the schema cookie changed since
    /// that connection's last adaptation (another process upgraded the
    /// file): one `PRAGMA` per read otherwise.
    fn prepare_reader(&self, reader: &mut PooledReader) -> Result<()> {
        let cookie = hermes_state_query::compat::schema_cookie(&reader.conn)?;
        if reader.adapted_cookie != cookie {
            hermes_state_query::compat::adapt(&reader.conn)?;
            reader.adapted_cookie = cookie;
        }
        Ok(())
    }

    /// What this file cannot answer as it is, one sentence each, naming
    /// `migrate` (files of older versions, read without upgrading them);
    /// empty for v23-shaped files and once the handle has upgraded the file.
    pub fn read_limitations(&self) -> Result<Vec<String>> {
        if self.is_closed() {
            return Err(Error::Closed);
        }
        if self.writer_mode.load(Ordering::SeqCst) != NO_WRITER {
            return Ok(Vec::new());
        }
        let mut notes = self.pooled_read(|reader| {
            Ok(hermes_state_query::compat::adapt(&reader.conn)?.limitations())
        })?;
        if hermes_state_sqlite::connection::is_read_as_immutable(&self.path) {
            notes.push(
                "read as an unchanging file: its folder cannot be written (read-only media, or another user's folder), so what another process writes meanwhile is not seen"
                    .to_owned(),
            );
        }
        Ok(notes)
    }

    /// The writable connection's slot; taken only in the caller's turn at
    /// the write gate (or while the handle is not shared yet, at the open).
    pub(crate) fn connections(&self) -> MutexGuard<'_, Connections> {
        // A panic in another thread while holding the lock cannot leave a
        // transaction open (writes roll back on every error path), so a
        // poisoned mutex is safe to keep using.
        self.conns
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The writable connection, opened (and the file upgraded) on first use.
    pub(crate) fn writer<'g>(&self, conns: &'g mut Connections) -> Result<&'g Connection> {
        if self.is_closed() {
            return Err(Error::Closed);
        }
        if conns.writer.is_none() {
            self.open_writer(conns)?;
        }
        conns.writer.as_ref().ok_or(Error::Closed)
    }

    /// The single write path (`api.md` §13).
    ///
    /// `op` runs inside a `BEGIN IMMEDIATE … COMMIT` transaction, in its own
    /// savepoint: concurrent writers of the handle share the transaction
    /// ([`crate::group_commit`]); the call returns once that transaction
    /// committed, or with `op`'s own error, its changes rolled back. Lock
    /// errors are retried (the whole `op` again, so it must be idempotent
    /// given a rolled-back state); other errors are returned at once. An
    /// FTS-corruption error triggers, once per handle, an in-place rebuild of
    /// the FTS indexes and one more attempt. `op` runs on the calling thread.
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
            match self.write_in_batch(&mut op) {
                Ok(value) => return Ok(value),
                // A budget spent below (opening the writable connection) is
                // not spent again.
                Err(error)
                    if error
                        .downcast_backend::<crate::error::BusyError>()
                        .is_some() =>
                {
                    return Err(error);
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

    /// Counts `operations` committed writes; every [`CHECKPOINT_EVERY`] of
    /// them a PASSIVE checkpoint, every [`FTS_MERGE_EVERY`] a bounded merge
    /// (a batch crossing a multiple runs it once, after its commit).
    pub(crate) fn count_writes(&self, conn: &Connection, operations: u64) {
        if operations == 0 {
            return;
        }
        let before = self
            .successful_writes
            .fetch_add(operations, Ordering::Relaxed);
        let after = before + operations;
        let crossed = |every: u64| after / every > before / every;
        if crossed(CHECKPOINT_EVERY) {
            // Best effort, as the original: a checkpoint that cannot run now runs later.
            let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        }
        if crossed(FTS_MERGE_EVERY) {
            merge_fts_indexes(conn);
        }
    }

    /// Runs `work` on the writable connection alone (in its turn at the
    /// write gate, no batch open), for maintenance that manages its own
    /// short transactions (it must not be wrapped in one write transaction,
    /// e.g. a chunked FTS backfill).
    pub(crate) fn with_writable_connection<T>(
        &self,
        what: &str,
        work: impl FnOnce(&Connection) -> Result<T>,
    ) -> Result<T> {
        if self.read_only {
            return Err(Error::ReadOnly(what.to_owned()));
        }
        self.exclusive(|conns| work(self.writer(conns)?))
    }

    /// Runs one statement that cannot run inside a transaction (`VACUUM`, a
    /// checkpoint) on the writable connection, retried on lock errors with
    /// the write path's policy.
    pub(crate) fn write_statement(&self, what: &str, sql: &str) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly(what.to_owned()));
        }
        retry::with_retries(
            || {
                self.with_writable_connection(what, |conn| {
                    let mut stmt = conn
                        .prepare(sql)
                        .map_err(|e| crate::error::sqlite(what, e))?;
                    let mut rows = stmt.query([]).map_err(|e| crate::error::sqlite(what, e))?;
                    while rows
                        .next()
                        .map_err(|e| crate::error::sqlite(what, e))?
                        .is_some()
                    {}
                    Ok(())
                })
            },
            Error::kind,
        )
        .map_err(|error| give_up_after_retries(what, error))
    }

    /// Takes the handle's single FTS repair: true the first time only.
    pub(crate) fn claim_fts_repair(&self) -> bool {
        !self.fts_repair_tried.swap(true, Ordering::SeqCst)
    }

    /// Rebuilds every FTS index from its content, in one write transaction
    /// of the write path. The CJK index is rebuilt only while it is live (its
    /// triggers in place, not stale) and this connection has its tokenizer.
    pub(crate) fn rebuild_fts_indexes(&self) -> Result<()> {
        self.write("rebuilding the FTS indexes", |conn: &Connection| {
            for table in existing_fts_tables(conn) {
                if table == hermes_state_sqlite::names::FTS_CJK
                    && !(hermes_state_schema::connection::has_cjk_tokenizer(conn)
                        && hermes_state_schema::fts::cjk_index_live(conn)?)
                {
                    continue;
                }
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
            .map_err(|e| crate::error::sqlite("clearing FTS rebuild markers", e))?;
            Ok(())
        })
    }
}

/// Maps the error that ended [`retry::with_retries`] to [`Error::Busy`]
/// when it was a lock error.
fn give_up_after_retries(what: &str, error: Error) -> Error {
    if error.kind() == ErrorKind::Busy {
        give_up(what, retry::MAX_ATTEMPTS, error)
    } else {
        error
    }
}

/// A read-only connection on an existing, non-empty file, and what the file
/// is; `None` when there is no file (or it is empty) yet.
fn existing_reader(path: &Path) -> Result<Option<(Connection, FileShape)>> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.len() == 0 => return Ok(None),
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // Anything else (a permission problem) is for SQLite to report.
        Err(_) => {}
    }
    let conn = hermes_state_schema::open_read_only(path)?;
    let shape = retry::with_retries(|| detect::inspect(&conn, path), SchemaError::kind)?;
    Ok(Some((conn, shape)))
}

fn give_up(what: &str, attempts: u32, error: Error) -> Error {
    match error.into_backend::<SqliteError>() {
        Ok(SqliteError { source, .. }) => crate::error::busy(what, attempts, source),
        Err(other) => other,
    }
}

/// Whether a write met a corrupt FTS index (by SQLite code where it gives
/// one; see `hermes_state_sqlite::is_fts_corruption`).
fn is_fts_corruption(error: &Error) -> bool {
    error.kind() == ErrorKind::Corrupt
        && crate::error::sqlite_source(error).is_some_and(hermes_state_sqlite::is_fts_corruption)
}

impl hermes_state_core::store::BackendName for SessionDb {
    fn backend_name(&self) -> &'static str {
        "sqlite"
    }
}
