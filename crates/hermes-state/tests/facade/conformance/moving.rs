//! Moving a SQLite store to PostgreSQL (`SessionDb::migrate_to_postgres`):
//! verified, refused into a non-empty target, and the old file marked only
//! after the copy committed. Needs the PostgreSQL test server.

use hermes_state::{
    Content, ErrorKind, NewMessage, NewSession, SUPERSEDED_AT, SUPERSEDED_BY, SessionDb,
    StoreLocation, TokenUpdate, open_store,
};
use serde_json::json;

use hermes_state_core::store::Accounting;
use hermes_state_core::store::Coordination;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Search;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;
use hermes_state_testkit::PgSchema;

/// A fresh schema, and its store URL with a password in it (which must
/// never reach the marker).
struct Target {
    url: String,
    schema: PgSchema,
}

impl Target {
    fn new(case: &str) -> Option<Target> {
        let schema = PgSchema::new("move", case)?;
        let url = schema.url().replacen("postgres@", "postgres:s3cret@", 1);
        Some(Target { url, schema })
    }
}

fn varied_store(db: &SessionDb) {
    // A child whose id sorts before its parent's, and a chain of three.
    db.create_session(&NewSession::new("z-root", "telegram"))
        .unwrap();
    db.end_session("z-root", "compression").unwrap();
    let mut child = NewSession::new("a-child", "telegram");
    child.parent_session_id = Some("z-root".into());
    child.model_config = Some(json!({"temperature": 0.5, "nested": {"k": [1, 2]}}));
    db.create_session(&child).unwrap();
    let mut grandchild = NewSession::new("m-grand", "cli");
    grandchild.parent_session_id = Some("a-child".into());
    db.create_session(&grandchild).unwrap();
    db.set_session_title("a-child", Some("Moving day")).unwrap();
    db.append_message(&NewMessage::new("z-root", "user").content("plain text ✓ 東京"))
        .unwrap();
    db.append_message(
        &NewMessage::new("a-child", "user").content(Content::Structured(
            json!([{"type": "text", "text": "see"}, {"type": "image_url"}]),
        )),
    )
    .unwrap();
    db.append_message(&NewMessage::new("a-child", "tool").content(Content::Bytes(vec![0, 7, 255])))
        .unwrap();
    db.append_message(&NewMessage::new("a-child", "assistant").content(Content::Integer(42)))
        .unwrap();
    db.append_message(
        &NewMessage::new("m-grand", "assistant")
            .content("calling")
            .tool_calls(json!([{"id": "c1", "function": {"name": "f", "arguments": "{}"}}])),
    )
    .unwrap();
    db.update_token_counts(
        "a-child",
        &TokenUpdate {
            input_tokens: 100,
            output_tokens: 7,
            model: Some("anthropic/claude-x".into()),
            estimated_cost_usd: Some(0.125),
            ..TokenUpdate::default()
        },
    )
    .unwrap();
    db.set_meta("custom_key", "value").unwrap();
    // The opt-in Telegram topic tables, with a row each.
    db.apply_telegram_topic_migration().unwrap();
    db.write_raw(|conn| {
        conn.execute_batch(
            "INSERT INTO telegram_dm_topic_mode (chat_id, user_id, activated_at, updated_at, \
             has_topics_enabled) VALUES ('chat-1', 'user-1', 10.5, 11.25, 1); \
             INSERT INTO telegram_dm_topic_bindings (chat_id, thread_id, user_id, session_key, \
             session_id, linked_at, updated_at) \
             VALUES ('chat-1', '7', 'user-1', 'agent:main:telegram:dm:1', 'a-child', 12.0, 12.5)",
        )
        .unwrap();
        Ok(())
    })
    .unwrap();
    db.save_gateway_routing_entry(
        "agent:main:telegram:dm:1",
        &json!({"session_id": "a-child"}).to_string(),
        "",
    )
    .unwrap();
}

