//! What a prune selects and reports (`api.md` §10.4, §11.3): the one
//! filter vocabulary of `prune_sessions`, `list_prune_candidates` and
//! `archive_sessions`, their selections and rows, and the rules every
//! backend applies alike (the `LIKE` text of a "contains" filter, the
//! folder of a `cwd_prefix`, the transcript files a delete removes). Each
//! backend turns a selection into its own SQL.

use std::path::{Path, PathBuf};

use serde::Serialize;

/// The folder of a `cwd_prefix` filter: without trailing `/` and `\`, or
/// the prefix itself when it is nothing else (Python's `p.rstrip("/\\") or
/// p`).
pub fn cwd_folder(prefix: &str) -> &str {
    match prefix.trim_end_matches(['/', '\\']) {
        "" => prefix,
        folder => folder,
    }
}

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
/// arguments (`older_than_days`, `source`), kept next to these filters in a
/// [`PruneSelection`].
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

/// The original's `f"%{value.lower()}%"`: Python's lower-casing, wildcards
/// left as they are (its `LIKE` has no `ESCAPE`).
pub fn lowered_contains(value: &str) -> String {
    format!("%{}%", value.to_lowercase())
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
