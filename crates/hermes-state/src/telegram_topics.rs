//! Telegram DM topic mode (`api.md` §12.4): a private chat that opted in
//! has its topic threads bound to sessions. The tables are created by the
//! opt-in only ([`SessionDb::apply_telegram_topic_migration`], which
//! [`SessionDb::enable_telegram_topic_mode`] and
//! [`SessionDb::bind_telegram_topic`] run first, as the original's do);
//! every other call works on a store without them, as the original's
//! (reads answer "nothing", writes change nothing). The PostgreSQL backend
//! has the same calls (docs/POSTGRES.md).

use hermes_state_sqlite::catalog::object_exists;
use rusqlite::Connection;

use crate::error::{Error, Result};

pub(crate) const ENABLE_MODE: &str = "INSERT INTO telegram_dm_topic_mode (
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
pub(crate) const DISABLE_MODE: &str =
    "UPDATE telegram_dm_topic_mode SET enabled = 0, updated_at = ?1 WHERE chat_id = ?2";
pub(crate) const DELETE_CHAT_BINDINGS: &str =
    "DELETE FROM telegram_dm_topic_bindings WHERE chat_id = ?1";
pub(crate) const DELETE_BINDING: &str =
    "DELETE FROM telegram_dm_topic_bindings WHERE chat_id = ?1 AND thread_id = ?2";
pub(crate) const CHAT_HAS_BINDING: &str =
    "SELECT 1 FROM telegram_dm_topic_bindings WHERE chat_id = ?1 LIMIT 1";
pub(crate) const TOPIC_OF_SESSION: &str =
    "SELECT chat_id, thread_id FROM telegram_dm_topic_bindings WHERE session_id = ?1";
pub(crate) const BIND: &str = "INSERT INTO telegram_dm_topic_bindings (
        chat_id, thread_id, user_id, session_key, session_id,
        managed_mode, linked_at, updated_at
    ) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
    ON CONFLICT(chat_id, thread_id) DO UPDATE SET
        user_id = excluded.user_id,
        session_key = excluded.session_key,
        session_id = excluded.session_id,
        managed_mode = excluded.managed_mode,
        updated_at = excluded.updated_at";

pub(crate) fn has_table(conn: &Connection, table: &str) -> Result<bool> {
    object_exists(conn, "table", table)
        .map_err(|e| Error::from(hermes_state_query::QueryError::from(e)))
}
