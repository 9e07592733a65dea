//! The test kit's conformance suite on SQLite: each case on a fresh file
//! in a temporary folder, through `SessionDb`.

use std::path::PathBuf;
use std::sync::Arc;

use hermes_state::rusqlite::types::ValueRef;
use hermes_state::{Clock, FixedClock, SessionDb, StoreOptions};
use hermes_state_core::SessionStore;
use hermes_state_testkit::conformance::{self, Backend, Raw, TestStore};
use serde_json::Value;

/// Fresh SQLite stores for the suite.
struct Sqlite;

impl Backend for Sqlite {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn open(&self) -> TestStore {
        open_with(&StoreOptions::default())
    }

    fn open_clocked(&self, clock: Arc<FixedClock>) -> TestStore {
        open_with(&StoreOptions {
            clock: Some(clock as Arc<dyn Clock>),
            ..StoreOptions::default()
        })
    }
}

/// Options whose clock reads `now`.
fn at(now: f64) -> StoreOptions {
    StoreOptions {
        clock: Some(FixedClock::new(now) as Arc<dyn Clock>),
        ..StoreOptions::default()
    }
}

fn open_with(options: &StoreOptions) -> TestStore {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let store = SessionDb::open_with(&path, options).unwrap();
    TestStore::new(Box::new(store), Box::new(File { path, _dir: dir }))
}

/// Raw access to a store's file, and its folder (removed on drop).
struct File {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Raw for File {
    fn exec(&self, sql: &str) {
        hermes_state::rusqlite::Connection::open(&self.path)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
    }

    fn query(&self, sql: &str) -> Vec<Vec<Value>> {
        let conn = hermes_state::rusqlite::Connection::open(&self.path).unwrap();
        let mut stmt = conn.prepare(sql).unwrap();
        let width = stmt.column_count();
        stmt.query_map([], |row| {
            (0..width)
                .map(|i| {
                    Ok(match row.get_ref(i)? {
                        ValueRef::Null => Value::Null,
                        ValueRef::Integer(n) => Value::from(n),
                        ValueRef::Real(x) => Value::from(x),
                        ValueRef::Text(t) => Value::from(String::from_utf8_lossy(t)),
                        ValueRef::Blob(_) => panic!("a BLOB column in {sql}"),
                    })
                })
                .collect()
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }

    fn read_only(&self) -> Box<dyn SessionStore> {
        Box::new(SessionDb::open_read_only(&self.path).unwrap())
    }

    fn writer_at(&self, now: f64) -> Box<dyn SessionStore> {
        Box::new(SessionDb::open_with(&self.path, &at(now)).unwrap())
    }
}

/// Every case of the suite on SQLite; a failure names each failed case.
#[test]
fn the_whole_suite_passes_on_sqlite() {
    let report = conformance::run_all(&Sqlite);
    assert_eq!(report.backend, "sqlite");
}
