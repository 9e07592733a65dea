//! The views a resume and a search hit show, beyond `api.md`:
//! `get_anchored_view` (its window filtered by role, bookends outside it),
//! `get_resume_conversations` (with the original's role-alternation
//! repair) and `get_ancestor_display_prefix`, through the seam.

use hermes_state_core::OriginalError;
use hermes_state_types::{ErrorKind, Message, NewMessage, NewSession};
use serde_json::{Value, json};

use super::Backend;
use crate::build::assistant;

fn append(
    b: &dyn hermes_state_core::SessionStore,
    session: &str,
    role: &str,
    content: Value,
) -> i64 {
    let mut message = NewMessage::new(session, role);
    message.content = Some(content.into());
    b.append_message(&message).unwrap()
}

/// Positions in `all` of the messages shown.
fn positions(messages: &[Message], all: &[i64]) -> Vec<usize> {
    let at = |m: &Message| all.iter().position(|id| *id == m.id).unwrap();
    messages.iter().map(at).collect()
}

/// A session of 12 messages, roles cycling user, assistant, tool (the
/// fifth with empty content, the eighth structured), all at one time;
/// (anchor, window, bookend, roles kept) → (window, before, after, start
/// bookend, end bookend), as positions.
pub fn the_anchored_view_filters_its_window_and_adds_bookends_outside_it_alike(
    backend: &dyn Backend,
) {
    let b = backend.open_at(1000.0);
    let s = &*b.store;
    let n = b.name();
    s.create_session(&NewSession::new("a", "cli")).unwrap();
    s.create_session(&NewSession::new("other", "cli")).unwrap();
    append(s, "other", "user", json!("elsewhere"));
    let all: Vec<i64> = (0..12)
        .map(|i| {
            let content = match i {
                4 => json!(""),
                7 => json!([{"type": "text", "text": "structured"}]),
                _ => json!(format!("m{i}")),
            };
            append(s, "a", ["user", "assistant", "tool"][i % 3], content)
        })
        .collect();
    let talk: &[&str] = &["user", "assistant"];
    type Case<'a> = (
        (usize, i64, i64, Option<&'a [&'a str]>),
        (Vec<usize>, usize, usize, Vec<usize>, Vec<usize>),
    );
    let cases: Vec<Case<'_>> = vec![
        // Tool rows leave the window; bookends skip empty and structured
        // content.
        (
            (6, 2, 3, Some(talk)),
            (vec![4, 6, 7], 2, 2, vec![0, 1, 3], vec![9, 10]),
        ),
        // The anchor stays whatever its role.
        ((5, 1, 0, Some(talk)), (vec![4, 5, 6], 1, 1, vec![], vec![])),
        ((5, 1, 2, Some(&[])), (vec![5], 1, 1, vec![], vec![])),
        (
            (5, 1, 2, None),
            (vec![4, 5, 6], 1, 1, vec![0, 1], vec![10, 11]),
        ),
        (
            (5, 2, 2, Some(&["tool"])),
            (vec![5], 2, 2, vec![2], vec![8, 11]),
        ),
        // A window at the head: no start bookend; negative sizes are 0.
        (
            (1, 3, 3, Some(talk)),
            (vec![0, 1, 3, 4], 1, 3, vec![], vec![6, 9, 10]),
        ),
        ((6, -4, -1, Some(talk)), (vec![6], 0, 0, vec![], vec![])),
    ];
    for ((anchor, window, bookend, roles), expected) in cases {
        let view = s
            .get_anchored_view("a", all[anchor], window, bookend, roles)
            .unwrap();
        let got = (
            positions(&view.window, &all),
            view.messages_before,
            view.messages_after,
            positions(&view.bookend_start, &all),
            positions(&view.bookend_end, &all),
        );
        assert_eq!(got, expected, "{n}: {anchor} {window} {bookend} {roles:?}");
    }
    let empty = s.get_anchored_view("other", all[3], 5, 3, None).unwrap();
    assert_eq!(
        serde_json::to_value(&empty).unwrap(),
        json!({"window": [], "messages_before": 0, "messages_after": 0,
               "bookend_start": [], "bookend_end": []}),
        "{n}: an anchor of another session"
    );
}

