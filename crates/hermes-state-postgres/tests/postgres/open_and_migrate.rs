//! Opening: creating, upgrading and refusing stores.

use hermes_state_core::prelude::*;
use hermes_state_postgres::{PgStore, known_step};
use hermes_state_types::ErrorKind;

use crate::common::TestSchema;

#[test]
fn a_writable_open_creates_the_v23_data_model_in_its_own_schema() {
    let Some(schema) = TestSchema::new("create") else {
        return;
    };
    let store = PgStore::open(&schema.url).unwrap();
    assert!(
        store.capabilities().trigram,
        "pg_trgm is installed on the test server"
    );
    let mut client = schema.client();
    let tables: Vec<String> = client
        .query(
            "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename",
            &[&schema.url.schema()],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        tables,
        [
            "async_delegations",
            "compression_locks",
            "gateway_routing",
            "messages",
            "refinery_schema_history",
            "schema_version",
            "session_model_usage",
            "sessions",
            "state_meta"
        ]
    );
    let version: i64 = client
        .query_one(
            &format!(
                "SELECT version FROM \"{}\".schema_version",
                schema.url.schema()
            ),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(version, 23);
    // A second open (another host) finds it ready and changes nothing.
    PgStore::open(&schema.url).unwrap();
    let rows: i64 = client
        .query_one(
            &format!(
                "SELECT count(*) FROM \"{}\".schema_version",
                schema.url.schema()
            ),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(rows, 1);
}

#[test]
fn a_read_only_open_never_creates_a_store() {
    let Some(schema) = TestSchema::new("read-only missing") else {
        return;
    };
    let error = PgStore::open_read_only(&schema.url).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    let exists: bool = schema
        .client()
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
            &[&schema.url.schema()],
        )
        .unwrap()
        .get(0);
    assert!(!exists, "a read-only open created the schema");
}

#[test]
fn a_store_from_a_newer_release_is_read_but_never_written() {
    let Some(schema) = TestSchema::new("newer") else {
        return;
    };
    let store = PgStore::open(&schema.url).unwrap();
    store
        .create_session(&hermes_state_types::NewSession::new("s1", "cli"))
        .unwrap();
    schema
        .client()
        .execute(
            &format!(
                "INSERT INTO \"{}\".refinery_schema_history (version, name, applied_on, checksum) \
                 VALUES ($1, 'from the future', '2030-01-01T00:00:00Z', '0')",
                schema.url.schema()
            ),
            &[&(known_step() as i32 + 1)],
        )
        .unwrap();
    let error = PgStore::open(&schema.url).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::SchemaTooNew, "{error}");
    let reader = PgStore::open_read_only(&schema.url).unwrap();
    assert!(reader.get_session("s1").unwrap().is_some());
    let refused = reader.end_session("s1", "done").unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::ReadOnly);
}

#[test]
fn an_unreachable_server_is_an_error_not_an_empty_store() {
    let url = hermes_state_postgres::StoreUrl::parse(
        "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2",
    )
    .unwrap();
    let error = PgStore::open(&url).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Unavailable, "{error}");
}

#[test]
fn dropping_one_store_never_takes_the_trigram_extension_from_another() {
    let Some(first) = TestSchema::new("trigram owner") else {
        return;
    };
    let Some(second) = TestSchema::new("trigram neighbour") else {
        return;
    };
    PgStore::open(&first.url).unwrap();
    let other = PgStore::open(&second.url).unwrap();
    assert!(other.capabilities().trigram);
    let mut client = first.client();
    let home: String = client
        .query_one(
            "SELECT n.nspname::TEXT FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace \
             WHERE e.extname = 'pg_trgm'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        home, "public",
        "the extension must not live in a store's schema"
    );
    client
        .batch_execute(&format!("DROP SCHEMA \"{}\" CASCADE", first.url.schema()))
        .unwrap();
    let still: bool = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = $1 AND indexname = $2)",
            &[&second.url.schema(), &hermes_state_postgres::TRIGRAM_INDEX],
        )
        .unwrap()
        .get(0);
    assert!(
        still,
        "dropping one store removed another store's trigram index"
    );
}
