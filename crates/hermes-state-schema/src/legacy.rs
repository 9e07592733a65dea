//! The version-gated data migrations of the original (`migrations.md` §3.2),
//! run when the stored `schema_version` is below 23.
//!
//! Column, table and index additions of older versions need no code: the main
//! script, the reconciler and the deferred indexes provide them. What remains
//! are the data migrations, each gated on the stored version, in the original's
//! order. Their error rules are the original's: a block that fails with an
//! ordinary SQLite error is abandoned silently (its statements are rolled back
//! to a savepoint here, so a half-run block never stays behind), while lock
//! errors abort the open so it can be retried.

use std::path::Path;

use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;
use serde_json::Value;

use crate::ddl;
use crate::detect::FtsLayout;
use crate::error::SchemaError;
use hermes_state_sqlite::{Context as SqliteContext, sqlite_error_kind};
use hermes_state_types::ErrorKind;

/// Runs every gated block whose threshold is above `stored`.
///
/// `hermes_home` is where the v18 block looks for `sessions/sessions.json`.
pub fn run_gated_chain(
    conn: &Connection,
    stored: i64,
    layout_before: FtsLayout,
    hermes_home: Option<&Path>,
) -> Result<(), SchemaError> {
    if stored < 16 {
        abandon_on_error(conn, "v16", Propagate::OnlyFatal, tag_subagent_sessions)?;
    }
    if stored < 18
        && let Some(home) = hermes_home
    {
        backfill_gateway_fields(conn, &home.join("sessions").join("sessions.json"))?;
    }
    if stored < 20 {
        abandon_on_error(conn, "v20", Propagate::OnlyFatal, seed_model_usage)?;
    }
    if stored < 22 {
        // Integrity errors of the copy abort the open, as in the original.
        abandon_on_error(
            conn,
            "v22",
            Propagate::Constraints,
            rebuild_model_usage_with_task,
        )?;
    }
    if layout_before.is_legacy() {
        conn.execute(ddl::UPSERT_META, ["fts_optimize_available", "1"])
            .context("advertising the FTS optimisation")?;
    }
    Ok(())
}

/// Which errors of a gated block abort the open instead of abandoning the block.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Propagate {
    /// Lock, corruption and I/O errors only.
    OnlyFatal,
    /// Those, and constraint (integrity) errors.
    Constraints,
}

/// Runs a block inside a savepoint; an ordinary error rolls the block back and
/// is otherwise ignored, as the original abandons such blocks.
fn abandon_on_error(
    conn: &Connection,
    name: &str,
    propagate: Propagate,
    block: impl FnOnce(&Connection) -> Result<(), rusqlite::Error>,
) -> Result<(), SchemaError> {
    let savepoint = format!("gated_{name}");
    conn.execute_batch(&format!("SAVEPOINT {savepoint}"))
        .context("starting a gated block")?;
    match block(conn) {
        Ok(()) => conn
            .execute_batch(&format!("RELEASE {savepoint}"))
            .context("ending a gated block")
            .map_err(Into::into),
        Err(error) => {
            let kind = sqlite_error_kind(&error);
            conn.execute_batch(&format!("ROLLBACK TO {savepoint}; RELEASE {savepoint}"))
                .context("abandoning a gated block")?;
            let fatal = matches!(kind, ErrorKind::Busy | ErrorKind::Corrupt | ErrorKind::Io)
                || (propagate == Propagate::Constraints && kind == ErrorKind::Constraint);
            if fatal {
                Err(SchemaError::sqlite(format!("gated block {name}"), error))
            } else {
                Ok(())
            }
        }
    }
}

