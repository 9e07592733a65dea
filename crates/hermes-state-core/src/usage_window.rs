//! The usage statistics of `api.md` §3.4 over every session or over the
//! sessions that started in a time window: one report, as `stats` shows it.
//!
//! Without a window the report is the store's own aggregations
//! ([`Accounting::model_totals`], [`Accounting::top_sessions`],
//! [`Accounting::usage_by_model_and_task`]). Those take no time bound — the
//! original's have none, and the contract keeps its signatures — so a
//! windowed report cannot reuse them: it reads the window's sessions
//! ([`sessions_started_in`]) and sums them here with the rules of the
//! stores' SQL (a sum of NULLs is NULL; most expensive first, unknown costs
//! last; sessions without a model left out of the per-model totals). The
//! per-task attribution is left empty in a window: its rows
//! (`session_model_usage`) carry no time, so there is nothing to split.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::error::Result;
use crate::sessions::SessionCountOptions;
use crate::stats::{ModelTotals, TopSession, UsageAttribution};
use crate::store::{Accounting, Listings, Messages, Sessions};
use crate::time_window::{TimeWindow, sessions_started_in};
use hermes_state_types::Session;

/// The usage statistics of a store, or of a time window of it.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageReport {
    /// Sessions counted (every session, archived ones included; in a window,
    /// those that started in it).
    pub sessions: i64,
    /// Their messages.
    pub messages: i64,
    /// Totals per model, most expensive first.
    pub models: Vec<ModelTotals>,
    /// The sessions with the most input + output tokens.
    pub top_sessions: Vec<TopSession>,
    /// Usage per model and task; empty for a window (see the module doc).
    pub usage: Vec<UsageAttribution>,
}

/// The report over every session (`window` unset) or over the sessions that
/// started in `window`, with the `top` sessions with the most tokens.
pub fn usage_report<S>(store: &S, window: TimeWindow, top: u32) -> Result<UsageReport>
where
    S: Accounting + Sessions + Messages + Listings + ?Sized,
{
    if !window.is_set() {
        return Ok(UsageReport {
            models: store.model_totals()?,
            top_sessions: store.top_sessions(top)?,
            usage: store.usage_by_model_and_task()?,
            sessions: store.session_count(&SessionCountOptions::all())?,
            messages: store.message_count(None)?,
        });
    }
    let sessions = sessions_started_in(store, None, window)?;
    Ok(UsageReport {
        sessions: sessions.len() as i64,
        messages: sessions.iter().map(|s| s.message_count.unwrap_or(0)).sum(),
        models: model_totals(&sessions),
        top_sessions: top_sessions(&sessions, top),
        usage: Vec::new(),
    })
}

/// [`Accounting::model_totals`] over these sessions: per model (sessions
/// with a model only), most expensive first, unknown costs last.
pub fn model_totals(sessions: &[Session]) -> Vec<ModelTotals> {
    let mut by_model: BTreeMap<&str, ModelTotals> = BTreeMap::new();
    for s in sessions {
        let Some(model) = s.model.as_deref() else {
            continue;
        };
        let totals = by_model.entry(model).or_insert_with(|| ModelTotals {
            model: model.to_owned(),
            session_count: 0,
            total_input: None,
            total_output: None,
            total_cost: None,
            total_cache_read: None,
            total_cache_write: None,
            total_reasoning: None,
        });
        totals.session_count += 1;
        add(&mut totals.total_input, s.input_tokens);
        add(&mut totals.total_output, s.output_tokens);
        add(&mut totals.total_cache_read, s.cache_read_tokens);
        add(&mut totals.total_cache_write, s.cache_write_tokens);
        add(&mut totals.total_reasoning, s.reasoning_tokens);
        if let Some(cost) = s.estimated_cost_usd {
            totals.total_cost = Some(totals.total_cost.unwrap_or(0.0) + cost);
        }
    }
    let mut totals: Vec<ModelTotals> = by_model.into_values().collect();
    totals.sort_by(|a, b| descending_nulls_last(a.total_cost, b.total_cost));
    totals
}

/// [`Accounting::top_sessions`] over these sessions: the `limit` with the
/// most input + output tokens (ties keep the sessions' order).
pub fn top_sessions(sessions: &[Session], limit: u32) -> Vec<TopSession> {
    let mut top: Vec<TopSession> = sessions
        .iter()
        .map(|s| TopSession {
            id: s.id.clone(),
            title: s.title.clone(),
            model: s.model.clone(),
            total_tokens: s
                .input_tokens
                .zip(s.output_tokens)
                .map(|(i, o)| i.saturating_add(o)),
            estimated_cost_usd: s.estimated_cost_usd,
        })
        .collect();
    top.sort_by(|a, b| {
        descending_nulls_last(
            a.total_tokens.map(|t| t as f64),
            b.total_tokens.map(|t| t as f64),
        )
    });
    top.truncate(limit as usize);
    top
}

/// SQL's `SUM` over optional integers: `None` when every value is `None`.
fn add(total: &mut Option<i64>, value: Option<i64>) {
    if let Some(value) = value {
        *total = Some(total.unwrap_or(0).saturating_add(value));
    }
}

/// `ORDER BY x DESC` with NULLs last, as the stores' SQL sorts.
fn descending_nulls_last(a: Option<f64>, b: Option<f64>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => b.total_cmp(&a),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}
