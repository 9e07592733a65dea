//! Pruning old sessions (`api.md` §11.3) with the selection of the SQLite
//! backend (`hermes_state_query::prune`), spelled for PostgreSQL with bound
//! parameters only. SQLite's `LIKE` folds ASCII case only; here both sides
//! are folded with `translate` over `A`–`Z`, which is exactly that.

use hermes_state_query::lookups::SessionActivity;
use hermes_state_query::prune::{PruneFilters, PruneOptions, PruneReport, remove_transcripts};
use hermes_state_query::titles::escape_like;
use postgres::types::ToSql;

use crate::PgStore;
use crate::deletes::delete_rows;
use crate::error::{Context, PgError, Result};
use crate::rich_listing::{LAST_ACTIVE, activity_from_row};
use crate::rows::{SESSION_COLUMNS, select_list};

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

    /// `column` contains `value` (SQLite's `LIKE '%value%'`: wildcards
    /// literal, ASCII case folded).
    pub(crate) fn push_contains(&mut self, column: &str, value: &str) {
        self.push(
            &format!(
                "translate({column}, {UPPER}, {LOWER}) LIKE translate({{}}, {UPPER}, {LOWER}) ESCAPE '\\'"
            ),
            vec![Box::new(format!("%{}%", escape_like(value)))],
        );
    }

    /// `s.cwd` is the folder or lies below it (`api.md` §10.3, §11.3):
    /// trailing `/` and `\` stripped, `%`, `_` and `\` of the folder
    /// literal, ASCII case folded as SQLite's `LIKE` folds it.
    pub(crate) fn push_cwd_prefix(&mut self, prefix: &str) {
        let folder = prefix.trim_end_matches(['/', '\\']).to_owned();
        let escaped = escape_like(&folder);
        let fold = |e: &str| format!("translate({e}, {UPPER}, {LOWER})");
        self.push(
            &format!(
                "(s.cwd = {{}} OR {cwd} LIKE {p} ESCAPE '\\' OR {cwd} LIKE {p} ESCAPE '\\')",
                cwd = fold("s.cwd"),
                p = fold("{}"),
            ),
            vec![
                Box::new(folder),
                Box::new(format!("{escaped}/%")),
                Box::new(format!("{escaped}\\\\%")),
            ],
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

/// The selection of `hermes_state_query::prune::PruneCandidates::new`,
/// condition for condition.
fn candidates(options: &PruneOptions, now: f64) -> Conditions {
    let f: &PruneFilters = &options.filters;
    let mut c = Conditions::default();
    let nonempty = |value: &Option<String>| value.clone().filter(|v| !v.is_empty());
    c.push("s.ended_at IS NOT NULL", vec![]);
    let before = f
        .started_before
        .or(options.older_than_days.map(|days| now - days * 86_400.0));
    if let Some(before) = before {
        c.push("s.started_at < {}", vec![Box::new(before)]);
    }
    if let Some(after) = f.started_after {
        c.push("s.started_at > {}", vec![Box::new(after)]);
    }
    if let Some(source) = options.source.clone().filter(|s| !s.is_empty()) {
        c.push("s.source = {}", vec![Box::new(source)]);
    }
    if let Some(title) = nonempty(&f.title_like) {
        c.push_contains("s.title", &title);
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
        ("s.tool_call_count", f.min_tool_calls, f.max_tool_calls),
    ];
    for (expr, min, max) in integer_bounds {
        if let Some(min) = min {
            c.push(&format!("{expr} >= {{}}"), vec![Box::new(min)]);
        }
        if let Some(max) = max {
            c.push(&format!("{expr} <= {{}}"), vec![Box::new(max)]);
        }
    }
    if let Some(archived) = f.archived {
        c.push("s.archived = {}", vec![Box::new(i64::from(archived))]);
    }
    if let Some(model) = nonempty(&f.model_like) {
        c.push_contains("s.model", &model);
    }
    let equal = [
        ("s.billing_provider", &f.provider),
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
        c.push_contains("s.git_branch", &branch);
    }
    let cost = "COALESCE(s.actual_cost_usd, s.estimated_cost_usd, 0)";
    if let Some(min) = f.min_cost {
        c.push(&format!("{cost} >= {{}}"), vec![Box::new(min)]);
    }
    if let Some(max) = f.max_cost {
        c.push(&format!("{cost} <= {{}}"), vec![Box::new(max)]);
    }
    c
}

/// The candidates' conditions, once the options are checked.
pub(crate) fn checked_candidates(options: &PruneOptions, now: f64) -> Result<Conditions> {
    if let Some((name, value)) = options.non_finite() {
        return Err(PgError::InvalidInput(format!(
            "{name} must be finite, got {value}"
        )));
    }
    Ok(candidates(options, now))
}

impl PgStore {
    /// `api.md` §10.4, §11.3: the sessions [`PgStore::prune_sessions`]
    /// would remove with these options, oldest start first, with
    /// `last_active`. `dry_run` and `sessions_dir` play no part.
    ///
    /// Errors: a non-finite age, time or cost bound is
    /// [`PgError::InvalidInput`].
    pub fn list_prune_candidates(&self, options: &PruneOptions) -> Result<Vec<SessionActivity>> {
        let conditions = checked_candidates(options, self.now())?;
        let sql = format!(
            "SELECT {columns}, {LAST_ACTIVE} AS last_active FROM sessions s{where_clause} \
             ORDER BY s.started_at, s.id",
            columns = select_list("s", &SESSION_COLUMNS),
            where_clause = conditions.where_clause(),
        );
        self.read(|tx| {
            Ok(tx
                .query(&sql, &conditions.params())
                .context("listing prune candidates")?
                .iter()
                .map(activity_from_row)
                .collect())
        })
    }

    /// `api.md` §10.4: archives (`archived = 1`) the sessions
    /// [`PgStore::prune_sessions`] would remove with these options, in one
    /// write transaction; returns how many were not archived before. With
    /// `dry_run`, returns that number and writes nothing.
    ///
    /// Errors: as [`PgStore::list_prune_candidates`].
    pub fn archive_sessions(&self, options: &PruneOptions) -> Result<usize> {
        let conditions = checked_candidates(options, self.now())?;
        let unarchived = format!(
            "SELECT s.id FROM sessions s{} ORDER BY s.started_at, s.id",
            conditions.where_clause()
        );
        let find = |tx: &mut postgres::Transaction<'_>| -> Result<Vec<String>> {
            Ok(tx
                .query(&unarchived, &conditions.params())
                .context("finding sessions to archive")?
                .iter()
                .map(|row| row.get(0))
                .collect())
        };
        if options.dry_run {
            let sql = format!(
                "SELECT COUNT(*) FROM sessions s{} AND s.archived = 0",
                conditions.where_clause()
            );
            let count: i64 = self.read(|tx| {
                Ok(tx
                    .query_one(&sql, &conditions.params())
                    .context("counting sessions to archive")?
                    .get(0))
            })?;
            return Ok(usize::try_from(count).unwrap_or(usize::MAX));
        }
        self.write("archiving sessions", |tx| {
            let ids = find(tx)?;
            let changed = tx
                .execute(
                    "UPDATE sessions SET archived = 1 WHERE id = ANY($1) AND archived = 0",
                    &[&ids],
                )
                .context("archiving sessions")?;
            Ok(usize::try_from(changed).unwrap_or(usize::MAX))
        })
    }

    /// Removes old ended sessions with their messages (`api.md` §11.3), as
    /// the SQLite backend: in one write transaction the sessions whose
    /// parent is pruned are orphaned, then the candidates' messages and
    /// rows are deleted (usage rows go with them); with `dry_run` the
    /// candidates are listed and nothing is written. Afterwards the pruned
    /// sessions' transcripts in `sessions_dir` are deleted.
    ///
    /// Errors: a non-finite `older_than_days` or float filter is
    /// [`PgError::InvalidInput`].
    pub fn prune_sessions(&self, options: &PruneOptions) -> Result<PruneReport> {
        let conditions = checked_candidates(options, self.now())?;
        let select = format!(
            "SELECT s.id FROM sessions s{} ORDER BY s.started_at, s.id",
            conditions.where_clause()
        );
        let find = |tx: &mut postgres::Transaction<'_>| -> Result<Vec<String>> {
            Ok(tx
                .query(&select, &conditions.params())
                .context("finding sessions to prune")?
                .iter()
                .map(|row| row.get(0))
                .collect())
        };
        let ids = if options.dry_run {
            self.read(find)?
        } else {
            self.write("pruning sessions", |tx| {
                let ids = find(tx)?;
                delete_rows(tx, &ids)?;
                Ok(ids)
            })?
        };
        if !options.dry_run
            && let Some(dir) = &options.sessions_dir
        {
            remove_transcripts(dir, &ids);
        }
        Ok(PruneReport {
            count: ids.len(),
            ids,
        })
    }
}