/// v16: tag ephemeral (delegate) children and orphaned tool-using roots with
/// `$._delegate_from`, so listings hide them. `json_set` writes compact JSON,
/// as in the original.
fn tag_subagent_sessions(conn: &Connection) -> Result<(), rusqlite::Error> {
    conn.execute_batch(
        "UPDATE sessions SET model_config = json_set(COALESCE(model_config,'{}'), '$._delegate_from', parent_session_id)
         WHERE parent_session_id IS NOT NULL
           AND json_extract(COALESCE(model_config,'{}'), '$._delegate_from') IS NULL
           AND json_type(COALESCE(model_config,'{}'), '$._branched_from') IS NULL
           AND NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = sessions.parent_session_id
                           AND p.end_reason = 'branched' AND sessions.started_at >= p.ended_at)
           AND NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = sessions.parent_session_id
                           AND p.end_reason = 'compression');
         UPDATE sessions SET model_config = json_set(COALESCE(model_config,'{}'), '$._delegate_from', '__orphaned__')
         WHERE parent_session_id IS NULL
           AND json_extract(COALESCE(model_config,'{}'), '$._delegate_from') IS NULL
           AND json_type(COALESCE(model_config,'{}'), '$._branched_from') IS NULL
           AND title IS NULL
           AND message_count <= 25
           AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = sessions.id AND m.role = 'tool')
           AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = sessions.id);",
    )
}

/// v20: one `task = ''` usage row per session that has token counts.
fn seed_model_usage(conn: &Connection) -> Result<(), rusqlite::Error> {
    conn.execute_batch(
        "INSERT OR IGNORE INTO session_model_usage (session_id, model, billing_provider, billing_base_url, billing_mode, api_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd, cost_status, cost_source, first_seen, last_seen)
         SELECT id, COALESCE(model,'unknown'), COALESCE(billing_provider,''), COALESCE(billing_base_url,''), COALESCE(billing_mode,''), COALESCE(api_call_count,0), COALESCE(input_tokens,0), COALESCE(output_tokens,0), COALESCE(cache_read_tokens,0), COALESCE(cache_write_tokens,0), COALESCE(reasoning_tokens,0), COALESCE(estimated_cost_usd,0), COALESCE(actual_cost_usd,0), cost_status, cost_source, started_at, COALESCE(ended_at, started_at)
         FROM sessions
         WHERE COALESCE(input_tokens,0) + COALESCE(output_tokens,0) + COALESCE(cache_read_tokens,0) + COALESCE(cache_write_tokens,0) + COALESCE(reasoning_tokens,0) > 0",
    )
}

/// The stored text of the v22 rebuild statement (35-space column indent).
const USAGE_REBUILD_TABLE: &str = "CREATE TABLE session_model_usage (
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
                               )";

/// v22: rebuild a usage table whose key lacks `task` into the 6-column key.
///
/// Unlike the original, the copy reads the route columns with
/// `COALESCE(…, '')` (as later upstream builds' key heal does): the transient
/// v20 shape allowed a NULL `billing_base_url`, on which the original's copy
/// fails and strands the data in `session_model_usage_v21` (`migrations.md`
/// §4.4). Here the rows arrive, and the whole rebuild is inside the open's
/// transaction, so any other failure rolls back to the old table.
fn rebuild_model_usage_with_task(conn: &Connection) -> Result<(), rusqlite::Error> {
    let task_in_key: i64 = conn.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('session_model_usage', 'main') WHERE name = 'task' AND pk > 0",
        [],
        |row| row.get(0),
    )?;
    if task_in_key > 0 {
        return Ok(());
    }
    let mut stmt =
        conn.prepare("SELECT name FROM pragma_table_info('session_model_usage', 'main')")?;
    let live = stmt
        .query_map([], |row| row.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    let copied = [
        "api_call_count",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "reasoning_tokens",
        "estimated_cost_usd",
        "actual_cost_usd",
        "cost_status",
        "cost_source",
        "first_seen",
        "last_seen",
    ];
    let select: Vec<String> = copied
        .iter()
        .map(|c| {
            match (
                live.iter().any(|l| l == c),
                NOT_NULL_USAGE_COLUMNS.contains(c),
            ) {
                (true, true) => format!("COALESCE({c}, 0)"),
                (true, false) => (*c).to_owned(),
                (false, true) => "0".to_owned(),
                (false, false) => "NULL".to_owned(),
            }
        })
        .collect();
    conn.execute_batch(&format!(
        "ALTER TABLE session_model_usage RENAME TO session_model_usage_v21;
         {USAGE_REBUILD_TABLE};
         INSERT OR IGNORE INTO session_model_usage (session_id, model, billing_provider, billing_base_url, billing_mode, task, {cols})
         SELECT session_id, COALESCE(model, 'unknown'), COALESCE(billing_provider, ''), COALESCE(billing_base_url, ''), COALESCE(billing_mode, ''), '', {select} FROM session_model_usage_v21;
         DROP TABLE session_model_usage_v21;
         CREATE INDEX IF NOT EXISTS idx_session_model_usage_session ON session_model_usage(session_id);
         CREATE INDEX IF NOT EXISTS idx_session_model_usage_model ON session_model_usage(model);",
        cols = copied.join(", "),
        select = select.join(", "),
    ))
}

