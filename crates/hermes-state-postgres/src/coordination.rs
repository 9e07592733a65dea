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

use crate::delegations::DELEGATION_COLUMNS;
use crate::delegations::FINISH;
use crate::delegations::INSERT;
use crate::delegations::UPDATE_STATE;
use crate::delegations::delegation_from_row;
use crate::error::PgError;
use crate::error::{Context, Result};
use crate::rich_listing::rich_from_row;
use crate::rich_listing::rich_select;
use crate::telegram_topics::create_topic_tables;
use crate::telegram_topics::has_table;
use crate::{PgStore, WriteScope};
use hermes_state_core::Result as CoreResult;
use hermes_state_core::coordination::Delegation;
use hermes_state_core::coordination::DelegationFilter;
use hermes_state_core::gateway::GatewayPeer;
use hermes_state_core::lookups::PeerLookup;
use hermes_state_core::rich_listing::RichSession;
use hermes_state_core::store::Coordination;
use hermes_state_core::telegram_topics::ALREADY_LINKED;
use hermes_state_core::telegram_topics::TOPIC_SCHEMA_VERSION;
use hermes_state_core::telegram_topics::TOPIC_SCHEMA_VERSION_KEY;
use hermes_state_core::telegram_topics::TopicBinding;
use hermes_state_core::telegram_topics::TopicBindingRequest;
use hermes_state_types::NewDelegation;
use postgres::types::ToSql;

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

impl Coordination for PgStore {
    /// `api.md` §12.4: sets a `state_meta` value (see the inherent method,
    /// which can also store NULL).
    fn set_meta(&self, key: &str, value: &str) -> CoreResult<()> {
        Ok(PgStore::set_meta(self, key, Some(value))?)
    }

    /// `api.md` §12.2, with the keys as a slice: see the generic inherent
    /// method of the same name.
    fn delete_gateway_routing_entries(&self, session_keys: &[&str], scope: &str) -> CoreResult<()> {
        Ok(PgStore::delete_gateway_routing_entries(
            self,
            session_keys,
            scope,
        )?)
    }

    /// `api.md` §12.2, with the entries as a slice: see the generic inherent
    /// method of the same name.
    fn replace_gateway_routing_entries(
        &self,
        entries: &[(&str, &str)],
        scope: &str,
    ) -> CoreResult<()> {
        Ok(PgStore::replace_gateway_routing_entries(
            self,
            entries.iter().copied(),
            scope,
        )?)
    }

    /// `api.md` §12.2: the peer's fields go to the inherent method one by one.
    fn record_gateway_session_peer(&self, session_id: &str, peer: &GatewayPeer) -> CoreResult<()> {
        let lookup = PeerLookup {
            source: peer.source.clone(),
            session_key: Some(peer.session_key.clone()),
            user_id: peer.user_id.clone(),
            chat_id: peer.chat_id.clone(),
            chat_type: peer.chat_type.clone(),
            thread_id: peer.thread_id.clone(),
        };
        Ok(PgStore::record_gateway_session_peer(
            self,
            session_id,
            &lookup,
            peer.display_name.as_deref(),
            peer.origin_json.as_deref(),
        )?)
    }

