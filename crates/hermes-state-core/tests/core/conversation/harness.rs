//! The background-review harness removal.

use super::*;

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
