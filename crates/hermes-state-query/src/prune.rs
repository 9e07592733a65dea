//! Which sessions a prune selects (`api.md` §11.3): the one filter of
//! `prune_sessions`, `list_prune_candidates` and `archive_sessions`
//! (§10.4: "same filter vocabulary as §11.3"), and the one place its SQL is
//! built. The facade runs that SQL inside its write transaction to prune or
//! archive, and on a read connection to list.

pub use hermes_state_core::prune::{
    ArchiveSelection, PruneCandidate, PruneFilters, PruneOptions, PruneReport, PruneSelection,
    cwd_folder, lowered_contains, remove_transcripts,
};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use crate::conditions::{Conditions, text_value};
use crate::error::{QueryContext, QueryError};
use crate::values::{integer, real, text};

/// `input_tokens + output_tokens`, a NULL counter counting as 0.
const TOKENS: &str = "(COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0))";
/// The cost of `api.md` §11.3.
const COST: &str = "COALESCE(s.actual_cost_usd, s.estimated_cost_usd, 0)";
/// `tool_call_count`, a NULL counter counting as 0.
const TOOL_CALLS: &str = "COALESCE(s.tool_call_count, 0)";
/// The order of `list_prune_candidates`: oldest start first, the
/// original's `ORDER BY` (ties are left to SQLite, as there).
const LISTING_ORDER: &str = " ORDER BY s.started_at ASC";
/// The order of the ids a prune or an archive run reports: oldest start
/// first, ties by id.
const ORDER: &str = " ORDER BY s.started_at, s.id";

/// `LOWER(COALESCE(column, ''))`, the left side of the original's text
/// filters.
fn lowered(column: &str) -> String {
    format!("LOWER(COALESCE({column}, ''))")
}

/// The candidates of a prune (`api.md` §11.3) as a `WHERE` clause over
/// `sessions s` with bound parameters: **ended** sessions, started before
/// the age bound, of the source, matching every filter. Listing, archiving
/// and pruning all run this one clause, so they select the same sessions.
#[derive(Debug, Clone)]
pub struct PruneCandidates {
    conditions: Conditions,
}

impl PruneCandidates {
    /// The candidates of a prune at time `now` (Unix seconds):
    /// `started_at < now − older_than_days × 86400` unless
    /// `filters.started_before` is given (`None`: no age bound); `source =
    /// ?` when `source` is non-empty; then every filter.
    ///
    /// Values are bound, never checked here: a NaN bound matches nothing.
    /// Callers refuse non-finite values first ([`PruneFilters::non_finite`]).
    pub fn new(
        older_than_days: Option<f64>,
        source: Option<&str>,
        filters: &PruneFilters,
        now: f64,
    ) -> Self {
        let f = filters;
        let mut c = Conditions::default();
        let nonempty = |value: &Option<String>| value.clone().filter(|v| !v.is_empty());
        c.push("s.ended_at IS NOT NULL", []);
        let before = f
            .started_before
            .or(older_than_days.map(|days| now - days * 86_400.0));
        if let Some(before) = before {
            c.push("s.started_at < ?", [SqlValue::Real(before)]);
        }
        if let Some(after) = f.started_after {
            c.push("s.started_at >= ?", [SqlValue::Real(after)]);
        }
        if let Some(source) = source.filter(|s| !s.is_empty()) {
            c.push("s.source = ?", [text_value(source)]);
        }
        if let Some(title) = nonempty(&f.title_like) {
            c.push(
                &format!("{} LIKE ?", lowered("s.title")),
                [SqlValue::Text(lowered_contains(&title))],
            );
        }
        if let Some(reason) = nonempty(&f.end_reason) {
            c.push("s.end_reason = ?", [SqlValue::Text(reason)]);
        }
        if let Some(prefix) = nonempty(&f.cwd_prefix) {
            c.push_cwd_prefix(&prefix);
        }
        let integer_bounds = [
            ("s.message_count", f.min_messages, f.max_messages),
            (TOKENS, f.min_tokens, f.max_tokens),
            (TOOL_CALLS, f.min_tool_calls, f.max_tool_calls),
        ];
        for (expr, min, max) in integer_bounds {
            if let Some(min) = min {
                c.push(&format!("{expr} >= ?"), [SqlValue::Integer(min)]);
            }
            if let Some(max) = max {
                c.push(&format!("{expr} <= ?"), [SqlValue::Integer(max)]);
            }
        }
        if let Some(model) = nonempty(&f.model_like) {
            c.push(
                &format!("{} LIKE ?", lowered("s.model")),
                [SqlValue::Text(lowered_contains(&model))],
            );
        }
        if let Some(provider) = nonempty(&f.provider) {
            c.push(
                &format!("{} = ?", lowered("s.billing_provider")),
                [SqlValue::Text(provider.to_lowercase())],
            );
        }
        let equal = [
            ("s.user_id", &f.user_id),
            ("s.chat_id", &f.chat_id),
            ("s.chat_type", &f.chat_type),
        ];
        for (column, value) in equal {
            if let Some(value) = nonempty(value) {
                c.push(&format!("{column} = ?"), [SqlValue::Text(value)]);
            }
        }
        if let Some(branch) = nonempty(&f.branch_like) {
            c.push(
                &format!("{} LIKE ?", lowered("s.git_branch")),
                [SqlValue::Text(lowered_contains(&branch))],
            );
        }
        if let Some(min) = f.min_cost {
            c.push(&format!("{COST} >= ?"), [SqlValue::Real(min)]);
        }
        if let Some(max) = f.max_cost {
            c.push(&format!("{COST} <= ?"), [SqlValue::Real(max)]);
        }
        if let Some(archived) = f.archived {
            c.push("s.archived = ?", [SqlValue::Integer(i64::from(archived))]);
        }
        PruneCandidates { conditions: c }
    }

