//! Read-only handles and closed handles (`api.md` §1, §14).

use hermes_state::serde_json::json;
use hermes_state::{
    AuxiliaryUsage, Error, ErrorKind, MessagePage, NewMessage, NewSession, Result, SessionDb,
    TokenUpdate,
};

use crate::common::{Store, query_row, t};
use hermes_state_core::store::Accounting;
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

type Op = Box<dyn Fn(&SessionDb) -> Result<()>>;

/// Every write of the API, each on an existing session `s` (or a new id).
fn writes() -> Vec<(&'static str, Op)> {
    vec![
        (
            "create_session (new)",
            Box::new(|db| db.create_session(&NewSession::new("new", "cli")).map(drop)),
        ),
        (
            "create_session (existing)",
            Box::new(|db| {
                db.create_session(&NewSession::new("s", "cli").model("m"))
                    .map(drop)
            }),
        ),
        (
            "ensure_session",
            Box::new(|db| db.ensure_session("new", "unknown", None).map(drop)),
        ),
        ("end_session", Box::new(|db| db.end_session("s", "x"))),
        ("reopen_session", Box::new(|db| db.reopen_session("s"))),
        (
            "update_token_counts",
            Box::new(|db| {
                db.update_token_counts(
                    "s",
                    &TokenUpdate {
                        input_tokens: 1,
                        ..TokenUpdate::default()
                    },
                )
            }),
        ),
        (
            "record_auxiliary_usage",
            Box::new(|db| {
                db.record_auxiliary_usage(
                    "s",
                    &AuxiliaryUsage {
                        task: "vision".to_owned(),
                        ..AuxiliaryUsage::default()
                    },
                )
            }),
        ),
        (
            "append_message",
            Box::new(|db| {
                db.append_message(&NewMessage::new("s", "user").content("x"))
                    .map(drop)
            }),
        ),
        ("clear_messages", Box::new(|db| db.clear_messages("s"))),
        (
            "delete_session",
            Box::new(|db| db.delete_session("s").map(drop)),
        ),
    ]
}

/// Every read of the API.
fn reads() -> Vec<(&'static str, Op)> {
    vec![
        ("get_session", Box::new(|db| db.get_session("s").map(drop))),
        (
            "get_messages",
            Box::new(|db| db.get_messages("s").map(drop)),
        ),
        (
            "get_messages_page",
            Box::new(|db| {
                db.get_messages_page(
                    "s",
                    MessagePage {
                        include_inactive: true,
                        limit: Some(1),
                        offset: 0,
                    },
                )
                .map(drop)
            }),
        ),
        (
            "get_messages_as_conversation",
            Box::new(|db| db.get_messages_as_conversation("s", true).map(drop)),
        ),
        (
            "message_count",
            Box::new(|db| db.message_count(None).map(drop)),
        ),
        ("read", Box::new(|db| db.read(|_| Ok(())))),
    ]
}

fn populated() -> Store {
    let store = Store::new();
    store
        .db
        .create_session(&NewSession::new("s", "cli").model_config(json!({"k": 1})))
        .expect("create");
    store
        .db
        .append_message(&NewMessage::new("s", "user").content("hello"))
        .expect("append");
    store
}

#[test]
fn read_only_handle_refuses_every_write_and_serves_reads() {
    let store = populated();
    store.db.close().expect("close the writer");
    let before = std::fs::read(&store.path).expect("file bytes");

    let db = SessionDb::open_read_only(&store.path).expect("open read-only");
    assert!(db.is_read_only());
    assert_eq!(db.open_report(), None);
    for (what, write) in writes() {
        match write(&db) {
            Err(error) => assert_eq!(error.kind(), ErrorKind::ReadOnly, "{what}: {error}"),
            Ok(()) => panic!("{what} succeeded on a read-only handle"),
        }
    }
    for (what, read) in reads() {
        read(&db).unwrap_or_else(|e| panic!("{what} on a read-only handle: {e}"));
    }
    let messages = db.get_messages("s").expect("messages");
    assert_eq!(messages.len(), 1);
    let session = db.get_session("s").expect("get").expect("exists");
    assert_eq!(session.message_count, Some(1));
    assert_eq!(session.model_config.as_deref(), Some(r#"{"k": 1}"#));
    // SQLite itself refuses writes on the read-only connection too.
    let refused = db.read(|conn| {
        Ok(conn
            .execute("UPDATE sessions SET title = 'x'", [])
            .expect_err("a read-only connection refuses writes"))
    });
    assert!(
        refused.expect("read").to_string().contains("readonly"),
        "SQLite says: attempt to write a readonly database"
    );
    db.close().expect("close");
    db.close().expect("close twice");
    assert_eq!(
        std::fs::read(&store.path).expect("file bytes"),
        before,
        "a read-only handle leaves the file unchanged"
    );
    // Nothing was written through it: the data is as the writer left it.
    let conn = crate::common::raw_connection(&store.path);
    assert_eq!(
        query_row(&conn, "SELECT group_concat(id) FROM sessions", []),
        vec![t("s")]
    );
}

#[test]
fn read_only_open_of_a_missing_file_fails_and_creates_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("missing.db");
    let error = SessionDb::open_read_only(&path).expect_err("missing file");
    assert!(
        error.to_string().contains("unable to open database file"),
        "{error}"
    );
    assert!(!path.exists(), "no file created");
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("dir").count(),
        0,
        "no -wal/-shm/-journal files either"
    );
    let nested = dir.path().join("no").join("such").join("state.db");
    assert!(SessionDb::open_read_only(&nested).is_err());
    assert!(!dir.path().join("no").exists(), "no folder created");
}

#[test]
fn every_call_after_close_fails_and_close_is_idempotent() {
    let store = populated();
    store.db.close().expect("close");
    store.db.close().expect("close twice");
    for (what, op) in writes().into_iter().chain(reads()) {
        match op(&store.db) {
            Err(Error::Closed) => {}
            other => panic!("{what} after close: expected Error::Closed, got {other:?}"),
        }
    }
    store.db.close().expect("close a third time");
    // The file is intact and checkpointed.
    let db = SessionDb::open(&store.path).expect("reopen");
    assert_eq!(db.message_count(Some("s")).expect("count"), 1);
}
