use hermes_state_sqlite::SqliteError;
use hermes_state_types::ErrorKind;

/// Errors of the read side.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// SQLite refused a query.
    #[error(transparent)]
    Sqlite(#[from] SqliteError),
    /// A table every version of the store has (`sessions`, `messages`) is
    /// missing: the file is damaged. Never presented as an empty answer.
    #[error(
        "the store has no `{table}` table: the file is damaged (every version of the store has it)"
    )]
    MissingTable {
        /// The missing table.
        table: &'static str,
    },
    /// A value of the store cannot go where the original's code puts it:
    /// the `TypeError` Python raises there, with its text (tool calls that
    /// are not a list, met by the conversation repair).
    #[error("{0}")]
    TypeError(String),
    /// A stored value the original's code refuses with a `ValueError`, with
    /// its text (a backfill mark Python's `int()` cannot read).
    #[error("{0}")]
    ValueError(String),
}

impl From<hermes_state_core::conversation_repair::RepairError> for QueryError {
    fn from(error: hermes_state_core::conversation_repair::RepairError) -> Self {
        QueryError::TypeError(error.0)
    }
}

impl QueryError {
    /// The portable kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            QueryError::Sqlite(error) => error.kind(),
            QueryError::MissingTable { .. } => ErrorKind::Corrupt,
            QueryError::TypeError(_) | QueryError::ValueError(_) => ErrorKind::InvalidInput,
        }
    }

    /// Whether SQLite reported its generic `SQLITE_ERROR` class (primary code
    /// 1): a statement it could not compile or run for a reason of the SQL
    /// itself (an FTS5 query syntax error, no such table, column or
    /// tokenizer), as opposed to the file or its locks failing (`BUSY`,
    /// `CORRUPT`, `NOTADB`, `IOERR`, `CANTOPEN`, `READONLY`, …). Classified
    /// by result code, never by message text.
    pub fn is_sql_error(&self) -> bool {
        match self {
            QueryError::Sqlite(error) => is_sql_error(&error.source),
            QueryError::MissingTable { .. }
            | QueryError::TypeError(_)
            | QueryError::ValueError(_) => false,
        }
    }

    /// Whether a value could not be converted (e.g. an FTS snippet that is
    /// not valid UTF-8 because of the CJK tokenizer's offset drift).
    pub fn is_conversion(&self) -> bool {
        matches!(
            self,
            QueryError::Sqlite(SqliteError {
                source: rusqlite::Error::FromSqlConversionFailure(..),
                ..
            })
        )
    }
}

/// `SQLITE_ERROR` class of a rusqlite error (see [`QueryError::is_sql_error`]).
pub(crate) fn is_sql_error(error: &rusqlite::Error) -> bool {
    let code = match error {
        rusqlite::Error::SqliteFailure(e, _) | rusqlite::Error::SqlInputError { error: e, .. } => {
            e.extended_code
        }
        _ => return false,
    };
    code & 0xff == rusqlite::ffi::SQLITE_ERROR
}

/// The context trait of the SQLite base, under the name this crate's
/// modules use.
pub(crate) use hermes_state_sqlite::Context as QueryContext;

/// A read failure is a backend failure of the SQLite store, except the two
/// the original raises as Python exceptions of its own, which become the
/// contract's `TypeError` and `InvalidValue`.
impl hermes_state_core::BackendFailure for QueryError {
    fn kind(&self) -> ErrorKind {
        QueryError::kind(self)
    }

    fn original_class(&self) -> Option<hermes_state_core::OriginalError> {
        match self {
            QueryError::Sqlite(error) => hermes_state_core::BackendFailure::original_class(error),
            _ => None,
        }
    }

    fn constraint_message(&self) -> Option<String> {
        match self {
            QueryError::Sqlite(error) => {
                hermes_state_core::BackendFailure::constraint_message(error)
            }
            _ => None,
        }
    }
}

impl From<QueryError> for hermes_state_core::Error {
    fn from(error: QueryError) -> Self {
        match error {
            QueryError::TypeError(text) => hermes_state_core::Error::TypeError(text),
            QueryError::ValueError(text) => hermes_state_core::Error::InvalidValue(text),
            QueryError::Sqlite(error) => error.into(),
            other => hermes_state_core::Error::backend(other),
        }
    }
}
