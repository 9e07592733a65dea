//! The write path: one transaction per operation, the store's writer lock,
//! typed errors.

use hermes_state_core::prelude::*;
use std::time::Duration;

use hermes_state_postgres::PgStore;
use hermes_state_types::{ErrorKind, NewMessage, NewSession};

use crate::common::TestSchema;

#[test]
fn a_held_writer_lock_makes_writers_wait_not_fail() {
    let Some(schema) = TestSchema::new("writer lock") else {
        return;
    };
    let store = PgStore::open(&schema.url).unwrap();
    store.create_session(&NewSession::new("s", "cli")).unwrap();
    // Another host holds the store's writer lock for a while.
    let mut other = schema.client();
    let mut tx = other.transaction().unwrap();
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended('hermes-state write ' || $1, 0))",
        &[&schema.url.schema()],
    )
    .unwrap();
    let appender = std::thread::spawn({
        let url = schema.url.clone();
        move || {
            let store = PgStore::open(&url).unwrap();
            store.append_message(&NewMessage::new("s", "user").content("after the lock"))
        }
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        store.message_count(None).unwrap(),
        0,
        "a write ran while another held the lock"
    );
    tx.commit().unwrap();
    appender
        .join()
        .unwrap()
        .expect("the waiting write succeeds once the lock is free");
    assert_eq!(store.message_count(Some("s")).unwrap(), 1);
    assert_eq!(
        store.get_session("s").unwrap().unwrap().message_count,
        Some(1)
    );
}

/// Text holding a NUL, which SQLite stores, is refused here by kind (what
/// every backend reads back as written is the conformance suite's
/// `message_writes::content_of_every_kind_reads_back_alike`).
#[test]
fn text_holding_a_nul_is_refused_as_invalid_input() {
    let Some(schema) = TestSchema::new("content") else {
        return;
    };
    let store = PgStore::open(&schema.url).unwrap();
    store.create_session(&NewSession::new("s", "cli")).unwrap();
    let refused = store
        .append_message(&NewMessage::new("s", "user").content("nul\0inside"))
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::InvalidInput);
    assert_eq!(store.message_count(None).unwrap(), 0);
}

/// The keys of `crate::transaction` as another host takes them.
fn hold(tx: &mut postgres::Transaction<'_>, sql: &str, key: &str) {
    tx.execute(sql, &[&key]).unwrap();
}

#[test]
fn writes_of_different_sessions_run_side_by_side_and_whole_store_writes_alone() {
    let Some(schema) = TestSchema::new("side by side") else {
        return;
    };
    let store = PgStore::open(&schema.url).unwrap();
    for id in ["a", "b"] {
        store.create_session(&NewSession::new(id, "cli")).unwrap();
    }
    let name = schema.url.schema().to_owned();
    // Another host is in the middle of a write of session a.
    let mut other = schema.client();
    let mut tx = other.transaction().unwrap();
    hold(
        &mut tx,
        "SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))",
        &format!("hermes-state write {name}"),
    );
    hold(
        &mut tx,
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &format!("hermes-state session {name} a"),
    );
    // A write of session b does not wait for it…
    let started = std::time::Instant::now();
    store
        .append_message(&NewMessage::new("b", "user").content("beside"))
        .unwrap();
    store.set_session_title("b", Some("bee")).unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    // …a write of session a and a whole-store write do.
    let url = schema.url.clone();
    let waiting = std::thread::spawn(move || {
        let store = PgStore::open(&url).unwrap();
        let appended = store.append_message(&NewMessage::new("a", "user").content("after"));
        let archived = store.archive_stale_sessions(1e6, false);
        (appended, archived)
    });
    let whole = std::thread::spawn({
        let url = schema.url.clone();
        move || PgStore::open(&url).unwrap().set_session_archived("b", true)
    });
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        store.message_count(Some("a")).unwrap(),
        0,
        "a write of a ran"
    );
    assert!(
        store.get_session("b").unwrap().unwrap().archived == 0,
        "a whole-store write ran beside a session's write"
    );
    tx.commit().unwrap();
    let (appended, archived) = waiting.join().unwrap();
    appended.unwrap();
    archived.unwrap();
    assert!(whole.join().unwrap().unwrap());
    assert_eq!(store.message_count(Some("a")).unwrap(), 1);
    assert_eq!(store.get_session("b").unwrap().unwrap().archived, 1);
}
