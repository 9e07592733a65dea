//! Writing the coordination tables: compression locks, the gateway routing
//! map, async delegations and `state_meta` (`api.md` §12). Their reads are
//! `hermes_state_query::coordination`, called here under the handle's mutex.
//!
//! None of these tables references `sessions`: a lock, a routing entry or a
//! delegation may name a session id that has no row, and deleting or pruning
//! sessions never touches them.

use std::collections::BTreeMap;

use hermes_state_query::coordination as query;
/// The row types of the reads, re-exported by the crate under their old names.
pub use hermes_state_query::coordination::{Delegation, DelegationFilter};
use hermes_state_schema::ddl;
/// The argument of [`SessionDb::record_delegation`], shared with the
/// PostgreSQL backend (see [`Delegation`] for what each column means).
pub use hermes_state_types::NewDelegation;
use rusqlite::{Connection, named_params};

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};
use crate::session_updates::SET_GATEWAY_PEER;
use crate::telegram_topics::BIND;
use crate::telegram_topics::CHAT_HAS_BINDING;
use crate::telegram_topics::DELETE_BINDING;
use crate::telegram_topics::DELETE_CHAT_BINDINGS;
use crate::telegram_topics::DISABLE_MODE;
use crate::telegram_topics::ENABLE_MODE;
use crate::telegram_topics::TOPIC_OF_SESSION;
use crate::telegram_topics::has_table;
use hermes_state_core::gateway::GatewayPeer;
use hermes_state_core::store::Coordination;
use hermes_state_query::rich_listing::RichSession;
use hermes_state_query::telegram_topics;
use hermes_state_query::telegram_topics::ALREADY_LINKED;
use hermes_state_query::telegram_topics::TOPIC_BINDINGS;
use hermes_state_query::telegram_topics::TOPIC_MODE;
use hermes_state_query::telegram_topics::TopicBinding;
use hermes_state_query::telegram_topics::TopicBindingRequest;
use rusqlite::OptionalExtension;
use rusqlite::params;

const DELETE_LOCK: &str = "DELETE FROM compression_locks WHERE session_id = ?1";
const INSERT_LOCK: &str = "INSERT OR IGNORE INTO compression_locks (session_id, holder, acquired_at, expires_at) VALUES (?1, ?2, ?3, ?4)";
const REFRESH_LOCK: &str = "UPDATE compression_locks SET expires_at = ?1 WHERE session_id = ?2 AND holder = ?3 AND expires_at >= ?4";
const RELEASE_LOCK: &str = "DELETE FROM compression_locks WHERE session_id = ?1 AND holder = ?2";

const UPSERT_ROUTE: &str = "INSERT INTO gateway_routing (scope, session_key, entry_json, updated_at) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT(scope, session_key) DO UPDATE SET entry_json = excluded.entry_json, updated_at = excluded.updated_at";
const DELETE_SCOPE_ROUTES: &str = "DELETE FROM gateway_routing WHERE scope = ?1";
const DELETE_ROUTE: &str = "DELETE FROM gateway_routing WHERE scope = ?1 AND session_key = ?2";

const INSERT_DELEGATION: &str = "INSERT INTO async_delegations (delegation_id, origin_session, origin_ui_session_id, parent_session_id, state, dispatched_at, updated_at, event_json, task_json, owner_pid, owner_started_at)
VALUES (:id, :origin, :origin_ui, :parent, :state, :now, :now, :event_json, :task_json, :owner_pid, :owner_started_at)";
const UPDATE_DELEGATION_STATE: &str = "UPDATE async_delegations SET state = ?2, event_json = COALESCE(?3, event_json), updated_at = ?4 WHERE delegation_id = ?1";
const FINISH_DELEGATION: &str = "UPDATE async_delegations SET state = ?2, result_json = COALESCE(?3, result_json), completed_at = ?4, updated_at = ?4 WHERE delegation_id = ?1";

