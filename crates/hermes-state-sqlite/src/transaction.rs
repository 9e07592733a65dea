//! The one transaction runner: `BEGIN IMMEDIATE`, the work, `COMMIT`;
//! rollback on any error; lock errors retried with the policy of [`crate::retry`];
//! and the parts of one shared transaction (begin, a savepoint per unit of
//! work, commit) for the facade's group commit.

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

/// `BEGIN IMMEDIATE` alone, for a caller that runs several units of work in
/// one transaction (the facade's group commit) and ends it with [`commit`].
pub fn begin_immediate(conn: &Connection) -> Result<(), SqliteError> {
    conn.execute_batch("BEGIN IMMEDIATE")
        .context("starting a write transaction")
}

/// `COMMIT` of a transaction opened by [`begin_immediate`]; on failure the
/// transaction is rolled back (nothing of it is kept) and the error returned.
pub fn commit(conn: &Connection) -> Result<(), SqliteError> {
    let result = conn.execute_batch("COMMIT").context("committing");
    if result.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    result
}

/// The name of the savepoint [`savepoint`] opens.
const UNIT_SAVEPOINT: &str = "hermes_unit";

/// Runs `work` inside `SAVEPOINT … RELEASE` in an open transaction, so that
/// its error undoes its own changes and nothing else of the transaction
/// (`ROLLBACK TO`). SQLite may roll the whole transaction back on some
/// errors (`SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_NOMEM`, a busy cache
/// spill): the caller tells by [`Connection::is_autocommit`] afterwards.
pub fn savepoint<T, E>(
    conn: &Connection,
    work: impl FnOnce(&Connection) -> Result<T, E>,
) -> Result<T, E>
where
    E: From<SqliteError>,
{
    conn.execute_batch(&format!("SAVEPOINT {UNIT_SAVEPOINT}"))
        .context("starting a savepoint")?;
    match work(conn) {
        Ok(value) => {
            conn.execute_batch(&format!("RELEASE {UNIT_SAVEPOINT}"))
                .context("releasing a savepoint")?;
            Ok(value)
        }
        Err(error) => {
            if !conn.is_autocommit() {
                // Fails only when SQLite already rolled the transaction back.
                let _ = conn.execute_batch(&format!(
                    "ROLLBACK TO {UNIT_SAVEPOINT}; RELEASE {UNIT_SAVEPOINT}"
                ));
            }
            Err(error)
        }
    }
}
