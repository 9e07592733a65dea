//! The message writers of `api.md` §4.5 through the seam: replacing a
//! transcript, compacting it in place, rewinding and restoring.

use hermes_state_core::OriginalError;
use hermes_state_core::SessionStore;
use hermes_state_core::messages::MessagePage;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use serde_json::json;

use super::Backend;
use crate::build::{assistant, user};

/// `(content, active, compacted)` of every row of the session, in id order.
fn states(s: &dyn SessionStore, session: &str) -> Vec<(String, i64, i64)> {
    let page = MessagePage {
        include_inactive: true,
        ..MessagePage::default()
    };
    s.get_messages_page(session, page)
        .unwrap()
        .into_iter()
        .map(|m| {
            let text = match m.content {
                Some(hermes_state_types::Content::Text(text)) => text,
                other => format!("{other:?}"),
            };
            (text, m.active, m.compacted)
        })
        .collect()
}

/// `(message_count, tool_call_count, rewind_count)` of the session.
fn counters(s: &dyn SessionStore, session: &str) -> (i64, i64, i64) {
    let got = s.get_session(session).unwrap().unwrap();
    (
        got.message_count.unwrap_or(-1),
        got.tool_call_count.unwrap_or(-1),
        got.rewind_count,
    )
}

fn row(text: &str, active: i64, compacted: i64) -> (String, i64, i64) {
    (text.to_owned(), active, compacted)
}

pub fn replace_and_compact_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = b.store.as_ref();
    let n = b.name();
    s.create_session(&NewSession::new("s", "cli")).unwrap();
    s.append_messages(&[user("s", "old1"), assistant("s", "old2")])
        .unwrap();

    let replaced = [
        user("", "new1").timestamp(50.0),
        assistant("s", "new2")
            .reasoning("kept")
            .tool_calls(json!([{"id": "c1"}, {"id": "c2"}])),
        user("", "new3").reasoning("dropped"),
    ];
    s.replace_messages("s", &replaced, false).unwrap();
    assert_eq!(
        states(s, "s"),
        [row("new1", 1, 0), row("new2", 1, 0), row("new3", 1, 0)],
        "{n}"
    );
    assert_eq!(counters(s, "s"), (3, 2, 0), "{n}");
    let got = s.get_messages("s").unwrap();
    assert_eq!(got[1].reasoning.as_deref(), Some("kept"), "{n}");
    assert_eq!(got[2].reasoning, None, "{n}");
    // Timestamps strictly increase from the given one.
    assert_eq!(got[0].timestamp, 50.0, "{n}");
    assert!(got[0].timestamp < got[1].timestamp, "{n}");
    assert!(got[1].timestamp < got[2].timestamp, "{n}");

    // Compaction archives the live rows and inserts the summary.
    let inserted = s
        .archive_and_compact("s", &[user("", "summary"), assistant("", "ok")])
        .unwrap();
    assert_eq!(inserted, 2, "{n}");
    assert_eq!(
        states(s, "s"),
        [
            row("new1", 0, 1),
            row("new2", 0, 1),
            row("new3", 0, 1),
            row("summary", 1, 0),
            row("ok", 1, 0)
        ],
        "{n}"
    );
    assert_eq!(counters(s, "s"), (2, 0, 0), "{n}");

    // `active_only` keeps the archived rows.
    s.replace_messages("s", &[user("", "only")], true).unwrap();
    assert_eq!(
        states(s, "s"),
        [
            row("new1", 0, 1),
            row("new2", 0, 1),
            row("new3", 0, 1),
            row("only", 1, 0)
        ],
        "{n}"
    );
    assert_eq!(counters(s, "s"), (1, 0, 0), "{n}");

    // Errors, with nothing written.
    let kind = |r: hermes_state_core::Result<()>| r.unwrap_err().kind();
    assert_eq!(
        kind(s.replace_messages("nope", &[user("", "x")], false)),
        ErrorKind::NotFound,
        "{n}"
    );
    assert_eq!(
        kind(s.replace_messages("s", &[user("t", "x")], false)),
        ErrorKind::InvalidInput,
        "{n}"
    );
    assert_eq!(
        s.archive_and_compact("nope", &[user("", "x")])
            .unwrap_err()
            .kind(),
        ErrorKind::NotFound,
        "{n}"
    );
    s.replace_messages("nope", &[], false).unwrap();
    assert_eq!(s.get_session("nope").unwrap(), None, "{n}");
    assert_eq!(states(s, "s").len(), 4, "{n}");

    // An empty list clears the session.
    s.replace_messages("s", &[], false).unwrap();
    assert!(states(s, "s").is_empty(), "{n}");
    assert_eq!(counters(s, "s"), (0, 0, 0), "{n}");
}

