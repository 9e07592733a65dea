//! One handle shared by many threads: writers share transactions (group
//! commit) and reads run beside writes on their own connections.
//!
//! What must hold: an operation that fails in a shared transaction fails
//! alone, with its own typed error, and the others commit; nothing is
//! acknowledged before its commit (a process killed mid-batch keeps every
//! acknowledged write); reads are not blocked by a write transaction in
//! flight (WAL); a thread reads what it wrote as soon as the write returned.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, mpsc};
use std::thread;
use std::time::Duration;

use hermes_state::{ErrorKind, NewMessage, NewSession, SearchOptions, SessionDb};

use crate::common::{Store, child_test, raw_connection, setup_connection};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Search;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;

const SIGKILL: i32 = 9;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn a_handle_is_send_and_sync() {
    assert_send_sync::<SessionDb>();
}

/// Sessions `w0..w{n}`, created through the handle.
fn sessions(db: &SessionDb, n: usize) -> Vec<String> {
    (0..n)
        .map(|w| {
            let id = format!("w{w}");
            db.create_session(&NewSession::new(&id, "cli"))
                .expect("create");
            id
        })
        .collect()
}

/// Runs `writers` threads at once (they start together); each runs `round`
/// with its index and returns what `round` returned.
fn together<T: Send>(writers: usize, round: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let start = Barrier::new(writers);
    thread::scope(|scope| {
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let start = &start;
                let round = &round;
                scope.spawn(move || {
                    start.wait();
                    round(w)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("writer thread"))
            .collect()
    })
}

#[test]
fn one_failing_operation_per_batch_fails_alone_and_the_others_commit() {
    let store = Store::new();
    let db = &store.db;
    let writers = 8;
    let ids = sessions(db, writers);
    let mut expected: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut rounds = 0;
    // Each round: another connection holds the write lock while the eight
    // writers queue behind the handle's leader, then lets go, so that the
    // queued operations run in one transaction; writer 0 appends to a session
    // that does not exist. Repeated until a batch mixed a failure with
    // commits (normally the first round).
    while db.write_batches().mixed == 0 {
        rounds += 1;
        assert!(
            rounds <= 20,
            "no batch mixed a failure with commits: {:?}",
            db.write_batches()
        );
        let blocker = raw_connection(&store.path);
        blocker
            .execute_batch("BEGIN IMMEDIATE")
            .expect("hold the write lock");
        let released = AtomicBool::new(false);
        let released_flag = &released;
        let outcomes = thread::scope(|scope| {
            let release = scope.spawn(move || {
                while db.write_batches().queued < (writers - 1) as u64 {
                    thread::sleep(Duration::from_millis(1));
                }
                blocker.execute_batch("COMMIT").expect("let go");
                released_flag.store(true, Ordering::SeqCst);
            });
            let outcomes = together(writers, |w| {
                let session = if w == 0 {
                    format!("ghost-{rounds}")
                } else {
                    ids[w].clone()
                };
                let result = db.append_message(
                    &NewMessage::new(&session, "user")
                        .content(format!("round {rounds} writer {w} batched")),
                );
                (w, result)
            });
            release.join().expect("releaser");
            outcomes
        });
        assert!(released.load(Ordering::SeqCst));
        for (w, result) in outcomes {
            if w == 0 {
                match result {
                    Err(error) => assert_eq!(
                        error.kind(),
                        ErrorKind::NotFound,
                        "the unknown session's caller gets its own error: {error}"
                    ),
                    Ok(id) => panic!("append to an unknown session returned {id}"),
                }
            } else {
                let id = result.unwrap_or_else(|e| panic!("writer {w} failed: {e}"));
                expected.entry(ids[w].clone()).or_default().push(id);
            }
        }
    }
    let stats = db.write_batches();
    println!("rounds {rounds}, {stats:?}");
    assert!(stats.failed_in_batch >= 1);
    for (session, ids) in &expected {
        let stored: Vec<i64> = db
            .get_messages(session)
            .expect("messages")
            .iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(&stored, ids, "every acknowledged append of {session}");
        let row = db.get_session(session).expect("get").expect("exists");
        assert_eq!(row.message_count, Some(ids.len() as i64));
    }
    assert_eq!(
        store.count(
            "SELECT count(*) FROM messages WHERE session_id LIKE 'ghost-%'",
            []
        ),
        0,
        "nothing of the failed operations was stored"
    );
    assert_eq!(
        store.count("SELECT count(*) FROM sessions WHERE id LIKE 'ghost-%'", []),
        0
    );
}

#[test]
fn many_threads_appending_through_one_handle_share_transactions_and_lose_nothing() {
    let store = Store::new();
    let db = &store.db;
    let writers = 8;
    let per_writer = 60;
    let ids = sessions(db, writers);
    let acked = together(writers, |w| {
        (0..per_writer)
            .map(|i| {
                // Every tenth append of each writer names a missing session.
                if i % 10 == 9 {
                    let error = db
                        .append_message(&NewMessage::new("missing", "user").content("lost"))
                        .expect_err("unknown session");
                    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
                    return None;
                }
                Some(
                    db.append_message(
                        &NewMessage::new(&ids[w], "user").content(format!("w{w} m{i} docker")),
                    )
                    .expect("append"),
                )
            })
            .collect::<Vec<_>>()
    });
    let stats = db.write_batches();
    println!("{stats:?}");
    for (w, acked) in acked.iter().enumerate() {
        let acked: Vec<i64> = acked.iter().flatten().copied().collect();
        let stored: Vec<i64> = db
            .get_messages(&ids[w])
            .expect("messages")
            .iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(
            stored, acked,
            "writer {w}: every acknowledged append, in order"
        );
        let row = db.get_session(&ids[w]).expect("get").expect("exists");
        assert_eq!(row.message_count, Some(acked.len() as i64));
    }
    let committed = (writers * (per_writer - per_writer / 10)) as u64;
    // The sessions' creation plus the appends, however they were grouped.
    assert_eq!(stats.operations, committed + writers as u64);
    assert!(stats.transactions <= stats.operations);
    assert_eq!(
        store.count(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'docker'",
            []
        ),
        committed as i64
    );
    store
        .db
        .write_raw(|conn| {
            conn.execute_batch("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')")
                .expect("FTS integrity");
            Ok(())
        })
        .expect("check");
}

#[test]
fn a_thread_reads_what_it_wrote_as_soon_as_the_write_returned() {
    let store = Store::new();
    let db = &store.db;
    let writers = 6;
    let ids = sessions(db, writers);
    together(writers, |w| {
        for i in 0..40 {
            let word = format!("ryw{w}x{i}");
            let id = db
                .append_message(&NewMessage::new(&ids[w], "user").content(word.clone()))
                .expect("append");
            let messages = db.get_messages(&ids[w]).expect("read");
            assert_eq!(
                messages.last().map(|m| m.id),
                Some(id),
                "writer {w} append {i}"
            );
            assert_eq!(messages.len(), i + 1);
            let hits = db
                .search_messages(&word, &SearchOptions::default())
                .expect("search");
            assert_eq!(
                hits.iter().map(|h| h.id).collect::<Vec<_>>(),
                [id],
                "the search sees the write at once"
            );
            db.set_session_title(&ids[w], Some(&format!("title {w} {i}")))
                .expect("title");
            let session = db.get_session(&ids[w]).expect("get").expect("exists");
            assert_eq!(
                session.title.as_deref(),
                Some(format!("title {w} {i}").as_str())
            );
        }
    });
}

/// A read that panics inside a read transaction it opened does not leave its
/// pooled connection in that transaction: the next reads on the handle (which
/// reuse the last connection returned) see a write made after the panic.
#[test]
fn a_read_that_unwinds_inside_its_transaction_leaves_no_stale_snapshot() {
    let store = Store::new();
    let db = &store.db;
    let ids = sessions(db, 1);
    let first = db
        .append_message(&NewMessage::new(&ids[0], "user").content("before the panic"))
        .expect("append");
    let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        db.read::<()>(|conn| {
            conn.execute_batch("BEGIN").expect("begin");
            let n: i64 = conn
                .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
                .expect("count");
            panic!("a read fails after {n} rows, inside its transaction");
        })
    }));
    assert!(unwound.is_err());
    let second = db
        .append_message(&NewMessage::new(&ids[0], "user").content("after the panic"))
        .expect("append");
    let messages = db.get_messages(&ids[0]).expect("read");
    assert_eq!(
        messages.iter().map(|m| m.id).collect::<Vec<_>>(),
        [first, second]
    );
    let hits = db
        .search_messages("after", &SearchOptions::default())
        .expect("search");
    assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), [second]);
}

