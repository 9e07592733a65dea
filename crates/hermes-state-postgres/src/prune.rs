//! Pruning old sessions (`api.md` §11.3) with the selection of the SQLite
//! backend (`hermes_state_core::prune`), spelled for PostgreSQL with bound
//! parameters only. SQLite's `LIKE` and `LOWER` fold ASCII case only; here
//! both sides are folded with `translate` over `A`–`Z`, which is exactly
//! that. The original's `LIKE`s without `ESCAPE` are `ESCAPE ''` here (no
//! escape character, where PostgreSQL's default is `\`).

use hermes_state_core::prune::{PruneFilters, PruneSelection, cwd_folder, lowered_contains};
use postgres::types::ToSql;

use crate::error::{Context, PgError, Result};

const UPPER: &str = "'ABCDEFGHIJKLMNOPQRSTUVWXYZ'";
const LOWER: &str = "'abcdefghijklmnopqrstuvwxyz'";

/// `expr` with ASCII `A`–`Z` folded to lower case: both sides of a `LIKE`
/// folded so compare as SQLite's `LIKE` does.
pub(crate) fn fold_ascii(expr: &str) -> String {
    format!("translate({expr}, {UPPER}, {LOWER})")
}

/// `WHERE` conditions over `sessions s` and their parameters (`$1`, `$2`, …).
#[derive(Default)]
pub(crate) struct Conditions {
    clauses: Vec<String>,
    params: Vec<Box<dyn ToSql + Sync>>,
}

impl Conditions {
    /// A condition whose `{}` placeholders take `values`, in order, as the
    /// next parameters.
    pub(crate) fn push(&mut self, template: &str, values: Vec<Box<dyn ToSql + Sync>>) {
        let mut parts = template.split("{}");
        let mut clause = parts.next().unwrap_or_default().to_owned();
        for (part, value) in parts.zip(values) {
            self.params.push(value);
            clause.push_str(&format!("${}{part}", self.params.len()));
        }
        self.clauses.push(clause);
    }

    /// `s.cwd` is the folder or lies below it (`api.md` §10.3, §11.3), the
    /// original's clause: trailing `/` and `\` stripped (unless nothing
    /// would be left), `%` and `_` of the folder wildcards and `\` literal
    /// (no escape character), ASCII case folded as SQLite's `LIKE` folds it.
    pub(crate) fn push_cwd_prefix(&mut self, prefix: &str) {
        let folder = cwd_folder(prefix).to_owned();
        self.push(
            &format!(
                "(s.cwd = {{}} OR {cwd} LIKE {p} ESCAPE '' OR {cwd} LIKE {p} ESCAPE '')",
                cwd = fold_ascii("s.cwd"),
                p = fold_ascii("{}"),
            ),
            vec![
                Box::new(folder.clone()),
                Box::new(format!("{folder}/%")),
                Box::new(format!("{folder}\\%")),
            ],
        );
    }

    /// The original's `LOWER(COALESCE(column, '')) LIKE '%<value
    /// lower-cased>%'`: Python's lower-casing of the value, ASCII folding of
    /// the column, `%` and `_` wildcards, no escape character.
    fn push_lowered_like(&mut self, column: &str, value: &str) {
        self.push(
            &format!(
                "{} LIKE {} ESCAPE ''",
                fold_ascii(&format!("COALESCE({column}, '')")),
                fold_ascii("{}")
            ),
            vec![Box::new(lowered_contains(value))],
        );
    }

    pub(crate) fn where_clause(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.clauses.join(" AND "))
        }
    }

    pub(crate) fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.params.iter().map(|p| p.as_ref()).collect()
    }
}

