//! Compression locks contended by several processes.
//!
//! The tests re-run this binary as child processes (the `lock_child` test,
//! ignored unless asked for by name), so the contenders really are separate
//! processes with their own connections and pids.
#![allow(clippy::print_stdout)]

use std::process::Stdio;

use super::*;
use crate::common::child_test;
use hermes_state_core::store::Coordination;

const CHILD_DB: &str = "HERMES_STATE_TEST_LOCK_DB";
const CHILD_SESSION: &str = "HERMES_STATE_TEST_LOCK_SESSION";
const CHILD_TTL: &str = "HERMES_STATE_TEST_LOCK_TTL";
const CHILD_START_AT: &str = "HERMES_STATE_TEST_LOCK_START_AT";
const CHILD_DONE_DIR: &str = "HERMES_STATE_TEST_LOCK_DONE_DIR";
const CHILD_COUNT: &str = "HERMES_STATE_TEST_LOCK_COUNT";

/// Opens the store, waits for the start time, tries once to take the lock
/// with the holder `pid=<own pid>:x`, and prints the answer. Then it stays
/// alive until every sibling has tried: a winner that exited early would be a
/// dead holder, whose lock the next contender rightly takes over.
#[test]
#[ignore = "a child process of the lock contention tests"]
fn lock_child() {
    let (Ok(db_path), Ok(session), Ok(ttl)) = (
        std::env::var(CHILD_DB),
        std::env::var(CHILD_SESSION),
        std::env::var(CHILD_TTL),
    ) else {
        return;
    };
    let ttl: f64 = ttl.parse().expect("ttl");
    let db = SessionDb::open(&db_path).expect("child open");
    if let Ok(start_at) = std::env::var(CHILD_START_AT) {
        let start_at: f64 = start_at.parse().expect("start time");
        while unix_now() < start_at {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    let holder = format!("pid={}:x", std::process::id());
    let acquired = db.try_acquire_compression_lock(&session, &holder, ttl);
    println!("\nLOCK {acquired} {holder}");
    if let (Ok(done_dir), Ok(count)) = (std::env::var(CHILD_DONE_DIR), std::env::var(CHILD_COUNT)) {
        let count: usize = count.parse().expect("count");
        std::fs::write(
            Path::new(&done_dir).join(std::process::id().to_string()),
            "",
        )
        .expect("mark done");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::fs::read_dir(&done_dir).expect("done dir").count() < count
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Runs `count` lock children at once; returns `(acquired, holder)` per child.
fn run_lock_children(
    db_path: &Path,
    session: &str,
    ttl: f64,
    count: usize,
    start_at: Option<f64>,
) -> Vec<(bool, String)> {
    let done_dir = tempfile::tempdir().expect("done dir");
    let children: Vec<_> = (0..count)
        .map(|_| {
            let mut command = child_test(module_path!(), "lock_child");
            command
                .env(CHILD_DB, db_path)
                .env(CHILD_SESSION, session)
                .env(CHILD_TTL, ttl.to_string())
                .env(CHILD_DONE_DIR, done_dir.path())
                .env(CHILD_COUNT, count.to_string())
                .env_remove(CHILD_START_AT)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if let Some(start_at) = start_at {
                command.env(CHILD_START_AT, start_at.to_string());
            }
            command.spawn().expect("spawn lock child")
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().expect("child output");
            let stdout = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success(),
                "lock child failed:\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let line = stdout
                .lines()
                .find_map(|line| line.strip_prefix("LOCK "))
                .unwrap_or_else(|| panic!("no answer from the child:\n{stdout}"));
            let (acquired, holder) = line.split_once(' ').expect("answer");
            (acquired == "true", holder.to_owned())
        })
        .collect()
}

/// Four processes released at the same instant contend for one lock:
/// exactly one gets it, and the lock names that one.
#[test]
fn four_processes_contending_exactly_one_acquires() {
    let (dir, db) = temp_db();
    let path = dir.path().join("state.db");
    let start_at = unix_now() + 2.0;
    let results = run_lock_children(&path, "s", 30.0, 4, Some(start_at));
    let winners: Vec<&String> = results
        .iter()
        .filter(|(acquired, _)| *acquired)
        .map(|(_, holder)| holder)
        .collect();
    assert_eq!(winners.len(), 1, "exactly one winner: {results:?}");
    let holders: std::collections::BTreeSet<&String> = results.iter().map(|(_, h)| h).collect();
    assert_eq!(holders.len(), 4, "four distinct processes: {results:?}");
    assert_eq!(
        db.get_compression_lock_holder("s")
            .expect("holder")
            .as_ref(),
        Some(winners[0])
    );

    // The winner has exited: on Linux its lock is reclaimable at once.
    #[cfg(target_os = "linux")]
    {
        let pid = winners[0]
            .strip_prefix("pid=")
            .and_then(|rest| rest.split(':').next())
            .expect("pid");
        if !Path::new(&format!("/proc/{pid}")).exists() {
            assert!(
                db.try_acquire_compression_lock("s", "parent", 30.0),
                "the exited winner's lock is taken over"
            );
        }
    }
}

/// A lock that expires is taken over by another process; before it expires
/// the other process is refused.
#[test]
fn an_expired_lock_is_taken_over_by_another_process() {
    let (dir, db) = temp_db();
    let path = dir.path().join("state.db");
    // No `pid=` field: only expiry can free this lock.
    assert!(db.try_acquire_compression_lock("s", "parent-holder", 30.0));
    let refused = run_lock_children(&path, "s", 30.0, 1, None);
    assert!(!refused[0].0, "a live lock refuses another process");

    assert!(db.try_acquire_compression_lock("t", "parent-holder", 0.2));
    std::thread::sleep(Duration::from_millis(300));
    let taken = run_lock_children(&path, "t", 30.0, 1, None);
    assert!(taken[0].0, "the expired lock is taken over");
    assert_eq!(
        db.get_compression_lock_holder("t")
            .expect("holder")
            .as_ref(),
        Some(&taken[0].1)
    );
    assert!(
        !db.refresh_compression_lock("t", "parent-holder", 30.0),
        "the old holder lost it"
    );
    db.release_compression_lock("t", "parent-holder");
    assert_eq!(
        db.get_compression_lock_holder("t")
            .expect("holder")
            .as_ref(),
        Some(&taken[0].1),
        "the old holder's release leaves the new lock"
    );
}
