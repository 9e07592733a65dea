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
            ..Default::default()
        },
    )
    .unwrap();
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
    s.clear_messages("s").unwrap();
    s.clear_messages("ghost").unwrap();
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
    assert!(
        s.search_messages("x", &Default::default())
            .unwrap()
            .is_empty(),
        "{n}"
    );
}