impl SessionDb {
    /// Replaces the whole routing map of `scope` with `entries`, in one
    /// transaction: the scope's rows are deleted, then every pair whose key and
    /// entry are both non-empty is inserted, all with the same `updated_at`.
    /// Other scopes are untouched. When a key occurs twice, the last entry
    /// wins (as in the original's `dict`).
    ///
    /// `entries` is any sequence of pairs: `&BTreeMap<String, String>`,
    /// `vec![("key", "{...}")]`, `slice.iter().map(|(k, v)| (k, v))`, ….
    pub fn replace_gateway_routing_entries<K, V>(
        &self,
        entries: impl IntoIterator<Item = (K, V)>,
        scope: &str,
    ) -> Result<()>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let entries: Vec<(K, V)> = entries
            .into_iter()
            .filter(|(key, entry)| !key.as_ref().is_empty() && !entry.as_ref().is_empty())
            .collect();
        self.write("replacing the gateway routing entries", |conn| {
            let updated_at = self.now();
            conn.execute(DELETE_SCOPE_ROUTES, [scope])
                .context("replacing the gateway routing entries")?;
            let mut insert = conn
                .prepare_cached(UPSERT_ROUTE)
                .context("replacing the gateway routing entries")?;
            for (key, entry) in &entries {
                insert
                    .execute(rusqlite::params![
                        scope,
                        key.as_ref(),
                        entry.as_ref(),
                        updated_at
                    ])
                    .context("replacing the gateway routing entries")?;
            }
            Ok(())
        })
    }

    /// Deletes the routing entries of `scope` with the given keys, in one
    /// transaction; unknown keys are ignored and no keys means no write.
    pub fn delete_gateway_routing_entries<K: AsRef<str>>(
        &self,
        session_keys: impl IntoIterator<Item = K>,
        scope: &str,
    ) -> Result<()> {
        let keys: Vec<K> = session_keys.into_iter().collect();
        if keys.is_empty() {
            return Ok(());
        }
        self.write("deleting gateway routing entries", |conn| {
            let mut delete = conn
                .prepare_cached(DELETE_ROUTE)
                .context("deleting gateway routing entries")?;
            for key in &keys {
                delete
                    .execute([scope, key.as_ref()])
                    .context("deleting gateway routing entries")?;
            }
            Ok(())
        })
    }
}

/// The acquisition transaction of [`SessionDb::try_acquire_compression_lock`].
fn acquire_lock(
    conn: &Connection,
    session_id: &str,
    holder: &str,
    ttl_seconds: f64,
    now: f64,
) -> Result<bool> {
    const WHAT: &str = "acquiring a compression lock";
    if let Some(lock) = query::compression_lock(conn, session_id, now)?
        && (lock.expired || holder_process_is_dead(&lock.holder))
    {
        conn.execute(DELETE_LOCK, [session_id]).context(WHAT)?;
    }
    conn.execute(
        INSERT_LOCK,
        rusqlite::params![session_id, holder, now, now + ttl_seconds],
    )
    .context(WHAT)?;
    let current = query::compression_lock_holder(conn, session_id)?;
    Ok(current.as_deref() == Some(holder))
}

/// The pid of a structured holder: the first `pid=<digits>` field, a field
/// being the text between the start, `:` separators and the end (the
/// original's `(?:^|:)pid=(\d+)(?::|$)`, where `$` also matches before a
/// final newline). `None` when there is none or it does not fit a `u32`.
fn holder_pid(holder: &str) -> Option<u32> {
    let holder = holder.strip_suffix('\n').unwrap_or(holder);
    holder.split(':').find_map(|field| {
        let digits = field.strip_prefix("pid=")?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        // A pid too large for the platform is "doubt": treated as no pid.
        Some(digits.parse::<u32>().ok())
    })?
}

/// Whether a lock holder names a local process that provably no longer
/// exists; `false` on any doubt (PID reuse must never steal a live lease, and
/// a wrongly kept lease heals itself when it expires).
fn holder_process_is_dead(holder: &str) -> bool {
    match holder_pid(holder) {
        Some(pid) if pid > 0 && pid != std::process::id() => process_is_gone(pid),
        _ => false,
    }
}

