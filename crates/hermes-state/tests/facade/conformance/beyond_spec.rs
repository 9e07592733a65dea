//! The original's methods beyond `api.md` that both backends offer (the
//! Telegram topic calls, the anchored and resume views, the lineage
//! export), called by name with the same script on each: the answers are
//! the same JSON on SQLite and PostgreSQL, and the checked ones are the
//! original's (docs/DECISIONS.md, "The original's methods beyond
//! `api.md`"). The FTS maintenance calls are SQLite's own: by name they
//! answer the `file-only` boundary on PostgreSQL.

use hermes_state::by_name::{self, CallError, FILE_ONLY};
use hermes_state::serde_json::{Value, json};
use hermes_state::{ALREADY_LINKED, NewMessage, NewSession, SessionStore};

use super::backends::backends_at;

fn call(store: &dyn SessionStore, op: &str, args: Value) -> Value {
    match by_name::call(store, op, args.as_object().expect("keyword arguments")) {
        Ok(value) => value,
        Err(CallError::Library(error)) => json!({
            "error": error.original_class().map(|class| class.trace_kind()),
            "text": error.original_message(),
        }),
        Err(error) => json!({"error": error.trace_kind(), "text": error.to_string()}),
    }
}

fn seed(store: &dyn SessionStore) {
    let message = |session: &str, role: &str, content: Value, at: f64| {
        let mut m = NewMessage::new(session, role).timestamp(at);
        m.content = Some(content.into());
        m
    };
    for (id, user) in [("t1", "7"), ("t2", "7"), ("t3", "8")] {
        store
            .create_session(&NewSession::new(id, "telegram").user_id(user))
            .unwrap();
    }
    store
        .append_message(&message("t1", "user", json!("  hello\nthere  "), 10.0))
        .unwrap();
    store
        .append_message(&message(
            "t2",
            "user",
            json!([{"type": "text", "text": "mm"}]),
            20.0,
        ))
        .unwrap();
    // A compression lineage with a replayed question, a merge and a stray
    // tool result for the resume views; structured and empty contents for
    // the bookends.
    store
        .create_session(&NewSession::new("root", "tui").model("m1"))
        .unwrap();
    let rows = [
        ("root", "user", json!("first")),
        ("root", "assistant", json!("")),
        ("root", "assistant", json!("answer")),
        ("root", "tool", json!("stray")),
        ("root", "user", json!([{"type": "text", "text": "look"}])),
        ("root", "assistant", json!("more")),
        ("root", "user", json!("pending")),
    ];
    for (n, (session, role, content)) in rows.into_iter().enumerate() {
        store
            .append_message(&message(session, role, content, 100.0 + n as f64))
            .unwrap();
    }
    store.end_session("root", "compression").unwrap();
    store
        .create_session(&NewSession::new("tip", "tui").parent_session_id("root"))
        .unwrap();
    for (n, (role, content)) in [
        ("user", "pending"),
        ("assistant", "a"),
        ("assistant", "b"),
        ("user", "c"),
        ("user", "d"),
    ]
    .into_iter()
    .enumerate()
    {
        store
            .append_message(&message("tip", role, json!(content), 200.0 + n as f64))
            .unwrap();
    }
}

