//! Listing sessions for pickers, dashboards and cleanups (`api.md` §10,
//! §11.4 idle sessions): what a rich listing takes and gives, and the rules
//! every backend applies alike (the preview of a first message, the
//! needles of `id_query` and `search_query`, a cron job's id range, the
//! ranking of `search_sessions_by_id`, the idle cutoff). The prune filter
//! of §11.3 is [`crate::prune`].

use hermes_state_types::Session;
use hermes_state_types::text::python_strip;
use serde::{Serialize, Serializer};

use crate::sanitize::is_python_word_char;

/// The number of sessions a listing returns by default (`api.md` §10).
pub const DEFAULT_LIMIT: u32 = 20;

/// What `list_sessions_rich` lists (`api.md` §10.3); `Default` is the
/// original's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RichListOptions {
    /// Only this source (when non-empty).
    pub source: Option<String>,
    /// Not these sources.
    pub exclude_sources: Vec<String>,
    /// Only sessions whose `cwd` is this folder or lies below it.
    pub cwd_prefix: Option<String>,
    /// At most this many rows (default 20).
    pub limit: u32,
    /// Skip this many rows.
    pub offset: u32,
    /// Also list compression continuations and delegate children (by default
    /// only roots and branch children, `api.md` §9.2 "listable").
    pub include_children: bool,
    /// Only sessions with at least this many messages (`message_count`).
    pub min_message_count: i64,
    /// Show a compression-ended root as its compression tip (default on;
    /// off with `include_children`).
    pub project_compression_tips: bool,
    /// Order by the newest activity of the session's forward compression
    /// chain instead of by start.
    pub order_by_last_active: bool,
    /// Also list archived sessions.
    pub include_archived: bool,
    /// Only archived sessions (wins over `include_archived`).
    pub archived_only: bool,
    /// With `order_by_last_active` only (ignored otherwise, as the
    /// original): only sessions whose id, or the id of a session of their
    /// forward compression chain, contains this text (trimmed and
    /// lower-cased; `LOWER(id)` folds ASCII only; `%`, `_`, `\` literal).
    pub id_query: Option<String>,
    /// With `order_by_last_active` only (ignored otherwise, as the
    /// original): only sessions where some session of the forward
    /// compression chain has this text (trimmed and lower-cased) in its
    /// title or id, or its title with `-`, `_`, `.` and spaces removed
    /// contains the text with every non-word character removed (`an94`
    /// finds `AN-94`).
    pub search_query: Option<String>,
    /// Leave `system_prompt` out of the rows (not read, not serialised).
    pub compact_rows: bool,
}

impl Default for RichListOptions {
    fn default() -> Self {
        RichListOptions {
            source: None,
            exclude_sources: Vec::new(),
            cwd_prefix: None,
            limit: DEFAULT_LIMIT,
            offset: 0,
            include_children: false,
            min_message_count: 0,
            project_compression_tips: true,
            order_by_last_active: false,
            include_archived: false,
            archived_only: false,
            id_query: None,
            search_query: None,
            compact_rows: false,
        }
    }
}

/// A row of `list_sessions_rich`: the session's columns (without
/// `system_prompt` for compact rows), then `last_active`, `preview` and, for
/// a projected compression chain, `_lineage_root_id`.
#[derive(Debug, Clone, PartialEq)]
pub struct RichSession {
    /// The session row (for a projected chain: the root's row with the tip's
    /// `id`, `ended_at`, `end_reason`, `message_count`, `tool_call_count`,
    /// `title`, `model`, `system_prompt`, `cwd`, `git_branch`,
    /// `git_repo_root`; the root's `started_at`).
    pub session: Session,
    /// The newest message's timestamp, else `started_at`.
    pub last_active: f64,
    /// The first user message, one line, at most 60 characters + `...`.
    pub preview: String,
    /// The root of the projected compression chain (the listed session's own
    /// id before projection); `None` when the row was not projected.
    pub lineage_root_id: Option<String>,
    /// `system_prompt` was left out (`compact_rows`).
    pub compact: bool,
}

impl RichSession {
    /// Whether the row is a compression root whose chain the listing shows
    /// as its tip (`api.md` §10.3): it ended by compression.
    pub fn projects_tip(&self) -> bool {
        self.session.end_reason.as_deref() == Some("compression")
    }

    /// Shows the compression chain this row roots as its `tip` (another
    /// session's rich row): the fields [`RichSession::session`] names come
    /// from the tip, `started_at` and the rest stay the root's, and the
    /// root's id is kept as `lineage_root_id`. Shared by every backend.
    pub fn project_onto(&mut self, tip: RichSession) {
        let root = std::mem::take(&mut self.session.id);
        let (s, t) = (&mut self.session, tip.session);
        s.id = t.id;
        s.ended_at = t.ended_at;
        s.end_reason = t.end_reason;
        s.message_count = t.message_count;
        s.tool_call_count = t.tool_call_count;
        s.title = t.title;
        s.model = t.model;
        s.system_prompt = t.system_prompt;
        s.cwd = t.cwd;
        s.git_branch = t.git_branch;
        s.git_repo_root = t.git_repo_root;
        self.last_active = tip.last_active;
        self.preview = tip.preview;
        self.lineage_root_id = Some(root);
    }
}

