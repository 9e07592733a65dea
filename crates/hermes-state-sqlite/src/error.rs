//! The one SQLite error type of the workspace, its context trait and the
//! classification of SQLite result codes into portable [`ErrorKind`]s.
//!
//! Every SQLite crate wraps this error in its own error enum (`#[from]`), so
//! "busy" or "corrupt" means the same thing in every layer: the write path
//! retries exactly what [`sqlite_error_kind`] calls [`ErrorKind::Busy`].

use hermes_state_types::ErrorKind;
use rusqlite::ErrorCode;

/// A statement SQLite refused, with what was being done.
#[derive(Debug, thiserror::Error)]
#[error("{context}: {source}")]
pub struct SqliteError {
    /// What was being done, e.g. `reading the schema`.
    pub context: String,
    /// The SQLite error.
    #[source]
    pub source: rusqlite::Error,
}

impl SqliteError {
    /// Wraps a SQLite error with what was being done.
    pub fn new(context: impl Into<String>, source: rusqlite::Error) -> Self {
        SqliteError {
            context: context.into(),
            source,
        }
    }

    /// The portable kind of this error.
    pub fn kind(&self) -> ErrorKind {
        sqlite_error_kind(&self.source)
    }

    /// Whether it says an FTS index (not the whole file) is corrupt.
    pub fn is_fts_corruption(&self) -> bool {
        is_fts_corruption(&self.source)
    }
}

/// Adds what was being done to a SQLite result.
pub trait Context<T> {
    /// `Err(e)` becomes a [`SqliteError`] saying `what` failed.
    fn context(self, what: &str) -> Result<T, SqliteError>;
}

impl<T> Context<T> for Result<T, rusqlite::Error> {
    fn context(self, what: &str) -> Result<T, SqliteError> {
        self.map_err(|source| SqliteError::new(what, source))
    }
}

/// Classifies a SQLite error into a portable [`ErrorKind`], by result code.
///
/// The message text is consulted only for SQLite's generic codes, where the
/// code itself carries no meaning (FTS5 reports some index corruption as a
/// plain `SQLITE_ERROR` with a message).
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
                // "unsupported file format": a schema format number above 4
                // in the file header, which no SQLite writes: a damaged
                // header (found by the damaged-store walk).
                if is_fts_corruption_text(&text) || text.starts_with("unsupported file format") {
                    ErrorKind::Corrupt
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

/// `SQLITE_CORRUPT_VTAB`: a virtual table (an FTS5 index) is corrupt.
const SQLITE_CORRUPT_VTAB: i32 = rusqlite::ffi::SQLITE_CORRUPT_VTAB;

/// Whether an error says an FTS index, not the whole file, is corrupt: the
/// extended code `SQLITE_CORRUPT_VTAB` where SQLite gives it; otherwise the
/// original's rule on the message (`malformed`, or `fts5` with `corrupt`).
pub fn is_fts_corruption(error: &rusqlite::Error) -> bool {
    match error {
        rusqlite::Error::SqliteFailure(failure, message) => {
            failure.extended_code == SQLITE_CORRUPT_VTAB
                || is_fts_corruption_text(
                    &message.as_deref().unwrap_or_default().to_ascii_lowercase(),
                )
        }
        _ => false,
    }
}

/// The original's message rule for FTS corruption (`malformed`, or `fts5`
/// together with `corrupt`), on a lower-cased message.
pub fn is_fts_corruption_text(lowercase_message: &str) -> bool {
    lowercase_message.contains("malformed")
        || (lowercase_message.contains("fts5") && lowercase_message.contains("corrupt"))
}
