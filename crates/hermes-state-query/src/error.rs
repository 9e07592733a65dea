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
}

impl QueryError {
    /// The portable kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            QueryError::Sqlite { source, .. } => hermes_state_schema::sqlite_error_kind(source),
        }
    }
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
