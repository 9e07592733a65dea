//! The message writers of `api.md` §4.5 through the seam: replacing a
//! transcript, compacting it in place, rewinding and restoring.

use hermes_state_core::OriginalError;
use hermes_state_core::SessionStore;
use hermes_state_core::messages::MessagePage;
use hermes_state_core::search::SearchOptions;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use serde_json::{Value, json};

use super::Backend;
use super::raw::real;
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

/// The message ids a search finds, in id order; rewound rows only with
/// `include_inactive`.
fn found(s: &dyn SessionStore, query: &str, include_inactive: bool) -> Vec<i64> {
    let options = SearchOptions {
        include_inactive,
        ..SearchOptions::default()
    };
    let mut ids: Vec<i64> = s
        .search_messages(query, &options)
        .unwrap()
        .iter()
        .map(|hit| hit.id)
        .collect();
    ids.sort_unstable();
    ids
}

/// Every row goes, inactive ones too (all of them, or the live ones with
/// `active_only`); the list comes in with its calls counted as appended;
/// compaction archives the live rows only, which stay searchable.
pub fn replace_and_compact_alike(backend: &dyn Backend) {
    let b = backend.open_at(1000.0);
    let s = b.store.as_ref();
    let n = b.name();
    s.create_session(&NewSession::new("s", "cli")).unwrap();
    let old = s
        .append_messages(&[user("s", "old1"), assistant("s", "old2"), user("s", "old3")])
        .unwrap();
    b.deactivate(old[2]);

    let replaced = [
        user("", "new1").timestamp(50.0),
        assistant("s", "new2")
            .reasoning("kept")
            .tool_calls(json!([{"id": "c1"}, {"id": "c2"}])),
        NewMessage::new("s", "tool")
            .content("out")
            .tool_result("terminal", "c1"),
        user("", "new3").reasoning("dropped"),
        NewMessage::new("s", "assistant").tool_calls(json!({"id": "solo"})),
    ];
    s.replace_messages("s", &replaced, false).unwrap();
    let none = "None";
    assert_eq!(
        states(s, "s"),
        [
            row("new1", 1, 0),
            row("new2", 1, 0),
            row("out", 1, 0),
            row("new3", 1, 0),
            row(none, 1, 0)
        ],
        "{n}"
    );
    assert_eq!(counters(s, "s"), (5, 3, 0), "{n}");
    let got = s.get_messages("s").unwrap();
    assert_eq!(got[1].reasoning.as_deref(), Some("kept"), "{n}");
    assert_eq!(got[3].reasoning, None, "{n}");
    // Timestamps strictly increase from the given one.
    assert_eq!(got[0].timestamp, 50.0, "{n}");
    assert!(
        got.windows(2).all(|w| w[0].timestamp < w[1].timestamp),
        "{n}"
    );
    for gone in ["old1", "old3"] {
        assert!(found(s, gone, true).is_empty(), "{n}: {gone}");
    }
    let ids: Vec<i64> = got.iter().map(|m| m.id).collect();
    assert_eq!(found(s, "new1", false), [ids[0]], "{n}");

    // Compaction archives the live rows only and inserts the summary.
    s.rewind_to_message("s", ids[3]).unwrap();
    let inserted = s
        .archive_and_compact(
            "s",
            &[
                user("", "summary"),
                assistant("", "ok").tool_calls(json!([{"id": "a"}, {"id": "b"}])),
            ],
        )
        .unwrap();
    assert_eq!(inserted, 2, "{n}");
    let archived = [
        row("new1", 0, 1),
        row("new2", 0, 1),
        row("out", 0, 1),
        row("new3", 0, 0),
        row(none, 0, 0),
    ];
    let mut want = archived.to_vec();
    want.extend([row("summary", 1, 0), row("ok", 1, 0)]);
    assert_eq!(states(s, "s"), want, "{n}");
    assert_eq!(counters(s, "s"), (2, 2, 1), "{n}");
    let live: Vec<_> = s
        .get_messages("s")
        .unwrap()
        .into_iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(live.len(), 2, "{n}");
    assert!(s.has_archived_messages("s").unwrap(), "{n}");
    // Compacted rows are still found, rewound ones only when asked.
    assert_eq!(found(s, "new1", false), [ids[0]], "{n}");
    assert_eq!(found(s, "summary", false), [live[0]], "{n}");
    assert!(found(s, "new3", false).is_empty(), "{n}");
    assert_eq!(found(s, "new3", true), [ids[3]], "{n}");

    // `active_only` keeps the archived and the rewound rows.
    s.replace_messages("s", &[user("", "only")], true).unwrap();
    let mut want = archived.to_vec();
    want.push(row("only", 1, 0));
    assert_eq!(states(s, "s"), want, "{n}");
    assert_eq!(counters(s, "s"), (1, 0, 1), "{n}");

    // Errors, with nothing written.
    let kind = |r: hermes_state_core::Result<()>| r.unwrap_err().kind();
    for nobody in ["nope", ""] {
        assert_eq!(
            kind(s.replace_messages(nobody, &[user("", "x")], false)),
            ErrorKind::NotFound,
            "{n}: {nobody:?}"
        );
        assert_eq!(
            s.archive_and_compact(nobody, &[user("", "x")])
                .unwrap_err()
                .kind(),
            ErrorKind::NotFound,
            "{n}: {nobody:?}"
        );
    }
    assert_eq!(
        kind(s.replace_messages("s", &[user("t", "x")], false)),
        ErrorKind::InvalidInput,
        "{n}"
    );
    s.replace_messages("nope", &[], false).unwrap();
    assert_eq!(s.archive_and_compact("nope", &[]).unwrap(), 0, "{n}");
    assert_eq!(s.get_session("nope").unwrap(), None, "{n}");
    assert_eq!(states(s, "s").len(), 6, "{n}");

    // An empty compaction archives every live row and zeroes the counters.
    assert_eq!(s.archive_and_compact("s", &[]).unwrap(), 0, "{n}");
    assert_eq!(states(s, "s")[5], row("only", 0, 1), "{n}");
    assert_eq!(counters(s, "s"), (0, 0, 1), "{n}");
    // An empty list clears the session.
    s.replace_messages("s", &[], false).unwrap();
    assert!(states(s, "s").is_empty(), "{n}");
    assert_eq!(counters(s, "s"), (0, 0, 1), "{n}");

    // The running default timestamp: max(default, row timestamp) + 1e-6,
    // stored as REAL.
    s.create_session(&NewSession::new("t", "cli")).unwrap();
    let stamps = [None, None, Some(2000.0), None, Some(10.0), None];
    let rows: Vec<NewMessage> = stamps
        .iter()
        .map(|at| {
            let message = user("t", "x");
            match at {
                Some(at) => message.timestamp(*at),
                None => message,
            }
        })
        .collect();
    s.replace_messages("t", &rows, false).unwrap();
    let step = |x: f64| x + 1e-6;
    let stored: Vec<f64> = b
        .query("SELECT timestamp FROM messages WHERE session_id = 't' ORDER BY id")
        .iter()
        .map(|r| real(&r[0]))
        .collect();
    let after_d = step(step(2000.0));
    assert_eq!(
        stored,
        [
            1000.0,
            step(1000.0),
            2000.0,
            step(2000.0),
            10.0,
            step(after_d)
        ],
        "{n}"
    );

    // Reasoning and the Codex items are kept for assistant rows only;
    // every other column for both, as stored.
    s.create_session(&NewSession::new("r", "cli")).unwrap();
    let reasoned = |role: &str| {
        let mut m = NewMessage::new("r", role).content("x").reasoning("why");
        m.reasoning_content = Some(String::new());
        m.reasoning_details = Some(json!([{"t": 1}]));
        m.codex_reasoning_items = Some(json!([{"i": 1}]));
        m.codex_message_items = Some(json!([{"m": 1}]));
        m.platform_message_id = Some("pm-1".to_owned());
        m.observed = true;
        m.api_content = Some("WIRE".to_owned());
        m.display_kind = Some("steer".to_owned());
        m.display_metadata = Some(json!({"a": "é"}));
        m.finish_reason = Some("stop".to_owned());
        m.token_count = Some(7);
        m
    };
    s.replace_messages("r", &[reasoned("assistant"), reasoned("user")], false)
        .unwrap();
    let rows = b.query(
        "SELECT reasoning, reasoning_content, reasoning_details, codex_reasoning_items, \
         codex_message_items, platform_message_id, observed, api_content, display_kind, \
         display_metadata, finish_reason, token_count FROM messages \
         WHERE session_id = 'r' ORDER BY id",
    );
    let both = json!(["pm-1", 1, "WIRE", "steer", r#"{"a": "\u00e9"}"#, "stop", 7]);
    let both = both.as_array().unwrap();
    let assistant_only = json!(["why", "", r#"[{"t": 1}]"#, r#"[{"i": 1}]"#, r#"[{"m": 1}]"#]);
    assert_eq!(rows[0][..5], assistant_only.as_array().unwrap()[..], "{n}");
    assert_eq!(rows[0][5..], both[..], "{n}");
    assert_eq!(
        rows[1][..5],
        [
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null
        ],
        "{n}"
    );
    assert_eq!(rows[1][5..], both[..], "{n}");
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
    for (session, message) in [
        ("s", elsewhere),
        ("s", 999_999),
        ("nope", ids[0]),
        ("", ids[0]),
    ] {
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
    assert!(states(s, "s").iter().all(|r| r.1 == 1), "{n}");

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
    assert_eq!(s.get_messages("s").unwrap().len(), 2, "{n}");
    assert!(found(s, "q2", false).is_empty(), "{n}");
    assert_eq!(found(s, "q2", true), [ids[2]], "{n}");

    // Rewinding to the first turn leaves no head.
    let all = s.rewind_to_message("s", ids[0]).unwrap();
    assert_eq!((all.rewound_count, all.new_head_id), (2, None), "{n}");
    assert_eq!(counters(s, "s").2, 2, "{n}");
    // An already rewound user row is a target too: nothing rewound.
    let none = s.rewind_to_message("s", ids[2]).unwrap();
    assert_eq!(
        (none.rewound_count, none.target_message.active),
        (0, 0),
        "{n}"
    );
    assert_eq!(counters(s, "s"), (5, 0, 3), "{n}");

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
    assert_eq!(counters(s, "s"), (5, 0, 3), "{n}: restoring counts nothing");
    assert_eq!(found(s, "q2", false), [ids[2]], "{n}");
    // As the original, every inactive row comes back, compacted ones
    // too (they stay marked compacted), and a rewound summary.
    s.archive_and_compact("s", &[user("", "sum")]).unwrap();
    let sum = s.get_messages("s").unwrap()[0].id;
    s.rewind_to_message("s", sum).unwrap();
    assert_eq!(s.restore_rewound("s", 0).unwrap(), 6, "{n}");
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
    for nobody in ["nope", ""] {
        assert_eq!(s.restore_rewound(nobody, 0).unwrap(), 0, "{n}");
    }
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
    let parts = hermes_state_types::Content::Structured(
        json!([{"type": "text", "text": "second question"}]),
    );
    let ids = s
        .append_messages(&[
            user("s", "plain"),
            user("s", "with calls").tool_calls(json!([{"id": "u1", "n": 2.5}])),
            NewMessage::new("s", "user").content(hermes_state_types::Content::Structured(json!(
                "a  json string"
            ))),
            NewMessage::new("s", "user").content(parts.clone()),
        ])
        .unwrap();
    let previews: Vec<String> = s
        .list_recent_user_messages("s", 10, false)
        .unwrap()
        .into_iter()
        .map(|m| m.preview)
        .collect();
    assert_eq!(
        previews,
        ["second question", "a json string", "with calls", "plain"],
        "{n}"
    );
    // A target's content is decoded; structured content is searched.
    let target = s.rewind_to_message("s", ids[3]).unwrap().target_message;
    assert_eq!(target.content, Some(parts), "{n}");
    assert!(found(s, "second", false).is_empty(), "{n}");
    assert_eq!(found(s, "second", true), [ids[3]], "{n}");
    let target = s.rewind_to_message("s", ids[1]).unwrap().target_message;
    assert_eq!(
        target.tool_calls,
        Some(json!("[{\"id\": \"u1\", \"n\": 2.5}]")),
        "{n}"
    );
    let target = s.rewind_to_message("s", ids[0]).unwrap().target_message;
    assert_eq!(target.tool_calls, None, "{n}");
    assert_eq!(s.restore_rewound("s", ids[0]).unwrap(), 4, "{n}");
    assert!(!s.has_archived_messages("s").unwrap(), "{n}");
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
