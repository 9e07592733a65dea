//! One read transaction for a whole search.
//!
//! In autocommit mode every statement opens and closes its own read
//! transaction: on a WAL file that is a shared lock on the database file and
//! a read mark in the WAL index, taken and released with `fcntl` for every
//! statement (a search runs several: the markers, the main query, the
//! context). Running them in one transaction takes those locks once, and
//! gives every statement of the search the same snapshot, so the context and
//! the second step of a time-ordered search see exactly the rows the main
//! query saw even while another connection writes.

use rusqlite::Connection;

use crate::error::{QueryContext, QueryError};

/// Runs `read` in one read transaction of `conn`: its own (`BEGIN` …
/// `COMMIT`) when `conn` is in autocommit mode, else the caller's. `read`
/// must only read.
pub fn in_read_snapshot<T, E>(
    conn: &Connection,
    read: impl FnOnce() -> Result<T, E>,
) -> Result<T, E>
where
    E: From<QueryError>,
{
    if !conn.is_autocommit() {
        return read();
    }
    run(conn, "BEGIN")
        .context("beginning a read transaction")
        .map_err(|e| E::from(e.into()))?;
    let outcome = read();
    let end = run(
        conn,
        if outcome.is_ok() {
            "COMMIT"
        } else {
            "ROLLBACK"
        },
    );
    match (outcome, end) {
        (Ok(_), Err(error)) => Err(E::from(
            hermes_state_sqlite::SqliteError::new("ending a read transaction", error).into(),
        )),
        // A failed read's own error says more than its rollback's.
        (outcome, _) => outcome,
    }
}

fn run(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}
