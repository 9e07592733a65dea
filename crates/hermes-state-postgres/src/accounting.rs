//! Token and cost accounting (`api.md` §3.1–§3.3), with the SQLite
//! backend's rules: the session's counters, its first accounted billing
//! route, and the `session_model_usage` row deltas.

use hermes_state_types::{AuxiliaryUsage, TokenUpdate};
use postgres::Transaction;

use hermes_state_core::accounting::{SessionRoute, UsageDelta};

use crate::error::{Context, Result};
use crate::stats::MODEL_TOTALS;
use crate::stats::TOP_SESSIONS;
use crate::stats::USAGE_BY_MODEL_AND_TASK;
use crate::{PgStore, WriteScope};
use hermes_state_core::Result as CoreResult;
use hermes_state_core::stats::ModelTotals;
use hermes_state_core::stats::TopSession;
use hermes_state_core::stats::UsageAttribution;
use hermes_state_core::store::Accounting;

/// Creates a missing session (source as given) or fills its NULL `model`:
/// `ensure_session` of the SQLite backend, inside the caller's transaction.
const ENSURE_SESSION: &str = "INSERT INTO sessions (id, source, model, started_at)
VALUES ($1, $2, $3::text, $4)
ON CONFLICT (id) DO UPDATE SET model = COALESCE(sessions.model, excluded.model)";

const INCREMENTAL_COUNTS: &str = "UPDATE sessions SET
    input_tokens = input_tokens + $2::bigint,
    output_tokens = output_tokens + $3::bigint,
    cache_read_tokens = cache_read_tokens + $4::bigint,
    cache_write_tokens = cache_write_tokens + $5::bigint,
    reasoning_tokens = reasoning_tokens + $6::bigint,
    estimated_cost_usd = COALESCE(estimated_cost_usd, 0) + COALESCE($7::float8, 0),
    actual_cost_usd = CASE WHEN $8::float8 IS NULL THEN actual_cost_usd ELSE COALESCE(actual_cost_usd, 0) + $8::float8 END,
    cost_status = COALESCE($9::text, cost_status),
    cost_source = COALESCE($10::text, cost_source),
    pricing_version = COALESCE($11::text, pricing_version),
    billing_provider = COALESCE(billing_provider, $12::text),
    billing_base_url = COALESCE(billing_base_url, $13::text),
    billing_mode = COALESCE(billing_mode, $14::text),
    model = COALESCE(model, $15::text),
    api_call_count = COALESCE(api_call_count, 0) + $16::bigint
WHERE id = $1";

const ABSOLUTE_COUNTS: &str = "UPDATE sessions SET
    input_tokens = $2::bigint,
    output_tokens = $3::bigint,
    cache_read_tokens = $4::bigint,
    cache_write_tokens = $5::bigint,
    reasoning_tokens = $6::bigint,
    estimated_cost_usd = COALESCE($7::float8, 0),
    actual_cost_usd = CASE WHEN $8::float8 IS NULL THEN actual_cost_usd ELSE $8::float8 END,
    cost_status = COALESCE($9::text, cost_status),
    cost_source = COALESCE($10::text, cost_source),
    pricing_version = COALESCE($11::text, pricing_version),
    billing_provider = COALESCE(billing_provider, $12::text),
    billing_base_url = COALESCE(billing_base_url, $13::text),
    billing_mode = COALESCE(billing_mode, $14::text),
    model = COALESCE(model, $15::text),
    api_call_count = $16::bigint
WHERE id = $1";

const UPSERT_USAGE: &str = "INSERT INTO session_model_usage (session_id, model, billing_provider, billing_base_url, billing_mode, task, api_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, estimated_cost_usd, actual_cost_usd, cost_status, cost_source, first_seen, last_seen)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::text, $16::text, $17, $17)
ON CONFLICT (session_id, model, billing_provider, billing_base_url, billing_mode, task) DO UPDATE SET
    api_call_count = session_model_usage.api_call_count + excluded.api_call_count,
    input_tokens = session_model_usage.input_tokens + excluded.input_tokens,
    output_tokens = session_model_usage.output_tokens + excluded.output_tokens,
    cache_read_tokens = session_model_usage.cache_read_tokens + excluded.cache_read_tokens,
    cache_write_tokens = session_model_usage.cache_write_tokens + excluded.cache_write_tokens,
    reasoning_tokens = session_model_usage.reasoning_tokens + excluded.reasoning_tokens,
    estimated_cost_usd = session_model_usage.estimated_cost_usd + excluded.estimated_cost_usd,
    actual_cost_usd = session_model_usage.actual_cost_usd + excluded.actual_cost_usd,
    cost_status = COALESCE(excluded.cost_status, session_model_usage.cost_status),
    cost_source = COALESCE(excluded.cost_source, session_model_usage.cost_source),
    last_seen = excluded.last_seen";

fn ensure_session(
    tx: &mut Transaction<'_>,
    session_id: &str,
    model: Option<&str>,
    now: f64,
) -> Result<()> {
    tx.execute(ENSURE_SESSION, &[&session_id, &"unknown", &model, &now])
        .context("creating the session")?;
    Ok(())
}

/// The session's model and billing route (all `None` for an unknown
/// session), which a token update that names none of its own falls back on.
fn session_route(tx: &mut Transaction<'_>, session_id: &str) -> Result<SessionRoute> {
    let row = tx
        .query_opt(
            "SELECT model, billing_provider, billing_base_url, billing_mode FROM sessions WHERE id = $1",
            &[&session_id],
        )
        .context("reading the billing route")?;
    Ok(row.map_or_else(SessionRoute::default, |row| SessionRoute {
        model: row.get(0),
        provider: row.get(1),
        base_url: row.get(2),
        mode: row.get(3),
    }))
}

