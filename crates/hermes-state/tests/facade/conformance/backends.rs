//! Both backends in one test, for the cases that need both in one binary
//! (moving a store between them, comparing their answers through the
//! facade's `by_name`, the facade's export and import): each store fresh
//! and cleaned up after. The rest of the suite runs per backend from the
//! test kit (`hermes_state_testkit::conformance`).

use std::sync::Arc;

use hermes_state::postgres::PgStore;
use hermes_state::{
    Clock, FixedClock, NewSession, SessionDb, SessionStore, StoreLocation, StoreOptions, open_store,
};
pub use hermes_state_testkit::PG_URL_VAR;
use hermes_state_testkit::PgSchema;

/// One fresh store and what removes it afterwards.
pub struct Backend {
    pub store: Box<dyn SessionStore>,
    pub location: StoreLocation,
    cleanup: Cleanup,
}

enum Cleanup {
    Dir(#[allow(dead_code)] tempfile::TempDir),
    Schema(#[allow(dead_code)] PgSchema),
}

impl Backend {
    pub fn name(&self) -> &'static str {
        self.store.backend_name()
    }

    /// A raw client on the PostgreSQL store's schema, for reading tables
    /// the seam has no call for; `None` on SQLite.
    #[allow(dead_code)]
    pub fn pg_client(&self) -> Option<postgres::Client> {
        let Cleanup::Schema(schema) = &self.cleanup else {
            return None;
        };
        let mut client = schema.client();
        client
            .batch_execute(&format!("SET search_path TO \"{}\"", schema.name()))
            .unwrap();
        Some(client)
    }

    /// Runs statements without parameters, raw on the backend's store, for
    /// what the seam has no call for (written in SQL both servers accept).
    #[allow(dead_code)]
    pub fn exec(&self, sql: &str) {
        if let Some(mut client) = self.pg_client() {
            client.batch_execute(sql).unwrap();
            return;
        }
        let StoreLocation::Sqlite(path) = &self.location else {
            unreachable!("a SQLite backend has a path")
        };
        hermes_state::rusqlite::Connection::open(path)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }
}

/// A fresh SQLite store, and a fresh PostgreSQL store when a server is
/// configured (else a printed `skipped:` line naming the case).
pub fn backends(case: &str) -> Vec<Backend> {
    let dir = tempfile::tempdir().unwrap();
    let location = StoreLocation::Sqlite(dir.path().join("state.db"));
    let mut all = vec![Backend {
        store: open_store(&location, false).unwrap(),
        location,
        cleanup: Cleanup::Dir(dir),
    }];
    match std::env::var(PG_URL_VAR) {
        Ok(admin) => {
            let schema = PgSchema::on(&admin, "conf");
            let location = StoreLocation::parse(schema.url()).unwrap();
            all.push(Backend {
                store: open_store(&location, false).unwrap(),
                location,
                cleanup: Cleanup::Schema(schema),
            });
        }
        Err(_) => println!("skipped: {PG_URL_VAR} is not set; {case} ran on SQLite only"),
    }
    all
}

/// [`backends`] whose clock reads `now` for every write, so that times the
/// stores take from the clock are the same on each.
#[allow(dead_code)]
pub fn backends_at(case: &str, now: f64) -> Vec<Backend> {
    backends(case)
        .into_iter()
        .map(|b| {
            let store: Box<dyn SessionStore> = match &b.location {
                StoreLocation::Sqlite(path) => {
                    let options = StoreOptions {
                        clock: Some(FixedClock::new(now) as Arc<dyn Clock>),
                        ..StoreOptions::default()
                    };
                    Box::new(SessionDb::open_with(path, &options).unwrap())
                }
                StoreLocation::Postgres(url) => Box::new(
                    PgStore::open(url.store_url())
                        .unwrap()
                        .with_clock(Arc::new(move || now)),
                ),
            };
            Backend { store, ..b }
        })
        .collect()
}

/// Creates a session and sets its `started_at` raw (the seam has no call
/// for it), so that orders do not hang on the clock.
pub fn add(b: &Backend, session: NewSession, started_at: f64) {
    let id = session.id.clone();
    b.store.create_session(&session).unwrap();
    b.exec(&format!(
        "UPDATE sessions SET started_at = {started_at:?} WHERE id = '{id}'"
    ));
}
