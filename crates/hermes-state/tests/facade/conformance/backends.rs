//! The stores a conformance case runs on, each fresh and cleaned up after.

use std::sync::atomic::{AtomicU32, Ordering};

use hermes_state::{SessionStore, StoreLocation, open_store};

/// The variable naming the PostgreSQL test server.
pub const PG_URL_VAR: &str = "HERMES_STATE_TEST_PG_URL";

/// One fresh store and what removes it afterwards.
pub struct Backend {
    pub store: Box<dyn SessionStore>,
    pub location: StoreLocation,
    cleanup: Cleanup,
}

enum Cleanup {
    Dir(#[allow(dead_code)] tempfile::TempDir),
    Schema { admin: String, schema: String },
}

impl Backend {
    pub fn name(&self) -> &'static str {
        self.store.backend_name()
    }

    /// A raw client on the PostgreSQL store's schema, for reading tables
    /// the seam has no call for; `None` on SQLite.
    #[allow(dead_code)]
    pub fn pg_client(&self) -> Option<postgres::Client> {
        let Cleanup::Schema { admin, schema } = &self.cleanup else {
            return None;
        };
        let mut client = postgres::Client::connect(admin, postgres::NoTls).unwrap();
        client
            .batch_execute(&format!("SET search_path TO \"{schema}\""))
            .unwrap();
        Some(client)
    }
}

impl Drop for Backend {
    fn drop(&mut self) {
        if let Cleanup::Schema { admin, schema } = &self.cleanup
            && let Ok(mut client) = postgres::Client::connect(admin, postgres::NoTls)
        {
            let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"));
        }
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
            static NEXT: AtomicU32 = AtomicU32::new(0);
            let schema = format!(
                "conf_{}_{}_{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .subsec_nanos()
            );
            let separator = if admin.contains('?') { '&' } else { '?' };
            let location = StoreLocation::Postgres(format!("{admin}{separator}schema={schema}"));
            all.push(Backend {
                store: open_store(&location, false).unwrap(),
                location,
                cleanup: Cleanup::Schema { admin, schema },
            });
        }
        Err(_) => println!("skipped: {PG_URL_VAR} is not set; {case} ran on SQLite only"),
    }
    all
}
