//! Which store, and how it is opened: `file` (the SQLite file's checks
//! and upgrade), `server` (a PostgreSQL store), `moved` (a store that
//! moved elsewhere, on either).
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

mod file;
mod moved;
mod server;

pub use file::upgrade_summary;

use std::path::PathBuf;

use hermes_state::{PostgresUrl, SessionDb, SessionStore, StoreLocation, open_store};

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

/// The default store path: `$HERMES_HOME/state.db`, else `~/.hermes/state.db`.
pub fn default_path() -> CliResult<PathBuf> {
    hermes_state::paths::default_db_path().map_err(|e| {
        CliError::failed(format!("cannot find the default store: {e}"))
            .hint("pass --db PATH or set HERMES_HOME")
    })
}
