//! The coordination tables (`api.md` §12): compression locks, the gateway
//! routing map. Like the SQLite backend's, none of them references
//! `sessions`.
//!
//! Compression locks are leases reclaimed on `expires_at` only, and every
//! lease time is the server's clock (`clock_timestamp()`), so hosts with
//! skewed clocks agree on expiry. SQLite's other reclaim — the holder names a
//! local process that no longer exists — is not done: holder ids carry no
//! host, and a process id on one host says nothing about another.

use std::collections::BTreeMap;

use postgres::Transaction;

use crate::error::{Context, Result};
use crate::{PgStore, WriteScope};

const SERVER_NOW: &str = "SELECT extract(epoch FROM clock_timestamp())::float8";

const UPSERT_ROUTE: &str = "INSERT INTO gateway_routing (scope, session_key, entry_json, updated_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (scope, session_key) DO UPDATE SET entry_json = excluded.entry_json, updated_at = excluded.updated_at";

fn server_now(tx: &mut Transaction<'_>) -> Result<f64> {
    Ok(tx
        .query_one(SERVER_NOW, &[])
        .context("reading the server clock")?
        .get(0))
}

impl PgStore {
    /// Tries to take the compression lock of a session for `holder`, for
    /// `ttl_seconds` (`api.md` §12.1): one write transaction removes an
    /// expired lock (`expires_at` before the server's now), then inserts
    /// this one unless a lock remains. Returns whether `holder` holds the
    /// lock afterwards; re-acquiring does not extend it. A lock whose holder
    /// names a dead process is *not* reclaimed early (see the module
    /// documentation). Never fails: an empty id, a read-only handle or any
    /// error gives `false`.
    pub fn try_acquire_compression_lock(
        &self,
        session_id: &str,
        holder: &str,
        ttl_seconds: f64,
    ) -> bool {
        if session_id.is_empty() {
            return false;
        }
        self.write_in(
            "acquiring a compression lock",
            &WriteScope::session(session_id),
            |tx| {
                const WHAT: &str = "acquiring a compression lock";
                let now = server_now(tx)?;
                tx.execute(
                    "DELETE FROM compression_locks WHERE session_id = $1 AND expires_at < $2",
                    &[&session_id, &now],
                )
                .context(WHAT)?;
                tx.execute(
                    "INSERT INTO compression_locks (session_id, holder, acquired_at, expires_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (session_id) DO NOTHING",
                    &[&session_id, &holder, &now, &(now + ttl_seconds)],
                )
                .context(WHAT)?;
                let current: Option<String> = tx
                    .query_opt(
                        "SELECT holder FROM compression_locks WHERE session_id = $1",
                        &[&session_id],
                    )
                    .context(WHAT)?
                    .map(|row| row.get(0));
                Ok(current.as_deref() == Some(holder))
            },
        )
        .unwrap_or(false)
    }

    /// Extends a lock `holder` still holds to the server's now +
    /// `ttl_seconds`; whether it did. Never fails (errors give `false`).
    pub fn refresh_compression_lock(
        &self,
        session_id: &str,
        holder: &str,
        ttl_seconds: f64,
    ) -> bool {
        if session_id.is_empty() || holder.is_empty() {
            return false;
        }
        self.write_in(
            "refreshing a compression lock",
            &WriteScope::session(session_id),
            |tx| {
                let now = server_now(tx)?;
                let changed = tx
                    .execute(
                        "UPDATE compression_locks SET expires_at = $1 \
                     WHERE session_id = $2 AND holder = $3 AND expires_at >= $4",
                        &[&(now + ttl_seconds), &session_id, &holder, &now],
                    )
                    .context("refreshing a compression lock")?;
                Ok(changed > 0)
            },
        )
        .unwrap_or(false)
    }

    /// Releases the lock of a session if `holder` holds it. Never fails:
    /// errors are swallowed (the lock then expires).
    pub fn release_compression_lock(&self, session_id: &str, holder: &str) {
        if session_id.is_empty() {
            return;
        }
        let _ = self.write_in(
            "releasing a compression lock",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute(
                    "DELETE FROM compression_locks WHERE session_id = $1 AND holder = $2",
                    &[&session_id, &holder],
                )
                .context("releasing a compression lock")?;
                Ok(())
            },
        );
    }

    /// The holder of a session's unexpired compression lock (`expires_at`
    /// not before the server's now), or `None`; `None` for an empty id.
    pub fn get_compression_lock_holder(&self, session_id: &str) -> Result<Option<String>> {
        if session_id.is_empty() {
            return Ok(None);
        }
        self.read(|tx| {
            Ok(tx
                .query_opt(
                    "SELECT holder FROM compression_locks WHERE session_id = $1 \
                     AND expires_at >= extract(epoch FROM clock_timestamp())::float8",
                    &[&session_id],
                )
                .context("reading a compression lock")?
                .map(|row| row.get(0)))
        })
    }

    /// Sets one gateway routing entry of `scope` (`api.md` §12.2): upsert on
    /// `(scope, session_key)`, `updated_at = now`. Does nothing when the key
    /// or the entry is empty. `""` is the default scope.
    pub fn save_gateway_routing_entry(
        &self,
        session_key: &str,
        entry_json: &str,
        scope: &str,
    ) -> Result<()> {
        if session_key.is_empty() || entry_json.is_empty() {
            return Ok(());
        }
        let now = self.now();
        // One upsert: its row lock orders it.
        self.write_in(
            "saving a gateway routing entry",
            &WriteScope::rows(),
            |tx| {
                tx.execute(UPSERT_ROUTE, &[&scope, &session_key, &entry_json, &now])
                    .context("saving a gateway routing entry")?;
                Ok(())
            },
        )
    }

    /// The routing map of `scope`: `session_key → entry_json`, in key
    /// (byte) order.
    pub fn load_gateway_routing_entries(&self, scope: &str) -> Result<BTreeMap<String, String>> {
        self.read(|tx| {
            Ok(tx
                .query(
                    "SELECT session_key, entry_json FROM gateway_routing WHERE scope = $1",
                    &[&scope],
                )
                .context("loading the gateway routing entries")?
                .iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect())
        })
    }

    /// Deletes the routing entries of `scope` with the given keys, in one
    /// transaction; unknown keys are ignored and no keys means no write.
    pub fn delete_gateway_routing_entries<K: AsRef<str>>(
        &self,
        session_keys: impl IntoIterator<Item = K>,
        scope: &str,
    ) -> Result<()> {
        let keys: Vec<String> = session_keys
            .into_iter()
            .map(|k| k.as_ref().to_owned())
            .collect();
        if keys.is_empty() {
            return Ok(());
        }
        // One statement: its row locks order it.
        self.write_in(
            "deleting gateway routing entries",
            &WriteScope::rows(),
            |tx| {
                tx.execute(
                    "DELETE FROM gateway_routing WHERE scope = $1 AND session_key = ANY($2)",
                    &[&scope, &keys],
                )
                .context("deleting gateway routing entries")?;
                Ok(())
            },
        )
    }
}
