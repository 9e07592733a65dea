//! Group commit: the writers of one handle share transactions.
//!
//! Every user of the writable connection takes a ticket and is served in
//! ticket order (first come, first served). A writer served while no
//! transaction is open leads a batch: it begins `BEGIN IMMEDIATE`, runs its
//! operation in a savepoint, then lets the writers queued behind it run
//! theirs in the same transaction, each in its own savepoint, on their own
//! threads; when no one is queued (or the batch reached [`MAX_BATCH_OPS`]
//! operations or [`MAX_BATCH_TIME`]) it commits once and tells every member
//! the outcome. So `n` writers arriving while a commit is in flight pay one
//! fsync, not `n`, and:
//!
//! - nothing is acknowledged before its commit returned (a member waits for
//!   the leader's `COMMIT`);
//! - an operation that fails is rolled back to its savepoint and gets its own
//!   error at once; the others go on and commit;
//! - when the commit fails, or SQLite rolled the whole transaction back under
//!   an operation, every member gets the error (kind `Busy` when it was a lock
//!   error, so the write path's retry policy runs each of them again);
//! - a writer waits for at most the batch in flight when it arrived (unless
//!   more than [`MAX_BATCH_OPS`] were queued ahead of it), and the write lock
//!   is held for a bounded time;
//! - a leader takes its process's turn among the store's writers before
//!   `BEGIN IMMEDIATE` and keeps it until the commit returned
//!   ([`hermes_state_sqlite::writer_queue`]), so other processes (and other
//!   handles) get their turn even when this one writes without a pause.
//!
//! Users that need the connection alone (maintenance in its own
//! transactions, the open, closing, reads in rollback-journal mode) take a
//! ticket too and are served with no transaction open ([`SessionDb::exclusive`]).

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hermes_state_sqlite::writer_queue::{Turn as WriterTurn, WriterQueue};
use hermes_state_sqlite::{SqliteError, transaction};
use hermes_state_types::ErrorKind;
use rusqlite::Connection;

use crate::db::{Connections, SessionDb};
use crate::error::{Error, Result};

/// At most this many operations share one transaction.
pub const MAX_BATCH_OPS: usize = 64;
/// A batch stops taking operations this long after it began, so that the
/// write lock is never held long enough to starve other processes (their
/// busy timeout is 1 s).
pub const MAX_BATCH_TIME: Duration = Duration::from_millis(20);

/// Who may use the writable connection now, and the transaction in flight.
#[derive(Debug, Default)]
pub(crate) struct WriteGate {
    state: Mutex<GateState>,
    turn: Condvar,
}

/// What the write path of a handle did so far ([`SessionDb::write_batches`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WriteBatches {
    /// Write transactions committed.
    pub transactions: u64,
    /// Operations those transactions carried (each in its own savepoint).
    pub operations: u64,
    /// The most operations one transaction carried.
    pub largest: u64,
    /// Operations that failed in their savepoint while their batch went on.
    pub failed_in_batch: u64,
    /// Transactions that committed at least one operation while another
    /// operation of the same batch failed alone.
    pub mixed: u64,
    /// Users of the writable connection waiting for their turn right now.
    pub queued: u64,
}

#[derive(Debug, Default)]
struct GateState {
    next_ticket: u64,
    /// The ticket whose turn it is.
    serving: u64,
    batch: Option<OpenBatch>,
    next_batch: u64,
    /// Outcomes of finished batches not yet read by all their members.
    settled: Vec<Settled>,
    /// The counters of [`WriteBatches`] (`queued` is computed).
    stats: WriteBatches,
}

#[derive(Debug)]
struct OpenBatch {
    id: u64,
    /// When the transaction began (took the write lock).
    started: Instant,
    /// Operations that succeeded in the transaction (savepoint released).
    members: usize,
    /// Whether queued writers may still join.
    accepting: bool,
    /// A member is running its operation on the connection now.
    running: bool,
    /// SQLite rolled the transaction back under an operation.
    lost: bool,
    /// Operations rolled back to their savepoint, the batch going on.
    failed: usize,
}

#[derive(Debug)]
struct Settled {
    batch: u64,
    unread: usize,
    outcome: Outcome,
}

