//! Checks the v23 schema this crate writes against the specification
//! (`schema-v23.md` §2–§9, `migrations.md` §1–§3).
//!
//! Every expected value in [`spec`] was transcribed from the specification
//! text, never taken from `hermes_state_schema::ddl`: the point of these tests
//! is to check those constants (and the open algorithm) against the spec.

#![allow(missing_docs)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};

use hermes_state_schema::rusqlite::types::Value;
use hermes_state_schema::rusqlite::{self, Connection};
use hermes_state_schema::{OpenReport, open_writable};
use hermes_state_types::ErrorKind;
use tempfile::TempDir;

/// Expected values, transcribed from the specification.
mod spec {
    /// One column as `PRAGMA table_xinfo` reports it: `(cid, name, type, notnull, dflt_value, pk)`.
    pub type Column = (
        i64,
        &'static str,
        &'static str,
        i64,
        Option<&'static str>,
        i64,
    );

    /// `schema-v23.md` §3: `(rowid, type, name, tbl_name)` of a fresh file.
    /// An empty "owner table" cell means the object owns itself (`tbl_name = name`).
    pub const INVENTORY: [(i64, &str, &str, &str); 48] = [
        (1, "table", "schema_version", "schema_version"),
        (2, "table", "sessions", "sessions"),
        (3, "index", "sqlite_autoindex_sessions_1", "sessions"),
        (4, "table", "messages", "messages"),
        (5, "table", "sqlite_sequence", "sqlite_sequence"),
        (6, "table", "session_model_usage", "session_model_usage"),
        (
            7,
            "index",
            "sqlite_autoindex_session_model_usage_1",
            "session_model_usage",
        ),
        (8, "table", "state_meta", "state_meta"),
        (9, "index", "sqlite_autoindex_state_meta_1", "state_meta"),
        (10, "table", "gateway_routing", "gateway_routing"),
        (
            11,
            "index",
            "sqlite_autoindex_gateway_routing_1",
            "gateway_routing",
        ),
        (12, "table", "compression_locks", "compression_locks"),
        (
            13,
            "index",
            "sqlite_autoindex_compression_locks_1",
            "compression_locks",
        ),
        (14, "table", "async_delegations", "async_delegations"),
        (
            15,
            "index",
            "sqlite_autoindex_async_delegations_1",
            "async_delegations",
        ),
        (16, "index", "idx_sessions_source", "sessions"),
        (17, "index", "idx_sessions_source_id", "sessions"),
        (18, "index", "idx_sessions_parent", "sessions"),
        (19, "index", "idx_sessions_started", "sessions"),
        (20, "index", "idx_messages_session", "messages"),
        (
            21,
            "index",
            "idx_compression_locks_expires",
            "compression_locks",
        ),
        (
            22,
            "index",
            "idx_session_model_usage_session",
            "session_model_usage",
        ),
        (
            23,
            "index",
            "idx_session_model_usage_model",
            "session_model_usage",
        ),
        (
            24,
            "index",
            "idx_async_delegations_delivery",
            "async_delegations",
        ),
        (25, "index", "idx_messages_platform_msg_id", "messages"),
        (26, "index", "idx_messages_session_active", "messages"),
        (27, "index", "idx_messages_active_null", "messages"),
        (28, "index", "idx_sessions_session_key", "sessions"),
        (29, "index", "idx_sessions_gateway_peer", "sessions"),
        (30, "index", "idx_sessions_handoff_state", "sessions"),
        (31, "index", "idx_sessions_title_unique", "sessions"),
        (32, "table", "messages_fts", "messages_fts"),
        (33, "table", "messages_fts_data", "messages_fts_data"),
        (34, "table", "messages_fts_idx", "messages_fts_idx"),
        (35, "table", "messages_fts_docsize", "messages_fts_docsize"),
        (36, "table", "messages_fts_config", "messages_fts_config"),
        (37, "trigger", "messages_fts_insert", "messages"),
        (38, "trigger", "messages_fts_delete", "messages"),
        (39, "trigger", "messages_fts_update", "messages"),
        (
            40,
            "view",
            "messages_fts_trigram_src",
            "messages_fts_trigram_src",
        ),
        (41, "table", "messages_fts_trigram", "messages_fts_trigram"),
        (
            42,
            "table",
            "messages_fts_trigram_data",
            "messages_fts_trigram_data",
        ),
        (
            43,
            "table",
            "messages_fts_trigram_idx",
            "messages_fts_trigram_idx",
        ),
        (
            44,
            "table",
            "messages_fts_trigram_docsize",
            "messages_fts_trigram_docsize",
        ),
        (
            45,
            "table",
            "messages_fts_trigram_config",
            "messages_fts_trigram_config",
        ),
        (46, "trigger", "messages_fts_trigram_insert", "messages"),
        (47, "trigger", "messages_fts_trigram_delete", "messages"),
        (48, "trigger", "messages_fts_trigram_update", "messages"),
    ];

    /// `schema-v23.md` §6.6: the optional CJK objects, which this library
    /// always creates (its `cjk_unicode61` tokenizer is built in). The open
    /// issues them after the trigram objects (view before table, as §6.4),
    /// so they follow rowid 48: view, virtual table, its four shadow tables,
    /// then the three triggers.
    pub const CJK_INVENTORY: [(i64, &str, &str, &str); 9] = [
        (49, "view", "messages_fts_cjk_src", "messages_fts_cjk_src"),
        (50, "table", "messages_fts_cjk", "messages_fts_cjk"),
        (
            51,
            "table",
            "messages_fts_cjk_data",
            "messages_fts_cjk_data",
        ),
        (52, "table", "messages_fts_cjk_idx", "messages_fts_cjk_idx"),
        (
            53,
            "table",
            "messages_fts_cjk_docsize",
            "messages_fts_cjk_docsize",
        ),
        (
            54,
            "table",
            "messages_fts_cjk_config",
            "messages_fts_cjk_config",
        ),
        (55, "trigger", "messages_fts_cjk_insert", "messages"),
        (56, "trigger", "messages_fts_cjk_delete", "messages"),
        (57, "trigger", "messages_fts_cjk_update", "messages"),
    ];

    /// The names of the three CJK triggers (`schema-v23.md` §6.6).
    pub const CJK_TRIGGERS: [&str; 3] = [
        "messages_fts_cjk_insert",
        "messages_fts_cjk_delete",
        "messages_fts_cjk_update",
    ];

    /// The FTS5 shadow tables (created by SQLite, `schema-v23.md` §6.1/§6.4).
    pub const SHADOW_TABLES: [&str; 8] = [
        "messages_fts_data",
        "messages_fts_idx",
        "messages_fts_docsize",
        "messages_fts_config",
        "messages_fts_trigram_data",
        "messages_fts_trigram_idx",
        "messages_fts_trigram_docsize",
        "messages_fts_trigram_config",
    ];

    /// The FTS5 shadow tables of the CJK index (§6.6: same shapes as §6.1).
    pub const CJK_SHADOW_TABLES: [&str; 4] = [
        "messages_fts_cjk_data",
        "messages_fts_cjk_idx",
        "messages_fts_cjk_docsize",
        "messages_fts_cjk_config",
    ];

    /// Stored `sqlite_master.sql` of the tables, view, virtual tables and
    /// triggers, verbatim from `schema-v23.md` §4.1–§4.8 and §6.1–§6.5.
    pub const OBJECT_SQL: [(&str, &str); 17] = [
        (
            "schema_version",
            r#"CREATE TABLE schema_version (
    version INTEGER NOT NULL
)"#,
        ),
        (
            "sessions",
            r#"CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    user_id TEXT,
    session_key TEXT,
    chat_id TEXT,
    chat_type TEXT,
    thread_id TEXT,
    display_name TEXT,
    origin_json TEXT,
    expiry_finalized INTEGER DEFAULT 0,
    model TEXT,
    model_config TEXT,
    system_prompt TEXT,
    parent_session_id TEXT,
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0,
    cwd TEXT,
    git_branch TEXT,
    git_repo_root TEXT,
    billing_provider TEXT,
    billing_base_url TEXT,
    billing_mode TEXT,
    estimated_cost_usd REAL,
    actual_cost_usd REAL,
    cost_status TEXT,
    cost_source TEXT,
    pricing_version TEXT,
    title TEXT,
    api_call_count INTEGER DEFAULT 0,
    handoff_state TEXT,
    handoff_platform TEXT,
    handoff_error TEXT,
    compression_failure_cooldown_until REAL,
    compression_failure_error TEXT,
    compression_fallback_streak INTEGER NOT NULL DEFAULT 0,
    compression_ineffective_count INTEGER NOT NULL DEFAULT 0,
    profile_name TEXT,
    rewind_count INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
)"#,
        ),
        (
            "messages",
            r#"CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    effect_disposition TEXT,
    timestamp REAL NOT NULL,
    token_count INTEGER,
    finish_reason TEXT,
    reasoning TEXT,
    reasoning_content TEXT,
    reasoning_details TEXT,
    codex_reasoning_items TEXT,
    codex_message_items TEXT,
    platform_message_id TEXT,
    observed INTEGER DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0,
    api_content TEXT,
    display_kind TEXT,
    display_metadata TEXT
)"#,
        ),
        (
            "session_model_usage",
            r#"CREATE TABLE session_model_usage (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    billing_provider TEXT NOT NULL DEFAULT '',
    billing_base_url TEXT NOT NULL DEFAULT '',
    billing_mode TEXT NOT NULL DEFAULT '',
    task TEXT NOT NULL DEFAULT '',
    api_call_count INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    estimated_cost_usd REAL NOT NULL DEFAULT 0,
    actual_cost_usd REAL NOT NULL DEFAULT 0,
    cost_status TEXT,
    cost_source TEXT,
    first_seen REAL,
    last_seen REAL,
    PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode, task)
)"#,
        ),
        (
            "state_meta",
            r#"CREATE TABLE state_meta (
    key TEXT PRIMARY KEY,
    value TEXT
)"#,
        ),
        (
            "gateway_routing",
            r#"CREATE TABLE gateway_routing (
    scope TEXT NOT NULL DEFAULT '',
    session_key TEXT NOT NULL,
    entry_json TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (scope, session_key)
)"#,
        ),
        (
            "compression_locks",
            r#"CREATE TABLE compression_locks (
    session_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    acquired_at REAL NOT NULL,
    expires_at REAL NOT NULL
)"#,
        ),
        (
            "async_delegations",
            r#"CREATE TABLE async_delegations (
    delegation_id TEXT PRIMARY KEY,
    origin_session TEXT NOT NULL,
    origin_ui_session_id TEXT NOT NULL DEFAULT '',
    parent_session_id TEXT,
    state TEXT NOT NULL,
    dispatched_at REAL NOT NULL,
    completed_at REAL,
    updated_at REAL NOT NULL,
    event_json TEXT,
    result_json TEXT,
    delivery_state TEXT NOT NULL DEFAULT 'pending',
    delivery_attempts INTEGER NOT NULL DEFAULT 0,
    delivered_at REAL,
    owner_pid INTEGER,
    owner_started_at INTEGER,
    task_json TEXT,
    delivery_claim TEXT,
    delivery_claimed_at REAL
)"#,
        ),
        (
            "messages_fts",
            r#"CREATE VIRTUAL TABLE messages_fts USING fts5(
    content,
    tool_name,
    tool_calls,
    content='messages',
    content_rowid='id'
)"#,
        ),
        (
            "messages_fts_insert",
            r#"CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN (new.id > COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                         WHERE key = 'fts_rebuild_high_water'), -1)
   OR new.id <= COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                          WHERE key = 'fts_rebuild_progress'), -1))
BEGIN
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
    VALUES (new.id, new.content, new.tool_name, new.tool_calls);
END"#,
        ),
        (
            "messages_fts_delete",
            r#"CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN (old.id > COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                         WHERE key = 'fts_rebuild_high_water'), -1)
   OR old.id <= COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                          WHERE key = 'fts_rebuild_progress'), -1))
BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id, old.content, old.tool_name, old.tool_calls);
END"#,
        ),
        (
            "messages_fts_update",
            r#"CREATE TRIGGER messages_fts_update AFTER UPDATE ON messages
WHEN (old.content IS NOT new.content
    OR old.tool_name IS NOT new.tool_name
    OR old.tool_calls IS NOT new.tool_calls)
   AND (old.id > COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                           WHERE key = 'fts_rebuild_high_water'), -1)
     OR old.id <= COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                            WHERE key = 'fts_rebuild_progress'), -1))
BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id, old.content, old.tool_name, old.tool_calls);
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
    VALUES (new.id, new.content, new.tool_name, new.tool_calls);
END"#,
        ),
        (
            "messages_fts_trigram_src",
            r#"CREATE VIEW messages_fts_trigram_src AS
    SELECT id, role, content, tool_name, tool_calls
    FROM messages
    WHERE role <> 'tool'"#,
        ),
        (
            "messages_fts_trigram",
            r#"CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(
    content,
    tool_name,
    tool_calls,
    content='messages_fts_trigram_src',
    content_rowid='id',
    tokenize='trigram'
)"#,
        ),
        (
            "messages_fts_trigram_insert",
            r#"CREATE TRIGGER messages_fts_trigram_insert AFTER INSERT ON messages
WHEN new.role <> 'tool'
   AND (new.id > COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                           WHERE key = 'fts_rebuild_high_water'), -1)
     OR new.id <= COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                            WHERE key = 'fts_rebuild_progress'), -1))
BEGIN
    INSERT INTO messages_fts_trigram(rowid, content, tool_name, tool_calls)
    VALUES (new.id, new.content, new.tool_name, new.tool_calls);
END"#,
        ),
        (
            "messages_fts_trigram_delete",
            r#"CREATE TRIGGER messages_fts_trigram_delete AFTER DELETE ON messages
WHEN old.role <> 'tool'
   AND (old.id > COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                           WHERE key = 'fts_rebuild_high_water'), -1)
     OR old.id <= COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                            WHERE key = 'fts_rebuild_progress'), -1))
BEGIN
    INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id, old.content, old.tool_name, old.tool_calls);
END"#,
        ),
        (
            "messages_fts_trigram_update",
            r#"CREATE TRIGGER messages_fts_trigram_update AFTER UPDATE ON messages
WHEN (old.content IS NOT new.content
    OR old.tool_name IS NOT new.tool_name
    OR old.tool_calls IS NOT new.tool_calls
    OR old.role IS NOT new.role)
   AND (old.id > COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                           WHERE key = 'fts_rebuild_high_water'), -1)
     OR old.id <= COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                            WHERE key = 'fts_rebuild_progress'), -1))
BEGIN
    INSERT INTO messages_fts_trigram(messages_fts_trigram, rowid, content, tool_name, tool_calls)
    SELECT 'delete', old.id, old.content, old.tool_name, old.tool_calls
    WHERE old.role <> 'tool';
    INSERT INTO messages_fts_trigram(rowid, content, tool_name, tool_calls)
    SELECT new.id, new.content, new.tool_name, new.tool_calls
    WHERE new.role <> 'tool';
END"#,
        ),
    ];

    /// Stored SQL of the CJK view, virtual table and triggers: the view and
    /// table verbatim from `schema-v23.md` §6.6; the triggers are the §6.5
    /// trigram triggers with `messages_fts_trigram` replaced by
    /// `messages_fts_cjk` and the gate keys by `fts_cjk_rebuild_high_water` /
    /// `fts_cjk_rebuild_progress`, written out by hand (and checked against
    /// that rule by the test `cjk_sql_follows_the_replacement_rule`).
    pub const CJK_OBJECT_SQL: [(&str, &str); 5] = [
        (
            "messages_fts_cjk_src",
            r#"CREATE VIEW messages_fts_cjk_src AS
    SELECT id, role, content, tool_name, tool_calls
    FROM messages
    WHERE role <> 'tool'"#,
        ),
        (
            "messages_fts_cjk",
            r#"CREATE VIRTUAL TABLE messages_fts_cjk USING fts5(
    content,
    tool_name,
    tool_calls,
    content='messages_fts_cjk_src',
    content_rowid='id',
    tokenize='cjk_unicode61'
)"#,
        ),
        (
            "messages_fts_cjk_insert",
            r#"CREATE TRIGGER messages_fts_cjk_insert AFTER INSERT ON messages
WHEN new.role <> 'tool'
   AND (new.id > COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                           WHERE key = 'fts_cjk_rebuild_high_water'), -1)
     OR new.id <= COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                            WHERE key = 'fts_cjk_rebuild_progress'), -1))
BEGIN
    INSERT INTO messages_fts_cjk(rowid, content, tool_name, tool_calls)
    VALUES (new.id, new.content, new.tool_name, new.tool_calls);
END"#,
        ),
        (
            "messages_fts_cjk_delete",
            r#"CREATE TRIGGER messages_fts_cjk_delete AFTER DELETE ON messages
WHEN old.role <> 'tool'
   AND (old.id > COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                           WHERE key = 'fts_cjk_rebuild_high_water'), -1)
     OR old.id <= COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                            WHERE key = 'fts_cjk_rebuild_progress'), -1))
BEGIN
    INSERT INTO messages_fts_cjk(messages_fts_cjk, rowid, content, tool_name, tool_calls)
    VALUES ('delete', old.id, old.content, old.tool_name, old.tool_calls);
END"#,
        ),
        (
            "messages_fts_cjk_update",
            r#"CREATE TRIGGER messages_fts_cjk_update AFTER UPDATE ON messages
WHEN (old.content IS NOT new.content
    OR old.tool_name IS NOT new.tool_name
    OR old.tool_calls IS NOT new.tool_calls
    OR old.role IS NOT new.role)
   AND (old.id > COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                           WHERE key = 'fts_cjk_rebuild_high_water'), -1)
     OR old.id <= COALESCE((SELECT CAST(value AS INTEGER) FROM state_meta
                            WHERE key = 'fts_cjk_rebuild_progress'), -1))
BEGIN
    INSERT INTO messages_fts_cjk(messages_fts_cjk, rowid, content, tool_name, tool_calls)
    SELECT 'delete', old.id, old.content, old.tool_name, old.tool_calls
    WHERE old.role <> 'tool';
    INSERT INTO messages_fts_cjk(rowid, content, tool_name, tool_calls)
    SELECT new.id, new.content, new.tool_name, new.tool_calls
    WHERE new.role <> 'tool';
