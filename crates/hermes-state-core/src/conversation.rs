//! The pure half of `get_messages_as_conversation` (`api.md` §5.2): turning
//! message rows that were already loaded, filtered and ordered by id into the
//! OpenAI-style conversation the agent replays.
//!
//! Kept apart from the SQL so the rules (which keys appear, how memory context
//! is cleaned, which replayed or polluted messages are dropped) can be tested
//! on hand-built rows, byte for byte against the original's dicts.
//!
//! Python semantics that matter here and differ from Rust's defaults:
//!
//! * "whitespace" is `str.isspace()` (also what `str.strip()` and the `re`
//!   module's `\s` use): Unicode `White_Space` **plus** U+001C..U+001F, which
//!   Rust's `char::is_whitespace` and the regex crate's `\s` leave out;
//! * `re.IGNORECASE` lets `i` also match `İ` (U+0130) and `ı` (U+0131), which
//!   Unicode simple case folding (the regex crate's `(?i)`) does not;
//! * "truthy" is Python's truthiness (`''`, `0`, `0.0`, `[]`, `{}`, `None` are
//!   falsy).

use std::borrow::Cow;
use std::sync::LazyLock;

use hermes_state_types::pyjson::is_truthy;
use hermes_state_types::{Content, ConversationMessage, Message};
use regex::Regex;
use serde_json::Value;

/// Openings of the background-review harness prompts (the original's
/// `_REVIEW_HARNESS_PREFIXES`). Older builds of the agent wrote the forked
/// curator's turns into the real session; replaying them makes the agent adopt
/// the curator role, so they are removed on load.
const REVIEW_HARNESS_PREFIXES: [&str; 2] = [
    "Review the conversation above and update the skill library",
    "Review the conversation above and consider saving to memory",
];

/// Python's `\s` (and `str.isspace()`) as a regex class: the regex crate's
/// Unicode `\s` misses the four information separators U+001C..U+001F.
const PY_WS: &str = r"[\s\x{1C}-\x{1F}]";

/// What a literal `i` matches under Python's `re.IGNORECASE` (Python adds the
/// Turkish dotted/dotless i, which simple case folding does not relate to `i`).
const PY_I: &str = r"[iI\x{130}\x{131}]";

/// Builds a case-insensitive regex from a Python pattern written with `\s` and
/// literal `i`, translating both to their Python meaning.
///
/// The patterns are constants, so compiling cannot fail in practice; should it,
/// the step is skipped instead of panicking (the tests would catch it).
fn python_ignorecase(pattern: &str) -> Option<Regex> {
    let translated: String = pattern
        .chars()
        .map(|c| match c {
            'i' | 'I' => PY_I.to_owned(),
            other => other.to_string(),
        })
        .collect();
    let translated = translated.replace(r"\s", PY_WS);
    Regex::new(&format!("(?i){translated}")).ok()
}

/// Step 1: a whole `<memory-context> … </memory-context>` block, shortest match,
/// across lines (the original's `_INTERNAL_CONTEXT_RE`).
static MEMORY_CONTEXT_BLOCK: LazyLock<Option<Regex>> = LazyLock::new(|| {
    // `[\s\S]` is "any character" in Python; `(?s).` says the same here without
    // relying on the `\s` translation.
    python_ignorecase(r"<\s*memory-context\s*>(?s:.)*?</\s*memory-context\s*>")
});

/// Step 2: the system note that introduced recalled memory (the original's
/// `_INTERNAL_NOTE_RE`).
static MEMORY_SYSTEM_NOTE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    python_ignorecase(concat!(
        r"\[System note:\s*The following is recalled memory context,\s*",
        r"NOT new user input\.\s*Treat as ",
        r"(?:informational background data|authoritative reference data[^\]]*)\.\]\s*",
    ))
});

/// Step 3: any remaining opening or closing fence tag (the original's `_FENCE_TAG_RE`).
static MEMORY_FENCE_TAG: LazyLock<Option<Regex>> =
    LazyLock::new(|| python_ignorecase(r"</?\s*memory-context\s*>"));