/// How a batch ended, for its members.
#[derive(Debug, Clone)]
enum Outcome {
    Committed,
    /// The transaction is gone (the commit failed, or SQLite rolled it back).
    Failed {
        context: String,
        code: rusqlite::ffi::Error,
        message: Option<String>,
    },
}

impl Outcome {
    fn failed(error: &Error) -> Outcome {
        let (code, message) = match error.downcast_backend::<SqliteError>() {
            Some(SqliteError {
                source: rusqlite::Error::SqliteFailure(code, message),
                ..
            }) => (*code, message.clone()),
            _ => (
                rusqlite::ffi::Error::new(if error.kind() == ErrorKind::Busy {
                    rusqlite::ffi::SQLITE_BUSY
                } else {
                    rusqlite::ffi::SQLITE_ERROR
                }),
                Some(error.to_string()),
            ),
        };
        Outcome::Failed {
            context: "committing a shared write transaction".to_owned(),
            code,
            message,
        }
    }

    /// The transaction was rolled back by SQLite under another member's
    /// operation: a lock-kind error, so the member's write is run again.
    fn rolled_back() -> Outcome {
        Outcome::Failed {
            context: ROLLED_BACK.to_owned(),
            code: rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            message: Some(ROLLED_BACK_WHY.to_owned()),
        }
    }

    fn into_result<T>(self, own: T) -> Result<T> {
        match self {
            Outcome::Committed => Ok(own),
            Outcome::Failed {
                context,
                code,
                message,
            } => Err(crate::error::sqlite(
                context,
                rusqlite::Error::SqliteFailure(code, message),
            )),
        }
    }
}

/// The error of a member whose work SQLite rolled back with the whole
/// transaction (under another operation): a lock-kind error, so the write
/// path runs the member's write again.
fn rolled_back_error() -> Error {
    crate::error::sqlite(
        ROLLED_BACK,
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some(ROLLED_BACK_WHY.to_owned()),
        ),
    )
}

const ROLLED_BACK: &str = "a shared write transaction was rolled back";
const ROLLED_BACK_WHY: &str = "rolled back under another operation of the batch";

/// The turn of an exclusive user: passed on when dropped (also on a panic).
struct Turn<'g>(&'g WriteGate);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let state = self.0.lock();
        self.0.pass_turn(state);
    }
}

impl WriteGate {
    fn lock(&self) -> MutexGuard<'_, GateState> {
        // Plain bookkeeping, consistent between statements: a panic elsewhere
        // does not leave it half-updated.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait<'g>(&self, guard: MutexGuard<'g, GateState>) -> MutexGuard<'g, GateState> {
        self.turn
            .wait(guard)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait_at_most<'g>(
        &self,
        guard: MutexGuard<'g, GateState>,
        timeout: Duration,
    ) -> MutexGuard<'g, GateState> {
        match self.turn.wait_timeout(guard, timeout) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        }
    }

    /// Takes a ticket and waits until it is served.
    fn take_turn(&self) -> MutexGuard<'_, GateState> {
        let mut state = self.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        while state.serving != ticket {
            state = self.wait(state);
        }
        state
    }

    /// Serves the next ticket.
    fn pass_turn(&self, mut state: MutexGuard<'_, GateState>) {
        state.serving += 1;
        drop(state);
        self.turn.notify_all();
    }

    /// The batch in flight; only its leader ends it, so it is there while
    /// the leader or a member looks.
    fn batch(state: &mut GateState) -> Result<&mut OpenBatch> {
        state.batch.as_mut().ok_or(Error::Closed)
    }
}

impl SessionDb {
    /// What the write path did so far: transactions committed and the
    /// operations they carried (group commit shares one transaction between
    /// writers that arrive while a commit is in flight), and how many users
    /// of the writable connection are waiting now. For monitoring and benches.
    pub fn write_batches(&self) -> WriteBatches {
        let state = self.gate.lock();
        WriteBatches {
            queued: state.next_ticket.saturating_sub(state.serving + 1),
            ..state.stats
        }
    }

