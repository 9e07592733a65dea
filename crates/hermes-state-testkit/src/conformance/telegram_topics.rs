//! The Telegram DM topic tables (`api.md` §12.4), created on request only,
//! on both backends: the same tables, columns in order, keys and indexes by
//! name, the meta key, idempotence, a binding going with its session, and a
//! read-only handle refused.

use hermes_state_types::ErrorKind;
use hermes_state_types::NewSession;

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
        "SELECT indexname::text FROM pg_indexes WHERE schemaname = current_schema() \
         AND tablename = 'telegram_dm_topic_bindings' AND indexname LIKE 'idx_%' \
         AND indexdef LIKE 'CREATE UNIQUE INDEX%'",
    );
    assert_eq!(unique, ["idx_telegram_dm_topic_bindings_session"], "{n}");
    // The same columns in the same order on every backend.
    super::agreed::check(
        "telegram_topics::the_telegram_topic_tables_are_created_on_request_only_alike",
        n,
        &(mode, bindings),
    );
}