impl Serialize for RichSession {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = match serde_json::to_value(&self.session) {
            Ok(serde_json::Value::Object(map)) => map,
            Ok(_) => serde_json::Map::new(),
            Err(error) => return Err(serde::ser::Error::custom(error)),
        };
        if self.compact {
            map.shift_remove("system_prompt");
        }
        map.insert("last_active".into(), self.last_active.into());
        map.insert("preview".into(), self.preview.clone().into());
        if let Some(root) = &self.lineage_root_id {
            map.insert("_lineage_root_id".into(), root.clone().into());
        }
        map.serialize(serializer)
    }
}

/// The preview of a first user message (`api.md` §10.3): the first 63
/// characters with LF and CR as spaces (from SQL), trimmed, cut to 60
/// characters + `...` when longer; cut at an embedded NUL as SQLite's string
/// functions are. Shared by every backend.
pub fn preview(raw: &str) -> String {
    let raw = raw.split('\0').next().unwrap_or_default();
    let trimmed = raw.trim();
    if trimmed.chars().count() > 60 {
        let mut cut: String = trimmed.chars().take(60).collect();
        cut.push_str("...");
        cut
    } else {
        trimmed.to_owned()
    }
}

/// The original's needle of `id_query` / `search_query`: `(q or
/// "").strip().lower()`, Python's whitespace and lower-casing.
pub fn needle(query: Option<&str>) -> String {
    python_strip(query.unwrap_or_default()).to_lowercase()
}

/// The original's compact needle of `search_query`: `re.sub(r"[\W_]+", "",
/// needle)`, only Python's word characters other than `_` kept.
pub fn compact_needle(needle: &str) -> String {
    needle
        .chars()
        .filter(|c| *c != '_' && is_python_word_char(*c))
        .collect()
}

/// The id range of cron job `job_id`'s runs: `[cron_<job_id>_,
/// cron_<job_id>\`)`, the original's bounds (byte order: exactly the ids
/// that start with `cron_<job_id>_`, case-sensitively).
pub fn cron_id_range(job_id: &str) -> (String, String) {
    (format!("cron_{job_id}_"), format!("cron_{job_id}`"))
}

/// How well a row of `search_sessions_by_id` matches `needle`: 0 when its
/// id or `_lineage_root_id` (lower-cased) is the needle, 1 when one starts
/// with it, else 2.
fn id_match_rank(row: &RichSession, needle: &str) -> u8 {
    let ids: Vec<String> = [
        Some(row.session.id.as_str()),
        row.lineage_root_id.as_deref(),
    ]
    .into_iter()
    .flatten()
    .filter(|id| !id.is_empty())
    .map(str::to_lowercase)
    .collect();
    if ids.iter().any(|id| id == needle) {
        0
    } else if ids.iter().any(|id| id.starts_with(needle)) {
        1
    } else {
        2
    }
}

/// The original's ranking of `search_sessions_by_id` candidates: exact
/// matches of `needle` first, then prefixes, then the rest, each group in
/// the candidates' order; at most `limit`. Shared by every backend.
pub fn rank_by_id(candidates: Vec<RichSession>, needle: &str, limit: u32) -> Vec<RichSession> {
    let mut ranked: Vec<(u8, RichSession)> = candidates
        .into_iter()
        .map(|row| (id_match_rank(&row, needle), row))
        .collect();
    ranked.sort_by_key(|(rank, _)| *rank);
    ranked
        .into_iter()
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(|(_, row)| row)
        .collect()
}

/// The picker listing `search_sessions_by_id` ranks (`api.md` §10.4): the
/// first `4 × limit` rows of `list_sessions_rich` by last activity whose
/// chain holds an id containing `needle`, archived ones with
/// `include_archived`. Shared by every backend.
pub fn id_search_options(needle: &str, limit: u32, include_archived: bool) -> RichListOptions {
    RichListOptions {
        limit: limit.saturating_mul(4),
        include_archived,
        order_by_last_active: true,
        id_query: Some(needle.to_owned()),
        ..RichListOptions::default()
    }
}

/// A working directory of `distinct_session_cwds` (`api.md` §10.4), the
/// original's dict `{cwd, sessions, last_active}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionCwd {
    /// The directory, as stored.
    pub cwd: String,
    /// How many sessions have it.
    pub sessions: i64,
    /// The newest `COALESCE(ended_at, started_at, 0)` among them.
    pub last_active: f64,
}

/// The start of the idle window of `archive_stale_sessions(idle_days)` at
/// `now` (`api.md` §11.4), or `None` when the original archives nothing:
/// a negative or NaN `idle_days` (a NaN bound matches no row there).
pub fn idle_cutoff(now: f64, idle_days: f64) -> Option<f64> {
    if idle_days.is_nan() || idle_days < 0.0 {
        return None;
    }
    Some(now - idle_days * 86_400.0)
}
