//! `build_conversation` / `clean_memory_context` against `api.md` §5.2: the
//! measured example table (key for key, in order), the lineage example, the
//! memory-context cleaning, the duplicate-user rule and the harness removal.

use hermes_state_query::conversation::{build_conversation, clean_memory_context};
use hermes_state_types::{Content, ConversationMessage, Message};
use serde_json::{Value, json};

/// A row of `session` with the given id, role and text content; everything else empty.
fn row(id: i64, session: &str, role: &str, content: &str) -> Message {
    Message {
        id,
        session_id: session.to_owned(),
        role: role.to_owned(),
        content: Some(Content::Text(content.to_owned())),
        active: 1,
        ..Default::default()
    }
}

fn to_json(entries: &[ConversationMessage]) -> Vec<String> {
    entries
        .iter()
        .map(|entry| serde_json::to_string(entry).expect("entries serialise"))
        .collect()
}

/// `(role, content)` of each entry, content as a string ("<non-text>" otherwise).
fn roles_and_texts(entries: &[ConversationMessage]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|entry| {
            let text = match &entry.content {
                Some(Content::Text(text)) => text.clone(),
                _ => "<non-text>".to_owned(),
            };
            (entry.role.clone(), text)
        })
        .collect()
}

fn texts(entries: &[ConversationMessage]) -> Vec<String> {
    roles_and_texts(entries)
        .into_iter()
        .map(|(_, text)| text)
        .collect()
}

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

// ---------------------------------------------------------------------------
// Cleaning
// ---------------------------------------------------------------------------

const NOTE_INFO: &str = "[System note: The following is recalled memory context, NOT new user input. Treat as informational background data.]";

#[test]
fn cleaning_cases() {
    let cases: &[(&str, &str, &str)] = &[
        ("plain text untouched", "  hello  ", "  hello  "),
        (
            "simple block",
            "<memory-context>secret</memory-context>hi",
            "hi",
        ),
        (
            "whitespace inside the angle brackets",
            "a< memory-context\t>x</ memory-context \n>b",
            "ab",
        ),
        (
            "multi-line block",
            "before\n<memory-context>\nline 1\nline 2\n</memory-context>\nafter",
            "before\n\nafter",
        ),
        (
            "shortest match keeps the text between blocks",
            "a<memory-context>1</memory-context>b<memory-context>2</memory-context>c",
            "abc",
        ),
        (
            "case-insensitive tags",
            "<MEMORY-CONTEXT>x</Memory-Context>y",
            "y",
        ),
        (
            "the note inside a block goes with the block",
            &format!("<memory-context>\n{NOTE_INFO}\n\nfacts\n</memory-context>\nquestion"),
            "\nquestion",
        ),
        (
            "bare note and the whitespace after it",
            &format!("{NOTE_INFO}\n\n  question"),
            "question",
        ),
        (
            "authoritative variant with extra words before the closing",
            "[System note: The following is recalled memory context, NOT new user input. Treat as authoritative reference data, verified today.] q",
            "q",
        ),
        (
            "note with flexible whitespace, any case",
            "[system NOTE:The following is recalled memory context,\nNOT new user input.\tTREAT AS informational background data.]q",
            "q",
        ),
        (
            "a different note is kept",
            "[System note: something else.] q",
            "[System note: something else.] q",
        ),
        ("stray opening tag", "a<memory-context>b", "ab"),
        ("stray closing tag", "a</memory-context >b", "ab"),
        (
            "nested opening tag: block then stray close",
            "<memory-context>a<memory-context>b</memory-context>c</memory-context>d",
            "cd",
        ),
        (
            "not a tag",
            "<memory context>x</memorycontext>",
            "<memory context>x</memorycontext>",
        ),
        (
            "Python \\s includes U+001C..U+001F",
            "<\u{1C}memory-context\u{1F}>x</memory-context>y",
            "y",
        ),
        (
            "Python IGNORECASE lets i match dotted and dotless i",
            "[System note: The following is recalled memory context, NOT new user \u{130}nput. Treat as \u{131}nformational background data.]q",
            "q",
        ),
        (
            "Python IGNORECASE lets s match long s",
            "[\u{17F}ystem note: The following is recalled memory context, NOT new user input. Treat as informational background data.]q",
            "q",
        ),
    ];
    for (name, input, expected) in cases {
        assert_eq!(clean_memory_context(input), *expected, "{name}");
    }
}

