//! Telegram DM topic mode (`api.md` §12.4's opt-in tables): the original's
//! ten calls, before and after the opt-in.

use hermes_state::rusqlite::types::Value as Sql;
use hermes_state::serde_json::{self, json};
use hermes_state::{
    ALREADY_LINKED, Clock, ErrorKind, NewMessage, NewSession, OriginalError, SessionDb,
};
use hermes_state::{TopicBindingRequest, by_name};

use super::Clocked;
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Coordination;
use hermes_state_core::store::Messages;
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

fn topic_tables(db: &SessionDb) -> i64 {
    db.read(|conn| {
        Ok(conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name LIKE 'telegram_dm_topic%'",
                [],
                |r| r.get(0),
            )
            .expect("count"))
    })
    .expect("read")
}

fn mode_row(db: &SessionDb, chat: &str) -> Vec<Sql> {
    db.read(|conn| {
        Ok(crate::common::query_row(
            conn,
            "SELECT user_id, enabled, activated_at, updated_at, has_topics_enabled, \
             allows_users_to_create_topics, capability_checked_at \
             FROM telegram_dm_topic_mode WHERE chat_id = ?1",
            [chat],
        ))
    })
    .expect("read")
}

#[test]
fn before_the_opt_in_every_call_answers_nothing_and_no_table_is_made() {
    let s = Clocked::at(1000.0);
    telegram(&s.db, "t1", "7");
    let db = &s.db;
    assert!(!db.is_telegram_topic_mode_enabled("100", "7").unwrap());
    assert_eq!(db.get_telegram_topic_binding("100", "1").unwrap(), None);
    assert!(
        db.list_telegram_topic_bindings_for_chat("100")
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        db.get_telegram_topic_binding_by_session("t1").unwrap(),
        None
    );
    assert!(!db.is_telegram_session_linked_to_topic("t1").unwrap());
    assert_eq!(db.delete_telegram_topic_binding("100", "1").unwrap(), 0);
    db.disable_telegram_topic_mode("100", true).unwrap();
    let unlinked = db
        .list_unlinked_telegram_sessions_for_user("7", 10)
        .unwrap();
    assert_eq!(
        unlinked.len(),
        1,
        "every session is unlinked without bindings"
    );
    assert_eq!(topic_tables(db), 0, "only the opt-in creates the tables");
    assert_eq!(
        db.get_meta("telegram_dm_topic_schema_version").unwrap(),
        None
    );
}

#[test]
fn enabling_upserts_the_chat_row_and_keeps_its_activation_time() {
    let s = Clocked::at(1000.0);
    s.db.enable_telegram_topic_mode("100", "7", Some(true), Some(false))
        .unwrap();
    assert_eq!(
        mode_row(&s.db, "100"),
        [
            Sql::Text("7".into()),
            Sql::Integer(1),
            Sql::Real(1000.0),
            Sql::Real(1000.0),
            Sql::Integer(1),
            Sql::Integer(0),
            Sql::Real(1000.0)
        ]
    );
    assert_eq!(
        s.db.get_meta("telegram_dm_topic_schema_version").unwrap(),
        Some("2".into())
    );
    s.clock.set(2000.0);
    s.db.disable_telegram_topic_mode("100", true).unwrap();
    assert_eq!(mode_row(&s.db, "100")[1], Sql::Integer(0));
    s.clock.set(3000.0);
    s.db.enable_telegram_topic_mode("100", "8", None, None)
        .unwrap();
    assert_eq!(
        mode_row(&s.db, "100"),
        [
            Sql::Text("8".into()),
            Sql::Integer(1),
            Sql::Real(1000.0),
            Sql::Real(3000.0),
            Sql::Null,
            Sql::Null,
            Sql::Real(3000.0)
        ]
    );
    // The mode belongs to the chat and its current user.
    assert!(s.db.is_telegram_topic_mode_enabled("100", "8").unwrap());
    assert!(!s.db.is_telegram_topic_mode_enabled("100", "7").unwrap());
}

