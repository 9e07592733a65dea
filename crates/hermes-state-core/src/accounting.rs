//! The usage row delta (`api.md` §3.3): what a token update or an auxiliary
//! task adds to `session_model_usage`, written once for both backends. Each
//! backend reads the session's billing route and writes the delta with its
//! own statements.

use hermes_state_types::{AuxiliaryUsage, TokenUpdate};

/// The billing route a session row holds, which an update that names none
/// of its own falls back on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionRoute {
    /// `sessions.model`.
    pub model: Option<String>,
    /// `sessions.billing_provider`.
    pub provider: Option<String>,
    /// `sessions.billing_base_url`.
    pub base_url: Option<String>,
    /// `sessions.billing_mode`.
    pub mode: Option<String>,
}

/// One addition to the `session_model_usage` row of a model, billing route
/// and task.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageDelta<'a> {
    /// The model (`unknown` when neither the call nor the session names one).
    pub model: String,
    /// The billing provider (`''` when unknown).
    pub provider: String,
    /// The billing base URL (`''` when unknown).
    pub base_url: String,
    /// The billing mode (`''` when unknown).
    pub mode: String,
    /// The task (`''` for the session's own calls).
    pub task: &'a str,
    /// API calls added.
    pub api_calls: i64,
    /// Input, output, cache-read, cache-write and reasoning tokens added.
    pub tokens: [i64; 5],
    /// Estimated cost added.
    pub estimated: f64,
    /// Actual cost added.
    pub actual: f64,
    /// The cost status, kept when given.
    pub cost_status: Option<&'a str>,
    /// The cost source, kept when given.
    pub cost_source: Option<&'a str>,
}

impl<'a> UsageDelta<'a> {
    /// What an incremental `update_token_counts` adds (`api.md` §3.3), the
    /// route filled from the session's where the call names none; `None`
    /// when it adds nothing (an absolute update, or no tokens, calls or
    /// estimated cost).
    pub fn of_update(update: &'a TokenUpdate, session: SessionRoute) -> Option<UsageDelta<'a>> {
        let adds_usage = !update.absolute
            && (update.input_tokens != 0
                || update.output_tokens != 0
                || update.cache_read_tokens != 0
                || update.cache_write_tokens != 0
                || update.reasoning_tokens != 0
                || update.api_call_count != 0
                || update.estimated_cost_usd.is_some_and(|c| c != 0.0));
        adds_usage.then(|| UsageDelta {
            model: (update.model.clone().or(session.model)).unwrap_or_else(|| "unknown".to_owned()),
            provider: (update.billing_provider.clone().or(session.provider)).unwrap_or_default(),
            base_url: (update.billing_base_url.clone().or(session.base_url)).unwrap_or_default(),
            mode: (update.billing_mode.clone().or(session.mode)).unwrap_or_default(),
            task: "",
            api_calls: update.api_call_count,
            tokens: [
                update.input_tokens,
                update.output_tokens,
                update.cache_read_tokens,
                update.cache_write_tokens,
                update.reasoning_tokens,
            ],
            estimated: update.estimated_cost_usd.unwrap_or(0.0),
            actual: update.actual_cost_usd.unwrap_or(0.0),
            cost_status: update.cost_status.as_deref(),
            cost_source: update.cost_source.as_deref(),
        })
    }

    /// What `record_auxiliary_usage` adds (`api.md` §3.2): one call of the
    /// task, no actual cost, the session's route not consulted.
    pub fn of_auxiliary(usage: &'a AuxiliaryUsage) -> UsageDelta<'a> {
        UsageDelta {
            model: usage.model.clone().unwrap_or_else(|| "unknown".to_owned()),
            provider: usage.billing_provider.clone().unwrap_or_default(),
            base_url: usage.billing_base_url.clone().unwrap_or_default(),
            mode: String::new(),
            task: &usage.task,
            api_calls: 1,
            tokens: [
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
                usage.reasoning_tokens,
            ],
            estimated: usage.estimated_cost_usd.unwrap_or(0.0),
            actual: 0.0,
            cost_status: None,
            cost_source: None,
        }
    }
}
