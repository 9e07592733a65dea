//! Compression locks, gateway routing, async delegations and `state_meta`
//! writes (`api.md` §12).
//!
//! The lock contention tests re-run this binary as child processes (the
//! `lock_child` test, ignored unless asked for by name), so the contenders
//! really are separate processes with their own connections and pids.
#![allow(clippy::print_stdout)]

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use hermes_state::{Delegation, DelegationFilter, ErrorKind, NewDelegation, NewSession, SessionDb};

use crate::common::{child_test, unix_now};

fn temp_db() -> (tempfile::TempDir, SessionDb) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = SessionDb::open(dir.path().join("state.db")).expect("open");
    (dir, db)
}

fn lock_row(db: &SessionDb, session_id: &str) -> Option<(String, f64, f64)> {
    db.read(|conn| {
        Ok(conn
            .query_row(
                "SELECT holder, acquired_at, expires_at FROM compression_locks WHERE session_id = ?1",
                [session_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .ok())
    })
    .expect("read lock")
}

// ---------------------------------------------------------------------------
// Compression locks
// ---------------------------------------------------------------------------

/// The measured sequence of `api.md` §12.1.
#[test]
fn compression_lock_measured_sequence() {
    let (_dir, db) = temp_db();
    assert!(
        db.try_acquire_compression_lock("s", "A", 300.0),
        "A acquires"
    );
    assert!(
        !db.try_acquire_compression_lock("s", "B", 300.0),
        "B is refused"
    );
    let (_, _, expires_before) = lock_row(&db, "s").expect("row");
    assert!(db.try_acquire_compression_lock("s", "A", 600.0), "A again");
    let (_, _, expires_after) = lock_row(&db, "s").expect("row");
    assert_eq!(
        expires_before, expires_after,
        "re-acquiring does not extend the lease"
    );
    assert_eq!(
        db.get_compression_lock_holder("s")
            .expect("holder")
            .as_deref(),
        Some("A")
    );

    assert!(db.refresh_compression_lock("s", "A", 10.0), "A refreshes");
    let (_, acquired_at, expires_at) = lock_row(&db, "s").expect("row");
    assert!(
        (expires_at - acquired_at - 10.0).abs() < 5.0,
        "the refresh set now + 10 s"
    );
    assert!(
        !db.refresh_compression_lock("s", "B", 10.0),
        "B cannot refresh"
    );

    db.release_compression_lock("s", "B");
    assert_eq!(
        db.get_compression_lock_holder("s")
            .expect("holder")
            .as_deref(),
        Some("A"),
        "B's release leaves A's lock"
    );
    db.release_compression_lock("s", "A");
    assert_eq!(db.get_compression_lock_holder("s").expect("holder"), None);
    assert!(lock_row(&db, "s").is_none(), "the row is gone");

    // An expired lock (ttl -1) is taken over.
    assert!(db.try_acquire_compression_lock("t", "A", -1.0));
    assert_eq!(
        db.get_compression_lock_holder("t").expect("holder"),
        None,
        "an expired lock has no holder"
    );
    assert!(
        !db.refresh_compression_lock("t", "A", 10.0),
        "an expired lock cannot be refreshed"
    );
    assert!(
        db.try_acquire_compression_lock("t", "B", 300.0),
        "B takes over"
    );
    assert_eq!(
        db.get_compression_lock_holder("t")
            .expect("holder")
            .as_deref(),
        Some("B")
    );

    // A lock held by this very process is never reclaimed as dead.
    let me = format!("pid={}:t:n", std::process::id());
    assert!(db.try_acquire_compression_lock("me", &me, 300.0));
    assert!(!db.try_acquire_compression_lock("me", "B", 300.0));
    assert_eq!(
        db.get_compression_lock_holder("me").expect("holder"),
        Some(me)
    );

    // Holders without a structured pid are never reclaimed before expiry.
    assert!(db.try_acquire_compression_lock("plain", "worker-7:x", 300.0));
    assert!(!db.try_acquire_compression_lock("plain", "B", 300.0));
}

/// A lock whose holder names a local process that no longer exists is taken
/// over before it expires (checked through `/proc`, so Linux only).
#[cfg(target_os = "linux")]
#[test]
fn compression_lock_of_a_dead_process_is_taken_over() {
    if Path::new("/proc/999999").exists() {
        println!("skipped: a process 999999 exists");
        return;
    }
    let (_dir, db) = temp_db();
    assert!(db.try_acquire_compression_lock("s", "pid=999999:t:n", 300.0));
    assert!(
        db.try_acquire_compression_lock("s", "B", 300.0),
        "the dead holder's lock is reclaimed"
    );
    assert_eq!(
        db.get_compression_lock_holder("s")
            .expect("holder")
            .as_deref(),
        Some("B")
    );
    // `pid=` must open a field and close at `:` or the end.
    assert!(db.try_acquire_compression_lock("u", "xpid=999999", 300.0));
    assert!(!db.try_acquire_compression_lock("u", "B", 300.0));
    assert!(db.try_acquire_compression_lock("v", "pid=999999x", 300.0));
    assert!(!db.try_acquire_compression_lock("v", "B", 300.0));
}

#[test]
fn compression_locks_need_no_session_row_and_never_fail() {
    let (dir, db) = temp_db();
    assert!(db.try_acquire_compression_lock("no-such-session", "A", 300.0));
    assert!(db.get_session("no-such-session").expect("read").is_none());
    assert_eq!(db.message_count(None).expect("count"), 0);

    assert!(!db.try_acquire_compression_lock("", "A", 300.0), "empty id");
    assert!(!db.refresh_compression_lock("", "A", 300.0));
    assert!(!db.refresh_compression_lock("no-such-session", "", 300.0));
    assert_eq!(db.get_compression_lock_holder("").expect("holder"), None);
    db.release_compression_lock("", "A");

    // Read-only and closed handles answer `false` instead of failing.
    let read_only = SessionDb::open_read_only(dir.path().join("state.db")).expect("ro");
    assert!(!read_only.try_acquire_compression_lock("other", "A", 300.0));
    assert!(!read_only.refresh_compression_lock("no-such-session", "A", 300.0));
    read_only.release_compression_lock("no-such-session", "A");
    assert_eq!(
        read_only
            .get_compression_lock_holder("no-such-session")
            .expect("holder")
            .as_deref(),
        Some("A")
    );
    db.close().expect("close");
    assert!(!db.try_acquire_compression_lock("other", "A", 300.0));
    assert!(!db.refresh_compression_lock("no-such-session", "A", 300.0));
    db.release_compression_lock("no-such-session", "A");
    assert!(db.get_compression_lock_holder("x").is_err());
}

#[test]
fn compression_locks_survive_session_deletion() {
    let (_dir, db) = temp_db();
    db.create_session(&NewSession::new("s", "cli"))
        .expect("create");
    assert!(db.try_acquire_compression_lock("s", "A", 300.0));
    assert!(db.delete_session("s").expect("delete"));
    assert_eq!(
        db.get_compression_lock_holder("s")
            .expect("holder")
            .as_deref(),
        Some("A")
    );
}

// --- Several processes --------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Gateway routing
// ---------------------------------------------------------------------------

fn routing_rows(db: &SessionDb) -> Vec<(String, String, String, f64)> {
    db.read(|conn| {
        let mut stmt = conn
            .prepare("SELECT scope, session_key, entry_json, updated_at FROM gateway_routing ORDER BY scope, session_key")
            .expect("prepare");
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .expect("query")
            .collect::<Result<Vec<_>, _>>()
            .expect("rows");
        Ok(rows)
    })
    .expect("read")
}

fn pairs(map: &std::collections::BTreeMap<String, String>) -> Vec<(&str, &str)> {
    map.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

#[test]
fn gateway_routing_save_load_and_upsert() {
    let (_dir, db) = temp_db();
    db.save_gateway_routing_entry("k2", r#"{"session_id":"b"}"#, "")
        .expect("save");
    db.save_gateway_routing_entry("k1", r#"{"session_id":"a"}"#, "")
        .expect("save");
    db.save_gateway_routing_entry("k1", r#"{"session_id":"c"}"#, "/scope")
        .expect("save");
    let default = db.load_gateway_routing_entries("").expect("load");
    assert_eq!(
        pairs(&default),
        [
            ("k1", r#"{"session_id":"a"}"#),
            ("k2", r#"{"session_id":"b"}"#)
        ],
        "key order"
    );
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("/scope").expect("load")),
        [("k1", r#"{"session_id":"c"}"#)]
    );
    assert!(
        db.load_gateway_routing_entries("other")
            .expect("load")
            .is_empty()
    );

    // Upsert: the entry and updated_at change, the row stays one.
    let before = routing_rows(&db);
    std::thread::sleep(Duration::from_millis(20));
    db.save_gateway_routing_entry("k1", r#"{"session_id":"a2"}"#, "")
        .expect("save");
    let after = routing_rows(&db);
    assert_eq!(after.len(), 3);
    let old = before
        .iter()
        .find(|r| r.0.is_empty() && r.1 == "k1")
        .expect("old");
    let new = after
        .iter()
        .find(|r| r.0.is_empty() && r.1 == "k1")
        .expect("new");
    assert_eq!(new.2, r#"{"session_id":"a2"}"#);
    assert!(new.3 > old.3, "updated_at moved");

    // Empty key or entry: nothing written.
    db.save_gateway_routing_entry("", "{}", "").expect("save");
    db.save_gateway_routing_entry("k9", "", "").expect("save");
    assert_eq!(routing_rows(&db).len(), 3);
}

#[test]
fn gateway_routing_replace_is_per_scope_and_skips_empty_pairs() {
    let (_dir, db) = temp_db();
    db.save_gateway_routing_entry("old", "{}", "a")
        .expect("save");
    db.save_gateway_routing_entry("keep", "{}", "b")
        .expect("save");

    let mut entries = std::collections::BTreeMap::new();
    entries.insert("x".to_owned(), r#"{"n":1}"#.to_owned());
    entries.insert("y".to_owned(), r#"{"n":2}"#.to_owned());
    entries.insert(String::new(), r#"{"n":3}"#.to_owned());
    entries.insert("z".to_owned(), String::new());
    db.replace_gateway_routing_entries(&entries, "a")
        .expect("replace");

    let rows = routing_rows(&db);
    let scope_a: Vec<_> = rows.iter().filter(|r| r.0 == "a").collect();
    assert_eq!(
        scope_a.iter().map(|r| r.1.as_str()).collect::<Vec<_>>(),
        ["x", "y"],
        "old is gone, empty keys and entries are skipped"
    );
    assert_eq!(scope_a[0].3, scope_a[1].3, "one updated_at for the batch");
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("b").expect("load")),
        [("keep", "{}")],
        "other scopes untouched"
    );

    // A later duplicate key wins, as in a dict; slices of pairs work too.
    let list = [("d", "first"), ("d", "second"), ("e", "1")];
    db.replace_gateway_routing_entries(list, "a")
        .expect("replace");
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("a").expect("load")),
        [("d", "second"), ("e", "1")]
    );
    let owned: Vec<(String, String)> = vec![("f".into(), "2".into())];
    db.replace_gateway_routing_entries(owned.iter().map(|(k, v)| (k, v)), "a")
        .expect("replace");
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("a").expect("load")),
        [("f", "2")]
    );

    // Replacing with nothing empties the scope.
    db.replace_gateway_routing_entries(Vec::<(String, String)>::new(), "a")
        .expect("replace");
    assert!(
        db.load_gateway_routing_entries("a")
            .expect("load")
            .is_empty()
    );
    assert_eq!(routing_rows(&db).len(), 1);
}

#[test]
fn gateway_routing_delete() {
    let (_dir, db) = temp_db();
    for key in ["a", "b", "c"] {
        db.save_gateway_routing_entry(key, "{}", "").expect("save");
        db.save_gateway_routing_entry(key, "{}", "s").expect("save");
    }
    db.delete_gateway_routing_entries(["a", "c", "missing"], "")
        .expect("delete");
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("").expect("load")),
        [("b", "{}")]
    );
    assert_eq!(
        db.load_gateway_routing_entries("s").expect("load").len(),
        3,
        "other scopes untouched"
    );
    db.delete_gateway_routing_entries(Vec::<String>::new(), "s")
        .expect("no keys");
    assert_eq!(db.load_gateway_routing_entries("s").expect("load").len(), 3);
    let keys = vec!["a".to_owned(), "b".to_owned()];
    db.delete_gateway_routing_entries(&keys, "s")
        .expect("delete");
    assert_eq!(
        pairs(&db.load_gateway_routing_entries("s").expect("load")),
        [("c", "{}")]
    );
}

#[test]
fn gateway_routing_writes_fail_on_a_read_only_handle() {
    let (dir, db) = temp_db();
    db.save_gateway_routing_entry("k", "{}", "").expect("save");
    let read_only = SessionDb::open_read_only(dir.path().join("state.db")).expect("ro");
    let error = read_only
        .save_gateway_routing_entry("k2", "{}", "")
        .expect_err("read-only");
    assert_eq!(error.kind(), ErrorKind::ReadOnly);
    assert_eq!(
        read_only
            .replace_gateway_routing_entries([("k", "{}")], "")
            .expect_err("read-only")
            .kind(),
        ErrorKind::ReadOnly
    );
    assert_eq!(
        pairs(&read_only.load_gateway_routing_entries("").expect("load")),
        [("k", "{}")]
    );
}

// ---------------------------------------------------------------------------
// Async delegations
// ---------------------------------------------------------------------------

#[test]
fn delegation_record_update_finish() {
    let (_dir, db) = temp_db();
    let mut new = NewDelegation::new("d1", "origin", "running");
    new.parent_session_id = Some("parent".to_owned());
    new.task_json = Some(r#"{"goal":"g"}"#.to_owned());
    new.event_json = Some(r#"{"type":"started"}"#.to_owned());
    new.owner_pid = Some(4242);
    new.owner_started_at = Some(1_700_000_000);
    let before = unix_now();
    db.record_delegation(&new).expect("record");

    let row = db.get_delegation("d1").expect("get").expect("exists");
    assert_eq!(
        row,
        Delegation {
            dispatched_at: row.dispatched_at,
            updated_at: row.dispatched_at,
            delegation_id: "d1".into(),
            origin_session: "origin".into(),
            origin_ui_session_id: String::new(),
            parent_session_id: Some("parent".into()),
            state: "running".into(),
            completed_at: None,
            event_json: Some(r#"{"type":"started"}"#.into()),
            result_json: None,
            delivery_state: "pending".into(),
            delivery_attempts: 0,
            delivered_at: None,
            owner_pid: Some(4242),
            owner_started_at: Some(1_700_000_000),
            task_json: Some(r#"{"goal":"g"}"#.into()),
            delivery_claim: None,
            delivery_claimed_at: None,
        }
    );
    assert!(row.dispatched_at >= before - 1.0 && row.dispatched_at <= unix_now() + 1.0);

    std::thread::sleep(Duration::from_millis(20));
    assert!(
        db.update_delegation_state("d1", "progress", Some(r#"{"type":"progress"}"#))
            .expect("update")
    );
    let updated = db.get_delegation("d1").expect("get").expect("exists");
    assert_eq!(updated.state, "progress");
    assert_eq!(
        updated.event_json.as_deref(),
        Some(r#"{"type":"progress"}"#)
    );
    assert!(updated.updated_at > row.updated_at);
    assert_eq!(updated.dispatched_at, row.dispatched_at);
    assert!(
        db.update_delegation_state("d1", "running", None)
            .expect("update")
    );
    assert_eq!(
        db.get_delegation("d1")
            .expect("get")
            .expect("exists")
            .event_json
            .as_deref(),
        Some(r#"{"type":"progress"}"#),
        "no event keeps the stored one"
    );

    std::thread::sleep(Duration::from_millis(20));
    assert!(
        db.finish_delegation("d1", "completed", Some(r#"{"summary":"done"}"#))
            .expect("finish")
    );
    let done = db.get_delegation("d1").expect("get").expect("exists");
    assert_eq!(done.state, "completed");
    assert_eq!(done.result_json.as_deref(), Some(r#"{"summary":"done"}"#));
    let completed_at = done.completed_at.expect("completed_at");
    assert_eq!(completed_at, done.updated_at);
    assert!(completed_at > updated.updated_at);
    assert_eq!(done.delivery_state, "pending", "delivery is not touched");

    assert!(
        !db.update_delegation_state("nope", "x", None)
            .expect("update")
    );
    assert!(!db.finish_delegation("nope", "x", None).expect("finish"));
    assert!(db.get_delegation("nope").expect("get").is_none());
}

#[test]
fn delegation_ids_are_required_and_unique() {
    let (_dir, db) = temp_db();
    db.record_delegation(&NewDelegation::new("d", "o", "queued"))
        .expect("record");
    let duplicate = db
        .record_delegation(&NewDelegation::new("d", "o2", "queued"))
        .expect_err("duplicate");
    assert_eq!(duplicate.kind(), ErrorKind::Constraint, "{duplicate}");
    assert_eq!(
        db.get_delegation("d")
            .expect("get")
            .expect("exists")
            .origin_session,
        "o",
        "the first record stays"
    );
    let empty = db
        .record_delegation(&NewDelegation::new("", "o", "queued"))
        .expect_err("empty id");
    assert_eq!(empty.kind(), ErrorKind::InvalidInput);
}

#[test]
fn delegation_list_filters_and_order() {
    let (_dir, db) = temp_db();
    for (id, origin, state) in [
        ("c", "s1", "running"),
        ("a", "s2", "running"),
        ("b", "s1", "queued"),
    ] {
        db.record_delegation(&NewDelegation::new(id, origin, state))
            .expect("record");
        std::thread::sleep(Duration::from_millis(5));
    }
    db.finish_delegation("a", "completed", Some("{}"))
        .expect("finish");
    // The delivery side marks one delivered, on its own connection.
    let other = hermes_state::rusqlite::Connection::open(db.path()).expect("other connection");
    other
        .execute(
            "UPDATE async_delegations SET delivery_state = 'delivered', delivery_attempts = 1, delivered_at = 5.0 WHERE delegation_id = 'c'",
            [],
        )
        .expect("deliver");

    let ids = |filter: &DelegationFilter| -> Vec<String> {
        db.list_delegations(filter)
            .expect("list")
            .into_iter()
            .map(|d| d.delegation_id)
            .collect()
    };
    assert_eq!(
        ids(&DelegationFilter::default()),
        ["c", "a", "b"],
        "dispatch order"
    );
    assert_eq!(
        ids(&DelegationFilter {
            origin_session: Some("s1".into()),
            ..DelegationFilter::default()
        }),
        ["c", "b"]
    );
    assert_eq!(
        ids(&DelegationFilter {
            state: Some("running".into()),
            ..DelegationFilter::default()
        }),
        ["c"]
    );
    assert_eq!(
        ids(&DelegationFilter {
            delivery_state: Some("pending".into()),
            ..DelegationFilter::default()
        }),
        ["a", "b"]
    );
    assert_eq!(
        ids(&DelegationFilter {
            state: Some("completed".into()),
            delivery_state: Some("pending".into()),
            origin_session: Some("s2".into()),
        }),
        ["a"]
    );
    assert!(
        ids(&DelegationFilter {
            state: Some("completed".into()),
            origin_session: Some("s1".into()),
            ..DelegationFilter::default()
        })
        .is_empty()
    );
    let delivered = db.get_delegation("c").expect("get").expect("exists");
    assert_eq!(delivered.delivery_attempts, 1);
    assert_eq!(delivered.delivered_at, Some(5.0));

    // Ties on dispatched_at are ordered by id.
    other
        .execute("UPDATE async_delegations SET dispatched_at = 1.0", [])
        .expect("tie");
    assert_eq!(ids(&DelegationFilter::default()), ["a", "b", "c"]);
}

#[test]
fn delegations_survive_deleting_their_sessions() {
    let (_dir, db) = temp_db();
    db.create_session(&NewSession::new("origin", "cli"))
        .expect("create");
    let mut new = NewDelegation::new("d", "origin", "running");
    new.parent_session_id = Some("origin".into());
    db.record_delegation(&new).expect("record");
    assert!(db.delete_session("origin").expect("delete"));
    let row = db.get_delegation("d").expect("get").expect("kept");
    assert_eq!(row.origin_session, "origin");
    assert_eq!(row.parent_session_id.as_deref(), Some("origin"));
}

// ---------------------------------------------------------------------------
// state_meta
// ---------------------------------------------------------------------------

#[test]
fn set_meta_upserts() {
    let (_dir, db) = temp_db();
    assert_eq!(db.get_meta("k").expect("get"), None);
    db.set_meta("k", "1").expect("set");
    assert_eq!(db.get_meta("k").expect("get").as_deref(), Some("1"));
    db.set_meta("k", "2").expect("set");
    assert_eq!(db.get_meta("k").expect("get").as_deref(), Some("2"));
    let count: i64 = db
        .read(|conn| {
            Ok(conn
                .query_row("SELECT count(*) FROM state_meta WHERE key = 'k'", [], |r| {
                    r.get(0)
                })
                .expect("count"))
        })
        .expect("read");
    assert_eq!(count, 1);
}
