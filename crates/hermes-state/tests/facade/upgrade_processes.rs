//! Upgrades across processes: a process killed in the middle of an upgrade
//! leaves a file the next open completes with nothing lost, and two processes
//! opening the same old file at once upgrade it once and both succeed.
//!
//! The test binary re-runs itself as the child processes (the ignored
//! `opener_child` test, selected by name).
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use hermes_state::{SearchOptions, SessionDb};
use xtask::fixtures::{Shape, write_fixture};

use crate::common::child_test;
use hermes_state_core::store::Search;

const CHILD_DB: &str = "HERMES_STATE_TEST_OPEN_DB";

/// Opens the store (upgrading it) and prints the versions it saw.
#[test]
#[ignore = "a child process of the upgrade tests"]
fn opener_child() {
    let Ok(path) = std::env::var(CHILD_DB) else {
        return;
    };
    let db = SessionDb::open(&path).expect("child open");
    let report = db.migrate().expect("child upgrade");
    println!(
        "OPENED from={:?} to={}",
        report.from_version, report.to_version
    );
}

fn spawn_opener(path: &Path) -> Child {
    child_test(module_path!(), "opener_child")
        .env(CHILD_DB, path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn opener")
}

/// A v10 file (its FTS must be rebuilt in the v23 layout, which takes a
/// while) with many extra messages, so an upgrade lasts long enough to be
/// interrupted.
fn big_v10_store(path: &Path, extra_messages: usize) -> i64 {
    let manifest = write_fixture(path, Shape::Fresh(10)).expect("fixture");
    let conn = hermes_state::rusqlite::Connection::open(path).expect("plain open");
    let session = &manifest.sessions[0].id;
    conn.execute_batch("BEGIN").expect("begin");
    {
        let mut insert = conn
            .prepare("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, 'user', ?2, ?3)")
            .expect("prepare");
        for i in 0..extra_messages {
            insert
                .execute(hermes_state::rusqlite::params![
                    session,
                    format!(
                        "bulk message {i} about kubernetes deployment 数据库 number {}",
                        i * 7
                    ),
                    1_800_000_000.0 + i as f64
                ])
                .expect("insert");
        }
    }
    conn.execute(
        "UPDATE sessions SET message_count = message_count + ?1 WHERE id = ?2",
        hermes_state::rusqlite::params![extra_messages as i64, session],
    )
    .expect("count");
    conn.execute_batch("COMMIT").expect("commit");
    (manifest.messages.len() + extra_messages) as i64
}

fn stored_version(path: &Path) -> i64 {
    let conn = hermes_state::rusqlite::Connection::open(path).expect("plain open");
    conn.query_row("SELECT version FROM schema_version", [], |r| r.get(0))
        .expect("version")
}

fn assert_complete(path: &Path, messages: i64) {
    let db = SessionDb::open(path).expect("final open");
    db.migrate().expect("final upgrade");
    db.write_raw(|conn| {
        let version: i64 = conn
            .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
            .expect("v");
        assert_eq!(version, 23);
        let count: i64 = conn
            .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
            .expect("count");
        assert_eq!(count, messages, "every message survived");
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("check");
        assert_eq!(ok, "ok");
        for table in ["messages_fts", "messages_fts_trigram"] {
            conn.execute_batch(&format!(
                "INSERT INTO {table}({table}) VALUES('integrity-check')"
            ))
            .unwrap_or_else(|e| panic!("{table}: {e}"));
        }
        // An upgraded (existing) file gets no CJK index: a running original
        // without the tokenizer could no longer write messages.
        let cjk: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name LIKE 'messages_fts_cjk%'",
                [],
                |r| r.get(0),
            )
            .expect("cjk objects");
        assert_eq!(cjk, 0);
        Ok(())
    })
    .expect("checks");
    let options = SearchOptions {
        limit: 100_000,
        ..SearchOptions::default()
    };
    let bulk = db
        .search_messages("kubernetes", &options)
        .expect("search")
        .len();
    assert!(bulk >= 1, "the bulk messages are searchable");
}

#[test]
fn an_upgrade_killed_at_any_moment_completes_on_the_next_migration() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let messages = big_v10_store(&path, 20_000);
    let mut interrupted = 0;
    for delay_ms in [5u64, 20, 60, 150, 300, 600] {
        if stored_version(&path) == 23 {
            break;
        }
        let mut child = spawn_opener(&path);
        std::thread::sleep(Duration::from_millis(delay_ms));
        if child.try_wait().expect("poll").is_none() {
            child.kill().expect("SIGKILL");
            interrupted += 1;
        }
        let _ = child.wait();
        // Killed or not, the file is either the old one or the upgraded one.
        let version = stored_version(&path);
        assert!(
            version == 10 || version == 23,
            "half-upgraded file: version {version}"
        );
        let conn = hermes_state::rusqlite::Connection::open(&path).expect("plain open");
        let ok: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .expect("check");
        assert_eq!(ok, "ok", "after a kill at {delay_ms} ms");
        let count: i64 = conn
            .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
            .expect("count");
        assert_eq!(count, messages, "after a kill at {delay_ms} ms");
    }
    assert!(
        interrupted > 0,
        "no open was interrupted; the upgrade is too fast for this test"
    );
    assert_complete(&path, messages);
}

#[test]
fn two_processes_opening_an_old_file_upgrade_it_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    let messages = big_v10_store(&path, 5_000);
    let children = [spawn_opener(&path), spawn_opener(&path)];
    let reports: Vec<String> = children
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().expect("wait");
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            assert!(
                output.status.success(),
                "opener failed:\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let at = stdout.find("OPENED ").expect("report line");
            stdout[at..].lines().next().unwrap_or_default().to_owned()
        })
        .collect();
    let upgraded = reports
        .iter()
        .filter(|r| r.contains("from=Some(10)"))
        .count();
    let found_done = reports
        .iter()
        .filter(|r| r.contains("from=Some(23)"))
        .count();
    assert_eq!(
        (upgraded, found_done),
        (1, 1),
        "exactly one process upgraded: {reports:?}"
    );
    let history: i64 = hermes_state::rusqlite::Connection::open(&path)
        .expect("plain")
        .query_row("SELECT count(*) FROM refinery_schema_history", [], |r| {
            r.get(0)
        })
        .expect("history");
    assert_eq!(history, 1, "the baseline is recorded once");
    assert_complete(&path, messages);
}
