//! Compression locks within one process.
#![allow(clippy::print_stdout)]

use super::*;
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Coordination;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

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
