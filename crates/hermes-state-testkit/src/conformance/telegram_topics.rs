//! The Telegram DM topic tables (`api.md` §12.4), created on request only,
//! on both backends: the same tables, columns in order, keys and indexes by
//! name, the meta key, idempotence, a binding going with its session, and a
//! read-only handle refused; then the original's calls of its topic mode,
//! before and after the opt-in, their rows and times.

use hermes_state_core::OriginalError;
use hermes_state_core::telegram_topics::{ALREADY_LINKED, TopicBindingRequest};
use hermes_state_types::ErrorKind;
use hermes_state_types::NewSession;
use serde_json::{Value, json};

use super::raw::text;
use super::{Backend, TestStore};

/// Runs one query of one text column on the backend's store, raw, in
/// the backend's own dialect (the catalogs differ).
fn strings(b: &TestStore, sqlite: &str, postgres: &str) -> Vec<String> {
    let sql = if b.name() == "sqlite" {
        sqlite
    } else {
        postgres
    };
    b.query(sql).iter().map(|row| text(&row[0])).collect()
}

fn columns(b: &TestStore, table: &str) -> Vec<String> {
    strings(
        b,
        &format!("SELECT name FROM pragma_table_info('{table}') ORDER BY cid"),
        &format!(
            "SELECT column_name::text FROM information_schema.columns \
             WHERE table_schema = current_schema() AND table_name = '{table}' \
             ORDER BY ordinal_position"
        ),
    )
}

fn indexes(b: &TestStore) -> Vec<String> {
    strings(
        b,
        "SELECT name FROM sqlite_master WHERE type = 'index' \
         AND name LIKE 'idx_telegram_dm_topic%' ORDER BY name",
        "SELECT indexname::text FROM pg_indexes WHERE schemaname = current_schema() \
         AND indexname LIKE 'idx_telegram_dm_topic%' ORDER BY indexname",
    )
}

pub fn the_telegram_topic_tables_are_created_on_request_only_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    assert!(columns(&b, "telegram_dm_topic_mode").is_empty(), "{n}");
    let reader = b.read_only();
    assert_eq!(
        reader.apply_telegram_topic_migration().unwrap_err().kind(),
        ErrorKind::ReadOnly,
        "{n}"
    );
    assert!(columns(&b, "telegram_dm_topic_mode").is_empty(), "{n}");

    s.apply_telegram_topic_migration().unwrap();
    s.apply_telegram_topic_migration().unwrap();
    assert_eq!(
        s.get_meta("telegram_dm_topic_schema_version")
            .unwrap()
            .as_deref(),
        Some("2"),
        "{n}"
    );
    // A binding is `auto` by default and goes with its session, deleted
    // alone or in a batch.
    for (id, thread) in [("bound", "t"), ("bound2", "t2")] {
        s.create_session(&NewSession::new(id, "telegram")).unwrap();
        b.exec(&format!(
            "INSERT INTO telegram_dm_topic_bindings \
             (chat_id, thread_id, user_id, session_key, session_id, linked_at, updated_at) \
             VALUES ('c', '{thread}', 'u', 'k', '{id}', 1.0, 1.0)"
        ));
    }
    let mode = "SELECT managed_mode FROM telegram_dm_topic_bindings";
    assert_eq!(strings(&b, mode, mode), ["auto", "auto"], "{n}");
    assert!(s.delete_session("bound").unwrap(), "{n}");
    assert_eq!(s.delete_sessions(&["bound2"], None).unwrap(), 1, "{n}");
    let left = strings(
        &b,
        "SELECT chat_id FROM telegram_dm_topic_bindings",
        "SELECT chat_id FROM telegram_dm_topic_bindings",
    );
    assert!(left.is_empty(), "{n}: {left:?}");
    let mode = columns(&b, "telegram_dm_topic_mode");
    let bindings = columns(&b, "telegram_dm_topic_bindings");
    let idx = indexes(&b);
    assert_eq!(mode.len(), 10, "{n}: {mode:?}");
    assert_eq!(bindings.len(), 8, "{n}: {bindings:?}");
    assert_eq!(
        idx,
        [
            "idx_telegram_dm_topic_bindings_session",
            "idx_telegram_dm_topic_bindings_user"
        ],
        "{n}"
    );
    let unique = strings(
        &b,
        "SELECT name FROM pragma_index_list('telegram_dm_topic_bindings') \
         WHERE \"unique\" = 1 AND origin = 'c'",
        // `pg_index.indisunique`, not `pg_indexes.indexdef`: the server may
        // compute a filter's `pg_get_indexdef` for other schemas' indexes
        // too, which fails on one a parallel test is dropping.
        "SELECT c.relname::text FROM pg_index i \
         JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid \
         WHERE t.relnamespace = current_schema()::regnamespace \
         AND t.relname = 'telegram_dm_topic_bindings' AND c.relname LIKE 'idx_%' \
         AND i.indisunique",
    );
    assert_eq!(unique, ["idx_telegram_dm_topic_bindings_session"], "{n}");
    // The same columns in the same order on every backend.
    super::agreed::check(
        "telegram_topics::the_telegram_topic_tables_are_created_on_request_only_alike",
        n,
        &(mode, bindings),
    );
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

