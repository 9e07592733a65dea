//! Token and cost statistics (`api.md` §3.4): totals per model, the sessions
//! that used the most tokens, and the per-model, per-task attribution kept in
//! `session_model_usage`.

pub use hermes_state_core::stats::{ModelTotals, TopSession, UsageAttribution};
use rusqlite::Connection;

use crate::error::{QueryContext, QueryError};

/// Totals per model, most expensive first: the seed document's query (same
/// rows, same order: NULL costs last), with the cache and reasoning sums added.
pub fn model_totals(conn: &Connection) -> Result<Vec<ModelTotals>, QueryError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT model, COUNT(*) as session_count, SUM(input_tokens) as total_input,
                    SUM(output_tokens) as total_output, SUM(estimated_cost_usd) as total_cost,
                    SUM(cache_read_tokens), SUM(cache_write_tokens), SUM(reasoning_tokens)
             FROM sessions WHERE model IS NOT NULL GROUP BY model ORDER BY total_cost DESC",
        )
        .context("computing model totals")?;
    let rows = stmt
        .query_map([], |row| {
            Ok(ModelTotals {
                model: crate::values::text(row.get_ref(0)?).unwrap_or_default(),
                session_count: row.get(1)?,
                total_input: crate::values::integer(row.get_ref(2)?),
                total_output: crate::values::integer(row.get_ref(3)?),
                total_cost: crate::values::real(row.get_ref(4)?),
                total_cache_read: crate::values::integer(row.get_ref(5)?),
                total_cache_write: crate::values::integer(row.get_ref(6)?),
                total_reasoning: crate::values::integer(row.get_ref(7)?),
            })
        })
        .context("computing model totals")?;
    rows.collect::<Result<_, _>>()
        .context("computing model totals")
        .map_err(Into::into)
}

/// The sessions with the most input + output tokens: the seed document's
/// query, with its limit (10) as a parameter.
pub fn top_sessions(conn: &Connection, limit: u32) -> Result<Vec<TopSession>, QueryError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, title, model, input_tokens + output_tokens AS total_tokens, estimated_cost_usd
             FROM sessions ORDER BY total_tokens DESC LIMIT ?1",
        )
        .context("finding top sessions")?;
    let rows = stmt
        .query_map([limit], |row| {
            Ok(TopSession {
                id: crate::values::text(row.get_ref(0)?).unwrap_or_default(),
                title: crate::values::text(row.get_ref(1)?),
                model: crate::values::text(row.get_ref(2)?),
                total_tokens: crate::values::integer(row.get_ref(3)?),
                estimated_cost_usd: crate::values::real(row.get_ref(4)?),
            })
        })
        .context("finding top sessions")?;
    rows.collect::<Result<_, _>>()
        .context("finding top sessions")
        .map_err(Into::into)
}

/// Usage per model and task, most expensive first (then by model and task).
pub fn usage_by_model_and_task(conn: &Connection) -> Result<Vec<UsageAttribution>, QueryError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT model, task, COUNT(DISTINCT session_id), SUM(api_call_count), SUM(input_tokens),
                    SUM(output_tokens), SUM(cache_read_tokens), SUM(cache_write_tokens),
                    SUM(reasoning_tokens), TOTAL(estimated_cost_usd) AS cost, TOTAL(actual_cost_usd)
             FROM session_model_usage GROUP BY model, task ORDER BY cost DESC, model, task",
        )
        .context("attributing usage")?;
    let rows = stmt
        .query_map([], |row| {
            let int = |i: usize| -> rusqlite::Result<i64> {
                Ok(crate::values::integer(row.get_ref(i)?).unwrap_or(0))
            };
            Ok(UsageAttribution {
                model: crate::values::text(row.get_ref(0)?).unwrap_or_default(),
                task: crate::values::text(row.get_ref(1)?).unwrap_or_default(),
                session_count: int(2)?,
                api_call_count: int(3)?,
                input_tokens: int(4)?,
                output_tokens: int(5)?,
                cache_read_tokens: int(6)?,
                cache_write_tokens: int(7)?,
                reasoning_tokens: int(8)?,
                estimated_cost_usd: crate::values::real(row.get_ref(9)?).unwrap_or(0.0),
                actual_cost_usd: crate::values::real(row.get_ref(10)?).unwrap_or(0.0),
            })
        })
        .context("attributing usage")?;
    rows.collect::<Result<_, _>>()
        .context("attributing usage")
        .map_err(Into::into)
}
