//! Finding sessions: by title, by id prefix, along compression lineages and
//! by gateway peer (`api.md` §2.4, §6.2, §9.2, §12.2).
//!
//! Every walk here stops after a bounded number of steps and at the first
//! repeated id, so a damaged file whose parent links form a cycle still
//! answers.

use std::collections::HashSet;

pub use hermes_state_core::lookups::{
    MAX_RESUME_STEPS, PeerLookup, RECOVERABLE_END_REASONS, SessionActivity, escape_like,
    has_marker, is_listable, origin_session,
};
use hermes_state_types::Session;
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Params, Row, params, params_from_iter};

use crate::error::{QueryContext, QueryError};
use crate::rows::session_from_row;
use crate::sessions::{MAX_LINEAGE_STEPS, lineage_root_to_tip};
use crate::values::{real, text};

/// The `$.<key>` marker (`_branched_from`, `_delegate_from`) of the session
/// aliased `alias`'s `model_config`; NULL also for a `model_config` that is
/// not valid JSON (read leniently).
pub(crate) fn marker(alias: &str, key: &str) -> String {
    format!(
        "(CASE WHEN json_valid({alias}.model_config) \
         THEN json_extract({alias}.model_config, '$.{key}') END)"
    )
}

/// Whether the session aliased `alias` is listable (`api.md` §9.2): a root
/// or a branch child (marked, or started after its parent ended
/// `branched`), and no delegate child. What pickers show and what
/// `session_count(exclude_children)` counts.
pub(crate) fn listable_sql(alias: &str) -> String {
    format!(
        "({alias}.parent_session_id IS NULL OR {branched} IS NOT NULL
          OR EXISTS (SELECT 1 FROM sessions ps WHERE ps.id = {alias}.parent_session_id
                     AND ps.end_reason = 'branched' AND {alias}.started_at >= ps.ended_at))
         AND {delegate} IS NULL",
        branched = marker(alias, "_branched_from"),
        delegate = marker(alias, "_delegate_from"),
    )
}

/// `COALESCE(newest message timestamp, started_at)` of the session aliased `alias`.
pub(crate) fn last_active(alias: &str) -> String {
    format!(
        "COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = {alias}.id), \
         {alias}.started_at)"
    )
}

/// Runs a query whose columns are `SELECT s.*` followed by `extra` computed
/// columns and maps each row with `map(session, row, index of the first
/// extra column)`.
pub(crate) fn query_sessions<T>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    what: &'static str,
    extra: usize,
    map: impl Fn(Session, &Row<'_>, usize) -> rusqlite::Result<T>,
) -> Result<Vec<T>, QueryError> {
    let mut stmt = conn.prepare_cached(sql).context(what)?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let split = columns.len() - extra;
    let rows = stmt
        .query_map(params, |row| {
            let session = session_from_row(row, &columns[..split])?;
            map(session, row, split)
        })
        .context(what)?;
    rows.collect::<Result<_, _>>()
        .context(what)
        .map_err(Into::into)
}

/// Maps `SELECT s.*, <last_active>` rows.
pub(crate) fn query_activity(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    what: &'static str,
) -> Result<Vec<SessionActivity>, QueryError> {
    query_sessions(conn, sql, params, what, 1, |session, row, at| {
        Ok(SessionActivity {
            session,
            last_active: real(row.get_ref(at)?).unwrap_or_default(),
        })
    })
}

/// The session with exactly this title (case-sensitive), `None` when no
/// session holds it (`api.md` §6.2).
pub fn get_session_by_title(conn: &Connection, title: &str) -> Result<Option<Session>, QueryError> {
    let mut rows = query_sessions(
        conn,
        "SELECT s.* FROM sessions s WHERE s.title = ?1 LIMIT 1",
        [title],
        "reading a session by title",
        0,
        |session, _, _| Ok(session),
    )?;
    Ok(rows.pop())
}

