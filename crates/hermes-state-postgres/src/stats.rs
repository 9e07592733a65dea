//! Token and cost statistics (`api.md` §3.4), the SQLite backend's queries
//! with PostgreSQL's spelling: sums of `BIGINT` cast back from `numeric`,
//! NULL costs sorted last as SQLite sorts them, ties broken by byte order.

use hermes_state_core::stats::{ModelTotals, TopSession, UsageAttribution};

use crate::PgStore;
use crate::error::{Context, Result};

const MODEL_TOTALS: &str =
    "SELECT model, COUNT(*), SUM(input_tokens)::bigint, SUM(output_tokens)::bigint,
       SUM(estimated_cost_usd) AS total_cost, SUM(cache_read_tokens)::bigint,
       SUM(cache_write_tokens)::bigint, SUM(reasoning_tokens)::bigint
FROM sessions WHERE model IS NOT NULL GROUP BY model
ORDER BY total_cost DESC NULLS LAST, model COLLATE \"C\"";

const TOP_SESSIONS: &str =
    "SELECT id, title, model, input_tokens + output_tokens AS total_tokens, estimated_cost_usd
FROM sessions ORDER BY total_tokens DESC NULLS LAST, started_at, id LIMIT $1";

const USAGE_BY_MODEL_AND_TASK: &str = "SELECT model, task, COUNT(DISTINCT session_id), SUM(api_call_count)::bigint,
       SUM(input_tokens)::bigint, SUM(output_tokens)::bigint, SUM(cache_read_tokens)::bigint,
       SUM(cache_write_tokens)::bigint, SUM(reasoning_tokens)::bigint,
       COALESCE(SUM(estimated_cost_usd), 0)::float8 AS cost, COALESCE(SUM(actual_cost_usd), 0)::float8
FROM session_model_usage GROUP BY model, task
ORDER BY cost DESC, model COLLATE \"C\", task COLLATE \"C\"";

impl PgStore {
    /// Token and cost totals per model, most expensive first (NULL costs
    /// last; equal costs by model, in byte order).
    pub fn model_totals(&self) -> Result<Vec<ModelTotals>> {
        self.read(|tx| {
            Ok(tx
                .query(MODEL_TOTALS, &[])
                .context("computing model totals")?
                .iter()
                .map(|row| ModelTotals {
                    model: row.get(0),
                    session_count: row.get(1),
                    total_input: row.get(2),
                    total_output: row.get(3),
                    total_cost: row.get(4),
                    total_cache_read: row.get(5),
                    total_cache_write: row.get(6),
                    total_reasoning: row.get(7),
                })
                .collect())
        })
    }

    /// The `limit` sessions with the most input + output tokens (equal
    /// totals: earlier sessions first).
    pub fn top_sessions(&self, limit: u32) -> Result<Vec<TopSession>> {
        let limit = i64::from(limit);
        self.read(|tx| {
            Ok(tx
                .query(TOP_SESSIONS, &[&limit])
                .context("finding top sessions")?
                .iter()
                .map(|row| TopSession {
                    id: row.get(0),
                    title: row.get(1),
                    model: row.get(2),
                    total_tokens: row.get(3),
                    estimated_cost_usd: row.get(4),
                })
                .collect())
        })
    }

    /// Usage per model and task (`session_model_usage`), most expensive
    /// first, then by model and task.
    pub fn usage_by_model_and_task(&self) -> Result<Vec<UsageAttribution>> {
        self.read(|tx| {
            Ok(tx
                .query(USAGE_BY_MODEL_AND_TASK, &[])
                .context("attributing usage")?
                .iter()
                .map(|row| {
                    let int = |i: usize| row.get::<_, Option<i64>>(i).unwrap_or(0);
                    UsageAttribution {
                        model: row.get(0),
                        task: row.get(1),
                        session_count: int(2),
                        api_call_count: int(3),
                        input_tokens: int(4),
                        output_tokens: int(5),
                        cache_read_tokens: int(6),
                        cache_write_tokens: int(7),
                        reasoning_tokens: int(8),
                        estimated_cost_usd: row.get::<_, Option<f64>>(9).unwrap_or(0.0),
                        actual_cost_usd: row.get::<_, Option<f64>>(10).unwrap_or(0.0),
                    }
                })
                .collect())
        })
    }
}
