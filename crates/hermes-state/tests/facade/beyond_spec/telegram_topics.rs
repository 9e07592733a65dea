//! Telegram DM topic mode (`api.md` §12.4's opt-in tables) where the file or
//! the facade shows more than the contract: a read-only handle leaves the
//! file's bytes as they were, and the calls by the original's names read
//! ids as Python's `str` does. The calls themselves, before and after the
//! opt-in, are the conformance suite's `telegram_topics` cases.

use hermes_state::serde_json::{self, json};
use hermes_state::{ErrorKind, NewSession, SessionDb};
use hermes_state::{TopicBindingRequest, by_name};

use super::Clocked;
use hermes_state_core::store::Coordination;
use hermes_state_core::store::Sessions;

fn telegram(db: &SessionDb, id: &str, user: &str) {
    db.create_session(&NewSession::new(id, "telegram").user_id(user))
        .expect("create_session");
}

fn bind<'a>(chat: &'a str, thread: &'a str, session: &'a str) -> TopicBindingRequest<'a> {
    TopicBindingRequest {
        chat_id: chat,
        thread_id: thread,
        user_id: "7",
        session_key: "key",
        session_id: session,
        managed_mode: "auto",
    }
}

#[test]
fn reads_on_a_read_only_handle_write_nothing() {
    let s = Clocked::at(1000.0);
    telegram(&s.db, "t1", "7");
    s.db.bind_telegram_topic(&bind("100", "1", "t1")).unwrap();
    s.db.close().unwrap();
    let before = std::fs::read(&s.path).unwrap();
    let ro = SessionDb::open_read_only(&s.path).unwrap();
    assert!(ro.is_telegram_session_linked_to_topic("t1").unwrap());
    assert_eq!(
        ro.get_telegram_topic_binding("100", "1")
            .unwrap()
            .unwrap()
            .session_id,
        "t1"
    );
    assert_eq!(
        ro.list_unlinked_telegram_sessions_for_user("7", 10)
            .unwrap()
            .len(),
        0
    );
    let refused = ro.bind_telegram_topic(&bind("100", "2", "t1")).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::ReadOnly);
    drop(ro);
    assert!(
        std::fs::read(&s.path).unwrap() == before,
        "the file is unchanged"
    );
}

#[test]
fn by_name_reads_ids_as_pythons_str_does() {
    let s = Clocked::at(1000.0);
    telegram(&s.db, "t1", "7");
    let call =
        |op: &str, args: serde_json::Value| by_name::call(&s.db, op, args.as_object().unwrap());
    call(
        "bind_telegram_topic",
        json!({"chat_id": 100, "thread_id": 11, "user_id": 7, "session_key": "k", "session_id": "t1"}),
    )
    .unwrap();
    let found = call(
        "get_telegram_topic_binding",
        json!({"chat_id": "100", "thread_id": "11"}),
    )
    .unwrap();
    assert_eq!(found["chat_id"], json!("100"));
    assert_eq!(found["managed_mode"], json!("auto"));
    let refused = call(
        "bind_telegram_topic",
        json!({"chat_id": 100, "thread_id": 12, "user_id": 7, "session_key": "k", "session_id": "t1"}),
    )
    .unwrap_err();
    assert_eq!(refused.trace_kind(), Some("invalid.value"));
    let missing = call(
        "list_unlinked_telegram_sessions_for_user",
        json!({"user_id": "7"}),
    )
    .unwrap_err();
    assert_eq!(
        missing.trace_kind(),
        Some("invalid.argument"),
        "chat_id is required"
    );
}