/// A full session id from an id or a unique prefix of one (`api.md` §2.4):
/// the argument itself when such a session exists; else the one session whose
/// id starts with it (`LIKE`, wildcards escaped, ASCII case-insensitive);
/// `None` when no session or several match, and for an empty argument that
/// is not itself an id (every id starts with it).
pub fn resolve_session_id(
    conn: &Connection,
    id_or_prefix: &str,
) -> Result<Option<String>, QueryError> {
    if crate::sessions::session_exists(conn, id_or_prefix)? {
        return Ok(Some(id_or_prefix.to_owned()));
    }
    if id_or_prefix.is_empty() {
        return Ok(None);
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT id FROM sessions WHERE id LIKE ?1 ESCAPE '\\' \
             ORDER BY started_at DESC LIMIT 2",
        )
        .context("resolving a session id prefix")?;
    let ids: Vec<Option<String>> = stmt
        .query_map([format!("{}%", escape_like(id_or_prefix))], |row| {
            Ok(text(row.get_ref(0)?))
        })
        .and_then(Iterator::collect)
        .context("resolving a session id prefix")?;
    Ok(match ids.as_slice() {
        [Some(id)] => Some(id.clone()),
        _ => None,
    })
}

/// The first session of the lineage root-to-tip of `session_id` (`api.md`
/// §9.2): walk the parent links up (at most [`MAX_LINEAGE_STEPS`], stopping
/// at a missing row or a repeat). The id itself for a root or an unknown id.
pub fn get_conversation_root(conn: &Connection, session_id: &str) -> Result<String, QueryError> {
    Ok(lineage_root_to_tip(conn, session_id)?
        .into_iter()
        .next()
        .unwrap_or_else(|| session_id.to_owned()))
}

fn end_reason(conn: &Connection, session_id: &str) -> Result<Option<String>, QueryError> {
    conn.prepare_cached("SELECT end_reason FROM sessions WHERE id = ?1")
        .context("reading an end reason")?
        .query_row([session_id], |row| Ok(text(row.get_ref(0)?)))
        .optional()
        .context("reading an end reason")
        .map(Option::flatten)
        .map_err(Into::into)
}

fn ended_with_compression(conn: &Connection, session_id: &str) -> Result<bool, QueryError> {
    Ok(end_reason(conn, session_id)?.as_deref() == Some("compression"))
}

fn first_id(
    conn: &Connection,
    sql: &str,
    session_id: &str,
    what: &'static str,
) -> Result<Option<String>, QueryError> {
    conn.prepare_cached(sql)
        .context(what)?
        .query_row([session_id], |row| Ok(text(row.get_ref(0)?)))
        .optional()
        .context(what)
        .map(Option::flatten)
        .map_err(Into::into)
}

/// The best continuation of a compression-ended session (`api.md` §9.2).
fn best_compression_child(conn: &Connection, parent: &str) -> Result<Option<String>, QueryError> {
    let sql = format!(
        "SELECT c.id FROM sessions c
         WHERE c.parent_session_id = ?1
           AND {branched} IS NULL AND {delegate} IS NULL
           AND COALESCE(c.source, '') != 'tool'
         ORDER BY CASE WHEN c.end_reason = 'compression' THEN 0
                       WHEN c.ended_at IS NULL THEN 1 ELSE 2 END,
                  {active} DESC, c.started_at DESC, c.id DESC
         LIMIT 1",
        branched = marker("c", "_branched_from"),
        delegate = marker("c", "_delegate_from"),
        active = last_active("c"),
    );
    first_id(conn, &sql, parent, "finding a compression continuation")
}

