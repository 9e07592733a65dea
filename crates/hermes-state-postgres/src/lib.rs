//! The Hermes Agent session store on PostgreSQL.
//!
//! The same data model as SQLite's `state.db` at schema version 23 (the
//! same tables, column names and order, keys and index names; types per
//! docs/POSTGRES.md), one PostgreSQL schema per store, and the operations
//! of the `hermes-state` facade with the same error kinds and write
//! semantics: one transaction per operation under the store's writer lock
//! (exclusive for whole-store writes, shared with per-session keys for the
//! writes of one session, which commit side by side across hosts),
//! the same retry policy, and a lost COMMIT reported as
//! [`hermes_state_types::ErrorKind::UnknownOutcome`].
//!
//! The client is the sync `postgres` crate, which runs its own internal
//! runtime: call this crate from ordinary threads, not from inside a Tokio
//! runtime (the client panics there).

mod accounting;
mod cleanup;
mod content;
mod conversation_search;
mod coordination;
pub mod copy;
mod cron_runs;
mod delegations;
mod deletes;
mod error;
mod exchange;
pub mod export;
mod handoff;
pub mod health;
pub mod import;
mod lineage;
mod listing;
mod lookups;
mod message_edits;
mod message_reads;
mod messages;
mod migrate;
mod pool;
mod prune;
mod repo_roots;
mod rich_listing;
pub mod rows;
pub mod search;
mod session_updates;
mod sessions;
mod stats;
mod sweeps;
mod telegram_topics;
mod titles;
pub mod tls;
mod transaction;
mod url;

use std::sync::Arc;

pub use error::{
    PgError, Result, ServerProblem, db_words, is_retryable, postgres_error_kind, server_words,
    sqlstate_kind,
};
pub use migrate::{Capabilities, TRIGRAM_INDEX, known_step};
pub use sweeps::{AutoRun, LAST_AUTO_ARCHIVE, LAST_AUTO_PRUNE};
pub use tls::{ConnectionSecurity, RootCerts, SslMode, TlsPlan, TlsSettings, Verification};
pub use transaction::WRITE_PATIENCE;
pub(crate) use transaction::{Subject, WriteScope, WriteTx};
pub use url::{
    DEFAULT_SCHEMA, MAX_POOL_SIZE, OperatorSettings, PASSFILE_VAR, PASSWORD_VAR, StoreUrl,
    validate_schema_name,
};

use crate::error::Context;
use crate::pool::Pool;

/// A source of "now" in Unix seconds (the facade passes its clock).
pub type NowFn = Arc<dyn Fn() -> f64 + Send + Sync>;

/// A handle on one store: a schema in a PostgreSQL database. `Send + Sync`;
/// share it between threads (it holds a small connection pool).
pub struct PgStore {
    pub(crate) pool: Pool,
    read_only: bool,
    capabilities: Capabilities,
    now: NowFn,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", self.pool.url())
            .field("read_only", &self.read_only)
            .field("capabilities", &self.capabilities)
            .finish()
    }
}

impl PgStore {
    /// Opens the store the URL names for reading and writing, creating the
    /// schema and its tables, or upgrading them, under the store's
    /// migration lock.
    ///
    /// Errors: the server cannot be reached ([`hermes_state_types::ErrorKind::Unavailable`]),
    /// a store written by a newer release ([`PgError::SchemaTooNew`]), a
    /// role without the rights to create it (`ReadOnly`).
    pub fn open(url: &StoreUrl) -> Result<PgStore> {
        let mut client = pool::connect(url, false)?;
        let capabilities = migrate::migrate(&mut client, url)?;
        Ok(PgStore::with_pool(
            Pool::new(url.clone(), false),
            false,
            capabilities,
        ))
    }

    /// Whether the schema the URL names exists on the server. Creates
    /// nothing; a caller that is about to create a store notes this first,
    /// so it can take back what it made if its work fails
    /// ([`PgStore::drop_created_store`]).
    pub fn schema_exists(url: &StoreUrl) -> Result<bool> {
        let mut client = pool::connect(url, true)?;
        Ok(client
            .query_opt(
                "SELECT 1 FROM pg_namespace WHERE nspname = $1",
                &[&url.schema()],
            )
            .context("looking for the store's schema")?
            .is_some())
    }

