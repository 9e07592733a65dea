//! What a replay of the original's traces compares: `serde_json::to_value`
//! of each result against the value the original returned (keys, and
//! integer against float). The expected values are the original's answers
//! to the same calls at the same clock.

use hermes_state::prelude::Exchange;
use hermes_state::serde_json::{self, Value, json};
use hermes_state::{
    AutoPruneOptions, Content, FixedClock, NewMessage, NewSession, SessionDb, StoreOptions,
};
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Coordination;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

/// A message row as the original's `get_messages` returns it, every column
/// at its default, then `fields` over it.
fn message(id: i64, role: &str, content: Value, timestamp: f64, fields: Value) -> Value {
    let mut row = json!({
        "id": id, "session_id": "s1", "role": role, "content": content,
        "tool_call_id": null, "tool_calls": null, "tool_name": null,
        "effect_disposition": null, "timestamp": timestamp, "token_count": null,
        "finish_reason": null, "reasoning": null, "reasoning_content": null,
        "reasoning_details": null, "codex_reasoning_items": null,
        "codex_message_items": null, "platform_message_id": null, "observed": 0,
        "active": 1, "compacted": 0, "api_content": null, "display_kind": null,
        "display_metadata": null,
    });
    if let (Value::Object(row), Value::Object(fields)) = (&mut row, fields) {
        row.extend(fields);
    }
    row
}

/// The session row of `s1` as the original's `get_session` returns it
/// before the rewind.
fn session_row() -> Value {
    serde_json::from_str(
        r#"{
        "id": "s1", "source": "cli", "user_id": null, "model": "m",
        "model_config": "{\"a\": 1}", "system_prompt": null, "parent_session_id": null,
        "started_at": 1000.25, "ended_at": null, "end_reason": null, "message_count": 5,
        "tool_call_count": 2, "input_tokens": 0, "output_tokens": 0,
        "cache_read_tokens": 0, "cache_write_tokens": 0, "reasoning_tokens": 0,
        "billing_provider": null, "billing_base_url": null, "billing_mode": null,
        "estimated_cost_usd": null, "actual_cost_usd": null, "cost_status": null,
        "cost_source": null, "pricing_version": null, "title": null, "api_call_count": 0,
        "handoff_state": "pending", "handoff_platform": "telegram", "handoff_error": null,
        "compression_failure_cooldown_until": 2000.0, "compression_failure_error": "err",
        "compression_fallback_streak": 0, "compression_ineffective_count": 0,
        "profile_name": null, "rewind_count": 0, "archived": 0, "pinned": 0,
        "session_key": null, "chat_id": null, "chat_type": null, "thread_id": null,
        "display_name": null, "origin_json": null, "cwd": null, "git_branch": null,
        "git_repo_root": null, "expiry_finalized": 0
    }"#,
    )
    .expect("the original's row")
}

fn value<T: serde::Serialize>(result: hermes_state::Result<T>) -> Value {
    serde_json::to_value(result.expect("the call succeeds")).expect("serialises")
}