/// Linux: `/proc/<pid>` missing while `/proc/self` is there (procfs mounted)
/// proves there is no such process, as `kill(pid, 0)` failing with `ESRCH`
/// would. Zombies keep their entry and read as alive, as with `kill`.
#[cfg(target_os = "linux")]
fn process_is_gone(pid: u32) -> bool {
    use std::path::Path;
    if !matches!(Path::new("/proc/self").try_exists(), Ok(true)) {
        return false;
    }
    matches!(Path::new(&format!("/proc/{pid}")).try_exists(), Ok(false))
}

/// Other systems: no check without new dependencies, so never dead (on
/// Windows the original never checks either).
#[cfg(not(target_os = "linux"))]
fn process_is_gone(_pid: u32) -> bool {
    false
}

impl Coordination for SessionDb {
    /// `api.md` §12.2, with the keys as a slice: see the generic inherent
    /// method of the same name.
    fn delete_gateway_routing_entries(&self, session_keys: &[&str], scope: &str) -> Result<()> {
        SessionDb::delete_gateway_routing_entries(self, session_keys.iter().copied(), scope)
    }

    /// `api.md` §12.2, with the entries as a slice: see the generic inherent
    /// method of the same name.
    fn replace_gateway_routing_entries(&self, entries: &[(&str, &str)], scope: &str) -> Result<()> {
        SessionDb::replace_gateway_routing_entries(self, entries.iter().copied(), scope)
    }

    /// Creates the Telegram DM topic tables and indexes where missing and
    /// sets `telegram_dm_topic_schema_version = '2'` (`api.md` §12.4), in
    /// one write transaction. Only on explicit request: opening a store
    /// never creates them. Idempotent.
    fn apply_telegram_topic_migration(&self) -> Result<()> {
        self.write("applying the Telegram topic migration", |conn| {
            hermes_state_schema::telegram_topics::apply_telegram_topic_migration(conn)?;
            Ok(())
        })
    }

    /// Tries to take the compression lock of a session for `holder`, for
    /// `ttl_seconds` (`api.md` §12.1; the original's default is 300 s).
    ///
    /// One write transaction: an existing lock is first removed when it has
    /// expired (`expires_at < now`) or when its holder is a dead local process
    /// (see below); then the lock is inserted unless one remains. Returns
    /// whether `holder` holds the lock afterwards. Re-acquiring a lock one
    /// already holds returns `true` **without** extending it; use
    /// [`SessionDb::refresh_compression_lock`] for that.
    ///
    /// A holder is a dead local process when its text contains `pid=<n>` at
    /// its start or right after a `:`, followed by a `:` or the end (the first
    /// such field counts), `n > 0`, `n` is not this process, and the operating
    /// system proves no process `n` exists. This port checks `/proc/<n>` on
    /// Linux only; elsewhere, and on any doubt, the holder counts as alive and
    /// its lock lasts until it expires.
    ///
    /// Never fails: an empty `session_id`, a read-only or closed handle, or any
    /// SQLite error gives `false`, as the original (which logs and swallows
    /// `sqlite3.Error` so that the caller skips compression). Locks need no
    /// session row.
    fn try_acquire_compression_lock(
        &self,
        session_id: &str,
        holder: &str,
        ttl_seconds: f64,
    ) -> bool {
        if session_id.is_empty() {
            return false;
        }
        self.write("acquiring a compression lock", |conn| {
            acquire_lock(conn, session_id, holder, ttl_seconds, self.now())
        })
        .unwrap_or(false)
    }