#[test]
fn reads_are_not_blocked_by_a_write_transaction_of_another_connection() {
    let store = Store::new();
    let db = &store.db;
    store.session("s");
    let before = db
        .append_message(&NewMessage::new("s", "user").content("committed docker"))
        .expect("append");
    assert_eq!(db.journal_mode().map(|m| m.name()), Some("wal"));

    // Another connection holds the write lock with an uncommitted message.
    let other = setup_connection(&store.path);
    other.execute_batch("BEGIN IMMEDIATE").expect("begin");
    other
        .execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'uncommitted docker', 1.0)",
            [],
        )
        .expect("uncommitted insert");

    thread::scope(|scope| {
        // This handle's own writer queues for the lock meanwhile.
        let writer = scope
            .spawn(|| db.append_message(&NewMessage::new("s", "user").content("after the lock")));
        for _ in 0..20 {
            let messages = db.get_messages("s").expect("read beside the transaction");
            assert_eq!(messages.iter().map(|m| m.id).collect::<Vec<_>>(), [before]);
            let hits = db
                .search_messages("docker", &SearchOptions::default())
                .expect("search beside the transaction");
            assert_eq!(hits.len(), 1, "the uncommitted row is not seen");
            assert!(db.get_session("s").expect("get").is_some());
        }
        assert!(
            !writer.is_finished(),
            "the handle's writer cannot have written while the lock is held"
        );
        other.execute_batch("COMMIT").expect("commit");
        writer
            .join()
            .expect("writer")
            .expect("append after the lock");
    });
    assert_eq!(db.get_messages("s").expect("read").len(), 3);
}

