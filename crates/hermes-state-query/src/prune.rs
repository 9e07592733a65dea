//! Which sessions a prune selects (`api.md` §11.3): the one filter of
//! `prune_sessions`, `list_prune_candidates` and `archive_sessions`
//! (§10.4: "same filter vocabulary as §11.3"), and the one place its SQL is
//! built. The facade runs that SQL inside its write transaction to prune or
//! archive, and on a read connection to list.

use std::path::{Path, PathBuf};

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use serde::Serialize;

pub use crate::conditions::cwd_folder;

use crate::conditions::{Conditions, text_value};
use crate::error::{QueryContext, QueryError};
use crate::values::{integer, real, text};

/// The optional filters of a prune (`api.md` §11.3), every one the original
/// accepts; `None` (and, for text, the empty string) means "no filter". The
/// original refuses unknown filter names at run time; here a filter that
/// does not exist cannot be spelled.
///
/// Matching is the original's SQL, clause for clause: `title_like`,
/// `model_like` and `branch_like` are `LOWER(COALESCE(col, '')) LIKE
/// '%<value lower-cased>%'` (SQLite's `LIKE` folds ASCII only; `%` and `_` in
/// the value are wildcards, `\` is literal); `provider` compares
/// `LOWER(billing_provider)` with the lower-cased value; the other text
/// filters are exact. Bounds are inclusive (`min_* <= value <= max_*`,
/// `started_at >= started_after`), except `started_before`, which is
/// strict. Floats must be finite (see [`PruneFilters::non_finite`]).
///
/// The age bound and the source are not here: they are the operation's own
/// arguments (`older_than_days`, `source`), given to
/// [`PruneCandidates::new`] next to these filters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PruneFilters {
    /// `started_at < started_before` (Unix seconds); replaces the
    /// `older_than_days` bound.
    pub started_before: Option<f64>,
    /// `started_at >= started_after` (Unix seconds).
    pub started_after: Option<f64>,
    /// `title` contains this text (see the type's documentation).
    pub title_like: Option<String>,
    /// `end_reason` equals this.
    pub end_reason: Option<String>,
    /// `cwd` is this folder or inside it (trailing `/` and `\` ignored), as
    /// `list_sessions_rich` (`api.md` §10.3).
    pub cwd_prefix: Option<String>,
    /// `message_count >= min_messages`.
    pub min_messages: Option<i64>,
    /// `message_count <= max_messages`.
    pub max_messages: Option<i64>,
    /// Tri-state: `Some(true)` only archived sessions, `Some(false)` only
    /// unarchived ones, `None` both.
    pub archived: Option<bool>,
    /// `model` contains this text.
    pub model_like: Option<String>,
    /// `billing_provider` equals this, ASCII case-insensitively.
    pub provider: Option<String>,
    /// `user_id` equals this.
    pub user_id: Option<String>,
    /// `chat_id` equals this.
    pub chat_id: Option<String>,
    /// `chat_type` equals this.
    pub chat_type: Option<String>,
    /// `git_branch` contains this text.
    pub branch_like: Option<String>,
    /// `input_tokens + output_tokens >= min_tokens` (a NULL counter as 0).
    pub min_tokens: Option<i64>,
    /// `input_tokens + output_tokens <= max_tokens` (a NULL counter as 0).
    pub max_tokens: Option<i64>,
    /// `COALESCE(actual_cost_usd, estimated_cost_usd, 0) >= min_cost`.
    pub min_cost: Option<f64>,
    /// `COALESCE(actual_cost_usd, estimated_cost_usd, 0) <= max_cost`.
    pub max_cost: Option<f64>,
    /// `tool_call_count >= min_tool_calls` (a NULL counter as 0).
    pub min_tool_calls: Option<i64>,
    /// `tool_call_count <= max_tool_calls` (a NULL counter as 0).
    pub max_tool_calls: Option<i64>,
}

impl PruneFilters {
    /// The first float bound that is not finite (NaN or an infinity), by
    /// name, which a caller refuses as invalid input.
    pub fn non_finite(&self) -> Option<(&'static str, f64)> {
        [
            ("started_before", self.started_before),
            ("started_after", self.started_after),
            ("min_cost", self.min_cost),
            ("max_cost", self.max_cost),
        ]
        .into_iter()
        .find_map(|(name, value)| value.filter(|v| !v.is_finite()).map(|v| (name, v)))
    }
}

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

/// The original's `f"%{value.lower()}%"`: Python's lower-casing, wildcards
/// left as they are (its `LIKE` has no `ESCAPE`).
pub fn lowered_contains(value: &str) -> String {
    format!("%{}%", value.to_lowercase())
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

/// A row of `list_prune_candidates` (`api.md` §10.4): the original's
/// `id, source, title, model, started_at, ended_at, message_count,
/// archived`, serialised as its dict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PruneCandidate {
    /// `sessions.id`.
    pub id: String,
    /// `sessions.source`.
    pub source: Option<String>,
    /// `sessions.title`.
    pub title: Option<String>,
    /// `sessions.model`.
    pub model: Option<String>,
    /// `sessions.started_at`.
    pub started_at: Option<f64>,
    /// `sessions.ended_at` (never NULL: only ended sessions are candidates).
    pub ended_at: Option<f64>,
    /// `sessions.message_count`.
    pub message_count: Option<i64>,
    /// `sessions.archived`.
    pub archived: Option<i64>,
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

/// The selection of `list_prune_candidates` (`api.md` §10.4): the age
/// bound, the source and the §11.3 filters. `Default` is the original's
/// defaults: **no age bound** (`older_than_days=None`), no source, no filter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PruneSelection {
    /// Only sessions started more than this many days ago; `None` (the
    /// default) means no age bound. Must be finite. Ignored when
    /// [`PruneFilters::started_before`] is given.
    pub older_than_days: Option<f64>,
    /// Only sessions of this source (when `Some` and non-empty).
    pub source: Option<String>,
    /// The original's optional keyword filters (`api.md` §11.3).
    pub filters: PruneFilters,
}

