//! The one transaction runner: `BEGIN IMMEDIATE`, the work, `COMMIT`;
//! rollback on any error; lock errors retried with the policy of [`crate::retry`].

use rusqlite::Connection;

use crate::error::{Context, SqliteError};
use crate::retry;
use hermes_state_types::ErrorKind;

/// Runs `work` once inside `BEGIN IMMEDIATE … COMMIT` (taking the write lock
/// up front, so the transaction never fails half-way on a lock upgrade).
/// Any error rolls back; the error is returned as it is.
pub fn immediate<T, E>(
    conn: &Connection,
    work: impl FnOnce(&Connection) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<SqliteError>,
{
    conn.execute_batch("BEGIN IMMEDIATE")
        .context("starting a write transaction")?;
    let result = work(conn).and_then(|value| {
        conn.execute_batch("COMMIT").context("committing")?;
        Ok(value)
    });
    if result.is_err() && !conn.is_autocommit() {
        // SQLite may already have rolled back; nothing else to do if this fails.
        let _ = conn.execute_batch("ROLLBACK");
    }
    result
}

/// [`immediate`], run again on lock errors (`kind` says which errors are
/// [`ErrorKind::Busy`]) up to [`retry::MAX_ATTEMPTS`] times with the
/// policy's random sleeps. `work` runs again from a rolled-back state, so it
/// must not depend on effects of a failed attempt.
pub fn immediate_with_retries<T, E>(
    conn: &Connection,
    mut work: impl FnMut(&Connection) -> Result<T, E>,
    kind: impl Fn(&E) -> ErrorKind,
) -> Result<T, E>
where
    E: From<SqliteError>,
{
    retry::with_retries(|| immediate(conn, &mut work), kind)
}
