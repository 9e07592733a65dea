//! Token and cost statistics (`api.md` §3.4): the rows of the totals per
//! model, of the sessions that used the most tokens, and of the per-model,
//! per-task attribution kept in `session_model_usage`.

use serde::Serialize;

/// Totals of the sessions of one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelTotals {
    /// The model.
    pub model: String,
    /// Sessions with this model.
    pub session_count: i64,
    /// Sum of `input_tokens` (`None` when every value is NULL, as SQL's SUM).
    pub total_input: Option<i64>,
    /// Sum of `output_tokens`.
    pub total_output: Option<i64>,
    /// Sum of `estimated_cost_usd`.
    pub total_cost: Option<f64>,
    /// Sum of `cache_read_tokens`.
    pub total_cache_read: Option<i64>,
    /// Sum of `cache_write_tokens`.
    pub total_cache_write: Option<i64>,
    /// Sum of `reasoning_tokens`.
    pub total_reasoning: Option<i64>,
}

/// One of the sessions that used the most tokens.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopSession {
    /// Session id.
    pub id: String,
    /// Its title.
    pub title: Option<String>,
    /// Its model.
    pub model: Option<String>,
    /// `input_tokens + output_tokens`.
    pub total_tokens: Option<i64>,
    /// Its estimated cost.
    pub estimated_cost_usd: Option<f64>,
}

/// Usage attributed to one model and task across sessions (`session_model_usage`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageAttribution {
    /// The model.
    pub model: String,
    /// The task: `""` for the main agent loop, else e.g. `vision`, `compression`.
    pub task: String,
    /// Sessions with usage rows for this model and task.
    pub session_count: i64,
    /// API calls.
    pub api_call_count: i64,
    /// Input tokens.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Cache-read tokens.
    pub cache_read_tokens: i64,
    /// Cache-write tokens.
    pub cache_write_tokens: i64,
    /// Reasoning tokens.
    pub reasoning_tokens: i64,
    /// Estimated cost.
    pub estimated_cost_usd: f64,
    /// Actual cost.
    pub actual_cost_usd: f64,
}