END"#,
        ),
    ];

    /// Whether an object belongs to the optional CJK index of §6.6.
    pub fn is_cjk_object(name: &str) -> bool {
        name.starts_with("messages_fts_cjk")
    }

    /// Stored SQL of the named indexes, verbatim from `schema-v23.md` §5.
    pub const INDEX_SQL: [(&str, &str); 16] = [
        (
            "idx_sessions_source",
            r#"CREATE INDEX idx_sessions_source ON sessions(source)"#,
        ),
        (
            "idx_sessions_source_id",
            r#"CREATE INDEX idx_sessions_source_id ON sessions(source, id)"#,
        ),
        (
            "idx_sessions_parent",
            r#"CREATE INDEX idx_sessions_parent ON sessions(parent_session_id)"#,
        ),
        (
            "idx_sessions_started",
            r#"CREATE INDEX idx_sessions_started ON sessions(started_at DESC)"#,
        ),
        (
            "idx_messages_session",
            r#"CREATE INDEX idx_messages_session ON messages(session_id, timestamp)"#,
        ),
        (
            "idx_compression_locks_expires",
            r#"CREATE INDEX idx_compression_locks_expires ON compression_locks(expires_at)"#,
        ),
        (
            "idx_session_model_usage_session",
            r#"CREATE INDEX idx_session_model_usage_session ON session_model_usage(session_id)"#,
        ),
        (
            "idx_session_model_usage_model",
            r#"CREATE INDEX idx_session_model_usage_model ON session_model_usage(model)"#,
        ),
        (
            "idx_async_delegations_delivery",
            r#"CREATE INDEX idx_async_delegations_delivery
    ON async_delegations(delivery_state, completed_at)"#,
        ),
        (
            "idx_messages_platform_msg_id",
            r#"CREATE INDEX idx_messages_platform_msg_id ON messages(session_id, platform_message_id) WHERE platform_message_id IS NOT NULL"#,
        ),
        (
            "idx_messages_session_active",
            r#"CREATE INDEX idx_messages_session_active
    ON messages(session_id, active, timestamp)"#,
        ),
        (
            "idx_messages_active_null",
            r#"CREATE INDEX idx_messages_active_null
    ON messages(active) WHERE active IS NULL"#,
        ),
        (
            "idx_sessions_session_key",
            r#"CREATE INDEX idx_sessions_session_key
    ON sessions(session_key, started_at DESC)"#,
        ),
        (
            "idx_sessions_gateway_peer",
            r#"CREATE INDEX idx_sessions_gateway_peer
    ON sessions(source, user_id, chat_id, chat_type, thread_id, started_at DESC)"#,
        ),
        (
            "idx_sessions_handoff_state",
            r#"CREATE INDEX idx_sessions_handoff_state
    ON sessions(handoff_state, started_at)"#,
        ),
        (
            "idx_sessions_title_unique",
            r#"CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions(title) WHERE title IS NOT NULL"#,
        ),
    ];

    /// `schema-v23.md` §3: the autoindexes (stored SQL is NULL).
    pub const AUTOINDEXES: [&str; 6] = [
        "sqlite_autoindex_sessions_1",
        "sqlite_autoindex_session_model_usage_1",
        "sqlite_autoindex_state_meta_1",
        "sqlite_autoindex_gateway_routing_1",
        "sqlite_autoindex_compression_locks_1",
        "sqlite_autoindex_async_delegations_1",
    ];

    /// `schema-v23.md` §4.1.
    pub const SCHEMA_VERSION_COLUMNS: &[Column] = &[(0, "version", "INTEGER", 1, None, 0)];

    /// `schema-v23.md` §4.2 column table (`PK 1` on `id`).
    pub const SESSIONS_COLUMNS: &[Column] = &[
        (0, "id", "TEXT", 0, None, 1),
        (1, "source", "TEXT", 1, None, 0),
        (2, "user_id", "TEXT", 0, None, 0),
        (3, "session_key", "TEXT", 0, None, 0),
        (4, "chat_id", "TEXT", 0, None, 0),
        (5, "chat_type", "TEXT", 0, None, 0),
        (6, "thread_id", "TEXT", 0, None, 0),
        (7, "display_name", "TEXT", 0, None, 0),
        (8, "origin_json", "TEXT", 0, None, 0),
        (9, "expiry_finalized", "INTEGER", 0, Some("0"), 0),
        (10, "model", "TEXT", 0, None, 0),
        (11, "model_config", "TEXT", 0, None, 0),
        (12, "system_prompt", "TEXT", 0, None, 0),
        (13, "parent_session_id", "TEXT", 0, None, 0),
        (14, "started_at", "REAL", 1, None, 0),
        (15, "ended_at", "REAL", 0, None, 0),
        (16, "end_reason", "TEXT", 0, None, 0),
        (17, "message_count", "INTEGER", 0, Some("0"), 0),
        (18, "tool_call_count", "INTEGER", 0, Some("0"), 0),
        (19, "input_tokens", "INTEGER", 0, Some("0"), 0),
        (20, "output_tokens", "INTEGER", 0, Some("0"), 0),
        (21, "cache_read_tokens", "INTEGER", 0, Some("0"), 0),
        (22, "cache_write_tokens", "INTEGER", 0, Some("0"), 0),
        (23, "reasoning_tokens", "INTEGER", 0, Some("0"), 0),
        (24, "cwd", "TEXT", 0, None, 0),
        (25, "git_branch", "TEXT", 0, None, 0),
        (26, "git_repo_root", "TEXT", 0, None, 0),
        (27, "billing_provider", "TEXT", 0, None, 0),
        (28, "billing_base_url", "TEXT", 0, None, 0),
        (29, "billing_mode", "TEXT", 0, None, 0),
        (30, "estimated_cost_usd", "REAL", 0, None, 0),
        (31, "actual_cost_usd", "REAL", 0, None, 0),
        (32, "cost_status", "TEXT", 0, None, 0),
        (33, "cost_source", "TEXT", 0, None, 0),
        (34, "pricing_version", "TEXT", 0, None, 0),
        (35, "title", "TEXT", 0, None, 0),
        (36, "api_call_count", "INTEGER", 0, Some("0"), 0),
        (37, "handoff_state", "TEXT", 0, None, 0),
        (38, "handoff_platform", "TEXT", 0, None, 0),
        (39, "handoff_error", "TEXT", 0, None, 0),
        (40, "compression_failure_cooldown_until", "REAL", 0, None, 0),
        (41, "compression_failure_error", "TEXT", 0, None, 0),
        (
            42,
            "compression_fallback_streak",
            "INTEGER",
            1,
            Some("0"),
            0,
        ),
        (
            43,
            "compression_ineffective_count",
            "INTEGER",
            1,
            Some("0"),
            0,
        ),
        (44, "profile_name", "TEXT", 0, None, 0),
        (45, "rewind_count", "INTEGER", 1, Some("0"), 0),
        (46, "archived", "INTEGER", 1, Some("0"), 0),
        (47, "pinned", "INTEGER", 1, Some("0"), 0),
    ];

    /// `schema-v23.md` §4.3 column table (`id` is the INTEGER PRIMARY KEY rowid alias).
    pub const MESSAGES_COLUMNS: &[Column] = &[
        (0, "id", "INTEGER", 0, None, 1),
        (1, "session_id", "TEXT", 1, None, 0),
        (2, "role", "TEXT", 1, None, 0),
        (3, "content", "TEXT", 0, None, 0),
        (4, "tool_call_id", "TEXT", 0, None, 0),
        (5, "tool_calls", "TEXT", 0, None, 0),
        (6, "tool_name", "TEXT", 0, None, 0),
        (7, "effect_disposition", "TEXT", 0, None, 0),
        (8, "timestamp", "REAL", 1, None, 0),
        (9, "token_count", "INTEGER", 0, None, 0),
        (10, "finish_reason", "TEXT", 0, None, 0),
        (11, "reasoning", "TEXT", 0, None, 0),
        (12, "reasoning_content", "TEXT", 0, None, 0),
        (13, "reasoning_details", "TEXT", 0, None, 0),
        (14, "codex_reasoning_items", "TEXT", 0, None, 0),
        (15, "codex_message_items", "TEXT", 0, None, 0),
        (16, "platform_message_id", "TEXT", 0, None, 0),
        (17, "observed", "INTEGER", 0, Some("0"), 0),
        (18, "active", "INTEGER", 1, Some("1"), 0),
        (19, "compacted", "INTEGER", 1, Some("0"), 0),
        (20, "api_content", "TEXT", 0, None, 0),
        (21, "display_kind", "TEXT", 0, None, 0),
        (22, "display_metadata", "TEXT", 0, None, 0),
    ];

    /// `schema-v23.md` §4.4: DDL plus "Primary key positions: session_id 1,
    /// model 2, billing_provider 3, billing_base_url 4, billing_mode 5, task 6".
    pub const SESSION_MODEL_USAGE_COLUMNS: &[Column] = &[
        (0, "session_id", "TEXT", 1, None, 1),
        (1, "model", "TEXT", 1, None, 2),
        (2, "billing_provider", "TEXT", 1, Some("''"), 3),
        (3, "billing_base_url", "TEXT", 1, Some("''"), 4),
        (4, "billing_mode", "TEXT", 1, Some("''"), 5),
        (5, "task", "TEXT", 1, Some("''"), 6),
        (6, "api_call_count", "INTEGER", 1, Some("0"), 0),
        (7, "input_tokens", "INTEGER", 1, Some("0"), 0),
        (8, "output_tokens", "INTEGER", 1, Some("0"), 0),
        (9, "cache_read_tokens", "INTEGER", 1, Some("0"), 0),
        (10, "cache_write_tokens", "INTEGER", 1, Some("0"), 0),
        (11, "reasoning_tokens", "INTEGER", 1, Some("0"), 0),
        (12, "estimated_cost_usd", "REAL", 1, Some("0"), 0),
        (13, "actual_cost_usd", "REAL", 1, Some("0"), 0),
        (14, "cost_status", "TEXT", 0, None, 0),
        (15, "cost_source", "TEXT", 0, None, 0),
        (16, "first_seen", "REAL", 0, None, 0),
        (17, "last_seen", "REAL", 0, None, 0),
    ];

    /// `schema-v23.md` §4.5.
    pub const STATE_META_COLUMNS: &[Column] = &[
        (0, "key", "TEXT", 0, None, 1),
        (1, "value", "TEXT", 0, None, 0),
    ];

    /// `schema-v23.md` §4.6: "PK positions scope 1, session_key 2".
    pub const GATEWAY_ROUTING_COLUMNS: &[Column] = &[
        (0, "scope", "TEXT", 1, Some("''"), 1),
        (1, "session_key", "TEXT", 1, None, 2),
        (2, "entry_json", "TEXT", 1, None, 0),
        (3, "updated_at", "REAL", 1, None, 0),
    ];

    /// `schema-v23.md` §4.7.
    pub const COMPRESSION_LOCKS_COLUMNS: &[Column] = &[
        (0, "session_id", "TEXT", 0, None, 1),
        (1, "holder", "TEXT", 1, None, 0),
        (2, "acquired_at", "REAL", 1, None, 0),
        (3, "expires_at", "REAL", 1, None, 0),
    ];

    /// `schema-v23.md` §4.8 (defaults as stored: `''`, `'pending'`, `0`).
    pub const ASYNC_DELEGATIONS_COLUMNS: &[Column] = &[
        (0, "delegation_id", "TEXT", 0, None, 1),
        (1, "origin_session", "TEXT", 1, None, 0),
        (2, "origin_ui_session_id", "TEXT", 1, Some("''"), 0),
        (3, "parent_session_id", "TEXT", 0, None, 0),
        (4, "state", "TEXT", 1, None, 0),
        (5, "dispatched_at", "REAL", 1, None, 0),
        (6, "completed_at", "REAL", 0, None, 0),
        (7, "updated_at", "REAL", 1, None, 0),
        (8, "event_json", "TEXT", 0, None, 0),
        (9, "result_json", "TEXT", 0, None, 0),
        (10, "delivery_state", "TEXT", 1, Some("'pending'"), 0),
        (11, "delivery_attempts", "INTEGER", 1, Some("0"), 0),
        (12, "delivered_at", "REAL", 0, None, 0),
        (13, "owner_pid", "INTEGER", 0, None, 0),
        (14, "owner_started_at", "INTEGER", 0, None, 0),
        (15, "task_json", "TEXT", 0, None, 0),
        (16, "delivery_claim", "TEXT", 0, None, 0),
        (17, "delivery_claimed_at", "REAL", 0, None, 0),
    ];

    /// The eight tables of the main script, in `migrations.md` §2 step 6 order.
    pub const TABLE_COLUMNS: [(&str, &[Column]); 8] = [
        ("schema_version", SCHEMA_VERSION_COLUMNS),
        ("sessions", SESSIONS_COLUMNS),
        ("messages", MESSAGES_COLUMNS),
        ("session_model_usage", SESSION_MODEL_USAGE_COLUMNS),
        ("state_meta", STATE_META_COLUMNS),
        ("gateway_routing", GATEWAY_ROUTING_COLUMNS),
        ("compression_locks", COMPRESSION_LOCKS_COLUMNS),
        ("async_delegations", ASYNC_DELEGATIONS_COLUMNS),
    ];

    /// One index as `PRAGMA index_list` / `index_xinfo` describe it.
    pub struct Index {
        pub name: &'static str,
        pub table: &'static str,
        pub unique: bool,
        /// `c` (CREATE INDEX) or `pk` (primary-key autoindex).
        pub origin: &'static str,
        pub partial: bool,
        /// Key columns with their DESC flag; all collations are BINARY (`schema-v23.md` §5).
        pub columns: &'static [(&'static str, bool)],
    }

    const fn index(
        name: &'static str,
        table: &'static str,
        columns: &'static [(&'static str, bool)],
    ) -> Index {
        Index {
            name,
            table,
            unique: false,
            origin: "c",
            partial: false,
            columns,
        }
    }

    const fn autoindex(
        name: &'static str,
        table: &'static str,
        columns: &'static [(&'static str, bool)],
    ) -> Index {
        Index {
            name,
            table,
            unique: true,
            origin: "pk",
            partial: false,
            columns,
        }
    }

    const ASC: bool = false;
    const DESC: bool = true;

    /// `schema-v23.md` §3 and §5 (DESC only on `started_at` of
    /// idx_sessions_started, idx_sessions_session_key, idx_sessions_gateway_peer;
    /// partial: idx_messages_platform_msg_id, idx_messages_active_null,
    /// idx_sessions_title_unique, the last one also unique).
    pub const INDEXES: [Index; 22] = [
        autoindex("sqlite_autoindex_sessions_1", "sessions", &[("id", ASC)]),
        autoindex(
            "sqlite_autoindex_session_model_usage_1",
            "session_model_usage",
            &[
                ("session_id", ASC),
                ("model", ASC),
                ("billing_provider", ASC),
                ("billing_base_url", ASC),
                ("billing_mode", ASC),
                ("task", ASC),
            ],
        ),
        autoindex(
            "sqlite_autoindex_state_meta_1",
            "state_meta",
            &[("key", ASC)],
        ),
        autoindex(
            "sqlite_autoindex_gateway_routing_1",
            "gateway_routing",
            &[("scope", ASC), ("session_key", ASC)],
        ),
        autoindex(
            "sqlite_autoindex_compression_locks_1",
            "compression_locks",
            &[("session_id", ASC)],
        ),
        autoindex(
            "sqlite_autoindex_async_delegations_1",
            "async_delegations",
            &[("delegation_id", ASC)],
        ),
        index("idx_sessions_source", "sessions", &[("source", ASC)]),
        index(
            "idx_sessions_source_id",
            "sessions",
            &[("source", ASC), ("id", ASC)],
        ),
        index(
            "idx_sessions_parent",
            "sessions",
            &[("parent_session_id", ASC)],
        ),
        index("idx_sessions_started", "sessions", &[("started_at", DESC)]),
        index(
            "idx_messages_session",
            "messages",
            &[("session_id", ASC), ("timestamp", ASC)],
        ),
        index(
            "idx_compression_locks_expires",
            "compression_locks",
            &[("expires_at", ASC)],
        ),
        index(
            "idx_session_model_usage_session",
            "session_model_usage",
            &[("session_id", ASC)],
        ),
        index(
            "idx_session_model_usage_model",
            "session_model_usage",
            &[("model", ASC)],
        ),
        index(
            "idx_async_delegations_delivery",
            "async_delegations",
            &[("delivery_state", ASC), ("completed_at", ASC)],
        ),
        Index {
            partial: true,
            ..index(
                "idx_messages_platform_msg_id",
                "messages",
                &[("session_id", ASC), ("platform_message_id", ASC)],
            )
        },
        index(
            "idx_messages_session_active",
            "messages",
            &[("session_id", ASC), ("active", ASC), ("timestamp", ASC)],
        ),
        Index {
            partial: true,
            ..index("idx_messages_active_null", "messages", &[("active", ASC)])
        },
        index(
            "idx_sessions_session_key",
            "sessions",
            &[("session_key", ASC), ("started_at", DESC)],
        ),
        index(
            "idx_sessions_gateway_peer",
            "sessions",
            &[
                ("source", ASC),
                ("user_id", ASC),
                ("chat_id", ASC),
                ("chat_type", ASC),
                ("thread_id", ASC),
                ("started_at", DESC),
            ],
        ),
        index(
            "idx_sessions_handoff_state",
            "sessions",
            &[("handoff_state", ASC), ("started_at", ASC)],
        ),
        Index {
            unique: true,
            partial: true,
            ..index("idx_sessions_title_unique", "sessions", &[("title", ASC)])
        },
    ];

    /// `PRAGMA foreign_key_list` rows: `(id, seq, table, from, to, on_update, on_delete, match)`.
    pub type ForeignKey = (
        i64,
        i64,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    );

    /// `schema-v23.md` §4.2 (sessions → sessions, NO ACTION), §4.3 (messages,
    /// no ON DELETE action), §4.4 (session_model_usage, ON DELETE CASCADE); the
    /// other tables have none (§4.7: "No FK").
    pub const FOREIGN_KEYS: [(&str, &[ForeignKey]); 8] = [
        ("schema_version", &[]),
        (
            "sessions",
            &[(
                0,
                0,
                "sessions",
                "parent_session_id",
                "id",
                "NO ACTION",
                "NO ACTION",
                "NONE",
            )],
        ),
        (
            "messages",
            &[(
                0,
                0,
                "sessions",
                "session_id",
                "id",
                "NO ACTION",
                "NO ACTION",
                "NONE",
            )],
        ),
        (
            "session_model_usage",
            &[(
                0,
                0,
                "sessions",
                "session_id",
                "id",
                "NO ACTION",
                "CASCADE",
                "NONE",
            )],
        ),
        ("state_meta", &[]),
        ("gateway_routing", &[]),
        ("compression_locks", &[]),
        ("async_delegations", &[]),
    ];

    /// `migrations.md` §1.2, v1: the 14 `sessions` columns and 9 `messages` columns.
    pub const V1_SESSIONS: [&str; 14] = [
        "id",
        "source",
        "user_id",
        "model",
        "model_config",
        "system_prompt",
        "parent_session_id",
        "started_at",
        "ended_at",
        "end_reason",
        "message_count",
        "tool_call_count",
        "input_tokens",
        "output_tokens",
    ];

    /// See [`V1_SESSIONS`].
    pub const V1_MESSAGES: [&str; 9] = [
        "id",
        "session_id",
        "role",
        "content",
        "tool_call_id",
        "tool_calls",
        "tool_name",
        "timestamp",
        "token_count",
    ];

    /// The stored SQL of a table/view/trigger/virtual table from [`OBJECT_SQL`].
    pub fn object_sql(name: &str) -> &'static str {
        OBJECT_SQL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, sql)| *sql)
            .expect("object in the spec")
    }

    /// The stored SQL of a CJK object from [`CJK_OBJECT_SQL`].
    pub fn cjk_object_sql(name: &str) -> &'static str {
        CJK_OBJECT_SQL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, sql)| *sql)
            .expect("CJK object in the spec")
    }

    /// The spec's column line of `column` in the stored DDL of `table`
    /// (`migrations.md` §1.1: one definition text per column, for life).
    pub fn column_line(table: &str, column: &str) -> &'static str {
        object_sql(table)
            .lines()
            .map(|line| line.trim().trim_end_matches(','))
            .find(|line| line.split_whitespace().next() == Some(column))
            .expect("column in the spec DDL")
    }

    /// The table constraint line of a table, if any (`migrations.md` §1.1).
    pub fn constraint_line(table: &str) -> Option<&'static str> {
        object_sql(table)
            .lines()
            .map(|line| line.trim().trim_end_matches(','))
            .find(|line| line.starts_with("FOREIGN KEY") || line.starts_with("PRIMARY KEY"))
    }

    /// The columns of a table per [`TABLE_COLUMNS`].
    pub fn columns(table: &str) -> &'static [Column] {
        TABLE_COLUMNS
            .iter()
            .find(|(n, _)| *n == table)
            .map(|(_, c)| *c)
            .expect("table in the spec")
    }

    /// The definition an `ADD COLUMN` gives a column (`migrations.md` §3.1):
    /// type, then `NOT NULL` unless a primary-key member, then `DEFAULT x`.
    pub fn reconciler_definition(column: &Column) -> String {
        let (_, _, ty, notnull, default, pk) = *column;
        let mut parts = vec![ty.to_owned()];
        if notnull == 1 && pk == 0 {
            parts.push("NOT NULL".to_owned());
        }
        if let Some(default) = default {
            parts.push(format!("DEFAULT {default}"));
        }
        parts.join(" ")
    }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// One `sqlite_master` row: `(rowid, type, name, tbl_name, rootpage, sql)`.
