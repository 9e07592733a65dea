//! The views a resume and a search hit show: `get_anchored_view`,
//! `get_resume_conversations` (with the original's role-alternation repair)
//! and `get_ancestor_display_prefix`.

use hermes_state::serde_json::{self, Value, json};
use hermes_state::{ErrorKind, NewMessage, NewSession, OriginalError, SessionDb};

use super::Clocked;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;
use hermes_state_testkit::build::assistant;

fn append(db: &SessionDb, session: &str, role: &str, content: Value) -> i64 {
    let mut message = NewMessage::new(session, role);
    message.content = Some(content.into());
    db.append_message(&message).expect("append_message")
}

fn append_with(db: &SessionDb, message: NewMessage) -> i64 {
    db.append_message(&message).expect("append_message")
}

/// The anchored session: 12 messages, roles cycling user, assistant, tool;
/// message 4 (index) has empty content, message 7 structured content.
fn anchored_session(db: &SessionDb) -> Vec<i64> {
    db.create_session(&NewSession::new("a", "cli")).unwrap();
    db.create_session(&NewSession::new("other", "cli")).unwrap();
    append(db, "other", "user", json!("elsewhere"));
    (0..12)
        .map(|i| {
            let role = ["user", "assistant", "tool"][i % 3];
            let content = match i {
                4 => json!(""),
                7 => json!([{"type": "text", "text": "structured"}]),
                _ => json!(format!("m{i}")),
            };
            append(db, "a", role, content)
        })
        .collect()
}

fn ids(messages: &[hermes_state::Message], all: &[i64]) -> Vec<usize> {
    messages
        .iter()
        .map(|m| {
            all.iter()
                .position(|id| *id == m.id)
                .expect("a message of the session")
        })
        .collect()
}