/// The compression tip of `session_id` (`api.md` §9.2): while the current
/// session ended with `compression`, move to its best continuation (children
/// that are branches, delegates or `source = 'tool'` excluded; ranked:
/// compression-ended first, then live, then others; then newest activity,
/// `started_at`, id, all descending). Stops when there is none, on a repeat
/// or after [`MAX_LINEAGE_STEPS`]. The id itself when it does not move (an
/// unknown id included).
pub fn get_compression_tip(conn: &Connection, session_id: &str) -> Result<String, QueryError> {
    let mut seen: HashSet<String> = HashSet::from([session_id.to_owned()]);
    let mut current = session_id.to_owned();
    for _ in 0..MAX_LINEAGE_STEPS {
        if !ended_with_compression(conn, &current)? {
            break;
        }
        let Some(child) = best_compression_child(conn, &current)? else {
            break;
        };
        if !seen.insert(child.clone()) {
            break;
        }
        current = child;
    }
    Ok(current)
}

/// The compression chain through `session_id`, root first (`api.md` §9.2);
/// the rule is in [`crate::compression_lineage`].
pub use crate::compression_lineage::get_compression_lineage;

fn has_messages(conn: &Connection, session_id: &str) -> Result<bool, QueryError> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM messages WHERE session_id = ?1)")
        .context("checking for messages")?
        .query_row([session_id], |row| row.get(0))
        .context("checking for messages")
        .map_err(Into::into)
}

/// The session to resume for `session_id` (`api.md` §9.2): jump to the
/// compression tip, then walk down the newest child that is not a branch, a
/// delegate or a `tool` session (at most [`MAX_RESUME_STEPS`]); the deepest
/// session of that path (tip included) that has messages, else `session_id`.
pub fn resolve_resume_session_id(
    conn: &Connection,
    session_id: &str,
) -> Result<String, QueryError> {
    let tip = get_compression_tip(conn, session_id)?;
    let newest_child = format!(
        "SELECT c.id FROM sessions c
         WHERE c.parent_session_id = ?1
           AND {branched} IS NULL AND {delegate} IS NULL
           AND COALESCE(c.source, '') != 'tool'
           AND NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = c.parent_session_id
                           AND p.end_reason = 'branched' AND c.started_at >= p.ended_at)
         ORDER BY c.started_at DESC, c.id DESC LIMIT 1",
        branched = marker("c", "_branched_from"),
        delegate = marker("c", "_delegate_from"),
    );
    let mut best = has_messages(conn, &tip)?.then(|| tip.clone());
    let mut seen: HashSet<String> = HashSet::from([session_id.to_owned(), tip.clone()]);
    let mut current = tip;
    for _ in 0..MAX_RESUME_STEPS {
        let Some(child) = first_id(conn, &newest_child, &current, "finding a session to resume")?
        else {
            break;
        };
        if !seen.insert(child.clone()) {
            break;
        }
        if has_messages(conn, &child)? {
            best = Some(child.clone());
        }
        current = child;
    }
    Ok(best.unwrap_or_else(|| session_id.to_owned()))
}

/// The live gateway session of a chat (`api.md` §12.2): sessions with a
/// `session_key`, not ended, whose source equals `platform` (ASCII
/// case-insensitively), of this `chat_id` (and `thread_id` when given; a
/// missing thread matches `""`), newest start first. With `user_id`, that
/// user's newest session; when several sessions match and none is that
/// user's, `None`. Without `user_id`, `None` when the matches belong to more
/// than one distinct (non-empty) user. `None` for an empty platform or chat.
pub fn find_session_by_origin(
    conn: &Connection,
    platform: &str,
    chat_id: &str,
    thread_id: Option<&str>,
    user_id: Option<&str>,
) -> Result<Option<String>, QueryError> {
    if platform.is_empty() || chat_id.is_empty() {
        return Ok(None);
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, user_id FROM sessions
             WHERE LOWER(source) = LOWER(?1) AND session_key IS NOT NULL
               AND chat_id = ?2 AND ended_at IS NULL
               AND (?3 IS NULL OR COALESCE(thread_id, '') = ?3)
             ORDER BY started_at DESC, id DESC",
        )
        .context("finding a session by origin")?;
    let rows: Vec<(String, String)> = stmt
        .query_map(params![platform, chat_id, thread_id], |row| {
            Ok((
                text(row.get_ref(0)?).unwrap_or_default(),
                text(row.get_ref(1)?).unwrap_or_default(),
            ))
        })
        .and_then(Iterator::collect)
        .context("finding a session by origin")?;
    Ok(origin_session(&rows, user_id))
}

