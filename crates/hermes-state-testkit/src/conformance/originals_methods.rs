//! The original's methods beyond `api.md` that both backends offer
//! (docs/DECISIONS.md, "The original's methods beyond `api.md`"), called
//! through the contract: the Telegram topic bindings, and the resume and
//! anchored views of a compression lineage. The facade's `beyond_spec`
//! test calls the same methods by name with the original's arguments;
//! these cases make every backend's own suite call each of them.

use hermes_state_core::OriginalError;
use hermes_state_core::telegram_topics::{ALREADY_LINKED, TopicBinding, TopicBindingRequest};
use hermes_state_types::{Content, Message, NewSession};
use serde_json::{Value, json};

use super::Backend;
use crate::build::{child_from, message};

fn request<'a>(chat: &'a str, thread: &'a str, session: &'a str) -> TopicBindingRequest<'a> {
    TopicBindingRequest {
        chat_id: chat,
        thread_id: thread,
        user_id: "7",
        session_key: "k",
        session_id: session,
        managed_mode: "auto",
    }
}

/// The opt-in, a binding made, refused twice with the original's classes
/// (a session bound elsewhere, a session that does not exist), read by
/// chat, thread and session, counted out of the unlinked sessions, and
/// removed one by one and by chat.
pub fn telegram_topic_bindings_are_made_refused_read_and_removed_alike(backend: &dyn Backend) {
    let b = backend.open_at(1000.0);
    let s = &*b.store;
    let n = b.name();
    for (id, user) in [("t1", "7"), ("t2", "7"), ("t3", "8")] {
        s.create_session(&NewSession::new(id, "telegram").user_id(user))
            .unwrap();
    }
    b.set_started("t1", 10.0);
    b.set_started("t2", 20.0);
    b.set_started("t3", 30.0);

    // Before the opt-in: nothing, and every session of the user unlinked.
    assert!(
        !s.is_telegram_topic_mode_enabled("100", "7").unwrap(),
        "{n}"
    );
    assert_eq!(
        s.get_telegram_topic_binding("100", "1").unwrap(),
        None,
        "{n}"
    );
    assert!(
        s.list_telegram_topic_bindings_for_chat("100")
            .unwrap()
            .is_empty(),
        "{n}"
    );
    assert_eq!(
        s.get_telegram_topic_binding_by_session("t1").unwrap(),
        None,
        "{n}"
    );
    assert!(!s.is_telegram_session_linked_to_topic("t1").unwrap(), "{n}");
    assert_eq!(
        s.delete_telegram_topic_binding("100", "1").unwrap(),
        0,
        "{n}"
    );
    s.disable_telegram_topic_mode("100", true).unwrap();
    let unlinked = |user: &str, limit: i64| -> Vec<String> {
        s.list_unlinked_telegram_sessions_for_user(user, limit)
            .unwrap()
            .into_iter()
            .map(|row| row.session.id)
            .collect()
    };
    assert_eq!(unlinked("7", 20), ["t2", "t1"], "{n}: newest first");

    s.enable_telegram_topic_mode("100", "7", Some(true), Some(false))
        .unwrap();
    assert!(s.is_telegram_topic_mode_enabled("100", "7").unwrap(), "{n}");
    s.bind_telegram_topic(&request("100", "1", "t1")).unwrap();
    let elsewhere = s
        .bind_telegram_topic(&request("100", "2", "t1"))
        .unwrap_err();
    assert_eq!(
        elsewhere.original_class(),
        Some(OriginalError::InvalidValue),
        "{n}"
    );
    assert_eq!(
        elsewhere.original_message().as_deref(),
        Some(ALREADY_LINKED),
        "{n}"
    );
    let nobody = s
        .bind_telegram_topic(&request("200", "1", "nobody"))
        .unwrap_err();
    assert_eq!(
        nobody.original_class(),
        Some(OriginalError::ForeignKey),
        "{n}"
    );
    s.bind_telegram_topic(&TopicBindingRequest {
        user_id: "8",
        session_key: "k3",
        managed_mode: "manual",
        ..request("300", "9", "t3")
    })
    .unwrap();

    let first = TopicBinding {
        chat_id: "100".into(),
        thread_id: "1".into(),
        user_id: "7".into(),
        session_key: "k".into(),
        session_id: "t1".into(),
        managed_mode: "auto".into(),
        linked_at: 1000.0,
        updated_at: 1000.0,
    };
    assert_eq!(
        s.get_telegram_topic_binding("100", "1").unwrap(),
        Some(first.clone()),
        "{n}: the clock's times"
    );
    assert_eq!(
        s.list_telegram_topic_bindings_for_chat("100").unwrap(),
        [first],
        "{n}"
    );
    let manual = s
        .get_telegram_topic_binding_by_session("t3")
        .unwrap()
        .unwrap();
    assert_eq!(
        (manual.chat_id.as_str(), manual.managed_mode.as_str()),
        ("300", "manual"),
        "{n}"
    );
    assert!(s.is_telegram_session_linked_to_topic("t1").unwrap(), "{n}");
    assert_eq!(unlinked("7", 20), ["t2"], "{n}: the bound one left out");
    assert_eq!(unlinked("8", -1), Vec::<String>::new(), "{n}");

    assert_eq!(
        s.delete_telegram_topic_binding("100", "1").unwrap(),
        1,
        "{n}"
    );
    assert!(
        !s.is_telegram_topic_mode_enabled("100", "7").unwrap(),
        "{n}: last binding gone"
    );
    s.disable_telegram_topic_mode("300", false).unwrap();
    assert_eq!(
        s.list_telegram_topic_bindings_for_chat("300")
            .unwrap()
            .len(),
        1,
        "{n}: kept"
    );
    s.disable_telegram_topic_mode("300", true).unwrap();
    assert!(
        s.list_telegram_topic_bindings_for_chat("300")
            .unwrap()
            .is_empty(),
        "{n}"
    );
}

