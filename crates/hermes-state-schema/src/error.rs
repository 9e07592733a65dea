use std::path::PathBuf;

use hermes_state_types::ErrorKind;
use rusqlite::ErrorCode;

/// Errors of opening, classifying and migrating a `state.db`.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// SQLite refused a statement.
    #[error("{context}: {source}")]
    Sqlite {
        /// What was being done.
        context: String,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// The file holds SQLite tables, none of which belong to the store.
    #[error(
        "{path}: an SQLite database of another application (no `schema_version` table); refusing to touch it"
    )]
    ForeignDatabase {
        /// The file.
        path: PathBuf,
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
            SchemaError::Sqlite { source, .. } => sqlite_error_kind(source),
            SchemaError::ForeignDatabase { .. } => ErrorKind::NotADatabase,
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
        SchemaError::Sqlite {
            context: context.into(),
            source,
        }
    }

    /// The underlying SQLite error, if any.
    pub fn sqlite_source(&self) -> Option<&rusqlite::Error> {
        match self {
            SchemaError::Sqlite { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Classifies a SQLite error into a portable [`ErrorKind`].
///
/// Shared by every layer so that "busy" means the same thing everywhere: the
/// write helper retries exactly the errors this calls [`ErrorKind::Busy`].
pub fn sqlite_error_kind(error: &rusqlite::Error) -> ErrorKind {
    match error {
        rusqlite::Error::SqliteFailure(failure, message) => match failure.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => ErrorKind::Busy,
            ErrorCode::DatabaseCorrupt => ErrorKind::Corrupt,
            ErrorCode::NotADatabase => ErrorKind::NotADatabase,
            ErrorCode::ReadOnly => ErrorKind::ReadOnly,
            ErrorCode::ConstraintViolation => ErrorKind::Constraint,
            ErrorCode::CannotOpen => ErrorKind::Io,
            ErrorCode::PermissionDenied => ErrorKind::ReadOnly,
            ErrorCode::DiskFull | ErrorCode::SystemIoFailure => ErrorKind::Io,
            _ => {
                let text = message.as_deref().unwrap_or_default().to_ascii_lowercase();
                if is_fts_corruption_text(&text) {
                    ErrorKind::Corrupt
                } else if text.contains("locked") || text.contains("busy") {
                    ErrorKind::Busy
                } else {
                    ErrorKind::Other
                }
            }
        },
        rusqlite::Error::QueryReturnedNoRows => ErrorKind::NotFound,
        rusqlite::Error::InvalidParameterName(_)
        | rusqlite::Error::InvalidPath(_)
        | rusqlite::Error::NulError(_) => ErrorKind::InvalidInput,
        _ => ErrorKind::Other,
    }
}

/// Whether an error message says an FTS index (not the whole file) is corrupt:
/// the original treats `malformed`, or `fts5` together with `corrupt`, that way.
pub fn is_fts_corruption_text(lowercase_message: &str) -> bool {
    lowercase_message.contains("malformed")
        || (lowercase_message.contains("fts5") && lowercase_message.contains("corrupt"))
}

pub(crate) trait SqliteContext<T> {
    fn context(self, what: &str) -> Result<T, SchemaError>;
}

impl<T> SqliteContext<T> for Result<T, rusqlite::Error> {
    fn context(self, what: &str) -> Result<T, SchemaError> {
        self.map_err(|source| SchemaError::sqlite(what, source))
    }
}
