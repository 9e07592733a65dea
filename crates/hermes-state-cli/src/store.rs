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
//!   need the store to exist. They open with [`SessionDb::open`]; bringing an
//!   older file to the current schema is the library's business (its first
//!   write, or `migrate`).
//! * `schema` and `migrate --dry-run` open read-only too (`commands::schema`).

use std::path::PathBuf;

use hermes_state::FileShape;
use hermes_state::{OpenReport, SessionDb};

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
    /// The store's path.
    pub path: PathBuf,
    /// `--read-only`.
    pub read_only: bool,
    /// How to print.
    pub out: Output,
    /// The command, for error messages (`sessions show`).
    pub command: &'static str,
}

impl Context {
    /// Opens the store for `access`.
    pub fn open(&self, access: Access) -> CliResult<SessionDb> {
        if access != Access::Read && self.read_only {
            return Err(CliError::usage(format!(
                "`{}` writes to the store, but --read-only was given",
                self.command
            ))
            .hint("drop --read-only"));
        }
        if access != Access::Create {
            self.require_existing()?;
        } else {
            self.refuse_directory()?;
        }
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
        } else {
            // A writing command upgrades the file now (its first write would
            // anyway), so that what the upgrade did can be told before the work.
            db.migrate().map_err(|e| self.open_failed(&e))?;
        }
        self.describe_open(&db);
        self.note_moved(&db);
        Ok(db)
    }

    /// Says so when the store was moved elsewhere (`migrate-to`, from a
    /// file or from PostgreSQL): what it holds is the state at the move, and
    /// the agent writes there.
    pub(crate) fn note_moved(&self, store: &dyn hermes_state::SessionStore) {
        let Ok(Some(target)) = store.get_meta(hermes_state::SUPERSEDED_BY) else {
            return;
        };
        // Shown as parsed and redacted: an older release wrote some URLs
        // into the marker with their password.
        let target = hermes_state::StoreLocation::redact_text(&target);
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
            FileShape::Empty => Err(CliError::failed(format!(
                "{}: {} is an empty file, not a store yet",
                self.command,
                self.path.display()
            ))
            .hint("check --db; `hermes-state migrate` creates the schema in it")),
        }
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

    /// Tells (stderr) what the open did: with `-v` always, otherwise only
    /// when it created or upgraded the file.
    fn describe_open(&self, db: &SessionDb) {
        let Some(report) = db.open_report() else {
            self.out
                .verbose(format!("opened {} read-only", self.path.display()));
            return;
        };
        if report.created {
            self.out
                .note(format!("created a new store at {}", self.path.display()));
        } else if let Some(change) = upgrade_summary(report) {
            self.out
                .note(format!("note: upgraded {}: {change}", self.path.display()));
        }
        self.out.verbose(format!(
            "opened {} (schema {}, journal {:?})",
            self.path.display(),
            report.to_version,
            report.journal_mode
        ));
    }

    /// A library error while doing something on this store.
    pub fn fail(&self, error: &hermes_state::Error) -> CliError {
        CliError::store(self.command, &self.path, error)
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
        db: &dyn hermes_state::SessionStore,
        id: &str,
    ) -> CliResult<hermes_state::Session> {
        db.get_session(id)
            .map_err(|e| self.fail(&e))?
            .ok_or_else(|| self.unknown_session(id))
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

/// The default store path: `$HERMES_HOME/state.db`, else `~/.hermes/state.db`.
pub fn default_path() -> CliResult<PathBuf> {
    hermes_state::paths::default_db_path().map_err(|e| {
        CliError::failed(format!("cannot find the default store: {e}"))
            .hint("pass --db PATH or set HERMES_HOME")
    })
}
