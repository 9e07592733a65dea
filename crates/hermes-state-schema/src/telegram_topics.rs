//! The Telegram DM topic tables, created only when a caller opts in
//! (`api.md` §12.4; `schema-v23.md` §4.9): they are not part of the v23
//! schema the open algorithm creates, so this DDL runs on explicit request only.

use rusqlite::Connection;

use crate::ddl;
use crate::error::SchemaError;
use hermes_state_sqlite::Context as SqliteContext;

/// The `state_meta` key the opt-in sets, and its value (shared with the
/// PostgreSQL backend's opt-in).
pub use hermes_state_sqlite::names::{TOPIC_SCHEMA_VERSION, TOPIC_SCHEMA_VERSION_KEY};

/// `telegram_dm_topic_mode`: one row per private chat that uses topics.
pub const TOPIC_MODE_TABLE: &str = "CREATE TABLE IF NOT EXISTS telegram_dm_topic_mode (
    chat_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    activated_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    has_topics_enabled INTEGER,
    allows_users_to_create_topics INTEGER,
    capability_checked_at REAL,
    intro_message_id TEXT,
    pinned_message_id TEXT
)";

/// `telegram_dm_topic_bindings`: which session a chat's topic thread is bound
/// to; a binding goes with its session (`ON DELETE CASCADE`).
pub const TOPIC_BINDINGS_TABLE: &str = "CREATE TABLE IF NOT EXISTS telegram_dm_topic_bindings (
    chat_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    managed_mode TEXT NOT NULL DEFAULT 'auto',
    linked_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (chat_id, thread_id)
)";

/// At most one topic binding per session.
pub const TOPIC_BINDINGS_SESSION_INDEX: &str = "CREATE UNIQUE INDEX IF NOT EXISTS idx_telegram_dm_topic_bindings_session ON telegram_dm_topic_bindings(session_id)";

/// Bindings by user and chat.
pub const TOPIC_BINDINGS_USER_INDEX: &str = "CREATE INDEX IF NOT EXISTS idx_telegram_dm_topic_bindings_user ON telegram_dm_topic_bindings(user_id, chat_id)";

/// Creates the two tables and their indexes where missing and sets
/// [`TOPIC_SCHEMA_VERSION_KEY`] to [`TOPIC_SCHEMA_VERSION`], in the caller's
/// write transaction. Idempotent; existing tables and rows are kept as they are.
pub fn apply_telegram_topic_migration(conn: &Connection) -> Result<(), SchemaError> {
    const WHAT: &str = "creating the Telegram topic tables";
    create_telegram_topic_tables(conn)?;
    conn.execute(
        ddl::UPSERT_META,
        [TOPIC_SCHEMA_VERSION_KEY, TOPIC_SCHEMA_VERSION],
    )
    .context(WHAT)?;
    Ok(())
}

/// Creates the two tables and their indexes where missing, and nothing
/// else (no `state_meta` key): for a copy of a store that has them, whose
/// own `state_meta` rows are copied as they are.
pub fn create_telegram_topic_tables(conn: &Connection) -> Result<(), SchemaError> {
    for statement in [
        TOPIC_MODE_TABLE,
        TOPIC_BINDINGS_TABLE,
        TOPIC_BINDINGS_SESSION_INDEX,
        TOPIC_BINDINGS_USER_INDEX,
    ] {
        conn.execute_batch(statement)
            .context("creating the Telegram topic tables")?;
    }
    Ok(())
}
