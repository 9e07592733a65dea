//! The Telegram DM topic tables, created only when a caller opts in
//! (`api.md` §12.4; `schema-v23.md` §4.9): they are not part of the v23
//! schema the open algorithm creates, so this DDL runs on explicit request only.

use rusqlite::{Connection, OptionalExtension};

use crate::ddl;
use crate::error::SchemaError;
use hermes_state_sqlite::Context as SqliteContext;

/// The `state_meta` key the opt-in sets, and its value (shared with the
/// PostgreSQL backend's opt-in).
pub use hermes_state_sqlite::names::{TOPIC_SCHEMA_VERSION, TOPIC_SCHEMA_VERSION_KEY};

// The statement texts below are the original's, whitespace included:
// SQLite keeps a CREATE statement's text in `sqlite_master` as written (minus
// `IF NOT EXISTS`), and a file must carry the same schema rows whichever
// program created these tables.

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
pub const TOPIC_BINDINGS_SESSION_INDEX: &str =
    "CREATE UNIQUE INDEX IF NOT EXISTS idx_telegram_dm_topic_bindings_session
                ON telegram_dm_topic_bindings(session_id)";

/// Bindings by user and chat.
pub const TOPIC_BINDINGS_USER_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS idx_telegram_dm_topic_bindings_user
                ON telegram_dm_topic_bindings(user_id, chat_id)";

/// The v1 → v2 rebuild of `telegram_dm_topic_bindings` (its `session_id`
/// key gains `ON DELETE CASCADE`; SQLite cannot alter a foreign key), in
/// order. After the rename SQLite stores the table's text with the name
/// quoted, as it does for the original.
const REBUILD_BINDINGS: [&str; 6] = [
    "CREATE TABLE telegram_dm_topic_bindings_new (
                            chat_id TEXT NOT NULL,
                            thread_id TEXT NOT NULL,
                            user_id TEXT NOT NULL,
                            session_key TEXT NOT NULL,
                            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                            managed_mode TEXT NOT NULL DEFAULT 'auto',
                            linked_at REAL NOT NULL,
                            updated_at REAL NOT NULL,
                            PRIMARY KEY (chat_id, thread_id)
                        )",
    "INSERT INTO telegram_dm_topic_bindings_new
                            SELECT chat_id, thread_id, user_id, session_key,
                                   session_id, managed_mode, linked_at, updated_at
                            FROM telegram_dm_topic_bindings",
    "DROP TABLE telegram_dm_topic_bindings",
    "ALTER TABLE telegram_dm_topic_bindings_new
                            RENAME TO telegram_dm_topic_bindings",
    "CREATE UNIQUE INDEX idx_telegram_dm_topic_bindings_session
                            ON telegram_dm_topic_bindings(session_id)",
    "CREATE INDEX idx_telegram_dm_topic_bindings_user
                            ON telegram_dm_topic_bindings(user_id, chat_id)",
];

/// Creates the two tables and their indexes where missing, rebuilds a
/// version-1 bindings table whose `session_id` key lacks `ON DELETE CASCADE`
/// (once: only while [`TOPIC_SCHEMA_VERSION_KEY`] is below 2, as the
/// original), and sets [`TOPIC_SCHEMA_VERSION_KEY`] to
/// [`TOPIC_SCHEMA_VERSION`], in the caller's write transaction. Idempotent;
/// existing rows are kept.
pub fn apply_telegram_topic_migration(conn: &Connection) -> Result<(), SchemaError> {
    const WHAT: &str = "creating the Telegram topic tables";
    create_telegram_topic_tables(conn)?;
    if stored_topic_version(conn)? < 2 && bindings_key_lacks_cascade(conn)? {
        for statement in REBUILD_BINDINGS {
            conn.execute_batch(statement)
                .context("rebuilding the Telegram topic bindings")?;
        }
    }
    conn.execute(
        ddl::UPSERT_META,
        [TOPIC_SCHEMA_VERSION_KEY, TOPIC_SCHEMA_VERSION],
    )
    .context(WHAT)?;
    Ok(())
}

/// The stored topic schema version: a text of ASCII digits read as a
/// number (saturating), anything else (missing, NULL, empty, signed) as 0.
fn stored_topic_version(conn: &Connection) -> Result<u64, SchemaError> {
    let stored: Option<rusqlite::types::Value> = conn
        .query_row(
            "SELECT value FROM state_meta WHERE key = ?1",
            [TOPIC_SCHEMA_VERSION_KEY],
            |row| row.get(0),
        )
        .optional()
        .context("reading the Telegram topic schema version")?;
    let text = match stored {
        Some(rusqlite::types::Value::Text(text)) => text,
        Some(rusqlite::types::Value::Integer(n)) => n.to_string(),
        _ => return Ok(0),
    };
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(0);
    }
    Ok(text.parse().unwrap_or(u64::MAX))
}

/// Whether a key of `telegram_dm_topic_bindings` points at `sessions`
/// without `ON DELETE CASCADE` (the version-1 shape).
fn bindings_key_lacks_cascade(conn: &Connection) -> Result<bool, SchemaError> {
    const WHAT: &str = "reading the Telegram topic bindings' keys";
    let mut stmt = conn
        .prepare("SELECT \"table\", on_delete FROM pragma_foreign_key_list('telegram_dm_topic_bindings')")
        .context(WHAT)?;
    let keys = stmt
        .query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?))
        })
        .context(WHAT)?
        .collect::<Result<Vec<_>, _>>()
        .context(WHAT)?;
    Ok(keys
        .iter()
        .any(|(table, on_delete)| table == "sessions" && on_delete.as_deref() != Some("CASCADE")))
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