type MasterRow = (i64, String, String, String, i64, Option<String>);

/// refinery's history table, appended after the v23 objects by design.
const HISTORY_TABLE: &str = "refinery_schema_history";

fn temp_db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("state.db");
    (dir, path)
}

fn open(path: &Path) -> (Connection, OpenReport) {
    open_writable(path)
        .unwrap_or_else(|error| panic!("open_writable({}) failed: {error}", path.display()))
}

fn open_error_kind(path: &Path) -> ErrorKind {
    match open_writable(path) {
        Ok((_, report)) => panic!(
            "open_writable({}) unexpectedly succeeded: {report:?}",
            path.display()
        ),
        Err(error) => error.kind(),
    }
}

/// A plain SQLite connection with none of the store's logic.
fn plain(path: &Path) -> Connection {
    Connection::open(path).expect("plain connection")
}

fn master(conn: &Connection) -> Vec<MasterRow> {
    let mut stmt = conn
        .prepare(
            "SELECT rowid, type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY rowid",
        )
        .expect("prepare");
    stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

fn inventory(conn: &Connection) -> Vec<(i64, String, String, String)> {
    master(conn)
        .into_iter()
        .map(|(rowid, ty, name, tbl, _, _)| (rowid, ty, name, tbl))
        .collect()
}

fn strings(conn: &Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(sql).expect("prepare");
    stmt.query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

fn count(conn: &Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT COUNT(*) FROM \"{table}\""), [], |r| {
        r.get(0)
    })
    .expect("count")
}

