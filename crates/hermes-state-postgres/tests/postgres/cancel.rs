//! `search_messages_cancellable` on PostgreSQL: a search stopped while its
//! statement runs on the server answers `Cancelled` promptly (a cancel
//! request), and the store serves the next read.

use std::time::Instant;

use hermes_state_core::cancel::Cancel;
use hermes_state_core::search::SearchOptions;
use hermes_state_core::store::{Search, Sessions};
use hermes_state_postgres::PgStore;
use hermes_state_types::{ErrorKind, NewSession};

use crate::common::TestSchema;

#[test]
fn a_running_search_is_cancelled_on_the_server_and_answers_cancelled() {
    let Some(schema) = TestSchema::new("a running search is cancelled") else {
        return;
    };
    let store = PgStore::open(&schema.url).unwrap();
    store.create_session(&NewSession::new("s", "cli")).unwrap();
    // Rows written by the server itself: 150,000 messages with 2 KB of tool
    // calls each, which the LIKE route (terms found nowhere, one of them
    // with no CJK character to look up) reads every one of.
    schema
        .client()
        .batch_execute(&format!(
            "INSERT INTO \"{0}\".messages (session_id, role, content, tool_calls, timestamp)
             SELECT 's', 'assistant', 'step ' || x, repeat('q', 2000), 1000.0 + x
             FROM generate_series(1, 150000) AS x;
             ANALYZE \"{0}\".messages;",
            schema.name()
        ))
        .unwrap();
    let options = SearchOptions::default();
    // A lone CJK character is looked up in the gram index (step 3); a token
    // without one beside it (`zz`: the tokens are alternatives) keeps the
    // scan this test needs — checked, not assumed.
    let scanning = "数 zz";
    let (_, plans) = store.explain_search(scanning, &options).unwrap();
    assert!(
        plans
            .iter()
            .any(|plan| plan.contains("Seq Scan on messages")),
        "{plans:?}"
    );
    // The connection is made before the search is timed, so `whole` is the
    // statement's time, not a connection's set-up.
    store.search_messages("step", &options).unwrap();
    let started = Instant::now();
    let hits = store
        .search_messages_cancellable(scanning, &options, &Cancel::new())
        .unwrap();
    let whole = started.elapsed();
    assert!(hits.is_empty());
    let cancel = Cancel::new();
    let started = Instant::now();
    let outcome = std::thread::scope(|scope| {
        let raised = cancel.clone();
        scope.spawn(move || {
            std::thread::sleep(whole / 5);
            raised.cancel();
        });
        store.search_messages_cancellable(scanning, &options, &cancel)
    });
    let stopped = started.elapsed();
    assert_eq!(outcome.expect_err("cancelled").kind(), ErrorKind::Cancelled);
    assert!(
        stopped < whole / 5 + whole / 2,
        "stopped after {stopped:?}, the whole search takes {whole:?}"
    );
    // The store answers the next searches (the cancelled connection was
    // closed, not reused).
    for _ in 0..5 {
        assert_eq!(store.search_messages("step", &options).unwrap().len(), 20);
    }
    // A flag raised before the call stops it before it reads.
    let raised = Cancel::new();
    raised.cancel();
    let error = store
        .search_messages_cancellable("step", &options, &raised)
        .expect_err("cancelled");
    assert_eq!(error.kind(), ErrorKind::Cancelled);
}
