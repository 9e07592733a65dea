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

use postgres::Transaction;

use hermes_state_core::telegram_topics::TopicBinding;

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
    pub(crate) fn bindings(
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
}

/// Whether the store's schema has this table.
pub(crate) fn has_table(tx: &mut Transaction<'_>, table: &str) -> Result<bool> {
    Ok(tx
        .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table])
        .context("looking for a table")?
        .get(0))
}