fn meta(conn: &Connection) -> Vec<(String, Option<String>)> {
    let mut stmt = conn
        .prepare("SELECT key, value FROM state_meta ORDER BY key")
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

fn schema_versions(conn: &Connection) -> Vec<i64> {
    let mut stmt = conn
        .prepare("SELECT version FROM schema_version")
        .expect("prepare");
    stmt.query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

fn pragma_i64(conn: &Connection, name: &str) -> i64 {
    conn.pragma_query_value(None, name, |r| r.get(0))
        .expect("pragma")
}

fn pragma_string(conn: &Connection, name: &str) -> String {
    conn.pragma_query_value(None, name, |r| r.get(0))
        .expect("pragma")
}

/// Every row of every ordinary (non-virtual) table, rows sorted, for
/// "nothing changed" comparisons.
fn dump(conn: &Connection) -> Vec<(String, Vec<Vec<Value>>)> {
    let tables = strings(
        conn,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name",
    );
    tables
        .into_iter()
        .map(|table| {
            let mut stmt = conn
                .prepare(&format!("SELECT * FROM \"{table}\""))
                .expect("prepare");
            let width = stmt.column_count();
            let mut rows: Vec<Vec<Value>> = stmt
                .query_map([], |r| (0..width).map(|i| r.get::<_, Value>(i)).collect())
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows");
            rows.sort_by_key(|row| format!("{row:?}"));
            (table, rows)
        })
        .collect()
}

/// `PRAGMA table_xinfo` as `(cid, name, type, notnull, dflt_value, pk, hidden)`.
type XInfo = (i64, String, String, i64, Option<String>, i64, i64);

fn table_xinfo(conn: &Connection, table: &str) -> Vec<XInfo> {
    let mut stmt = conn
        .prepare("SELECT cid, name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo(?1) ORDER BY cid")
        .expect("prepare");
    stmt.query_map([table], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
        ))
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

fn expected_xinfo(columns: &[spec::Column]) -> Vec<XInfo> {
    columns
        .iter()
        .map(|&(cid, name, ty, notnull, dflt, pk)| {
            (
                cid,
                name.to_owned(),
                ty.to_owned(),
                notnull,
                dflt.map(str::to_owned),
                pk,
                0,
            )
        })
        .collect()
}

/// A fresh table's stored text at an older version, by the layout rule of
/// `migrations.md` §1.1, with the column lines of the spec's v23 DDL.
fn historical_table_ddl(table: &str, columns: &[&str]) -> String {
    let mut lines: Vec<String> = columns
        .iter()
        .map(|c| format!("    {}", spec::column_line(table, c)))
        .collect();
    if let Some(constraint) = spec::constraint_line(table) {
        lines.push(format!("    {constraint}"));
    }
    format!(
        "CREATE TABLE IF NOT EXISTS {table} (\n{}\n)",
        lines.join(",\n")
    )
}

/// Deterministic pseudo-random bytes (xorshift64*).
fn pseudo_random_bytes(len: usize, mut state: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        out.extend_from_slice(&state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Makes a v23 store with the library, then runs `edit` on it through a plain
/// connection (closed afterwards, so no WAL content is left behind).
fn store_edited_by_hand(edit: &str) -> (TempDir, PathBuf) {
    let (dir, path) = temp_db();
    drop(open(&path));
    let conn = plain(&path);
    conn.execute_batch(edit).expect("hand edit");
    drop(conn);
    (dir, path)
}

fn assert_refused_untouched(path: &Path, expected: ErrorKind) {
    let before = std::fs::read(path).expect("read before");
    assert_eq!(
        open_error_kind(path),
        expected,
        "error kind for {}",
        path.display()
    );
    let after = std::fs::read(path).expect("read after");
    assert!(
        before == after,
        "{} changed although the open was refused",
        path.display()
    );
}

// ---------------------------------------------------------------------------
// A fresh file (schema-v23.md §2–§8)
// ---------------------------------------------------------------------------

#[test]
fn fresh_inventory_matches_spec() {
    let (_dir, path) = temp_db();
    let (conn, report) = open(&path);
    let rows = inventory(&conn);
    // Rows 1-48 of the spec, then the CJK objects of §6.6 (49-57).
    let expected: Vec<(i64, String, String, String)> = spec::INVENTORY
        .iter()
        .chain(&spec::CJK_INVENTORY)
        .map(|&(rowid, ty, name, tbl)| (rowid, ty.to_owned(), name.to_owned(), tbl.to_owned()))
        .collect();
    assert!(
        rows.len() >= expected.len(),
        "sqlite_master too short: {rows:#?}"
    );
    for (actual, wanted) in rows.iter().zip(&expected) {
        assert_eq!(actual, wanted, "sqlite_master row");
    }
    // By design, refinery's history table follows (with its autoindex, if any).
    let tail = &rows[expected.len()..];
    let history = |rowid: i64, ty: &str, name: &str| {
        (
            rowid,
            ty.to_owned(),
            name.to_owned(),
            HISTORY_TABLE.to_owned(),
        )
    };
    assert!(
        !tail.is_empty() && tail.len() <= 2,
        "unexpected objects after rowid 57: {tail:#?}"
    );
    assert_eq!(tail[0], history(58, "table", HISTORY_TABLE));
    if let Some(autoindex) = tail.get(1) {
        assert_eq!(
            *autoindex,
            history(59, "index", "sqlite_autoindex_refinery_schema_history_1")
        );
    }

    assert!(report.created, "a fresh file is created: {report:?}");
    assert_eq!(report.from_version, None);
    assert_eq!(report.to_version, 23);
    assert!(
        report.added_columns.is_empty(),
        "nothing to reconcile on a fresh file: {report:?}"
    );
    assert!(
        report.fts.rebuilt,
        "the first open rebuilds both FTS indexes (§3)"
    );
    assert!(
        report.fts.cjk_rebuilt,
        "the first open builds the CJK index: {report:?}"
    );
    assert!(!report.fts.cjk_marked_stale, "{report:?}");
    assert!(report.history.baselined);
    drop(conn);

    let (conn, report) = open(&path);
    assert!(
        !report.fts.cjk_rebuilt,
        "a healthy CJK index is left alone: {report:?}"
    );
    assert!(!report.fts.cjk_marked_stale, "{report:?}");
    assert_eq!(inventory(&conn), rows, "the second open adds no object");
}

#[test]
fn cjk_sql_follows_the_replacement_rule() {
    // schema-v23.md §6.6: the CJK view equals the trigram view with the name
    // replaced; the triggers equal the trigram triggers with the table name
    // and the two gate keys replaced. Checks the hand-written CJK texts.
    let from_trigram = |name: &str| -> String {
        spec::object_sql(name)
            .replace("messages_fts_trigram", "messages_fts_cjk")
            .replace("'fts_rebuild_high_water'", "'fts_cjk_rebuild_high_water'")
            .replace("'fts_rebuild_progress'", "'fts_cjk_rebuild_progress'")
    };
    for (trigram, cjk) in [
        ("messages_fts_trigram_src", "messages_fts_cjk_src"),
        ("messages_fts_trigram_insert", "messages_fts_cjk_insert"),
        ("messages_fts_trigram_delete", "messages_fts_cjk_delete"),
        ("messages_fts_trigram_update", "messages_fts_cjk_update"),
    ] {
        assert_eq!(spec::cjk_object_sql(cjk), from_trigram(trigram), "{cjk}");
    }
    assert_eq!(
        spec::cjk_object_sql("messages_fts_cjk"),
        from_trigram("messages_fts_trigram")
            .replace("tokenize='trigram'", "tokenize='cjk_unicode61'")
    );
}

#[test]
fn fresh_stored_sql_is_verbatim() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    let shadow_shapes = [
        ("_data", "(id INTEGER PRIMARY KEY, block BLOB)"),
        (
            "_idx",
            "(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID",
        ),
        ("_docsize", "(id INTEGER PRIMARY KEY, sz BLOB)"),
        ("_config", "(k PRIMARY KEY, v) WITHOUT ROWID"),
    ];
    let mut checked = BTreeSet::new();
    for (_, ty, name, tbl, _, sql) in master(&conn) {
        if tbl == HISTORY_TABLE || name == "sqlite_sequence" {
            continue;
        }
        if spec::AUTOINDEXES.contains(&name.as_str()) {
            assert_eq!(sql, None, "autoindex {name} has no SQL");
        } else if let Some((_, want)) = spec::INDEX_SQL.iter().find(|(n, _)| *n == name) {
            assert_eq!(ty, "index");
            assert_eq!(sql.as_deref(), Some(*want), "stored SQL of index {name}");
        } else if let Some((_, want)) = spec::OBJECT_SQL
            .iter()
            .chain(&spec::CJK_OBJECT_SQL)
            .find(|(n, _)| *n == name)
        {
            assert_eq!(sql.as_deref(), Some(*want), "stored SQL of {ty} {name}");
        } else if spec::SHADOW_TABLES
            .iter()
            .chain(&spec::CJK_SHADOW_TABLES)
            .any(|n| *n == name)
        {
            let (_, shape) = shadow_shapes
                .iter()
                .find(|(suffix, _)| name.ends_with(suffix))
                .expect("shadow suffix");
            let sql = sql.expect("shadow tables have SQL");
            assert!(
                sql.ends_with(shape),
                "shadow table {name}: {sql:?} does not end with {shape:?}"
            );
        } else {
            panic!("object not in the spec: {ty} {name}");
        }
        checked.insert(name);
    }
    let wanted: BTreeSet<String> = spec::AUTOINDEXES
        .iter()
        .chain(spec::INDEX_SQL.iter().map(|(n, _)| n))
        .chain(spec::OBJECT_SQL.iter().map(|(n, _)| n))
        .chain(spec::SHADOW_TABLES.iter())
        .chain(spec::CJK_OBJECT_SQL.iter().map(|(n, _)| n))
        .chain(spec::CJK_SHADOW_TABLES.iter())
        .map(|n| (*n).to_owned())
        .collect();
    assert_eq!(checked, wanted, "every object of the spec was found");
}

#[test]
fn fresh_table_info_matches_spec() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    for (table, columns) in spec::TABLE_COLUMNS {
        let actual = table_xinfo(&conn, table);
        let expected = expected_xinfo(columns);
        for (live, want) in actual.iter().zip(&expected) {
            assert_eq!(live, want, "PRAGMA table_xinfo({table}) row {}", want.0);
        }
        assert_eq!(actual.len(), expected.len(), "number of columns of {table}");
    }

    for (table, _) in spec::TABLE_COLUMNS {
        let mut stmt = conn
            .prepare(
                "SELECT name, \"unique\", origin, partial FROM pragma_index_list(?1) ORDER BY name",
            )
            .expect("prepare");
        let actual: Vec<(String, bool, String, bool)> = stmt
            .query_map([table], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        let mut expected: Vec<(String, bool, String, bool)> = spec::INDEXES
            .iter()
            .filter(|i| i.table == table)
            .map(|i| (i.name.to_owned(), i.unique, i.origin.to_owned(), i.partial))
            .collect();
        expected.sort();
        assert_eq!(actual, expected, "PRAGMA index_list({table})");
    }

    for index in &spec::INDEXES {
        let mut stmt = conn
            .prepare(
                "SELECT cid, name, \"desc\", coll, key FROM pragma_index_xinfo(?1) ORDER BY seqno",
            )
            .expect("prepare");
        let actual: Vec<(i64, Option<String>, bool, String, bool)> = stmt
            .query_map([index.name], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        let (keys, rest): (Vec<_>, Vec<_>) = actual.into_iter().partition(|row| row.4);
        let keys: Vec<(Option<String>, bool, String)> =
            keys.into_iter().map(|(_, n, d, c, _)| (n, d, c)).collect();
        let expected: Vec<(Option<String>, bool, String)> = index
            .columns
            .iter()
            .map(|&(n, desc)| (Some(n.to_owned()), desc, "BINARY".to_owned()))
            .collect();
        assert_eq!(keys, expected, "key columns of {}", index.name);
        // Rowid tables only: the one auxiliary column is the rowid.
        assert_eq!(
            rest.len(),
            1,
            "auxiliary columns of {}: {rest:?}",
            index.name
        );
        assert_eq!(
            rest[0].0, -1,
            "auxiliary column of {} is the rowid",
            index.name
        );
    }

    for (table, keys) in spec::FOREIGN_KEYS {
        let mut stmt = conn
            .prepare(
                "SELECT id, seq, \"table\", \"from\", \"to\", on_update, on_delete, \"match\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
            )
            .expect("prepare");
        type Fk = (i64, i64, String, String, String, String, String, String);
        let actual: Vec<Fk> = stmt
            .query_map([table], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                ))
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        let expected: Vec<Fk> = keys
            .iter()
            .map(|&(id, seq, t, from, to, upd, del, m)| {
                (
                    id,
                    seq,
                    t.to_owned(),
                    from.to_owned(),
                    to.to_owned(),
                    upd.to_owned(),
                    del.to_owned(),
                    m.to_owned(),
                )
            })
            .collect();
        assert_eq!(actual, expected, "PRAGMA foreign_key_list({table})");
    }
}

#[test]
fn fresh_contents_match_spec() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);

    assert_eq!(
        schema_versions(&conn),
        vec![23],
        "schema_version holds exactly one row (23)"
    );
    assert!(
        meta(&conn).is_empty(),
        "state_meta is empty after the first open: {:?}",
        meta(&conn)
    );

    for fts in ["messages_fts", "messages_fts_trigram", "messages_fts_cjk"] {
        let config: Vec<(String, i64)> = {
            let mut stmt = conn
                .prepare(&format!("SELECT k, v FROM {fts}_config ORDER BY k"))
                .expect("prepare");
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows")
        };
        assert_eq!(config, vec![("version".to_owned(), 4)], "{fts}_config");
        let data: Vec<(i64, Vec<u8>)> = {
            let mut stmt = conn
                .prepare(&format!("SELECT id, block FROM {fts}_data ORDER BY id"))
                .expect("prepare");
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows")
        };
        assert_eq!(
            data,
            vec![(1, vec![0u8; 4]), (10, vec![0u8; 7])],
            "{fts}_data (FTS5 'rebuild' on the first open)"
        );
    }

    // "every other table is empty"
    for table in strings(
        &conn,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY rowid",
    ) {
        let expected = match table.as_str() {
            "schema_version" | HISTORY_TABLE => 1,
            t if t.ends_with("_data") => 2,
            t if t.ends_with("_config") => 1,
            _ => 0,
        };
        assert_eq!(count(&conn, &table), expected, "rows in {table}");
    }

    assert_eq!(pragma_i64(&conn, "foreign_keys"), 1, "foreign_keys");
    assert_eq!(pragma_i64(&conn, "busy_timeout"), 1000, "busy_timeout");
    assert_eq!(
        pragma_string(&conn, "journal_mode"),
        "wal",
        "journal_mode (SQLite 3.54.1 is not affected)"
    );
    assert_eq!(pragma_i64(&conn, "page_size"), 4096, "page_size");
    assert_eq!(pragma_i64(&conn, "user_version"), 0, "user_version");
    assert_eq!(pragma_i64(&conn, "application_id"), 0, "application_id");
    assert_eq!(pragma_i64(&conn, "auto_vacuum"), 0, "auto_vacuum");
    assert_eq!(pragma_string(&conn, "encoding"), "UTF-8", "encoding");
    assert_eq!(
        pragma_i64(&conn, "synchronous"),
        2,
        "synchronous is not set (compiled default FULL)"
    );
    assert!(
        conn.is_autocommit(),
        "the returned connection is in autocommit mode"
    );

    // Header bytes 18-19 are 2,2 for a WAL database (§2.2).
    let header = std::fs::read(&path).expect("read db");
    assert_eq!(&header[..16], b"SQLite format 3\0");
    assert_eq!((header[18], header[19]), (2, 2), "WAL header bytes");
}

#[test]
fn second_open_stamps_fts_storage_version() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    let first = master(&conn);
    drop(conn);

    let (conn, report) = open(&path);
    assert_eq!(
        meta(&conn),
        vec![("fts_storage_version".to_owned(), Some("1".to_owned()))]
    );
    assert_eq!(
        master(&conn),
        first,
        "the second open changes no schema object"
    );
    assert!(!report.fts.rebuilt, "all six triggers existed: no rebuild");
    assert!(
        !report.fts.cjk_rebuilt,
        "the CJK index is healthy: no rebuild"
    );
    let second = dump(&conn);
    drop(conn);

    let (conn, _) = open(&path);
    assert_eq!(
        master(&conn),
        first,
        "the third open changes no schema object"
    );
    assert_eq!(dump(&conn), second, "the third open changes no row");
}

// ---------------------------------------------------------------------------
// The refinery baseline
// ---------------------------------------------------------------------------

/// `(type, name, sql)` of every object except FTS shadow tables and refinery's.
fn schema_objects(conn: &Connection) -> BTreeSet<(String, String, Option<String>)> {
    master(conn)
        .into_iter()
        .filter(|(_, _, name, tbl, _, _)| {
            !spec::SHADOW_TABLES.contains(&name.as_str()) && tbl != HISTORY_TABLE
        })
        .map(|(_, ty, name, _, _, sql)| (ty, name, sql))
        .collect()
}

