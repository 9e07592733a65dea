//! The operator's settings in the URL (`pool_size`, `statement_timeout`,
//! `application_name`) reach every connection of a handle.

use hermes_state_core::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hermes_state_core::search::SearchOptions;
use hermes_state_postgres::{PgError, PgStore, StoreUrl};
use hermes_state_types::{ErrorKind, NewMessage, NewSession};

use crate::common::TestSchema;

/// The number of connections the server sees with this application name.
fn connections(client: &mut postgres::Client, application: &str) -> i64 {
    client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1",
            &[&application],
        )
        .unwrap()
        .get(0)
}

#[test]
fn a_pool_size_caps_the_connections_of_a_handle_and_application_name_names_them() {
    let Some(schema) = TestSchema::new("pool size") else {
        return;
    };
    let application = format!("hs-pool-{}", std::process::id());
    let url = StoreUrl::parse(&format!(
        "{}&pool_size=2&application_name={application}",
        schema.text()
    ))
    .unwrap();
    assert_eq!(url.settings().pool_size, Some(2));
    assert!(url.redacted().contains("&pool_size=2"), "{url}");
    let store = Arc::new(PgStore::open(&url).unwrap());
    let mut monitor = schema.client();
    // The open's own (migration) connection is gone before the work starts.
    let settled = Instant::now();
    while connections(&mut monitor, &application) > 0 && settled.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..6)
        .map(|w| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let id = format!("s{w}");
                store
                    .create_session(&NewSession::new(id.as_str(), "cli"))
                    .unwrap();
                for i in 0..20 {
                    store
                        .append_message(
                            &NewMessage::new(id.as_str(), "user").content(format!("{i}")),
                        )
                        .unwrap();
                    store.get_messages(&id).unwrap();
                }
            })
        })
        .collect();
    let watcher = std::thread::spawn({
        let stop = Arc::clone(&stop);
        let application = application.clone();
        let mut monitor = schema.client();
        move || {
            let mut most = 0;
            while !stop.load(Ordering::Relaxed) {
                most = most.max(connections(&mut monitor, &application));
                std::thread::sleep(Duration::from_millis(2));
            }
            most
        }
    });
    for worker in workers {
        worker.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let most = watcher.join().unwrap();
    assert!(
        (1..=2).contains(&most),
        "{most} connections named {application} at once; pool_size=2"
    );
    assert_eq!(store.message_count(None).unwrap(), 120);
    // The two are kept for the next work, under the name given.
    assert_eq!(connections(&mut monitor, &application), 2);

    // A thread that finds both on loan waits for one to come back.
    let small = Arc::new(
        PgStore::open(&StoreUrl::parse(&format!("{}&pool_size=1", schema.text())).unwrap())
            .unwrap(),
    );
    let holder = std::thread::spawn({
        let small = Arc::clone(&small);
        move || {
            small.with_export_snapshot(|_| {
                std::thread::sleep(Duration::from_millis(600));
                Ok::<_, PgError>(())
            })
        }
    });
    std::thread::sleep(Duration::from_millis(150));
    let asked = Instant::now();
    small.get_session("s0").unwrap().unwrap();
    assert!(
        asked.elapsed() >= Duration::from_millis(300),
        "a second connection was opened beside pool_size=1"
    );
    holder.join().unwrap().unwrap();
}

#[test]
fn a_statement_timeout_bounds_every_statement_of_a_handle() {
    let Some(schema) = TestSchema::new("statement timeout") else {
        return;
    };
    let url = StoreUrl::parse(&format!("{}&statement_timeout=300ms", schema.text())).unwrap();
    let store = PgStore::open(&url).unwrap();
    store.create_session(&NewSession::new("s", "cli")).unwrap();
    // Another host holds the session's key: the append's wait is one
    // statement, cut at 300 ms rather than waiting out its 15 s.
    let mut other = schema.client();
    let mut tx = other.transaction().unwrap();
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&format!("hermes-state session {} s", schema.url.schema())],
    )
    .unwrap();
    let asked = Instant::now();
    let error = store
        .append_message(&NewMessage::new("s", "user").content("late"))
        .unwrap_err();
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    assert!(error.to_string().contains("57014"), "{error}");
    assert_eq!(error.kind(), ErrorKind::Other);
    tx.commit().unwrap();
    store
        .append_message(&NewMessage::new("s", "user").content("in time"))
        .unwrap();
    assert_eq!(store.message_count(Some("s")).unwrap(), 1);
}

#[test]
fn a_setting_out_of_range_is_refused_by_name_before_connecting() {
    for (text, option) in [
        ("postgres://127.0.0.1:1/db?pool_size=0", "pool_size"),
        ("postgres://127.0.0.1:1/db?pool_size=many", "pool_size"),
        (
            "host=127.0.0.1 port=1 statement_timeout=5sec",
            "statement_timeout",
        ),
        (
            "postgres://127.0.0.1:1/db?statement_timeout=-1",
            "statement_timeout",
        ),
    ] {
        let error = StoreUrl::parse(text).unwrap_err();
        assert!(
            matches!(error, PgError::InvalidSetting { option: o, .. } if o == option),
            "{text}: {error}"
        );
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(
            error.to_string().contains(&format!("`{option}`")),
            "{error}"
        );
    }
    // After a password (whose tail it could be), the name is not shown.
    let error = StoreUrl::parse("host=h password=ab pool_size=0").unwrap_err();
    assert!(!error.to_string().contains("pool_size"), "{error}");
}

/// Whether any plan of a search of `store` holds a JIT section.
fn plans_use_jit(store: &PgStore) -> bool {
    let (_, plans) = store
        .explain_search("harbor", &SearchOptions::default())
        .unwrap();
    assert!(!plans.is_empty());
    plans.iter().any(|plan| plan.contains("JIT:"))
}

#[test]
fn searches_run_without_jit_unless_the_operator_set_it() {
    let Some(schema) = TestSchema::new("jit") else {
        return;
    };
    // The server's cost threshold lowered to nothing through the URL's
    // `options`, so any plan would be compiled if JIT were on.
    let lowered = "options=-c%20jit_above_cost%3D0";
    let url = StoreUrl::parse(&format!("{}&{lowered}", schema.text())).unwrap();
    let store = PgStore::open(&url).unwrap();
    store.create_session(&NewSession::new("s", "cli")).unwrap();
    store
        .append_message(&NewMessage::new("s", "user").content("harbor lights"))
        .unwrap();
    assert!(!plans_use_jit(&store), "the store's default is jit = off");
    drop(store);

    // `jit` set by the operator (here in the URL; a role's, a database's or
    // the server's file alike) is theirs: the store leaves it as it is.
    let available: bool = schema
        .client()
        .query_one("SELECT pg_jit_available()", &[])
        .unwrap()
        .get(0);
    if !available {
        println!("skipped: this server has no JIT to turn on");
        return;
    }
    let url = StoreUrl::parse(&format!(
        "{}&options=-c%20jit%3Don%20-c%20jit_above_cost%3D0",
        schema.text()
    ))
    .unwrap();
    let store = PgStore::open(&url).unwrap();
    assert!(plans_use_jit(&store), "the operator's jit = on is kept");
}