    /// Extends a lock `holder` still holds to `now + ttl_seconds`; returns
    /// whether it did (`false` when the lock is held by another, has expired
    /// or does not exist).
    ///
    /// Never fails: empty arguments and every error give `false`, as the original.
    fn refresh_compression_lock(&self, session_id: &str, holder: &str, ttl_seconds: f64) -> bool {
        if session_id.is_empty() || holder.is_empty() {
            return false;
        }
        self.write("refreshing a compression lock", |conn| {
            let now = self.now();
            let changed = conn
                .execute(
                    REFRESH_LOCK,
                    rusqlite::params![now + ttl_seconds, session_id, holder, now],
                )
                .context("refreshing a compression lock")?;
            Ok(changed > 0)
        })
        .unwrap_or(false)
    }

    /// Releases the lock of a session if `holder` holds it; a lock of another
    /// holder (one that took over an expired lock) is left alone.
    ///
    /// Never fails: errors are swallowed, as in the original, where a release
    /// must never raise into the compression path (the lock then expires).
    fn release_compression_lock(&self, session_id: &str, holder: &str) {
        if session_id.is_empty() {
            return;
        }
        let _ = self.write("releasing a compression lock", |conn| {
            conn.execute(RELEASE_LOCK, [session_id, holder])
                .context("releasing a compression lock")?;
            Ok(())
        });
    }

    /// The holder of a session's unexpired compression lock (`expires_at >=
    /// now`), or `None`; `None` for an empty id. A diagnostic: the locking
    /// protocol itself never needs it.
    ///
    /// Unlike the lock operations, read errors are returned, as the original
    /// raises them here.
    fn get_compression_lock_holder(&self, session_id: &str) -> Result<Option<String>> {
        if session_id.is_empty() {
            return Ok(None);
        }
        self.read(|conn| {
            Ok(query::live_compression_lock_holder(
                conn,
                session_id,
                self.now(),
            )?)
        })
    }

    /// Sets one gateway routing entry of `scope` (`api.md` §12.2): upsert on
    /// `(scope, session_key)`, `updated_at = now`. Does nothing when the key or
    /// the entry is empty. `""` is the default scope.
    fn save_gateway_routing_entry(
        &self,
        session_key: &str,
        entry_json: &str,
        scope: &str,
    ) -> Result<()> {
        if session_key.is_empty() || entry_json.is_empty() {
            return Ok(());
        }
        self.write("saving a gateway routing entry", |conn| {
            conn.execute(
                UPSERT_ROUTE,
                rusqlite::params![scope, session_key, entry_json, self.now()],
            )
            .context("saving a gateway routing entry")?;
            Ok(())
        })
    }

    /// The routing map of `scope`: `session_key → entry_json`, in key order
    /// (byte order of the UTF-8 text, SQLite's `BINARY` collation). The
    /// original returns a `dict` in the table's index order, which is the same.
    fn load_gateway_routing_entries(&self, scope: &str) -> Result<BTreeMap<String, String>> {
        self.read(|conn| Ok(query::gateway_routing_entries(conn, scope)?))
    }

    /// Records a new async delegation (beyond the original: see [`Delegation`]).
    ///
    /// `dispatched_at = updated_at = now`; the delivery columns take their
    /// table defaults (`delivery_state = 'pending'`, `delivery_attempts = 0`,
    /// the rest NULL).
    ///
    /// Errors: [`Error::InvalidInput`] for an empty `delegation_id`; an error
    /// of kind [`crate::ErrorKind::Constraint`] when the id is already recorded.
    fn record_delegation(&self, delegation: &NewDelegation) -> Result<()> {
        if delegation.delegation_id.is_empty() {
            return Err(Error::InvalidInput(
                "a delegation needs a non-empty delegation_id".to_owned(),
            ));
        }
        self.write("recording a delegation", |conn| {
            conn.prepare_cached(INSERT_DELEGATION)
                .and_then(|mut stmt| {
                    stmt.execute(named_params! {
                        ":id": delegation.delegation_id,
                        ":origin": delegation.origin_session,
                        ":origin_ui": delegation.origin_ui_session_id,
                        ":parent": delegation.parent_session_id,
                        ":state": delegation.state,
                        ":now": self.now(),
                        ":event_json": delegation.event_json,
                        ":task_json": delegation.task_json,
                        ":owner_pid": delegation.owner_pid,
                        ":owner_started_at": delegation.owner_started_at,
                    })
                })
                .context("recording a delegation")?;
            Ok(())
        })
    }

