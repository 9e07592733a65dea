//! Which file, and how it is opened.
//!
//! * Reading commands ([`Access::Read`]: `sessions list/show/lineage`,
//!   `messages list`, `title get/resolve/next`, `search`, `stats`, `export`,
//!   `backup`, `prune --dry-run`, `doctor` without `--repair`) always open
//!   with [`SessionDb::open_read_only`], whether or not `--read-only` was
//!   given: a user runs them on a `state.db` a Hermes agent holds open and
//!   writes, so they must not create, migrate, checkpoint or change the
//!   journal mode of the file. They never create a missing store, and they
//!   work on stores newer than this library writes.
//! * Writing commands refuse `--read-only` (a usage error) and, except those
//!   that make a store (`sessions create`, `import`, `migrate`, `demo`),
//!   need the store to exist. They open with [`SessionDb::open`], which
//!   writes nothing to an existing file, and run every check that can refuse
//!   them (an unknown session, a title in use, a store that already has
//!   sessions, ...) on the read side first; only then
//!   [`Context::start_writing`] brings an older file to the current schema
//!   (what the library's first write would do), telling what that did. A
//!   refused or mistyped command thus leaves the file byte-for-byte as it
//!   was, as a reading command does (docs/DECISIONS.md, "A refused write
//!   changes nothing").
//! * `schema` and `migrate --dry-run` open read-only too (`commands::schema`).
//!
//! A PostgreSQL store (`--database-url`) opens the same way through
//! [`Context::open`]: reading commands read-only; writing ones after a
//! read-only open has found the store and checked that it was not moved
//! (only [`Access::Create`] may create it). A command that needs the file
//! itself opens it with [`Context::open_file`]; `commands::file_only`
//! refuses such commands on PostgreSQL before they run.

use std::path::PathBuf;

use hermes_state::{
    FileShape, OpenReport, PostgresUrl, SessionDb, SessionStore, StoreLocation, open_store,
};

use crate::error::{CliError, CliResult};
use crate::output::Output;

/// How a command uses the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only; the store must exist. Always opened read-only: nothing
    /// is created, migrated or written, whatever `--read-only` says.
    Read,
    /// Writes; the store must exist.
    Write,
    /// Writes, creating the store when it is missing.
    Create,
}

/// The global options every command sees.
#[derive(Debug)]
pub struct Context {
    /// How messages name the store: the file's path, or a PostgreSQL
    /// store's URL without its password (as every output shows it).
    pub path: PathBuf,
    /// The PostgreSQL store, when the store is one (`--database-url`).
    pub server: Option<PostgresUrl>,
    /// `--read-only`.
    pub read_only: bool,
    /// How to print.
    pub out: Output,
    /// The command, for error messages (`sessions show`).
    pub command: String,
    /// `--write-moved`: writing commands may write to a moved store.
    pub write_moved: bool,
}

impl Context {
    /// Opens the store for `access`, whichever backend it is on.
    pub fn open(&self, access: Access) -> CliResult<Box<dyn SessionStore>> {
        match &self.server {
            Some(url) => self.open_server(url, access),
            None => Ok(Box::new(self.open_file(access)?)),
        }
    }

    /// Refuses a writing command under `--read-only`.
    pub fn refuse_read_only(&self, access: Access) -> CliResult {
        if access != Access::Read && self.read_only {
            return Err(CliError::usage(format!(
                "`{}` writes to the store, but --read-only was given",
                self.command
            ))
            .hint("drop --read-only"));
        }
        Ok(())
    }

