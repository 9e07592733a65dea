//! The rows an accepted session becomes: the columns the original's
//! `import_sessions` writes, with its coercions, for either backend.
//!
//! A session row gets exactly [`SESSION_COLUMNS`]; every other column
//! (gateway routing, handoff, compression state, rewind count, pinned, ...)
//! keeps its default: an import restores history, not live state. A
//! message row gets exactly [`MESSAGE_COLUMNS`], as the original's message
//! writer inserts a fresh active message.

use hermes_state_types::stored::{self, StoredValue};
use hermes_state_types::{Content, pyjson, pyvalue};
use serde_json::{Map, Value};

use super::import_payload::Accepted;

/// The session columns written, in the order of [`Prepared::session`]
/// (`parent_session_id` is linked afterwards).
pub const SESSION_COLUMNS: [&str; 30] = [
    "id",
    "source",
    "user_id",
    "model",
    "model_config",
    "system_prompt",
    "started_at",
    "ended_at",
    "end_reason",
    "message_count",
    "tool_call_count",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "cwd",
    "git_branch",
    "git_repo_root",
    "billing_provider",
    "billing_base_url",
    "billing_mode",
    "estimated_cost_usd",
    "actual_cost_usd",
    "cost_status",
    "cost_source",
    "pricing_version",
    "title",
    "api_call_count",
    "archived",
];

/// The message columns written, in the order of each of
/// [`Prepared::messages`].
pub const MESSAGE_COLUMNS: [&str; 21] = [
    "session_id",
    "role",
    "content",
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "effect_disposition",
    "timestamp",
    "token_count",
    "finish_reason",
    "reasoning",
    "reasoning_content",
    "reasoning_details",
    "codex_reasoning_items",
    "codex_message_items",
    "platform_message_id",
    "observed",
    "active",
    "api_content",
    "display_kind",
    "display_metadata",
];

/// What the original raises when it binds an integer beyond 64 bits.
const TOO_LARGE: &str = "Python int too large to convert to SQLite INTEGER";

/// How far each message's time is past the one before, when given none
/// (or an earlier one).
const MESSAGE_TIME_STEP: f64 = 1e-6;

/// One accepted session, ready to write.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The session's id.
    pub id: String,
    /// Its row: the values of [`SESSION_COLUMNS`].
    pub session: Row,
    /// Its messages' rows, in order: the values of [`MESSAGE_COLUMNS`].
    pub messages: Vec<Row>,
    /// `parent_session_id`, stripped, when not empty.
    pub parent: Option<String>,
}

/// One row to insert.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The values, in the order of the table's column list here.
    pub values: Vec<StoredValue>,
    /// A value the original cannot bind (an integer beyond 64 bits): the
    /// import fails with this text when it comes to this row (a skipped
    /// session never does).
    pub refusal: Option<&'static str>,
}

/// The rows of one session, `now` being the import's clock reading (the
/// default `started_at` and the first default message time).
pub(crate) fn prepare(item: &Accepted<'_>, now: f64) -> Prepared {
    let raw = item.raw;
    let mut refusal = None;
    let mut int_or_zero = |key: &str| match raw.get(key).map(pyvalue::to_int) {
        Some(pyvalue::Int::Value(n)) => StoredValue::Integer(n),
        Some(pyvalue::Int::TooLarge) => {
            refusal = Some(TOO_LARGE);
            StoredValue::Integer(0)
        }
        None | Some(pyvalue::Int::Invalid) => StoredValue::Integer(0),
    };
    let tokens = [
        int_or_zero("input_tokens"),
        int_or_zero("output_tokens"),
        int_or_zero("cache_read_tokens"),
        int_or_zero("cache_write_tokens"),
        int_or_zero("reasoning_tokens"),
    ];
    let api_call_count = int_or_zero("api_call_count");

    let mut messages = Vec::with_capacity(item.messages.len());
    let mut tool_calls = 0;
    let mut clock = now;
    for message in &item.messages {
        let (row, calls) = message_row(&item.id, message, &mut clock);
        tool_calls += calls;
        messages.push(row);
    }

    let source = text(raw, "source")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "import".to_owned());
    let [input, output, cache_read, cache_write, reasoning] = tokens;
    let session = vec![
        StoredValue::Text(item.id.clone()),
        StoredValue::Text(source),
        text_value(raw, "user_id"),
        text_value(raw, "model"),
        item.model_config
            .clone()
            .map_or(StoredValue::Null, StoredValue::Text),
        text_value(raw, "system_prompt"),
        real(
            raw.get("started_at")
                .and_then(pyvalue::to_float)
                .unwrap_or(now),
        ),
        raw.get("ended_at")
            .and_then(pyvalue::to_float)
            .map_or(StoredValue::Null, real),
        text_value(raw, "end_reason"),
        StoredValue::Integer(i64::try_from(messages.len()).unwrap_or(i64::MAX)),
        StoredValue::Integer(tool_calls),
        input,
        output,
        cache_read,
        cache_write,
        reasoning,
        text_value(raw, "cwd"),
        text_value(raw, "git_branch"),
        text_value(raw, "git_repo_root"),
        text_value(raw, "billing_provider"),
        text_value(raw, "billing_base_url"),
        text_value(raw, "billing_mode"),
        raw.get("estimated_cost_usd")
            .and_then(pyvalue::to_float)
            .map_or(StoredValue::Null, real),
        raw.get("actual_cost_usd")
            .and_then(pyvalue::to_float)
            .map_or(StoredValue::Null, real),
        text_value(raw, "cost_status"),
        text_value(raw, "cost_source"),
        text_value(raw, "pricing_version"),
        text_value(raw, "title"),
        api_call_count,
        StoredValue::Integer(i64::from(
            raw.get("archived").is_some_and(pyjson::is_truthy),
        )),
    ];
    let parent = text(raw, "parent_session_id")
        .map(|p| hermes_state_types::text::python_strip(&p).to_owned())
        .filter(|p| !p.is_empty());
    Prepared {
        id: item.id.clone(),
        session: Row {
            values: session,
            refusal,
        },
        messages,
        parent,
    }
}