    /// Sets a delegation's `state` and, when given, its `event_json`
    /// (`None` keeps the stored event); `updated_at = now`. Returns whether
    /// the delegation exists.
    fn update_delegation_state(
        &self,
        delegation_id: &str,
        state: &str,
        event_json: Option<&str>,
    ) -> Result<bool> {
        self.write("updating a delegation", |conn| {
            let changed = conn
                .execute(
                    UPDATE_DELEGATION_STATE,
                    rusqlite::params![delegation_id, state, event_json, self.now()],
                )
                .context("updating a delegation")?;
            Ok(changed > 0)
        })
    }

    /// Finishes a delegation: its final `state` (e.g. `completed`, `error`),
    /// its `result_json` when given (`None` keeps the stored one), and
    /// `completed_at = updated_at = now`. Finishing again overwrites these.
    /// The delivery columns are left to the delivery side. Returns whether the
    /// delegation exists.
    fn finish_delegation(
        &self,
        delegation_id: &str,
        state: &str,
        result_json: Option<&str>,
    ) -> Result<bool> {
        self.write("finishing a delegation", |conn| {
            let changed = conn
                .execute(
                    FINISH_DELEGATION,
                    rusqlite::params![delegation_id, state, result_json, self.now()],
                )
                .context("finishing a delegation")?;
            Ok(changed > 0)
        })
    }

    /// One delegation, or `None` for an unknown id.
    fn get_delegation(&self, delegation_id: &str) -> Result<Option<Delegation>> {
        self.read(|conn| Ok(query::get_delegation(conn, delegation_id)?))
    }

    /// The delegations matching every given field of `filter` (all of them
    /// for the default filter), oldest dispatch first, ties by id.
    fn list_delegations(&self, filter: &DelegationFilter) -> Result<Vec<Delegation>> {
        self.read(|conn| Ok(query::list_delegations(conn, filter)?))
    }