/// The model history of a resume merges consecutive user and assistant
/// turns (keys a merge adds last), keeps one result per tool call, drops
/// stray results and replaced candidates; the display history is the
/// conversation with ancestors, unrepaired.
pub fn the_resume_repairs_the_model_history_as_the_original_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    s.create_session(&NewSession::new("r", "tui")).unwrap();
    let call = |id: &str| json!([{"id": id, "function": {"name": "t", "arguments": "{}"}}]);
    let tool = |id: &str, content: &str| NewMessage {
        tool_call_id: Some(id.to_owned()),
        ..NewMessage::new("r", "tool").content(content)
    };
    for message in [
        NewMessage {
            api_content: Some("WIRE".into()),
            ..NewMessage::new("r", "user").content("q1")
        },
        NewMessage::new("r", "user").content("q2"),
        assistant("r", "  thinking  ").finish_reason("length"),
        NewMessage {
            reasoning_content: Some("why".into()),
            ..assistant("r", "calling").tool_calls(call("c1"))
        },
        tool("c1", "out"),
        tool("c1", "duplicate"),
        tool("zz", "stray"),
        assistant("r", "candidate").finish_reason("verification_required"),
        assistant("r", "final").finish_reason("stop"),
        NewMessage {
            codex_reasoning_items: Some(json!([{"i": 1}])),
            ..assistant("r", "interim")
        },
        assistant("r", "after interim"),
    ] {
        s.append_message(&message.timestamp(1.0)).unwrap();
    }
    let resumed = s.get_resume_conversations("r").unwrap();
    let model = serde_json::to_value(&resumed.model_history).unwrap();
    let expected = json!([
        {"role": "user", "content": "q1\n\nq2", "timestamp": 1.0},
        {"role": "assistant", "content": "thinking\ncalling", "timestamp": 1.0,
         "finish_reason": "length",
         "tool_calls": [{"id": "c1", "function": {"name": "t", "arguments": "{}"}}],
         "reasoning_content": "why"},
        {"role": "tool", "content": "out", "timestamp": 1.0, "tool_call_id": "c1"},
        {"role": "assistant", "content": "final", "timestamp": 1.0, "finish_reason": "stop"},
        {"role": "assistant", "content": "interim", "timestamp": 1.0,
         "codex_reasoning_items": [{"i": 1}]},
        {"role": "assistant", "content": "after interim", "timestamp": 1.0},
    ]);
    // As text: the keys' order counts.
    assert_eq!(model.to_string(), expected.to_string(), "{n}");
    let display = s.get_messages_as_conversation("r", true).unwrap();
    assert_eq!(resumed.display_history, display, "{n}");
    let pair = serde_json::to_value(&resumed).unwrap();
    assert_eq!(pair.as_array().unwrap().len(), 2, "{n}");
}

/// The ancestors' prefix is their display history; a candidate after a
/// plain answer is merged into it in the model history, and the replayed
/// question shows once.
pub fn the_ancestor_prefix_is_the_display_history_of_the_ancestors_alike(backend: &dyn Backend) {
    let b = backend.open_at(1000.0);
    let s = &*b.store;
    let n = b.name();
    s.create_session(&NewSession::new("root", "tui")).unwrap();
    for (role, content) in [
        ("user", "first"),
        ("assistant", "answer"),
        ("user", "pending"),
    ] {
        append(s, "root", role, json!(content));
    }
    s.end_session("root", "compression").unwrap();
    s.create_session(&NewSession::new("tip", "tui").parent_session_id("root"))
        .unwrap();
    append(s, "tip", "user", json!("pending"));
    append(s, "tip", "assistant", json!("tip answer"));
    s.append_message(&assistant("tip", "candidate").finish_reason("verification_required"))
        .unwrap();
    append(s, "tip", "assistant", json!("verified"));
    let contents = |messages: Vec<hermes_state_types::ConversationMessage>| -> Vec<Value> {
        let content = |m: hermes_state_types::ConversationMessage| json!(m.content);
        messages.into_iter().map(content).collect()
    };
    let prefix = contents(s.get_ancestor_display_prefix("tip").unwrap());
    assert_eq!(
        prefix,
        [json!("first"), json!("answer"), json!("pending")],
        "{n}"
    );
    for lone in ["root", "nobody", ""] {
        let none = s.get_ancestor_display_prefix(lone).unwrap();
        assert!(none.is_empty(), "{n}: {lone:?}");
    }
    let resumed = s.get_resume_conversations("tip").unwrap();
    let model: Vec<&Value> = resumed
        .model_history
        .iter()
        .map(|m| &m["content"])
        .collect();
    let merged = json!("tip answer\ncandidate\nverified");
    assert_eq!(model, [&json!("pending"), &merged], "{n}");
    let display = contents(resumed.display_history);
    let expected = [
        "first",
        "answer",
        "pending",
        "tip answer",
        "candidate",
        "verified",
    ];
    assert_eq!(display, expected.map(|c| json!(c)), "{n}: the replay once");
}

/// `tool_calls` stored as a number (no list) fails the repair as the
/// original's `TypeError`.
pub fn tool_calls_that_are_no_list_fail_the_repair_as_pythons_type_error_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    s.create_session(&NewSession::new("r", "tui")).unwrap();
    append(s, "r", "assistant", json!("a"));
    let five = assistant("r", "b").tool_calls(json!(5)).timestamp(1.0);
    let id = s.append_message(&five).unwrap();
    let stored = b.query(&format!("SELECT tool_calls FROM messages WHERE id = {id}"));
    assert_eq!(stored, [[json!("5")]], "{n}");
    let error = s.get_resume_conversations("r").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{n}");
    assert_eq!(
        error.original_class(),
        Some(OriginalError::InvalidArgument),
        "{n}"
    );
    assert_eq!(error.to_string(), "'int' object is not iterable", "{n}");
}
