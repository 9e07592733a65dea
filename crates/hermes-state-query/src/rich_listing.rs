//! Listing sessions for pickers, dashboards and cleanups (`api.md` §10,
//! §11.4 idle sessions, §11.6 empty sessions). The prune filter of §11.3
//! is [`crate::prune`].

use hermes_state_types::Session;
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};
use serde::{Serialize, Serializer};

use crate::conditions::{Conditions, contains, text_value};
use crate::error::{QueryContext, QueryError};
use crate::lookups::{
    SessionActivity, escape_like, get_compression_tip, last_active, listable_sql, marker,
    query_activity, query_sessions,
};
use crate::values::{real, text};

/// The number of sessions a listing returns by default (`api.md` §10).
pub const DEFAULT_LIMIT: u32 = 20;

/// Every session with its last activity, most recently active first
/// (`api.md` §10.1): children and archived sessions included; of `source`
/// only when it is given and non-empty.
pub fn search_sessions(
    conn: &Connection,
    source: Option<&str>,
    limit: u32,
    offset: u32,
) -> Result<Vec<SessionActivity>, QueryError> {
    let mut conditions = Conditions::default();
    if let Some(source) = source.filter(|s| !s.is_empty()) {
        conditions.push("s.source = ?", [text_value(source)]);
    }
    let sql = format!(
        "SELECT s.*, COALESCE(m.last_active, s.started_at) AS last_active
         FROM sessions s
         LEFT JOIN (SELECT session_id, MAX(timestamp) AS last_active
                    FROM messages GROUP BY session_id) m ON m.session_id = s.id{}
         ORDER BY last_active DESC, s.started_at DESC, s.id DESC{}",
        conditions.where_clause(),
        conditions.limit(limit, offset),
    );
    query_activity(
        conn,
        &sql,
        params_from_iter(conditions.params),
        "searching sessions",
    )
}

/// What [`list_sessions_rich`] lists (`api.md` §10.3); `Default` is the
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
    /// Only sessions whose id contains this text (ASCII case-insensitive).
    pub id_query: Option<String>,
    /// Only sessions whose id, title or first user message contains this
    /// text (ASCII case-insensitive).
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

/// A row of [`list_sessions_rich`]: the session's columns (without
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

const PREVIEW_SQL: &str =
    "COALESCE((SELECT REPLACE(REPLACE(SUBSTR(m.content, 1, 63), char(10), ' '), char(13), ' ')
    FROM messages m
    WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
    ORDER BY m.timestamp, m.id LIMIT 1), '')";

