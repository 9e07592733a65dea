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

use rusqlite::Connection;

use crate::detect::FtsLayout;
use crate::error::{SchemaError, SqliteContext, sqlite_error_kind};
use crate::ddl;
use hermes_state_types::ErrorKind;

/// Runs every gated block whose threshold is above `stored`.
pub fn run_gated_chain(
    conn: &Connection,
    stored: i64,
    layout_before: FtsLayout,
) -> Result<(), SchemaError> {
    if stored < 16 {
        abandon_on_error(conn, "v16", Propagate::OnlyFatal, tag_subagent_sessions)?;
    }
    if stored < 20 {
        abandon_on_error(conn, "v20", Propagate::OnlyFatal, seed_model_usage)?;
    }
    if stored < 22 {
        // Integrity errors of the copy abort the open, as in the original.
        abandon_on_error(conn, "v22", Propagate::Constraints, rebuild_model_usage_with_task)?;
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
            .context("ending a gated block"),
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
/// Unlike the original (whose autocommit steps can strand the data in
/// `session_model_usage_v21` when the copy fails, `migrations.md` §4.4), the
/// whole rebuild is inside the open's transaction: a failing copy rolls back
/// to the old table and the open reports the error, with nothing lost.
fn rebuild_model_usage_with_task(conn: &Connection) -> Result<(), rusqlite::Error> {
    let task_in_key: i64 = conn.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('session_model_usage') WHERE name = 'task' AND pk > 0",
        [],
        |row| row.get(0),
    )?;
    if task_in_key > 0 {
        return Ok(());
    }
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info('session_model_usage')")?;
    let live = stmt.query_map([], |row| row.get::<_, String>(0))?.collect::<Result<Vec<_>, _>>()?;
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
            if live.iter().any(|l| l == c) {
                (*c).to_owned()
            } else {
                "NULL".to_owned()
            }
        })
        .collect();
    conn.execute_batch(&format!(
        "ALTER TABLE session_model_usage RENAME TO session_model_usage_v21;
         {USAGE_REBUILD_TABLE};
         INSERT INTO session_model_usage (session_id, model, billing_provider, billing_base_url, billing_mode, task, {cols})
         SELECT session_id, model, billing_provider, billing_base_url, billing_mode, '', {select} FROM session_model_usage_v21;
         DROP TABLE session_model_usage_v21;
         CREATE INDEX IF NOT EXISTS idx_session_model_usage_session ON session_model_usage(session_id);
         CREATE INDEX IF NOT EXISTS idx_session_model_usage_model ON session_model_usage(model);",
        cols = copied.join(", "),
        select = select.join(", "),
    ))
}
