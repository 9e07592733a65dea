//! A SQLite file: what is refused before it is opened (a folder, a missing
//! or empty file), how it is opened for each access, and its upgrade,
//! told before a writing command's first write.

use hermes_state::prelude::*;
use hermes_state::{FileShape, OpenReport, SessionDb, SessionStore};

use super::{Access, Context};
use crate::error::{CliError, CliResult};

impl Context {
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

    /// A failed open: "cannot open PATH: …", except for a store too new to
    /// write, which is not about opening but about this command writing.
    pub(super) fn open_failed(&self, error: &hermes_state::Error) -> CliError {
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
    pub(super) fn refuse_non_store(&self, db: &SessionDb) -> CliResult {
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
    pub(super) fn describe_open(&self, db: &SessionDb, existed: bool) {
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
