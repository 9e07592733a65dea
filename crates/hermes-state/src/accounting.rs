//! Token and cost accounting on a file (`api.md` §3): the contract's
//! `Accounting`, its writes through the write path and its statistics
//! through the query crate.

use crate::db::SessionDb;
use crate::error::Result;
use crate::sessions::ABSOLUTE_COUNTS;
use crate::sessions::INCREMENTAL_COUNTS;
use crate::sessions::add_usage;
use crate::sessions::session_route;
use crate::sessions::set_first_accounted_route;
use crate::sessions::upsert_session;
use hermes_state_core::accounting::UsageDelta;
use hermes_state_core::store::Accounting;
use hermes_state_query::stats;
use hermes_state_query::stats::ModelTotals;
use hermes_state_query::stats::TopSession;
use hermes_state_query::stats::UsageAttribution;
use hermes_state_sqlite::Context;
use hermes_state_types::TokenUpdate;
use hermes_state_types::{AuxiliaryUsage, NewSession};
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
        let mut missing = NewSession::new(session_id, "unknown");
        missing.model = update.model.clone();
        let has_usage = update.has_usage();
        self.write("updating token counts", |conn| {
            upsert_session(conn, &missing, self.now())?;
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
            if let Some(delta) = UsageDelta::of_update(update, session_route(conn, session_id)?) {
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
        let missing = NewSession::new(session_id, "unknown");
        self.write("recording auxiliary usage", |conn| {
            upsert_session(conn, &missing, self.now())?;
            let delta = UsageDelta::of_auxiliary(usage);
            add_usage(conn, session_id, &delta, self.now())
        })
    }
}