    /// This handle's turn among the writers of the store
    /// ([`hermes_state_sqlite::writer_queue`]), taken through lock files
    /// beside it, opened (created when missing) at the first write
    /// transaction. `None` (the write goes on without a turn) when they cannot
    /// be opened, and on a rollback-journal store: that mode is the fallback
    /// for file systems where WAL does not work, where `flock` may not either,
    /// and its folder is left as it was (no file beside it).
    fn writer_turn(&self) -> Option<WriterTurn<'_>> {
        if !self.writes_in_wal() {
            return None;
        }
        self.writer_queue
            .get_or_init(|| WriterQueue::beside(self.path()).ok())
            .as_ref()
            .map(WriterQueue::take_turn)
    }

    /// Runs `work` on the connections alone: after every batch queued before
    /// it, with no transaction open, before the writers queued after it.
    pub(crate) fn exclusive<T>(&self, work: impl FnOnce(&mut Connections) -> T) -> T {
        let gate = &self.gate;
        let mut state = gate.take_turn();
        while let Some(batch) = state.batch.as_mut() {
            // Close the batch in flight; its leader commits it.
            batch.accepting = false;
            gate.turn.notify_all();
            state = gate.wait(state);
        }
        drop(state);
        let _turn = Turn(gate);
        let mut conns = self.connections();
        work(&mut conns)
    }

    /// One attempt of a write: `op` in its own savepoint of a shared
    /// transaction, acknowledged once that transaction committed.
    pub(crate) fn write_in_batch<T>(
        &self,
        op: &mut impl FnMut(&Connection) -> Result<T>,
    ) -> Result<T> {
        let gate = &self.gate;
        let mut state = gate.take_turn();
        loop {
            match state.batch.as_mut() {
                None => return self.lead_batch(state, op),
                Some(batch) if batch.accepting => return self.join_batch(state, op),
                // Being committed: the next batch is ours to lead.
                Some(_) => state = gate.wait(state),
            }
        }
    }

    fn lead_batch<T>(
        &self,
        mut state: MutexGuard<'_, GateState>,
        op: &mut impl FnMut(&Connection) -> Result<T>,
    ) -> Result<T> {
        let gate = &self.gate;
        if self.is_closed() {
            gate.pass_turn(state);
            return Err(Error::Closed);
        }
        let id = state.next_batch;
        state.next_batch += 1;
        state.batch = Some(OpenBatch {
            id,
            started: Instant::now(),
            members: 0,
            accepting: true,
            running: true,
            lost: false,
            failed: 0,
        });
        drop(state);

        let mut conns = self.connections();
        let mut turn = None;
        let begun = self.writer(&mut conns).and_then(|conn| {
            // This handle's turn among the store's writers, held until the
            // commit returned.
            turn = self.writer_turn();
            transaction::begin_immediate(conn)?;
            Ok(conn)
        });
        // The write lock is held from here: the batch's time starts now.
        let began = Instant::now();
        let (own, panic) = match begun {
            Ok(conn) => run_in_savepoint(conn, op),
            Err(error) => {
                drop(conns);
                let mut state = gate.lock();
                state.batch = None;
                gate.pass_turn(state);
                return Err(error);
            }
        };
        let lost = conns.writer.as_ref().is_none_or(Connection::is_autocommit);
        if lost || panic.is_some() {
            // Nobody joined yet: end the batch here.
            if let Some(conn) = conns.writer.as_ref()
                && !conn.is_autocommit()
            {
                let _ = conn.execute_batch("ROLLBACK");
            }
            drop(conns);
            let mut state = gate.lock();
            state.batch = None;
            gate.pass_turn(state);
            if let Some(payload) = panic {
                resume_unwind(payload);
            }
            return own.and_then(|_| Err(rolled_back_error()));
        }
        drop(conns);

        // Let the queued writers join, one at a time, in ticket order.
        let mut state = gate.lock();
        {
            let batch = WriteGate::batch(&mut state)?;
            batch.started = began;
            batch.running = false;
            batch.members += usize::from(own.is_ok());
            batch.failed += usize::from(own.is_err());
        }
        state.serving += 1;
        gate.turn.notify_all();
        let (members, failed, lost) = loop {
            let queued = state.next_ticket > state.serving;
            let batch = WriteGate::batch(&mut state)?;
            let elapsed = batch.started.elapsed();
            if batch.running {
                state = gate.wait(state);
                continue;
            }
            if !batch.accepting
                || batch.lost
                || !queued
                || batch.members >= MAX_BATCH_OPS
                || elapsed >= MAX_BATCH_TIME
            {
                batch.accepting = false;
                break (batch.members, batch.failed, batch.lost);
            }
            state = gate.wait_at_most(state, MAX_BATCH_TIME - elapsed);
        };
        drop(state);

        // Commit once for everyone.
        let conns = self.connections();
        let outcome = match conns.writer.as_ref() {
            _ if lost => Outcome::rolled_back(),
            Some(conn) => match transaction::commit(conn) {
                Ok(()) => Outcome::Committed,
                Err(error) => Outcome::failed(&error.into()),
            },
            None => Outcome::failed(&Error::Closed),
        };

        // Acknowledge the members now; the batch stays (closed) until the
        // periodic maintenance below is done on the connection.
        let mut state = gate.lock();
        if matches!(outcome, Outcome::Committed) {
            let stats = &mut state.stats;
            stats.transactions += 1;
            stats.operations += members as u64;
            stats.largest = stats.largest.max(members as u64);
            stats.failed_in_batch += failed as u64;
            stats.mixed += u64::from(members > 0 && failed > 0);
        }
        let followers = members - usize::from(own.is_ok());
        if followers > 0 {
            state.settled.push(Settled {
                batch: id,
                unread: followers,
                outcome: outcome.clone(),
            });
        }
        drop(state);
        gate.turn.notify_all();

        if let (Outcome::Committed, Some(conn)) = (&outcome, conns.writer.as_ref()) {
            // Still in the turn: the periodic FTS merge writes outside the
            // transaction, and without the turn it would wait for the write
            // lock behind the other processes' writers (up to the 1 s busy
            // timeout, measured).
            self.count_writes(conn, members as u64);
        }
        drop(turn);
        drop(conns);
        let mut state = gate.lock();
        state.batch = None;
        drop(state);
        gate.turn.notify_all();
        match own {
            Ok(value) => outcome.into_result(value),
            Err(error) => Err(error),
        }
    }

    fn join_batch<T>(
        &self,
        mut state: MutexGuard<'_, GateState>,
        op: &mut impl FnMut(&Connection) -> Result<T>,
    ) -> Result<T> {
        let gate = &self.gate;
        let id = {
            let batch = WriteGate::batch(&mut state)?;
            batch.running = true;
            batch.id
        };
        drop(state);

        let conns = self.connections();
        let (own, panic, lost) = match conns.writer.as_ref() {
            Some(conn) => {
                let (own, panic) = run_in_savepoint(conn, op);
                (own, panic, conn.is_autocommit())
            }
            None => (Err(Error::Closed), None, true),
        };
        drop(conns);

        let mut state = gate.lock();
        {
            let batch = WriteGate::batch(&mut state)?;
            batch.running = false;
            if lost {
                batch.lost = true;
                batch.accepting = false;
            } else if own.is_ok() {
                batch.members += 1;
            } else {
                batch.failed += 1;
            }
        }
        state.serving += 1;
        gate.turn.notify_all();
        if let Some(payload) = panic {
            drop(state);
            resume_unwind(payload);
        }
        let value = match own {
            // Rolled back to its savepoint: nothing of it is in the transaction.
            Err(error) => return Err(error),
            Ok(_) if lost => return Err(rolled_back_error()),
            Ok(value) => value,
        };
        // Acknowledged only once the leader's commit returned.
        loop {
            if let Some(at) = state.settled.iter().position(|s| s.batch == id) {
                let settled = &mut state.settled[at];
                settled.unread -= 1;
                let outcome = if settled.unread == 0 {
                    state.settled.swap_remove(at).outcome
                } else {
                    settled.outcome.clone()
                };
                return outcome.into_result(value);
            }
            state = gate.wait(state);
        }
    }
}

/// Runs `op` in a savepoint of the open transaction; a panic in it rolls the
/// savepoint back and is handed to the caller to resume once the batch's
/// bookkeeping is done.
fn run_in_savepoint<T>(
    conn: &Connection,
    op: &mut impl FnMut(&Connection) -> Result<T>,
) -> (Result<T>, Option<Box<dyn std::any::Any + Send>>) {
    let mut panic = None;
    let result = transaction::savepoint(conn, |conn| {
        match catch_unwind(AssertUnwindSafe(|| op(conn))) {
            Ok(result) => result,
            Err(payload) => {
                panic = Some(payload);
                Err(Error::InvalidInput(
                    "the write operation panicked".to_owned(),
                ))
            }
        }
    });
    (result, panic)
}
