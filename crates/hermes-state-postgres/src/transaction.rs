//! The one write path and the one read path of the backend.
//!
//! A write is one transaction that first takes the locks its
//! [`WriteScope`] names, in one statement, always in the same order: the
//! store's writer lock (a transaction-level advisory lock keyed on the
//! schema), then the keys of its subjects sorted by their text.
//!
//! - [`WriteScope::Store`] takes the writer lock **exclusively**: the write
//!   runs alone, as under SQLite's `BEGIN IMMEDIATE`. Everything that reads
//!   or changes several sessions (prune, import, the sweeps, deletes, the
//!   lineage flags, moving a store) runs so.
//! - [`WriteScope::Subjects`] takes the writer lock **shared**, then one
//!   exclusive key per subject (a session, a title): writes of different
//!   sessions commit side by side across hosts, writes of one session one
//!   after another, and a whole-store write waits for them all (and they
//!   for it). A subject-scoped write touches only rows its keys cover —
//!   the session's row and messages, its usage and compression lock — or
//!   runs single statements whose row locks are their serialization.
//!
//! Hosts of an older release take the writer lock exclusively for every
//! write, which still excludes the shared holders: a mixed fleet stays
//! correct, only slower.
//!
//! The lock wait is bounded by `lock_timeout`; a timeout (`55P03`), a
//! serialization failure or a deadlock (`40P01`: keys are taken in one
//! order, but row locks taken later may still cross) runs the whole
//! operation again after the same jittered sleep as the SQLite backend, up
//! to the same number of attempts. A connection lost before COMMIT was sent
//! lost the transaction with it (the server rolls back), so the operation
//! is run again on a new connection — whole, never continued. A connection
//! lost while COMMIT was in flight is [`PgError::UnknownOutcome`]: never
//! reported as success, never run again.
//!
//! A write's body gets a [`WriteTx`]: its transaction, and the statements
//! prepared on its connection for the writes every host runs all the time
//! (the lock statement, an append), parsed and planned once per connection.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hermes_state_core::cancel::Cancel;
use hermes_state_core::{Error as CoreError, Result as CoreResult};

use hermes_state_core::retry;
use hermes_state_types::ErrorKind;
use postgres::types::{ToSql, Type};
use postgres::{Statement, Transaction};

use crate::error::{Context, PgError, Result};
use crate::pool::{Pool, Statements};

/// The most statements kept prepared on one connection; past it the cache
/// starts again (the lock statements differ by their number of keys).
const MAX_PREPARED: usize = 64;

/// A write transaction as a write's body sees it: the transaction (it
/// dereferences to it) and the connection's prepared statements.
pub(crate) struct WriteTx<'a, 't> {
    tx: &'a mut Transaction<'t>,
    statements: &'a mut Statements,
}

impl<'t> std::ops::Deref for WriteTx<'_, 't> {
    type Target = Transaction<'t>;
    fn deref(&self) -> &Transaction<'t> {
        self.tx
    }
}

impl<'t> std::ops::DerefMut for WriteTx<'_, 't> {
    fn deref_mut(&mut self) -> &mut Transaction<'t> {
        self.tx
    }
}

impl WriteTx<'_, '_> {
    /// `sql` prepared on this connection with these parameter types: by
    /// the server once per connection, not at every run. For the
    /// statements every host runs all the time (the locks, an append).
    pub(crate) fn prepared(&mut self, sql: &str, types: &[Type]) -> Result<Statement> {
        prepared(self.tx, self.statements, sql, types)
    }
}

fn prepared(
    tx: &mut Transaction<'_>,
    statements: &mut Statements,
    sql: &str,
    types: &[Type],
) -> Result<Statement> {
    if let Some(statement) = statements.get(sql) {
        return Ok(statement.clone());
    }
    let statement = tx
        .prepare_typed(sql, types)
        .context("preparing a statement")?;
    if statements.len() >= MAX_PREPARED {
        statements.clear();
    }
    statements.insert(sql.to_owned(), statement.clone());
    Ok(statement)
}

/// How long one write may wait for the store's writer lock, over all attempts.
pub const WRITE_PATIENCE: Duration = Duration::from_secs(15);

/// What a write locks before it runs (module documentation).
#[derive(Debug, Clone)]
pub(crate) enum WriteScope<'a> {
    /// The whole store: the writer lock, exclusively.
    Store,
    /// The writer lock shared, then one key per subject.
    Subjects(Vec<Subject<'a>>),
}

