//! The Telegram DM topic tables on PostgreSQL, created only when a caller
//! opts in (`api.md` §12.4; `schema-v23.md` §4.9), as on SQLite: the same
//! table, column, key and index names, the data model's types (text, epoch
//! seconds as `DOUBLE PRECISION`, 0/1 flags and counters as `BIGINT`), ids
//! compared like SQLite's BINARY (`COLLATE "C"`).
//!
//! Not a migration step: a store gets these tables on explicit request only,
//! in one write transaction under the store's writer lock (DDL is
//! transactional on PostgreSQL, so hosts racing the opt-in serialize and the
//! second finds everything there).

use hermes_state_core::telegram_topics::{TOPIC_SCHEMA_VERSION, TOPIC_SCHEMA_VERSION_KEY};

use postgres::Transaction;

use hermes_state_core::rich_listing::RichSession;
use hermes_state_core::telegram_topics::{ALREADY_LINKED, TopicBinding, TopicBindingRequest};

use crate::PgStore;
use crate::error::{Context, PgError, Result};
use crate::rich_listing::{rich_from_row, rich_select};

const STATEMENTS: [&str; 4] = [
    r#"CREATE TABLE IF NOT EXISTS telegram_dm_topic_mode (
    chat_id TEXT COLLATE "C" PRIMARY KEY,
    user_id TEXT COLLATE "C" NOT NULL,
    enabled BIGINT NOT NULL DEFAULT 1,
    activated_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    has_topics_enabled BIGINT,
    allows_users_to_create_topics BIGINT,
    capability_checked_at DOUBLE PRECISION,
    intro_message_id TEXT,
    pinned_message_id TEXT
)"#,
    r#"CREATE TABLE IF NOT EXISTS telegram_dm_topic_bindings (
    chat_id TEXT COLLATE "C" NOT NULL,
    thread_id TEXT COLLATE "C" NOT NULL,
    user_id TEXT COLLATE "C" NOT NULL,
    session_key TEXT NOT NULL,
    session_id TEXT COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    managed_mode TEXT NOT NULL DEFAULT 'auto',
    linked_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (chat_id, thread_id)
)"#,
    "CREATE UNIQUE INDEX IF NOT EXISTS idx_telegram_dm_topic_bindings_session \
     ON telegram_dm_topic_bindings(session_id)",
    "CREATE INDEX IF NOT EXISTS idx_telegram_dm_topic_bindings_user \
     ON telegram_dm_topic_bindings(user_id, chat_id)",
];

impl PgStore {
    /// Creates the Telegram topic tables and their indexes where missing and
    /// sets `telegram_dm_topic_schema_version` to `2` (`api.md` §12.4), in
    /// one write transaction. Idempotent; existing tables and rows are kept.
    pub fn apply_telegram_topic_migration(&self) -> Result<()> {
        const WHAT: &str = "creating the Telegram topic tables";
        self.write(WHAT, |tx| {
            create_topic_tables(tx)?;
            tx.execute(
                "INSERT INTO state_meta (key, value) VALUES ($1, $2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&TOPIC_SCHEMA_VERSION_KEY, &TOPIC_SCHEMA_VERSION],
            )
            .context(WHAT)?;
            Ok(())
        })
    }
}

/// Creates the two tables and their indexes where missing, and nothing else
/// (no `state_meta` key): for a copy of a store that has them.
pub(crate) fn create_topic_tables(tx: &mut Transaction<'_>) -> Result<()> {
    for statement in STATEMENTS {
        tx.batch_execute(statement)
            .context("creating the Telegram topic tables")?;
    }
    Ok(())
}

/// The bindings' columns in table order (the original's `SELECT *`).
const BINDING_COLUMNS: &str =
    "chat_id, thread_id, user_id, session_key, session_id, managed_mode, linked_at, updated_at";

/// Topic mode and bindings (the original's Telegram calls beyond `api.md`),
/// with the SQLite backend's answers: without the opt-in tables every read
/// answers "nothing" and every write but the two that opt in changes
/// nothing.
impl PgStore {
    /// Turns topic mode on for a private chat: the opt-in (its own write),
    /// then the chat's row upserted with `enabled = 1` and now.
    pub fn enable_telegram_topic_mode(
        &self,
        chat_id: &str,
        user_id: &str,
        has_topics_enabled: Option<bool>,
        allows_users_to_create_topics: Option<bool>,
    ) -> Result<()> {
        self.apply_telegram_topic_migration()?;
        let now = self.now();
        let flags = (
            has_topics_enabled.map(i64::from),
            allows_users_to_create_topics.map(i64::from),
        );
        self.write("enabling Telegram topic mode", |tx| {
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
        })
    }

