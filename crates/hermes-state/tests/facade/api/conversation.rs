//! `get_messages_as_conversation` (`api.md` §5.2): the measured example
//! table and the lineage example, compared as serialised dicts (key order
//! included).

use hermes_state::serde_json::{self, Value, json};
use hermes_state::{Content, NewMessage, NewSession};

use crate::common::Store;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

/// The conversation serialised with serde_json, as the original's list of dicts.
fn conversation_json(store: &Store, id: &str, include_ancestors: bool) -> String {
    let conversation = store
        .db
        .get_messages_as_conversation(id, include_ancestors)
        .expect("get_messages_as_conversation");
    serde_json::to_string(&conversation).expect("serialise")
}

/// Compares as text: `Value` maps compare without regard to key order.
#[track_caller]
fn assert_same_dicts(actual: &str, expected: &Value) {
    let expected = serde_json::to_string(expected).expect("serialise");
    assert_eq!(actual, expected);
}

#[test]
fn measured_example_table() {
    let store = Store::new();
    store.session("s");
    let one_call = json!([{"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": "{\"cmd\": \"ls\"}"}}]);
    let rows: Vec<(NewMessage, Value)> = vec![
        (
            NewMessage::new("s", "system")
                .content("  sys prompt  ")
                .timestamp(100.0)
                .finish_reason("x"),
            json!({"role": "system", "content": "  sys prompt  ", "timestamp": 100.0}),
        ),
        (
            NewMessage {
                platform_message_id: Some("pm-1".to_owned()),
                observed: true,
                api_content: Some("  WIRE  ".to_owned()),
                display_kind: Some("steer".to_owned()),
                display_metadata: Some(json!({"a": 1})),
                ..NewMessage::new("s", "user")
                    .content("  <memory-context>secret</memory-context> hi there  ")
                    .timestamp(101.0)
            },
            json!({"role": "user", "content": "hi there", "api_content": "  WIRE  ", "display_kind": "steer", "display_metadata": {"a": 1}, "timestamp": 101.0, "message_id": "pm-1", "observed": true}),
        ),
        (
            NewMessage {
                reasoning_content: Some(String::new()),
                reasoning_details: Some(json!([{"t": 1}])),
                codex_reasoning_items: Some(json!([{"i": 1}])),
                codex_message_items: Some(json!([{"m": 1}])),
                ..NewMessage::new("s", "assistant")
                    .content("")
                    .tool_calls(one_call.clone())
                    .finish_reason("tool_calls")
                    .reasoning("R")
                    .timestamp(102.0)
            },
            json!({"role": "assistant", "content": "", "timestamp": 102.0, "tool_calls": one_call, "finish_reason": "tool_calls", "reasoning": "R", "reasoning_content": "", "reasoning_details": [{"t": 1}], "codex_reasoning_items": [{"i": 1}], "codex_message_items": [{"m": 1}]}),
        ),
        (
            NewMessage {
                effect_disposition: Some("applied".to_owned()),
                ..NewMessage::new("s", "tool")
                    .content("  out  ")
                    .tool_result("terminal", "call_1")
                    .finish_reason("stop")
                    .timestamp(103.0)
            },
            json!({"role": "tool", "content": "  out  ", "timestamp": 103.0, "tool_call_id": "call_1", "tool_name": "terminal", "effect_disposition": "applied"}),
        ),
        (
            NewMessage::new("s", "assistant")
                .content("done")
                .finish_reason("stop")
                .reasoning("")
                .timestamp(99.0),
            json!({"role": "assistant", "content": "done", "timestamp": 99.0, "finish_reason": "stop"}),
        ),
        (
            NewMessage::new("s", "user")
                .content(Content::Structured(
                    json!([{"type": "text", "text": "img"}]),
                ))
                .timestamp(0.0),
            json!({"role": "user", "content": [{"type": "text", "text": "img"}]}),
        ),
    ];
    let mut expected = Vec::new();
    for (message, entry) in rows {
        store.db.append_message(&message).expect("append");
        expected.push(entry);
    }
    assert_same_dicts(
        &conversation_json(&store, "s", false),
        &Value::Array(expected),
    );
}

#[test]
fn null_content_and_inactive_rows() {
    let store = Store::new();
    store.session("s");
    store
        .db
        .append_message(&NewMessage::new("s", "assistant").timestamp(1.0))
        .expect("append");
    store
        .db
        .append_message(&NewMessage::new("s", "user").content("gone").timestamp(2.0))
        .expect("append");
    store.exec("UPDATE messages SET active = 0 WHERE id = 2", []);
    assert_same_dicts(
        &conversation_json(&store, "s", false),
        &json!([{"role": "assistant", "content": null, "timestamp": 1.0}]),
    );
    assert_same_dicts(&conversation_json(&store, "unknown", false), &json!([]));
}

#[test]
fn lineage_example_with_and_without_ancestors() {
    let store = Store::new();
    store.session("root");
    let messages = [
        ("root", "user", "first question"),
        ("root", "assistant", "first answer"),
        ("root", "user", "repeat me"),
        ("child", "user", "repeat me"),
        ("child", "assistant", "second answer"),
        (
            "child",
            "user",
            "Review the conversation above and update the skill library if needed.",
        ),
        ("child", "assistant", "curator reply"),
        ("child", "user", "after harness"),
    ];
    for (n, (session, role, content)) in messages.into_iter().enumerate() {
        if session == "child" && n == 3 {
            store.db.end_session("root", "compression").expect("end");
            store
                .db
                .create_session(&NewSession::new("child", "cli").parent_session_id("root"))
                .expect("child");
        }
        store
            .db
            .append_message(
                &NewMessage::new(session, role)
                    .content(content)
                    .timestamp(n as f64 + 1.0),
            )
            .expect("append");
    }
    let entry = |role: &str, content: &str, ts: f64| json!({"role": role, "content": content, "timestamp": ts});
    assert_same_dicts(
        &conversation_json(&store, "child", false),
        &json!([
            entry("user", "repeat me", 4.0),
            entry("assistant", "second answer", 5.0),
            entry("user", "after harness", 8.0),
        ]),
    );
    assert_same_dicts(
        &conversation_json(&store, "child", true),
        &json!([
            entry("user", "first question", 1.0),
            entry("assistant", "first answer", 2.0),
            entry("user", "repeat me", 3.0),
            entry("assistant", "second answer", 5.0),
            entry("user", "after harness", 8.0),
        ]),
    );
    // The root alone, with or without ancestors, is the same.
    assert_eq!(
        conversation_json(&store, "root", true),
        conversation_json(&store, "root", false)
    );
}