    /// Opens the PostgreSQL store for `access`: a schema that holds no
    /// store is an error ("holds no hermes-state store") unless the command
    /// makes one, and the writable open (which may upgrade the schema)
    /// comes after the read-only checks.
    fn open_server(&self, url: &PostgresUrl, access: Access) -> CliResult<Box<dyn SessionStore>> {
        self.refuse_read_only(access)?;
        let location = StoreLocation::Postgres(url.clone());
        let fail = |e: hermes_state::Error| self.fail(&e);
        if access == Access::Read {
            let reader = open_store(&location, true).map_err(fail)?;
            self.note_moved(reader.as_ref());
            return Ok(reader);
        }
        let probe = open_store(&location, true);
        let creates = matches!(&probe, Err(e) if holds_no_store(e));
        if access == Access::Write || !creates {
            self.refuse_moved(probe.map_err(fail)?.as_ref())?;
        }
        let store = open_store(&location, false).map_err(fail)?;
        if creates {
            self.out
                .note(format!("created a new store at {}", self.path.display()));
        }
        Ok(store)
    }

    /// A read-only handle for looking things up before a command runs
    /// (`session_arg`), telling nothing; `None` when the store does not
    /// open (the command reports that itself).
    pub fn peek(&self) -> Option<Box<dyn SessionStore>> {
        match &self.server {
            Some(url) => open_store(&StoreLocation::Postgres(url.clone()), true).ok(),
            None if self.path.is_file() => SessionDb::open_read_only(&self.path)
                .ok()
                .map(|db| Box::new(db) as Box<dyn SessionStore>),
            None => None,
        }
    }

    /// Opens the file for `access`, for the commands that need the SQLite
    /// file itself (`commands::file_only` keeps them off PostgreSQL).
    pub fn open_file(&self, access: Access) -> CliResult<SessionDb> {
        self.refuse_read_only(access)?;
        if access != Access::Create {
            self.require_existing()?;
        } else {
            self.refuse_directory()?;
        }
        if access == Access::Write {
            // `SessionDb::open` makes a new store in an empty file at once; a
            // command that needs an existing store refuses it first.
            self.refuse_empty_file()?;
        }
        let existed = access == Access::Create && self.path.exists();
        let db = if access == Access::Read {
            SessionDb::open_read_only(&self.path)
        } else {
            SessionDb::open(&self.path)
        }
        .map_err(|e| self.open_failed(&e))?;
        if access == Access::Read {
            self.refuse_non_store(&db)?;
            let limits = db.read_limitations().map_err(|e| self.fail(&e))?;
            if !limits.is_empty() {
                self.out.note(format!("note: {}", limits.join("; ")));
            }
        }
        // A writing command does not upgrade the file here: its checks come
        // first (`start_writing`).
        self.describe_open(&db, existed);
        if access == Access::Read {
            self.note_moved(&db);
        } else {
            self.refuse_moved(&db)?;
        }
        Ok(db)
    }

    /// Called by a writing command once its read-only checks passed, right
    /// before its first write: brings an older file to the current schema
    /// now (the first write would do it anyway, in its own transaction),
    /// so that what the upgrade did is told before the work. Nothing to do
    /// on a store just created, on a current one, or on PostgreSQL.
    pub fn start_writing(&self, store: &dyn SessionStore) -> CliResult {
        let Some(db) = store.as_sqlite() else {
            return Ok(());
        };
        if db.open_report().is_some() {
            return Ok(());
        }
        let report = db.migrate().map_err(|e| self.open_failed(&e))?;
        if let Some(change) = upgrade_summary(&report) {
            self.out
                .note(format!("note: upgraded {}: {change}", self.path.display()));
        }
        self.out.verbose(format!(
            "writing to {} (schema {}, journal {:?})",
            self.path.display(),
            report.to_version,
            report.journal_mode
        ));
        Ok(())
    }

    /// Says so when the store was moved elsewhere (`migrate-to`, from a
    /// file or from PostgreSQL): what it holds is the state at the move, and
    /// the agent writes there.
    fn note_moved(&self, store: &dyn SessionStore) {
        let Ok(Some(target)) = store.get_meta(hermes_state::SUPERSEDED_BY) else {
            return;
        };
        // Shown as parsed and redacted: an older release wrote some URLs
        // into the marker with their password.
        let target = StoreLocation::redact_text(&target);
        let holder = if store.as_sqlite().is_some() {
            "this file"
        } else {
            "this PostgreSQL store"
        };
        let when = store
            .get_meta(hermes_state::SUPERSEDED_AT)
            .ok()
            .flatten()
            .and_then(|at| at.parse::<f64>().ok())
            .map(|at| format!(" on {}", crate::output::datetime(at)))
            .unwrap_or_default();
        self.out.note(format!(
            "note: this store was moved to {target}{when}; {holder} holds it as it was then"
        ));
    }

