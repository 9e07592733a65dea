//! A fresh schema per test on the server `HERMES_STATE_TEST_PG_URL` names.

use std::sync::atomic::{AtomicU32, Ordering};

use hermes_state_postgres::StoreUrl;

/// The variable naming the test server.
pub const PG_URL_VAR: &str = "HERMES_STATE_TEST_PG_URL";

/// A schema that exists for one test and is dropped with this guard.
pub struct TestSchema {
    pub url: StoreUrl,
    admin: String,
}

impl TestSchema {
    /// A new, unused schema name on the test server; `None` (after printing
    /// why) when no server is configured.
    pub fn new(test: &str) -> Option<TestSchema> {
        let Ok(admin) = std::env::var(PG_URL_VAR) else {
            println!("skipped: {PG_URL_VAR} is not set ({test} needs a PostgreSQL server)");
            return None;
        };
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "test_{}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        let url = StoreUrl::parse(&admin)
            .expect("HERMES_STATE_TEST_PG_URL parses")
            .with_schema(&name)
            .unwrap();
        Some(TestSchema { url, admin })
    }

    /// A plain client on the test server (for raw checks).
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.admin, postgres::NoTls).expect("connect to the test server")
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = client.batch_execute(&format!(
                "DROP SCHEMA IF EXISTS \"{}\" CASCADE",
                self.url.schema()
            ));
        }
    }
}