#[test]
fn reads_run_while_the_handle_holds_its_own_write_transaction_open() {
    let store = Store::new();
    let db = &store.db;
    store.session("s");
    db.append_message(&NewMessage::new("s", "user").content("first docker"))
        .expect("append");
    let (reads_done, wait_for_reads) = mpsc::channel::<()>();
    let (in_transaction, transaction_open) = mpsc::channel::<()>();
    thread::scope(|scope| {
        let writer = scope.spawn(move || {
            db.write_in_transaction("a long write", |conn| {
                conn.execute(
                    "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('s', 'user', 'inside docker', 2.0)",
                    [],
                )
                .map_err(|e| hermes_state::Error::InvalidInput(e.to_string()))?;
                let _ = in_transaction.send(());
                // Held open until the reads on other threads are done (a
                // read waiting behind this transaction would hang here).
                wait_for_reads
                    .recv_timeout(Duration::from_secs(120))
                    .map_err(|_| hermes_state::Error::InvalidInput("reads blocked".to_owned()))
            })
        });
        transaction_open.recv().expect("the transaction is open");
        let hits = db
            .search_messages("docker", &SearchOptions::default())
            .expect("search beside the handle's own write");
        assert_eq!(hits.len(), 1, "the open transaction's row is not seen yet");
        assert_eq!(db.get_messages("s").expect("read").len(), 1);
        reads_done.send(()).expect("let the writer commit");
        writer
            .join()
            .expect("writer")
            .expect("the long write commits");
    });
    assert_eq!(db.get_messages("s").expect("read").len(), 2);
}

// --- A process killed mid-batch ----------------------------------------------

const CHILD_DB: &str = "HERMES_STATE_GROUP_COMMIT_DB";
const CHILD_LOG: &str = "HERMES_STATE_GROUP_COMMIT_LOG";
const CHILD_WRITERS: usize = 8;

/// The child: eight threads append to their own sessions through one handle
/// until killed, each logging `ACK <writer> <id>` with one `write(2)` after
/// every acknowledged append (and `TRY <writer>` before it).
#[test]
#[ignore = "a child process of the group-commit kill test"]
fn batched_writer_child() {
    let (Ok(db_path), Ok(log_path)) = (std::env::var(CHILD_DB), std::env::var(CHILD_LOG)) else {
        return;
    };
    let db = SessionDb::open(&db_path).expect("child open");
    let ids = sessions(&db, CHILD_WRITERS);
    together(CHILD_WRITERS, |w| {
        let mut log = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&log_path)
            .expect("log");
        for i in 0.. {
            log.write_all(format!("TRY {w}\n").as_bytes()).expect("log");
            let id = db
                .append_message(
                    &NewMessage::new(&ids[w], "user").content(format!("w{w} m{i} killed")),
                )
                .expect("child append");
            log.write_all(format!("ACK {w} {id}\n").as_bytes())
                .expect("log");
        }
    });
}