    /// Sets a `state_meta` value (`api.md` §12.4), replacing any previous one.
    fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.write("writing state_meta", |conn| {
            conn.execute(ddl::UPSERT_META, [key, value])
                .context("writing state_meta")?;
            Ok(())
        })
    }

    /// A `state_meta` value.
    fn get_meta(&self, key: &str) -> Result<Option<String>> {
        self.snapshot_read(|conn| Ok(hermes_state_query::get_meta(conn, key)?))
    }

    /// Records who a gateway session talks to (`api.md` §2.5): sets
    /// `session_key`, `source`, `user_id`, `chat_id`, `chat_type` and
    /// `thread_id` (a `None` overwrites with NULL), and `display_name` /
    /// `origin_json` only when given. A no-op unless both the id and the
    /// session key are non-empty.
    fn record_gateway_session_peer(&self, session_id: &str, peer: &GatewayPeer) -> Result<()> {
        if session_id.is_empty() || peer.session_key.is_empty() {
            return Ok(());
        }
        self.write("recording a gateway peer", |conn| {
            conn.execute(
                SET_GATEWAY_PEER,
                named_params! {
                    ":session_key": peer.session_key, ":source": peer.source,
                    ":user_id": peer.user_id, ":chat_id": peer.chat_id,
                    ":chat_type": peer.chat_type, ":thread_id": peer.thread_id,
                    ":has_display_name": peer.display_name.is_some(),
                    ":display_name": peer.display_name,
                    ":has_origin_json": peer.origin_json.is_some(),
                    ":origin_json": peer.origin_json,
                    ":id": session_id,
                },
            )
            .context("recording a gateway peer")?;
            Ok(())
        })
    }

    /// Turns topic mode on for a private chat (`api.md` §12.4): runs the
    /// opt-in migration (its own write), then upserts the chat's row with
    /// `enabled = 1`, the user, the two capability flags (`None` stored as
    /// NULL) and now as `updated_at` and `capability_checked_at`
    /// (`activated_at` only for a new row).
    fn enable_telegram_topic_mode(
        &self,
        chat_id: &str,
        user_id: &str,
        has_topics_enabled: Option<bool>,
        allows_users_to_create_topics: Option<bool>,
    ) -> Result<()> {
        self.apply_telegram_topic_migration()?;
        let now = self.now();
        self.write("enabling Telegram topic mode", |conn| {
            conn.execute(
                ENABLE_MODE,
                params![
                    chat_id,
                    user_id,
                    now,
                    has_topics_enabled.map(i64::from),
                    allows_users_to_create_topics.map(i64::from),
                ],
            )
            .context("enabling Telegram topic mode")?;
            Ok(())
        })
    }

    /// Turns topic mode off for a chat (`enabled = 0`, `updated_at` now) and,
    /// with `clear_bindings`, deletes the chat's bindings, in one write.
    /// Never creates the tables: without the mode table nothing changes
    /// (nor are bindings deleted, as in the original, whose `UPDATE` fails
    /// first).
    fn disable_telegram_topic_mode(&self, chat_id: &str, clear_bindings: bool) -> Result<()> {
        let now = self.now();
        self.write("disabling Telegram topic mode", |conn| {
            if !has_table(conn, TOPIC_MODE)? {
                return Ok(());
            }
            conn.execute(DISABLE_MODE, params![now, chat_id])
                .context("disabling Telegram topic mode")?;
            if clear_bindings && has_table(conn, TOPIC_BINDINGS)? {
                conn.execute(DELETE_CHAT_BINDINGS, [chat_id])
                    .context("clearing Telegram topic bindings")?;
            }
            Ok(())
        })
    }

    /// Whether topic mode is on for this chat and user; `false` without the
    /// tables. A read.
    fn is_telegram_topic_mode_enabled(&self, chat_id: &str, user_id: &str) -> Result<bool> {
        self.read(|conn| {
            Ok(telegram_topics::is_topic_mode_enabled(
                conn, chat_id, user_id,
            )?)
        })
    }

    /// The binding of a chat's topic thread, `None` without one. A read.
    fn get_telegram_topic_binding(
        &self,
        chat_id: &str,
        thread_id: &str,
    ) -> Result<Option<TopicBinding>> {
        self.read(|conn| Ok(telegram_topics::binding_by_topic(conn, chat_id, thread_id)?))
    }

    /// Every binding of a chat, most recently updated first. A read.
    fn list_telegram_topic_bindings_for_chat(&self, chat_id: &str) -> Result<Vec<TopicBinding>> {
        self.read(|conn| Ok(telegram_topics::bindings_of_chat(conn, chat_id)?))
    }

    /// The binding of a session, `None` without one. A read.
    fn get_telegram_topic_binding_by_session(
        &self,
        session_id: &str,
    ) -> Result<Option<TopicBinding>> {
        self.read(|conn| Ok(telegram_topics::binding_of_session(conn, session_id)?))
    }

    /// Deletes the binding of one chat topic thread (its topic is gone) and
    /// returns how many rows went (0 or 1; 0 without the tables). When it
    /// was the chat's last binding, topic mode is turned off for the chat
    /// (`enabled = 0`, `updated_at` now) in the same write.
    fn delete_telegram_topic_binding(&self, chat_id: &str, thread_id: &str) -> Result<usize> {
        let now = self.now();
        self.write("deleting a Telegram topic binding", |conn| {
            if !has_table(conn, TOPIC_BINDINGS)? {
                return Ok(0);
            }
            let deleted = conn
                .execute(DELETE_BINDING, params![chat_id, thread_id])
                .context("deleting a Telegram topic binding")?;
            if deleted == 0 {
                return Ok(0);
            }
            let remaining = conn
                .query_row(CHAT_HAS_BINDING, [chat_id], |_| Ok(()))
                .optional()
                .context("reading Telegram topic bindings")?;
            if remaining.is_none() && has_table(conn, TOPIC_MODE)? {
                conn.execute(DISABLE_MODE, params![now, chat_id])
                    .context("disabling Telegram topic mode")?;
            }
            Ok(deleted)
        })
    }

    /// Binds a chat's topic thread to a session (`api.md` §12.4): runs the
    /// opt-in migration (its own write), then, in a second write, refuses a
    /// session already bound to another topic ([`Error::InvalidValue`],
    /// the original's `ValueError`, nothing written) and upserts the
    /// binding (`linked_at` kept on a rebind, `updated_at` now). Rebinding
    /// the same topic to the same session is idempotent. An unknown session
    /// is the key's `FOREIGN KEY constraint failed`.
    fn bind_telegram_topic(&self, binding: &TopicBindingRequest<'_>) -> Result<()> {
        self.apply_telegram_topic_migration()?;
        let now = self.now();
        self.write("binding a Telegram topic", |conn| {
            let bound = conn
                .query_row(TOPIC_OF_SESSION, [binding.session_id], |row| {
                    Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
                })
                .optional()
                .context("reading Telegram topic bindings")?;
            if let Some((chat, thread)) = bound
                && (chat != binding.chat_id || thread != binding.thread_id)
            {
                return Err(Error::InvalidValue(ALREADY_LINKED.to_owned()));
            }
            conn.execute(
                BIND,
                params![
                    binding.chat_id,
                    binding.thread_id,
                    binding.user_id,
                    binding.session_key,
                    binding.session_id,
                    binding.managed_mode,
                    now,
                ],
            )
            .context("binding a Telegram topic")?;
            Ok(())
        })
    }

    /// Whether a session is bound to a topic; `false` without the tables. A
    /// read.
    fn is_telegram_session_linked_to_topic(&self, session_id: &str) -> Result<bool> {
        self.read(|conn| Ok(telegram_topics::is_session_linked(conn, session_id)?))
    }

    /// The user's `telegram` sessions bound to no topic (every one without
    /// the tables), newest activity first, at most `limit` (negative: no
    /// limit, as SQLite's; the original's default is 10), each with
    /// `last_active` and a one-line `preview`. A read.
    fn list_unlinked_telegram_sessions_for_user(
        &self,
        user_id: &str,
        limit: i64,
    ) -> Result<Vec<RichSession>> {
        self.read(|conn| {
            Ok(telegram_topics::unlinked_sessions_for_user(
                conn, user_id, limit,
            )?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holder_pid_follows_the_original_pattern() {
        assert_eq!(holder_pid("pid=12"), Some(12));
        assert_eq!(holder_pid("pid=12:tid=3:agent=x"), Some(12));
        assert_eq!(holder_pid("host:pid=0042"), Some(42));
        assert_eq!(
            holder_pid("a:pid=x:pid=7"),
            Some(7),
            "the first matching field"
        );
        assert_eq!(holder_pid("pid=5\n"), Some(5), "`$` before a final newline");
        assert_eq!(holder_pid("xpid=12"), None, "not at a field start");
        assert_eq!(
            holder_pid("pid=12x"),
            None,
            "not followed by `:` or the end"
        );
        assert_eq!(holder_pid("pid="), None);
        assert_eq!(holder_pid("pid=-1"), None);
        assert_eq!(holder_pid("pid=99999999999"), None, "too large: doubt");
        assert_eq!(holder_pid("worker-1"), None);
        assert_eq!(holder_pid(""), None);
    }

    #[test]
    fn only_provably_gone_processes_are_dead() {
        assert!(!holder_process_is_dead("plain holder"));
        assert!(!holder_process_is_dead("pid=0:x"));
        let me = format!("pid={}:x", std::process::id());
        assert!(!holder_process_is_dead(&me), "never this process");
        #[cfg(target_os = "linux")]
        {
            assert!(!holder_process_is_dead("pid=1:init"), "pid 1 always exists");
            if !std::path::Path::new("/proc/999999").exists() {
                assert!(holder_process_is_dead("pid=999999:t:n"));
            }
        }
    }
}