/// Telegram sessions of a user.
fn telegram(b: &TestStore, ids: &[&str], user: &str) {
    for id in ids {
        b.create_session(&NewSession::new(*id, "telegram").user_id(user))
            .unwrap();
    }
}

/// A chat's topic mode row, raw: user, flags and times.
fn mode_row(b: &TestStore, chat: &str) -> Value {
    let sql = format!(
        "SELECT user_id, enabled, activated_at, updated_at, has_topics_enabled, \
         allows_users_to_create_topics, capability_checked_at \
         FROM telegram_dm_topic_mode WHERE chat_id = '{chat}'"
    );
    Value::from(b.query(&sql).remove(0))
}

/// Before the opt-in no call (a disable neither) makes a table or the
/// meta key; enabling upserts the chat's row, keeping its activation
/// time, and the mode belongs to the chat's current user.
pub fn no_call_before_the_opt_in_makes_a_table_and_enabling_keeps_the_activation_alike(
    backend: &dyn Backend,
) {
    let b = backend.open_at(1000.0);
    let n = b.name();
    telegram(&b, &["t1"], "7");
    assert!(
        !b.is_telegram_topic_mode_enabled("100", "7").unwrap(),
        "{n}"
    );
    assert!(
        b.get_telegram_topic_binding("100", "1").unwrap().is_none(),
        "{n}"
    );
    assert!(
        b.list_telegram_topic_bindings_for_chat("100")
            .unwrap()
            .is_empty(),
        "{n}"
    );
    assert!(
        b.get_telegram_topic_binding_by_session("t1")
            .unwrap()
            .is_none(),
        "{n}"
    );
    assert!(!b.is_telegram_session_linked_to_topic("t1").unwrap(), "{n}");
    assert_eq!(
        b.delete_telegram_topic_binding("100", "1").unwrap(),
        0,
        "{n}"
    );
    b.disable_telegram_topic_mode("100", true).unwrap();
    let unlinked = b.list_unlinked_telegram_sessions_for_user("7", 10).unwrap();
    assert_eq!(unlinked.len(), 1, "{n}");
    for table in ["telegram_dm_topic_mode", "telegram_dm_topic_bindings"] {
        assert!(columns(&b, table).is_empty(), "{n}: {table}");
    }
    let version = "telegram_dm_topic_schema_version";
    assert_eq!(b.get_meta(version).unwrap(), None, "{n}");

    b.enable_telegram_topic_mode("100", "7", Some(true), Some(false))
        .unwrap();
    let first = json!(["7", 1, 1000.0, 1000.0, 1, 0, 1000.0]);
    assert_eq!(mode_row(&b, "100"), first, "{n}");
    assert_eq!(b.get_meta(version).unwrap().as_deref(), Some("2"), "{n}");
    b.writer_at(2000.0)
        .disable_telegram_topic_mode("100", true)
        .unwrap();
    assert_eq!(mode_row(&b, "100")[1], 0, "{n}");
    b.writer_at(3000.0)
        .enable_telegram_topic_mode("100", "8", None, None)
        .unwrap();
    let again = json!(["8", 1, 1000.0, 3000.0, null, null, 3000.0]);
    assert_eq!(mode_row(&b, "100"), again, "{n}");
    assert!(b.is_telegram_topic_mode_enabled("100", "8").unwrap(), "{n}");
    assert!(
        !b.is_telegram_topic_mode_enabled("100", "7").unwrap(),
        "{n}"
    );
}

