//! The Telegram DM topic tables (`api.md` §12.4), created on request only,
//! on both backends: the same tables, columns in order, keys and indexes by
//! name, the meta key, idempotence, a binding going with its session, and a
//! read-only handle refused.

use hermes_state::{ErrorKind, NewSession, StoreLocation, open_store};

use super::backends::{Backend, backends};

/// Runs one query of one text column on the backend's store, raw.
fn strings(b: &Backend, sqlite: &str, postgres: &str) -> Vec<String> {
    if let Some(mut client) = b.pg_client() {
        return client
            .query(postgres, &[])
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
    }
    let StoreLocation::Sqlite(path) = &b.location else {
        unreachable!("a SQLite backend has a path")
    };
    let conn = hermes_state::rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn.prepare(sqlite).unwrap();
    stmt.query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn columns(b: &Backend, table: &str) -> Vec<String> {
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

fn indexes(b: &Backend) -> Vec<String> {
    strings(
        b,
        "SELECT name FROM sqlite_master WHERE type = 'index' \
         AND name LIKE 'idx_telegram_dm_topic%' ORDER BY name",
        "SELECT indexname::text FROM pg_indexes WHERE schemaname = current_schema() \
         AND indexname LIKE 'idx_telegram_dm_topic%' ORDER BY indexname",
    )
}

#[test]
fn the_telegram_topic_tables_are_created_on_request_only_alike() {
    let mut seen = Vec::new();
    for b in backends("telegram topic tables") {
        let s = &b.store;
        let n = b.name();
        assert!(columns(&b, "telegram_dm_topic_mode").is_empty(), "{n}");
        let reader = open_store(&b.location, true).unwrap();
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
        // A binding goes with its session.
        s.create_session(&NewSession::new("bound", "telegram"))
            .unwrap();
        b.exec(
            "INSERT INTO telegram_dm_topic_bindings \
             (chat_id, thread_id, user_id, session_key, session_id, linked_at, updated_at) \
             VALUES ('c', 't', 'u', 'k', 'bound', 1.0, 1.0)",
        );
        assert!(s.delete_session("bound").unwrap(), "{n}");
        let left = strings(
            &b,
            "SELECT chat_id FROM telegram_dm_topic_bindings",
            "SELECT chat_id FROM telegram_dm_topic_bindings",
        );
        assert!(left.is_empty(), "{n}: {left:?}");
        seen.push((
            n,
            columns(&b, "telegram_dm_topic_mode"),
            columns(&b, "telegram_dm_topic_bindings"),
            indexes(&b),
        ));
    }
    let (name, mode, bindings, idx) = &seen[0];
    assert_eq!(mode.len(), 10, "{name}: {mode:?}");
    assert_eq!(bindings.len(), 8, "{name}: {bindings:?}");
    assert_eq!(
        idx,
        &[
            "idx_telegram_dm_topic_bindings_session",
            "idx_telegram_dm_topic_bindings_user"
        ],
        "{name}"
    );
    for other in &seen[1..] {
        assert_eq!(&other.1, mode, "{} against {name}", other.0);
        assert_eq!(&other.2, bindings, "{} against {name}", other.0);
        assert_eq!(&other.3, idx, "{} against {name}", other.0);
    }
}
