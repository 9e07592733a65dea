//! What `append_message` stores (`api.md` §4.1–4.3) and `get_messages`
//! reads back (§5.1), through the seam: the ids and counters, every
//! column, `tool_calls` and the JSON columns as the text Python's
//! `json.dumps` writes, content of every kind.

use hermes_state_types::{Content, ErrorKind, NewMessage, NewSession};
use serde_json::{Value, json};

use super::raw::{int, real};
use super::{Backend, TestStore};

fn counters(b: &TestStore, id: &str) -> (Option<i64>, Option<i64>) {
    let session = b.get_session(id).unwrap().unwrap();
    (session.message_count, session.tool_call_count)
}

/// Columns of one message, raw.
fn columns(b: &TestStore, columns: &str, id: i64) -> Vec<Value> {
    b.query(&format!("SELECT {columns} FROM messages WHERE id = {id}"))
        .remove(0)
}

/// §4.3's measured sequence: the counters after each append, ids 1, 2,
/// 3, … (an append refused for an unknown session takes none), and the
/// `tool_calls` text of the last four.
pub fn counters_ids_and_tool_calls_follow_the_measured_sequence_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    b.create_session(&NewSession::new("s", "cli")).unwrap();
    let lost = b.append_message(&NewMessage::new("nope", "user").content("lost word"));
    assert_eq!(lost.unwrap_err().kind(), ErrorKind::NotFound, "{n}");
    assert_eq!(
        int(&b.query("SELECT count(*) FROM sessions")[0][0]),
        1,
        "{n}"
    );
    let calls = |value: Value| NewMessage::new("s", "assistant").tool_calls(value);
    let two = json!([
        {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}},
    ]);
    let tool = NewMessage::new("s", "tool").content("out");
    let steps = [
        (NewMessage::new("s", "user").content("hi"), (1, 0)),
        (calls(two), (2, 2)),
        (tool.tool_result("terminal", "c1"), (3, 2)),
        (calls(json!(r#"[{"id":"c9"}]"#)), (4, 3)),
        (calls(json!("not json")), (5, 3)),
        (calls(json!({"id": "solo"})), (6, 4)),
        (calls(json!([])), (7, 4)),
    ];
    for (i, (message, (messages, tools))) in steps.into_iter().enumerate() {
        let id = b.append_message(&message).unwrap();
        assert_eq!(id, i as i64 + 1, "{n}: ids are 1, 2, 3, …");
        let after = counters(&b, "s");
        assert_eq!(after, (Some(messages), Some(tools)), "{n}: append {id}");
    }
    assert_eq!(b.message_count(Some("s")).unwrap(), 7, "{n}");
    let stored = b.query("SELECT tool_calls FROM messages WHERE id >= 4 ORDER BY id");
    let c9 = json!(r#"[{"id": "c9"}]"#);
    let solo = json!(r#"{"id": "solo"}"#);
    assert_eq!(stored, [[c9], [Value::Null], [solo], [Value::Null]], "{n}");
}

/// `tool_calls` given as a value or as a JSON string (read as Python's
/// `json.loads` reads it, written back as its `json.dumps` writes: large
/// integers exact, `-0` an integer, non-finite numbers and escaped lone
/// surrogates kept, the last of duplicate keys; falsy values NULL): the
/// stored text and, where the case gives it, the calls the session
/// counts. Then the four JSON columns.
pub fn tool_calls_and_json_columns_are_stored_as_pythons_json_text_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    b.create_session(&NewSession::new("s", "cli")).unwrap();
    // (given, stored, calls counted); a string's answer is CPython 3's
    // json.dumps(json.loads(given)).
    let cases: &[(Value, Option<&str>, Option<i64>)] = &[
        (json!(r#"[{"id":"c9"}]"#), Some(r#"[{"id": "c9"}]"#), None),
        (json!("not json"), None, None),
        (json!([]), None, None),
        (json!({}), None, None),
        (json!({"id": "solo"}), Some(r#"{"id": "solo"}"#), None),
        (
            json!(r#"[{"n": 1e2, "m": 1.10, "big": 123456789012345678, "s": "é"}]"#),
            Some(r#"[{"n": 100.0, "m": 1.1, "big": 123456789012345678, "s": "\u00e9"}]"#),
            None,
        ),
        (
            json!("[1E2, 1.10, -0.0]"),
            Some("[100.0, 1.1, -0.0]"),
            Some(3),
        ),
        (
            json!("[18446744073709551615, -9223372036854775808]"),
            Some("[18446744073709551615, -9223372036854775808]"),
            Some(2),
        ),
        (
            json!(r#"[{"n": 123456789012345678901234567890}]"#),
            Some(r#"[{"n": 123456789012345678901234567890}]"#),
            Some(1),
        ),
        (
            json!("[18446744073709551616]"),
            Some("[18446744073709551616]"),
            Some(1),
        ),
        (json!("[-0]"), Some("[0]"), Some(1)),
        (
            json!("[NaN, Infinity, -Infinity]"),
            Some("[NaN, Infinity, -Infinity]"),
            Some(3),
        ),
        (json!("[1e400]"), Some("[Infinity]"), Some(1)),
        (
            json!(r#"["\ud83d", {"k": "a\udc00b"}]"#),
            Some(r#"["\ud83d", {"k": "a\udc00b"}]"#),
            Some(2),
        ),
        (
            json!(r#"["\u00e9\ud83d\ude00", "\u0000"]"#),
            Some(r#"["\u00e9\ud83d\ude00", "\u0000"]"#),
            Some(2),
        ),
        (
            json!(r#"{"a":1,"b":3,"a":2}"#),
            Some(r#"{"a": 2, "b": 3}"#),
            Some(1),
        ),
        (json!(" [1] "), Some("[1]"), Some(1)),
        (json!("[1]\n"), Some("[1]"), Some(1)),
        (json!(r#""abc""#), Some(r#""abc""#), Some(1)),
        (json!(r#""""#), None, Some(1)),
        (json!("{}"), None, Some(1)),
        (json!("0"), None, Some(1)),
        (json!("null"), None, Some(0)),
        (json!(""), None, Some(0)),
        (json!("[1,]"), None, Some(0)),
    ];
    for (given, stored, counted) in cases {
        let before = counters(&b, "s").1.unwrap();
        let message = NewMessage::new("s", "assistant").tool_calls(given.clone());
        let id = b.append_message(&message).unwrap();
        let text = columns(&b, "tool_calls", id).remove(0);
        assert_eq!(
            text,
            stored.map_or(Value::Null, Value::from),
            "{n}: {given}"
        );
        if let Some(counted) = counted {
            let after = counters(&b, "s").1.unwrap();
            assert_eq!(after - before, *counted, "{n}: calls counted for {given}");
        }
    }
    // reasoning_details, codex_reasoning_items, codex_message_items,
    // display_metadata: (given, stored).
    let json_columns = [
        (Some(json!({})), None),
        (Some(json!([])), None),
        (None, None),
        (Some(json!([{"t": 1}])), Some(r#"[{"t": 1}]"#)),
        (
            Some(json!({"a": "é", "b": [1, 2.5]})),
            Some(r#"{"a": "\u00e9", "b": [1, 2.5]}"#),
        ),
    ];
    for (value, stored) in json_columns {
        let message = NewMessage {
            reasoning_details: value.clone(),
            codex_reasoning_items: value.clone(),
            codex_message_items: value.clone(),
            display_metadata: value.clone(),
            ..NewMessage::new("s", "assistant")
        };
        let id = b.append_message(&message).unwrap();
        let got = columns(
            &b,
            "reasoning_details, codex_reasoning_items, codex_message_items, display_metadata",
            id,
        );
        let want = stored.map_or(Value::Null, Value::from);
        assert_eq!(got, vec![want; 4], "{n}: JSON columns of {value:?}");
    }
}

/// Every column a message is appended with, stored as given (a REAL
/// timestamp, 0/1 flags); the defaults (not observed, active, not
/// compacted, the clock's time as a REAL); and the row as `get_messages`
/// reads it, the JSON columns as their stored text.
pub fn every_column_of_a_message_is_stored_and_read_back_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    b.create_session(&NewSession::new("s", "cli")).unwrap();
    let full = NewMessage {
        content: Some(Content::Text("body".to_owned())),
        tool_name: Some("terminal".to_owned()),
        tool_calls: Some(json!([{"id": "c1"}])),
        tool_call_id: Some("call_1".to_owned()),
        token_count: Some(7),
        finish_reason: Some("stop".to_owned()),
        reasoning: Some("thinking".to_owned()),
        reasoning_content: Some(String::new()),
        reasoning_details: Some(json!([{"t": 1}])),
        codex_reasoning_items: Some(json!([{"i": 1}])),
        codex_message_items: Some(json!([{"m": 1}])),
        platform_message_id: Some("pm-1".to_owned()),
        observed: true,
        effect_disposition: Some("applied".to_owned()),
        timestamp: Some(1_700_000_001.5),
        api_content: Some("  WIRE  ".to_owned()),
        display_kind: Some("steer".to_owned()),
        display_metadata: Some(json!({"a": 1})),
        ..NewMessage::new("s", "assistant")
    };
    assert_eq!(b.append_message(&full).unwrap(), 1, "{n}");
    let all = "id, session_id, role, content, tool_call_id, tool_calls, tool_name, \
        effect_disposition, timestamp, token_count, finish_reason, reasoning, reasoning_content, \
        reasoning_details, codex_reasoning_items, codex_message_items, platform_message_id, \
        observed, active, compacted, api_content, display_kind, display_metadata";
    let expected = json!([
        1,
        "s",
        "assistant",
        "body",
        "call_1",
        r#"[{"id": "c1"}]"#,
        "terminal",
        "applied",
        1_700_000_001.5,
        7,
        "stop",
        "thinking",
        "",
        r#"[{"t": 1}]"#,
        r#"[{"i": 1}]"#,
        r#"[{"m": 1}]"#,
        "pm-1",
        1,
        1,
        0,
        "  WIRE  ",
        "steer",
        r#"{"a": 1}"#
    ]);
    assert_eq!(Value::from(columns(&b, all, 1)), expected, "{n}");

    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let plain = NewMessage::new("s", "user").content("plain");
    assert_eq!(b.append_message(&plain).unwrap(), 2, "{n}");
    let row = columns(
        &b,
        "observed, active, compacted, tool_calls, reasoning_content, timestamp",
        2,
    );
    assert_eq!(
        row[..5],
        [json!(0), json!(1), json!(0), Value::Null, Value::Null],
        "{n}"
    );
    let at = real(&row[5]);
    assert!(at >= before - 0.001 && at < before + 60.0, "{n}: now, {at}");

    b.create_session(&NewSession::new("t", "cli")).unwrap();
    b.append_message(&NewMessage {
        reasoning_details: Some(json!([{"t": "é"}])),
        display_metadata: Some(json!({"a": 1})),
        platform_message_id: Some("pm".to_owned()),
        observed: true,
        token_count: Some(3),
        timestamp: Some(12.25),
        ..NewMessage::new("t", "assistant").content("x")
    })
    .unwrap();
    let got = b.get_messages("t").unwrap().remove(0);
    let read = (
        got.reasoning_details.as_deref(),
        got.display_metadata.as_deref(),
        got.platform_message_id.as_deref(),
        got.observed,
        got.token_count,
        got.timestamp,
    );
    let want = (
        Some(r#"[{"t": "\u00e9"}]"#),
        Some(r#"{"a": 1}"#),
        Some("pm"),
        Some(1),
        Some(3),
        12.25,
    );
    assert_eq!(read, want, "{n}");
}

/// An ended session still takes messages, and an append changes nothing
/// of its row but the two counters.
pub fn an_append_to_an_ended_session_changes_only_its_counters_alike(backend: &dyn Backend) {
    let b = backend.open();
    b.create_session(&NewSession::new("s", "cli")).unwrap();
    b.end_session("s", "user_exit").unwrap();
    let mut expected = b.get_session("s").unwrap().unwrap();
    let message = NewMessage::new("s", "assistant").tool_calls(json!([{"id": "a"}]));
    b.append_message(&message).unwrap();
    (expected.message_count, expected.tool_call_count) = (Some(1), Some(1));
    assert_eq!(
        b.get_session("s").unwrap().unwrap(),
        expected,
        "{}",
        b.name()
    );
}

/// Content of every kind a writer gives reads back as it was given (an
/// integer as its text), `tool_calls` given as a string as its parsed
/// value; the row's own fields; nothing for an unknown session.
pub fn content_of_every_kind_reads_back_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    b.create_session(&NewSession::new("s", "cli")).unwrap();
    let structured = json!([{"type": "text", "text": "look"}, {"type": "image_url"}]);
    let given: [(&str, Option<Content>, Option<Value>); 6] = [
        ("user", Some("plain".into()), None),
        ("user", Some(Content::Structured(structured.clone())), None),
        ("tool", Some(Content::Bytes(vec![0, 1, 255])), None),
        ("user", Some(Content::Integer(42)), None),
        ("assistant", None, Some(json!(r#"[{"id":"c9","n":1e2}]"#))),
        ("user", Some("é😀".into()), None),
    ];
    for (role, content, calls) in &given {
        let mut message = NewMessage::new("s", *role);
        (message.content, message.tool_calls) = (content.clone(), calls.clone());
        b.append_message(&message).unwrap();
    }
    let messages = b.get_messages("s").unwrap();
    let got: Vec<_> = messages
        .iter()
        .map(|m| (m.id, m.content.clone(), m.tool_calls.clone()))
        .collect();
    let text = |t: &str| Some(Content::Text(t.to_owned()));
    let expected = vec![
        (1, text("plain"), None),
        (2, Some(Content::Structured(structured)), None),
        (3, Some(Content::Bytes(vec![0, 1, 255])), None),
        (4, text("42"), None),
        (5, None, Some(json!([{"id": "c9", "n": 100.0}]))),
        (6, text("é😀"), None),
    ];
    assert_eq!(got, expected, "{n}");
    let first = &messages[0];
    let fields = (first.session_id.as_str(), first.role.as_str(), first.active);
    assert_eq!(fields, ("s", "user", 1), "{n}");
    assert_eq!((first.compacted, first.observed), (0, Some(0)), "{n}");
    assert!(first.extra.is_empty(), "{n}");
    assert!(b.get_messages("unknown").unwrap().is_empty(), "{n}");
}
