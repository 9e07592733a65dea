//! The handle's read connections: a small pool of read-only (`mode=ro`)
//! connections, so that reads on several threads run at once and never wait
//! for the write path (in WAL mode a reader neither blocks the writer nor
//! waits for it).
//!
//! Each connection keeps its own read adaptation (the `compat` TEMP views
//! are per connection, and so is the schema cookie they were made for).

use std::sync::{Condvar, Mutex, MutexGuard};

use rusqlite::Connection;

use crate::error::{Error, Result};

/// At most this many read connections per handle: enough for a gateway's
/// concurrent searches, few enough that their page caches stay small.
pub const MAX_READERS: usize = 4;

/// One pooled read connection and the schema cookie its views were made for.
#[derive(Debug)]
pub(crate) struct PooledReader {
    pub(crate) conn: Connection,
    /// The schema cookie `compat::adapt` last ran for on this connection (-1: never).
    pub(crate) adapted_cookie: i64,
    generation: u64,
}

#[derive(Debug, Default)]
struct PoolState {
    idle: Vec<PooledReader>,
    /// Connections open: idle plus lent out.
    open: usize,
    /// Bumped by [`ReaderPool::close_all`]: connections of an older generation
    /// are closed when they come back.
    generation: u64,
    /// New reads wait: the connections are being closed (a repair).
    paused: bool,
    /// The handle is closed: reads fail with [`Error::Closed`].
    shut: bool,
}

/// The pool: idle connections, opened lazily up to [`MAX_READERS`].
#[derive(Debug, Default)]
pub(crate) struct ReaderPool {
    state: Mutex<PoolState>,
    returned: Condvar,
}

/// A connection lent out; it goes back to the pool when dropped (also on a
/// panic in the read).
struct Lease<'p> {
    pool: &'p ReaderPool,
    reader: Option<PooledReader>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(reader) = self.reader.take() {
            self.pool.check_in(reader);
        }
    }
}

impl ReaderPool {
    fn lock(&self) -> MutexGuard<'_, PoolState> {
        // The state is plain bookkeeping, consistent between statements.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait<'g>(&self, guard: MutexGuard<'g, PoolState>) -> MutexGuard<'g, PoolState> {
        self.returned
            .wait(guard)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Puts a connection the handle already opened (the open's classifier)
    /// into the pool.
    pub(crate) fn add(&self, conn: Connection) {
        let mut state = self.lock();
        state.open += 1;
        let generation = state.generation;
        state.idle.push(PooledReader {
            conn,
            adapted_cookie: -1,
            generation,
        });
        drop(state);
        self.returned.notify_one();
    }

    /// Runs `read` on an idle connection, opening one with `open` when none
    /// is idle and fewer than [`MAX_READERS`] are open, else waiting for one.
    pub(crate) fn with_reader<T>(
        &self,
        open: impl FnOnce() -> Result<Connection>,
        read: impl FnOnce(&mut PooledReader) -> Result<T>,
    ) -> Result<T> {
        let mut lease = Lease {
            pool: self,
            reader: Some(self.check_out(open)?),
        };
        match lease.reader.as_mut() {
            Some(reader) => read(reader),
            None => Err(Error::Closed),
        }
    }

    fn check_out(&self, open: impl FnOnce() -> Result<Connection>) -> Result<PooledReader> {
        let mut state = self.lock();
        loop {
            if state.shut {
                return Err(Error::Closed);
            }
            if !state.paused {
                if let Some(reader) = state.idle.pop() {
                    return Ok(reader);
                }
                if state.open < MAX_READERS {
                    state.open += 1;
                    let generation = state.generation;
                    drop(state);
                    return match open() {
                        Ok(conn) => Ok(PooledReader {
                            conn,
                            adapted_cookie: -1,
                            generation,
                        }),
                        Err(error) => {
                            self.lock().open -= 1;
                            self.returned.notify_all();
                            Err(error)
                        }
                    };
                }
            }
            state = self.wait(state);
        }
    }

    fn check_in(&self, reader: PooledReader) {
        // A read that unwound inside its read transaction (or whose `COMMIT`
        // failed) left it open: pooled, the connection would answer every
        // later read from that old snapshot, so it is closed instead (which
        // ends the transaction).
        let reusable = reader.conn.is_autocommit();
        let mut state = self.lock();
        if reusable && reader.generation == state.generation && !state.paused && !state.shut {
            state.idle.push(reader);
        } else {
            state.open -= 1;
            drop(reader);
        }
        drop(state);
        self.returned.notify_all();
    }

    /// Closes every connection, waiting for those lent out to come back;
    /// reads wait until [`ReaderPool::resume`] (or fail with
    /// [`Error::Closed`] from now on when `shut`).
    pub(crate) fn close_all(&self, shut: bool) -> Result<()> {
        let mut state = self.lock();
        state.paused = true;
        state.shut |= shut;
        state.generation += 1;
        let idle = std::mem::take(&mut state.idle);
        state.open -= idle.len();
        while state.open > 0 {
            state = self.wait(state);
        }
        drop(state);
        self.returned.notify_all();
        let mut outcome = Ok(());
        for reader in idle {
            if let Err((_, source)) = reader.conn.close() {
                outcome = Err(crate::error::sqlite("closing a read connection", source));
            }
        }
        outcome
    }

    /// Lets reads open connections again after [`ReaderPool::close_all`],
    /// starting with `conn` when the caller has one.
    pub(crate) fn resume(&self, conn: Option<Connection>) {
        let mut state = self.lock();
        state.paused = false;
        drop(state);
        if let Some(conn) = conn {
            self.add(conn);
        }
        self.returned.notify_all();
    }
}
