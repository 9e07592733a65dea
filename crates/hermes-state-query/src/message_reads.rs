//! The other message readers (`api.md` §5.3): a window of messages around
//! one, the recent user turns with a preview, and two existence probes.
//! Every one of them sees inactive rows (rewound or compacted) unless it says
//! otherwise.

pub use hermes_state_core::message_reads::{
    AnchoredView, MessagesAround, RecentUserMessage, RewindResult, anchored_view, preview,
    raw_tool_calls, replacement_messages,
};
use hermes_state_types::Message;
use rusqlite::{Connection, OptionalExtension, params};

use crate::error::{QueryContext, QueryError};
use crate::rows::{decode_content, message_from_row};
use crate::values::text;

const ANCHOR_IN_SESSION: &str = "SELECT 1 FROM messages WHERE id = ?1 AND session_id = ?2";
const BEFORE_ANCHOR: &str =
    "SELECT * FROM messages WHERE session_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3";
const ANCHOR_AND_AFTER: &str =
    "SELECT * FROM messages WHERE session_id = ?1 AND id >= ?2 ORDER BY id LIMIT ?3";

/// The messages of `session_id` around `message_id` (`api.md` §5.3): up to
/// `window` rows on each side of it, rows as `get_messages` decodes them,
/// inactive ones included. A negative `window` counts as 0 (the anchor
/// alone), as in the original. An anchor that is not a message of the
/// session gives an empty window with zero counts.
pub fn get_messages_around(
    conn: &Connection,
    session_id: &str,
    message_id: i64,
    window: i64,
) -> Result<MessagesAround, QueryError> {
    let window = window.max(0);
    let found = conn
        .query_row(ANCHOR_IN_SESSION, params![message_id, session_id], |_| {
            Ok(())
        })
        .optional()
        .context("finding the anchor message")?;
    if found.is_none() {
        return Ok(MessagesAround::default());
    }
    let mut before = message_rows(conn, BEFORE_ANCHOR, session_id, message_id, window)?;
    before.reverse();
    let rest = message_rows(
        conn,
        ANCHOR_AND_AFTER,
        session_id,
        message_id,
        window.saturating_add(1),
    )?;
    let messages_before = before.len();
    let messages_after = rest.len().saturating_sub(1);
    before.extend(rest);
    Ok(MessagesAround {
        window: before,
        messages_before,
        messages_after,
    })
}

fn message_rows(
    conn: &Connection,
    sql: &str,
    session_id: &str,
    message_id: i64,
    limit: i64,
) -> Result<Vec<Message>, QueryError> {
    let mut stmt = conn.prepare_cached(sql).context("reading messages")?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let rows = stmt
        .query_map(params![session_id, message_id, limit], |row| {
            message_from_row(row, &columns)
        })
        .context("reading messages")?;
    rows.collect::<Result<_, _>>()
        .context("reading messages")
        .map_err(Into::into)
}

/// The target of a rewind (`api.md` §4.5): the message of the session
/// whatever its state, `None` when the id is not a message of that session.
/// As the original returns it: `content` decoded, `tool_calls` the stored
/// text as a JSON string (not parsed; null when NULL).
pub fn rewind_target(
    conn: &Connection,
    session_id: &str,
    message_id: i64,
) -> Result<Option<Message>, QueryError> {
    let mut stmt = conn
        .prepare_cached("SELECT * FROM messages WHERE id = ?1 AND session_id = ?2")
        .context("reading a message")?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let tool_calls = columns.iter().position(|c| c == "tool_calls");
    stmt.query_row(params![message_id, session_id], |row| {
        let mut message = message_from_row(row, &columns)?;
        if let Some(index) = tool_calls {
            message.tool_calls = raw_tool_calls(text(row.get_ref(index)?));
        }
        Ok(message)
    })
    .optional()
    .context("reading a message")
    .map_err(Into::into)
}

/// The newest `user` messages of a session, newest (highest id) first, at
/// most `limit`, active ones only unless `include_inactive` (`api.md` §5.3).
pub fn list_recent_user_messages(
    conn: &Connection,
    session_id: &str,
    limit: u32,
    include_inactive: bool,
) -> Result<Vec<RecentUserMessage>, QueryError> {
    let active = if include_inactive {
        ""
    } else {
        " AND active = 1"
    };
    let sql = format!(
        "SELECT id, timestamp, content FROM messages WHERE session_id = ?1 AND role = 'user'{active} ORDER BY id DESC LIMIT ?2"
    );
    let mut stmt = conn
        .prepare_cached(&sql)
        .context("listing recent user messages")?;
    let rows = stmt
        .query_map(params![session_id, i64::from(limit)], |row| {
            Ok(RecentUserMessage {
                id: row.get(0)?,
                timestamp: crate::values::real(row.get_ref(1)?).unwrap_or_default(),
                preview: preview(decode_content(row.get_ref(2)?).as_ref()),
            })
        })
        .context("listing recent user messages")?;
    rows.collect::<Result<_, _>>()
        .context("listing recent user messages")
        .map_err(Into::into)
}

