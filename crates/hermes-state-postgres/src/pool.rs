//! A small pool of client connections, each set up for one store's schema.
//!
//! Four idle connections are kept (the size the community's designs use);
//! more are opened when more threads ask at once and closed when returned
//! beyond that. A connection the server closed is never handed out again.

use std::sync::Mutex;

use postgres::{Client, NoTls};

use crate::error::{Context, PgError, Result};
use crate::tls::SslMode;
use crate::url::StoreUrl;

/// Idle connections kept for reuse.
pub const MAX_IDLE: usize = 4;

/// Connections to one store.
pub(crate) struct Pool {
    url: StoreUrl,
    read_only: bool,
    idle: Mutex<Vec<Client>>,
}

impl Pool {
    pub(crate) fn new(url: StoreUrl, read_only: bool) -> Pool {
        Pool {
            url,
            read_only,
            idle: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn url(&self) -> &StoreUrl {
        &self.url
    }

    /// A connection: an idle one that is still open, else a new one.
    pub(crate) fn get(&self) -> Result<Pooled<'_>> {
        let reused = {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            std::iter::from_fn(|| idle.pop()).find(|client| !client.is_closed())
        };
        let client = match reused {
            Some(client) => client,
            None => connect(&self.url, self.read_only)?,
        };
        Ok(Pooled {
            pool: self,
            client: Some(client),
        })
    }

    /// Closes every idle connection: after one was found lost (e.g. the
    /// server restarted), the others opened before are suspect too.
    pub(crate) fn discard_idle(&self) {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    fn put_back(&self, client: Client) {
        if client.is_closed() {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(client);
        }
    }
}

/// Opens one connection with the store's settings: TLS as `sslmode` says
/// (`crate::tls`), `search_path` to the store's schema (then `pg_catalog`;
/// extension objects are named with their schema), and read-only
/// transactions for a read-only handle.
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
    if read_only {
        setup.push_str("SET default_transaction_read_only = on;");
    }
    client
        .batch_execute(&setup)
        .context("setting up the connection")?;
    Ok(client)
}

/// A connection on loan; it goes back to the pool when dropped.
pub(crate) struct Pooled<'a> {
    pool: &'a Pool,
    client: Option<Client>,
}

impl std::ops::Deref for Pooled<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.client.as_ref().expect("present until dropped")
    }
}

impl std::ops::DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.client.as_mut().expect("present until dropped")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            self.pool.put_back(client);
        }
    }
}
