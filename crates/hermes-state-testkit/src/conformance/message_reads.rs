//! Message pages, the conversation view (`api.md` §5.1, §5.2) and clearing
//! messages (§11.5) through the seam.

use hermes_state_core::messages::MessagePage;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use serde_json::json;

use super::Backend;

/// Pages go by id (not by time), skip inactive rows unless asked (a
/// compacted one among them), and count from the offset; `message_count`
/// counts inactive rows too, and without an id the whole store.
pub fn message_pages_skip_inactive_rows_and_page_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("s", "cli")).unwrap();
    s.create_session(&NewSession::new("other", "cli")).unwrap();
    // Timestamps deliberately out of order.
    let ids = s
        .append_messages(
            &(1..=6)
                .map(|i| {
                    NewMessage::new("s", "user")
                        .content(format!("m{i}"))
                        .timestamp(100.0 - f64::from(i))
                })
                .collect::<Vec<_>>(),
        )
        .unwrap();
    s.append_message(&NewMessage::new("other", "user").content("elsewhere"))
        .unwrap();
    b.deactivate(ids[1]);
    b.deactivate(ids[3]);
    b.exec(&format!(
        "UPDATE messages SET compacted = 1 WHERE id = {}",
        ids[3]
    ));
    let page = |include_inactive, limit, offset| MessagePage {
        include_inactive,
        limit,
        offset,
    };
    // (page, indexes into `ids`)
    let pages: [(MessagePage, &[usize]); 9] = [
        (MessagePage::default(), &[0, 2, 4, 5]),
        (page(true, None, 0), &[0, 1, 2, 3, 4, 5]),
        (page(false, Some(2), 0), &[0, 2]),
        (page(false, Some(2), 1), &[2, 4]),
        (page(false, None, 2), &[4, 5]),
        (page(true, Some(3), 2), &[2, 3, 4]),
        (page(true, None, 3), &[3, 4, 5]),
        (page(false, Some(0), 0), &[]),
        (page(false, Some(10), 10), &[]),
    ];
    for (p, want) in pages {
        let got: Vec<i64> = s
            .get_messages_page("s", p)
            .unwrap()
            .iter()
            .map(|m| m.id)
            .collect();
        let want: Vec<i64> = want.iter().map(|&i| ids[i]).collect();
        assert_eq!(got, want, "{n}: {p:?}");
    }
    let flags: Vec<(i64, i64)> = s
        .get_messages_page("s", page(true, None, 0))
        .unwrap()
        .iter()
        .map(|m| (m.active, m.compacted))
        .collect();
    assert_eq!(
        flags,
        [(1, 0), (0, 0), (1, 0), (0, 1), (1, 0), (1, 0)],
        "{n}"
    );
    assert!(
        s.get_messages_page("ghost", MessagePage::default())
            .unwrap()
            .is_empty(),
        "{n}"
    );
    assert_eq!(
        s.get_messages_page("s", MessagePage::default()).unwrap(),
        s.get_messages("s").unwrap(),
        "{n}"
    );
    assert_eq!(s.message_count(Some("s")).unwrap(), 6, "{n}");
    assert_eq!(s.message_count(None).unwrap(), 7, "{n}");
    assert_eq!(s.message_count(Some("nope")).unwrap(), 0, "{n}");
}

