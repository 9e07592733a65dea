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

use hermes_state_sqlite::names::{TOPIC_SCHEMA_VERSION, TOPIC_SCHEMA_VERSION_KEY};

use postgres::Transaction;

use crate::PgStore;
use crate::error::{Context, Result};

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