/// Counters of `session_model_usage` that are NOT NULL (default 0) in the
/// v22+ table; copies read them with `COALESCE(…, 0)`.
const NOT_NULL_USAGE_COLUMNS: [&str; 8] = [
    "api_call_count",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "estimated_cost_usd",
    "actual_cost_usd",
];

/// v18: fill gateway routing columns of sessions from the gateway's
/// `sessions.json` (`migrations.md` §3.2). Like the original, a missing or
/// unreadable file, or a file that is not a JSON object, skips the block, and
/// the first entry that cannot be applied ends it (earlier entries stay).
fn backfill_gateway_fields(conn: &Connection, file: &Path) -> Result<(), SchemaError> {
    // Not the live database: reading an unrelated JSON file through std::fs is fine.
    let Ok(text) = std::fs::read_to_string(file) else {
        return Ok(());
    };
    let Ok(Value::Object(entries)) = serde_json::from_str::<Value>(&text) else {
        return Ok(());
    };
    for (key, entry) in &entries {
        if key.starts_with('_') {
            continue;
        }
        let Value::Object(entry) = entry else {
            continue;
        };
        let Some(session_id) = entry
            .get("session_id")
            .filter(|v| hermes_state_types::pyjson::is_truthy(v))
        else {
            continue;
        };
        let origin = entry.get("origin").and_then(Value::as_object);
        let field = |name: &str| entry.get(name).cloned().unwrap_or(Value::Null);
        let origin_field = |name: &str| {
            origin
                .and_then(|o| o.get(name))
                .cloned()
                .unwrap_or(Value::Null)
        };
        let session_key = entry
            .get("session_key")
            .filter(|v| hermes_state_types::pyjson::is_truthy(v))
            .cloned()
            .unwrap_or_else(|| Value::String(key.clone()));
        let finalized = ["expiry_finalized", "memory_flushed"].iter().any(|name| {
            entry
                .get(*name)
                .is_some_and(hermes_state_types::pyjson::is_truthy)
        });
        let origin_json =
            origin.map(|o| hermes_state_types::pyjson::to_string(&Value::Object(o.clone())));
        let values = [
            bind(&session_key),
            bind(&origin_field("chat_id")),
            bind(&field("chat_type")),
            bind(&origin_field("thread_id")),
            bind(&field("display_name")),
            Some(origin_json.map_or(SqlValue::Null, SqlValue::Text)),
            Some(SqlValue::Integer(i64::from(finalized))),
            Some(SqlValue::Text(python_str(session_id))),
        ];
        // A value SQLite cannot bind (a list or an object) ends the block, as in the original.
        let Some(values) = values.into_iter().collect::<Option<Vec<_>>>() else {
            return Ok(());
        };
        let result = conn.execute(
            "UPDATE sessions SET session_key = COALESCE(session_key, ?1), chat_id = COALESCE(chat_id, ?2),
                    chat_type = COALESCE(chat_type, ?3), thread_id = COALESCE(thread_id, ?4),
                    display_name = COALESCE(display_name, ?5), origin_json = COALESCE(origin_json, ?6),
                    expiry_finalized = CASE WHEN COALESCE(expiry_finalized, 0) = 0 AND ?7 = 1 THEN 1 ELSE expiry_finalized END
             WHERE id = ?8",
            rusqlite::params_from_iter(values),
        );
        match result {
            Ok(_) => {}
            Err(error)
                if matches!(
                    sqlite_error_kind(&error),
                    ErrorKind::Busy | ErrorKind::Corrupt | ErrorKind::Io
                ) =>
            {
                return Err(SchemaError::sqlite("gated block v18", error));
            }
            Err(_) => return Ok(()),
        }
    }
    Ok(())
}