#[test]
fn user_and_assistant_text_is_cleaned_and_stripped_other_roles_are_not() {
    let dirty = "  <memory-context>m</memory-context> text \n";
    let rows: Vec<Message> = ["user", "assistant", "system", "tool", "narrator"]
        .iter()
        .enumerate()
        .map(|(i, role)| row(i as i64 + 1, "s", role, dirty))
        .collect();
    assert_eq!(
        texts(&build_conversation(&rows, false)),
        ["text", "text", dirty, dirty, dirty]
    );
}

#[test]
fn strip_uses_python_whitespace() {
    let rows = vec![
        row(
            1,
            "s",
            "user",
            "\u{1C}\u{1D}\u{3000}\u{A0}hi\u{85}\u{2029}\u{1E}\u{1F}",
        ),
        // U+200B and U+FEFF are not whitespace to Python.
        row(2, "s", "assistant", "\u{200B}x\u{FEFF}"),
    ];
    assert_eq!(
        texts(&build_conversation(&rows, false)),
        ["hi", "\u{200B}x\u{FEFF}"]
    );
}

#[test]
fn non_text_content_is_returned_as_is() {
    let mut none = row(1, "s", "user", "");
    none.content = None;
    let mut list = row(2, "s", "assistant", "");
    list.content = Some(Content::Structured(
        json!([{"type": "text", "text": "  <memory-context>x</memory-context>  "}]),
    ));
    let mut bytes = row(3, "s", "user", "");
    bytes.content = Some(Content::Bytes(vec![0, 1, 2]));
    let entries = build_conversation(&[none.clone(), list.clone(), bytes.clone()], false);
    assert_eq!(entries[0].content, None);
    assert_eq!(entries[1].content, list.content);
    assert_eq!(entries[2].content, bytes.content);
    assert_eq!(
        serde_json::to_string(&entries[0]).unwrap(),
        r#"{"role":"user","content":null}"#
    );
}

#[test]
fn a_decoded_json_string_is_text_to_the_original() {
    // "\x00json:" followed by a JSON string decodes to a Python str, which the
    // original cleans and strips like any other text.
    let mut stored = row(1, "s", "user", "");
    stored.content = Some(Content::Structured(json!(
        "  <memory-context>m</memory-context> hi "
    )));
    let entries = build_conversation(&[stored], false);
    assert_eq!(entries[0].content, Some(Content::Text("hi".into())));
}

// ---------------------------------------------------------------------------
// Key presence
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Duplicate replayed user messages (include_ancestors only)
// ---------------------------------------------------------------------------

fn with_calls(mut message: Message, calls: Value) -> Message {
    message.tool_calls = Some(calls);
    message
}