/// The selection of `hermes_state_core::prune::PruneCandidates::new`,
/// condition for condition.
fn candidates(selection: &PruneSelection, now: f64) -> Conditions {
    let f: &PruneFilters = &selection.filters;
    let mut c = Conditions::default();
    let nonempty = |value: &Option<String>| value.clone().filter(|v| !v.is_empty());
    c.push("s.ended_at IS NOT NULL", vec![]);
    let before = f
        .started_before
        .or(selection.older_than_days.map(|days| now - days * 86_400.0));
    if let Some(before) = before {
        c.push("s.started_at < {}", vec![Box::new(before)]);
    }
    if let Some(after) = f.started_after {
        c.push("s.started_at >= {}", vec![Box::new(after)]);
    }
    if let Some(source) = selection.source.clone().filter(|s| !s.is_empty()) {
        c.push("s.source = {}", vec![Box::new(source)]);
    }
    if let Some(title) = nonempty(&f.title_like) {
        c.push_lowered_like("s.title", &title);
    }
    if let Some(reason) = nonempty(&f.end_reason) {
        c.push("s.end_reason = {}", vec![Box::new(reason)]);
    }
    if let Some(prefix) = nonempty(&f.cwd_prefix) {
        c.push_cwd_prefix(&prefix);
    }
    let tokens = "(COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0))";
    let integer_bounds = [
        ("s.message_count", f.min_messages, f.max_messages),
        (tokens, f.min_tokens, f.max_tokens),
        (
            "COALESCE(s.tool_call_count, 0)",
            f.min_tool_calls,
            f.max_tool_calls,
        ),
    ];
    for (expr, min, max) in integer_bounds {
        if let Some(min) = min {
            c.push(&format!("{expr} >= {{}}"), vec![Box::new(min)]);
        }
        if let Some(max) = max {
            c.push(&format!("{expr} <= {{}}"), vec![Box::new(max)]);
        }
    }
    if let Some(model) = nonempty(&f.model_like) {
        c.push_lowered_like("s.model", &model);
    }
    if let Some(provider) = nonempty(&f.provider) {
        c.push(
            &format!("{} = {{}}", fold_ascii("COALESCE(s.billing_provider, '')")),
            vec![Box::new(provider.to_lowercase())],
        );
    }
    let equal = [
        ("s.user_id", &f.user_id),
        ("s.chat_id", &f.chat_id),
        ("s.chat_type", &f.chat_type),
    ];
    for (column, value) in equal {
        if let Some(value) = nonempty(value) {
            c.push(&format!("{column} = {{}}"), vec![Box::new(value)]);
        }
    }
    if let Some(branch) = nonempty(&f.branch_like) {
        c.push_lowered_like("s.git_branch", &branch);
    }
    let cost = "COALESCE(s.actual_cost_usd, s.estimated_cost_usd, 0)";
    if let Some(min) = f.min_cost {
        c.push(&format!("{cost} >= {{}}"), vec![Box::new(min)]);
    }
    if let Some(max) = f.max_cost {
        c.push(&format!("{cost} <= {{}}"), vec![Box::new(max)]);
    }
    if let Some(archived) = f.archived {
        c.push("s.archived = {}", vec![Box::new(i64::from(archived))]);
    }
    c
}

/// The candidates' conditions, once the selection is checked.
pub(crate) fn checked_candidates(selection: &PruneSelection, now: f64) -> Result<Conditions> {
    if let Some((name, value)) = selection.non_finite() {
        return Err(PgError::InvalidInput(format!(
            "{name} must be finite, got {value}"
        )));
    }
    Ok(candidates(selection, now))
}

/// The candidates' ids, oldest start first (ties by id), inside the
/// caller's transaction.
pub(crate) fn candidate_ids(
    tx: &mut postgres::Transaction<'_>,
    conditions: &Conditions,
) -> Result<Vec<String>> {
    let sql = format!(
        "SELECT s.id FROM sessions s{} ORDER BY s.started_at, s.id",
        conditions.where_clause()
    );
    Ok(tx
        .query(&sql, &conditions.params())
        .context("finding sessions to prune")?
        .iter()
        .map(|row| row.get(0))
        .collect())
}
