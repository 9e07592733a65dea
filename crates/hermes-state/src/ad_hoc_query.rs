//! One SQL statement of the caller's, read-only, for people who know SQLite
//! (`hermes-state query "SELECT …"`, as sqlite-utils offers).
//!
//! It runs on a read-only connection of its own (`mode=ro`, the one a
//! reading command opens), never on the store's writable connection, and a
//! statement SQLite says could write (`sqlite3_stmt_readonly`: an `INSERT`,
//! a `PRAGMA` that sets something, an `ATTACH`) is refused before it runs:
//! two locks, so neither a mistake nor a trick changes the file under a
//! running agent.

use hermes_state_types::StoredValue;
use rusqlite::types::ValueRef;

use crate::{Error, Result, SessionDb};

/// The answer of [`SessionDb::query_read_only`]: column names and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryRows {
    /// The statement's column names, in order.
    pub columns: Vec<String>,
    /// Each row's values, in column order.
    pub rows: Vec<Vec<StoredValue>>,
    /// Whether rows were left unread because `max_rows` was reached.
    pub truncated: bool,
}

impl SessionDb {
    /// Runs one read-only SQL statement on a fresh read-only connection and
    /// returns at most `max_rows` rows (all when `None`).
    ///
    /// Errors: [`crate::ErrorKind::InvalidInput`] for text that is not one
    /// statement, or a statement that could write; SQLite's own errors
    /// (syntax, a missing table) as they come.
    pub fn query_read_only(&self, sql: &str, max_rows: Option<usize>) -> Result<QueryRows> {
        if self.is_closed() {
            return Err(Error::Closed);
        }
        let conn = hermes_state_schema::open_read_only(self.path())?;
        let mut stmt = conn.prepare(sql).map_err(|error| match error {
            rusqlite::Error::MultipleStatement => Error::InvalidInput(
                "one statement at a time (the text holds more than one)".to_owned(),
            ),
            other => crate::error::sqlite("preparing the query", other),
        })?;
        if !stmt.readonly() {
            return Err(Error::InvalidInput(
                "the statement could change the store; only statements that read are run here"
                    .to_owned(),
            ));
        }
        let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
        let width = columns.len();
        let mut rows = Vec::new();
        let mut truncated = false;
        let mut cursor = stmt
            .query([])
            .map_err(|error| crate::error::sqlite("running the query", error))?;
        while let Some(row) = cursor
            .next()
            .map_err(|error| crate::error::sqlite("running the query", error))?
        {
            if max_rows.is_some_and(|max| rows.len() >= max) {
                truncated = true;
                break;
            }
            let values = (0..width)
                .map(|index| {
                    row.get_ref(index)
                        .map(owned)
                        .map_err(|error| crate::error::sqlite("reading a row", error))
                })
                .collect::<Result<Vec<_>>>()?;
            rows.push(values);
        }
        Ok(QueryRows {
            columns,
            rows,
            truncated,
        })
    }
}

fn owned(value: ValueRef<'_>) -> StoredValue {
    match value {
        ValueRef::Null => StoredValue::Null,
        ValueRef::Integer(i) => StoredValue::Integer(i),
        ValueRef::Real(f) => StoredValue::Real(f),
        ValueRef::Text(bytes) => StoredValue::Text(String::from_utf8_lossy(bytes).into_owned()),
        ValueRef::Blob(bytes) => StoredValue::Blob(bytes.to_vec()),
    }
}
