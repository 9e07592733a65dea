//! A fresh schema per test on the server `HERMES_STATE_TEST_PG_URL` names.

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use hermes_state_postgres::StoreUrl;
pub use hermes_state_testkit::PG_URL_VAR;
use hermes_state_testkit::PgSchema;

/// Tests share the server; the one that restarts it holds this exclusively,
/// every other test holds it shared for its whole run.
static SERVER: RwLock<()> = RwLock::new(());

/// Exclusive use of the server (no other test of this binary runs meanwhile).
pub fn server_exclusively() -> RwLockWriteGuard<'static, ()> {
    SERVER.write().unwrap_or_else(PoisonError::into_inner)
}

/// A schema that exists for one test and is dropped with this guard.
pub struct TestSchema {
    pub url: StoreUrl,
    schema: PgSchema,
    _shared: Option<RwLockReadGuard<'static, ()>>,
}

impl TestSchema {
    /// A new, unused schema name on the test server; `None` (after printing
    /// why) when no server is configured.
    pub fn new(test: &str) -> Option<TestSchema> {
        let mut schema = TestSchema::unguarded(test)?;
        schema._shared = Some(SERVER.read().unwrap_or_else(PoisonError::into_inner));
        Some(schema)
    }

    /// [`TestSchema::new`] for a test that holds [`server_exclusively`] itself.
    pub fn unguarded(test: &str) -> Option<TestSchema> {
        let schema = PgSchema::new("test", test)?;
        let url = StoreUrl::parse(schema.url()).expect("HERMES_STATE_TEST_PG_URL parses");
        Some(TestSchema {
            url,
            schema,
            _shared: None,
        })
    }

    /// A plain client on the test server (for raw checks).
    pub fn client(&self) -> postgres::Client {
        self.schema.client()
    }

    /// The schema's name (a raw client's `search_path`).
    pub fn name(&self) -> &str {
        self.schema.name()
    }

    /// The store URL as text (to add options to).
    pub fn text(&self) -> &str {
        self.schema.url()
    }
}