/// The original's `get_messages(include_inactive, limit, offset)` and
/// `get_messages_around(window)` over the whole integer range (answers
/// checked against a run of it): a negative limit is no limit, a negative
/// offset skips nothing, a negative window gives the anchor alone.
pub fn negative_limits_offsets_and_windows_mean_what_they_mean_in_the_original_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("s", "cli")).unwrap();
    let ids = s
        .append_messages(
            &(0..5)
                .map(|i| NewMessage::new("s", "user").content(format!("m{i}")))
                .collect::<Vec<_>>(),
        )
        .unwrap();
    b.deactivate(ids[1]);
    let page = |include_inactive, limit, offset| MessagePage {
        include_inactive,
        limit,
        offset,
    };
    // (page, indexes into `ids`)
    let pages: [(MessagePage, &[usize]); 7] = [
        (page(false, Some(-1), 0), &[0, 2, 3, 4]),
        (page(false, Some(-5), 1), &[2, 3, 4]),
        (page(false, None, -2), &[0, 2, 3, 4]),
        (page(false, Some(2), -3), &[0, 2]),
        (page(true, Some(-1), 3), &[3, 4]),
        (page(false, Some(0), -1), &[]),
        (page(false, Some(i64::MAX), 1), &[2, 3, 4]),
    ];
    for (p, want) in pages {
        let got: Vec<i64> = s
            .get_messages_page("s", p)
            .unwrap()
            .iter()
            .map(|m| m.id)
            .collect();
        let want: Vec<i64> = want.iter().map(|&i| ids[i]).collect();
        assert_eq!(got, want, "{n}: {p:?}");
    }
    // (window, indexes into `ids`, messages_before, messages_after)
    let windows: [(i64, &[usize], usize, usize); 8] = [
        (i64::MIN, &[2], 0, 0),
        (-5, &[2], 0, 0),
        (-1, &[2], 0, 0),
        (0, &[2], 0, 0),
        (1, &[1, 2, 3], 1, 1),
        (2, &[0, 1, 2, 3, 4], 2, 2),
        (100, &[0, 1, 2, 3, 4], 2, 2),
        (i64::MAX, &[0, 1, 2, 3, 4], 2, 2),
    ];
    for (window, want, before, after) in windows {
        let around = s.get_messages_around("s", ids[2], window).unwrap();
        let got: Vec<i64> = around.window.iter().map(|m| m.id).collect();
        let want: Vec<i64> = want.iter().map(|&i| ids[i]).collect();
        assert_eq!(got, want, "{n}: window {window}");
        assert_eq!(
            (around.messages_before, around.messages_after),
            (before, after),
            "{n}: window {window}"
        );
    }
}

pub fn conversations_are_built_alike_with_and_without_ancestors(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("p", "cli")).unwrap();
    s.append_messages(&[
        NewMessage::new("p", "user").content("find the docs").timestamp(1.0),
        NewMessage::new("p", "assistant")
            .content("")
            .tool_calls(json!([{"id": "t1", "type": "function", "function": {"name": "web_search", "arguments": "{}"}}]))
            .timestamp(2.0),
        NewMessage::new("p", "tool").tool_result("web_search", "t1").content("results").timestamp(3.0),
        NewMessage::new("p", "user").content("summarise them").timestamp(4.0),
    ])
    .unwrap();
    s.end_session("p", "compression").unwrap();
    let mut child = NewSession::new("c", "cli");
    child.parent_session_id = Some("p".into());
    s.create_session(&child).unwrap();
    // The continuation replays the parent's last user message.
    let ids = s
        .append_messages(&[
            NewMessage::new("c", "user")
                .content("summarise them")
                .timestamp(5.0),
            NewMessage::new("c", "assistant")
                .content(hermes_state_types::Content::Structured(
                    json!([{"type": "text", "text": "done"}]),
                ))
                .timestamp(6.0),
            NewMessage::new("c", "assistant")
                .content("rewound")
                .timestamp(7.0),
        ])
        .unwrap();
    b.deactivate(ids[2]);

    let own = s.get_messages_as_conversation("c", false).unwrap();
    let roles: Vec<_> = own.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        ["user", "assistant"],
        "{n}: the rewound row is left out"
    );
    let whole = s.get_messages_as_conversation("c", true).unwrap();
    let roles: Vec<_> = whole.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "user", "assistant"],
        "{n}: the replayed user message appears once"
    );
    assert_eq!(whole[2].tool_call_id.as_deref(), Some("t1"), "{n}");
    assert!(
        s.get_messages_as_conversation("ghost", true)
            .unwrap()
            .is_empty(),
        "{n}"
    );
    // The SQLite backend is the reference: every field equal.
    super::agreed::check(
        "message_reads::conversations_are_built_alike_with_and_without_ancestors",
        n,
        &(own, whole),
    );
}