#[test]
fn the_anchored_view_filters_the_window_and_adds_bookends_outside_it() {
    let s = Clocked::at(1000.0);
    let all = anchored_session(&s.db);
    let user_assistant: &[&str] = &["user", "assistant"];
    // (anchor, window, bookend, keep_roles) → (window, before, after, start, end), as indexes.
    type Case<'a> = (usize, i64, i64, Option<&'a [&'a str]>);
    type Expected = (Vec<usize>, usize, usize, Vec<usize>, Vec<usize>);
    let cases: Vec<(Case<'_>, Expected)> = vec![
        // Mid-session: tool rows leave the window; bookends skip empty and
        // structured content (SQLite's length() stops at the NUL).
        (
            (6, 2, 3, Some(user_assistant)),
            (vec![4, 6, 7], 2, 2, vec![0, 1, 3], vec![9, 10]),
        ),
        // The anchor stays whatever its role.
        (
            (5, 1, 0, Some(user_assistant)),
            (vec![4, 5, 6], 1, 1, vec![], vec![]),
        ),
        ((5, 1, 2, Some(&[])), (vec![5], 1, 1, vec![], vec![])),
        (
            (5, 1, 2, None),
            (vec![4, 5, 6], 1, 1, vec![0, 1], vec![10, 11]),
        ),
        (
            (5, 2, 2, Some(&["tool"])),
            (vec![5], 2, 2, vec![2], vec![8, 11]),
        ),
        // A window at the head: no start bookend; negative sizes count as 0.
        (
            (1, 3, 3, Some(user_assistant)),
            (vec![0, 1, 3, 4], 1, 3, vec![], vec![6, 9, 10]),
        ),
        (
            (6, -4, -1, Some(user_assistant)),
            (vec![6], 0, 0, vec![], vec![]),
        ),
    ];
    for ((anchor, window, bookend, roles), expected) in cases {
        let view =
            s.db.get_anchored_view("a", all[anchor], window, bookend, roles)
                .unwrap();
        let got = (
            ids(&view.window, &all),
            view.messages_before,
            view.messages_after,
            ids(&view.bookend_start, &all),
            ids(&view.bookend_end, &all),
        );
        assert_eq!(
            got, expected,
            "anchor {anchor}, window {window}, bookend {bookend}, {roles:?}"
        );
    }
    let empty = s.db.get_anchored_view("other", all[3], 5, 3, None).unwrap();
    assert_eq!(
        serde_json::to_value(&empty).unwrap(),
        json!({"window": [], "messages_before": 0, "messages_after": 0,
               "bookend_start": [], "bookend_end": []}),
        "an anchor of another session gives the original's empty view"
    );
}

#[test]
fn the_resume_repairs_the_model_history_as_the_original() {
    let s = Clocked::at(1000.0);
    let db = &s.db;
    db.create_session(&NewSession::new("r", "tui")).unwrap();
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
        append_with(db, message.timestamp(1.0));
    }
    let resumed = db.get_resume_conversations("r").unwrap();
    let model = serde_json::to_value(&resumed.model_history).unwrap();
    assert_eq!(
        model,
        json!([
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
        ])
    );
    let merged_keys: Vec<&String> = model[1].as_object().unwrap().keys().collect();
    assert_eq!(
        merged_keys,
        [
            "role",
            "content",
            "timestamp",
            "finish_reason",
            "tool_calls",
            "reasoning_content"
        ],
        "keys a merge adds come last, as in the original's dict"
    );
    // The display history is the conversation view with ancestors, unrepaired.
    assert_eq!(
        resumed.display_history,
        db.get_messages_as_conversation("r", true).unwrap()
    );
    assert_eq!(
        serde_json::to_value(&resumed)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn the_ancestor_prefix_is_the_display_history_of_the_ancestors() {
    let s = Clocked::at(1000.0);
    let db = &s.db;
    db.create_session(&NewSession::new("root", "tui")).unwrap();
    append(db, "root", "user", json!("first"));
    append(db, "root", "assistant", json!("answer"));
    append(db, "root", "user", json!("pending"));
    db.end_session("root", "compression").unwrap();
    db.create_session(&NewSession::new("tip", "tui").parent_session_id("root"))
        .unwrap();
    append(db, "tip", "user", json!("pending"));
    append(db, "tip", "assistant", json!("tip answer"));
    append_with(
        db,
        assistant("tip", "candidate").finish_reason("verification_required"),
    );
    append(db, "tip", "assistant", json!("verified"));
    let contents = |messages: Vec<hermes_state::ConversationMessage>| -> Vec<Value> {
        messages
            .into_iter()
            .map(|m| serde_json::to_value(m.content).unwrap())
            .collect()
    };
    assert_eq!(
        contents(db.get_ancestor_display_prefix("tip").unwrap()),
        [json!("first"), json!("answer"), json!("pending")]
    );
    for lone in ["root", "nobody", ""] {
        assert!(
            db.get_ancestor_display_prefix(lone).unwrap().is_empty(),
            "{lone:?}"
        );
    }
    let resumed = db.get_resume_conversations("tip").unwrap();
    let model: Vec<Value> = resumed
        .model_history
        .iter()
        .map(|m| m["content"].clone())
        .collect();
    // The candidate follows a plain answer, so it is merged, not replaced.
    assert_eq!(
        model,
        [json!("pending"), json!("tip answer\ncandidate\nverified")]
    );
    assert_eq!(
        contents(resumed.display_history),
        [
            json!("first"),
            json!("answer"),
            json!("pending"),
            json!("tip answer"),
            json!("candidate"),
            json!("verified")
        ],
        "the replayed user message is dropped from the display"
    );
}

#[test]
fn tool_calls_that_are_no_list_fail_the_repair_as_pythons_type_error() {
    let s = Clocked::at(1000.0);
    let db = &s.db;
    db.create_session(&NewSession::new("r", "tui")).unwrap();
    append(db, "r", "assistant", json!("a"));
    db.write_raw(|conn| {
        conn.execute(
            "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) \
             VALUES ('r', 'assistant', 'b', '5', 1.0)",
            [],
        )
        .unwrap();
        Ok(())
    })
    .unwrap();
    let error = db.get_resume_conversations("r").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert_eq!(error.original_class(), Some(OriginalError::InvalidArgument));
    assert_eq!(error.to_string(), "'int' object is not iterable");
}