fn script() -> Vec<(&'static str, Value)> {
    vec![
        (
            "is_telegram_topic_mode_enabled",
            json!({"chat_id": 100, "user_id": 7}),
        ),
        (
            "get_telegram_topic_binding",
            json!({"chat_id": 100, "thread_id": 1}),
        ),
        (
            "list_telegram_topic_bindings_for_chat",
            json!({"chat_id": 100}),
        ),
        (
            "get_telegram_topic_binding_by_session",
            json!({"session_id": "t1"}),
        ),
        (
            "is_telegram_session_linked_to_topic",
            json!({"session_id": "t1"}),
        ),
        (
            "delete_telegram_topic_binding",
            json!({"chat_id": 100, "thread_id": 1}),
        ),
        ("disable_telegram_topic_mode", json!({"chat_id": 100})),
        (
            "list_unlinked_telegram_sessions_for_user",
            json!({"chat_id": 100, "user_id": 7}),
        ),
        (
            "enable_telegram_topic_mode",
            json!({"chat_id": 100, "user_id": 7, "has_topics_enabled": true,
                   "allows_users_to_create_topics": false}),
        ),
        (
            "is_telegram_topic_mode_enabled",
            json!({"chat_id": "100", "user_id": "7"}),
        ),
        (
            "bind_telegram_topic",
            json!({"chat_id": 100, "thread_id": 1, "user_id": 7, "session_key": "k",
                   "session_id": "t1"}),
        ),
        (
            "bind_telegram_topic",
            json!({"chat_id": 100, "thread_id": 2, "user_id": 7, "session_key": "k",
                   "session_id": "t1"}),
        ),
        (
            "bind_telegram_topic",
            json!({"chat_id": 200, "thread_id": 1, "user_id": 7, "session_key": "k",
                   "session_id": "nobody"}),
        ),
        (
            "bind_telegram_topic",
            json!({"chat_id": 300, "thread_id": 9, "user_id": 7, "session_key": "k3",
                   "session_id": "t3", "managed_mode": "manual"}),
        ),
        (
            "get_telegram_topic_binding",
            json!({"chat_id": 100, "thread_id": 1}),
        ),
        (
            "list_telegram_topic_bindings_for_chat",
            json!({"chat_id": "300"}),
        ),
        (
            "get_telegram_topic_binding_by_session",
            json!({"session_id": "t3"}),
        ),
        (
            "is_telegram_session_linked_to_topic",
            json!({"session_id": "t1"}),
        ),
        (
            "list_unlinked_telegram_sessions_for_user",
            json!({"chat_id": 100, "user_id": 7}),
        ),
        (
            "list_unlinked_telegram_sessions_for_user",
            json!({"chat_id": 1, "user_id": 8, "limit": -1}),
        ),
        (
            "delete_telegram_topic_binding",
            json!({"chat_id": 100, "thread_id": 1}),
        ),
        (
            "is_telegram_topic_mode_enabled",
            json!({"chat_id": 100, "user_id": 7}),
        ),
        (
            "disable_telegram_topic_mode",
            json!({"chat_id": 300, "clear_bindings": false}),
        ),
        (
            "list_telegram_topic_bindings_for_chat",
            json!({"chat_id": 300}),
        ),
        ("disable_telegram_topic_mode", json!({"chat_id": 300})),
        (
            "list_telegram_topic_bindings_for_chat",
            json!({"chat_id": 300}),
        ),
        (
            "get_anchored_view",
            json!({"session_id": "root", "around_message_id": 7, "window": 1}),
        ),
        (
            "get_anchored_view",
            json!({"session_id": "root", "around_message_id": 8, "window": 1, "bookend": 5,
                   "keep_roles": null}),
        ),
        (
            "get_anchored_view",
            json!({"session_id": "root", "around_message_id": 9, "window": 0, "bookend": 2,
                   "keep_roles": ["tool", "user"]}),
        ),
        (
            "get_anchored_view",
            json!({"session_id": "tip", "around_message_id": 4}),
        ),
        ("get_resume_conversations", json!({"session_id": "tip"})),
        ("get_resume_conversations", json!({"session_id": "nobody"})),
        ("get_ancestor_display_prefix", json!({"session_id": "tip"})),
        ("get_ancestor_display_prefix", json!({"session_id": "root"})),
        (
            "get_messages_as_conversation",
            json!({"session_id": "root", "repair_alternation": true}),
        ),
        ("export_session_lineage", json!({"session_id": "root"})),
        ("export_session_lineage", json!({"session_id": "nobody"})),
    ]
}

