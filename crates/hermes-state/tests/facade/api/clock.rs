//! A clock the caller sets (`StoreOptions::clock`): every operation that
//! reads the time takes it from the handle's clock, so a fixed clock gives
//! the same stored times on every run.

use std::sync::Arc;

use hermes_state::{
    AuxiliaryUsage, Clock, FixedClock, NewMessage, NewSession, SessionDb, StoreOptions,
};
use hermes_state_core::store::Accounting;
use hermes_state_core::store::Coordination;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

const T0: f64 = 1_700_000_000.25;

fn row_f64(db: &SessionDb, sql: &str) -> f64 {
    db.read(|conn| Ok(conn.query_row(sql, [], |r| r.get(0)).expect(sql)))
        .expect("read")
}

#[test]
fn a_fixed_clock_gives_fixed_times_across_the_api() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = FixedClock::new(T0);
    let options = StoreOptions {
        clock: Some(Arc::clone(&clock) as Arc<dyn Clock>),
        ..StoreOptions::default()
    };
    let db = SessionDb::open_with(dir.path().join("state.db"), &options).expect("open");
    assert_eq!(db.now(), T0);

    db.create_session(&NewSession::new("s", "cli"))
        .expect("create");
    assert_eq!(
        row_f64(&db, "SELECT started_at FROM sessions WHERE id = 's'"),
        T0
    );

    clock.advance(1.5);
    db.append_message(&NewMessage::new("s", "user").content("hello"))
        .expect("append");
    assert_eq!(row_f64(&db, "SELECT timestamp FROM messages"), T0 + 1.5);

    clock.advance(1.0);
    db.record_auxiliary_usage(
        "s",
        &AuxiliaryUsage {
            task: "vision".to_owned(),
            model: Some("m".to_owned()),
            input_tokens: 1,
            ..AuxiliaryUsage::default()
        },
    )
    .expect("usage");
    assert_eq!(
        row_f64(
            &db,
            "SELECT first_seen FROM session_model_usage WHERE task = 'vision'"
        ),
        T0 + 2.5
    );

    clock.advance(1.0);
    assert!(db.try_acquire_compression_lock("s", "me", 60.0));
    assert_eq!(
        row_f64(
            &db,
            "SELECT expires_at FROM compression_locks WHERE session_id = 's'"
        ),
        T0 + 3.5 + 60.0
    );

    clock.advance(1.0);
    db.end_session("s", "user_exit").expect("end");
    assert_eq!(
        row_f64(&db, "SELECT ended_at FROM sessions WHERE id = 's'"),
        T0 + 4.5
    );

    let mut jsonl = Vec::new();
    db.export_jsonl(&mut jsonl, &Default::default(), |_| {})
        .expect("export");
    let header: serde_json::Value =
        serde_json::from_slice(jsonl.split(|b| *b == b'\n').next().expect("header")).expect("json");
    assert_eq!(header["exported_at"], serde_json::json!(T0 + 4.5));
}

#[test]
fn the_default_clock_is_the_system_clock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = SessionDb::open(dir.path().join("state.db")).expect("open");
    let system = hermes_state::SystemClock.now();
    assert!((db.now() - system).abs() < 60.0, "{} vs {system}", db.now());
}
