//! The columns and foreign keys of the tables (`schema-v23.md` §4), and the
//! v1 column sets (`migrations.md` §1.2).

use super::Column;

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
