//! Telegram DM topic mode (`api.md` §12.4): a private chat that opted in
//! has its topic threads bound to sessions. The tables are created by the
//! opt-in only ([`SessionDb::apply_telegram_topic_migration`], which
//! [`SessionDb::enable_telegram_topic_mode`] and
//! [`SessionDb::bind_telegram_topic`] run first, as the original's do);
//! every other call works on a store without them, as the original's
//! (reads answer "nothing", writes change nothing). The PostgreSQL backend
//! has the same calls (docs/POSTGRES.md).

use hermes_state_query::rich_listing::RichSession;
use hermes_state_query::telegram_topics::{
    self, ALREADY_LINKED, TOPIC_BINDINGS, TOPIC_MODE, TopicBinding, TopicBindingRequest,
};
use hermes_state_sqlite::catalog::object_exists;
use rusqlite::{Connection, OptionalExtension, params};

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};

const ENABLE_MODE: &str = "INSERT INTO telegram_dm_topic_mode (
        chat_id, user_id, enabled, activated_at, updated_at,
        has_topics_enabled, allows_users_to_create_topics, capability_checked_at
    ) VALUES (?1, ?2, 1, ?3, ?3, ?4, ?5, ?3)
    ON CONFLICT(chat_id) DO UPDATE SET
        user_id = excluded.user_id,
        enabled = 1,
        updated_at = excluded.updated_at,
        has_topics_enabled = excluded.has_topics_enabled,
        allows_users_to_create_topics = excluded.allows_users_to_create_topics,
        capability_checked_at = excluded.capability_checked_at";
const DISABLE_MODE: &str =
    "UPDATE telegram_dm_topic_mode SET enabled = 0, updated_at = ?1 WHERE chat_id = ?2";
const DELETE_CHAT_BINDINGS: &str = "DELETE FROM telegram_dm_topic_bindings WHERE chat_id = ?1";
const DELETE_BINDING: &str =
    "DELETE FROM telegram_dm_topic_bindings WHERE chat_id = ?1 AND thread_id = ?2";
const CHAT_HAS_BINDING: &str =
    "SELECT 1 FROM telegram_dm_topic_bindings WHERE chat_id = ?1 LIMIT 1";
const TOPIC_OF_SESSION: &str =
    "SELECT chat_id, thread_id FROM telegram_dm_topic_bindings WHERE session_id = ?1";
const BIND: &str = "INSERT INTO telegram_dm_topic_bindings (
        chat_id, thread_id, user_id, session_key, session_id,
        managed_mode, linked_at, updated_at
    ) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
    ON CONFLICT(chat_id, thread_id) DO UPDATE SET
        user_id = excluded.user_id,
        session_key = excluded.session_key,
        session_id = excluded.session_id,
        managed_mode = excluded.managed_mode,
        updated_at = excluded.updated_at";

fn has_table(conn: &Connection, table: &str) -> Result<bool> {
    object_exists(conn, "table", table)
        .map_err(|e| Error::from(hermes_state_query::QueryError::from(e)))
}

impl SessionDb {
    /// Turns topic mode on for a private chat (`api.md` §12.4): runs the
    /// opt-in migration (its own write), then upserts the chat's row with
    /// `enabled = 1`, the user, the two capability flags (`None` stored as
    /// NULL) and now as `updated_at` and `capability_checked_at`
    /// (`activated_at` only for a new row).
    pub fn enable_telegram_topic_mode(
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
    pub fn disable_telegram_topic_mode(&self, chat_id: &str, clear_bindings: bool) -> Result<()> {
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
    pub fn is_telegram_topic_mode_enabled(&self, chat_id: &str, user_id: &str) -> Result<bool> {
        self.read(|conn| {
            Ok(telegram_topics::is_topic_mode_enabled(
                conn, chat_id, user_id,
            )?)
        })
    }

    /// The binding of a chat's topic thread, `None` without one. A read.
    pub fn get_telegram_topic_binding(
        &self,
        chat_id: &str,
        thread_id: &str,
    ) -> Result<Option<TopicBinding>> {
        self.read(|conn| Ok(telegram_topics::binding_by_topic(conn, chat_id, thread_id)?))
    }

    /// Every binding of a chat, most recently updated first. A read.
    pub fn list_telegram_topic_bindings_for_chat(
        &self,
        chat_id: &str,
    ) -> Result<Vec<TopicBinding>> {
        self.read(|conn| Ok(telegram_topics::bindings_of_chat(conn, chat_id)?))
    }

    /// The binding of a session, `None` without one. A read.
    pub fn get_telegram_topic_binding_by_session(
        &self,
        session_id: &str,
    ) -> Result<Option<TopicBinding>> {
        self.read(|conn| Ok(telegram_topics::binding_of_session(conn, session_id)?))
    }

    /// Deletes the binding of one chat topic thread (its topic is gone) and
    /// returns how many rows went (0 or 1; 0 without the tables). When it
    /// was the chat's last binding, topic mode is turned off for the chat
    /// (`enabled = 0`, `updated_at` now) in the same write.
    pub fn delete_telegram_topic_binding(&self, chat_id: &str, thread_id: &str) -> Result<usize> {
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
    pub fn bind_telegram_topic(&self, binding: &TopicBindingRequest<'_>) -> Result<()> {
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
    pub fn is_telegram_session_linked_to_topic(&self, session_id: &str) -> Result<bool> {
        self.read(|conn| Ok(telegram_topics::is_session_linked(conn, session_id)?))
    }

    /// The user's `telegram` sessions bound to no topic (every one without
    /// the tables), newest activity first, at most `limit` (negative: no
    /// limit, as SQLite's; the original's default is 10), each with
    /// `last_active` and a one-line `preview`. A read.
    pub fn list_unlinked_telegram_sessions_for_user(
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