impl<'a> WriteScope<'a> {
    /// One session's rows.
    pub(crate) fn session(id: &'a str) -> WriteScope<'a> {
        WriteScope::Subjects(vec![Subject::Session(id)])
    }

    /// The rows of these sessions.
    pub(crate) fn sessions(ids: impl IntoIterator<Item = &'a str>) -> WriteScope<'a> {
        WriteScope::Subjects(ids.into_iter().map(Subject::Session).collect())
    }

    /// Single statements on rows no other write reads: the writer lock
    /// shared and no key (row locks order them).
    pub(crate) fn rows() -> WriteScope<'a> {
        WriteScope::Subjects(Vec::new())
    }

    /// The advisory keys' texts, in the order they are taken: the writer
    /// lock's first, then the subjects' sorted and without repeats.
    fn keys(&self, schema: &str) -> (bool, Vec<String>) {
        let store = format!("hermes-state write {schema}");
        match self {
            WriteScope::Store => (true, vec![store]),
            WriteScope::Subjects(subjects) => {
                let mut keys: Vec<String> = subjects.iter().map(|s| s.key(schema)).collect();
                keys.sort_unstable();
                keys.dedup();
                keys.insert(0, store);
                (false, keys)
            }
        }
    }
}

/// A thing a subject-scoped write serializes on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Subject<'a> {
    /// A session (by id): its row, messages, usage rows, compression lock.
    Session(&'a str),
    /// A title (normalised): who may take it.
    Title(&'a str),
}

impl Subject<'_> {
    /// The key's text; the schema has no space (validated), so the text
    /// after it is the subject's own.
    fn key(&self, schema: &str) -> String {
        match self {
            Subject::Session(id) => format!("hermes-state session {schema} {id}"),
            Subject::Title(title) => format!("hermes-state title {schema} {title}"),
        }
    }
}

/// The one statement that sets the lock wait and takes the locks of a
/// scope: `$1` is the `lock_timeout`, `$2` the writer lock's key text and
/// `$3…` the subjects' keys. A target list is evaluated left to right, so
/// the timeout is set before any wait and the keys are taken in order.
fn lock_statement(exclusive: bool, keys: usize) -> String {
    let mut sql = String::from("SELECT set_config('lock_timeout', $1, true), ");
    sql.push_str(if exclusive {
        "pg_advisory_xact_lock(hashtextextended($2, 0))"
    } else {
        "pg_advisory_xact_lock_shared(hashtextextended($2, 0))"
    });
    for n in 3..keys + 2 {
        sql.push_str(&format!(
            ", pg_advisory_xact_lock(hashtextextended(${n}, 0))"
        ));
    }
    sql
}

/// Runs `body` in one write transaction under the locks of `scope`,
/// with the retry policy described in the module documentation.
pub(crate) fn write<T>(
    pool: &Pool,
    what: &str,
    scope: &WriteScope<'_>,
    mut body: impl FnMut(&mut WriteTx<'_, '_>) -> Result<T>,
) -> Result<T> {
    let started = Instant::now();
    let mut attempt = 1;
    loop {
        match write_once(pool, what, scope, started, &mut body) {
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
    scope: &WriteScope<'_>,
    started: Instant,
    body: &mut impl FnMut(&mut WriteTx<'_, '_>) -> Result<T>,
) -> Result<T> {
    let mut pooled = pool.get()?;
    let (client, statements) = pooled.with_statements();
    let mut tx = client.transaction().context(what)?;
    let patience = WRITE_PATIENCE
        .saturating_sub(started.elapsed())
        .as_millis()
        .max(1);
    let (exclusive, keys) = scope.keys(pool.url().schema());
    let timeout = format!("{patience}ms");
    // Every write runs it: prepared once per connection.
    let types = vec![Type::TEXT; keys.len() + 1];
    let lock = prepared(
        &mut tx,
        statements,
        &lock_statement(exclusive, keys.len()),
        &types,
    )?;
    let params: Vec<&(dyn ToSql + Sync)> = std::iter::once(&timeout)
        .chain(&keys)
        .map(|text| text as &(dyn ToSql + Sync))
        .collect();
    tx.execute(&lock, &params)
        .context("waiting for the store's writer lock")?;
    let value = body(&mut WriteTx {
        tx: &mut tx,
        statements,
    })?;
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

/// [`read`] that stops when `cancel` is raised while it runs: a cancel
/// request is sent to the server for the connection's statement (from a
/// thread of its own: the canceller does not wait for the server), and the
/// connection is closed afterwards instead of going back to the pool. The
/// answer is then [`CoreError::Cancelled`], whatever the statement returned.
pub(crate) fn read_cancellable<T>(
    pool: &Pool,
    cancel: &Cancel,
    mut body: impl FnMut(&mut Transaction<'_>) -> Result<T>,
) -> CoreResult<T> {
    let mut attempt = || -> CoreResult<T> {
        let mut client = pool.get()?;
        let token = client.cancel_token();
        let url = pool.url().clone();
        let sent = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&sent);
        let hook = cancel.on_cancel(move || {
            flag.store(true, Ordering::SeqCst);
            let (url, token) = (url.clone(), token.clone());
            // A failed request leaves the statement to finish; its answer
            // is dropped all the same.
            std::thread::spawn(move || drop(crate::pool::send_cancel(&url, &token)));
        })?;
        let outcome = read_on(&mut client, &mut body);
        drop(hook);
        if sent.load(Ordering::SeqCst) {
            client.discard();
        }
        if cancel.is_cancelled() {
            return Err(CoreError::Cancelled);
        }
        outcome.map_err(CoreError::from)
    };
    match attempt() {
        Err(error) if error.kind() == ErrorKind::Unavailable => {
            pool.discard_idle();
            attempt()
        }
        result => result,
    }
}

fn read_once<T>(
    pool: &Pool,
    body: &mut impl FnMut(&mut Transaction<'_>) -> Result<T>,
) -> Result<T> {
    let mut client = pool.get()?;
    read_on(&mut client, body)
}

/// `body` in one read-only transaction on `client`.
fn read_on<T>(
    client: &mut postgres::Client,
    body: &mut impl FnMut(&mut Transaction<'_>) -> Result<T>,
) -> Result<T> {
    let mut tx = client
        .build_transaction()
        .read_only(true)
        .start()
        .context("starting a read")?;
    let value = body(&mut tx)?;
    tx.commit().context("ending a read")?;
    Ok(value)
}
