//! Listing sessions for pickers, dashboards and cleanups (`api.md` §10,
//! §11.4 idle sessions, §11.6 empty sessions). The prune filter of §11.3
//! is [`crate::prune`].

pub use hermes_state_core::rich_listing::{
    DEFAULT_LIMIT, RichListOptions, RichSession, SessionCwd, compact_needle, cron_id_range,
    id_search_options, idle_cutoff, needle, preview, rank_by_id,
};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use crate::conditions::{Conditions, contains, text_value};
use crate::error::{QueryContext, QueryError};
use crate::lookups::{
    SessionActivity, get_compression_tip, last_active, listable_sql, marker, query_activity,
    query_sessions,
};
use crate::values::{integer, real, text};

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

/// A title with the characters `search_query`'s compact form ignores
/// removed, lower-cased as SQLite's `LOWER` (ASCII).
const COMPACT_TITLE: &str = "REPLACE(REPLACE(REPLACE(REPLACE(LOWER(COALESCE(cs.title, '')), \
     '-', ''), '_', ''), '.', ''), ' ', '')";

/// Sessions for a picker, with last activity and a one-line preview
/// (`api.md` §10.3), the original's query: every filter of
/// [`RichListOptions`]; newest start first, or with `order_by_last_active`
/// by the newest activity of the session's forward compression chain (then
/// start, then id, descending), which is also the only order in which
/// `id_query` and `search_query` apply.
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
    let columns = session_columns(conn, options.compact_rows)?;
    let sql = if options.order_by_last_active {
        // The chain is seeded from the rows the filters admit; the numbered
        // parameters serve the seed and the outer query alike.
        let seed_where = conditions.where_clause();
        let id_needle = needle(options.id_query.as_deref());
        if !id_needle.is_empty() {
            conditions.push(
                "EXISTS (SELECT 1 FROM chain cq WHERE cq.root_id = s.id
                         AND LOWER(cq.cur_id) LIKE ? ESCAPE '\\')",
                [contains(&id_needle)],
            );
        }
        let search_needle = needle(options.search_query.as_deref());
        if !search_needle.is_empty() {
            let compact = compact_needle(&search_needle);
            let compact_clause = if compact.is_empty() {
                String::new()
            } else {
                format!(" OR {COMPACT_TITLE} LIKE ? ESCAPE '\\'")
            };
            let mut values = vec![contains(&search_needle), contains(&search_needle)];
            if !compact.is_empty() {
                values.push(contains(&compact));
            }
            conditions.push(
                &format!(
                    "EXISTS (SELECT 1 FROM chain cq JOIN sessions cs ON cs.id = cq.cur_id
                             WHERE cq.root_id = s.id
                               AND (LOWER(COALESCE(cs.title, '')) LIKE ? ESCAPE '\\'
                                    OR LOWER(cq.cur_id) LIKE ? ESCAPE '\\'{compact_clause}))"
                ),
                values,
            );
        }
        format!(
            "WITH RECURSIVE chain(root_id, cur_id) AS (
                SELECT s.id, s.id FROM sessions s{seed_where}
                UNION
                SELECT c.root_id, child.id FROM chain c
                JOIN sessions parent ON parent.id = c.cur_id
                JOIN sessions child ON child.parent_session_id = c.cur_id
                WHERE parent.end_reason = 'compression'
                  AND {branched} IS NULL AND {delegate} IS NULL
                  AND COALESCE(child.source, '') != 'tool'
             ),
             chain_max AS (
                SELECT root_id, MAX(COALESCE(
                    (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = cur_id),
                    (SELECT started_at FROM sessions ss WHERE ss.id = cur_id)
                )) AS effective_last_active
                FROM chain GROUP BY root_id
             )
             SELECT {columns}, {active} AS last_active, {PREVIEW_SQL} AS preview
             FROM sessions s LEFT JOIN chain_max cm ON cm.root_id = s.id{outer_where}
             ORDER BY COALESCE(cm.effective_last_active, s.started_at) DESC,
                      s.started_at DESC, s.id DESC{limit}",
            branched = marker("child", "_branched_from"),
            delegate = marker("child", "_delegate_from"),
            active = last_active("s"),
            outer_where = conditions.where_clause(),
            limit = conditions.limit(options.limit, options.offset),
        )
    } else {
        format!(
            "SELECT {columns}, {active} AS last_active, {PREVIEW_SQL} AS preview
             FROM sessions s{where_clause} ORDER BY s.started_at DESC{limit}",
            active = last_active("s"),
            where_clause = conditions.where_clause(),
            limit = conditions.limit(options.limit, options.offset),
        )
    };
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
    if !row.projects_tip() {
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
    row.project_onto(tip);
    Ok(())
}

