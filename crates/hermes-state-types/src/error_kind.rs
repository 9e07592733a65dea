use std::fmt;

/// What went wrong, independent of the layer that noticed it.
///
/// Every library crate of the workspace has its own error type; each has a
/// `kind()` returning this enum, so retry logic and user-facing messages match on
/// kinds, never on message strings. New kinds may be added, hence
/// `#[non_exhaustive]`.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Another connection holds a lock on the database (SQLite `BUSY` or
    /// `LOCKED`), and waiting and retrying did not get it. Trying again later
    /// can succeed.
    Busy,
    /// The file is damaged: SQLite reports corruption, or an FTS index is corrupt.
    Corrupt,
    /// The file is not a SQLite database, or is a SQLite database of another
    /// application (it holds tables, none of which are the store's).
    NotADatabase,
    /// The database was opened read-only, or the file or its folder cannot be written.
    ReadOnly,
    /// The file was written by a newer release with a schema this library does
    /// not know how to write safely.
    SchemaTooNew,
    /// The thing asked for (a session, a message) does not exist.
    NotFound,
    /// A constraint of the schema refused the write (foreign key, unique title, NOT NULL).
    Constraint,
    /// An argument was refused before anything was written.
    InvalidInput,
    /// An operating-system error: a folder could not be created, permissions could not be set.
    Io,
    /// The database server cannot be reached, or the connection was lost
    /// outside a transaction (a server backend only; a file store never
    /// reports it). Trying again later can succeed.
    Unavailable,
    /// The connection was lost while a COMMIT was in flight: the write may or
    /// may not have been committed. Never retried automatically, because
    /// running it again could apply it twice; the caller decides, e.g. by
    /// reading back what it wrote.
    UnknownOutcome,
    /// The database server refused this client: a wrong password, a role it
    /// does not know or does not let in from here (a server backend only).
    /// Trying again does not help until the credentials or the server's
    /// rules change.
    AccessDenied,
    /// The caller cancelled the read while it ran
    /// (`hermes_state_core::cancel::Cancel`): there is no answer, not even a
    /// partial one. Never an empty result.
    Cancelled,
    /// Anything else, e.g. an unexpected SQLite error.
    Other,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            ErrorKind::Busy => "database busy",
            ErrorKind::Corrupt => "database corrupt",
            ErrorKind::NotADatabase => "not a state database",
            ErrorKind::ReadOnly => "read-only",
            ErrorKind::SchemaTooNew => "schema too new",
            ErrorKind::NotFound => "not found",
            ErrorKind::Constraint => "constraint violated",
            ErrorKind::InvalidInput => "invalid input",
            ErrorKind::Io => "I/O error",
            ErrorKind::Unavailable => "database unavailable",
            ErrorKind::UnknownOutcome => "outcome unknown",
            ErrorKind::AccessDenied => "access denied",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Other => "other error",
        };
        f.write_str(text)
    }
}