/// How Python's sqlite3 binds a JSON value: scalars as themselves; lists
/// and objects cannot be bound (`None`).
fn bind(value: &Value) -> Option<SqlValue> {
    match value {
        Value::Null => Some(SqlValue::Null),
        Value::Bool(b) => Some(SqlValue::Integer(i64::from(*b))),
        Value::Number(n) => Some(match n.as_i64() {
            Some(i) => SqlValue::Integer(i),
            None => SqlValue::Real(n.as_f64().unwrap_or(0.0)),
        }),
        Value::String(s) => Some(SqlValue::Text(s.clone())),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// Python's `str()` of a JSON value: strings as they are, others as Python prints them.
fn python_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".to_owned(),
        Value::Bool(false) => "False".to_owned(),
        Value::Null => "None".to_owned(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => hermes_state_types::pyjson::float_repr(n.as_f64().unwrap_or(0.0)),
        },
        other => hermes_state_types::pyjson::to_string(other),
    }
}

/// Key shapes the pinned v23 cannot heal (`migrations.md` §4.8), healed here
/// as later upstream builds do: a `session_model_usage` whose primary key
/// lacks `task` at any version (rebuilt like v22), and a `gateway_routing`
/// keyed by `session_key` alone (rebuilt with `(scope, session_key)`, the
/// newest `updated_at` winning). Run on every open; each is a no-op when the
/// key is right.
pub fn heal_keys(conn: &Connection) -> Result<(), SchemaError> {
    abandon_on_error(
        conn,
        "usage_key",
        Propagate::Constraints,
        rebuild_model_usage_with_task,
    )?;
    abandon_on_error(
        conn,
        "routing_key",
        Propagate::Constraints,
        rebuild_gateway_routing_key,
    )
}

fn rebuild_gateway_routing_key(conn: &Connection) -> Result<(), rusqlite::Error> {
    let scope_in_key: i64 = conn.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('gateway_routing', 'main') WHERE name = 'scope' AND pk > 0",
        [],
        |row| row.get(0),
    )?;
    let exists: i64 = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'gateway_routing'",
        [],
        |row| row.get(0),
    )?;
    if scope_in_key > 0 || exists == 0 {
        return Ok(());
    }
    conn.execute_batch(&format!(
        "ALTER TABLE gateway_routing RENAME TO gateway_routing_legacy_pk;
         {};
         INSERT INTO gateway_routing (scope, session_key, entry_json, updated_at)
         SELECT COALESCE(scope, ''), session_key, entry_json, updated_at FROM gateway_routing_legacy_pk
         WHERE session_key IS NOT NULL AND entry_json IS NOT NULL AND updated_at IS NOT NULL
         ORDER BY updated_at ASC
         ON CONFLICT(scope, session_key) DO UPDATE SET entry_json = excluded.entry_json, updated_at = excluded.updated_at
         WHERE excluded.updated_at >= gateway_routing.updated_at;
         DROP TABLE gateway_routing_legacy_pk;",
        ddl::GATEWAY_ROUTING_TABLE.replace("IF NOT EXISTS ", "")
    ))
}