/// The session columns a rich row reads: all, or all but `system_prompt`.
fn session_columns(conn: &Connection, compact: bool) -> Result<String, QueryError> {
    if !compact {
        return Ok("s.*".to_owned());
    }
    let stmt = conn
        .prepare("SELECT * FROM sessions LIMIT 0")
        .context("reading the session columns")?;
    Ok(stmt
        .column_names()
        .filter(|name| *name != "system_prompt")
        .map(|name| format!("s.\"{}\"", name.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(", "))
}

fn rich_rows(
    conn: &Connection,
    sql: &str,
    params: Vec<SqlValue>,
    compact: bool,
) -> Result<Vec<RichSession>, QueryError> {
    query_sessions(
        conn,
        sql,
        params_from_iter(params),
        "listing sessions",
        2,
        |session, row, at| {
            Ok(RichSession {
                session,
                last_active: real(row.get_ref(at)?).unwrap_or_default(),
                preview: preview(&text(row.get_ref(at + 1)?).unwrap_or_default()),
                lineage_root_id: None,
                compact,
            })
        },
    )
}

/// Sessions for a picker, newest first, with last activity and a one-line
/// preview (`api.md` §10.3); every filter of [`RichListOptions`].
///
/// Unless `include_children`, only listable sessions (roots and branch
/// children, no delegates) are listed and, with `project_compression_tips`,
/// a compression-ended session is shown as its compression tip (the root's
/// `started_at` kept, `_lineage_root_id` added).
pub fn list_sessions_rich(
    conn: &Connection,
    options: &RichListOptions,
) -> Result<Vec<RichSession>, QueryError> {
    let mut conditions = Conditions::default();
    if !options.include_children {
        conditions.push(&listable_sql("s"), []);
    }
    if let Some(source) = options.source.as_deref().filter(|s| !s.is_empty()) {
        conditions.push("s.source = ?", [text_value(source)]);
    }
    if !options.exclude_sources.is_empty() {
        let marks = vec!["?"; options.exclude_sources.len()].join(", ");
        conditions.push(
            &format!("s.source NOT IN ({marks})"),
            options.exclude_sources.iter().map(|s| text_value(s)),
        );
    }
    if let Some(prefix) = options.cwd_prefix.as_deref().filter(|p| !p.is_empty()) {
        conditions.push_cwd_prefix(prefix);
    }
    if options.min_message_count > 0 {
        conditions.push(
            "s.message_count >= ?",
            [SqlValue::Integer(options.min_message_count)],
        );
    }
    if options.archived_only {
        conditions.push("s.archived = 1", []);
    } else if !options.include_archived {
        conditions.push("s.archived = 0", []);
    }
    if let Some(query) = options.id_query.as_deref().filter(|q| !q.is_empty()) {
        conditions.push("s.id LIKE ? ESCAPE '\\'", [contains(query)]);
    }
    if let Some(query) = options.search_query.as_deref().filter(|q| !q.is_empty()) {
        let pattern = contains(query);
        conditions.push(
            "(s.id LIKE ? ESCAPE '\\' OR s.title LIKE ? ESCAPE '\\'
              OR EXISTS (SELECT 1 FROM messages mq WHERE mq.session_id = s.id
                         AND mq.role = 'user' AND mq.content LIKE ? ESCAPE '\\'))",
            [pattern.clone(), pattern.clone(), pattern],
        );
    }
    let columns = session_columns(conn, options.compact_rows)?;
    let (with, join, order) = if options.order_by_last_active {
        (
            format!(
                "WITH RECURSIVE chain(root, id) AS (
                    SELECT id, id FROM sessions
                    UNION
                    SELECT chain.root, c.id FROM chain
                    JOIN sessions p ON p.id = chain.id AND p.end_reason = 'compression'
                    JOIN sessions c ON c.parent_session_id = p.id
                         AND {branched} IS NULL AND {delegate} IS NULL
                 ),
                 chain_activity(root, active) AS (
                    SELECT chain.root, MAX({active}) FROM chain
                    JOIN sessions c ON c.id = chain.id GROUP BY chain.root
                 ) ",
                branched = marker("c", "_branched_from"),
                delegate = marker("c", "_delegate_from"),
                active = last_active("c"),
            ),
            " LEFT JOIN chain_activity ca ON ca.root = s.id",
            " ORDER BY ca.active DESC, s.started_at DESC, s.id DESC",
        )
    } else {
        (String::new(), "", " ORDER BY s.started_at DESC, s.id DESC")
    };
    let sql = format!(
        "{with}SELECT {columns}, {active} AS last_active, {PREVIEW_SQL} AS preview
         FROM sessions s{join}{where_clause}{order}{limit}",
        active = last_active("s"),
        where_clause = conditions.where_clause(),
        limit = conditions.limit(options.limit, options.offset),
    );
    let mut rows = rich_rows(conn, &sql, conditions.params, options.compact_rows)?;
    if options.project_compression_tips && !options.include_children {
        for row in &mut rows {
            project_tip(conn, row, &columns)?;
        }
    }
    Ok(rows)
}

/// Replaces a compression-ended row by its compression tip's current state.
fn project_tip(conn: &Connection, row: &mut RichSession, columns: &str) -> Result<(), QueryError> {
    if row.session.end_reason.as_deref() != Some("compression") {
        return Ok(());
    }
    let root = row.session.id.clone();
    let tip_id = get_compression_tip(conn, &root)?;
    if tip_id == root {
        return Ok(());
    }
    let sql = format!(
        "SELECT {columns}, {active} AS last_active, {PREVIEW_SQL} AS preview
         FROM sessions s WHERE s.id = ?1",
        active = last_active("s"),
    );
    let Some(tip) = rich_rows(conn, &sql, vec![text_value(&tip_id)], row.compact)?.pop() else {
        return Ok(());
    };
    let s = &mut row.session;
    let t = tip.session;
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
    row.last_active = tip.last_active;
    row.preview = tip.preview;
    row.lineage_root_id = Some(root);
    Ok(())
}

/// The sessions of a cron job (`api.md` §10.4): `source = 'cron'` and an id
/// starting with `cron_<job_id>_` (wildcards in `job_id` literal), newest
/// start first, with `last_active`.
pub fn list_cron_job_runs(
    conn: &Connection,
    job_id: &str,
    limit: u32,
    offset: u32,
) -> Result<Vec<SessionActivity>, QueryError> {
    let mut conditions = Conditions::default();
    conditions.push(
        "s.source = 'cron' AND s.id LIKE ? ESCAPE '\\'",
        [text_value(&format!("cron\\_{}\\_%", escape_like(job_id)))],
    );
    let sql = format!(
        "SELECT s.*, {active} AS last_active FROM sessions s{}
         ORDER BY s.started_at DESC, s.id DESC{}",
        conditions.where_clause(),
        conditions.limit(limit, offset),
        active = last_active("s"),
    );
    query_activity(
        conn,
        &sql,
        params_from_iter(conditions.params),
        "listing cron job runs",
    )
}