#[test]
fn v1_baseline_migration_equals_open() {
    let baseline = include_str!("../migrations/V1__v23_baseline.sql");
    let scripted = Connection::open_in_memory().expect("memory db");
    scripted.execute_batch(baseline).expect("V1 baseline runs");

    let (_dir, path) = temp_db();
    let (opened, _) = open(&path);

    // The open adds the optional CJK objects of §6.6 (the baseline is the
    // spec's default schema without them): exactly these nine.
    let cjk_objects: Vec<(String, String)> = master(&opened)
        .into_iter()
        .filter(|(_, _, name, _, _, _)| spec::is_cjk_object(name))
        .map(|(_, ty, name, _, _, _)| (ty, name))
        .collect();
    let expected_cjk: Vec<(String, String)> = spec::CJK_INVENTORY
        .iter()
        .map(|&(_, ty, name, _)| (ty.to_owned(), name.to_owned()))
        .collect();
    assert_eq!(cjk_objects, expected_cjk, "CJK objects of the opened store");

    let (scripted, opened) = (schema_objects(&scripted), schema_objects(&opened));
    let scripted_cjk: Vec<_> = scripted
        .iter()
        .filter(|(_, name, _)| spec::is_cjk_object(name))
        .collect();
    assert!(
        scripted_cjk.is_empty(),
        "the V1 baseline has no CJK object: {scripted_cjk:#?}"
    );
    let opened: BTreeSet<_> = opened
        .into_iter()
        .filter(|(_, name, _)| !spec::is_cjk_object(name))
        .collect();
    let only_in_script: Vec<_> = scripted.difference(&opened).collect();
    let only_in_open: Vec<_> = opened.difference(&scripted).collect();
    assert!(
        only_in_script.is_empty() && only_in_open.is_empty(),
        "V1 baseline and open_writable differ.\nonly in V1: {only_in_script:#?}\nonly after open: {only_in_open:#?}"
    );
    assert_eq!(
        scripted.len(),
        spec::INVENTORY.len() - spec::SHADOW_TABLES.len()
    );
}

#[test]
fn refinery_history_records_the_baseline_once() {
    let (_dir, path) = temp_db();
    drop(open(&path));
    let (conn, report) = open(&path);
    assert!(
        !report.history.baselined,
        "the baseline is recorded on the first open only"
    );
    assert!(report.history.applied.is_empty(), "{report:?}");
    let rows: Vec<(i64, String)> = {
        let mut stmt = conn
            .prepare("SELECT version, name FROM refinery_schema_history")
            .expect("prepare");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    assert_eq!(rows, vec![(1, "v23_baseline".to_owned())]);
}

#[test]
fn migration_files_are_lf_only_and_well_named() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("migrations dir") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("UTF-8 file name")
            .to_owned();
        let stem = name
            .strip_suffix(".sql")
            .unwrap_or_else(|| panic!("{name}: not a .sql file"));
        let rest = stem
            .strip_prefix('V')
            .unwrap_or_else(|| panic!("{name}: does not start with V"));
        let (number, label) = rest
            .split_once("__")
            .unwrap_or_else(|| panic!("{name}: no `__` separator"));
        assert!(
            !number.is_empty()
                && number.bytes().all(|b| b.is_ascii_digit())
                && !number.starts_with('0'),
            "{name}: version must be a positive number"
        );
        assert!(
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_'),
            "{name}: name must be [A-Za-z0-9_]+"
        );
        let bytes = std::fs::read(&path).expect("read migration");
        assert!(
            !bytes.contains(&b'\r'),
            "{name}: contains a carriage return"
        );
        seen += 1;
    }
    assert!(seen >= 1, "no migration files found in {}", dir.display());
}

// ---------------------------------------------------------------------------
// Existing files (migrations.md §2, §3.1, §4.6)
// ---------------------------------------------------------------------------

#[test]
fn reconciler_appends_missing_columns_in_declared_order() {
    let (_dir, path) = temp_db();
    let v1_sessions = historical_table_ddl("sessions", &spec::V1_SESSIONS);
    let v1_messages = historical_table_ddl("messages", &spec::V1_MESSAGES);
    {
        let conn = plain(&path);
        conn.execute_batch(&historical_table_ddl("schema_version", &["version"]))
            .expect("schema_version");
        conn.execute_batch(&v1_sessions).expect("v1 sessions");
        conn.execute_batch(&v1_messages).expect("v1 messages");
        conn.execute_batch(
            "INSERT INTO schema_version (version) VALUES (23);
             INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1.5);
             INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', 'hello', 2.5);",
        )
        .expect("seed");
    }

    let (conn, report) = open(&path);
    assert_eq!(report.from_version, Some(23));
    let mut expected_added = Vec::new();
    for (table, v1) in [
        ("sessions", &spec::V1_SESSIONS[..]),
        ("messages", &spec::V1_MESSAGES[..]),
    ] {
        let spec_columns = spec::columns(table);
        let missing: Vec<&spec::Column> =
            spec_columns.iter().filter(|c| !v1.contains(&c.1)).collect();
        let order: Vec<&str> = v1
            .iter()
            .copied()
            .chain(missing.iter().map(|c| c.1))
            .collect();

        // Live order: the v1 columns, then the missing ones in declaration order,
        // each with the type / NOT NULL / default of the spec (schema-v23.md §9 item 1).
        let live = table_xinfo(&conn, table);
        let live_names: Vec<&str> = live.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(live_names, order, "column order of {table}");
        for (cid, name) in order.iter().enumerate() {
            let (_, _, ty, notnull, dflt, pk) = *spec_columns
                .iter()
                .find(|c| c.1 == *name)
                .expect("spec column");
            let want = (
                cid as i64,
                name.to_string(),
                ty.to_owned(),
                notnull,
                dflt.map(str::to_owned),
                pk,
                0,
            );
            assert_eq!(live[cid], want, "{table}.{name}");
        }

        // Stored text: `, "<name>" <definition>` spliced before the table
        // constraints, or before the closing parenthesis (§9 item 2).
        let spliced: String = missing
            .iter()
            .map(|c| format!(", \"{}\" {}", c.1, spec::reconciler_definition(c)))
            .collect();
        let stored_v1 = if table == "sessions" {
            &v1_sessions
        } else {
            &v1_messages
        }
        .replace(" IF NOT EXISTS", "");
        let expected_sql = match spec::constraint_line(table) {
            Some(constraint) => {
                let tail = format!(",\n    {constraint}\n)");
                format!(
                    "{}{spliced}{tail}",
                    stored_v1.strip_suffix(&tail).expect("v1 tail")
                )
            }
            None => format!(
                "{}{spliced})",
                stored_v1.strip_suffix(')').expect("v1 tail")
            ),
        };
        let stored: String = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = ?1",
                [table],
                |r| r.get(0),
            )
            .expect("sql");
        assert_eq!(stored, expected_sql, "stored CREATE TABLE text of {table}");
        expected_added.extend(missing.iter().map(|c| (table.to_owned(), c.1.to_owned())));
    }

    // Literal definitions from migrations.md §3.1 / schema-v23.md §9.
    let sessions_sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'sessions'",
            [],
            |r| r.get(0),
        )
        .expect("sql");
    let messages_sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'messages'",
            [],
            |r| r.get(0),
        )
        .expect("sql");
    for needle in [
        "output_tokens INTEGER DEFAULT 0, \"session_key\" TEXT, \"chat_id\" TEXT",
        "\"expiry_finalized\" INTEGER DEFAULT 0",
        "\"compression_fallback_streak\" INTEGER NOT NULL DEFAULT 0",
        "\"pinned\" INTEGER NOT NULL DEFAULT 0,\n    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)\n)",
    ] {
        assert!(
            sessions_sql.contains(needle),
            "sessions SQL lacks {needle:?}:\n{sessions_sql}"
        );
    }
    for needle in [
        "token_count INTEGER\n, \"effect_disposition\" TEXT, \"finish_reason\" TEXT, \"reasoning\" TEXT, \"reasoning_content\" TEXT",
        "\"observed\" INTEGER DEFAULT 0",
        "\"active\" INTEGER NOT NULL DEFAULT 1",
        "\"compacted\" INTEGER NOT NULL DEFAULT 0",
    ] {
        assert!(
            messages_sql.contains(needle),
            "messages SQL lacks {needle:?}:\n{messages_sql}"
        );
    }

    let added: Vec<(String, String)> = report
        .added_columns
        .iter()
        .map(|c| (c.table.clone(), c.column.clone()))
        .collect();
    assert_eq!(added, expected_added, "OpenReport.added_columns");

    // Existing rows take the defaults of the added columns.
    let (pinned, streak, expiry): (i64, i64, i64) = conn
        .query_row(
            "SELECT pinned, compression_fallback_streak, expiry_finalized FROM sessions WHERE id = 's1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("session");
    assert_eq!((pinned, streak, expiry), (0, 0, 0));
    let (active, compacted, observed): (i64, i64, i64) = conn
        .query_row(
            "SELECT active, compacted, observed FROM messages",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("message");
    assert_eq!((active, compacted, observed), (1, 0, 0));

    // Every v23 object exists now; the optional CJK index is not created
    // on an existing file (a running original may lack its tokenizer).
    let names: BTreeSet<String> = master(&conn).into_iter().map(|row| row.2).collect();
    for (_, _, name, _) in spec::INVENTORY.iter() {
        assert!(names.contains(*name), "{name} missing after the upgrade");
    }
    for (_, _, name, _) in spec::CJK_INVENTORY.iter() {
        assert!(!names.contains(*name), "{name} created on an existing file");
    }
    let sql_after_first = master(&conn);
    drop(conn);

    let (conn, report) = open(&path);
    assert!(
        report.added_columns.is_empty(),
        "second open adds nothing: {:?}",
        report.added_columns
    );
    assert_eq!(
        master(&conn),
        sql_after_first,
        "second open changes no schema object"
    );
}

#[test]
fn reconciler_keeps_unknown_columns_and_tables() {
    let (_dir, path) = store_edited_by_hand(
        "ALTER TABLE sessions ADD COLUMN last_activity_at REAL;
         CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL);
         INSERT INTO system_prompts VALUES ('h1', 'be nice');
         INSERT INTO sessions (id, source, started_at, last_activity_at) VALUES ('s1', 'cli', 1.0, 42.5);",
    );
    let (conn, report) = open(&path);
    assert!(
        report.added_columns.is_empty(),
        "{:?}",
        report.added_columns
    );
    let names: Vec<String> = table_xinfo(&conn, "sessions")
        .into_iter()
        .map(|c| c.1)
        .collect();
    assert_eq!(
        names.last().map(String::as_str),
        Some("last_activity_at"),
        "unknown column kept at the end"
    );
    assert_eq!(names.len(), spec::SESSIONS_COLUMNS.len() + 1);
    let value: f64 = conn
        .query_row(
            "SELECT last_activity_at FROM sessions WHERE id = 's1'",
            [],
            |r| r.get(0),
        )
        .expect("value");
    assert_eq!(value, 42.5);
    let prompt: String = conn
        .query_row(
            "SELECT prompt FROM system_prompts WHERE hash = 'h1'",
            [],
            |r| r.get(0),
        )
        .expect("table kept");
    assert_eq!(prompt, "be nice");
}

/// An early gateway_routing keyed on session_key alone (migrations.md §4.8).
const ROUTING_KEYED_BY_SESSION_KEY: &str = "DROP TABLE gateway_routing;
     CREATE TABLE gateway_routing (
         session_key TEXT PRIMARY KEY,
         entry_json TEXT NOT NULL,
         updated_at REAL NOT NULL
     );
     INSERT INTO gateway_routing VALUES ('k', '{}', 1.0);";