/// The memory-context cleaning applied to user/assistant text (`api.md` §5.2
/// steps 1-3), without the final strip.
///
/// Recalled memory is injected into the prompt at API-call time only; when an
/// older build persisted it, replaying it would feed the model stale context as
/// if the user had typed it. The three steps run in the original's order, so a
/// stray tag left by a broken block is removed last.
pub fn clean_memory_context(text: &str) -> String {
    let mut out = text.to_owned();
    for regex in [
        &MEMORY_CONTEXT_BLOCK,
        &MEMORY_SYSTEM_NOTE,
        &MEMORY_FENCE_TAG,
    ] {
        if let Some(regex) = regex.as_ref()
            && let Cow::Owned(replaced) = regex.replace_all(&out, "")
        {
            out = replaced;
        }
    }
    out
}

/// Builds the conversation view from message rows already filtered and ordered by id
/// (api.md §5.2). `include_ancestors` enables the duplicate-user-message rule.
///
/// The order of the passes is the original's: each row is converted and, with
/// ancestors, checked against the messages kept so far (a compression child
/// starts by replaying the parent's last user message, which would otherwise
/// appear twice); the background-review harness is removed from the finished
/// list afterwards.
pub fn build_conversation(rows: &[Message], include_ancestors: bool) -> Vec<ConversationMessage> {
    let mut messages: Vec<ConversationMessage> = Vec::with_capacity(rows.len());
    for row in rows {
        let entry = conversation_entry(row);
        if include_ancestors && is_duplicate_replayed_user_message(&messages, &entry) {
            continue;
        }
        messages.push(entry);
    }
    strip_background_review_harness(messages)
}

/// One row as the original's dict: each key only when its condition holds
/// (`api.md` §5.2 table). The struct's field order is the dict's key order.
fn conversation_entry(row: &Message) -> ConversationMessage {
    let is_assistant = row.role == "assistant";
    let content = match &row.content {
        Some(content) if is_assistant || row.role == "user" => Some(match py_str(content) {
            Some(text) => Content::Text(py_strip(&clean_memory_context(text)).to_owned()),
            None => content.clone(),
        }),
        other => other.clone(),
    };
    // The reasoning columns are assistant-only; the original reads them as raw
    // text and parses them here (invalid JSON becomes `None`, not an omission).
    let assistant_json = |raw: &Option<String>| {
        truthy_text(raw)
            .filter(|_| is_assistant)
            .map(|text| serde_json::from_str::<Value>(text).unwrap_or(Value::Null))
    };
    ConversationMessage {
        role: row.role.clone(),
        content,
        // The wire bytes sent to the provider: verbatim so replay keeps the
        // provider's prompt-cache prefix stable.
        api_content: truthy_text(&row.api_content).map(str::to_owned),
        display_kind: truthy_text(&row.display_kind).map(str::to_owned),
        display_metadata: truthy_text(&row.display_metadata)
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .filter(|value| !value.is_null()),
        timestamp: (row.timestamp != 0.0).then_some(row.timestamp),
        tool_call_id: truthy_text(&row.tool_call_id).map(str::to_owned),
        tool_name: truthy_text(&row.tool_name).map(str::to_owned),
        effect_disposition: truthy_text(&row.effect_disposition).map(str::to_owned),
        tool_calls: stored_tool_calls(&row.tool_calls).cloned(),
        message_id: truthy_text(&row.platform_message_id).map(str::to_owned),
        observed: row.observed.is_some_and(|flag| flag != 0).then_some(true),
        finish_reason: truthy_text(&row.finish_reason)
            .filter(|_| is_assistant)
            .map(str::to_owned),
        reasoning: truthy_text(&row.reasoning)
            .filter(|_| is_assistant)
            .map(str::to_owned),
        // `''` is kept: providers distinguish "no reasoning" from "empty reasoning".
        reasoning_content: row.reasoning_content.clone().filter(|_| is_assistant),
        reasoning_details: assistant_json(&row.reasoning_details),
        codex_reasoning_items: assistant_json(&row.codex_reasoning_items),
        codex_message_items: assistant_json(&row.codex_message_items),
    }
}

