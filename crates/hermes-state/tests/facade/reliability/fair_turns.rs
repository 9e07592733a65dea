//! Writer processes in tight loops take turns at the write lock.
//!
//! SQLite's lock alone let one of two such processes make 1 append in 5 s
//! while the other made 8,215 (docs/PERFORMANCE.md, "Several hosts on one
//! store"): the one that has just committed takes the lock again before the
//! waiter's busy handler wakes. The writer queue beside the store
//! (`hermes_state_sqlite::writer_queue`) makes the one that just wrote give way.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use hermes_state::{NewMessage, NewSession, SessionDb};

use super::{DB, SESSION, STOP, child_command};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

/// The file whose existence starts the loop writers (all at once, after
/// their opens).
const START: &str = "HERMES_STATE_RELIABILITY_START";

/// The loop writer child: opens, creates its session, waits for the start
/// file, then appends one message at a time, as fast as it can,
/// until the stop file exists, and prints `APPENDS <n>`.
pub(super) fn loop_writer_child() {
    let (Ok(path), Ok(session), Some(start), Some(stop)) = (
        std::env::var(DB),
        std::env::var(SESSION),
        std::env::var_os(START),
        std::env::var_os(STOP),
    ) else {
        return;
    };
    let db = SessionDb::open(&path).expect("open");
    db.create_session(&NewSession::new(&session, "cli"))
        .expect("create");
    while !Path::new(&start).exists() {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut appends = 0u64;
    while !Path::new(&stop).exists() {
        db.append_message(&NewMessage::new(&session, "user").content(format!("turn {appends}")))
            .expect("append within the retry budget");
        appends += 1;
    }
    println!("APPENDS {appends}");
}

fn spawn_loop_writer(path: &Path, session: &str, start: &Path, stop: &Path) -> Child {
    child_command("loop-writer", path)
        .env(SESSION, session)
        .env(START, start)
        .env(STOP, stop)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a loop writer")
}

/// Runs `writers` loop writers for `seconds` and returns each one's appends.
fn loop_writers(writers: usize, seconds: u64) -> Vec<u64> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let start = dir.path().join("start");
    let stop = dir.path().join("stop");
    drop(SessionDb::open(&path).expect("create"));
    let mut children: Vec<Child> = (0..writers)
        .map(|w| spawn_loop_writer(&path, &format!("w{w}"), &start, &stop))
        .collect();
    // Every writer has opened the store and made its session.
    let waiting = Instant::now();
    let db = SessionDb::open_read_only(&path).expect("read");
    while db
        .session_count(&hermes_state::SessionCountOptions::all())
        .expect("count the sessions")
        < writers as i64
    {
        for (w, child) in children.iter_mut().enumerate() {
            let exited = child.try_wait().expect("try_wait");
            assert!(
                exited.is_none(),
                "writer {w} ended before it was ready: {exited:?}"
            );
        }
        assert!(
            waiting.elapsed() < Duration::from_secs(60),
            "the writers got ready"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::fs::write(&start, b"").expect("start");
    std::thread::sleep(Duration::from_secs(seconds));
    std::fs::write(&stop, b"").expect("stop");
    children
        .into_iter()
        .enumerate()
        .map(|(w, child)| {
            let output = child.wait_with_output().expect("wait");
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success(),
                "writer {w} failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            stdout
                .lines()
                // The harness's own `test … ` may precede it on the line.
                .find_map(|line| line.find("APPENDS ").map(|at| &line[at + 8..]))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or_else(|| panic!("writer {w} reported its appends:\n{stdout}"))
        })
        .collect()
}

/// Three processes appending as fast as they can for 2 s: each makes at
/// least a quarter of the busiest one's appends (SQLite's lock alone: one of
/// two made 1 against 8,215).
#[test]
fn writer_processes_in_tight_loops_take_turns() {
    let appends = loop_writers(3, 2);
    let most = *appends.iter().max().expect("writers");
    let fewest = *appends.iter().min().expect("writers");
    eprintln!("appends per process: {appends:?}");
    assert!(most > 0, "the writers appended: {appends:?}");
    assert!(
        fewest * 4 >= most,
        "every writer had its turns: appends per process {appends:?}"
    );
}

/// Lock files that cannot be opened (here dangling symbolic links; in life
/// a folder the writer may not create files in) leave the writes as they
/// were before the queue: SQLite's lock alone. Nothing is lost, and the
/// links are left as they were.
#[test]
fn a_store_whose_lock_files_cannot_be_opened_is_written_without_turns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let nowhere = dir.path().join("no-such-folder").join("lock");
    let lock_files = hermes_state_sqlite::writer_queue::WriterQueue::lock_files(&path);
    for lock_file in &lock_files {
        std::os::unix::fs::symlink(&nowhere, lock_file).expect("link");
    }
    let first = SessionDb::open(&path).expect("open");
    let second = SessionDb::open(&path).expect("open again");
    first
        .create_session(&NewSession::new("one", "cli"))
        .expect("create");
    second
        .create_session(&NewSession::new("two", "cli"))
        .expect("create");
    std::thread::scope(|scope| {
        for (db, session) in [(&first, "one"), (&second, "two")] {
            scope.spawn(move || {
                for turn in 0..50 {
                    db.append_message(
                        &NewMessage::new(session, "user").content(format!("turn {turn}")),
                    )
                    .expect("append without a turn");
                }
            });
        }
    });
    for session in ["one", "two"] {
        assert_eq!(
            first.get_messages(session).expect("messages").len(),
            50,
            "every append of {session} landed"
        );
    }
    for lock_file in &lock_files {
        assert_eq!(
            std::fs::read_link(lock_file).expect("still a link"),
            nowhere,
            "{} was left as it was",
            lock_file.display()
        );
    }
    assert!(!nowhere.parent().expect("folder").exists());
}

/// A writer that keeps its turn (here the gate held by the test; in life a
/// writer process stopped between its commit and the end of its turn) costs
/// another writer one wait of `PATIENCE`, not one per write: after that
/// wait its writes wait `PATIENCE_AFTER_A_HANG` only, then go on without a
/// turn, SQLite's lock alone, and take turns again once the gate is free.
#[test]
fn a_turn_held_for_ever_costs_the_other_writers_one_wait_not_one_per_write() {
    use hermes_state_sqlite::writer_queue::{PATIENCE, WriterQueue};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let db = SessionDb::open(&path).expect("open");
    db.create_session(&NewSession::new("s", "cli"))
        .expect("create");
    let hung = WriterQueue::beside(&path).expect("the hung writer's lock files");
    let turn = hung.take_turn();
    assert!(turn.is_held());
    let started = Instant::now();
    for n in 0..20 {
        db.append_message(&NewMessage::new("s", "user").content(format!("turn {n}")))
            .expect("append without a turn");
    }
    let elapsed = started.elapsed();
    eprintln!("20 appends beside a turn held for ever: {elapsed:?}");
    assert!(elapsed >= PATIENCE, "the first write waited for the turn");
    assert!(
        elapsed < PATIENCE * 5,
        "20 appends took {elapsed:?} beside a turn held for ever"
    );
    drop(turn);
    db.append_message(&NewMessage::new("s", "user").content("after"))
        .expect("append in a turn");
    assert_eq!(db.get_messages("s").expect("messages").len(), 21);
}
