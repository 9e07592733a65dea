use hermes_state_types::ErrorKind;

/// Errors of the read side.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// SQLite refused a query.
    #[error("{context}: {source}")]
    Sqlite {
        /// What was being read.
        context: String,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
    /// A table every version of the store has (`sessions`, `messages`) is
    /// missing: the file is damaged. Never presented as an empty answer.
    #[error(
        "the store has no `{table}` table: the file is damaged (every version of the store has it)"
    )]
    MissingTable {
        /// The missing table.
        table: &'static str,
    },
}

impl QueryError {
    /// The portable kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            QueryError::Sqlite { source, .. } => hermes_state_schema::sqlite_error_kind(source),
            QueryError::MissingTable { .. } => ErrorKind::Corrupt,
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
            QueryError::Sqlite { source, .. } => is_sql_error(source),
            QueryError::MissingTable { .. } => false,
        }
    }

    /// Whether a value could not be converted (e.g. an FTS snippet that is
    /// not valid UTF-8 because of the CJK tokenizer's offset drift).
    pub fn is_conversion(&self) -> bool {
        matches!(
            self,
            QueryError::Sqlite {
                source: rusqlite::Error::FromSqlConversionFailure(..),
                ..
            }
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

pub(crate) trait QueryContext<T> {
    fn context(self, what: &str) -> Result<T, QueryError>;
}

impl<T> QueryContext<T> for Result<T, rusqlite::Error> {
    fn context(self, what: &str) -> Result<T, QueryError> {
        self.map_err(|source| QueryError::Sqlite {
            context: what.to_owned(),
            source,
        })
    }
}