/// Sessions whose id contains `query` (ASCII case-insensitive, wildcards
/// literal), newest start first, with `last_active` (`api.md` §10.4);
/// archived ones only with `include_archived`. Empty for an empty query.
pub fn search_sessions_by_id(
    conn: &Connection,
    query: &str,
    limit: u32,
    include_archived: bool,
) -> Result<Vec<SessionActivity>, QueryError> {
    if query.is_empty() {
        return Ok(Vec::new());
    }
    let mut conditions = Conditions::default();
    conditions.push("s.id LIKE ? ESCAPE '\\'", [contains(query)]);
    if !include_archived {
        conditions.push("s.archived = 0", []);
    }
    let sql = format!(
        "SELECT s.*, {active} AS last_active FROM sessions s{}
         ORDER BY s.started_at DESC, s.id DESC{}",
        conditions.where_clause(),
        conditions.limit(limit, 0),
        active = last_active("s"),
    );
    query_activity(
        conn,
        &sql,
        params_from_iter(conditions.params),
        "searching sessions by id",
    )
}

/// The distinct non-empty working directories of the sessions, sorted
/// (`api.md` §10.4); of archived sessions too with `include_archived`.
pub fn distinct_session_cwds(
    conn: &Connection,
    include_archived: bool,
) -> Result<Vec<String>, QueryError> {
    let sql = if include_archived {
        "SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL AND cwd != '' ORDER BY cwd"
    } else {
        "SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL AND cwd != '' AND archived = 0 ORDER BY cwd"
    };
    let mut stmt = conn
        .prepare_cached(sql)
        .context("listing working directories")?;
    let cwds: Vec<Option<String>> = stmt
        .query_map([], |row| Ok(text(row.get_ref(0)?)))
        .and_then(Iterator::collect)
        .context("listing working directories")?;
    Ok(cwds.into_iter().flatten().collect())
}

/// The ids of the sessions idle since before `idle_before` (no message and
/// no start after it), not archived, and unpinned when `exclude_pinned`
/// (`api.md` §11.4 `maybe_auto_archive`), oldest start first.
pub fn stale_session_ids(
    conn: &Connection,
    idle_before: f64,
    exclude_pinned: bool,
) -> Result<Vec<String>, QueryError> {
    let pinned = if exclude_pinned {
        " AND s.pinned = 0"
    } else {
        ""
    };
    let sql = format!(
        "SELECT s.id FROM sessions s WHERE s.archived = 0{pinned} AND {active} < ?1
         ORDER BY s.started_at, s.id",
        active = last_active("s"),
    );
    let mut stmt = conn
        .prepare_cached(&sql)
        .context("finding stale sessions")?;
    let ids: Vec<Option<String>> = stmt
        .query_map([idle_before], |row| Ok(text(row.get_ref(0)?)))
        .and_then(Iterator::collect)
        .context("finding stale sessions")?;
    Ok(ids.into_iter().flatten().collect())
}

/// An empty session (`api.md` §11.6), of `sessions s`: `message_count =
/// 0` (a NULL counter is not 0, as in the original's SQL), ended, not
/// archived. The one definition behind [`count_empty_sessions`] and
/// [`empty_session_ids`] (what `delete_empty_sessions` deletes).
const EMPTY_SESSION: &str = "s.message_count = 0 AND s.ended_at IS NOT NULL AND s.archived = 0";

/// The number of empty sessions (`api.md` §11.6): `message_count = 0`,
/// ended, not archived.
pub fn count_empty_sessions(conn: &Connection) -> Result<i64, QueryError> {
    conn.prepare_cached(&format!(
        "SELECT COUNT(*) FROM sessions s WHERE {EMPTY_SESSION}"
    ))
    .and_then(|mut stmt| stmt.query_row([], |row| row.get(0)))
    .context("counting empty sessions")
    .map_err(Into::into)
}

/// The ids of the empty sessions (as [`count_empty_sessions`] counts them),
/// oldest start first.
pub fn empty_session_ids(conn: &Connection) -> Result<Vec<String>, QueryError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT s.id FROM sessions s WHERE {EMPTY_SESSION} ORDER BY s.started_at, s.id"
        ))
        .context("finding empty sessions")?;
    let ids: Vec<Option<String>> = stmt
        .query_map([], |row| Ok(text(row.get_ref(0)?)))
        .and_then(Iterator::collect)
        .context("finding empty sessions")?;
    Ok(ids.into_iter().flatten().collect())
}