#[test]
fn a_moved_store_reads_the_same_and_the_old_file_names_where_it_went() {
    let Some(target) = Target::new("moving") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = SessionDb::open(dir.path().join("state.db")).unwrap();
    varied_store(&db);
    let report = db.migrate_to_postgres(&target.url).unwrap();
    let rows: Vec<(&str, u64)> = report.rows.iter().map(|(t, n)| (t.as_str(), *n)).collect();
    assert_eq!(
        rows,
        [
            ("sessions", 3),
            ("messages", 5),
            ("session_model_usage", 1),
            ("state_meta", 2),
            ("gateway_routing", 1),
            ("telegram_dm_topic_mode", 1),
            ("telegram_dm_topic_bindings", 1)
        ]
    );
    let moved = open_store(&StoreLocation::parse(&target.url).unwrap(), true).unwrap();
    for id in ["z-root", "a-child", "m-grand"] {
        assert_eq!(
            moved.get_session(id).unwrap(),
            db.get_session(id).unwrap(),
            "{id}"
        );
        assert_eq!(
            moved.get_messages(id).unwrap(),
            db.get_messages(id).unwrap(),
            "{id}"
        );
    }
    // The copied rows are merged into the search indexes, not left in
    // their pending lists for every search to read whole: a second merge
    // finds no page left (`gin_clean_pending_list` answers the pages it
    // merged).
    let mut client = target.schema.client();
    let pending: Vec<(String, i64)> = client
        .query(
            &format!(
                "SELECT c.relname::TEXT, gin_clean_pending_list(c.oid::regclass) \
                 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
                 JOIN pg_am a ON a.oid = c.relam \
                 WHERE i.indrelid = '\"{}\".messages'::regclass AND a.amname = 'gin' \
                 ORDER BY 1",
                target.schema.name()
            ),
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    assert_eq!(pending.len(), 3, "the three GIN indexes of messages");
    assert!(pending.iter().all(|(_, pages)| *pages == 0), "{pending:?}");
    // The old file is marked, without the password.
    let by = db.get_meta(SUPERSEDED_BY).unwrap().unwrap();
    assert!(
        by.contains(target.schema.name()) && !by.contains("s3cret"),
        "{by}"
    );
    assert!(db.get_meta(SUPERSEDED_AT).unwrap().is_some());
    // New messages continue after the copied ids.
    let writer = open_store(&StoreLocation::parse(&target.url).unwrap(), false).unwrap();
    let next = writer
        .append_message(&NewMessage::new("m-grand", "user").content("after"))
        .unwrap();
    assert_eq!(next, 6);
    // A second move into the same (now non-empty) store is refused.
    let error = db.migrate_to_postgres(&target.url).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
}

#[test]
fn a_value_postgresql_cannot_hold_stops_the_move_and_nothing_is_marked() {
    let Some(target) = Target::new("moving refused") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = SessionDb::open(dir.path().join("state.db")).unwrap();
    db.create_session(&NewSession::new("ok", "cli")).unwrap();
    let mut bad = NewSession::new("bad", "cli");
    bad.system_prompt = Some("a\0b".into());
    db.create_session(&bad).unwrap();
    let error = db.migrate_to_postgres(&target.url).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    assert!(
        error.to_string().contains("\"bad\""),
        "names the row: {error}"
    );
    assert_eq!(db.get_meta(SUPERSEDED_BY).unwrap(), None);
    // The move created the store's schema; its failure took it back.
    let url = hermes_state::postgres::StoreUrl::parse(&target.url).unwrap();
    assert!(
        !hermes_state::postgres::PgStore::schema_exists(&url).unwrap(),
        "a failed move left its schema behind"
    );
}

#[test]
fn a_failed_move_into_an_existing_store_keeps_that_store() {
    let Some(target) = Target::new("moving keeps") else {
        return;
    };
    // The store exists before the move (made by someone else, empty).
    drop(open_store(&StoreLocation::parse(&target.url).unwrap(), false).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let db = SessionDb::open(dir.path().join("state.db")).unwrap();
    let mut bad = NewSession::new("bad", "cli");
    bad.system_prompt = Some("a\0b".into());
    db.create_session(&bad).unwrap();
    let error = db.migrate_to_postgres(&target.url).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
    let target_store = open_store(&StoreLocation::parse(&target.url).unwrap(), true).unwrap();
    assert_eq!(
        target_store.get_session("bad").unwrap(),
        None,
        "nothing copied"
    );
}

/// Every row of a table, as debug text, in key order (raw SQL on the file).
fn raw_rows(db: &SessionDb, table: &str, key: &str) -> Vec<String> {
    db.read(|conn| {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM {table} ORDER BY {key}"))
            .unwrap();
        let width = stmt.column_count();
        let rows = stmt
            .query_map([], |row| {
                Ok((0..width)
                    .map(|i| format!("{:?}", row.get_ref(i).unwrap()))
                    .collect::<Vec<_>>()
                    .join("|"))
            })
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        Ok(rows)
    })
    .unwrap()
}

#[test]
fn a_store_goes_to_postgresql_and_back_unchanged() {
    let Some(target) = Target::new("round trip") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let original = SessionDb::open(dir.path().join("state.db")).unwrap();
    varied_store(&original);
    original.migrate_to_postgres(&target.url).unwrap();

    let back_path = dir.path().join("back.db");
    let report = hermes_state::migrate_postgres_to_sqlite(&target.url, &back_path).unwrap();
    assert_eq!(report.rows[1], ("messages".to_owned(), 5));
    let back = SessionDb::open(&back_path).unwrap();
    for (table, key) in [
        ("sessions", "id"),
        ("messages", "id"),
        ("session_model_usage", "session_id, model"),
        ("gateway_routing", "scope, session_key"),
        ("telegram_dm_topic_mode", "chat_id"),
        ("telegram_dm_topic_bindings", "chat_id, thread_id"),
    ] {
        assert_eq!(
            raw_rows(&back, table, key),
            raw_rows(&original, table, key),
            "{table}"
        );
    }
    assert_eq!(
        back.get_meta("custom_key").unwrap().as_deref(),
        Some("value")
    );
    // The file's own FTS indexes were filled by its triggers.
    let hits = back
        .search_messages("calling", &Default::default())
        .unwrap();
    assert_eq!(hits.len(), 1);
    // The PostgreSQL store says where it went; a second copy into the same file is refused.
    let pg = open_store(&StoreLocation::parse(&target.url).unwrap(), true).unwrap();
    assert!(
        pg.get_meta(SUPERSEDED_BY)
            .unwrap()
            .unwrap()
            .ends_with("back.db")
    );
    let error = hermes_state::migrate_postgres_to_sqlite(&target.url, &back_path).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput, "{error}");
}
