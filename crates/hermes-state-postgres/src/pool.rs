//! A small pool of client connections, each set up for one store's schema.
//!
//! Without `pool_size` in the URL, four idle connections are kept (the size
//! the community's designs use); more are opened when more threads ask at
//! once and closed when returned beyond that. With `pool_size=N`, at most N
//! are open at once (idle and on loan) and N are kept: a thread that asks
//! while all N are on loan waits for one to come back, up to
//! [`WRITE_PATIENCE`], then gets [`PgError::PoolExhausted`] (kind `Busy`).
//! A connection the server closed is never handed out again.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

use postgres::{Client, NoTls, Statement};

use crate::error::{Context, PgError, Result};
use crate::tls::SslMode;
use crate::transaction::WRITE_PATIENCE;
use crate::url::StoreUrl;

/// Idle connections kept for reuse.
pub const MAX_IDLE: usize = 4;

/// Connections to one store.
pub(crate) struct Pool {
    url: StoreUrl,
    read_only: bool,
    /// `pool_size`: the most connections open at once, if limited.
    limit: Option<usize>,
    state: Mutex<State>,
    /// Signalled whenever a connection comes back (or a slot is freed).
    returned: Condvar,
}

/// Statements prepared on one connection, by their text: the server
/// parses and plans them once, not at every write (`WriteTx::prepared`).
pub(crate) type Statements = HashMap<String, Statement>;

/// A connection and the statements prepared on it.
struct Conn {
    client: Client,
    statements: Statements,
}

#[derive(Default)]
struct State {
    idle: Vec<Conn>,
    /// Connections on loan, and slots taken by connections being opened.
    loaned: usize,
}

impl Pool {
    pub(crate) fn new(url: StoreUrl, read_only: bool) -> Pool {
        let limit = url
            .settings()
            .pool_size
            .and_then(|n| usize::try_from(n).ok());
        Pool {
            url,
            read_only,
            limit,
            state: Mutex::new(State::default()),
            returned: Condvar::new(),
        }
    }

    pub(crate) fn url(&self) -> &StoreUrl {
        &self.url
    }

    /// A connection: an idle one that is still open, else a new one —
    /// once the pool has room for it (`pool_size`).
    pub(crate) fn get(&self) -> Result<Pooled<'_>> {
        let started = Instant::now();
        let mut state = self.state();
        loop {
            if let Some(conn) =
                std::iter::from_fn(|| state.idle.pop()).find(|conn| !conn.client.is_closed())
            {
                state.loaned += 1;
                return Ok(Pooled {
                    pool: self,
                    conn: Some(conn),
                });
            }
            if self.limit.is_none_or(|limit| state.loaned < limit) {
                break;
            }
            let Some(left) = WRITE_PATIENCE.checked_sub(started.elapsed()) else {
                return Err(PgError::PoolExhausted {
                    size: state.loaned,
                    waited: started.elapsed(),
                });
            };
            state = self
                .returned
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        // The slot is taken while connecting, outside the lock.
        state.loaned += 1;
        drop(state);
        match connect(&self.url, self.read_only) {
            Ok(client) => Ok(Pooled {
                pool: self,
                conn: Some(Conn {
                    client,
                    statements: Statements::new(),
                }),
            }),
            Err(error) => {
                self.state().loaned -= 1;
                self.returned.notify_one();
                Err(error)
            }
        }
    }

    /// Closes every idle connection: after one was found lost (e.g. the
    /// server restarted), the others opened before are suspect too.
    pub(crate) fn discard_idle(&self) {
        self.state().idle.clear();
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn put_back(&self, conn: Conn) {
        let mut state = self.state();
        state.loaned -= 1;
        if !conn.client.is_closed() && state.idle.len() < self.limit.unwrap_or(MAX_IDLE) {
            state.idle.push(conn);
        }
        drop(state);
        self.returned.notify_one();
    }
}

/// Opens one connection with the store's settings: TLS as `sslmode` says
/// (`crate::tls`), `search_path` to the store's schema (then `pg_catalog`;
/// extension objects are named with their schema), the URL's
/// `statement_timeout`, read-only transactions for a read-only handle, and
/// JIT off where nobody set it.
pub(crate) fn connect(url: &StoreUrl, read_only: bool) -> Result<Client> {
    let mut config = url.client_config();
    if config.get_application_name().is_none() {
        config.application_name("hermes-state");
    }
    let plan = url.tls_plan()?;
    let sslmode = plan.mode.as_str();
    let connected = if plan.mode == SslMode::Disable || url.over_sockets_only() {
        config.ssl_mode(postgres::config::SslMode::Disable);
        config.connect(NoTls)
    } else {
        config.ssl_mode(plan.client_mode());
        config.connect(plan.connector()?)
    };
    let mut client = connected.map_err(|source| PgError::Connect { sslmode, source })?;
    // The schema name was validated (`[a-z_][a-z0-9_]*`), so quoting it is enough.
    let mut setup = format!("SET search_path TO \"{}\", pg_catalog;", url.schema());
    if let Some(timeout) = url.settings().statement_timeout {
        setup.push_str(&format!(
            "SET statement_timeout = '{}ms';",
            timeout.as_millis()
        ));
    }
    if read_only {
        setup.push_str("SET default_transaction_read_only = on;");
    }
    // JIT compilation off unless someone chose it (the server's file, the
    // role, the database, the URL's `options`): the store's statements are
    // short, and a plan that crosses `jit_above_cost` pays the compiling on
    // every run — a word in 10 % of 100k messages took 72–198 ms compiled
    // against 20 ms not, and 307 ms once past the optimising threshold.
    // At 1M messages that search's plan already costs 99,826 of the 100,000.
    setup.push_str(
        "SELECT set_config('jit', 'off', false) FROM pg_settings \
         WHERE name = 'jit' AND source = 'default';",
    );
    client
        .batch_execute(&setup)
        .context("setting up the connection")?;
    Ok(client)
}

/// Asks the server to cancel what the connection of `token` runs (a
/// connection of its own, secured as [`connect`] secures the store's).
pub(crate) fn send_cancel(url: &StoreUrl, token: &postgres::CancelToken) -> Result<()> {
    let plan = url.tls_plan()?;
    let sent = if plan.mode == SslMode::Disable || url.over_sockets_only() {
        token.cancel_query(NoTls)
    } else {
        token.cancel_query(plan.connector()?)
    };
    sent.context("sending a cancel request")
}

/// A connection on loan; it goes back to the pool when dropped.
pub(crate) struct Pooled<'a> {
    pool: &'a Pool,
    conn: Option<Conn>,
}

impl Pooled<'_> {
    /// Closes the connection instead of putting it back: after a cancel
    /// request was sent for it, which the server may still deliver to the
    /// next statement a reused connection would run.
    pub(crate) fn discard(mut self) {
        if let Some(conn) = self.conn.take() {
            drop(conn);
            let mut state = self.pool.state();
            state.loaned -= 1;
            drop(state);
            self.pool.returned.notify_one();
        }
    }

    /// The client and the statements prepared on it, borrowed together.
    pub(crate) fn with_statements(&mut self) -> (&mut Client, &mut Statements) {
        let conn = self.conn.as_mut().expect("present until dropped");
        (&mut conn.client, &mut conn.statements)
    }
}

impl std::ops::Deref for Pooled<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.conn.as_ref().expect("present until dropped").client
    }
}

impl std::ops::DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        &mut self.conn.as_mut().expect("present until dropped").client
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.put_back(conn);
        }
    }
}