/// A session binds to one topic and a topic to one session: a rebinding
/// updates the row and keeps `linked_at` (the binding's keys in the
/// table's column order); a session bound elsewhere or unknown is refused
/// with the original's class; a topic rebound moves to the new session.
pub fn a_session_binds_to_one_topic_and_a_topic_to_one_session_alike(backend: &dyn Backend) {
    let b = backend.open_at(1000.0);
    let n = b.name();
    telegram(&b, &["t1", "t2"], "7");
    b.bind_telegram_topic(&bind("100", "11", "t1")).unwrap();
    let rebind = TopicBindingRequest {
        session_key: "key2",
        managed_mode: "manual",
        ..bind("100", "11", "t1")
    };
    b.writer_at(1500.0).bind_telegram_topic(&rebind).unwrap();
    let binding = b.get_telegram_topic_binding("100", "11").unwrap().unwrap();
    let expected = json!({"chat_id": "100", "thread_id": "11", "user_id": "7",
        "session_key": "key2", "session_id": "t1", "managed_mode": "manual",
        "linked_at": 1000.0, "updated_at": 1500.0});
    // As text: the keys' order counts.
    let value = serde_json::to_value(&binding).unwrap();
    assert_eq!(value.to_string(), expected.to_string(), "{n}");

    let elsewhere = b.bind_telegram_topic(&bind("100", "12", "t1")).unwrap_err();
    let class = elsewhere.original_class();
    assert_eq!(class, Some(OriginalError::InvalidValue), "{n}");
    assert_eq!(elsewhere.to_string(), ALREADY_LINKED, "{n}");
    let unknown = b
        .bind_telegram_topic(&bind("100", "13", "nobody"))
        .unwrap_err();
    let class = unknown.original_class();
    assert_eq!(class, Some(OriginalError::ForeignKey), "{n}");
    assert_eq!(
        b.list_telegram_topic_bindings_for_chat("100")
            .unwrap()
            .len(),
        1,
        "{n}"
    );

    b.writer_at(2000.0)
        .bind_telegram_topic(&bind("100", "11", "t2"))
        .unwrap();
    assert!(!b.is_telegram_session_linked_to_topic("t1").unwrap(), "{n}");
    assert!(b.is_telegram_session_linked_to_topic("t2").unwrap(), "{n}");
    let moved = b.get_telegram_topic_binding_by_session("t2").unwrap();
    let moved = moved.map(|m| (m.thread_id, m.linked_at));
    assert_eq!(moved, Some(("11".to_owned(), 1000.0)), "{n}");
}

