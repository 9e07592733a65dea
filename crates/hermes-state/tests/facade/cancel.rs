//! `search_messages_cancellable` on SQLite: a search stopped while its
//! statement runs answers `Cancelled` promptly (the read connection's
//! statement is interrupted), and the connection serves the next read.

use std::time::Instant;

use hermes_state::cancel::Cancel;
use hermes_state::{ErrorKind, NewSession, SearchOptions, SessionDb};
use hermes_state_core::store::{Search, Sessions};

/// A store whose LIKE route (a lone CJK character, found nowhere) reads
/// every one of `rows` messages, each with 2 KB of tool calls.
fn slow_store(rows: i64) -> (tempfile::TempDir, SessionDb) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = SessionDb::open(dir.path().join("state.db")).expect("open");
    db.create_session(&NewSession::new("s", "cli"))
        .expect("session");
    db.write_raw(|conn| {
        conn.execute(
            "INSERT INTO messages (session_id, role, content, tool_calls, timestamp)
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < ?1)
             SELECT 's', 'assistant', 'step ' || x, printf('%.2000c', 'q'), 1000.0 + x FROM n",
            [rows],
        )
        .map(drop)
        .map_err(|e| hermes_state::Error::InvalidInput(e.to_string()))
    })
    .expect("rows");
    (dir, db)
}

#[test]
fn a_running_search_is_interrupted_and_answers_cancelled() {
    let (_dir, db) = slow_store(60_000);
    let options = SearchOptions::default();
    // Uncancelled: the whole scan, and no hit.
    let started = Instant::now();
    let hits = db
        .search_messages_cancellable("数", &options, &Cancel::new())
        .expect("search");
    let whole = started.elapsed();
    assert!(hits.is_empty());
    assert_eq!(hits, db.search_messages("数", &options).expect("search"));
    // Cancelled a fifth of the way through: stopped well before the end.
    let cancel = Cancel::new();
    let started = Instant::now();
    let outcome = std::thread::scope(|scope| {
        let raised = cancel.clone();
        scope.spawn(move || {
            std::thread::sleep(whole / 5);
            raised.cancel();
        });
        db.search_messages_cancellable("数", &options, &cancel)
    });
    let stopped = started.elapsed();
    assert_eq!(outcome.expect_err("cancelled").kind(), ErrorKind::Cancelled);
    assert!(
        stopped < whole / 5 + whole / 2,
        "stopped after {stopped:?}, the whole search takes {whole:?}"
    );
    // The connection is back in the pool, in autocommit, and answers.
    assert_eq!(
        db.search_messages("step", &options).expect("search").len(),
        20
    );
    db.read(|conn| {
        assert!(conn.is_autocommit());
        Ok(())
    })
    .expect("read");
}

#[test]
fn a_flag_raised_before_the_call_stops_it_before_it_reads() {
    let (_dir, db) = slow_store(10);
    let cancel = Cancel::new();
    cancel.cancel();
    let error = db
        .search_messages_cancellable("step", &SearchOptions::default(), &cancel)
        .expect_err("cancelled");
    assert_eq!(error.kind(), ErrorKind::Cancelled);
    let error = db
        .search_partial("step", &SearchOptions::default(), None, 100, &cancel)
        .expect_err("cancelled");
    assert_eq!(error.kind(), ErrorKind::Cancelled);
    // Not cancelled: the answer.
    let hits = db
        .search_messages_cancellable("step", &SearchOptions::default(), &Cancel::new())
        .expect("search");
    assert_eq!(hits.len(), 10);
}
