//! Reliability under load, kills and bad input (issue: reliability suite).
//!
//! Writers are real processes: the test binary re-runs itself, selecting the
//! ignored `child` test by name, with its role in environment variables.
//! Three ideas have their own modules: `kill_storm` (writers SIGKILLed at random
//! moments while others keep writing), `full_disk` (a real ENOSPC on a
//! tmpfs the test mounts) and `fair_turns` (writers in tight loops take turns). Longer versions run with `cargo test -p
//! hermes-state --test facade -- --ignored soak` (see docs/RELIABILITY.md).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hermes_state::{ErrorKind, NewMessage, NewSession, SearchOptions, SessionDb};
use serde_json::json;

use crate::common::{assert_selects_one_ignored_test, child_test, test_name};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Search;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;

const ROLE: &str = "HERMES_STATE_RELIABILITY_ROLE";
const DB: &str = "HERMES_STATE_RELIABILITY_DB";
const SESSION: &str = "HERMES_STATE_RELIABILITY_SESSION";
const COUNT: &str = "HERMES_STATE_RELIABILITY_COUNT";
/// A path whose existence tells a child to stop (instead of COUNT).
const STOP: &str = "HERMES_STATE_RELIABILITY_STOP";

mod fair_turns;
mod full_disk;
mod kill_storm;

/// The child process: `writer` appends COUNT messages and prints `ACK <id>`
/// after each acknowledged one; `storm-writer` is the kill
/// storm's writer (see `kill_storm`); `reader` searches for COUNT seconds, or
/// until the STOP file exists; `filler` appends 1 MB messages until a write
/// fails and prints the error kind.
#[test]
#[ignore = "a child process of the reliability tests"]
fn child() {
    let (Ok(role), Ok(path)) = (std::env::var(ROLE), std::env::var(DB)) else {
        return;
    };
    if role == "storm-writer" {
        kill_storm::writer_child();
        return;
    }
    if role == "loop-writer" {
        fair_turns::loop_writer_child();
        return;
    }
    let session = std::env::var(SESSION).unwrap_or_default();
    let count: usize = std::env::var(COUNT)
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let db = SessionDb::open(&path).expect("child open");
    match role.as_str() {
        "writer" => {
            db.create_session(&NewSession::new(&session, "cli"))
                .expect("create");
            for i in 0..count {
                let message = if i % 2 == 0 {
                    NewMessage::new(&session, "user")
                        .content(format!("{session} storm message {i} docker"))
                } else {
                    NewMessage::new(&session, "assistant")
                        .tool_calls(json!([{"id": format!("c{i}")}]))
                };
                let id = db
                    .append_message(&message)
                    .expect("append within the retry budget");
                println!("ACK {id}");
            }
        }
        "reader" => {
            let started = Instant::now();
            let stop = std::env::var_os(STOP).map(std::path::PathBuf::from);
            let mut searches = 0;
            while match &stop {
                Some(stop) => !stop.exists(),
                None => started.elapsed() < Duration::from_secs(count as u64),
            } {
                db.search_messages("docker", &SearchOptions::default())
                    .expect("search during the storm");
                db.search_messages("数据", &SearchOptions::default())
                    .expect("search during the storm");
                searches += 1;
            }
            println!("SEARCHES {searches}");
        }
        "filler" => {
            db.create_session(&NewSession::new(&session, "cli"))
                .expect("create");
            let big = "x".repeat(1 << 20);
            for i in 0.. {
                match db.append_message(
                    &NewMessage::new(&session, "user").content(format!("{i} {big}")),
                ) {
                    Ok(id) => println!("ACK {id}"),
                    Err(error) => {
                        println!("FAILED {:?} {error}", error.kind());
                        break;
                    }
                }
            }
        }
        other => panic!("unknown role {other}"),
    }
}

/// The test binary re-run as a child of the given role, on the store at `path`.
fn child_command(role: &str, path: &Path) -> Command {
    let mut command = child_test(module_path!(), "child");
    command.env(ROLE, role).env(DB, path);
    command
}