impl PruneSelection {
    /// The first float of the selection that is not finite
    /// (`older_than_days`, then the filters' bounds), by name; a caller
    /// refuses it as invalid input before selecting anything.
    pub fn non_finite(&self) -> Option<(&'static str, f64)> {
        self.older_than_days
            .filter(|days| !days.is_finite())
            .map(|days| ("older_than_days", days))
            .or_else(|| self.filters.non_finite())
    }

    /// The sessions this selection picks at time `now` (check
    /// [`PruneSelection::non_finite`] first).
    pub fn candidates(&self, now: f64) -> PruneCandidates {
        PruneCandidates::new(
            self.older_than_days,
            self.source.as_deref(),
            &self.filters,
            now,
        )
    }
}

/// The selection of `archive_sessions` (`api.md` §10.4): as
/// [`PruneSelection`], with the original's defaults for that call: no age
/// bound, and `filters.archived = Some(false)` (only sessions not archived
/// yet, so a repeat run is a no-op) unless the caller sets it (`None`: both).
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveSelection {
    /// As [`PruneSelection::older_than_days`] (default `None`).
    pub older_than_days: Option<f64>,
    /// As [`PruneSelection::source`].
    pub source: Option<String>,
    /// As [`PruneSelection::filters`]; `archived` defaults to `Some(false)`.
    pub filters: PruneFilters,
}

impl Default for ArchiveSelection {
    fn default() -> Self {
        ArchiveSelection {
            older_than_days: None,
            source: None,
            filters: PruneFilters {
                archived: Some(false),
                ..PruneFilters::default()
            },
        }
    }
}

impl ArchiveSelection {
    /// The same selection as a [`PruneSelection`].
    pub fn selection(&self) -> PruneSelection {
        PruneSelection {
            older_than_days: self.older_than_days,
            source: self.source.clone(),
            filters: self.filters.clone(),
        }
    }
}

/// What `prune_sessions` removes (`api.md` §11.3), for every backend; the
/// selection is the one of `list_prune_candidates` and `archive_sessions`
/// (`older_than_days`, `source` and `filters`), with this call's default
/// age bound of 90 days.
#[derive(Debug, Clone, PartialEq)]
pub struct PruneOptions {
    /// Only sessions started more than this many days ago; `None` means no
    /// age bound. Default 90, as the original. Must be finite. Ignored when
    /// [`PruneFilters::started_before`] is given.
    pub older_than_days: Option<f64>,
    /// Only sessions of this source (when `Some` and non-empty).
    pub source: Option<String>,
    /// The original's optional keyword filters (`api.md` §11.3).
    pub filters: PruneFilters,
    /// Write nothing: list what would be pruned.
    pub dry_run: bool,
    /// Where the agent keeps transcripts: after pruning, `<dir>/<id>.json`,
    /// `<dir>/<id>.jsonl` and `<dir>/request_dump_<id>_*.json` of each pruned
    /// session are deleted (errors ignored; [`remove_transcripts`]).
    pub sessions_dir: Option<PathBuf>,
}

impl Default for PruneOptions {
    fn default() -> Self {
        PruneOptions {
            older_than_days: Some(90.0),
            source: None,
            filters: PruneFilters::default(),
            dry_run: false,
            sessions_dir: None,
        }
    }
}

impl PruneOptions {
    /// The selection of these options (`dry_run` and `sessions_dir` play no
    /// part in it).
    pub fn selection(&self) -> PruneSelection {
        PruneSelection {
            older_than_days: self.older_than_days,
            source: self.source.clone(),
            filters: self.filters.clone(),
        }
    }
}

/// What a prune removed (or, in a dry run, would remove).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Number of sessions.
    pub count: usize,
    /// Their ids, oldest start first.
    pub ids: Vec<String>,
}

/// Deletes the transcript files of deleted sessions, as the original
/// (`api.md` §11.3, §11.6): `<id>.json`, `<id>.jsonl`,
/// `request_dump_<id>_*.json`; errors ignored. The one transcript removal of
/// prunes (on every backend) and of single and batch deletes. Ids holding a
/// path separator are skipped (they would name files outside `dir`).
pub fn remove_transcripts(dir: &Path, ids: &[String]) {
    let ids: Vec<&String> = ids
        .iter()
        .filter(|id| !id.contains(['/', '\\', '\0']))
        .collect();
    for id in &ids {
        let _ = std::fs::remove_file(dir.join(format!("{id}.json")));
        let _ = std::fs::remove_file(dir.join(format!("{id}.jsonl")));
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = name
            .strip_prefix("request_dump_")
            .filter(|rest| rest.ends_with(".json"))
        else {
            continue;
        };
        if ids.iter().any(|id| {
            rest.strip_prefix(id.as_str())
                .is_some_and(|r| r.starts_with('_'))
        }) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