fn text(message: &Message) -> Value {
    match &message.content {
        Some(Content::Text(text)) => json!(text),
        other => json!(format!("{other:?}")),
    }
}

/// A compression lineage with a replayed question, a merge and a stray
/// tool result: the repaired model history of the tip, the display
/// history of the whole lineage, the ancestors' prefix, and a window with
/// its bookends; every answer also as the recorded one.
pub fn resume_and_anchored_views_read_a_lineage_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    s.create_session(&NewSession::new("root", "tui").model("m1"))
        .unwrap();
    let root = [
        ("user", json!("first")),
        ("assistant", json!("")),
        ("assistant", json!("answer")),
        ("tool", json!("stray")),
        ("user", json!([{"type": "text", "text": "look"}])),
        ("assistant", json!("more")),
        ("user", json!("pending")),
    ];
    let mut ids = Vec::new();
    for (i, (role, content)) in root.into_iter().enumerate() {
        let content: Content = content.into();
        ids.push(
            s.append_message(&message("root", role, content, 100.0 + i as f64))
                .unwrap(),
        );
    }
    s.end_session("root", "compression").unwrap();
    s.create_session(&child_from("tip", "tui", "root")).unwrap();
    let tip = [
        ("user", "pending"),
        ("assistant", "a"),
        ("assistant", "b"),
        ("user", "c"),
        ("user", "d"),
    ];
    for (i, (role, content)) in tip.into_iter().enumerate() {
        s.append_message(&message("tip", role, content, 200.0 + i as f64))
            .unwrap();
    }

    let resumed = s.get_resume_conversations("tip").unwrap();
    let model: Vec<&Value> = resumed
        .model_history
        .iter()
        .map(|m| &m["content"])
        .collect();
    assert_eq!(
        model,
        [&json!("pending"), &json!("a\nb"), &json!("c\n\nd")],
        "{n}"
    );
    assert_eq!(resumed.display_history.len(), 11, "{n}");
    let nobody = s.get_resume_conversations("nobody").unwrap();
    assert!(
        nobody.model_history.is_empty() && nobody.display_history.is_empty(),
        "{n}"
    );
    let prefix = s.get_ancestor_display_prefix("tip").unwrap();
    assert_eq!(prefix.len(), 7, "{n}");
    assert!(
        s.get_ancestor_display_prefix("root").unwrap().is_empty(),
        "{n}"
    );

    // The window around the sixth message, one on each side, every role
    // kept; bookends of five messages with content.
    let view = s.get_anchored_view("root", ids[5], 1, 5, None).unwrap();
    let start: Vec<Value> = view.bookend_start.iter().map(text).collect();
    assert_eq!(
        start,
        [json!("first"), json!("answer"), json!("stray")],
        "{n}"
    );
    let window: Vec<i64> = view.window.iter().map(|m| m.id).collect();
    assert_eq!(window, ids[4..7], "{n}");
    // Only some roles kept; the anchor stays whatever its role.
    let kept = s
        .get_anchored_view("root", ids[3], 0, 2, Some(&["tool", "user"]))
        .unwrap();
    assert_eq!(
        kept.window.iter().map(|m| m.id).collect::<Vec<_>>(),
        [ids[3]],
        "{n}"
    );
    super::agreed::check(
        "originals_methods::resume_and_anchored_views_read_a_lineage_alike",
        n,
        &(resumed, prefix, view, kept),
    );
}