    /// Refuses a writing command on a store that was moved elsewhere,
    /// before anything is written (no upgrade either): its writes belong to
    /// the store it moved to, and writing here would make two copies that
    /// drift apart. `--write-moved` writes all the same, with the note.
    fn refuse_moved(&self, store: &dyn SessionStore) -> CliResult {
        let moved = store
            .get_meta(hermes_state::SUPERSEDED_BY)
            .map_err(|e| self.fail(&e))?;
        let Some(target) = moved else {
            return Ok(());
        };
        if self.write_moved {
            self.note_moved(store);
            return Ok(());
        }
        let target = StoreLocation::redact_text(&target);
        Err(CliError::usage(format!(
            "`{}` writes, but this store was moved to {target}; writing here would make the two copies drift apart",
            self.command
        ))
        .hint(format!(
            "write to the new store (--database-url {target}), or pass --write-moved to write to this copy anyway"
        )))
    }

    /// A failed open: "cannot open PATH: …", except for a store too new to
    /// write, which is not about opening but about this command writing.
    fn open_failed(&self, error: &hermes_state::Error) -> CliError {
        if error.kind() == hermes_state::ErrorKind::SchemaTooNew {
            return self.fail(error);
        }
        CliError::store(
            &format!("cannot open {}", self.path.display()),
            &self.path,
            error,
        )
    }

    /// Classifies a read-only handle's file (reading only the schema):
    /// a file that is not a database, another application's SQLite file, or
    /// an empty file is an error, never an empty answer of the command.
    fn refuse_non_store(&self, db: &SessionDb) -> CliResult {
        let shape = db.store_shape().map_err(|e| self.open_failed(&e))?;
        match shape {
            FileShape::Store(_) => Ok(()),
            FileShape::Empty => Err(self.empty_file()),
        }
    }

    /// Refuses an empty file (0 bytes, or a database without tables) for a
    /// command that needs an existing store, before anything is opened for
    /// writing: such a file is never turned into a store by a command that
    /// did not ask for one (`doctor --repair`, `sessions end`, …). Any other
    /// file is left to the writable open to classify and report.
    fn refuse_empty_file(&self) -> CliResult {
        match SessionDb::open_read_only(&self.path).and_then(|db| db.store_shape()) {
            Ok(FileShape::Empty) => Err(self.empty_file()),
            _ => Ok(()),
        }
    }

    /// "PATH is an empty file": named as what it is, not as damage, with the
    /// commands that make a store in it.
    fn empty_file(&self) -> CliError {
        let what = match std::fs::metadata(&self.path) {
            Ok(meta) if meta.len() == 0 => "an empty file (0 bytes)",
            _ => "an empty database (no tables)",
        };
        CliError::failed(format!(
            "{}: {} is {what}, not a Hermes store",
            self.command,
            self.path.display()
        ))
        .hint(
            "check --db (a store the agent wrote is never empty); `hermes-state migrate` \
             (or `sessions create`, `import`, `demo`) makes a new store in it",
        )
    }

