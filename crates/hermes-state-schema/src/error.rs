use std::path::PathBuf;

use hermes_state_sqlite::SqliteError;
use hermes_state_types::ErrorKind;

/// Errors of opening, classifying and migrating a `state.db`.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// SQLite refused a statement.
    #[error(transparent)]
    Sqlite(#[from] SqliteError),
    /// The file holds SQLite tables, none of which belong to the store.
    #[error(
        "{path}: an SQLite database of another application (no `schema_version` table); refusing to touch it"
    )]
    ForeignDatabase {
        /// The file.
        path: PathBuf,
    },
    /// The file is not a SQLite database although SQLite would open it (a
    /// file too short to hold a page); refused untouched.
    #[error("{path}: not a database ({why}); refusing to touch it")]
    NotADatabase {
        /// The file.
        path: PathBuf,
        /// What it holds instead.
        why: String,
    },
    /// The file is a damaged store: a value the classification needs is
    /// not what any release writes (e.g. a NULL `schema_version`).
    #[error("{path}: damaged store ({what})")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The file was written by a newer release that this library cannot write safely.
    #[error(
        "{path}: written by a newer Hermes release ({what}); this library writes schema version {supported}. Open it read-only, or upgrade hermes-state"
    )]
    SchemaTooNew {
        /// The file.
        path: PathBuf,
        /// What is too new, e.g. `schema_version 99`.
        what: String,
        /// The schema version this library writes.
        supported: i64,
    },
    /// Refinery's own bookkeeping failed (e.g. a shipped migration file was edited).
    #[error("migration history: {0}")]
    History(String),
    /// An operating-system error on a path (folder creation, permissions).
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl SchemaError {
    /// The portable kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            SchemaError::Sqlite(error) => error.kind(),
            SchemaError::ForeignDatabase { .. } | SchemaError::NotADatabase { .. } => {
                ErrorKind::NotADatabase
            }
            SchemaError::Corrupt { .. } => ErrorKind::Corrupt,
            SchemaError::SchemaTooNew { .. } => ErrorKind::SchemaTooNew,
            SchemaError::History(_) => ErrorKind::Other,
            SchemaError::Io { source, .. } => match source.kind() {
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                    ErrorKind::ReadOnly
                }
                std::io::ErrorKind::NotFound => ErrorKind::NotFound,
                _ => ErrorKind::Io,
            },
        }
    }

    /// Wraps a SQLite error with what was being done.
    pub fn sqlite(context: impl Into<String>, source: rusqlite::Error) -> Self {
        SchemaError::Sqlite(SqliteError::new(context, source))
    }

    /// The underlying SQLite error, if any.
    pub fn sqlite_source(&self) -> Option<&rusqlite::Error> {
        match self {
            SchemaError::Sqlite(error) => Some(&error.source),
            _ => None,
        }
    }
}

/// A schema failure is a backend failure of the SQLite store; its
/// constraint failures are classed by SQLite's code, as every SQLite one.
impl hermes_state_core::BackendFailure for SchemaError {
    fn kind(&self) -> ErrorKind {
        SchemaError::kind(self)
    }

    fn original_class(&self) -> Option<hermes_state_core::OriginalError> {
        self.sqlite_source()
            .and_then(hermes_state_sqlite::contract_error::constraint_class)
    }

    fn constraint_message(&self) -> Option<String> {
        self.sqlite_source()
            .and_then(hermes_state_sqlite::contract_error::constraint_text)
    }
}

impl From<SchemaError> for hermes_state_core::Error {
    fn from(error: SchemaError) -> Self {
        hermes_state_core::Error::backend(error)
    }
}
