//! Duplicate replayed user messages (`include_ancestors` only).

use super::*;

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
