//! The objects of a fresh file (`schema-v23.md` §3, §6.6).

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

/// `schema-v23.md` §3: the autoindexes (stored SQL is NULL).
pub const AUTOINDEXES: [&str; 6] = [
    "sqlite_autoindex_sessions_1",
    "sqlite_autoindex_session_model_usage_1",
    "sqlite_autoindex_state_meta_1",
    "sqlite_autoindex_gateway_routing_1",
    "sqlite_autoindex_compression_locks_1",
    "sqlite_autoindex_async_delegations_1",
];
