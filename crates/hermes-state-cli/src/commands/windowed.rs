//! The sessions started in a `--since` / `--until` window, for the commands
//! whose library calls have no time filter (`export`, `stats`): read newest
//! start first through `recent_sessions`, stopping before the window.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use hermes_state::{ListFilter, ModelTotals, Session, SessionStore, TopSession};

use crate::paging::PAGE;
use crate::time_window::TimeWindow;

/// The sessions (of `source`, when given) started in the window, newest first.
pub fn sessions_in(
    db: &dyn SessionStore,
    source: Option<&str>,
    window: TimeWindow,
) -> hermes_state::Result<Vec<Session>> {
    let mut sessions = Vec::new();
    let mut offset = 0u32;
    loop {
        let page = db.recent_sessions(&ListFilter {
            source: source.map(str::to_owned),
            limit: Some(PAGE),
            offset,
        })?;
        let fetched = page.len();
        for row in page {
            let started = row.session.started_at;
            if window.is_after(started) {
                return Ok(sessions);
            }
            if window.contains(started) {
                sessions.push(row.session);
            }
        }
        if fetched < PAGE as usize {
            return Ok(sessions);
        }
        offset = offset.saturating_add(PAGE);
    }
}

/// SQL's `SUM` over optional integers: `None` when every value is `None`.
fn add(total: &mut Option<i64>, value: Option<i64>) {
    if let Some(value) = value {
        *total = Some(total.unwrap_or(0).saturating_add(value));
    }
}

/// [`hermes_state::SessionDb::model_totals`] over these sessions: per model (sessions with
/// a model only), most expensive first, unknown costs last.
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

/// [`hermes_state::SessionDb::top_sessions`] over these sessions: the `limit` with the most
/// input + output tokens.
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

fn descending_nulls_last(a: Option<f64>, b: Option<f64>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => b.total_cmp(&a),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}
