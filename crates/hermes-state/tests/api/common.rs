//! Shared fixtures: a store in a temporary folder, raw SQL helpers and
//! shorthands for SQLite values.

use std::path::{Path, PathBuf};

use hermes_state::rusqlite::types::Value as Sql;
use hermes_state::rusqlite::{self, Connection, Params};
use hermes_state::{ErrorKind, NewSession, SessionDb};

/// A writable store in its own temporary folder.
pub struct Store {
    pub db: SessionDb,
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Store {
    pub fn new() -> Store {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.db");
        let db = SessionDb::open(&path).expect("open a fresh store");
        Store {
            db,
            path,
            _dir: dir,
        }
    }

    /// `create_session(id, source)` with every other field NULL.
    pub fn session(&self, id: &str) {
        self.db
            .create_session(&NewSession::new(id, "cli"))
            .expect("create_session");
    }

    /// One row of a query as SQLite values (storage classes kept).
    pub fn row(&self, sql: &str, params: impl Params) -> Vec<Sql> {
        self.db
            .read(|conn| Ok(query_row(conn, sql, params)))
            .expect("read")
    }

    /// Every row of a query as SQLite values.
    pub fn rows(&self, sql: &str, params: impl Params) -> Vec<Vec<Sql>> {
        self.db
            .read(|conn| Ok(query_rows(conn, sql, params)))
            .expect("read")
    }

    /// A single integer (`count(*)`, `typeof`-free checks).
    pub fn count(&self, sql: &str, params: impl Params) -> i64 {
        match self.row(sql, params).as_slice() {
            [Sql::Integer(n)] => *n,
            other => panic!("{sql}: expected one integer, got {other:?}"),
        }
    }

    /// Runs setup SQL the API has no method for (git_branch, title, inactive
    /// rows, rows a foreign writer left) on the store's own connection, in
    /// autocommit mode. Not on a second connection: a store whose messages
    /// carry the `messages_fts_cjk` triggers can only be written by a
    /// connection with the `cjk_unicode61` tokenizer registered.
    pub fn exec(&self, sql: &str, params: impl Params) {
        self.db
            .read(|conn| {
                conn.execute(sql, params)
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
                Ok(())
            })
            .expect("setup write");
    }

    /// Number of rows matching a full-text query in `messages_fts`.
    pub fn fts_hits(&self, word: &str) -> i64 {
        self.count(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?1",
            [word],
        )
    }
}

/// A second connection on the same file: another writer, for contention and
/// for checks independent of the store's connection.
pub fn raw_connection(path: &Path) -> Connection {
    let conn = Connection::open(path).expect("second connection");
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .expect("busy timeout");
    conn.pragma_update(None, "foreign_keys", "ON")
        .expect("foreign keys");
    conn
}

pub fn query_row(conn: &Connection, sql: &str, params: impl Params) -> Vec<Sql> {
    let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let n = stmt.column_count();
    stmt.query_row(params, |row| (0..n).map(|i| row.get::<_, Sql>(i)).collect())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

pub fn query_rows(conn: &Connection, sql: &str, params: impl Params) -> Vec<Vec<Sql>> {
    let mut stmt = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let n = stmt.column_count();
    stmt.query_map(params, |row| (0..n).map(|i| row.get::<_, Sql>(i)).collect())
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect::<rusqlite::Result<_>>()
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// TEXT value.
pub fn t(text: &str) -> Sql {
    Sql::Text(text.to_owned())
}

/// INTEGER value.
pub fn i(n: i64) -> Sql {
    Sql::Integer(n)
}

/// REAL value.
pub fn r(f: f64) -> Sql {
    Sql::Real(f)
}

/// NULL.
pub const NULL: Sql = Sql::Null;

/// Asserts that a result is an error of this kind.
#[track_caller]
pub fn assert_kind<T: std::fmt::Debug>(result: hermes_state::Result<T>, kind: ErrorKind) {
    match result {
        Ok(value) => panic!("expected an error of kind {kind:?}, got Ok({value:?})"),
        Err(error) => assert_eq!(error.kind(), kind, "error: {error}"),
    }
}