#[test]
fn results_serialise_to_the_originals_values() {
    let dir = tempfile::tempdir().unwrap();
    let clock = FixedClock::new(1000.0);
    let options = StoreOptions {
        clock: Some(clock.clone()),
        ..StoreOptions::default()
    };
    let s = SessionDb::open_with(dir.path().join("state.db"), &options).unwrap();
    clock.set(1000.25);
    s.create_session(
        &NewSession::new("s1", "cli")
            .model("m")
            .model_config(json!({"a": 1})),
    )
    .unwrap();
    let calls = json!([{"id": "c1", "type": "function",
                        "function": {"name": "f", "arguments": "{}"}}]);
    let multimodal = json!([{"type": "text", "text": "look"},
                            {"type": "image_url", "image_url": {"url": "data:x"}}]);
    let appended = [
        (
            1001.5,
            NewMessage::new("s1", "user").content("hello  world"),
        ),
        (
            1002.5,
            NewMessage::new("s1", "assistant")
                .content("")
                .tool_calls(calls.clone()),
        ),
        (
            1003.5,
            NewMessage::new("s1", "tool")
                .content("out")
                .tool_result("f", "c1"),
        ),
        (
            1004.5,
            NewMessage::new("s1", "user")
                .content("with calls")
                .tool_calls(json!([{"id": "u1"}])),
        ),
        (
            1005.5,
            NewMessage::new("s1", "user").content(Content::Structured(multimodal.clone())),
        ),
    ];
    for (at, message) in appended {
        clock.set(at);
        s.append_message(&message).unwrap();
    }
    clock.set(1006.0);
    s.record_compression_failure_cooldown("s1", 2000.0, Some("err"))
        .unwrap();
    clock.set(1500.25);
    s.request_handoff("s1", "telegram").unwrap();
    s.save_gateway_routing_entry("k", "{\"a\": 1}", "").unwrap();

    let messages = vec![
        message(1, "user", json!("hello  world"), 1001.5, json!({})),
        message(
            2,
            "assistant",
            json!(""),
            1002.5,
            json!({"tool_calls": calls}),
        ),
        message(
            3,
            "tool",
            json!("out"),
            1003.5,
            json!({"tool_name": "f", "tool_call_id": "c1"}),
        ),
        message(
            4,
            "user",
            json!("with calls"),
            1004.5,
            json!({"tool_calls": [{"id": "u1"}]}),
        ),
        message(5, "user", multimodal, 1005.5, json!({})),
    ];
    let mut exported = session_row();
    exported["messages"] = Value::Array(messages.clone());
    let mut exported_all = exported.clone();
    exported_all["last_active"] = json!(1005.5);

    // (operation, our value, the original's value)
    let cases: Vec<(&str, Value, Value)> = vec![
        (
            "get_compression_failure_cooldown",
            value(s.get_compression_failure_cooldown("s1")),
            json!({"cooldown_until": 2000.0, "remaining_seconds": 499.75, "error": "err"}),
        ),
        (
            "get_handoff_state",
            value(s.get_handoff_state("s1")),
            json!({"state": "pending", "platform": "telegram", "error": null}),
        ),
        (
            "get_handoff_state (unknown)",
            value(s.get_handoff_state("nope")),
            json!(null),
        ),
        (
            "get_messages_around",
            value(s.get_messages_around("s1", 3, 1)),
            json!({"window": messages[1..4], "messages_before": 1, "messages_after": 1}),
        ),
        (
            "list_recent_user_messages",
            value(s.list_recent_user_messages("s1", 20, false)),
            json!([
                {"id": 5, "timestamp": 1005.5, "preview": "look"},
                {"id": 4, "timestamp": 1004.5, "preview": "with calls"},
                {"id": 1, "timestamp": 1001.5, "preview": "hello world"},
            ]),
        ),
        (
            "load_gateway_routing_entries",
            value(s.load_gateway_routing_entries("")),
            json!({"k": "{\"a\": 1}"}),
        ),
        (
            "maybe_auto_prune_and_vacuum",
            serde_json::to_value(s.maybe_auto_prune_and_vacuum(&AutoPruneOptions::default()))
                .unwrap(),
            json!({"skipped": false, "pruned": 0, "vacuumed": false}),
        ),
        ("export_session", value(s.export_session("s1")), exported),
        (
            "export_session (unknown)",
            value(s.export_session("nope")),
            json!(null),
        ),
        (
            "export_all",
            value(s.export_all(None)),
            json!([exported_all]),
        ),
        ("get_messages", value(s.get_messages("s1")), json!(messages)),
    ];
    for (what, ours, original) in cases {
        assert_eq!(ours, original, "{what}");
    }

    // The rewind target's tool_calls are the stored text, not parsed.
    clock.set(1600.0);
    let mut target = messages[3].clone();
    target["tool_calls"] = json!("[{\"id\": \"u1\"}]");
    assert_eq!(
        value(s.rewind_to_message("s1", 4)),
        json!({"rewound_count": 2, "target_message": target, "new_head_id": 3})
    );
    let mut session = session_row();
    session["rewind_count"] = json!(1);
    assert_eq!(value(s.get_session("s1")), session);
}

#[test]
fn previews_and_rewind_targets_of_unusual_stored_values_are_the_originals() {
    let dir = tempfile::tempdir().unwrap();
    let s = SessionDb::open(dir.path().join("state.db")).unwrap();
    s.create_session(&NewSession::new("s2", "cli")).unwrap();
    // (stored content, stored tool_calls, the original's preview)
    let rows: [(Option<&str>, &str, &str); 6] = [
        (Some("a"), "", "a"),
        (Some("\u{0}json:{bad"), "not json", "\u{0}json:{bad"),
        (Some("\u{0}json:\"a  str\""), "{\"a\": 1}", "a str"),
        (None, "null", ""),
        (Some("\u{0}json:[1, 2.5]"), "0", "[multimodal content]"),
        (Some("x\u{1c}\u{1f}y \u{85} z"), "[]", "x y z"),
    ];
    s.write_raw(|conn| {
        for (i, (content, tool_calls, _)) in rows.iter().enumerate() {
            conn.execute(
                "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) \
                 VALUES ('s2', 'user', ?1, ?2, ?3)",
                hermes_state::rusqlite::params![content, tool_calls, 10.0 + i as f64],
            )
            .unwrap();
        }
        Ok(())
    })
    .unwrap();
    let previews: Vec<String> = s
        .list_recent_user_messages("s2", 20, false)
        .unwrap()
        .into_iter()
        .rev()
        .map(|m| m.preview)
        .collect();
    let want: Vec<&str> = rows.iter().map(|(_, _, preview)| *preview).collect();
    assert_eq!(previews, want);
    for (id, (_, tool_calls, _)) in (1..).zip(rows) {
        let target = s.rewind_to_message("s2", id).unwrap().target_message;
        assert_eq!(target.tool_calls, Some(json!(tool_calls)), "{id}");
    }
}