/// Whether a session has a message (in any state) with this platform message
/// id (`api.md` §5.3); `false` for an empty session id or platform id.
pub fn has_platform_message_id(
    conn: &Connection,
    session_id: &str,
    platform_message_id: &str,
) -> Result<bool, QueryError> {
    if session_id.is_empty() || platform_message_id.is_empty() {
        return Ok(false);
    }
    exists(
        conn,
        "SELECT 1 FROM messages WHERE session_id = ?1 AND platform_message_id = ?2 LIMIT 1",
        params![session_id, platform_message_id],
    )
}

/// Whether a session has inactive rows (`active = 0`: rewound or archived by
/// compaction) (`api.md` §5.3).
pub fn has_archived_messages(conn: &Connection, session_id: &str) -> Result<bool, QueryError> {
    exists(
        conn,
        "SELECT 1 FROM messages WHERE session_id = ?1 AND active = 0 LIMIT 1",
        params![session_id],
    )
}

fn exists(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> Result<bool, QueryError> {
    conn.query_row(sql, params, |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
        .context("probing messages")
        .map_err(Into::into)
}

/// The window around `message_id` ([`get_messages_around`], `window` as
/// there) filtered to `keep_roles` (the anchor is always kept; `None` keeps
/// every role, an empty list only the anchor), with up to `bookend` (a
/// negative one counts as 0) messages of those roles and non-empty
/// `content` (SQLite's `length(content) > 0`, so a structured content,
/// stored behind a NUL, never counts) from the session's start before the
/// window and from its end after it; inactive rows included, as in the
/// window. An anchor that is not a message of the session gives an empty view.
pub fn get_anchored_view(
    conn: &Connection,
    session_id: &str,
    message_id: i64,
    window: i64,
    bookend: i64,
    keep_roles: Option<&[&str]>,
) -> Result<AnchoredView, QueryError> {
    let around = get_messages_around(conn, session_id, message_id, window)?;
    anchored_view(
        around,
        message_id,
        bookend,
        keep_roles,
        |first, last, bookend| {
            let start = bookend_rows(conn, session_id, first, bookend, keep_roles, true)?;
            let mut end = bookend_rows(conn, session_id, last, bookend, keep_roles, false)?;
            end.reverse();
            Ok((start, end))
        },
    )
}

/// The first `limit` bookend rows before `bound` (`head`) or the last ones
/// after it, in the order the query takes them (ascending for the head,
/// descending for the tail).
fn bookend_rows(
    conn: &Connection,
    session_id: &str,
    bound: i64,
    limit: i64,
    keep_roles: Option<&[&str]>,
    head: bool,
) -> Result<Vec<Message>, QueryError> {
    let (side, order) = if head { ("<", "ASC") } else { (">", "DESC") };
    let roles = keep_roles.map_or(String::new(), |roles| {
        let marks = (0..roles.len())
            .map(|i| format!("?{}", i + 3))
            .collect::<Vec<_>>()
            .join(",");
        format!(" AND role IN ({marks})")
    });
    let limit_at = 3 + keep_roles.map_or(0, <[&str]>::len);
    let sql = format!(
        "SELECT * FROM messages WHERE session_id = ?1 AND id {side} ?2{roles} \
         AND length(content) > 0 ORDER BY id {order} LIMIT ?{limit_at}"
    );
    let mut values: Vec<rusqlite::types::Value> = vec![session_id.to_owned().into(), bound.into()];
    values.extend(
        keep_roles
            .unwrap_or_default()
            .iter()
            .map(|role| rusqlite::types::Value::from((*role).to_owned())),
    );
    values.push(limit.into());
    let mut stmt = conn.prepare(&sql).context("reading bookend messages")?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let rows = stmt
        .query_map(rusqlite::params_from_iter(values), |row| {
            message_from_row(row, &columns)
        })
        .context("reading bookend messages")?;
    rows.collect::<Result<_, _>>()
        .context("reading bookend messages")
        .map_err(Into::into)
}
