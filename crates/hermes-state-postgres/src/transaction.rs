//! The one write path and the one read path of the backend.
//!
//! A write is one transaction that first takes the store's writer lock, a
//! transaction-level advisory lock keyed on the schema: `BEGIN IMMEDIATE`'s
//! contract (one writer per store, contention visible at the start), across
//! every host. The lock wait is bounded by `lock_timeout`; a timeout
//! (`55P03`), a serialization failure or a deadlock runs the whole
//! operation again after the same jittered sleep as the SQLite backend, up
//! to the same number of attempts. A connection lost before COMMIT was sent
//! lost the transaction with it (the server rolls back), so the operation
//! is run again on a new connection — whole, never continued. A connection
//! lost while COMMIT was in flight is [`PgError::UnknownOutcome`]: never
//! reported as success, never run again.

use std::time::{Duration, Instant};

use hermes_state_sqlite::retry;
use hermes_state_types::ErrorKind;
use postgres::Transaction;

use crate::error::{Context, PgError, Result};
use crate::pool::Pool;

/// How long one write may wait for the store's writer lock, over all attempts.
pub const WRITE_PATIENCE: Duration = Duration::from_secs(15);

/// Runs `body` in one write transaction under the store's writer lock,
/// with the retry policy described in the module documentation.
pub(crate) fn write<T>(
    pool: &Pool,
    what: &str,
    mut body: impl FnMut(&mut Transaction<'_>) -> Result<T>,
) -> Result<T> {
    let started = Instant::now();
    let mut attempt = 1;
    loop {
        match write_once(pool, what, started, &mut body) {
            Err(error)
                if matches!(error.kind(), ErrorKind::Busy | ErrorKind::Unavailable)
                    && attempt < retry::MAX_ATTEMPTS
                    && started.elapsed() < WRITE_PATIENCE =>
            {
                if error.kind() == ErrorKind::Unavailable {
                    pool.discard_idle();
                }
                attempt += 1;
                std::thread::sleep(retry::jitter());
            }
            result => return result,
        }
    }
}

fn write_once<T>(
    pool: &Pool,
    what: &str,
    started: Instant,
    body: &mut impl FnMut(&mut Transaction<'_>) -> Result<T>,
) -> Result<T> {
    let mut client = pool.get()?;
    let mut tx = client.transaction().context(what)?;
    let patience = WRITE_PATIENCE
        .saturating_sub(started.elapsed())
        .as_millis()
        .max(1);
    tx.execute(
        "SELECT set_config('lock_timeout', $1, true)",
        &[&format!("{patience}ms")],
    )
    .context(what)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('hermes-state write ' || $1, 0))",
        &[&pool.url().schema()],
    )
    .context("waiting for the store's writer lock")?;
    let value = body(&mut tx)?;
    tx.commit().map_err(|source| {
        // A lost connection — no answer, or the server going away
        // (`57P01` on a fast shutdown) — may have come after the commit
        // was durable: the outcome is unknown, never a retryable failure.
        if crate::error::postgres_error_kind(&source) == ErrorKind::Unavailable {
            PgError::UnknownOutcome {
                context: what.to_owned(),
            }
        } else {
            PgError::postgres(what, source)
        }
    })?;
    Ok(value)
}

/// Runs `body` in one read-only transaction (one snapshot for all its
/// statements). A connection found lost before anything was read is
/// replaced once.
pub(crate) fn read<T>(
    pool: &Pool,
    mut body: impl FnMut(&mut Transaction<'_>) -> Result<T>,
) -> Result<T> {
    match read_once(pool, &mut body) {
        Err(error) if error.kind() == ErrorKind::Unavailable => {
            pool.discard_idle();
            read_once(pool, &mut body)
        }
        result => result,
    }
}

fn read_once<T>(
    pool: &Pool,
    body: &mut impl FnMut(&mut Transaction<'_>) -> Result<T>,
) -> Result<T> {
    let mut client = pool.get()?;
    let mut tx = client
        .build_transaction()
        .read_only(true)
        .start()
        .context("starting a read")?;
    let value = body(&mut tx)?;
    tx.commit().context("ending a read")?;
    Ok(value)
}
