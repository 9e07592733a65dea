//! The indexes: their stored SQL and their shapes (`schema-v23.md` §3, §5).

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

/// One index as `PRAGMA index_list` / `index_xinfo` describe it.
pub struct Index {
    pub name: &'static str,
    pub table: &'static str,
    pub unique: bool,
    /// `c` (CREATE INDEX) or `pk` (primary-key autoindex).
    pub origin: &'static str,
    pub partial: bool,
    /// Key columns with their DESC flag; all collations are BINARY (§5).
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