/// The tool calls when the stored text was truthy.
///
/// The original tests the raw column text (`if row["tool_calls"]`) and then
/// parses it, so a stored `[]`, `{}` or `null` (only foreign writers produce
/// them: `append_message` stores empty calls as NULL) is returned as that value,
/// and invalid JSON as `[]` — which is exactly what [`Message::tool_calls`]
/// holds. Only an absent value or the empty string (a stored `''` left unparsed
/// by `get_messages`) counts as not stored.
fn stored_tool_calls(tool_calls: &Option<Value>) -> Option<&Value> {
    tool_calls
        .as_ref()
        .filter(|value| !matches!(value, Value::String(s) if s.is_empty()))
}

/// With ancestors, a user message that repeats the last user message kept
/// since the last real assistant turn is a replay (a compression child carries
/// its parent's pending question) and is dropped.
///
/// Scans the kept messages backwards from the end: an equal user message means
/// duplicate; an assistant message with content or tool calls ends the search.
fn is_duplicate_replayed_user_message(
    kept: &[ConversationMessage],
    entry: &ConversationMessage,
) -> bool {
    if entry.role != "user" {
        return false;
    }
    let Some(text) = entry
        .content
        .as_ref()
        .and_then(py_str)
        .filter(|t| !t.is_empty())
    else {
        return false;
    };
    for previous in kept.iter().rev() {
        if previous.role == "user" && previous.content.as_ref().and_then(py_str) == Some(text) {
            return true;
        }
        if previous.role == "assistant"
            && (previous.content.as_ref().is_some_and(content_is_truthy)
                || previous.tool_calls.as_ref().is_some_and(is_truthy))
        {
            return false;
        }
    }
    false
}

/// Whether a message is a persisted background-review harness prompt: a
/// `user` or `system` message whose string content, after leading whitespace,
/// starts with one of the harness openings (case-sensitive).
fn is_background_review_harness_message(message: &ConversationMessage) -> bool {
    if message.role != "user" && message.role != "system" {
        return false;
    }
    message
        .content
        .as_ref()
        .and_then(py_str)
        .is_some_and(|text| {
            let head = text.trim_start_matches(is_py_space);
            REVIEW_HARNESS_PREFIXES
                .iter()
                .any(|prefix| head.starts_with(prefix))
        })
}

/// Drops each harness message and, when the very next message is an
/// `assistant` one, that curator-mode reply too. A harness message following a
/// harness message re-arms the skip, as in the original of the pinned commit.
fn strip_background_review_harness(messages: Vec<ConversationMessage>) -> Vec<ConversationMessage> {
    let mut out = Vec::with_capacity(messages.len());
    let mut skip_next_assistant = false;
    for message in messages {
        if is_background_review_harness_message(&message) {
            skip_next_assistant = true;
            continue;
        }
        if std::mem::take(&mut skip_next_assistant) && message.role == "assistant" {
            continue;
        }
        out.push(message);
    }
    out
}

/// The content as a Python `str`, if it is one.
///
/// Besides [`Content::Text`], stored text that starts with the multimodal
/// prefix but holds a JSON *string* decodes to a `str` in the original too
/// (here [`Content::Structured`] of a string), so it is cleaned and tested like
/// any other text.
fn py_str(content: &Content) -> Option<&str> {
    match content {
        Content::Text(text) => Some(text),
        Content::Structured(Value::String(text)) => Some(text),
        _ => None,
    }
}

/// Python truthiness of a decoded content value.
fn content_is_truthy(content: &Content) -> bool {
    match content {
        Content::Text(text) => !text.is_empty(),
        Content::Structured(value) => is_truthy(value),
        Content::Integer(i) => *i != 0,
        Content::Real(f) => *f != 0.0,
        Content::Bool(b) => *b,
        Content::Bytes(bytes) => !bytes.is_empty(),
    }
}

/// The text when it is truthy (present and non-empty).
fn truthy_text(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|text| !text.is_empty())
}

/// Python's `str.isspace()` for one character.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1C}'..='\u{1F}').contains(&c)
}

/// Python's `str.strip()` without arguments.
fn py_strip(text: &str) -> &str {
    text.trim_matches(is_py_space)
}
