//! The other message readers (`api.md` §5.3): a window of messages around
//! one, the recent user turns with a preview, and two existence probes.
//! Every one of them sees inactive rows (rewound or compacted) unless it says
//! otherwise.

use hermes_state_types::text::{is_python_whitespace, python_strip};
use hermes_state_types::{Content, Message, NewMessage};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

use crate::error::{QueryContext, QueryError};
use crate::rows::{decode_content, message_from_row};
use crate::values::text;

/// A window of a session's messages around one message (`api.md` §5.3).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct MessagesAround {
    /// Up to `window` messages before the anchor, the anchor, up to `window`
    /// after it, in id order; inactive rows included.
    pub window: Vec<Message>,
    /// How many of `window` come before the anchor.
    pub messages_before: usize,
    /// How many of `window` come after the anchor.
    pub messages_after: usize,
}

/// What a rewind to a `user` message did (`api.md` §4.5), on every backend;
/// serialised as the original's dict (`{"rewound_count", "target_message",
/// "new_head_id"}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RewindResult {
    /// How many live rows were rewound (the target and every later live row).
    pub rewound_count: usize,
    /// The target row as it was before the rewind, as the original returns
    /// it: `content` decoded as by `get_messages`, but `tool_calls` the
    /// stored text, not parsed (a JSON string, or null), see
    /// [`rewind_target`].
    pub target_message: Message,
    /// The newest live message left, if any.
    pub new_head_id: Option<i64>,
}

/// One entry of [`list_recent_user_messages`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecentUserMessage {
    /// The message id.
    pub id: i64,
    /// Its time (Unix seconds).
    pub timestamp: f64,
    /// Its text on one line, at most 80 characters (see [`preview`]).
    pub preview: String,
}

/// The length past which a preview is cut.
const PREVIEW_MAX: usize = 80;
/// How many characters a cut preview keeps before its `...`.
const PREVIEW_KEEP: usize = 77;

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

/// A rewind target's `tool_calls` as the original returns it: the stored
/// text, unparsed.
pub fn raw_tool_calls(stored: Option<String>) -> Option<Value> {
    stored.map(Value::String)
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

/// The one-line preview of a user message (`api.md` §5.3): its text, or the
/// text parts of multimodal content joined by spaces (`[multimodal content]`
/// when there are none); whitespace runs collapsed to one space; longer than
/// 80 characters → the first 77 and `...`. Structured content that decodes
/// to a JSON string previews as that string, as in the original; other
/// content as `""`. Whitespace is Python's (`str.split()`).
pub fn preview(content: Option<&Content>) -> String {
    let text = match content {
        Some(Content::Text(text) | Content::Structured(Value::String(text))) => text.clone(),
        Some(Content::Structured(Value::Array(parts))) => {
            let joined = parts
                .iter()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .filter(|text| !text.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            let joined = python_strip(&joined);
            if joined.is_empty() {
                "[multimodal content]".to_owned()
            } else {
                joined.to_owned()
            }
        }
        _ => String::new(),
    };
    let collapsed = text
        .split(is_python_whitespace)
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if collapsed.chars().count() > PREVIEW_MAX {
        let mut cut: String = collapsed.chars().take(PREVIEW_KEEP).collect();
        cut.push_str("...");
        cut
    } else {
        collapsed
    }
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

/// The rows a transcript replacement or a compaction inserts into
/// `session_id` (`api.md` §4.5), shared by every backend: each message
/// belongs to `session_id` (an empty `session_id` is filled in, another one
/// is refused with the returned text), the reasoning fields are kept for
/// `assistant` rows only, and timestamps are strictly increasing: a message
/// without one gets a running default that starts at `now` and becomes
/// `max(default, row timestamp) + 1e-6` after each row. Every returned
/// message has its final `timestamp`.
pub fn replacement_messages(
    session_id: &str,
    messages: &[NewMessage],
    now: f64,
) -> Result<Vec<NewMessage>, String> {
    let mut running = now;
    messages
        .iter()
        .map(|message| {
            if !message.session_id.is_empty() && message.session_id != session_id {
                return Err(format!(
                    "a message of session {:?} cannot replace messages of session {session_id:?}",
                    message.session_id
                ));
            }
            let mut message = message.clone();
            message.session_id = session_id.to_owned();
            if message.role != "assistant" {
                message.reasoning = None;
                message.reasoning_content = None;
                message.reasoning_details = None;
                message.codex_reasoning_items = None;
                message.codex_message_items = None;
            }
            let timestamp = message.timestamp.unwrap_or(running);
            running = running.max(timestamp) + 1e-6;
            message.timestamp = Some(timestamp);
            Ok(message)
        })
        .collect()
}

/// An anchored window with the session's opening and closing turns
/// (`get_anchored_view`): the window of [`get_messages_around`], role-filtered,
/// plus bookends outside it. Serialised as the original's dict.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AnchoredView {
    /// The window's messages whose role is kept, and the anchor whatever its role.
    pub window: Vec<Message>,
    /// How many messages of the unfiltered window come before the anchor.
    pub messages_before: usize,
    /// How many messages of the unfiltered window come after the anchor.
    pub messages_after: usize,
    /// The session's first `bookend` messages before the window (kept roles,
    /// non-empty content), in id order.
    pub bookend_start: Vec<Message>,
    /// The session's last `bookend` messages after the window (kept roles,
    /// non-empty content), in id order.
    pub bookend_end: Vec<Message>,
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

/// The anchored view's rule, for every backend: `around` (the window of
/// [`get_messages_around`]) filtered to `keep_roles`, the anchor kept; with
/// a positive `bookend`, `bookends(first id, last id of the unfiltered
/// window, bookend)` gives the two bookends in id order (rows of the kept
/// roles with `length(content) > 0` as SQLite counts it: the first
/// `bookend` before the window, the last `bookend` after it).
pub fn anchored_view<E>(
    around: MessagesAround,
    message_id: i64,
    bookend: i64,
    keep_roles: Option<&[&str]>,
    bookends: impl FnOnce(i64, i64, i64) -> Result<(Vec<Message>, Vec<Message>), E>,
) -> Result<AnchoredView, E> {
    let (Some(first), Some(last)) = (around.window.first(), around.window.last()) else {
        return Ok(AnchoredView::default());
    };
    let (first_id, last_id) = (first.id, last.id);
    let bookend = bookend.max(0);
    let (bookend_start, bookend_end) = if bookend > 0 {
        bookends(first_id, last_id, bookend)?
    } else {
        (Vec::new(), Vec::new())
    };
    let window = around
        .window
        .into_iter()
        .filter(|m| {
            m.id == message_id || keep_roles.is_none_or(|roles| roles.contains(&m.role.as_str()))
        })
        .collect();
    Ok(AnchoredView {
        window,
        messages_before: around.messages_before,
        messages_after: around.messages_after,
        bookend_start,
        bookend_end,
    })
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