    /// Fails unless a store file exists at the path.
    pub fn require_existing(&self) -> CliResult {
        match std::fs::metadata(&self.path) {
            Ok(meta) if meta.is_dir() => Err(self.is_a_directory()),
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(
                    CliError::failed(format!("no store at {}", self.path.display())).hint(
                        "pass --db PATH or set HERMES_HOME to name an existing store; \
                 to try the tool, `hermes-state --db demo.db demo` makes a sample store",
                    ),
                )
            }
            Err(e) => Err(CliError::io("cannot access", &self.path, &e)
                .hint("check the path and the permissions of its folders")),
        }
    }

    fn refuse_directory(&self) -> CliResult {
        match std::fs::metadata(&self.path) {
            Ok(meta) if meta.is_dir() => Err(self.is_a_directory()),
            _ => Ok(()),
        }
    }

    fn is_a_directory(&self) -> CliError {
        CliError::failed(format!("{} is a directory", self.path.display()))
            .hint("--db takes the database file, e.g. ~/.hermes/state.db")
    }

    /// After a command that let the library upgrade the file at its first
    /// write (`import`, which validates before writing): tells what the
    /// upgrade did, if one ran.
    pub fn tell_upgrade(&self, store: &dyn SessionStore) {
        let report = store.as_sqlite().and_then(SessionDb::open_report);
        if let Some(change) = report.filter(|r| !r.created).and_then(upgrade_summary) {
            self.out
                .note(format!("note: upgraded {}: {change}", self.path.display()));
        }
    }

    /// Tells (stderr) what the open did: with `-v` always, otherwise only
    /// when it created the file (an upgrade is told by
    /// [`Context::start_writing`]).
    fn describe_open(&self, db: &SessionDb, existed: bool) {
        if db.is_read_only() {
            self.out
                .verbose(format!("opened {} read-only", self.path.display()));
            return;
        }
        match db.open_report() {
            Some(report) if report.created => {
                let was = if existed { " (in the empty file)" } else { "" };
                self.out.note(format!(
                    "created a new store at {}{was}",
                    self.path.display()
                ));
                self.out.verbose(format!(
                    "opened {} (schema {}, journal {:?})",
                    self.path.display(),
                    report.to_version,
                    report.journal_mode
                ));
            }
            _ => self.out.verbose(format!(
                "opened {}; nothing is written before the command's checks pass",
                self.path.display()
            )),
        }
    }

    /// A library error while doing something on this store.
    pub fn fail(&self, error: &hermes_state::Error) -> CliError {
        CliError::store(&self.command, &self.path, error)
    }

    /// "session X does not exist" for this store.
    pub fn unknown_session(&self, id: &str) -> CliError {
        CliError::failed(format!(
            "{}: session {id:?} does not exist in {}",
            self.command,
            self.path.display()
        ))
        .hint("list sessions with `hermes-state sessions list`")
    }

    /// Fails with "session does not exist" unless it does.
    pub fn require_session(
        &self,
        db: &dyn SessionStore,
        id: &str,
    ) -> CliResult<hermes_state::Session> {
        db.get_session(id)
            .map_err(|e| self.fail(&e))?
            .ok_or_else(|| self.unknown_session(id))
    }
}

/// Whether a read-only open of a PostgreSQL store failed because its
/// schema holds no store at all (the writable open creates one), rather
/// than an older one (which it upgrades) or for another reason. The
/// backend says so in words only.
fn holds_no_store(error: &hermes_state::Error) -> bool {
    error.kind() == hermes_state::ErrorKind::NotFound
        && error.to_string().contains("holds no hermes-state store")
}

/// What an open changed, in words; `None` when nothing changed.
pub fn upgrade_summary(report: &OpenReport) -> Option<String> {
    let mut parts = Vec::new();
    if report
        .from_version
        .is_some_and(|from| from < report.to_version)
    {
        parts.push(format!(
            "schema {} → {}",
            report.from_version.unwrap_or_default(),
            report.to_version
        ));
    }
    if !report.added_columns.is_empty() {
        parts.push(format!("{} column(s) added", report.added_columns.len()));
    }
    if report.fts.rebuilt {
        parts.push("full-text index rebuilt".to_owned());
    }
    if report.fts.cjk_rebuilt {
        parts.push("CJK index rebuilt".to_owned());
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The default store path: `$HERMES_HOME/state.db`, else `~/.hermes/state.db`.
pub fn default_path() -> CliResult<PathBuf> {
    hermes_state::paths::default_db_path().map_err(|e| {
        CliError::failed(format!("cannot find the default store: {e}"))
            .hint("pass --db PATH or set HERMES_HOME")
    })
}