fn spawn_child(role: &str, path: &Path, session: &str, count: usize) -> Child {
    child_command(role, path)
        .env(SESSION, session)
        .env(COUNT, count.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn child")
}

/// The ids a child acknowledged, from its stdout.
fn acks(stdout: &str) -> Vec<i64> {
    stdout
        .lines()
        .filter_map(|line| line.find("ACK ").map(|at| &line[at + 4..]))
        .filter_map(|id| id.trim().parse().ok())
        .collect()
}

fn assert_store_consistent(path: &Path) {
    let db = SessionDb::open(path).expect("reopen");
    // FTS5 integrity-check is an INSERT command: it needs the writable connection.
    db.migrate().expect("writable connection");
    db.write_raw(|conn| {
        let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("check");
        assert_eq!(ok, "ok");
        for table in ["messages_fts", "messages_fts_trigram", "messages_fts_cjk"] {
            conn.execute_batch(&format!("INSERT INTO {table}({table}) VALUES('integrity-check')"))
                .unwrap_or_else(|e| panic!("{table} integrity-check: {e}"));
        }
        let mismatched: i64 = conn
            .query_row(
                "SELECT count(*) FROM sessions s WHERE s.message_count <> (SELECT count(*) FROM messages m WHERE m.session_id = s.id)",
                [],
                |r| r.get(0),
            )
            .expect("counters");
        assert_eq!(mismatched, 0, "message_count equals the rows of every session");
        Ok(())
    })
    .expect("checks");
}

fn stored_ids(path: &Path, session: &str) -> Vec<i64> {
    let db = SessionDb::open(path).expect("open");
    db.get_messages(session)
        .expect("messages")
        .into_iter()
        .map(|m| m.id)
        .collect()
}

fn storm(writers: usize, per_writer: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    drop(SessionDb::open(&path).expect("create"));
    let reader = spawn_child("reader", &path, "", 3);
    let children: Vec<(String, Child)> = (0..writers)
        .map(|w| {
            let session = format!("w{w}");
            let child = spawn_child("writer", &path, &session, per_writer);
            (session, child)
        })
        .collect();
    let mut acknowledged = BTreeMap::new();
    for (session, child) in children {
        let output = child.wait_with_output().expect("writer");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "writer {session} surfaced an error:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let ids = acks(&stdout);
        assert_eq!(
            ids.len(),
            per_writer,
            "writer {session} acknowledged every append"
        );
        acknowledged.insert(session, ids);
    }
    let output = reader.wait_with_output().expect("reader");
    assert!(
        output.status.success(),
        "reader failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );

    for (session, ids) in &acknowledged {
        assert_eq!(
            &stored_ids(&path, session),
            ids,
            "every acknowledged message of {session}"
        );
        let db = SessionDb::open(&path).expect("open");
        let row = db.get_session(session).expect("read").expect("session");
        assert_eq!(row.message_count, Some(per_writer as i64));
        assert_eq!(row.tool_call_count, Some((per_writer / 2) as i64));
    }
    assert_store_consistent(&path);
}

#[test]
fn eight_writers_and_a_reader_lose_nothing() {
    storm(8, 100);
}

#[test]
#[ignore = "soak: run with --ignored"]
fn soak_eight_writers_many_appends() {
    storm(8, 5_000);
}

/// A write past the process's file-size limit (`ulimit -f`, EFBIG: the
/// portable stand-in for a full disk; the real ENOSPC is `full_disk`): the
/// write fails with a typed error, the process does not crash, and the store
/// stays intact with exactly the acknowledged messages.
#[test]
fn a_file_size_limit_gives_a_typed_error_and_keeps_the_store_intact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    drop(SessionDb::open(&path).expect("create"));
    let exe = std::env::current_exe().expect("test binary");
    let child = test_name(module_path!(), "child");
    assert_selects_one_ignored_test(&child);
    // 64 MiB limit (ulimit -f counts 512-byte blocks); SIGXFSZ ignored so the
    // write fails with EFBIG instead of killing the process.
    let script = format!(
        "trap '' XFSZ; ulimit -f 131072; exec \"{}\" {child} --exact --ignored --nocapture --test-threads=1",
        exe.display()
    );
    let output = Command::new("sh")
        .args(["-c", &script])
        .env(ROLE, "filler")
        .env(DB, &path)
        .env(SESSION, "full")
        .output()
        .expect("run filler");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the filler crashed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let failure = stdout
        .lines()
        .find_map(|l| l.split_once("FAILED ").map(|(_, rest)| rest))
        .expect("a write failed");
    eprintln!("file-size limit: the failing append said {failure}");
    assert_eq!(
        failure.split_whitespace().next(),
        Some(format!("{:?}", ErrorKind::Io).as_str()),
        "the failing append's error kind: {failure}"
    );
    let acked = acks(&stdout);
    assert!(
        acked.len() > 10,
        "some writes succeeded before the disk filled: {}",
        acked.len()
    );
    let stored = stored_ids(&path, "full");
    assert_eq!(stored, acked, "exactly the acknowledged messages are there");
    assert_store_consistent(&path);
}

#[test]
fn bad_values_round_trip_or_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = SessionDb::open(dir.path().join("state.db")).expect("open");
    // Each text, and whether searching for it finds the message holding it:
    // a query the FTS5 grammar rejects once sanitised (`;`, `=`, a bare
    // `--`) answers an empty list, as the original's does (api.md §8.4),
    // never an error; the empty query finds nothing (§8.2).
    let nasty = [
        ("'; DROP TABLE sessions; --", false),
        ("\" OR 1=1 --", false),
        ("a\0b\0c", true),
        ("NEAR(a b) AND NOT OR * ^ : { } ( ) \" '", false),
        ("%_\\ LIKE ESCAPE", false),
        ("😀 数据 \u{202e}rtl \u{feff}", true),
        ("", false),
    ];
    for (i, (text, findable)) in nasty.iter().enumerate() {
        let id = format!("{text}#{i}");
        db.create_session(
            &NewSession::new(&id, *text)
                .model(*text)
                .cwd(*text)
                .user_id(*text),
        )
        .expect("create");
        let row = db.get_session(&id).expect("read").expect("exists");
        assert_eq!(
            (
                row.source.as_str(),
                row.model.as_deref(),
                row.cwd.as_deref()
            ),
            (*text, Some(*text), Some(*text))
        );
        let message = NewMessage::new(&id, *text)
            .content(*text)
            .tool_result(*text, *text);
        let mid = db.append_message(&message).expect("append");
        let stored = &db.get_messages(&id).expect("read")[0];
        assert_eq!(stored.id, mid);
        assert_eq!(
            stored.content,
            Some(hermes_state::Content::Text((*text).to_owned()))
        );
        assert_eq!(stored.tool_name.as_deref(), Some(*text));
        // Every string as a search query: never a syntax error, and the
        // message holding the text is found by it wherever the text has a
        // word to search for.
        let hits = db
            .search_messages(text, &SearchOptions::default())
            .expect("search never fails on syntax");
        let found = hits.iter().any(|hit| hit.id == mid);
        assert_eq!(found, *findable, "{text:?}: {hits:?}");
        assert_eq!(
            hits.len(),
            usize::from(found),
            "{text:?}: only its message holds it"
        );
        // Every string as a title: stored as the original normalises it, or
        // refused with a typed error.
        match db.set_session_title(&id, Some(text)) {
            Ok(_) => assert_eq!(
                db.get_session_title(&id).expect("read the title"),
                SessionDb::sanitize_title(Some(text)).expect("a title it stored"),
                "{text:?}"
            ),
            Err(error) => assert!(
                matches!(
                    error.kind(),
                    ErrorKind::InvalidInput | ErrorKind::Constraint
                ),
                "{text:?}: {error}"
            ),
        }
        db.end_session(&id, text).expect("end");
    }
    // 10 MB content round-trips.
    db.create_session(&NewSession::new("big", "cli"))
        .expect("create");
    let big: String = "数据 docker ".repeat(10 * 1024 * 1024 / 14);
    let id = db
        .append_message(&NewMessage::new("big", "user").content(big.clone()))
        .expect("10 MB append");
    let stored = db.get_messages("big").expect("read");
    assert_eq!(
        (
            stored[0].id,
            stored[0].content.as_ref().and_then(|c| c.as_text())
        ),
        (id, Some(big.as_str()))
    );
    // Huge and negative ids are just strings.
    let huge = "9".repeat(10_000);
    db.create_session(&NewSession::new(&huge, "cli"))
        .expect("huge id");
    assert!(db.get_session(&huge).expect("read").is_some());
    // A legacy row with invalid JSON in tool_calls reads as [] instead of failing.
    db.write_raw(|conn| {
        conn.execute(
            "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES ('big', 'assistant', NULL, '{not json', 1.0)",
            [],
        )
        .expect("legacy row");
        Ok(())
    })
    .expect("raw insert");
    let legacy = db.get_messages("big").expect("read");
    assert_eq!(
        legacy.last().and_then(|m| m.tool_calls.clone()),
        Some(json!([]))
    );
    assert!(db.get_messages_as_conversation("big", false).is_ok());
    // Titles over the limit are refused with a typed error.
    let long = "t".repeat(101);
    assert_eq!(
        db.set_session_title("big", Some(&long))
            .expect_err("too long")
            .kind(),
        ErrorKind::InvalidInput
    );
}

#[test]
fn unusable_paths_give_typed_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"not a directory").expect("write");
    // A store path under a regular file.
    let error = SessionDb::open(file.join("state.db")).expect_err("under a file");
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Io | ErrorKind::ReadOnly | ErrorKind::NotFound
        ),
        "{error:?}"
    );
    // A directory where the store should be.
    let error = SessionDb::open(dir.path()).expect_err("a directory");
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Io | ErrorKind::NotADatabase | ErrorKind::Other
        ),
        "{error:?}"
    );
    // A missing store, read-only.
    let error = SessionDb::open_read_only(dir.path().join("missing.db")).expect_err("missing");
    assert!(
        matches!(error.kind(), ErrorKind::Io | ErrorKind::NotFound),
        "{error:?}"
    );
}