/// One message's row and its tool-call count. `clock` is the default time of this message;
/// it moves on to a microsecond past this message's time, or past itself
/// when that is later.
fn message_row(session_id: &str, message: &Map<String, Value>, clock: &mut f64) -> (Row, i64) {
    let role = text(message, "role").unwrap_or_default();
    let assistant = role == "assistant";
    let mut refusal = None;

    let timestamp = message
        .get("timestamp")
        .filter(|v| !v.is_null())
        .and_then(pyvalue::to_float)
        .unwrap_or(*clock);
    let (next, after) = (*clock + MESSAGE_TIME_STEP, timestamp + MESSAGE_TIME_STEP);
    // Python's max(next, after): `after` only when strictly greater (a NaN never is).
    *clock = if after > next { after } else { next };

    let token_count = match message.get("token_count").map(pyvalue::to_int) {
        Some(pyvalue::Int::Value(n)) => StoredValue::Integer(n),
        Some(pyvalue::Int::TooLarge) => {
            refusal = Some(TOO_LARGE);
            StoredValue::Null
        }
        None | Some(pyvalue::Int::Invalid) => StoredValue::Null,
    };
    let content = match message.get("content") {
        None | Some(Value::Null) => StoredValue::Null,
        Some(Value::String(text)) => StoredValue::Text(text.clone()),
        Some(Value::Bool(b)) => StoredValue::Integer(i64::from(*b)),
        Some(Value::Number(n)) => match (n.as_i64(), n.is_u64()) {
            (Some(i), _) => StoredValue::Integer(i),
            (None, true) => {
                refusal = Some(TOO_LARGE);
                StoredValue::Null
            }
            (None, false) => real(n.as_f64().unwrap_or_default()),
        },
        Some(structured) => stored::encode_content(&Content::Structured(structured.clone())),
    };
    let calls = stored::encode_tool_calls(message.get("tool_calls"));
    let reasoning_json = |key: &str| {
        if assistant {
            decoded_json_text(message.get(key))
        } else {
            StoredValue::Null
        }
    };
    let platform_message_id = match text(message, "platform_message_id") {
        Some(id) if !id.is_empty() => StoredValue::Text(id),
        _ => text_value(message, "message_id"),
    };
    let values = vec![
        StoredValue::Text(session_id.to_owned()),
        StoredValue::Text(role.clone()),
        content,
        text_value(message, "tool_call_id"),
        calls.text.map_or(StoredValue::Null, StoredValue::Text),
        text_value(message, "tool_name"),
        text_value(message, "effect_disposition"),
        real(timestamp),
        token_count,
        text_value(message, "finish_reason"),
        if assistant {
            text_value(message, "reasoning")
        } else {
            StoredValue::Null
        },
        if assistant {
            text_value(message, "reasoning_content")
        } else {
            StoredValue::Null
        },
        reasoning_json("reasoning_details"),
        reasoning_json("codex_reasoning_items"),
        reasoning_json("codex_message_items"),
        platform_message_id,
        StoredValue::Integer(i64::from(
            message.get("observed").is_some_and(pyjson::is_truthy),
        )),
        StoredValue::Integer(1),
        text_value(message, "api_content"),
        text_value(message, "display_kind"),
        stored::encode_json_field(message.get("display_metadata"))
            .map_or(StoredValue::Null, StoredValue::Text),
    ];
    (Row { values, refusal }, calls.count)
}

/// `reasoning_details` and the codex items: text is first parsed as JSON
/// (kept as the text when it is not JSON); the result is written as
/// `json.dumps` text when truthy, else NULL.
fn decoded_json_text(value: Option<&Value>) -> StoredValue {
    let text = match value {
        Some(Value::String(text)) => match pyjson::reserialize(text) {
            Some(parsed) => parsed.truthy.then_some(parsed.text),
            None => (!text.is_empty()).then(|| pyjson::to_string(&Value::String(text.clone()))),
        },
        other => stored::encode_json_field(other),
    };
    text.map_or(StoredValue::Null, StoredValue::Text)
}

/// A text field (checked to be text or null).
fn text(object: &Map<String, Value>, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn text_value(object: &Map<String, Value>, key: &str) -> StoredValue {
    text(object, key).map_or(StoredValue::Null, StoredValue::Text)
}

/// A REAL; SQLite stores a NaN bound as REAL as NULL, so it is NULL here
/// for every backend.
fn real(f: f64) -> StoredValue {
    if f.is_nan() {
        StoredValue::Null
    } else {
        StoredValue::Real(f)
    }
}
