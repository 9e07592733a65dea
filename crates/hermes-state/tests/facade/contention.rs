//! Several processes writing to one file at once lose nothing.
//!
//! The test re-runs its own binary as child processes (the `writer_child`
//! test, ignored unless asked for by name), so the writers really are separate
//! processes with their own connections and POSIX locks.
#![allow(clippy::print_stdout)]

use hermes_state::{NewMessage, NewSession, SessionDb};
use serde_json::json;

use crate::common::child_test;
use hermes_state_core::store::Coordination;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

const CHILD_DB: &str = "HERMES_STATE_TEST_CHILD_DB";
const CHILD_SESSION: &str = "HERMES_STATE_TEST_CHILD_SESSION";
const CHILD_COUNT: &str = "HERMES_STATE_TEST_CHILD_COUNT";

/// Appends `count` message pairs (a user message, an assistant message with two
/// tool calls) and prints the acknowledged ids.
#[test]
#[ignore = "a child process of the contention tests"]
fn writer_child() {
    let (Ok(db_path), Ok(session), Ok(count)) = (
        std::env::var(CHILD_DB),
        std::env::var(CHILD_SESSION),
        std::env::var(CHILD_COUNT),
    ) else {
        return;
    };
    let count: usize = count.parse().expect("count");
    let db = SessionDb::open(&db_path).expect("child open");
    db.create_session(&NewSession::new(&session, "cli"))
        .expect("child create");
    for i in 0..count {
        let user = db
            .append_message(
                &NewMessage::new(&session, "user")
                    .content(format!("{session} question {i} docker")),
            )
            .expect("child append user");
        let calls = json!([{"id": format!("a{i}")}, {"id": format!("b{i}")}]);
        let assistant = db
            .append_message(&NewMessage::new(&session, "assistant").tool_calls(calls))
            .expect("child append");
        println!("ACK {user} {assistant}");
    }
}

fn spawn_writers(
    db_path: &std::path::Path,
    writers: usize,
    count: usize,
) -> Vec<(String, Vec<i64>)> {
    let children: Vec<_> = (0..writers)
        .map(|w| {
            let session = format!("writer-{w}");
            let child = child_test(module_path!(), "writer_child")
                .env(CHILD_DB, db_path)
                .env(CHILD_SESSION, &session)
                .env(CHILD_COUNT, count.to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn writer");
            (session, child)
        })
        .collect();
    children
        .into_iter()
        .map(|(session, child)| {
            let output = child.wait_with_output().expect("writer output");
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success(),
                "writer {session} failed:\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let acked: Vec<i64> = stdout
                .lines()
                // libtest may print "test writer_child ... " on the same line as the first ACK.
                .filter_map(|line| line.find("ACK ").map(|at| &line[at + 4..]))
                .flat_map(|ids| {
                    ids.split(' ')
                        .map(|id| id.parse::<i64>().expect("id"))
                        .collect::<Vec<_>>()
                })
                .collect();
            assert_eq!(
                acked.len(),
                count * 2,
                "writer {session} acknowledged every append"
            );
            (session, acked)
        })
        .collect()
}

#[test]
fn two_processes_appending_lose_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    // Both children open a file that does not exist yet: the first open also races.
    let count = 400;
    let results = spawn_writers(&path, 2, count);

    let db = SessionDb::open(&path).expect("open");
    // The FTS integrity-check below is an INSERT command: it needs the writable connection.
    db.migrate().expect("writable connection");
    for (session, acked) in &results {
        let messages = db.get_messages(session).expect("messages");
        let ids: Vec<i64> = messages.iter().map(|m| m.id).collect();
        assert_eq!(
            &ids, acked,
            "every acknowledged message of {session} is there, in order"
        );
        let row = db.get_session(session).expect("session").expect("exists");
        assert_eq!(
            row.message_count,
            Some((count * 2) as i64),
            "message_count of {session}"
        );
        assert_eq!(
            row.tool_call_count,
            Some((count * 2) as i64),
            "tool_call_count of {session}"
        );
    }
    db.write_raw(|conn| {
        let total: i64 = conn
            .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
            .expect("count");
        assert_eq!(total, (count * 2 * 2) as i64);
        for table in ["messages_fts", "messages_fts_trigram"] {
            conn.execute_batch(&format!(
                "INSERT INTO {table}({table}) VALUES('integrity-check')"
            ))
            .unwrap_or_else(|e| panic!("{table} integrity-check: {e}"));
        }
        let hits: i64 = conn
            .query_row(
                "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'docker'",
                [],
                |r| r.get(0),
            )
            .expect("search");
        assert_eq!(hits, (count * 2) as i64, "every user message is indexed");
        Ok(())
    })
    .expect("checks");
}