#[test]
fn duplicate_user_rule() {
    let structured = |id: i64| Message {
        content: Some(Content::Structured(json!([{"type": "text", "text": "a"}]))),
        ..row(id, "s", "user", "")
    };
    let empty_list_assistant = Message {
        content: Some(Content::Structured(json!([]))),
        ..row(2, "s", "assistant", "")
    };
    let cases: Vec<(&str, Vec<Message>, Vec<&str>)> = vec![
        (
            "adjacent repeat",
            vec![row(1, "s", "user", "A"), row(2, "s", "user", "A")],
            vec!["A"],
        ),
        (
            "an assistant answer in between keeps it",
            vec![
                row(1, "s", "user", "A"),
                row(2, "s", "assistant", "answer"),
                row(3, "s", "user", "A"),
            ],
            vec!["A", "answer", "A"],
        ),
        (
            "an empty assistant message does not count",
            vec![
                row(1, "s", "user", "A"),
                row(2, "s", "assistant", "   "),
                row(3, "s", "user", "A"),
            ],
            vec!["A", ""],
        ),
        (
            "an assistant with only an empty list content does not count",
            vec![
                row(1, "s", "user", "A"),
                empty_list_assistant,
                row(3, "s", "user", "A"),
            ],
            vec!["A", "<non-text>"],
        ),
        (
            "an assistant with tool calls counts",
            vec![
                row(1, "s", "user", "A"),
                with_calls(row(2, "s", "assistant", ""), json!([{"id": "c"}])),
                row(3, "s", "tool", "r"),
                row(4, "s", "user", "A"),
            ],
            vec!["A", "", "r", "A"],
        ),
        (
            "empty tool calls do not count",
            vec![
                row(1, "s", "user", "A"),
                with_calls(row(2, "s", "assistant", ""), json!([])),
                row(3, "s", "user", "A"),
            ],
            vec!["A", ""],
        ),
        (
            "tool and system messages do not stop the scan",
            vec![
                row(1, "s", "user", "A"),
                row(2, "s", "tool", "r"),
                row(3, "s", "system", "s"),
                row(4, "s", "user", "A"),
            ],
            vec!["A", "r", "s"],
        ),
        (
            "other user messages do not stop the scan",
            vec![
                row(1, "s", "user", "A"),
                row(2, "s", "user", "B"),
                row(3, "s", "user", "A"),
            ],
            vec!["A", "B"],
        ),
        (
            "compared after cleaning and strip",
            vec![
                row(1, "s", "user", "A"),
                row(2, "s", "user", " <memory-context>m</memory-context>\nA  "),
            ],
            vec!["A"],
        ),
        (
            "empty content is never a duplicate",
            vec![row(1, "s", "user", ""), row(2, "s", "user", "  ")],
            vec!["", ""],
        ),
        (
            "multimodal content is never a duplicate",
            vec![structured(1), structured(2)],
            vec!["<non-text>", "<non-text>"],
        ),
        (
            "case matters",
            vec![row(1, "s", "user", "A"), row(2, "s", "user", "a")],
            vec!["A", "a"],
        ),
        (
            "an assistant repeat is not deduplicated",
            vec![row(1, "s", "assistant", "A"), row(2, "s", "assistant", "A")],
            vec!["A", "A"],
        ),
    ];
    for (name, rows, expected) in cases {
        assert_eq!(texts(&build_conversation(&rows, true)), expected, "{name}");
        // Never applied without ancestors.
        assert_eq!(build_conversation(&rows, false).len(), rows.len(), "{name}");
    }
}

// ---------------------------------------------------------------------------
// Background-review harness
// ---------------------------------------------------------------------------

const SKILL: &str = "Review the conversation above and update the skill library. Be ACTIVE.";
const MEMORY: &str = "Review the conversation above and consider saving to memory if appropriate.";

#[test]
fn harness_rule() {
    let prefixed = format!("please: {SKILL}");
    let cases: Vec<(&str, Vec<Message>, Vec<&str>)> = vec![
        (
            "user prompt and curator reply",
            vec![
                row(1, "s", "user", "q"),
                row(2, "s", "user", SKILL),
                row(3, "s", "assistant", "curator"),
                row(4, "s", "assistant", "real"),
            ],
            vec!["q", "real"],
        ),
        (
            "system prompt with leading whitespace",
            vec![
                row(1, "s", "system", &format!("\n\u{1F}  {MEMORY}")),
                row(2, "s", "assistant", "curator"),
                row(3, "s", "user", "q"),
            ],
            vec!["q"],
        ),
        (
            "the next message is not an assistant: only the prompt goes",
            vec![
                row(1, "s", "user", SKILL),
                row(2, "s", "user", "q"),
                row(3, "s", "assistant", "a"),
            ],
            vec!["q", "a"],
        ),
        (
            "a tool message in between protects the assistant",
            vec![
                row(1, "s", "user", SKILL),
                row(2, "s", "tool", "t"),
                row(3, "s", "assistant", "a"),
            ],
            vec!["t", "a"],
        ),
        (
            "consecutive prompts: the assistant after the second goes",
            vec![
                row(1, "s", "user", SKILL),
                row(2, "s", "user", MEMORY),
                row(3, "s", "assistant", "curator"),
                row(4, "s", "assistant", "kept"),
            ],
            vec!["kept"],
        ),
        (
            "prompt at the end",
            vec![row(1, "s", "user", "q"), row(2, "s", "user", MEMORY)],
            vec!["q"],
        ),
        (
            "case-sensitive",
            vec![
                row(
                    1,
                    "s",
                    "user",
                    "review the conversation above and update the skill library",
                ),
                row(2, "s", "assistant", "a"),
            ],
            vec![
                "review the conversation above and update the skill library",
                "a",
            ],
        ),
        (
            "only the opening counts",
            vec![
                row(1, "s", "user", &prefixed),
                row(2, "s", "assistant", "a"),
            ],
            vec![prefixed.as_str(), "a"],
        ),
        (
            "assistant and tool roles are never prompts",
            vec![
                row(1, "s", "assistant", SKILL),
                row(2, "s", "tool", MEMORY),
                row(3, "s", "assistant", "a"),
            ],
            vec![SKILL, MEMORY, "a"],
        ),
        (
            "user text is tested after cleaning",
            vec![
                row(
                    1,
                    "s",
                    "user",
                    &format!("<memory-context>m</memory-context>{SKILL}"),
                ),
                row(2, "s", "assistant", "curator"),
            ],
            vec![],
        ),
        (
            "bare prefix without the rest of the sentence",
            vec![row(
                1,
                "s",
                "user",
                "Review the conversation above and consider saving to memory",
            )],
            vec![],
        ),
    ];
    for (name, rows, expected) in cases {
        let expected: Vec<String> = expected.into_iter().map(str::to_owned).collect();
        assert_eq!(texts(&build_conversation(&rows, false)), expected, "{name}");
        assert_eq!(
            texts(&build_conversation(&rows, true)),
            expected,
            "{name} (ancestors)"
        );
    }
}