#[test]
fn reconciler_drops_not_null_on_primary_key_members() {
    // The reconciler adds `scope` without NOT NULL, as schema-v23.md §9 item 6
    // says. The open then heals this key shape (see the next test), which
    // replaces the table, so the reconciler step is checked on its own here.
    let (_dir, path) = store_edited_by_hand(ROUTING_KEYED_BY_SESSION_KEY);
    let conn = plain(&path);
    conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
    let added: Vec<(String, String)> = hermes_state_schema::reconcile::reconcile_columns(&conn)
        .expect("reconcile")
        .iter()
        .map(|c| (c.table.clone(), c.column.clone()))
        .collect();
    conn.execute_batch("COMMIT").expect("commit");
    assert_eq!(
        added,
        vec![("gateway_routing".to_owned(), "scope".to_owned())]
    );
    let sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'gateway_routing'",
            [],
            |r| r.get(0),
        )
        .expect("sql");
    assert!(
        sql.ends_with(", \"scope\" TEXT DEFAULT '')"),
        "stored text: {sql}"
    );
    let scope = table_xinfo(&conn, "gateway_routing")
        .into_iter()
        .find(|c| c.1 == "scope")
        .expect("scope column");
    assert_eq!(
        scope,
        (
            3,
            "scope".to_owned(),
            "TEXT".to_owned(),
            0,
            Some("''".to_owned()),
            0,
            0
        )
    );
    let value: String = conn
        .query_row(
            "SELECT scope FROM gateway_routing WHERE session_key = 'k'",
            [],
            |r| r.get(0),
        )
        .expect("row");
    assert_eq!(value, "");
}

#[test]
fn open_heals_routing_keyed_by_session_key() {
    // Through the open, the reconciler still reports `scope`, then the key heal
    // of later v23-era builds (migrations.md §4.8, §4.9) rebuilds the table
    // with the v23 text and key, keeping the row.
    let (_dir, path) = store_edited_by_hand(ROUTING_KEYED_BY_SESSION_KEY);
    let (conn, report) = open(&path);
    let added: Vec<(String, String)> = report
        .added_columns
        .iter()
        .map(|c| (c.table.clone(), c.column.clone()))
        .collect();
    assert_eq!(
        added,
        vec![("gateway_routing".to_owned(), "scope".to_owned())]
    );
    let sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'gateway_routing'",
            [],
            |r| r.get(0),
        )
        .expect("sql");
    assert_eq!(sql, spec::object_sql("gateway_routing"));
    assert_eq!(
        table_xinfo(&conn, "gateway_routing"),
        expected_xinfo(spec::GATEWAY_ROUTING_COLUMNS)
    );
    assert!(
        strings(
            &conn,
            "SELECT name FROM sqlite_master WHERE name = 'gateway_routing_legacy_pk'"
        )
        .is_empty(),
        "the renamed old table is dropped"
    );
    let row: (String, String, String, f64) = conn
        .query_row(
            "SELECT scope, session_key, entry_json, updated_at FROM gateway_routing",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .expect("the row is kept");
    assert_eq!(row, (String::new(), "k".to_owned(), "{}".to_owned(), 1.0));
    assert_eq!(count(&conn, "gateway_routing"), 1);
}

#[test]
fn v22_rebuild_ignores_operational_errors() {
    // A stored version below 22 with a 5-column-key usage table, plus a table
    // already named session_model_usage_v21: the v22 block's RENAME fails with
    // an operational error ("there is already another table ..."), which the
    // original ignores (migrations.md §3.2, v22 row: "operational errors
    // ignored; integrity errors propagate"). The open must succeed.
    let (_dir, path) = store_edited_by_hand(
        "DROP TABLE session_model_usage;
         CREATE TABLE session_model_usage (
             session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
             model TEXT NOT NULL,
             billing_provider TEXT NOT NULL DEFAULT '',
             billing_base_url TEXT NOT NULL DEFAULT '',
             billing_mode TEXT NOT NULL DEFAULT '',
             PRIMARY KEY (session_id, model, billing_provider, billing_base_url, billing_mode)
         );
         CREATE TABLE session_model_usage_v21 (leftover TEXT);
         UPDATE schema_version SET version = 21;",
    );
    let (conn, report) =
        open_writable(&path).unwrap_or_else(|error| panic!("open failed: {error}"));
    assert_eq!(report.from_version, Some(21));
    assert_eq!(report.to_version, 23);
    assert_eq!(schema_versions(&conn), vec![23]);
}

#[test]
fn duplicate_titles_are_cleared_except_newest() {
    // Inserted in this order (rowid order), ids deliberately not sorted.
    let (_dir, path) = store_edited_by_hand(
        "DROP INDEX idx_sessions_title_unique;
         INSERT INTO sessions (id, source, started_at, title) VALUES
             ('z', 'cli', 1.0, 'Alpha'),
             ('a', 'cli', 2.0, 'Alpha'),
             ('m', 'cli', 3.0, 'Beta'),
             ('b', 'cli', 4.0, 'Alpha'),
             ('y', 'cli', 5.0, 'Beta'),
             ('c', 'cli', 6.0, NULL),
             ('d', 'cli', 7.0, 'Gamma');",
    );
    let (conn, _) = open(&path);
    let titles: Vec<(String, Option<String>)> = {
        let mut stmt = conn
            .prepare("SELECT id, title FROM sessions ORDER BY rowid")
            .expect("prepare");
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    let expected: Vec<(String, Option<String>)> = [
        ("z", None),
        ("a", None),
        ("m", None),
        ("b", Some("Alpha")),
        ("y", Some("Beta")),
        ("c", None),
        ("d", Some("Gamma")),
    ]
    .iter()
    .map(|(id, t)| ((*id).to_owned(), t.map(str::to_owned)))
    .collect();
    assert_eq!(titles, expected);
    let sql: Option<String> = conn
        .query_row("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'idx_sessions_title_unique'", [], |r| {
            r.get(0)
        })
        .expect("the unique title index exists");
    let (_, want) = spec::INDEX_SQL
        .iter()
        .find(|(n, _)| *n == "idx_sessions_title_unique")
        .expect("spec");
    assert_eq!(sql.as_deref(), Some(*want));
}

#[test]
fn existing_store_opens_without_changes() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    conn.execute_batch(
        "INSERT INTO sessions (id, source, started_at, title) VALUES ('s1', 'cli', 1.0, 'First');
         INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', 'user', 'hello world', 2.0);
         INSERT INTO messages (session_id, role, content, tool_name, timestamp) VALUES ('s1', 'tool', 'ok', 'shell', 3.0);
         INSERT INTO session_model_usage (session_id, model, input_tokens) VALUES ('s1', 'm', 10);
         INSERT INTO state_meta (key, value) VALUES ('custom_key', 'kept');",
    )
    .expect("seed");
    let master_1 = master(&conn);
    let dump_1 = dump(&conn);
    drop(conn);

    let (conn, report) = open(&path);
    assert!(!report.created);
    assert_eq!(report.from_version, Some(23));
    assert_eq!(report.to_version, 23);
    assert!(report.added_columns.is_empty());
    assert!(!report.fts.rebuilt);
    assert!(!report.fts.cjk_rebuilt);
    assert_eq!(master(&conn), master_1, "sqlite_master unchanged");
    let dump_2 = dump(&conn);
    // The only difference the second open may make is the fts_storage_version stamp (`schema-v23.md` §8).
    let without_meta = |d: &[(String, Vec<Vec<Value>>)]| -> Vec<(String, Vec<Vec<Value>>)> {
        d.iter()
            .filter(|(t, _)| t != "state_meta")
            .cloned()
            .collect()
    };
    assert_eq!(
        without_meta(&dump_2),
        without_meta(&dump_1),
        "rows unchanged"
    );
    assert_eq!(
        meta(&conn),
        vec![
            ("custom_key".to_owned(), Some("kept".to_owned())),
            ("fts_storage_version".to_owned(), Some("1".to_owned())),
        ]
    );
    let hits: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'hello'",
            [],
            |r| r.get(0),
        )
        .expect("fts query");
    assert_eq!(
        hits, 1,
        "the FTS index still serves the row written before the reopen"
    );
    drop(conn);

    let (conn, report) = open(&path);
    assert!(!report.created);
    assert_eq!((report.from_version, report.to_version), (Some(23), 23));
    assert_eq!(master(&conn), master_1);
    assert_eq!(dump(&conn), dump_2, "the third open changes nothing at all");
}

/// Inserts a message through `conn` and returns its id.
fn insert_message(conn: &Connection, role: &str, content: &str) -> rusqlite::Result<i64> {
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s1', ?1, ?2, 1.0)",
        [role, content],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Rowids the CJK index returns for an FTS5 query, in rowid order.
fn cjk_hits(conn: &Connection, query: &str) -> Vec<i64> {
    let mut stmt = conn
        .prepare(
            "SELECT rowid FROM messages_fts_cjk WHERE messages_fts_cjk MATCH ?1 ORDER BY rowid",
        )
        .expect("prepare");
    stmt.query_map([query], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

fn cjk_triggers(conn: &Connection) -> Vec<String> {
    strings(
        conn,
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name IN ('messages_fts_cjk_insert', 'messages_fts_cjk_delete', 'messages_fts_cjk_update') ORDER BY rowid",
    )
}

fn cjk_meta(conn: &Connection) -> Vec<(String, Option<String>)> {
    meta(conn)
        .into_iter()
        .filter(|(k, _)| k.starts_with("fts_cjk_"))
        .collect()
}

#[test]
fn cjk_rule_without_tokenizer_marks_stale() {
    let (_dir, path) = temp_db();
    drop(open(&path));

    // A process without the tokenizer (plain connection): every message write
    // fails because of the live CJK triggers (schema-v23.md §6.6, §10).
    let conn = plain(&path);
    conn.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1.0)",
        [],
    )
    .expect("sessions have no CJK trigger");
    let error = insert_message(&conn, "user", "before the rule")
        .expect_err("a message write reaches messages_fts_cjk");
    assert!(
        error
            .to_string()
            .contains("no such tokenizer: cjk_unicode61"),
        "error: {error}"
    );
    assert_eq!(count(&conn, "messages"), 0);

    // The tokenizer-absent rule, as the open would run it without the tokenizer.
    conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
    let setup = hermes_state_schema::fts::set_up(&conn, 6, false, false).expect("set_up");
    conn.execute_batch("COMMIT").expect("commit");
    assert!(setup.cjk_marked_stale, "{setup:?}");
    assert!(!setup.cjk_rebuilt, "{setup:?}");
    assert!(!setup.rebuilt, "all six triggers existed: {setup:?}");

    assert_eq!(
        cjk_meta(&conn),
        vec![("fts_cjk_stale".to_owned(), Some("1".to_owned()))]
    );
    assert!(
        cjk_triggers(&conn).is_empty(),
        "cjk triggers dropped: {:?}",
        cjk_triggers(&conn)
    );
    let kept: Vec<(String, String)> = master(&conn)
        .into_iter()
        .filter(|(_, ty, name, _, _, _)| spec::is_cjk_object(name) && ty != "trigger")
        .map(|(_, ty, name, _, _, _)| (ty, name))
        .collect();
    let expected_kept: Vec<(String, String)> = spec::CJK_INVENTORY
        .iter()
        .filter(|(_, ty, _, _)| *ty != "trigger")
        .map(|&(_, ty, name, _)| (ty.to_owned(), name.to_owned()))
        .collect();
    assert_eq!(
        kept, expected_kept,
        "the view and table (with shadows) are kept"
    );

    // Message writes work again on the tokenizer-less connection.
    let id = insert_message(&conn, "user", "after the rule").expect("message write");
    assert_eq!(count(&conn, "messages"), 1);
    let hits: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'rule'",
            [],
            |r| r.get(0),
        )
        .expect("fts query");
    assert_eq!((id, hits), (1, 1), "the base index still follows the write");

    // Nothing left to do for the rule the next time.
    conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
    let setup = hermes_state_schema::fts::set_up(&conn, 6, false, false).expect("set_up");
    conn.execute_batch("COMMIT").expect("commit");
    assert!(!setup.cjk_marked_stale, "{setup:?}");
    assert_eq!(
        cjk_meta(&conn),
        vec![("fts_cjk_stale".to_owned(), Some("1".to_owned()))]
    );
}