/// A chat's bindings are listed most recently updated first; deleting its
/// last binding turns its topic mode off (an unknown thread deletes
/// nothing); disabling keeps or clears the bindings; a deleted session
/// takes its binding along.
pub fn deleting_the_last_binding_of_a_chat_turns_its_topic_mode_off_alike(backend: &dyn Backend) {
    let b = backend.open_at(1000.0);
    let n = b.name();
    telegram(&b, &["t1", "t2"], "7");
    b.enable_telegram_topic_mode("100", "7", None, None)
        .unwrap();
    b.bind_telegram_topic(&bind("100", "11", "t1")).unwrap();
    b.writer_at(1100.0)
        .bind_telegram_topic(&bind("100", "12", "t2"))
        .unwrap();
    let listed = b.list_telegram_topic_bindings_for_chat("100").unwrap();
    let order: Vec<&str> = listed.iter().map(|l| l.thread_id.as_str()).collect();
    assert_eq!(order, ["12", "11"], "{n}");
    let cases = [
        ("99", 0, true),
        ("11", 1, true),
        ("11", 0, true),
        ("12", 1, false),
    ];
    for (i, (thread, deleted, enabled)) in cases.into_iter().enumerate() {
        let at = b.writer_at(1110.0 + 10.0 * i as f64);
        let got = at.delete_telegram_topic_binding("100", thread).unwrap();
        assert_eq!(got, deleted, "{n}: thread {thread}");
        let now = b.is_telegram_topic_mode_enabled("100", "7").unwrap();
        assert_eq!(now, enabled, "{n}: after thread {thread}");
    }
    assert_eq!(mode_row(&b, "100")[3], 1140.0, "{n}");
    b.bind_telegram_topic(&bind("100", "21", "t1")).unwrap();
    b.disable_telegram_topic_mode("100", false).unwrap();
    assert_eq!(
        b.list_telegram_topic_bindings_for_chat("100")
            .unwrap()
            .len(),
        1,
        "{n}"
    );
    b.disable_telegram_topic_mode("100", true).unwrap();
    assert!(
        b.list_telegram_topic_bindings_for_chat("100")
            .unwrap()
            .is_empty(),
        "{n}"
    );
    b.bind_telegram_topic(&bind("200", "1", "t2")).unwrap();
    b.delete_session("t2").unwrap();
    assert!(
        b.list_telegram_topic_bindings_for_chat("200")
            .unwrap()
            .is_empty(),
        "{n}"
    );
}

/// A user's unlinked sessions are their Telegram sessions without a
/// topic, by last activity, with a preview (whitespace collapsed, 60
/// characters and `...`); a negative limit is none; a row serialises as
/// the session's columns, then `last_active` and `preview`.
pub fn unlinked_sessions_are_the_users_telegram_sessions_without_a_topic_alike(
    backend: &dyn Backend,
) {
    let b = backend.open_at(1000.0);
    let n = b.name();
    telegram(&b, &["old", "bound"], "7");
    telegram(&b, &["other-user"], "8");
    b.create_session(&NewSession::new("cli", "cli").user_id("7"))
        .unwrap();
    b.writer_at(1100.0)
        .create_session(&NewSession::new("new", "telegram").user_id("7"))
        .unwrap();
    let long = format!("  line one\nline two\r\n{}", "x".repeat(80));
    crate::build::say(&*b.store, "old", long.as_str(), 2000.0);
    b.bind_telegram_topic(&bind("100", "1", "bound")).unwrap();
    let listed = b.list_unlinked_telegram_sessions_for_user("7", 10).unwrap();
    let rows: Vec<(&str, f64, &str)> = listed
        .iter()
        .map(|r| (r.session.id.as_str(), r.last_active, r.preview.as_str()))
        .collect();
    let preview = format!("line one line two  {}...", "x".repeat(41));
    assert_eq!(
        rows,
        [("old", 2000.0, preview.as_str()), ("new", 1100.0, "")],
        "{n}"
    );
    let count = |limit| {
        b.list_unlinked_telegram_sessions_for_user("7", limit)
            .unwrap()
            .len()
    };
    assert_eq!((count(1), count(-1)), (1, 2), "{n}");
    let value = serde_json::to_value(&listed[1]).unwrap();
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(keys[keys.len() - 2..], ["last_active", "preview"], "{n}");
}