fn read_log(path: &Path) -> (BTreeMap<usize, Vec<i64>>, usize) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut acked: BTreeMap<usize, Vec<i64>> = BTreeMap::new();
    let mut tries = 0;
    for line in text.lines() {
        let parts: Vec<&str> = line.split(' ').collect();
        match parts.as_slice() {
            ["TRY", _] => tries += 1,
            ["ACK", w, id] => acked
                .entry(w.parse().expect("writer"))
                .or_default()
                .push(id.parse().expect("id")),
            _ => {}
        }
    }
    (acked, tries)
}

#[test]
fn a_process_killed_mid_batch_keeps_every_acknowledged_write() {
    use std::os::unix::process::ExitStatusExt;
    for target in [40, 400] {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.db");
        let log = dir.path().join("acks.log");
        let mut child = child_test(module_path!(), "batched_writer_child")
            .env(CHILD_DB, &path)
            .env(CHILD_LOG, &log)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        loop {
            let (acked, _) = read_log(&log);
            if acked.values().map(Vec::len).sum::<usize>() >= target {
                break;
            }
            if let Some(status) = child.try_wait().expect("child status") {
                let mut stderr = String::new();
                if let Some(mut err) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut err, &mut stderr);
                }
                panic!("the child exited by itself ({status}): {stderr}");
            }
            thread::sleep(Duration::from_millis(2));
        }
        child.kill().expect("SIGKILL");
        let status = child.wait().expect("wait");
        assert_eq!(status.signal(), Some(SIGKILL), "killed, not exited");
        let (acked, tries) = read_log(&log);
        let acks: usize = acked.values().map(Vec::len).sum();
        println!("killed with {} appends in flight", tries - acks);

        let db = SessionDb::open(&path).expect("reopen");
        for (w, ids) in &acked {
            let stored: Vec<i64> = db
                .get_messages(&format!("w{w}"))
                .expect("messages")
                .iter()
                .map(|m| m.id)
                .collect();
            assert!(
                stored.len() >= ids.len() && stored[..ids.len()] == ids[..],
                "writer {w}: every acknowledged append stored, in order (acked {}, stored {})",
                ids.len(),
                stored.len()
            );
            // At most the one append in flight when the process died is extra.
            assert!(stored.len() <= ids.len() + 1, "writer {w}");
        }
        db.write_raw(|conn| {
            let ok: String = conn
                .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                .expect("check");
            assert_eq!(ok, "ok");
            conn.execute_batch("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')")
                .expect("FTS integrity");
            let mismatched: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sessions s WHERE s.message_count <> (SELECT count(*) FROM messages m WHERE m.session_id = s.id)",
                    [],
                    |r| r.get(0),
                )
                .expect("counters");
            assert_eq!(mismatched, 0, "counters equal the rows");
            Ok(())
        })
        .expect("checks");
        db.close().expect("close");
    }
}

#[test]
fn in_rollback_journal_mode_threads_share_the_handle_without_blocking_each_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    SessionDb::open(&path)
        .expect("create")
        .close()
        .expect("close");
    raw_connection(&path)
        .query_row("PRAGMA journal_mode=DELETE", [], |_| Ok(()))
        .expect("switch the file to the rollback journal");
    let db = SessionDb::open(&path).expect("open");
    let writers = 6;
    let ids = sessions(&db, writers);
    assert_eq!(db.journal_mode().map(|m| m.name()), Some("delete"));
    let db = &db;
    let acked = together(writers, |w| {
        (0..30)
            .map(|i| {
                let id = db
                    .append_message(
                        &NewMessage::new(&ids[w], "user").content(format!("w{w} m{i} journal")),
                    )
                    .expect("append beside the other threads' reads");
                // Reads here share the writable connection in turn: they
                // neither block on this handle's writer nor miss the write.
                let messages = db.get_messages(&ids[w]).expect("read");
                assert_eq!(messages.last().map(|m| m.id), Some(id));
                db.search_messages("journal", &SearchOptions::default())
                    .expect("search");
                id
            })
            .collect::<Vec<_>>()
    });
    for (w, acked) in acked.iter().enumerate() {
        let stored: Vec<i64> = db
            .get_messages(&ids[w])
            .expect("messages")
            .iter()
            .map(|m| m.id)
            .collect();
        assert_eq!(&stored, acked, "writer {w}");
    }
    assert_eq!(
        db.journal_mode().map(|m| m.name()),
        Some("delete"),
        "the file keeps its mode"
    );
}
