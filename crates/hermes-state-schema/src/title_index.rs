//! The unique title index outside the open algorithm: restoring it once the
//! duplicates that kept it from being created are gone (the schema half of
//! the doctor's title repair; this crate is the only one that issues DDL).

use rusqlite::Connection;

use crate::ddl;
use crate::detect;
use crate::error::SchemaError;
use hermes_state_sqlite::Context as SqliteContext;

/// Creates the unique title index (`ddl::TITLE_UNIQUE_INDEX`) if it is
/// missing; returns whether it was created. Runs in the caller's write
/// transaction. Fails with a constraint error while duplicate titles remain.
pub fn restore_title_index(conn: &Connection) -> Result<bool, SchemaError> {
    if detect::object_exists(conn, "index", "idx_sessions_title_unique")? {
        return Ok(false);
    }
    conn.execute_batch(ddl::TITLE_UNIQUE_INDEX)
        .context("creating the unique title index")?;
    Ok(true)
}