/// The runs of a cron job (`api.md` §10.4): `source = 'cron'` and an id in
/// [`cron_id_range`], newest start first (then id, descending), as rich
/// rows (`last_active`, `preview`).
pub fn list_cron_job_runs(
    conn: &Connection,
    job_id: &str,
    limit: u32,
    offset: u32,
) -> Result<Vec<RichSession>, QueryError> {
    let (low, high) = cron_id_range(job_id);
    let mut conditions = Conditions::default();
    conditions.push(
        "s.source = 'cron' AND s.id >= ? AND s.id < ?",
        [SqlValue::Text(low), SqlValue::Text(high)],
    );
    let sql = format!(
        "SELECT s.*, {active} AS last_active, {PREVIEW_SQL} AS preview FROM sessions s{}
         ORDER BY s.started_at DESC, s.id DESC{}",
        conditions.where_clause(),
        conditions.limit(limit, offset),
        active = last_active("s"),
    );
    rich_rows(conn, &sql, conditions.params, false)
}

/// Sessions by id (`api.md` §10.4), the original's `search_sessions_by_id`:
/// the query trimmed and lower-cased; nothing for an empty one or a zero
/// `limit`; else the picker rows of [`id_search_options`] ranked by
/// [`rank_by_id`] (exact id, then prefix, then substring; a projected
/// chain matches by its root's id too).
pub fn search_sessions_by_id(
    conn: &Connection,
    query: &str,
    limit: u32,
    include_archived: bool,
) -> Result<Vec<RichSession>, QueryError> {
    let needle = needle(Some(query));
    if needle.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let candidates =
        list_sessions_rich(conn, &id_search_options(&needle, limit, include_archived))?;
    Ok(rank_by_id(candidates, &needle, limit))
}

/// The distinct working directories of the sessions (`api.md` §10.4): every
/// `cwd` that is not NULL and not only spaces, with its number of sessions
/// and its last activity (the newest end, else start); of archived sessions
/// too with `include_archived`. In `GROUP BY cwd` order, as the original.
pub fn distinct_session_cwds(
    conn: &Connection,
    include_archived: bool,
) -> Result<Vec<SessionCwd>, QueryError> {
    const WHAT: &str = "listing working directories";
    let archived = if include_archived {
        ""
    } else {
        " AND archived = 0"
    };
    let sql = format!(
        "SELECT cwd AS cwd, COUNT(*) AS sessions,
                MAX(COALESCE(ended_at, started_at, 0)) AS last_active
         FROM sessions WHERE cwd IS NOT NULL AND TRIM(cwd) != ''{archived} GROUP BY cwd"
    );
    let mut stmt = conn.prepare_cached(&sql).context(WHAT)?;
    let rows = stmt
        .query_map([], |row| {
            Ok(SessionCwd {
                cwd: text(row.get_ref(0)?).unwrap_or_default(),
                sessions: integer(row.get_ref(1)?).unwrap_or_default(),
                last_active: real(row.get_ref(2)?).unwrap_or_default(),
            })
        })
        .and_then(Iterator::collect)
        .context(WHAT)?;
    Ok(rows)
}

/// The sessions `archive_stale_sessions` archives (`api.md` §11.4), oldest
/// start first, the original's selection: not archived, not ended by
/// `compression` (a chain is archived through its tip), unpinned when
/// `exclude_pinned`, and last active (newest message, else start) before
/// `idle_before`. Children are candidates like any session.
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
        "SELECT s.id FROM sessions s
         WHERE s.archived = 0 AND COALESCE(s.end_reason, '') <> 'compression'{pinned}
           AND {active} < ?1
         ORDER BY s.started_at ASC",
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