    /// Drops the store's schema and everything in it, if it holds no
    /// session and no message: for a caller that created the store itself
    /// (the schema was missing before, [`PgStore::schema_exists`]) and
    /// whose work then failed, so a failed move leaves nothing behind. A
    /// store someone has written to since is kept; `Ok(false)` says so.
    pub fn drop_created_store(url: &StoreUrl) -> Result<bool> {
        let mut client = pool::connect(url, false)?;
        let mut tx = client.transaction().context("starting the clean-up")?;
        let schema = url.schema();
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('hermes-state migrate ' || $1, 0))",
            &[&schema],
        )
        .context("waiting for the migration lock")?;
        let rows: i64 = tx
            .query_one(
                &format!(
                    "SELECT (SELECT count(*) FROM \"{schema}\".sessions) \
                     + (SELECT count(*) FROM \"{schema}\".messages)"
                ),
                &[],
            )
            .context("checking that the store is still empty")?
            .get(0);
        if rows > 0 {
            return Ok(false);
        }
        tx.batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
            .context("dropping the store's schema")?;
        tx.commit().context("committing the clean-up")?;
        Ok(true)
    }

    /// Opens an existing store read-only: no DDL, every transaction
    /// read-only, writes refused with [`PgError::ReadOnly`]. A missing or
    /// older store is refused; a newer one is read.
    pub fn open_read_only(url: &StoreUrl) -> Result<PgStore> {
        let mut client = pool::connect(url, true)?;
        let capabilities = migrate::check_readable(&mut client, url)?;
        Ok(PgStore::with_pool(
            Pool::new(url.clone(), true),
            true,
            capabilities,
        ))
    }

    fn with_pool(pool: Pool, read_only: bool, capabilities: Capabilities) -> PgStore {
        PgStore {
            pool,
            read_only,
            capabilities,
            now: Arc::new(system_now),
        }
    }

    /// The same handle with another clock (every "now" the store writes).
    pub fn with_clock(mut self, now: NowFn) -> PgStore {
        self.now = now;
        self
    }

    /// Now, by the handle's clock.
    pub fn now(&self) -> f64 {
        (self.now)()
    }

    /// How this handle's connections are secured (TLS, and what was
    /// verified), read on one of them.
    pub fn connection_security(&self) -> Result<ConnectionSecurity> {
        let plan = self.url().tls_plan()?;
        let mut client = self.pool.get()?;
        tls::connection_security(&mut *client, &plan)
    }

    /// The store's URL (its `Display` has no password).
    pub fn url(&self) -> &StoreUrl {
        self.pool.url()
    }

    /// Whether the handle was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// What the server offers beyond the required schema.
    pub fn capabilities(&self) -> Capabilities {
        self.capabilities
    }

    /// Sets a `state_meta` value (`api.md` §12.4), replacing any previous
    /// one; `None` stores NULL. (`SessionDb::set_meta` takes a `&str`; the
    /// `SessionStore` seam passes `Some`.)
    pub fn set_meta(&self, key: &str, value: Option<&str>) -> Result<()> {
        // One upsert of one key: its row lock orders it.
        self.write_in("writing state_meta", &WriteScope::rows(), |tx| {
            tx.execute(
                "INSERT INTO state_meta (key, value) VALUES ($1, $2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&key, &value],
            )
            .context("writing state_meta")?;
            Ok(())
        })
    }

    /// A write that runs alone: the store's writer lock, exclusively
    /// (`transaction` module documentation).
    pub(crate) fn write<T>(
        &self,
        what: &str,
        body: impl FnMut(&mut WriteTx<'_, '_>) -> Result<T>,
    ) -> Result<T> {
        self.write_in(what, &WriteScope::Store, body)
    }

    /// A write under the locks of `scope`: beside other writes when it
    /// names its subjects.
    pub(crate) fn write_in<T>(
        &self,
        what: &str,
        scope: &WriteScope<'_>,
        body: impl FnMut(&mut WriteTx<'_, '_>) -> Result<T>,
    ) -> Result<T> {
        if self.read_only {
            return Err(PgError::ReadOnly(what.to_owned()));
        }
        transaction::write(&self.pool, what, scope, body)
    }

    pub(crate) fn read<T>(
        &self,
        body: impl FnMut(&mut postgres::Transaction<'_>) -> Result<T>,
    ) -> Result<T> {
        transaction::read(&self.pool, body)
    }
}

/// Connects once as a store handle would (TLS by `sslmode`, the password
/// from the URL, `PGPASSWORD` or the password file) and says how the
/// connection is secured; needs no store in the schema.
pub fn probe_connection(url: &StoreUrl) -> Result<ConnectionSecurity> {
    let plan = url.tls_plan()?;
    let mut client = pool::connect(url, true)?;
    tls::connection_security(&mut client, &plan)
}

fn system_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

impl hermes_state_core::store::BackendName for PgStore {
    fn backend_name(&self) -> &'static str {
        "postgres"
    }
}
