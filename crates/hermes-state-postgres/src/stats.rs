//! Token and cost statistics (`api.md` §3.4), the SQLite backend's queries
//! with PostgreSQL's spelling: sums of `BIGINT` cast back from `numeric`,
//! NULL costs sorted last as SQLite sorts them, ties broken by byte order.

pub(crate) const MODEL_TOTALS: &str =
    "SELECT model, COUNT(*), SUM(input_tokens)::bigint, SUM(output_tokens)::bigint,
       SUM(estimated_cost_usd) AS total_cost, SUM(cache_read_tokens)::bigint,
       SUM(cache_write_tokens)::bigint, SUM(reasoning_tokens)::bigint
FROM sessions WHERE model IS NOT NULL GROUP BY model
ORDER BY total_cost DESC NULLS LAST, model COLLATE \"C\"";

pub(crate) const TOP_SESSIONS: &str =
    "SELECT id, title, model, input_tokens + output_tokens AS total_tokens, estimated_cost_usd
FROM sessions ORDER BY total_tokens DESC NULLS LAST, started_at, id LIMIT $1";

pub(crate) const USAGE_BY_MODEL_AND_TASK: &str = "SELECT model, task, COUNT(DISTINCT session_id), SUM(api_call_count)::bigint,
       SUM(input_tokens)::bigint, SUM(output_tokens)::bigint, SUM(cache_read_tokens)::bigint,
       SUM(cache_write_tokens)::bigint, SUM(reasoning_tokens)::bigint,
       COALESCE(SUM(estimated_cost_usd), 0)::float8 AS cost, COALESCE(SUM(actual_cost_usd), 0)::float8
FROM session_model_usage GROUP BY model, task
ORDER BY cost DESC, model COLLATE \"C\", task COLLATE \"C\"";