/// The first call that carries usage, a model and a provider fixes the
/// session's route when it differs from what the session was created with.
fn set_first_accounted_route(
    tx: &mut Transaction<'_>,
    session_id: &str,
    update: &TokenUpdate,
    has_usage: bool,
) -> Result<()> {
    let (Some(model), Some(provider)) = (&update.model, &update.billing_provider) else {
        return Ok(());
    };
    if !has_usage {
        return Ok(());
    }
    let Some(row) = tx
        .query_opt(
            "SELECT model, billing_provider, api_call_count FROM sessions WHERE id = $1",
            &[&session_id],
        )
        .context("reading the billing route")?
    else {
        return Ok(());
    };
    let (row_model, row_provider, api_calls): (Option<String>, Option<String>, Option<i64>) =
        (row.get(0), row.get(1), row.get(2));
    if api_calls.unwrap_or(0) == 0
        && (row_model.as_ref() != Some(model) || row_provider.as_ref() != Some(provider))
    {
        tx.execute(
            "UPDATE sessions SET model = $1, billing_provider = $2, billing_base_url = $3::text, \
             billing_mode = $4::text WHERE id = $5",
            &[
                model,
                provider,
                &update.billing_base_url,
                &update.billing_mode,
                &session_id,
            ],
        )
        .context("setting the billing route")?;
    }
    Ok(())
}

fn add_usage(
    tx: &mut Transaction<'_>,
    session_id: &str,
    d: &UsageDelta<'_>,
    now: f64,
) -> Result<()> {
    tx.execute(
        UPSERT_USAGE,
        &[
            &session_id,
            &d.model,
            &d.provider,
            &d.base_url,
            &d.mode,
            &d.task,
            &d.api_calls,
            &d.tokens[0],
            &d.tokens[1],
            &d.tokens[2],
            &d.tokens[3],
            &d.tokens[4],
            &d.estimated,
            &d.actual,
            &d.cost_status,
            &d.cost_source,
            &now,
        ],
    )
    .context("recording model usage")?;
    Ok(())
}

impl Accounting for PgStore {
    /// Adds (or, with `absolute`, sets) token and cost counters (`api.md`
    /// §3.1), creating the session with source `unknown` if it is missing.
    /// Incremental updates with usage also add to the `session_model_usage`
    /// row of the session's model and billing route (`task = ''`, §3.3).
    /// One transaction (the SQLite backend uses two: the session first).
    fn update_token_counts(&self, session_id: &str, update: &TokenUpdate) -> CoreResult<()> {
        let has_usage = update.has_usage();
        let now = self.now();
        Ok(self.write_in(
            "updating token counts",
            &WriteScope::session(session_id),
            |tx| {
                ensure_session(tx, session_id, update.model.as_deref(), now)?;
                set_first_accounted_route(tx, session_id, update, has_usage)?;
                let route = |value: &Option<String>| if has_usage { value.clone() } else { None };
                let sql = if update.absolute {
                    ABSOLUTE_COUNTS
                } else {
                    INCREMENTAL_COUNTS
                };
                tx.execute(
                    sql,
                    &[
                        &session_id,
                        &update.input_tokens,
                        &update.output_tokens,
                        &update.cache_read_tokens,
                        &update.cache_write_tokens,
                        &update.reasoning_tokens,
                        &update.estimated_cost_usd,
                        &update.actual_cost_usd,
                        &update.cost_status,
                        &update.cost_source,
                        &update.pricing_version,
                        &route(&update.billing_provider),
                        &route(&update.billing_base_url),
                        &route(&update.billing_mode),
                        &route(&update.model),
                        &update.api_call_count,
                    ],
                )
                .context("updating token counts")?;
                if let Some(delta) = UsageDelta::of_update(update, session_route(tx, session_id)?) {
                    add_usage(tx, session_id, &delta, now)?;
                }
                Ok(())
            },
        )?)
    }

    /// Records the usage of an auxiliary task (vision, compression, …) in
    /// `session_model_usage` without touching the session's counters
    /// (`api.md` §3.2), creating the session with source `unknown` if it is
    /// missing. Empty ids or tasks are ignored.
    fn record_auxiliary_usage(&self, session_id: &str, usage: &AuxiliaryUsage) -> CoreResult<()> {
        if session_id.is_empty() || usage.task.is_empty() {
            return Ok(());
        }
        let now = self.now();
        Ok(self.write_in(
            "recording auxiliary usage",
            &WriteScope::session(session_id),
            |tx| {
                ensure_session(tx, session_id, None, now)?;
                let delta = UsageDelta::of_auxiliary(usage);
                add_usage(tx, session_id, &delta, now)
            },
        )?)
    }

    /// Token and cost totals per model, most expensive first (NULL costs
    /// last; equal costs by model, in byte order).
    fn model_totals(&self) -> CoreResult<Vec<ModelTotals>> {
        Ok(self.read(|tx| {
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
        })?)
    }

    /// The `limit` sessions with the most input + output tokens (equal
    /// totals: earlier sessions first).
    fn top_sessions(&self, limit: u32) -> CoreResult<Vec<TopSession>> {
        let limit = i64::from(limit);
        Ok(self.read(|tx| {
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
        })?)
    }

    /// Usage per model and task (`session_model_usage`), most expensive
    /// first, then by model and task.
    fn usage_by_model_and_task(&self) -> CoreResult<Vec<UsageAttribution>> {
        Ok(self.read(|tx| {
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
        })?)
    }
}