    /// Turns topic mode off for a chat and, with `clear_bindings`, deletes
    /// its bindings; nothing without the mode table.
    pub fn disable_telegram_topic_mode(&self, chat_id: &str, clear_bindings: bool) -> Result<()> {
        let now = self.now();
        self.write("disabling Telegram topic mode", |tx| {
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
        })
    }

    /// Whether topic mode is on for this chat and user.
    pub fn is_telegram_topic_mode_enabled(&self, chat_id: &str, user_id: &str) -> Result<bool> {
        self.read(|tx| {
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
        })
    }

    /// The binding of a chat's topic thread.
    pub fn get_telegram_topic_binding(
        &self,
        chat_id: &str,
        thread_id: &str,
    ) -> Result<Option<TopicBinding>> {
        Ok(self
            .bindings("chat_id = $1 AND thread_id = $2", &[&chat_id, &thread_id])?
            .into_iter()
            .next())
    }

    /// Every binding of a chat, most recently updated first.
    pub fn list_telegram_topic_bindings_for_chat(
        &self,
        chat_id: &str,
    ) -> Result<Vec<TopicBinding>> {
        self.bindings("chat_id = $1 ORDER BY updated_at DESC", &[&chat_id])
    }

    /// The binding of a session.
    pub fn get_telegram_topic_binding_by_session(
        &self,
        session_id: &str,
    ) -> Result<Option<TopicBinding>> {
        Ok(self
            .bindings("session_id = $1", &[&session_id])?
            .into_iter()
            .next())
    }

    /// Whether a session is bound to a topic.
    pub fn is_telegram_session_linked_to_topic(&self, session_id: &str) -> Result<bool> {
        Ok(self
            .get_telegram_topic_binding_by_session(session_id)?
            .is_some())
    }

    fn bindings(
        &self,
        condition: &str,
        params: &[&(dyn postgres::types::ToSql + Sync)],
    ) -> Result<Vec<TopicBinding>> {
        let sql =
            format!("SELECT {BINDING_COLUMNS} FROM telegram_dm_topic_bindings WHERE {condition}");
        self.read(|tx| {
            if !has_table(tx, "telegram_dm_topic_bindings")? {
                return Ok(Vec::new());
            }
            Ok(tx
                .query(&sql, params)
                .context("reading Telegram topic bindings")?
                .iter()
                .map(|row| TopicBinding {
                    chat_id: row.get(0),
                    thread_id: row.get(1),
                    user_id: row.get(2),
                    session_key: row.get(3),
                    session_id: row.get(4),
                    managed_mode: row.get(5),
                    linked_at: row.get(6),
                    updated_at: row.get(7),
                })
                .collect())
        })
    }

    /// Deletes the binding of one chat topic thread; when it was the chat's
    /// last, topic mode is turned off for the chat in the same write.
    pub fn delete_telegram_topic_binding(&self, chat_id: &str, thread_id: &str) -> Result<usize> {
        let now = self.now();
        self.write("deleting a Telegram topic binding", |tx| {
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
        })
    }

    /// Binds a chat's topic thread to a session: the opt-in (its own
    /// write), then the binding, refused ([`PgError::InvalidValue`], the
    /// original's text) for a session bound to another topic.
    pub fn bind_telegram_topic(&self, binding: &TopicBindingRequest<'_>) -> Result<()> {
        self.apply_telegram_topic_migration()?;
        let now = self.now();
        self.write("binding a Telegram topic", |tx| {
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
        })
    }

    /// The user's `telegram` sessions bound to no topic (every one without
    /// the bindings table), newest activity first, then newest start; at
    /// most `limit` (negative: no limit), as rich rows.
    pub fn list_unlinked_telegram_sessions_for_user(
        &self,
        user_id: &str,
        limit: i64,
    ) -> Result<Vec<RichSession>> {
        let limit = (limit >= 0).then_some(limit);
        self.read(|tx| {
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
        })
    }
}

/// Whether the store's schema has this table.
fn has_table(tx: &mut Transaction<'_>, table: &str) -> Result<bool> {
    Ok(tx
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
        .context("looking for a table")?
        .get(0))
}
