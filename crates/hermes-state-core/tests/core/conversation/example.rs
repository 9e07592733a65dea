//! The measured example table (key for key, in order) and the lineage example.

use super::*;

const TOOL_CALLS: &str = r#"[{"id":"call_1","type":"function","function":{"name":"terminal","arguments":"{\"command\": \"ls\"}"}}]"#;

/// The six stored rows of the measured example (api.md §5.2) with the
/// conversation entry the original returned for each, as compact JSON.
fn example_table() -> Vec<(Message, String)> {
    let system = Message {
        timestamp: 100.0,
        finish_reason: Some("x".into()),
        ..row(1, "s", "system", "  sys prompt  ")
    };
    let user = Message {
        timestamp: 101.0,
        platform_message_id: Some("pm-1".into()),
        observed: Some(1),
        api_content: Some("  WIRE  ".into()),
        display_kind: Some("steer".into()),
        display_metadata: Some(r#"{"a": 1}"#.into()),
        ..row(
            2,
            "s",
            "user",
            "  <memory-context>secret</memory-context> hi there  ",
        )
    };
    let tool_calls: Value = serde_json::from_str(TOOL_CALLS).expect("valid");
    let assistant_calls = Message {
        timestamp: 102.0,
        tool_calls: Some(tool_calls),
        finish_reason: Some("tool_calls".into()),
        reasoning: Some("R".into()),
        reasoning_content: Some(String::new()),
        reasoning_details: Some(r#"[{"t": 1}]"#.into()),
        codex_reasoning_items: Some(r#"[{"i": 1}]"#.into()),
        codex_message_items: Some(r#"[{"m": 1}]"#.into()),
        ..row(3, "s", "assistant", "")
    };
    let tool = Message {
        timestamp: 103.0,
        tool_name: Some("terminal".into()),
        tool_call_id: Some("call_1".into()),
        effect_disposition: Some("applied".into()),
        finish_reason: Some("stop".into()),
        ..row(4, "s", "tool", "  out  ")
    };
    let assistant_done = Message {
        timestamp: 99.0,
        finish_reason: Some("stop".into()),
        reasoning: Some(String::new()),
        reasoning_content: None,
        ..row(5, "s", "assistant", "done")
    };
    let multimodal = Message {
        content: Some(Content::Structured(
            json!([{"type": "text", "text": "img"}]),
        )),
        timestamp: 0.0,
        ..row(6, "s", "user", "")
    };
    vec![
        (
            system,
            r#"{"role":"system","content":"  sys prompt  ","timestamp":100.0}"#.to_owned(),
        ),
        (
            user,
            concat!(
                r#"{"role":"user","content":"hi there","api_content":"  WIRE  ","display_kind":"steer","#,
                r#""display_metadata":{"a":1},"timestamp":101.0,"message_id":"pm-1","observed":true}"#
            )
            .to_owned(),
        ),
        (
            assistant_calls,
            format!(
                concat!(
                    r#"{{"role":"assistant","content":"","timestamp":102.0,"tool_calls":{},"#,
                    r#""finish_reason":"tool_calls","reasoning":"R","reasoning_content":"","#,
                    r#""reasoning_details":[{{"t":1}}],"codex_reasoning_items":[{{"i":1}}],"#,
                    r#""codex_message_items":[{{"m":1}}]}}"#
                ),
                TOOL_CALLS
            ),
        ),
        (
            tool,
            concat!(
                r#"{"role":"tool","content":"  out  ","timestamp":103.0,"tool_call_id":"call_1","#,
                r#""tool_name":"terminal","effect_disposition":"applied"}"#
            )
            .to_owned(),
        ),
        (
            assistant_done,
            r#"{"role":"assistant","content":"done","timestamp":99.0,"finish_reason":"stop"}"#.to_owned(),
        ),
        (
            multimodal,
            r#"{"role":"user","content":[{"type":"text","text":"img"}]}"#.to_owned(),
        ),
    ]
}

#[test]
fn measured_example_rows_one_by_one() {
    for (stored, expected) in example_table() {
        let entries = build_conversation(std::slice::from_ref(&stored), false);
        assert_eq!(to_json(&entries), vec![expected], "row {}", stored.id);
    }
}

#[test]
fn measured_example_as_one_conversation() {
    let (rows, expected): (Vec<Message>, Vec<String>) = example_table().into_iter().unzip();
    // Neither the duplicate rule nor the harness rule touches these rows.
    assert_eq!(to_json(&build_conversation(&rows, false)), expected);
    assert_eq!(to_json(&build_conversation(&rows, true)), expected);
}

#[test]
fn measured_example_serialises_key_for_key_in_order() {
    let (rows, _): (Vec<Message>, Vec<String>) = example_table().into_iter().unzip();
    let entries = build_conversation(&rows, false);
    let keys: Vec<Vec<String>> = entries
        .iter()
        .map(
            |entry| match serde_json::to_value(entry).expect("serialises") {
                Value::Object(map) => map.keys().cloned().collect(),
                other => panic!("not an object: {other}"),
            },
        )
        .collect();
    let expected: Vec<Vec<&str>> = vec![
        vec!["role", "content", "timestamp"],
        vec![
            "role",
            "content",
            "api_content",
            "display_kind",
            "display_metadata",
            "timestamp",
            "message_id",
            "observed",
        ],
        vec![
            "role",
            "content",
            "timestamp",
            "tool_calls",
            "finish_reason",
            "reasoning",
            "reasoning_content",
            "reasoning_details",
            "codex_reasoning_items",
            "codex_message_items",
        ],
        vec![
            "role",
            "content",
            "timestamp",
            "tool_call_id",
            "tool_name",
            "effect_disposition",
        ],
        vec!["role", "content", "timestamp", "finish_reason"],
        vec!["role", "content"],
    ];
    assert_eq!(keys, expected);
}

#[test]
fn measured_example_typed_values() {
    let (rows, _): (Vec<Message>, Vec<String>) = example_table().into_iter().unzip();
    let entries = build_conversation(&rows, false);
    assert_eq!(
        entries[1],
        ConversationMessage {
            role: "user".into(),
            content: Some(Content::Text("hi there".into())),
            api_content: Some("  WIRE  ".into()),
            display_kind: Some("steer".into()),
            display_metadata: Some(json!({"a": 1})),
            timestamp: Some(101.0),
            message_id: Some("pm-1".into()),
            observed: Some(true),
            ..Default::default()
        }
    );
    assert_eq!(entries[2].reasoning_content.as_deref(), Some(""));
    assert_eq!(entries[4].reasoning, None);
    assert_eq!(entries[4].reasoning_content, None);
}

/// The lineage example of api.md §5.2.
fn lineage_rows() -> (Vec<Message>, Vec<Message>) {
    let root = vec![
        row(1, "root", "user", "first question"),
        row(2, "root", "assistant", "first answer"),
        row(3, "root", "user", "repeat me"),
    ];
    let child = vec![
        row(4, "child", "user", "repeat me"),
        row(5, "child", "assistant", "second answer"),
        row(
            6,
            "child",
            "user",
            "Review the conversation above and update the skill library. Be ACTIVE.",
        ),
        row(7, "child", "assistant", "Nothing to save."),
        row(8, "child", "user", "after harness"),
    ];
    (root, child)
}

#[test]
fn lineage_child_alone() {
    let (_, child) = lineage_rows();
    assert_eq!(
        texts(&build_conversation(&child, false)),
        ["repeat me", "second answer", "after harness"]
    );
}

#[test]
fn lineage_with_ancestors() {
    let (root, child) = lineage_rows();
    let rows: Vec<Message> = root.into_iter().chain(child).collect();
    assert_eq!(
        roles_and_texts(&build_conversation(&rows, true)),
        [
            ("user", "first question"),
            ("assistant", "first answer"),
            ("user", "repeat me"),
            ("assistant", "second answer"),
            ("user", "after harness"),
        ]
        .map(|(role, text)| (role.to_owned(), text.to_owned()))
    );
    // Without the ancestor flag the replayed question is not deduplicated.
    assert_eq!(
        texts(&build_conversation(&rows, false)),
        [
            "first question",
            "first answer",
            "repeat me",
            "repeat me",
            "second answer",
            "after harness"
        ]
    );
}