    /// Tries to take the compression lock of a session for `holder`, for
    /// `ttl_seconds` (`api.md` §12.1): one write transaction removes an
    /// expired lock (`expires_at` before the server's now), then inserts
    /// this one unless a lock remains. Returns whether `holder` holds the
    /// lock afterwards; re-acquiring does not extend it. A lock whose holder
    /// names a dead process is *not* reclaimed early (see the module
    /// documentation). Never fails: an empty id, a read-only handle or any
    /// error gives `false`.
    fn try_acquire_compression_lock(
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
    fn refresh_compression_lock(&self, session_id: &str, holder: &str, ttl_seconds: f64) -> bool {
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
    fn release_compression_lock(&self, session_id: &str, holder: &str) {
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
    fn get_compression_lock_holder(&self, session_id: &str) -> CoreResult<Option<String>> {
        if session_id.is_empty() {
            return Ok(None);
        }
        Ok(self.read(|tx| {
            Ok(tx
                .query_opt(
                    "SELECT holder FROM compression_locks WHERE session_id = $1 \
                     AND expires_at >= extract(epoch FROM clock_timestamp())::float8",
                    &[&session_id],
                )
                .context("reading a compression lock")?
                .map(|row| row.get(0)))
        })?)
    }

    /// Sets one gateway routing entry of `scope` (`api.md` §12.2): upsert on
    /// `(scope, session_key)`, `updated_at = now`. Does nothing when the key
    /// or the entry is empty. `""` is the default scope.
    fn save_gateway_routing_entry(
        &self,
        session_key: &str,
        entry_json: &str,
        scope: &str,
    ) -> CoreResult<()> {
        if session_key.is_empty() || entry_json.is_empty() {
            return Ok(());
        }
        let now = self.now();
        // One upsert: its row lock orders it.
        Ok(self.write_in(
            "saving a gateway routing entry",
            &WriteScope::rows(),
            |tx| {
                tx.execute(UPSERT_ROUTE, &[&scope, &session_key, &entry_json, &now])
                    .context("saving a gateway routing entry")?;
                Ok(())
            },
        )?)
    }

    /// The routing map of `scope`: `session_key → entry_json`, in key
    /// (byte) order.
    fn load_gateway_routing_entries(&self, scope: &str) -> CoreResult<BTreeMap<String, String>> {
        Ok(self.read(|tx| {
            Ok(tx
                .query(
                    "SELECT session_key, entry_json FROM gateway_routing WHERE scope = $1",
                    &[&scope],
                )
                .context("loading the gateway routing entries")?
                .iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect())
        })?)
    }

    /// Records a new async delegation: `dispatched_at = updated_at = now`;
    /// `delivery_state = 'pending'`, `delivery_attempts = 0`, the other
    /// delivery columns NULL.
    ///
    /// Errors: [`PgError::InvalidInput`] for an empty `delegation_id`; kind
    /// `Constraint` when the id is already recorded (the first row stays).
    fn record_delegation(&self, delegation: &NewDelegation) -> CoreResult<()> {
        const WHAT: &str = "recording a delegation";
        if delegation.delegation_id.is_empty() {
            return Err(PgError::InvalidInput(
                "a delegation needs a non-empty delegation_id".to_owned(),
            )
            .into());
        }
        // One statement on the delegation's row: its row lock orders it.
        Ok(self.write_in(WHAT, &WriteScope::rows(), |tx| {
            let now = self.now();
            tx.execute(
                INSERT,
                &[
                    &delegation.delegation_id,
                    &delegation.origin_session,
                    &delegation.origin_ui_session_id,
                    &delegation.parent_session_id,
                    &delegation.state,
                    &now,
                    &delegation.event_json,
                    &delegation.task_json,
                    &delegation.owner_pid,
                    &delegation.owner_started_at,
                ],
            )
            .context(WHAT)?;
            Ok(())
        })?)
    }

    /// Sets a delegation's `state` and, when given, its `event_json`
    /// (`None` keeps the stored event); `updated_at = now`. Returns whether
    /// the delegation exists.
    fn update_delegation_state(
        &self,
        delegation_id: &str,
        state: &str,
        event_json: Option<&str>,
    ) -> CoreResult<bool> {
        const WHAT: &str = "updating a delegation";
        // One statement on the delegation's row: its row lock orders it.
        Ok(self.write_in(WHAT, &WriteScope::rows(), |tx| {
            let now = self.now();
            let changed = tx
                .execute(UPDATE_STATE, &[&delegation_id, &state, &event_json, &now])
                .context(WHAT)?;
            Ok(changed > 0)
        })?)
    }

    /// Finishes a delegation: its final `state`, its `result_json` when
    /// given (`None` keeps the stored one), `completed_at = updated_at =
    /// now`; finishing again overwrites these, and the delivery columns are
    /// left alone. Returns whether the delegation exists.
    fn finish_delegation(
        &self,
        delegation_id: &str,
        state: &str,
        result_json: Option<&str>,
    ) -> CoreResult<bool> {
        const WHAT: &str = "finishing a delegation";
        // One statement on the delegation's row: its row lock orders it.
        Ok(self.write_in(WHAT, &WriteScope::rows(), |tx| {
            let now = self.now();
            let changed = tx
                .execute(FINISH, &[&delegation_id, &state, &result_json, &now])
                .context(WHAT)?;
            Ok(changed > 0)
        })?)
    }

    /// One delegation, or `None` for an unknown id.
    fn get_delegation(&self, delegation_id: &str) -> CoreResult<Option<Delegation>> {
        let sql =
            format!("SELECT {DELEGATION_COLUMNS} FROM async_delegations WHERE delegation_id = $1");
        Ok(self.read(|tx| {
            Ok(tx
                .query_opt(&sql, &[&delegation_id])
                .context("reading a delegation")?
                .map(|row| delegation_from_row(&row)))
        })?)
    }

    /// The delegations matching every given field of `filter` (all of them
    /// for the default filter), oldest dispatch first, ties by id.
    fn list_delegations(&self, filter: &DelegationFilter) -> CoreResult<Vec<Delegation>> {
        let mut sql = format!("SELECT {DELEGATION_COLUMNS} FROM async_delegations WHERE TRUE");
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::new();
        for (column, value) in [
            ("state", &filter.state),
            ("delivery_state", &filter.delivery_state),
            ("origin_session", &filter.origin_session),
        ] {
            if let Some(value) = value {
                params.push(value);
                sql.push_str(&format!(" AND {column} = ${}", params.len()));
            }
        }
        sql.push_str(" ORDER BY dispatched_at, delegation_id COLLATE \"C\"");
        Ok(self.read(|tx| {
            Ok(tx
                .query(&sql, &params)
                .context("listing delegations")?
                .iter()
                .map(delegation_from_row)
                .collect())
        })?)
    }

    /// A `state_meta` value.
    fn get_meta(&self, key: &str) -> CoreResult<Option<String>> {
        Ok(self.read(|tx| {
            Ok(tx
                .query_opt("SELECT value FROM state_meta WHERE key = $1", &[&key])
                .context("reading state_meta")?
                .and_then(|row| row.get(0)))
        })?)
    }

    /// Creates the Telegram topic tables and their indexes where missing and
    /// sets `telegram_dm_topic_schema_version` to `2` (`api.md` §12.4), in
    /// one write transaction. Idempotent; existing tables and rows are kept.
    fn apply_telegram_topic_migration(&self) -> CoreResult<()> {
        const WHAT: &str = "creating the Telegram topic tables";
        Ok(self.write(WHAT, |tx| {
            create_topic_tables(tx)?;
            tx.execute(
                "INSERT INTO state_meta (key, value) VALUES ($1, $2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&TOPIC_SCHEMA_VERSION_KEY, &TOPIC_SCHEMA_VERSION],
            )
            .context(WHAT)?;
            Ok(())
        })?)
    }

    /// Turns topic mode on for a private chat: the opt-in (its own write),
    /// then the chat's row upserted with `enabled = 1` and now.
    fn enable_telegram_topic_mode(
        &self,
        chat_id: &str,
        user_id: &str,
        has_topics_enabled: Option<bool>,
        allows_users_to_create_topics: Option<bool>,
    ) -> CoreResult<()> {
        self.apply_telegram_topic_migration()?;
        let now = self.now();
        let flags = (
            has_topics_enabled.map(i64::from),
            allows_users_to_create_topics.map(i64::from),
        );
        Ok(self.write("enabling Telegram topic mode", |tx| {
            tx.execute(
                "INSERT INTO telegram_dm_topic_mode (chat_id, user_id, enabled, activated_at, \
                 updated_at, has_topics_enabled, allows_users_to_create_topics, \
                 capability_checked_at) VALUES ($1, $2, 1, $3, $3, $4, $5, $3) \
                 ON CONFLICT (chat_id) DO UPDATE SET user_id = excluded.user_id, enabled = 1, \
                 updated_at = excluded.updated_at, \
                 has_topics_enabled = excluded.has_topics_enabled, \
                 allows_users_to_create_topics = excluded.allows_users_to_create_topics, \
                 capability_checked_at = excluded.capability_checked_at",
                &[&chat_id, &user_id, &now, &flags.0, &flags.1],
            )
            .context("enabling Telegram topic mode")?;
            Ok(())
        })?)
    }

    /// Turns topic mode off for a chat and, with `clear_bindings`, deletes
    /// its bindings; nothing without the mode table.
    fn disable_telegram_topic_mode(&self, chat_id: &str, clear_bindings: bool) -> CoreResult<()> {
        let now = self.now();
        Ok(self.write("disabling Telegram topic mode", |tx| {
            if !has_table(tx, "telegram_dm_topic_mode")? {
                return Ok(());
            }
            tx.execute(
                "UPDATE telegram_dm_topic_mode SET enabled = 0, updated_at = $1 WHERE chat_id = $2",
                &[&now, &chat_id],
            )
            .context("disabling Telegram topic mode")?;
            if clear_bindings && has_table(tx, "telegram_dm_topic_bindings")? {
                tx.execute(
                    "DELETE FROM telegram_dm_topic_bindings WHERE chat_id = $1",
                    &[&chat_id],
                )
                .context("clearing Telegram topic bindings")?;
            }
            Ok(())
        })?)
    }

    /// Whether topic mode is on for this chat and user.
    fn is_telegram_topic_mode_enabled(&self, chat_id: &str, user_id: &str) -> CoreResult<bool> {
        Ok(self.read(|tx| {
            if !has_table(tx, "telegram_dm_topic_mode")? {
                return Ok(false);
            }
            Ok(tx
                .query_opt(
                    "SELECT enabled FROM telegram_dm_topic_mode WHERE chat_id = $1 AND user_id = $2",
                    &[&chat_id, &user_id],
                )
                .context("reading the Telegram topic mode")?
                .is_some_and(|row| row.get::<_, i64>(0) != 0))
        })?)
    }

    /// The binding of a chat's topic thread.
    fn get_telegram_topic_binding(
        &self,
        chat_id: &str,
        thread_id: &str,
    ) -> CoreResult<Option<TopicBinding>> {
        Ok(self
            .bindings("chat_id = $1 AND thread_id = $2", &[&chat_id, &thread_id])?
            .into_iter()
            .next())
    }

    /// Every binding of a chat, most recently updated first.
    fn list_telegram_topic_bindings_for_chat(
        &self,
        chat_id: &str,
    ) -> CoreResult<Vec<TopicBinding>> {
        Ok(self.bindings("chat_id = $1 ORDER BY updated_at DESC", &[&chat_id])?)
    }

    /// The binding of a session.
    fn get_telegram_topic_binding_by_session(
        &self,
        session_id: &str,
    ) -> CoreResult<Option<TopicBinding>> {
        Ok(self
            .bindings("session_id = $1", &[&session_id])?
            .into_iter()
            .next())
    }

    /// Whether a session is bound to a topic.
    fn is_telegram_session_linked_to_topic(&self, session_id: &str) -> CoreResult<bool> {
        Ok(self
            .get_telegram_topic_binding_by_session(session_id)?
            .is_some())
    }

    /// Deletes the binding of one chat topic thread; when it was the chat's
    /// last, topic mode is turned off for the chat in the same write.
    fn delete_telegram_topic_binding(&self, chat_id: &str, thread_id: &str) -> CoreResult<usize> {
        let now = self.now();
        Ok(self.write("deleting a Telegram topic binding", |tx| {
            if !has_table(tx, "telegram_dm_topic_bindings")? {
                return Ok(0);
            }
            let deleted = tx
                .execute(
                    "DELETE FROM telegram_dm_topic_bindings WHERE chat_id = $1 AND thread_id = $2",
                    &[&chat_id, &thread_id],
                )
                .context("deleting a Telegram topic binding")?;
            if deleted == 0 {
                return Ok(0);
            }
            let remaining = tx
                .query_opt(
                    "SELECT 1 FROM telegram_dm_topic_bindings WHERE chat_id = $1 LIMIT 1",
                    &[&chat_id],
                )
                .context("reading Telegram topic bindings")?;
            if remaining.is_none() && has_table(tx, "telegram_dm_topic_mode")? {
                tx.execute(
                    "UPDATE telegram_dm_topic_mode SET enabled = 0, updated_at = $1 \
                     WHERE chat_id = $2",
                    &[&now, &chat_id],
                )
                .context("disabling Telegram topic mode")?;
            }
            Ok(usize::try_from(deleted).unwrap_or(usize::MAX))
        })?)
    }

    /// Binds a chat's topic thread to a session: the opt-in (its own
    /// write), then the binding, refused ([`PgError::InvalidValue`], the
    /// original's text) for a session bound to another topic.
    fn bind_telegram_topic(&self, binding: &TopicBindingRequest<'_>) -> CoreResult<()> {
        self.apply_telegram_topic_migration()?;
        let now = self.now();
        Ok(self.write("binding a Telegram topic", |tx| {
            let bound = tx
                .query_opt(
                    "SELECT chat_id, thread_id FROM telegram_dm_topic_bindings \
                     WHERE session_id = $1",
                    &[&binding.session_id],
                )
                .context("reading Telegram topic bindings")?;
            if let Some(row) = bound
                && (row.get::<_, String>(0) != binding.chat_id
                    || row.get::<_, String>(1) != binding.thread_id)
            {
                return Err(PgError::InvalidValue(ALREADY_LINKED.to_owned()));
            }
            tx.execute(
                "INSERT INTO telegram_dm_topic_bindings (chat_id, thread_id, user_id, \
                 session_key, session_id, managed_mode, linked_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $7) \
                 ON CONFLICT (chat_id, thread_id) DO UPDATE SET user_id = excluded.user_id, \
                 session_key = excluded.session_key, session_id = excluded.session_id, \
                 managed_mode = excluded.managed_mode, updated_at = excluded.updated_at",
                &[
                    &binding.chat_id,
                    &binding.thread_id,
                    &binding.user_id,
                    &binding.session_key,
                    &binding.session_id,
                    &binding.managed_mode,
                    &now,
                ],
            )
            .context("binding a Telegram topic")?;
            Ok(())
        })?)
    }

    /// The user's `telegram` sessions bound to no topic (every one without
    /// the bindings table), newest activity first, then newest start; at
    /// most `limit` (negative: no limit), as rich rows.
    fn list_unlinked_telegram_sessions_for_user(
        &self,
        user_id: &str,
        limit: i64,
    ) -> CoreResult<Vec<RichSession>> {
        let limit = (limit >= 0).then_some(limit);
        Ok(self.read(|tx| {
            let unbound = if has_table(tx, "telegram_dm_topic_bindings")? {
                " AND NOT EXISTS (SELECT 1 FROM telegram_dm_topic_bindings b \
                 WHERE b.session_id = s.id)"
            } else {
                ""
            };
            let sql = format!(
                "SELECT {} FROM sessions s WHERE s.source = 'telegram' AND s.user_id = $1{unbound} \
                 ORDER BY last_active DESC NULLS LAST, s.started_at DESC NULLS LAST LIMIT $2",
                rich_select()
            );
            Ok(tx
                .query(&sql, &[&user_id, &limit])
                .context("listing unlinked Telegram sessions")?
                .iter()
                .map(|row| rich_from_row(row, false))
                .collect())
        })?)
    }
}
