//! Which keys an entry has: falsy values, invalid JSON, role-only fields.

use super::*;

#[test]
fn falsy_values_omit_their_keys() {
    let stored = Message {
        api_content: Some(String::new()),
        display_kind: Some(String::new()),
        display_metadata: Some(String::new()),
        timestamp: 0.0,
        tool_call_id: Some(String::new()),
        tool_name: Some(String::new()),
        effect_disposition: Some(String::new()),
        tool_calls: None,
        platform_message_id: Some(String::new()),
        observed: Some(0),
        finish_reason: Some(String::new()),
        reasoning: Some(String::new()),
        reasoning_content: None,
        reasoning_details: Some(String::new()),
        codex_reasoning_items: Some(String::new()),
        codex_message_items: Some(String::new()),
        ..row(1, "s", "assistant", "x")
    };
    let entries = build_conversation(&[stored], false);
    assert_eq!(to_json(&entries), [r#"{"role":"assistant","content":"x"}"#]);
}

#[test]
fn display_metadata_invalid_or_null_is_omitted() {
    for raw in ["not json", "{", "null"] {
        let stored = Message {
            display_metadata: Some(raw.into()),
            ..row(1, "s", "user", "x")
        };
        let entries = build_conversation(&[stored], false);
        assert_eq!(entries[0].display_metadata, None, "{raw}");
    }
}

#[test]
fn invalid_reasoning_json_becomes_null() {
    let stored = Message {
        reasoning_details: Some("not json".into()),
        codex_reasoning_items: Some("[1,".into()),
        codex_message_items: Some(r#"{"ok": true}"#.into()),
        ..row(1, "s", "assistant", "x")
    };
    let entries = build_conversation(&[stored], false);
    assert_eq!(
        to_json(&entries),
        [concat!(
            r#"{"role":"assistant","content":"x","reasoning_details":null,"#,
            r#""codex_reasoning_items":null,"codex_message_items":{"ok":true}}"#
        )]
    );
}

#[test]
fn assistant_only_fields_are_dropped_on_other_roles() {
    let stored = Message {
        finish_reason: Some("stop".into()),
        reasoning: Some("R".into()),
        reasoning_content: Some("RC".into()),
        reasoning_details: Some("[1]".into()),
        codex_reasoning_items: Some("[2]".into()),
        codex_message_items: Some("[3]".into()),
        tool_call_id: Some("c".into()),
        ..row(1, "s", "tool", "out")
    };
    let entries = build_conversation(&[stored], false);
    assert_eq!(
        to_json(&entries),
        [r#"{"role":"tool","content":"out","tool_call_id":"c"}"#]
    );
}

#[test]
fn observed_is_true_for_any_nonzero_flag() {
    for (flag, expected) in [
        (None, None),
        (Some(0), None),
        (Some(1), Some(true)),
        (Some(-3), Some(true)),
    ] {
        let stored = Message {
            observed: flag,
            ..row(1, "s", "user", "x")
        };
        assert_eq!(
            build_conversation(&[stored], false)[0].observed,
            expected,
            "{flag:?}"
        );
    }
}

#[test]
fn stored_tool_calls_are_returned_as_parsed() {
    // The original tests the stored text, then parses it: a stored `[]` or
    // invalid JSON (which `get_messages` turns into `[]`) is returned as `[]`.
    for value in [json!([]), json!({"id": "solo"}), json!([{"id": "c"}])] {
        let stored = Message {
            tool_calls: Some(value.clone()),
            ..row(1, "s", "assistant", "x")
        };
        assert_eq!(
            build_conversation(&[stored], false)[0].tool_calls,
            Some(value)
        );
    }
    // A stored '' is not parsed by `get_messages` and is falsy.
    let stored = Message {
        tool_calls: Some(json!("")),
        ..row(1, "s", "assistant", "x")
    };
    assert_eq!(build_conversation(&[stored], false)[0].tool_calls, None);
}

#[test]
fn api_content_is_verbatim() {
    let stored = Message {
        api_content: Some("  <memory-context>m</memory-context> wire \n".into()),
        ..row(1, "s", "user", "x")
    };
    assert_eq!(
        build_conversation(&[stored], false)[0]
            .api_content
            .as_deref(),
        Some("  <memory-context>m</memory-context> wire \n")
    );
}
