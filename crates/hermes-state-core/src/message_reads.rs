//! The other message readers (`api.md` §4.5, §5.3): what they give, and
//! the rules every backend applies alike — a rewind target's raw tool
//! calls, a user message's one-line preview, the rows a replacement
//! inserts, the anchored view built from a window.

use hermes_state_types::text::{is_python_whitespace, python_strip};
use hermes_state_types::{Content, Message, NewMessage};
use serde::Serialize;
use serde_json::Value;

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
    /// [`raw_tool_calls`].
    pub target_message: Message,
    /// The newest live message left, if any.
    pub new_head_id: Option<i64>,
}

/// One entry of `list_recent_user_messages`.
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

/// A rewind target's `tool_calls` as the original returns it: the stored
/// text, unparsed.
pub fn raw_tool_calls(stored: Option<String>) -> Option<Value> {
    stored.map(Value::String)
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
/// (`get_anchored_view`): the window of `get_messages_around`, role-filtered,
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

/// The anchored view's rule, for every backend: `around` (the window of
/// `get_messages_around`) filtered to `keep_roles`, the anchor kept; with
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