pub fn clearing_messages_zeroes_counters_and_keeps_the_rest_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("s", "cli")).unwrap();
    s.create_session(&NewSession::new("other", "cli")).unwrap();
    s.set_session_title("s", Some("Kept")).unwrap();
    s.update_token_counts(
        "s",
        &hermes_state_types::TokenUpdate {
            input_tokens: 9,
            model: Some("m".into()),
            api_call_count: 1,
            estimated_cost_usd: Some(0.5),
            ..Default::default()
        },
    )
    .unwrap();
    let aux = hermes_state_types::AuxiliaryUsage {
        task: "vision".into(),
        input_tokens: 1,
        ..Default::default()
    };
    s.record_auxiliary_usage("s", &aux).unwrap();
    let ids = s
        .append_messages(&[
            NewMessage::new("s", "assistant")
                .content("x")
                .tool_calls(json!([{"id": "1"}])),
            NewMessage::new("s", "user").content("y"),
            NewMessage::new("other", "user").content("z"),
        ])
        .unwrap();
    b.deactivate(ids[1]);
    let before = s.get_session("s").unwrap().unwrap();
    let usage = s.usage_by_model_and_task().unwrap();
    assert_eq!(usage.len(), 2, "{n}");
    s.clear_messages("s").unwrap();
    s.clear_messages("ghost").unwrap();
    assert_eq!(
        s.get_session("ghost").unwrap(),
        None,
        "{n}: nothing created"
    );
    assert_eq!(
        s.usage_by_model_and_task().unwrap(),
        usage,
        "{n}: usage rows are not messages"
    );
    assert_eq!(
        s.message_count(Some("s")).unwrap(),
        0,
        "{n}: inactive rows go too"
    );
    assert_eq!(s.message_count(Some("other")).unwrap(), 1, "{n}");
    let row = s.get_session("s").unwrap().unwrap();
    assert_eq!(
        (row.message_count, row.tool_call_count),
        (Some(0), Some(0)),
        "{n}"
    );
    assert_eq!(
        (row.title.as_deref(), row.input_tokens),
        (Some("Kept"), Some(9)),
        "{n}"
    );
    assert_eq!(
        row,
        hermes_state_types::Session {
            message_count: Some(0),
            tool_call_count: Some(0),
            ..before
        },
        "{n}: only the message counters change"
    );
    assert!(
        s.search_messages("x", &Default::default())
            .unwrap()
            .is_empty(),
        "{n}"
    );
}

