mod original;

pub use original::OriginalError;

use hermes_state_query::QueryError;
use hermes_state_schema::SchemaError;
use hermes_state_sqlite::SqliteError;
use hermes_state_types::ErrorKind;

/// Every error of the session store.
///
/// Match on [`Error::kind`] rather than on variants or messages: kinds are
/// portable across layers and stable, variants may grow. Which exception
/// the original would have raised is [`Error::original_class`].
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Opening, classifying or migrating the file failed.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// A read failed.
    #[error(transparent)]
    Query(#[from] QueryError),
    /// SQLite refused a write.
    #[error(transparent)]
    Sqlite(#[from] SqliteError),
    /// A write kept failing on locks held by other connections.
    #[error("{context}: database is locked; gave up after {attempts} attempts ({source})")]
    Busy {
        /// What was being done.
        context: String,
        /// How many attempts were made.
        attempts: u32,
        /// The last lock error.
        #[source]
        source: rusqlite::Error,
    },
    /// The session named does not exist: a write that needs it was refused
    /// by the `session_id` foreign key (the original's `IntegrityError:
    /// FOREIGN KEY constraint failed`, see [`Error::original_message`]).
    #[error("session {0:?} does not exist")]
    SessionNotFound(String),
    /// The message is not one of the session's (an unknown or empty session
    /// included); the original's text.
    #[error("message {message_id} not found in session {session_id}")]
    MessageNotFound {
        /// The session named.
        session_id: String,
        /// The message named.
        message_id: i64,
    },
    /// A rewind target that is not a `user` message; the original's text
    /// (the role as Python's `repr` writes it).
    #[error(
        "rewind target must be a 'user' message (got role={}, id={message_id})",
        hermes_state_types::pyrepr::str_repr(role)
    )]
    RewindTargetRole {
        /// The target's role.
        role: String,
        /// The target message.
        message_id: i64,
    },
    /// A value the original refuses with a `ValueError` of its own (e.g.
    /// `sessions must be a list`); the text is the original's.
    #[error("{0}")]
    InvalidValue(String),
    /// An argument was refused before anything was written.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The store was opened read-only.
    #[error("{0}: the store was opened read-only")]
    ReadOnly(String),
    /// The title is held by another session that is not a compression ancestor.
    #[error("Title '{title}' is already in use by session {session_id}")]
    TitleInUse {
        /// The normalised title.
        title: String,
        /// The session holding it.
        session_id: String,
    },
    /// The title was refused by normalisation (too long).
    #[error(transparent)]
    Title(#[from] hermes_state_query::TitleError),
    /// The store was closed.
    #[error("the store is closed")]
    Closed,
    /// The PostgreSQL backend failed (feature `postgres`).
    #[cfg(feature = "postgres")]
    #[error(transparent)]
    Postgres(#[from] hermes_state_postgres::PgError),
}

impl Error {
    /// The portable kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Schema(error) => error.kind(),
            Error::Query(error) => error.kind(),
            Error::Sqlite(error) => error.kind(),
            Error::Busy { .. } => ErrorKind::Busy,
            Error::SessionNotFound(_) | Error::MessageNotFound { .. } => ErrorKind::NotFound,
            Error::RewindTargetRole { .. } | Error::InvalidValue(_) => ErrorKind::InvalidInput,
            Error::InvalidInput(_) => ErrorKind::InvalidInput,
            Error::ReadOnly(_) => ErrorKind::ReadOnly,
            Error::TitleInUse { .. } => ErrorKind::Constraint,
            Error::Title(_) => ErrorKind::InvalidInput,
            Error::Closed => ErrorKind::Other,
            #[cfg(feature = "postgres")]
            Error::Postgres(error) => error.kind(),
        }
    }

    /// What an operator does next, where the failure is one fixed outside
    /// this library and the backend can tell which (a PostgreSQL server's
    /// refusal: credentials, rights, a missing database, no answer).
    pub fn next_step(&self) -> Option<&'static str> {
        match self {
            #[cfg(feature = "postgres")]
            Error::Postgres(error) => error.next_step(),
            _ => None,
        }
    }

    pub(crate) fn sqlite(context: impl Into<String>, source: rusqlite::Error) -> Self {
        Error::Sqlite(SqliteError::new(context, source))
    }

    /// The SQLite error inside, whichever layer reported it.
    pub(crate) fn sqlite_source(&self) -> Option<&rusqlite::Error> {
        match self {
            Error::Sqlite(error) | Error::Query(QueryError::Sqlite(error)) => Some(&error.source),
            Error::Schema(error) => error.sqlite_source(),
            Error::Busy { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The context trait of the SQLite base, under the name this crate's
/// modules use.
pub(crate) use hermes_state_sqlite::Context as WriteContext;