/// The newest recoverable gateway session of a peer (`api.md` §12.2):
/// a session of this source that has messages and is live or was ended only
/// by a cleanup ([`RECOVERABLE_END_REASONS`]), found by its `session_key`;
/// when none has that key and the peer names its chat and chat type, by the
/// whole peer (user, chat, chat type, thread; a missing value matches only a
/// missing or empty one). Newest start first. `None` without a session key.
pub fn find_latest_gateway_session_for_peer(
    conn: &Connection,
    peer: &PeerLookup,
) -> Result<Option<Session>, QueryError> {
    let Some(key) = peer.session_key.as_deref().filter(|k| !k.is_empty()) else {
        return Ok(None);
    };
    let recoverable = "(s.ended_at IS NULL OR s.end_reason IN ('agent_close', 'ws_orphan_reap'))
        AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)";
    let by_key = format!(
        "SELECT s.* FROM sessions s WHERE s.session_key = ?1 AND s.source = ?2 AND {recoverable}
         ORDER BY s.started_at DESC, s.id DESC LIMIT 1"
    );
    let mut found = query_sessions(
        conn,
        &by_key,
        params![key, peer.source],
        "finding a gateway session",
        0,
        |session, _, _| Ok(session),
    )?;
    if let Some(session) = found.pop() {
        return Ok(Some(session));
    }
    if peer.chat_id.is_none() || peer.chat_type.is_none() {
        return Ok(None);
    }
    let by_peer = format!(
        "SELECT s.* FROM sessions s WHERE s.source = ?1
           AND COALESCE(s.user_id, '') = COALESCE(?2, '')
           AND COALESCE(s.chat_id, '') = COALESCE(?3, '')
           AND COALESCE(s.chat_type, '') = COALESCE(?4, '')
           AND COALESCE(s.thread_id, '') = COALESCE(?5, '')
           AND {recoverable}
         ORDER BY s.started_at DESC, s.id DESC LIMIT 1"
    );
    let mut found = query_sessions(
        conn,
        &by_peer,
        params![
            peer.source,
            peer.user_id,
            peer.chat_id,
            peer.chat_type,
            peer.thread_id
        ],
        "finding a gateway session",
        0,
        |session, _, _| Ok(session),
    )?;
    Ok(found.pop())
}

/// The gateway's sessions (`api.md` §12.2): for each `session_key`, its
/// newest session, with `last_active`; of `platform` only (ASCII
/// case-insensitive source match) when given and non-empty; live ones only
/// with `active_only`. Most recently active first (ties left to SQLite, as
/// in the original's query).
pub fn list_gateway_sessions(
    conn: &Connection,
    platform: Option<&str>,
    active_only: bool,
) -> Result<Vec<SessionActivity>, QueryError> {
    let mut sql = format!(
        "SELECT s.*, {active} AS last_active FROM sessions s
         WHERE s.session_key IS NOT NULL
           AND s.started_at = (SELECT MAX(s2.started_at) FROM sessions s2
                               WHERE s2.session_key = s.session_key)",
        active = last_active("s"),
    );
    let mut params: Vec<SqlValue> = Vec::new();
    if let Some(platform) = platform.filter(|p| !p.is_empty()) {
        sql.push_str(" AND LOWER(s.source) = LOWER(?1)");
        params.push(SqlValue::Text(platform.to_owned()));
    }
    if active_only {
        sql.push_str(" AND s.ended_at IS NULL");
    }
    sql.push_str(" ORDER BY last_active DESC");
    query_activity(
        conn,
        &sql,
        params_from_iter(params),
        "listing gateway sessions",
    )
}