#[test]
fn a_session_binds_to_one_topic_and_a_topic_to_one_session() {
    let s = Clocked::at(1000.0);
    for id in ["t1", "t2"] {
        telegram(&s.db, id, "7");
    }
    let db = &s.db;
    db.bind_telegram_topic(&bind("100", "11", "t1")).unwrap();
    s.clock.set(1500.0);
    // Rebinding the same topic to the same session: updated, linked_at kept.
    db.bind_telegram_topic(&TopicBindingRequest {
        session_key: "key2",
        managed_mode: "manual",
        ..bind("100", "11", "t1")
    })
    .unwrap();
    let binding = db.get_telegram_topic_binding("100", "11").unwrap().unwrap();
    assert_eq!(
        serde_json::to_value(&binding).unwrap(),
        json!({"chat_id": "100", "thread_id": "11", "user_id": "7", "session_key": "key2",
               "session_id": "t1", "managed_mode": "manual", "linked_at": 1000.0,
               "updated_at": 1500.0})
    );
    let keys: Vec<String> = serde_json::to_value(&binding)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        keys,
        [
            "chat_id",
            "thread_id",
            "user_id",
            "session_key",
            "session_id",
            "managed_mode",
            "linked_at",
            "updated_at"
        ],
        "the table's column order"
    );
    // Refusals: the original's ValueError, and the key's FOREIGN KEY failure.
    let elsewhere = db
        .bind_telegram_topic(&bind("100", "12", "t1"))
        .unwrap_err();
    assert_eq!(
        elsewhere.original_class(),
        Some(OriginalError::InvalidValue)
    );
    assert_eq!(elsewhere.to_string(), ALREADY_LINKED);
    let unknown = db
        .bind_telegram_topic(&bind("100", "13", "nobody"))
        .unwrap_err();
    assert_eq!(unknown.original_class(), Some(OriginalError::ForeignKey));
    assert_eq!(
        db.list_telegram_topic_bindings_for_chat("100")
            .unwrap()
            .len(),
        1
    );
    // A topic rebound to another session moves.
    s.clock.set(2000.0);
    db.bind_telegram_topic(&bind("100", "11", "t2")).unwrap();
    assert!(!db.is_telegram_session_linked_to_topic("t1").unwrap());
    assert!(db.is_telegram_session_linked_to_topic("t2").unwrap());
    assert_eq!(
        db.get_telegram_topic_binding_by_session("t2")
            .unwrap()
            .map(|b| (b.thread_id, b.linked_at)),
        Some(("11".to_owned(), 1000.0))
    );
}

#[test]
fn deleting_the_last_binding_of_a_chat_turns_its_topic_mode_off() {
    let s = Clocked::at(1000.0);
    for id in ["t1", "t2"] {
        telegram(&s.db, id, "7");
    }
    let db = &s.db;
    db.enable_telegram_topic_mode("100", "7", None, None)
        .unwrap();
    db.bind_telegram_topic(&bind("100", "11", "t1")).unwrap();
    s.clock.set(1100.0);
    db.bind_telegram_topic(&bind("100", "12", "t2")).unwrap();
    let order: Vec<String> = db
        .list_telegram_topic_bindings_for_chat("100")
        .unwrap()
        .into_iter()
        .map(|b| b.thread_id)
        .collect();
    assert_eq!(order, ["12", "11"], "most recently updated first");
    let cases = [
        ("99", 0, true),
        ("11", 1, true),
        ("11", 0, true),
        ("12", 1, false),
    ];
    for (thread, deleted, enabled) in cases {
        s.clock.set(s.clock.now() + 10.0);
        assert_eq!(
            db.delete_telegram_topic_binding("100", thread).unwrap(),
            deleted,
            "thread {thread}"
        );
        assert_eq!(
            db.is_telegram_topic_mode_enabled("100", "7").unwrap(),
            enabled,
            "after deleting thread {thread}"
        );
    }
    assert_eq!(mode_row(&s.db, "100")[3], Sql::Real(1140.0));
    // Disabling keeps or clears the bindings; a deleted session takes its
    // binding with it (ON DELETE CASCADE).
    db.bind_telegram_topic(&bind("100", "21", "t1")).unwrap();
    db.disable_telegram_topic_mode("100", false).unwrap();
    assert_eq!(
        db.list_telegram_topic_bindings_for_chat("100")
            .unwrap()
            .len(),
        1
    );
    db.disable_telegram_topic_mode("100", true).unwrap();
    assert!(
        db.list_telegram_topic_bindings_for_chat("100")
            .unwrap()
            .is_empty()
    );
    db.bind_telegram_topic(&bind("200", "1", "t2")).unwrap();
    db.delete_session("t2").unwrap();
    assert!(
        db.list_telegram_topic_bindings_for_chat("200")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn unlinked_sessions_are_the_users_telegram_sessions_without_a_topic() {
    let s = Clocked::at(1000.0);
    let db = &s.db;
    telegram(db, "old", "7");
    telegram(db, "bound", "7");
    telegram(db, "other-user", "8");
    db.create_session(&NewSession::new("cli", "cli").user_id("7"))
        .unwrap();
    s.clock.set(1100.0);
    telegram(db, "new", "7");
    let long = format!("  line one\nline two\r\n{}", "x".repeat(80));
    db.append_message(
        &NewMessage::new("old", "user")
            .content(long.as_str())
            .timestamp(2000.0),
    )
    .unwrap();
    db.bind_telegram_topic(&bind("100", "1", "bound")).unwrap();
    let listed = db
        .list_unlinked_telegram_sessions_for_user("7", 10)
        .unwrap();
    let rows: Vec<(String, f64, String)> = listed
        .iter()
        .map(|r| (r.session.id.clone(), r.last_active, r.preview.clone()))
        .collect();
    assert_eq!(
        rows,
        [
            (
                "old".to_owned(),
                2000.0,
                format!("line one line two  {}...", "x".repeat(41))
            ),
            ("new".to_owned(), 1100.0, String::new()),
        ]
    );
    assert_eq!(
        db.list_unlinked_telegram_sessions_for_user("7", 1)
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        db.list_unlinked_telegram_sessions_for_user("7", -1)
            .unwrap()
            .len(),
        2
    );
    let value = serde_json::to_value(&listed[1]).unwrap();
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(
        keys[keys.len() - 2..],
        ["last_active", "preview"],
        "the session's columns, then last_active and preview"
    );
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
