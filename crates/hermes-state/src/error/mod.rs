//! The SQLite store's errors are the contract's ([`hermes_state_core::Error`]):
//! the failures every backend shares are its variants, and what only SQLite
//! can say (a schema, read or write failure with SQLite's code) is a backend
//! failure inside it. This module adds the one failure of the write path
//! itself — giving up on a lock after the retries — and the look-ups the
//! write path needs.

pub use hermes_state_core::{Error, OriginalError, Result};

use hermes_state_core::BackendFailure;
use hermes_state_query::QueryError;
use hermes_state_schema::SchemaError;
use hermes_state_sqlite::SqliteError;
use hermes_state_types::ErrorKind;

/// A write kept failing on locks held by other connections: the retries
/// (`api.md` §13) are spent.
#[derive(Debug, thiserror::Error)]
#[error("{context}: database is locked; gave up after {attempts} attempts ({source})")]
pub struct BusyError {
    /// What was being done.
    context: String,
    /// How many attempts were made.
    attempts: u32,
    /// The last lock error.
    #[source]
    source: rusqlite::Error,
}

impl BusyError {
    /// How many attempts were made before giving up.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }
}

impl BackendFailure for BusyError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Busy
    }
}

/// The error of giving up on a lock after `attempts` tries.
pub(crate) fn busy(context: impl Into<String>, attempts: u32, source: rusqlite::Error) -> Error {
    Error::backend(BusyError {
        context: context.into(),
        attempts,
        source,
    })
}

/// A SQLite failure while doing `context`.
pub(crate) fn sqlite(context: impl Into<String>, source: rusqlite::Error) -> Error {
    Error::from(SqliteError::new(context, source))
}

/// The SQLite error inside, whichever layer reported it.
pub(crate) fn sqlite_source(error: &Error) -> Option<&rusqlite::Error> {
    if let Some(error) = error.downcast_backend::<SqliteError>() {
        return Some(&error.source);
    }
    if let Some(QueryError::Sqlite(error)) = error.downcast_backend::<QueryError>() {
        return Some(&error.source);
    }
    if let Some(error) = error.downcast_backend::<SchemaError>() {
        return error.sqlite_source();
    }
    error
        .downcast_backend::<BusyError>()
        .map(|busy| &busy.source)
}

/// The context trait of the SQLite base, under the name this crate's
/// modules use.
pub(crate) use hermes_state_sqlite::Context as WriteContext;