pub fn rewind_and_restore_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = b.store.as_ref();
    let n = b.name();
    s.create_session(&NewSession::new("s", "cli")).unwrap();
    s.create_session(&NewSession::new("other", "cli")).unwrap();
    let ids = s
        .append_messages(&[
            user("s", "q1"),
            assistant("s", "a1"),
            user("s", "q2"),
            assistant("s", "a2"),
            user("s", "q3"),
        ])
        .unwrap();
    let elsewhere = s.append_message(&user("other", "x")).unwrap();

    let error = s.rewind_to_message("s", ids[1]).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{n}");
    assert_eq!(
        error.original_class(),
        Some(OriginalError::RewindTargetRole),
        "{n}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "rewind target must be a 'user' message (got role='assistant', id={})",
            ids[1]
        ),
        "{n}"
    );
    // A message of another session, an unknown or empty session: not
    // found, as in the original.
    for (session, message) in [("s", elsewhere), ("nope", ids[0]), ("", ids[0])] {
        let error = s.rewind_to_message(session, message).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound, "{n}: {session:?}");
        assert_eq!(
            error.original_class(),
            Some(OriginalError::MessageNotFound),
            "{n}: {session:?}"
        );
        assert_eq!(
            error.to_string(),
            format!("message {message} not found in session {session}"),
            "{n}"
        );
    }
    assert_eq!(counters(s, "s"), (5, 0, 0), "{n}");

    let rewound = s.rewind_to_message("s", ids[2]).unwrap();
    assert_eq!(rewound.rewound_count, 3, "{n}");
    assert_eq!(rewound.target_message.id, ids[2], "{n}");
    assert_eq!(rewound.target_message.active, 1, "{n}");
    assert_eq!(rewound.new_head_id, Some(ids[1]), "{n}");
    assert_eq!(
        states(s, "s"),
        [
            row("q1", 1, 0),
            row("a1", 1, 0),
            row("q2", 0, 0),
            row("a2", 0, 0),
            row("q3", 0, 0)
        ],
        "{n}"
    );
    // The rows stay counted; the rewind is counted.
    assert_eq!(counters(s, "s"), (5, 0, 1), "{n}");

    // Rewinding to the first turn leaves no head.
    let all = s.rewind_to_message("s", ids[0]).unwrap();
    assert_eq!((all.rewound_count, all.new_head_id), (2, None), "{n}");
    assert_eq!(counters(s, "s").2, 2, "{n}");

    // Restore from `q2` on: only those rows come back.
    assert_eq!(s.restore_rewound("s", ids[2]).unwrap(), 3, "{n}");
    assert_eq!(
        states(s, "s"),
        [
            row("q1", 0, 0),
            row("a1", 0, 0),
            row("q2", 1, 0),
            row("a2", 1, 0),
            row("q3", 1, 0)
        ],
        "{n}"
    );
    // As the original, every inactive row comes back, compacted ones
    // too (they stay marked compacted).
    s.archive_and_compact("s", &[user("", "sum")]).unwrap();
    assert_eq!(s.restore_rewound("s", 0).unwrap(), 5, "{n}");
    assert_eq!(
        states(s, "s"),
        [
            row("q1", 1, 0),
            row("a1", 1, 0),
            row("q2", 1, 1),
            row("a2", 1, 1),
            row("q3", 1, 1),
            row("sum", 1, 0)
        ],
        "{n}"
    );
    assert_eq!(s.restore_rewound("nope", 0).unwrap(), 0, "{n}");
}

/// As the original: a rewind target's `tool_calls` is the stored text (not
/// parsed), and a content that decodes to a JSON string previews as it.
pub fn rewind_targets_keep_tool_calls_as_text_and_string_content_previews_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = b.store.as_ref();
    let n = b.name();
    s.create_session(&NewSession::new("s", "cli")).unwrap();
    let ids = s
        .append_messages(&[
            user("s", "plain"),
            user("s", "with calls").tool_calls(json!([{"id": "u1", "n": 2.5}])),
            NewMessage::new("s", "user").content(hermes_state_types::Content::Structured(json!(
                "a  json string"
            ))),
        ])
        .unwrap();
    let previews: Vec<String> = s
        .list_recent_user_messages("s", 10, false)
        .unwrap()
        .into_iter()
        .map(|m| m.preview)
        .collect();
    assert_eq!(previews, ["a json string", "with calls", "plain"], "{n}");
    let target = s.rewind_to_message("s", ids[1]).unwrap().target_message;
    assert_eq!(
        target.tool_calls,
        Some(json!("[{\"id\": \"u1\", \"n\": 2.5}]")),
        "{n}"
    );
    let target = s.rewind_to_message("s", ids[0]).unwrap().target_message;
    assert_eq!(target.tool_calls, None, "{n}");
    // get_messages still parses them.
    let all = s
        .get_messages_page(
            "s",
            MessagePage {
                include_inactive: true,
                ..MessagePage::default()
            },
        )
        .unwrap();
    assert_eq!(
        all[1].tool_calls,
        Some(json!([{"id": "u1", "n": 2.5}])),
        "{n}"
    );
}
