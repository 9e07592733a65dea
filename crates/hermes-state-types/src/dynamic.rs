//! The original's readings of loosely typed arguments.
//!
//! The original is Python: callers hand it whatever they have, and it reads
//! a timestamp with `float(x)`, a message dict with `msg.get(key)`. A caller
//! that holds such values as JSON (a Python binding, a replay of recorded
//! calls, a gateway relaying a payload) turns them into this crate's typed
//! arguments here, so that every such caller applies the original's rules
//! the same way instead of re-deriving them.

use serde_json::Value;

use crate::{Content, NewMessage};

/// Python's `float(value)` for a JSON value, `None` where it raises: the
/// original ignores a timestamp `float()` refuses and uses "now" instead.
/// One definition for the crate: [`crate::pyvalue::to_float`].
pub fn python_float(value: &Value) -> Option<f64> {
    crate::pyvalue::to_float(value)
}

/// Python's truth value of a JSON value (`if value:`).
pub fn python_truthy(value: &Value) -> bool {
    crate::pyjson::is_truthy(value)
}

/// The content argument as the original stores it: `null` is no content,
/// a string is text, a list or object is multimodal content, a number or a
/// boolean is bound as is (SQLite's TEXT affinity turns it into text).
pub fn content_from_json(value: &Value) -> Option<Content> {
    match value {
        Value::Null => None,
        Value::String(text) => Some(Content::Text(text.clone())),
        Value::Bool(flag) => Some(Content::Bool(*flag)),
        Value::Number(number) => Some(match number.as_i64() {
            Some(integer) => Content::Integer(integer),
            None => Content::Real(number.as_f64().unwrap_or(f64::NAN)),
        }),
        Value::Array(_) | Value::Object(_) => Some(Content::Structured(value.clone())),
    }
}

/// A message dict of `replace_messages` / `archive_and_compact` as the
/// original reads it into a new row (`api.md` §4.5): `role` defaults to
/// `unknown`; `timestamp` goes through `float()` and is ignored when that
/// fails; `platform_message_id` falls back to `message_id`; the JSON fields
/// count only when truthy; `api_content` and `display_kind` only when they
/// are strings; `observed` by its truth value. Keys the original does not
/// read are ignored. The reasoning fields are kept for `assistant` rows by
/// the writer itself, so they are passed through here.
pub fn new_message_from_dict(session_id: &str, message: &Value) -> NewMessage {
    let get = |key: &str| message.get(key).filter(|value| !value.is_null());
    let text = |key: &str| get(key).and_then(Value::as_str).map(str::to_owned);
    let truthy_json = |key: &str| get(key).filter(|value| python_truthy(value)).cloned();
    let platform_message_id = get("platform_message_id")
        .filter(|value| python_truthy(value))
        .or_else(|| get("message_id"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    NewMessage {
        session_id: session_id.to_owned(),
        role: match message.get("role") {
            Some(Value::String(role)) => role.clone(),
            _ => "unknown".to_owned(),
        },
        content: get("content").and_then(content_from_json),
        tool_name: text("tool_name"),
        tool_calls: get("tool_calls").cloned(),
        tool_call_id: text("tool_call_id"),
        token_count: get("token_count").and_then(Value::as_i64),
        finish_reason: text("finish_reason"),
        reasoning: text("reasoning"),
        reasoning_content: text("reasoning_content"),
        reasoning_details: truthy_json("reasoning_details"),
        codex_reasoning_items: truthy_json("codex_reasoning_items"),
        codex_message_items: truthy_json("codex_message_items"),
        platform_message_id,
        observed: get("observed").is_some_and(python_truthy),
        effect_disposition: text("effect_disposition"),
        timestamp: get("timestamp").and_then(python_float),
        api_content: text("api_content"),
        display_kind: text("display_kind"),
        display_metadata: truthy_json("display_metadata"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn float_reads_strings_as_python_does() {
        // python3 -c "print(float(' 1_000.5 '), float('1e3'), float('-Inf'), float('.5'), float('5.'))"
        let cases = [
            (" 1_000.5 ", Some(1000.5)),
            ("1e3", Some(1000.0)),
            ("-Inf", Some(f64::NEG_INFINITY)),
            ("+infinity", Some(f64::INFINITY)),
            (".5", Some(0.5)),
            ("5.", Some(5.0)),
            ("1767225824.5", Some(1_767_225_824.5)),
            ("not-a-time", None),
            ("", None),
            ("1__0", None),
            ("_1", None),
            ("1_", None),
            ("0x10", None),
            ("e5", None),
        ];
        for (text, expected) in cases {
            assert_eq!(crate::pyvalue::float_from_text(text), expected, "{text:?}");
        }
        assert!(crate::pyvalue::float_from_text("nan").is_some_and(f64::is_nan));
        assert_eq!(python_float(&json!(true)), Some(1.0));
        assert_eq!(python_float(&json!(null)), None);
        assert_eq!(python_float(&json!([1])), None);
    }

    #[test]
    fn a_message_dict_reads_as_the_original_reads_it() {
        let message = new_message_from_dict(
            "s",
            &json!({"content": "hi", "message_id": "pm-1", "observed": 1,
                     "timestamp": "12.5", "reasoning_details": [], "display_kind": 3}),
        );
        assert_eq!(message.role, "unknown");
        assert_eq!(message.platform_message_id.as_deref(), Some("pm-1"));
        assert!(message.observed);
        assert_eq!(message.timestamp, Some(12.5));
        assert_eq!(message.reasoning_details, None);
        assert_eq!(message.display_kind, None);
        assert_eq!(message.content, Some(Content::Text("hi".to_owned())));
    }
}