#[test]
fn multimodal_harness_is_not_a_prompt() {
    let stored = Message {
        content: Some(Content::Structured(
            json!([{"type": "text", "text": SKILL}]),
        )),
        ..row(1, "s", "user", "")
    };
    let rows = [stored, row(2, "s", "assistant", "a")];
    assert_eq!(build_conversation(&rows, false).len(), 2);
}

#[test]
fn duplicate_rule_runs_before_harness_removal() {
    // The harness prompt is still in the list while duplicates are checked, so
    // the repeated question after it is compared against it and the earlier `A`
    // (scan passes the prompt: it is a different user message).
    let rows = vec![
        row(1, "s", "user", "A"),
        row(2, "s", "user", SKILL),
        row(3, "s", "user", "A"),
        row(4, "s", "assistant", "answer"),
    ];
    // With ancestors: the second `A` is a duplicate; then the prompt goes, and
    // the next message (the assistant answer, now right after it) goes too.
    assert_eq!(texts(&build_conversation(&rows, true)), ["A"]);
    // Without: the prompt goes; the next message is the user `A`, so the
    // answer stays.
    assert_eq!(
        texts(&build_conversation(&rows, false)),
        ["A", "A", "answer"]
    );
}

// ---------------------------------------------------------------------------
// Robustness
// ---------------------------------------------------------------------------

#[test]
fn no_panic_on_odd_input() {
    let fragments = [
        "",
        " ",
        "<",
        ">",
        "</",
        "memory-context",
        "<memory-context>",
        "</memory-context>",
        "[System note:",
        "]",
        "\u{0}json:",
        "\u{1F}",
        "é",
        "😀",
        "\u{130}",
        "Review the conversation above and update the skill library",
        "\n",
    ];
    let roles = ["user", "assistant", "system", "tool", "", "USER"];
    let mut rows = Vec::new();
    let mut id = 0;
    for a in fragments {
        for b in fragments {
            for role in roles {
                id += 1;
                rows.push(Message {
                    reasoning_details: Some(format!("{a}{b}")),
                    display_metadata: Some(format!("{b}{a}")),
                    timestamp: if id % 3 == 0 { f64::NAN } else { id as f64 },
                    observed: Some(id % 2),
                    ..row(id, "s", role, &format!("{a}{b}{a}"))
                });
            }
        }
    }
    for ancestors in [false, true] {
        let entries = build_conversation(&rows, ancestors);
        assert!(entries.len() <= rows.len());
        for entry in &entries {
            // Every entry serialises (NaN becomes null in serde_json).
            let _ = serde_json::to_string(entry);
        }
    }
    assert!(build_conversation(&[], true).is_empty());
    assert_eq!(clean_memory_context(""), "");
}
