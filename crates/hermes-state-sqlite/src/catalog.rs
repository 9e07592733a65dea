//! Looking up the main database's schema objects (`sqlite_master`), shared
//! by the schema crate (classification, FTS set-up) and the read side
//! (health checks).

use rusqlite::Connection;

use crate::error::{Context, SqliteError};

/// Whether the main database has a schema object of this type and name.
pub fn object_exists(conn: &Connection, kind: &str, name: &str) -> Result<bool, SqliteError> {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM main.sqlite_master WHERE type = ?1 AND name = ?2)",
        [kind, name],
        |row| row.get(0),
    )
    .context("reading the schema")
}
