//! Write contention in one process (`api.md` §13): another connection holds
//! the write lock for 2.5 s; the write waits (1 s busy timeout per attempt,
//! 20–150 ms sleeps between attempts) and succeeds. Holding the lock past all
//! 15 attempts (~16 s) is covered by `tests/contention.rs`, not here.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use hermes_state::{JournalMode, NewMessage};

use crate::common::{Store, i, raw_connection};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

const HOLD: Duration = Duration::from_millis(2500);

#[test]
fn append_waits_for_a_writer_holding_begin_immediate_and_succeeds() {
    let store = Store::new();
    store.session("s");
    let path = store.path.clone();
    let (locked_tx, locked_rx) = mpsc::channel();
    let holder = std::thread::spawn(move || {
        let conn = raw_connection(&path);
        conn.execute_batch("BEGIN IMMEDIATE")
            .expect("take the write lock");
        let taken = Instant::now();
        locked_tx.send(()).expect("signal");
        std::thread::sleep(HOLD);
        conn.execute_batch("COMMIT").expect("release");
        taken
    });
    locked_rx.recv().expect("lock taken");

    let started = Instant::now();
    let id = store
        .db
        .append_message(&NewMessage::new("s", "user").content("after the lock"))
        .expect("append succeeds once the other writer releases");
    let waited = started.elapsed();
    let taken = holder.join().expect("holder thread");

    assert_eq!(id, 1);
    assert!(
        taken.elapsed() >= HOLD,
        "the lock was held for the whole {HOLD:?}"
    );
    assert!(
        waited >= HOLD - Duration::from_millis(300),
        "the append had to wait for the lock: {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(10),
        "a 2.5 s hold costs a few attempts, not all 15: {waited:?}"
    );
    assert_eq!(
        store.row(
            "SELECT message_count, (SELECT count(*) FROM messages) FROM sessions WHERE id = 's'",
            []
        ),
        vec![i(1), i(1)],
        "written exactly once despite the retries"
    );
}

#[test]
fn reads_are_not_blocked_by_another_writer_in_wal_mode() {
    let store = Store::new();
    store.session("s");
    assert_eq!(store.db.journal_mode(), Some(JournalMode::Wal));
    let conn = raw_connection(&store.path);
    conn.execute_batch("BEGIN IMMEDIATE")
        .expect("take the write lock");
    let started = Instant::now();
    assert!(store.db.get_session("s").expect("read").is_some());
    assert_eq!(store.db.get_messages("s").expect("read"), vec![]);
    assert!(started.elapsed() < Duration::from_millis(900));
    conn.execute_batch("ROLLBACK").expect("release");
}
