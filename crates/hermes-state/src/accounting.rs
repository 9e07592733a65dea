//! Token and cost accounting on a file (`api.md` §3): the contract's
//! `Accounting`, its writes through the write path and its statistics
//! through the query crate.

use crate::db::SessionDb;
use crate::error::Result;
use crate::sessions::ABSOLUTE_COUNTS;
use crate::sessions::INCREMENTAL_COUNTS;
use crate::sessions::UsageDelta;
use crate::sessions::add_usage;
use crate::sessions::session_route;
use crate::sessions::set_first_accounted_route;
use hermes_state_core::store::Accounting;
use hermes_state_core::store::Sessions;
use hermes_state_query::stats;
use hermes_state_query::stats::ModelTotals;
use hermes_state_query::stats::TopSession;
use hermes_state_query::stats::UsageAttribution;
use hermes_state_sqlite::Context;
use hermes_state_types::AuxiliaryUsage;
use hermes_state_types::TokenUpdate;
use rusqlite::named_params;

impl Accounting for SessionDb {
    /// Token and cost totals per model, most expensive first.
    fn model_totals(&self) -> Result<Vec<ModelTotals>> {
        self.snapshot_read(|conn| Ok(stats::model_totals(conn)?))
    }

    /// The sessions with the most input + output tokens.
    fn top_sessions(&self, limit: u32) -> Result<Vec<TopSession>> {
        self.snapshot_read(|conn| Ok(stats::top_sessions(conn, limit)?))
    }

    /// Usage per model and task (`session_model_usage`).
    fn usage_by_model_and_task(&self) -> Result<Vec<UsageAttribution>> {
        self.snapshot_read(|conn| Ok(stats::usage_by_model_and_task(conn)?))
    }

    /// Adds (or, with `absolute`, sets) token and cost counters (`api.md` §3.1),
    /// creating the session with source `unknown` if it is missing.
    /// Incremental updates with usage also add to the `session_model_usage`
    /// row of the session's model and billing route (`task = ''`).
    fn update_token_counts(&self, session_id: &str, update: &TokenUpdate) -> Result<()> {
        self.ensure_session(session_id, "unknown", update.model.as_deref())?;
        let has_usage = update.has_usage();
        self.write("updating token counts", |conn| {
            set_first_accounted_route(conn, session_id, update, has_usage)?;
            let route = |value: &Option<String>| if has_usage { value.clone() } else { None };
            let sql = if update.absolute { ABSOLUTE_COUNTS } else { INCREMENTAL_COUNTS };
            conn.prepare_cached(sql)
                .and_then(|mut stmt| {
                    stmt.execute(named_params! {
                        ":id": session_id,
                        ":input": update.input_tokens, ":output": update.output_tokens,
                        ":cache_read": update.cache_read_tokens, ":cache_write": update.cache_write_tokens,
                        ":reasoning": update.reasoning_tokens,
                        ":estimated": update.estimated_cost_usd, ":actual": update.actual_cost_usd,
                        ":cost_status": update.cost_status, ":cost_source": update.cost_source,
                        ":pricing_version": update.pricing_version,
                        ":provider": route(&update.billing_provider), ":base_url": route(&update.billing_base_url),
                        ":mode": route(&update.billing_mode), ":model": route(&update.model),
                        ":api_calls": update.api_call_count,
                    })
                })
                .context("updating token counts")?;
            let adds_usage = !update.absolute
                && (update.input_tokens != 0
                    || update.output_tokens != 0
                    || update.cache_read_tokens != 0
                    || update.cache_write_tokens != 0
                    || update.reasoning_tokens != 0
                    || update.api_call_count != 0
                    || update.estimated_cost_usd.is_some_and(|c| c != 0.0));
            if adds_usage {
                let session_route = session_route(conn, session_id)?;
                let delta = UsageDelta {
                    model: update.model.clone().or(session_route.model).unwrap_or_else(|| "unknown".to_owned()),
                    provider: update.billing_provider.clone().or(session_route.provider).unwrap_or_default(),
                    base_url: update.billing_base_url.clone().or(session_route.base_url).unwrap_or_default(),
                    mode: update.billing_mode.clone().or(session_route.mode).unwrap_or_default(),
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
                };
                add_usage(conn, session_id, &delta, self.now())?;
            }
            Ok(())
        })
    }

    /// Records the usage of an auxiliary task (vision, compression, …) in
    /// `session_model_usage` without touching the session's counters
    /// (`api.md` §3.2). Empty ids or tasks are ignored.
    fn record_auxiliary_usage(&self, session_id: &str, usage: &AuxiliaryUsage) -> Result<()> {
        if session_id.is_empty() || usage.task.is_empty() {
            return Ok(());
        }
        self.ensure_session(session_id, "unknown", None)?;
        self.write("recording auxiliary usage", |conn| {
            let delta = UsageDelta {
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
            };
            add_usage(conn, session_id, &delta, self.now())
        })
    }
}