/// With another connection holding the write lock for longer than the whole
/// retry budget (15 attempts of up to 1 s busy wait plus 20–150 ms sleeps),
/// the write gives up with an error of kind `Busy`, and nothing of it remains.
#[test]
fn retries_run_out_with_a_busy_error_when_the_write_lock_is_never_free() {
    use hermes_state::ErrorKind;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let db = SessionDb::open(&path).expect("open");
    db.create_session(&NewSession::new("s", "cli"))
        .expect("create");

    let (locked_tx, locked_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let holder_path = path.clone();
    let holder = std::thread::spawn(move || {
        let conn = hermes_state::rusqlite::Connection::open(&holder_path).expect("holder open");
        conn.execute_batch("BEGIN IMMEDIATE").expect("holder lock");
        locked_tx.send(()).expect("signal");
        let _ = release_rx.recv_timeout(Duration::from_secs(60));
        conn.execute_batch("ROLLBACK").expect("holder release");
    });
    locked_rx.recv().expect("lock taken");

    let started = Instant::now();
    let error = db
        .append_message(&NewMessage::new("s", "user").content("blocked"))
        .expect_err("must give up");
    let waited = started.elapsed();
    release_tx.send(()).expect("release");
    holder.join().expect("holder");

    assert_eq!(error.kind(), ErrorKind::Busy, "{error}");
    assert!(error.to_string().contains("15 attempts"), "{error}");
    // 15 busy waits of 1 s and 14 sleeps of at least 20 ms.
    assert!(
        waited >= Duration::from_millis(15_000 + 14 * 20),
        "gave up too early: {waited:?}"
    );
    // The write never got the lock (every `BEGIN IMMEDIATE` was refused):
    // nothing of it is in the file.
    assert_eq!(db.message_count(Some("s")).expect("count"), 0);
    // The lock is gone: the same write now succeeds.
    db.append_message(&NewMessage::new("s", "user").content("free"))
        .expect("append after release");
}

/// A write that got the write lock and ran — its message inserted, the
/// session's counter raised — but can never commit is rolled back whole:
/// after the retries run out, neither the row nor the counter is in the
/// file. The file is in rollback-journal mode, where a reader's open
/// transaction keeps a writer from committing (in WAL mode nothing a
/// reader does can stop a commit).
#[test]
fn a_write_that_cannot_commit_is_rolled_back_whole_when_retries_run_out() {
    use hermes_state::ErrorKind;
    use hermes_state::rusqlite::{Connection, ErrorCode};
    use std::sync::mpsc;
    use std::time::Duration;

    let (dir, path) = rollback_journal_store();
    let db = SessionDb::open(&path).expect("reopen");
    // The writable connection is opened by the first write: made here, so
    // the write below is the append itself and nothing else.
    db.set_meta("warm", "up").expect("a first write");

    // A reader holds a read transaction (a SHARED lock) until told to stop;
    // meanwhile it watches for the writer: once a second writer is refused
    // with BUSY, our write holds the write lock, i.e. its statements ran.
    let (reading_tx, reading_rx) = mpsc::channel();
    let (seen_tx, seen_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let reader_path = path.clone();
    let reader = std::thread::spawn(move || {
        let conn = Connection::open(&reader_path).expect("reader open");
        conn.execute_batch("BEGIN").expect("begin");
        let _: i64 = conn
            .query_row("SELECT COUNT(*) FROM messages", [], |row| row.get(0))
            .expect("read");
        reading_tx.send(()).expect("signal");
        let probe = Connection::open(&reader_path).expect("probe open");
        probe.busy_timeout(Duration::ZERO).expect("no wait");
        let mut saw_writer = false;
        for _ in 0..400 {
            match probe.execute_batch("BEGIN IMMEDIATE") {
                Ok(()) => probe.execute_batch("ROLLBACK").expect("probe rollback"),
                Err(error) if error.sqlite_error_code() == Some(ErrorCode::DatabaseBusy) => {
                    saw_writer = true;
                    break;
                }
                Err(error) => panic!("probe: {error}"),
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        seen_tx.send(saw_writer).expect("report");
        let _ = release_rx.recv_timeout(Duration::from_secs(120));
        conn.execute_batch("ROLLBACK").expect("reader release");
    });
    reading_rx.recv().expect("reader started");

    let error = db
        .append_message(&NewMessage::new("s", "user").content("never committed"))
        .expect_err("a commit that can never happen must give up");
    let saw_writer = seen_rx.recv().expect("the probe's finding");
    release_tx.send(()).expect("release");
    reader.join().expect("reader");

    assert!(
        saw_writer,
        "the write never held the write lock: it did not run"
    );
    assert_eq!(error.kind(), ErrorKind::Busy, "{error}");
    assert_eq!(db.message_count(Some("s")).expect("count"), 0);
    let row = db.get_session("s").expect("read").expect("exists");
    assert_eq!(
        row.message_count,
        Some(0),
        "the counter update was rolled back with the insert"
    );
    let journal = dir.path().join("state.db-journal");
    assert!(!journal.exists(), "a hot journal was left behind");
    // Nothing holds the file now: the same write commits.
    db.append_message(&NewMessage::new("s", "user").content("free"))
        .expect("append after release");
    assert_eq!(db.message_count(Some("s")).expect("count"), 1);
}

/// A writer blocked for a while by another connection succeeds once the lock
/// is released, within the retry budget.
#[test]
fn a_write_waits_out_a_short_lock() {
    use std::sync::mpsc;
    use std::time::Duration;

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let db = SessionDb::open(&path).expect("open");
    db.create_session(&NewSession::new("s", "cli"))
        .expect("create");
    let (locked_tx, locked_rx) = mpsc::channel();
    let holder_path = path.clone();
    let holder = std::thread::spawn(move || {
        let conn = hermes_state::rusqlite::Connection::open(&holder_path).expect("holder open");
        conn.execute_batch("BEGIN IMMEDIATE").expect("holder lock");
        locked_tx.send(()).expect("signal");
        std::thread::sleep(Duration::from_millis(2500));
        conn.execute_batch("COMMIT").expect("holder release");
    });
    locked_rx.recv().expect("lock taken");
    let id = db
        .append_message(&NewMessage::new("s", "user").content("eventually"))
        .expect("append");
    holder.join().expect("holder");
    assert_eq!(db.get_messages("s").expect("read")[0].id, id);
}

/// The first write of a handle opens the writable connection, whose open
/// algorithm (its own transaction) retries lock errors itself. When that
/// budget is spent the write gives up with it, instead of spending it once
/// more per attempt of the write (15 × 15 attempts, minutes): here a reader
/// keeps a rollback-journal file from committing for as long as the test
/// lets it, and the write must give up before the reader lets go.
#[test]
fn a_first_write_whose_open_cannot_commit_gives_up_with_one_retry_budget() {
    use hermes_state::ErrorKind;
    use hermes_state::rusqlite::Connection;
    use std::sync::mpsc;
    use std::time::Duration;

    let (_dir, path) = rollback_journal_store();
    let db = SessionDb::open(&path).expect("reopen (read side only)");

    let (reading_tx, reading_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (released_tx, released_rx) = mpsc::channel();
    let reader_path = path.clone();
    // Far beyond one budget (15 attempts of about 1.1 s), far below 15 of them.
    let hold = Duration::from_secs(100);
    let reader = std::thread::spawn(move || {
        let conn = Connection::open(&reader_path).expect("reader open");
        conn.execute_batch("BEGIN").expect("begin");
        let _: i64 = conn
            .query_row("SELECT COUNT(*) FROM sessions", [], |row| row.get(0))
            .expect("read");
        reading_tx.send(()).expect("signal");
        let released_early = release_rx.recv_timeout(hold).is_ok();
        conn.execute_batch("ROLLBACK").expect("reader release");
        released_tx.send(released_early).expect("report");
    });
    reading_rx.recv().expect("reader started");
    let outcome = db.append_message(&NewMessage::new("s", "user").content("first write"));
    release_tx.send(()).expect("release");
    let released_early = released_rx.recv().expect("the reader's report");
    reader.join().expect("reader");
    assert!(
        released_early,
        "the write waited out the reader's whole hold: the retry budget was spent more than once"
    );
    let error = outcome.expect_err("the write cannot commit while the reader reads");
    assert_eq!(error.kind(), ErrorKind::Busy, "{error}");
    assert!(error.to_string().contains("15 attempts"), "{error}");
    assert_eq!(db.message_count(Some("s")).expect("count"), 0);
    db.append_message(&NewMessage::new("s", "user").content("after"))
        .expect("append after release");
}

/// A store with one session `s`, closed and switched to rollback-journal
/// mode (where a reader's open transaction keeps a writer from committing);
/// its folder and path.
fn rollback_journal_store() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let db = SessionDb::open(&path).expect("open");
    db.create_session(&NewSession::new("s", "cli"))
        .expect("create");
    db.close().expect("close");
    let switch = hermes_state::rusqlite::Connection::open(&path).expect("raw open");
    let mode: String = switch
        .query_row("PRAGMA journal_mode=DELETE", [], |row| row.get(0))
        .expect("to rollback-journal mode");
    assert_eq!(mode, "delete");
    (dir, path)
}