    /// The candidates of `selection` at time `now` (check
    /// [`PruneSelection::non_finite`] first).
    pub fn of(selection: &PruneSelection, now: f64) -> Self {
        PruneCandidates::new(
            selection.older_than_days,
            selection.source.as_deref(),
            &selection.filters,
            now,
        )
    }

    /// The candidates' ids, oldest start first.
    pub fn ids(&self, conn: &Connection) -> Result<Vec<String>, QueryError> {
        let sql = format!(
            "SELECT s.id FROM sessions s{}{ORDER}",
            self.conditions.where_clause()
        );
        let mut stmt = conn
            .prepare_cached(&sql)
            .context("finding sessions to prune")?;
        let ids: Vec<Option<String>> = stmt
            .query_map(params_from_iter(&self.conditions.params), |row| {
                Ok(text(row.get_ref(0)?))
            })
            .and_then(Iterator::collect)
            .context("finding sessions to prune")?;
        Ok(ids.into_iter().flatten().collect())
    }
}

/// The columns of a [`PruneCandidate`], in its order, over `sessions s`.
pub const CANDIDATE_COLUMNS: &str = "s.id, s.source, s.title, s.model, s.started_at, \
     s.ended_at, s.message_count, s.archived";

/// The sessions a prune with these candidates removes (`api.md` §10.4,
/// §11.3), oldest start first.
pub fn list_prune_candidates(
    conn: &Connection,
    candidates: &PruneCandidates,
) -> Result<Vec<PruneCandidate>, QueryError> {
    const WHAT: &str = "listing prune candidates";
    let sql = format!(
        "SELECT {CANDIDATE_COLUMNS} FROM sessions s{where_clause}{LISTING_ORDER}",
        where_clause = candidates.conditions.where_clause(),
    );
    let mut stmt = conn.prepare_cached(&sql).context(WHAT)?;
    let rows = stmt
        .query_map(params_from_iter(&candidates.conditions.params), |row| {
            Ok(PruneCandidate {
                id: text(row.get_ref(0)?).unwrap_or_default(),
                source: text(row.get_ref(1)?),
                title: text(row.get_ref(2)?),
                model: text(row.get_ref(3)?),
                started_at: real(row.get_ref(4)?),
                ended_at: real(row.get_ref(5)?),
                message_count: integer(row.get_ref(6)?),
                archived: integer(row.get_ref(7)?),
            })
        })
        .and_then(Iterator::collect)
        .context(WHAT)?;
    Ok(rows)
}
