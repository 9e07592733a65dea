//! The test kit's conformance suite on PostgreSQL: each case in a fresh
//! schema of the test server, through `PgStore`; `skipped:` without a
//! server.

use std::sync::Arc;

use hermes_state_core::SessionStore;
use hermes_state_core::clock::{Clock, FixedClock};
use hermes_state_postgres::PgStore;
use hermes_state_testkit::conformance::{self, Backend, Raw, TestStore};
use postgres::types::Type;
use serde_json::Value;

use crate::common::TestSchema;

/// Fresh PostgreSQL stores for the suite.
struct Postgres;

impl Backend for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn open(&self) -> TestStore {
        open_with(None)
    }

    fn open_clocked(&self, clock: Arc<FixedClock>) -> TestStore {
        open_with(Some(clock))
    }
}

fn open_with(clock: Option<Arc<FixedClock>>) -> TestStore {
    let schema = TestSchema::new("conformance").expect("the suite runs only with a server");
    let mut store = PgStore::open(&schema.url).unwrap();
    if let Some(clock) = clock {
        store = store.with_clock(Arc::new(move || clock.now()));
    }
    TestStore::new(Box::new(store), Box::new(Schema(schema)))
}

/// Raw access to a store's schema; the schema is dropped with it.
struct Schema(TestSchema);

impl Schema {
    fn client(&self) -> postgres::Client {
        let mut client = self.0.client();
        client
            .batch_execute(&format!("SET search_path TO \"{}\"", self.0.name()))
            .unwrap();
        client
    }
}

impl Raw for Schema {
    fn exec(&self, sql: &str) {
        self.client().batch_execute(sql).unwrap();
    }

    fn query(&self, sql: &str) -> Vec<Vec<Value>> {
        let rows = self.client().query(sql, &[]).unwrap();
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| {
                        let column = &row.columns()[i];
                        match *column.type_() {
                            Type::INT2 => row.get::<_, Option<i16>>(i).map(Value::from),
                            Type::INT4 => row.get::<_, Option<i32>>(i).map(Value::from),
                            Type::INT8 => row.get::<_, Option<i64>>(i).map(Value::from),
                            Type::FLOAT4 => row.get::<_, Option<f32>>(i).map(Value::from),
                            Type::FLOAT8 => row.get::<_, Option<f64>>(i).map(Value::from),
                            Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
                                row.get::<_, Option<String>>(i).map(Value::from)
                            }
                            ref other => panic!("column {} of {sql}: type {other}", column.name()),
                        }
                        .unwrap_or(Value::Null)
                    })
                    .collect()
            })
            .collect()
    }

    fn read_only(&self) -> Box<dyn SessionStore> {
        Box::new(PgStore::open_read_only(&self.0.url).unwrap())
    }

    fn writer_at(&self, now: f64) -> Box<dyn SessionStore> {
        Box::new(
            PgStore::open(&self.0.url)
                .unwrap()
                .with_clock(Arc::new(move || now)),
        )
    }
}

/// Every case of the suite on PostgreSQL; a failure names each failed case.
#[test]
fn the_whole_suite_passes_on_postgres() {
    if TestSchema::new("conformance").is_none() {
        return;
    }
    let report = conformance::run_all(&Postgres);
    assert_eq!(report.backend, "postgres");
}
