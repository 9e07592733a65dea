//! SQLite's failures as the contract reports them: a [`SqliteError`] is a
//! backend failure of the store ([`hermes_state_core::Error::Backend`]),
//! and its constraint failures are told apart by SQLite's extended result
//! code — never by message text — as the exception the original raises.

use hermes_state_core::{BackendFailure, Error, OriginalError};
use hermes_state_types::ErrorKind;
use rusqlite::ffi;

use crate::error::SqliteError;

impl BackendFailure for SqliteError {
    fn kind(&self) -> ErrorKind {
        SqliteError::kind(self)
    }

    fn original_class(&self) -> Option<OriginalError> {
        constraint_class(&self.source)
    }

    fn constraint_message(&self) -> Option<String> {
        constraint_text(&self.source)
    }
}

impl From<SqliteError> for Error {
    fn from(error: SqliteError) -> Self {
        Error::backend(error)
    }
}

/// The original's exception for a SQLite constraint failure, by extended
/// result code; `None` for every other error.
pub fn constraint_class(error: &rusqlite::Error) -> Option<OriginalError> {
    let rusqlite::Error::SqliteFailure(failure, _) = error else {
        return None;
    };
    match failure.extended_code {
        ffi::SQLITE_CONSTRAINT_FOREIGNKEY => Some(OriginalError::ForeignKey),
        ffi::SQLITE_CONSTRAINT_NOTNULL => Some(OriginalError::NotNull),
        ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
            Some(OriginalError::Unique)
        }
        _ => None,
    }
}

/// SQLite's own text of a failure (`NOT NULL constraint failed:
/// sessions.source`), the text the original's exception carries.
pub fn constraint_text(error: &rusqlite::Error) -> Option<String> {
    match error {
        rusqlite::Error::SqliteFailure(_, Some(message)) => Some(message.clone()),
        _ => None,
    }
}