#[test]
fn stale_cjk_index_stays_stale_at_open_until_the_explicit_reset() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    conn.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1.0)",
        [],
    )
    .expect("session");
    let first = insert_message(&conn, "user", "数据库优化").expect("message");
    insert_message(&conn, "assistant", "plain english reply").expect("message");
    insert_message(&conn, "tool", "数据库 tool output").expect("message");
    assert_eq!(
        cjk_hits(&conn, "\"据库\""),
        vec![first],
        "the live index follows library writes (tool rows excluded)"
    );
    drop(conn);

    // The original without the tokenizer touched the file: it marked the
    // index stale, dropped the triggers, and wrote a message.
    let conn = plain(&path);
    conn.execute_batch(
        "INSERT INTO state_meta (key, value) VALUES ('fts_cjk_stale', '1');
         DROP TRIGGER messages_fts_cjk_insert;
         DROP TRIGGER messages_fts_cjk_delete;
         DROP TRIGGER messages_fts_cjk_update;",
    )
    .expect("stale by hand");
    let while_stale =
        insert_message(&conn, "user", "我们的数据库").expect("write without the tokenizer");

    // Our writable open (the original's connection still open) leaves it as it is.
    let master_before = master(&conn);
    let (ours, report) = open(&path);
    assert!(!report.fts.cjk_rebuilt, "{report:?}");
    assert!(!report.fts.cjk_marked_stale, "{report:?}");
    assert!(
        !report.fts.rebuilt,
        "the six base/trigram triggers are intact"
    );
    assert!(cjk_triggers(&ours).is_empty(), "no CJK trigger recreated");
    assert_eq!(
        cjk_meta(&ours),
        vec![("fts_cjk_stale".to_owned(), Some("1".to_owned()))]
    );
    let after_open = master(&ours);
    assert_eq!(
        after_open
            .iter()
            .filter(|row| row.2.contains("cjk"))
            .collect::<Vec<_>>(),
        master_before
            .iter()
            .filter(|row| row.2.contains("cjk"))
            .collect::<Vec<_>>(),
        "CJK objects unchanged"
    );
    // So the original keeps writing.
    insert_message(&conn, "user", "又一个数据库").expect("the original still writes");
    drop(conn);

    // Only the explicit reset rebuilds it, complete.
    ours.execute_batch("BEGIN IMMEDIATE").expect("begin");
    hermes_state_schema::fts::reset_cjk_index(&ours).expect("explicit reset");
    ours.execute_batch("COMMIT").expect("commit");
    assert!(cjk_meta(&ours).is_empty(), "markers: {:?}", cjk_meta(&ours));
    assert_eq!(cjk_triggers(&ours), spec::CJK_TRIGGERS.to_vec());
    for name in spec::CJK_TRIGGERS {
        let sql: String = ours
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = ?1",
                [name],
                |r| r.get(0),
            )
            .expect("trigger sql");
        assert_eq!(sql, spec::cjk_object_sql(name), "stored SQL of {name}");
    }
    let hits = cjk_hits(&ours, "\"据库\"");
    assert_eq!(
        hits.len(),
        3,
        "rows written while stale are indexed: {hits:?}"
    );
    assert_eq!(hits[..2], [first, while_stale]);
    ours.execute_batch("INSERT INTO messages_fts_cjk(messages_fts_cjk) VALUES('integrity-check')")
        .expect("integrity-check");
    let master_after = master(&ours);
    drop(ours);
    let (conn, report) = open(&path);
    assert!(!report.fts.cjk_rebuilt, "{report:?}");
    assert_eq!(master(&conn), master_after);
}

#[test]
fn pending_cjk_backfill_is_not_rebuilt_at_open() {
    let (_dir, path) = temp_db();
    let (conn, _) = open(&path);
    conn.execute(
        "INSERT INTO sessions (id, source, started_at) VALUES ('s1', 'cli', 1.0)",
        [],
    )
    .expect("session");
    for (role, content) in [
        ("user", "数据库优化"),
        ("assistant", "hello"),
        ("user", "数据库迁移"),
    ] {
        insert_message(&conn, role, content).expect("message");
    }
    // A half-done backfill (schema-v23.md §6.6, §8): the index emptied, the
    // gate keys set, the triggers in place.
    conn.execute_batch(
        "INSERT INTO messages_fts_cjk(messages_fts_cjk) VALUES('delete-all');
         INSERT INTO state_meta (key, value) VALUES ('fts_cjk_rebuild_high_water', '3');
         INSERT INTO state_meta (key, value) VALUES ('fts_cjk_rebuild_progress', '0');",
    )
    .expect("pending backfill");
    let meta_before = cjk_meta(&conn);
    drop(conn);

    let (conn, report) = open(&path);
    assert!(!report.fts.cjk_rebuilt, "{report:?}");
    assert!(!report.fts.cjk_marked_stale, "{report:?}");
    assert_eq!(
        cjk_meta(&conn),
        meta_before,
        "the backfill is left to the explicit optimisation"
    );
    assert!(cjk_hits(&conn, "\"据库\"").is_empty());
    // Rows written now, above the high-water mark, are indexed by the live triggers.
    let later = insert_message(&conn, "user", "数据库备份").expect("message");
    assert_eq!(cjk_hits(&conn, "\"据库\""), vec![later]);
}

// ---------------------------------------------------------------------------
// Newer files (migrations.md §5) and files that are not stores
// ---------------------------------------------------------------------------

#[test]
fn versions_24_and_25_open_writable_and_keep_their_number() {
    for version in [24, 25] {
        let (_dir, path) =
            store_edited_by_hand(&format!("UPDATE schema_version SET version = {version}"));
        let (conn, report) = open(&path);
        assert_eq!(report.from_version, Some(version));
        assert_eq!(report.to_version, version, "never lowered");
        assert_eq!(schema_versions(&conn), vec![version]);
        conn.execute(
            "INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1.0)",
            [],
        )
        .expect("the connection is writable");
        drop(conn);
        let (conn, _) = open(&path);
        assert_eq!(schema_versions(&conn), vec![version]);
    }
}

#[test]
fn versions_above_25_are_refused_untouched() {
    for version in [26, 99] {
        let (_dir, path) =
            store_edited_by_hand(&format!("UPDATE schema_version SET version = {version}"));
        assert_refused_untouched(&path, ErrorKind::SchemaTooNew);
    }
}

#[test]
fn fts_storage_version_2_is_refused_untouched() {
    let (_dir, path) = store_edited_by_hand(
        "INSERT INTO state_meta (key, value) VALUES ('fts_storage_version', '2')",
    );
    assert_refused_untouched(&path, ErrorKind::SchemaTooNew);
}

#[test]
fn random_bytes_are_refused_untouched() {
    let (_dir, path) = temp_db();
    std::fs::write(&path, pseudo_random_bytes(8192, 0x5eed_1234_abcd_ef01)).expect("write");
    assert_refused_untouched(&path, ErrorKind::NotADatabase);
}

#[test]
fn foreign_sqlite_file_is_refused_untouched() {
    let (_dir, path) = temp_db();
    {
        let conn = plain(&path);
        conn.execute_batch(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
             INSERT INTO users (name) VALUES ('alice'), ('bob');",
        )
        .expect("foreign db");
    }
    assert_refused_untouched(&path, ErrorKind::NotADatabase);
}

#[test]
fn zero_length_file_becomes_a_new_store() {
    let (_dir, path) = temp_db();
    std::fs::write(&path, b"").expect("write");
    let (conn, report) = open(&path);
    assert!(report.created);
    assert_eq!(report.to_version, 23);
    let (_dir2, reference_path) = temp_db();
    let (reference, _) = open(&reference_path);
    assert_eq!(
        master(&conn),
        master(&reference),
        "same schema as a store created from nothing"
    );
    assert_eq!(schema_versions(&conn), vec![23]);
}

#[test]
fn truncated_store_is_an_error() {
    let (dir, path) = temp_db();
    {
        let (conn, _) = open(&path);
        conn.execute(
            "INSERT INTO sessions (id, source, started_at) VALUES ('s', 'cli', 1.0)",
            [],
        )
        .expect("session");
        let text = "lorem ipsum dolor sit amet ".repeat(20);
        for i in 0..200 {
            conn.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', ?1, ?2)",
                rusqlite::params![format!("{text} {i}"), f64::from(i)],
            )
            .expect("message");
        }
    }
    let bytes = std::fs::read(&path).expect("read");
    assert!(
        bytes.len() > 4 * 4096,
        "the store spans several pages ({} bytes)",
        bytes.len()
    );
    let truncated = dir.path().join("truncated.db");
    std::fs::write(&truncated, &bytes[..4096]).expect("write");
    let kind = open_error_kind(&truncated);
    assert!(
        matches!(kind, ErrorKind::Corrupt | ErrorKind::NotADatabase),
        "kind {kind:?}"
    );
}

#[cfg(unix)]
#[test]
fn files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path) = temp_db();
    let (_conn, _) = open(&path);
    let mut checked = 0;
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        match std::fs::metadata(&file) {
            Ok(metadata) => {
                assert_eq!(
                    metadata.permissions().mode() & 0o777,
                    0o600,
                    "mode of {}",
                    file.display()
                );
                checked += 1;
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => panic!("{}: {error}", file.display()),
        }
    }
    assert_eq!(
        checked, 3,
        "a WAL store has its db, -wal and -shm files while open"
    );
}

/// The file is private from the moment it exists: it is created 0600 (the
/// umask can only remove bits) before SQLite opens it, not chmod-ed after.
#[cfg(unix)]
#[test]
fn a_new_store_file_is_private_from_its_creation() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path) = temp_db();
    assert!(hermes_state_schema::permissions::create_private_file(&path).expect("create"));
    let metadata = std::fs::metadata(&path).expect("exists");
    assert_eq!(
        metadata.len(),
        0,
        "an empty file, which SQLite takes for a new database"
    );
    assert_eq!(metadata.permissions().mode() & 0o777, 0o600);
    assert!(
        !hermes_state_schema::permissions::create_private_file(&path).expect("exists"),
        "an existing file is never opened or replaced"
    );
}

/// An existing file's mode is the owner's business: opening it for writing
/// (and upgrading it) leaves the mode as it was.
#[cfg(unix)]
#[test]
fn an_existing_store_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path) = temp_db();
    drop(open(&path));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let (_conn, report) = open(&path);
    assert!(!report.created);
    let mode = std::fs::metadata(&path).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

/// An existing DELETE-mode file keeps DELETE through a writable open and an
/// upgrade; only a new store gets WAL.
#[test]
fn an_existing_file_keeps_its_journal_mode() {
    let (_dir, path) = temp_db();
    drop(open(&path));
    {
        let conn = Connection::open(&path).expect("owner");
        let mode: String = conn
            .query_row("PRAGMA journal_mode=DELETE", [], |r| r.get(0))
            .expect("delete");
        assert_eq!(mode, "delete");
    }
    let (conn, report) = open(&path);
    assert_eq!(
        report.journal_mode,
        hermes_state_schema::JournalMode::Delete
    );
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .expect("mode");
    assert_eq!(mode, "delete");
}

#[test]
fn concurrent_opens_migrate_once() {
    const THREADS: usize = 4;
    let (_dir, path) = temp_db();
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            let path = path.clone();
            std::thread::spawn(move || {
                barrier.wait();
                open_writable(&path).map_err(|error| format!("{error} (kind {:?})", error.kind()))
            })
        })
        .collect();
    let results: Vec<(Connection, OpenReport)> = handles
        .into_iter()
        .map(|h| h.join().expect("thread").expect("every open succeeds"))
        .collect();
    let created = results.iter().filter(|(_, r)| r.created).count();
    let baselined = results.iter().filter(|(_, r)| r.history.baselined).count();
    assert_eq!((created, baselined), (1, 1), "exactly one open migrated");
    let cjk_built = results.iter().filter(|(_, r)| r.fts.cjk_rebuilt).count();
    assert_eq!(cjk_built, 1, "exactly one open built the CJK index");
    drop(results);

    let conn = plain(&path);
    assert_eq!(schema_versions(&conn), vec![23]);
    assert_eq!(count(&conn, HISTORY_TABLE), 1);
    let (_dir2, reference_path) = temp_db();
    let (reference, _) = open(&reference_path);
    assert_eq!(
        master(&conn),
        master(&reference),
        "same sqlite_master as a single open"
    );
}