#[test]
fn the_originals_extra_methods_answer_alike_on_both_backends() {
    let mut answers: Vec<(&str, Vec<Value>)> = Vec::new();
    for b in backends_at("the original's methods beyond api.md", 1000.0) {
        let store = b.store.as_ref();
        seed(store);
        let got = script()
            .into_iter()
            .map(|(op, args)| call(store, op, args))
            .collect();
        answers.push((b.name(), got));
    }
    let (first, expected) = &answers[0];
    let ops = script();
    for (name, got) in &answers[1..] {
        for (n, (op, args)) in ops.iter().enumerate() {
            assert_eq!(
                got[n], expected[n],
                "#{n} {op} {args}: {name} against {first}"
            );
        }
    }
    let at = |op: &str, nth: usize| -> &Value {
        let index = ops
            .iter()
            .enumerate()
            .filter(|(_, (name, _))| *name == op)
            .nth(nth)
            .map(|(i, _)| i)
            .expect("the op is in the script");
        &expected[index]
    };
    // Before the opt-in: nothing, and every Telegram session is unlinked.
    assert_eq!(at("is_telegram_topic_mode_enabled", 0), &json!(false));
    assert_eq!(at("get_telegram_topic_binding", 0), &Value::Null);
    assert_eq!(at("delete_telegram_topic_binding", 0), &json!(0));
    let unlinked: Vec<&Value> = at("list_unlinked_telegram_sessions_for_user", 0)
        .as_array()
        .unwrap()
        .iter()
        .map(|row| &row["id"])
        .collect();
    assert_eq!(unlinked, [&json!("t2"), &json!("t1")]);
    // The refusals keep the original's classes.
    assert_eq!(
        at("bind_telegram_topic", 1),
        &json!({"error": "invalid.value", "text": ALREADY_LINKED})
    );
    assert_eq!(
        at("bind_telegram_topic", 2)["error"],
        json!("integrity.foreign_key")
    );
    assert_eq!(
        at("get_telegram_topic_binding", 1),
        &json!({"chat_id": "100", "thread_id": "1", "user_id": "7", "session_key": "k",
                "session_id": "t1", "managed_mode": "auto", "linked_at": 1000.0,
                "updated_at": 1000.0})
    );
    assert_eq!(
        at("is_telegram_topic_mode_enabled", 2),
        &json!(false),
        "last binding gone"
    );
    assert_eq!(
        at("list_telegram_topic_bindings_for_chat", 2)
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(at("list_telegram_topic_bindings_for_chat", 3), &json!([]));
    // The views.
    let resumed = at("get_resume_conversations", 0);
    let model: Vec<&Value> = resumed[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["content"])
        .collect();
    assert_eq!(model, [&json!("pending"), &json!("a\nb"), &json!("c\n\nd")]);
    assert_eq!(resumed[1].as_array().unwrap().len(), 11, "{resumed}");
    assert_eq!(at("get_resume_conversations", 1), &json!([[], []]));
    assert_eq!(
        at("get_ancestor_display_prefix", 0)
            .as_array()
            .unwrap()
            .len(),
        7
    );
    assert_eq!(at("get_ancestor_display_prefix", 1), &json!([]));
    let bookends = at("get_anchored_view", 1);
    let start: Vec<&Value> = bookends["bookend_start"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["content"])
        .collect();
    assert_eq!(start, [&json!("first"), &json!("answer"), &json!("stray")]);
    assert_eq!(
        at("export_session_lineage", 0)["lineage_session_ids"],
        json!(["root", "tip"])
    );
    assert_eq!(at("export_session_lineage", 1), &Value::Null);
}

#[test]
fn the_fts_steps_are_the_files_own() {
    for b in backends_at("the original's FTS steps", 1000.0) {
        let store = b.store.as_ref();
        let answer = by_name::call(store, "fts_rebuild_status", &Default::default());
        match (b.name(), answer) {
            ("sqlite", Ok(value)) => assert_eq!(value, Value::Null),
            ("postgres", Err(error @ CallError::Boundary { .. })) => {
                assert_eq!(error.trace_kind(), Some(FILE_ONLY));
            }
            (name, other) => panic!("{name}: {other:?}"),
        }
    }
}