/// The conversation as the original's list of dicts, compared as JSON
/// text (key order included): `api.md` §5.2's measured table (what each
/// role keeps, memory context stripped from user text, NULL content, no
/// inactive rows), and its lineage example (the replayed question once,
/// the curator's exchange left out).
pub fn conversations_are_the_originals_dicts_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    let dicts = |id: &str, ancestors: bool| {
        let conversation = s.get_messages_as_conversation(id, ancestors).unwrap();
        serde_json::to_string(&conversation).unwrap()
    };
    let text = |value: serde_json::Value| serde_json::to_string(&value).unwrap();
    s.create_session(&NewSession::new("s", "cli")).unwrap();
    let one_call = json!([{"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": "{\"cmd\": \"ls\"}"}}]);
    let rows: Vec<(NewMessage, serde_json::Value)> = vec![
        (
            NewMessage::new("s", "system")
                .content("  sys prompt  ")
                .timestamp(100.0)
                .finish_reason("x"),
            json!({"role": "system", "content": "  sys prompt  ", "timestamp": 100.0}),
        ),
        (
            NewMessage {
                platform_message_id: Some("pm-1".to_owned()),
                observed: true,
                api_content: Some("  WIRE  ".to_owned()),
                display_kind: Some("steer".to_owned()),
                display_metadata: Some(json!({"a": 1})),
                ..NewMessage::new("s", "user")
                    .content("  <memory-context>secret</memory-context> hi there  ")
                    .timestamp(101.0)
            },
            json!({"role": "user", "content": "hi there", "api_content": "  WIRE  ", "display_kind": "steer", "display_metadata": {"a": 1}, "timestamp": 101.0, "message_id": "pm-1", "observed": true}),
        ),
        (
            NewMessage {
                reasoning_content: Some(String::new()),
                reasoning_details: Some(json!([{"t": 1}])),
                codex_reasoning_items: Some(json!([{"i": 1}])),
                codex_message_items: Some(json!([{"m": 1}])),
                ..NewMessage::new("s", "assistant")
                    .content("")
                    .tool_calls(one_call.clone())
                    .finish_reason("tool_calls")
                    .reasoning("R")
                    .timestamp(102.0)
            },
            json!({"role": "assistant", "content": "", "timestamp": 102.0, "tool_calls": one_call, "finish_reason": "tool_calls", "reasoning": "R", "reasoning_content": "", "reasoning_details": [{"t": 1}], "codex_reasoning_items": [{"i": 1}], "codex_message_items": [{"m": 1}]}),
        ),
        (
            NewMessage {
                effect_disposition: Some("applied".to_owned()),
                ..NewMessage::new("s", "tool")
                    .content("  out  ")
                    .tool_result("terminal", "call_1")
                    .finish_reason("stop")
                    .timestamp(103.0)
            },
            json!({"role": "tool", "content": "  out  ", "timestamp": 103.0, "tool_call_id": "call_1", "tool_name": "terminal", "effect_disposition": "applied"}),
        ),
        (
            NewMessage::new("s", "assistant")
                .content("done")
                .finish_reason("stop")
                .reasoning("")
                .timestamp(99.0),
            json!({"role": "assistant", "content": "done", "timestamp": 99.0, "finish_reason": "stop"}),
        ),
        (
            NewMessage::new("s", "user")
                .content(hermes_state_types::Content::Structured(
                    json!([{"type": "text", "text": "img"}]),
                ))
                .timestamp(0.0),
            json!({"role": "user", "content": [{"type": "text", "text": "img"}]}),
        ),
        (
            NewMessage::new("s", "assistant").timestamp(1.0),
            json!({"role": "assistant", "content": null, "timestamp": 1.0}),
        ),
    ];
    let (messages, expected): (Vec<_>, Vec<_>) = rows.into_iter().unzip();
    for message in &messages {
        s.append_message(message).unwrap();
    }
    let gone = s
        .append_message(&NewMessage::new("s", "user").content("gone").timestamp(2.0))
        .unwrap();
    b.deactivate(gone);
    assert_eq!(dicts("s", false), text(json!(expected)), "{n}");
    assert_eq!(dicts("unknown", false), "[]", "{n}");

    s.create_session(&NewSession::new("root", "cli")).unwrap();
    let lineage = [
        ("root", "user", "first question"),
        ("root", "assistant", "first answer"),
        ("root", "user", "repeat me"),
        ("child", "user", "repeat me"),
        ("child", "assistant", "second answer"),
        (
            "child",
            "user",
            "Review the conversation above and update the skill library if needed.",
        ),
        ("child", "assistant", "curator reply"),
        ("child", "user", "after harness"),
    ];
    for (i, (session, role, content)) in lineage.into_iter().enumerate() {
        if i == 3 {
            s.end_session("root", "compression").unwrap();
            s.create_session(&crate::build::child("child", "root"))
                .unwrap();
        }
        s.append_message(&crate::build::message(
            session,
            role,
            content,
            i as f64 + 1.0,
        ))
        .unwrap();
    }
    let entry = |role: &str, content: &str, at: f64| json!({"role": role, "content": content, "timestamp": at});
    let own = json!([
        entry("user", "repeat me", 4.0),
        entry("assistant", "second answer", 5.0),
        entry("user", "after harness", 8.0),
    ]);
    assert_eq!(dicts("child", false), text(own), "{n}");
    let whole = json!([
        entry("user", "first question", 1.0),
        entry("assistant", "first answer", 2.0),
        entry("user", "repeat me", 3.0),
        entry("assistant", "second answer", 5.0),
        entry("user", "after harness", 8.0),
    ]);
    assert_eq!(dicts("child", true), text(whole), "{n}");
    assert_eq!(dicts("root", true), dicts("root", false), "{n}");
}
