//! `open_store_with`: one set of options for either backend, the clock
//! included, so code written against `dyn SessionStore` gets reproducible
//! times whichever store it is handed.

// The test prints a `skipped:` line on purpose when no server is set.
#![allow(clippy::print_stdout)]

use std::sync::Arc;

use hermes_state::{
    Clock, FixedClock, NewMessage, NewSession, StoreLocation, StoreOptions, open_store_with,
};
use hermes_state_testkit::{PG_URL_VAR, PgSchema};

/// Opens the store with a clock that reads `now`, writes through it and
/// reads the times back.
fn times_follow_the_clock(location: &StoreLocation, name: &str) {
    let now = 1_700_000_123.5;
    let options = StoreOptions {
        clock: Some(FixedClock::new(now) as Arc<dyn Clock>),
        ..StoreOptions::default()
    };
    let store = open_store_with(location, &options).unwrap();
    store.create_session(&NewSession::new("s", "cli")).unwrap();
    store
        .append_message(&NewMessage::new("s", "user").content("hi"))
        .unwrap();
    store.end_session("s", "user_exit").unwrap();
    let session = store.get_session("s").unwrap().unwrap();
    assert_eq!(session.started_at, now, "{name}");
    assert_eq!(session.ended_at, Some(now), "{name}");
    assert_eq!(store.get_messages("s").unwrap()[0].timestamp, now, "{name}");
    let reader = open_store_with(
        location,
        &StoreOptions {
            read_only: true,
            ..StoreOptions::default()
        },
    )
    .unwrap();
    let refused = reader.create_session(&NewSession::new("t", "cli"));
    assert_eq!(
        refused.map_err(|e| e.kind()).err(),
        Some(hermes_state::ErrorKind::ReadOnly),
        "{name}: read_only is an option of both backends"
    );
}

#[test]
fn options_reach_either_backend_clock_included() {
    let dir = tempfile::tempdir().unwrap();
    times_follow_the_clock(
        &StoreLocation::Sqlite(dir.path().join("state.db")),
        "sqlite",
    );
    match std::env::var(PG_URL_VAR) {
        Ok(admin) => {
            let schema = PgSchema::on(&admin, "optclock");
            times_follow_the_clock(&StoreLocation::parse(schema.url()).unwrap(), "postgres");
        }
        Err(_) => println!("skipped: {PG_URL_VAR} is not set; ran on SQLite only"),
    }
}
