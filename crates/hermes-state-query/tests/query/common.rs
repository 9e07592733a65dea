//! A v23 file in a temporary folder, filled with raw SQL.

use std::path::PathBuf;

use hermes_state_schema::rusqlite::{Connection, Params, params};

/// A freshly created v23 store and its writable connection.
pub struct Db {
    pub conn: Connection,
    pub path: PathBuf,
    pub _dir: tempfile::TempDir,
}

impl Db {
    pub fn new() -> Db {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.db");
        let (conn, _report) = hermes_state_schema::open_writable(&path).expect("open_writable");
        Db {
            conn,
            path,
            _dir: dir,
        }
    }

    /// Runs one statement, panicking with the SQL on failure.
    pub fn exec(&self, sql: &str, params: impl Params) {
        self.conn
            .execute(sql, params)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// A session row with only the NOT NULL columns set (source `cli`).
    pub fn session(&self, id: &str, started_at: f64) {
        self.session_from(id, "cli", started_at);
    }

    /// A session row of the given source.
    pub fn session_from(&self, id: &str, source: &str, started_at: f64) {
        self.exec(
            "INSERT INTO sessions (id, source, started_at) VALUES (?1, ?2, ?3)",
            params![id, source, started_at],
        );
    }

    /// A titled session.
    pub fn titled(&self, id: &str, title: &str, started_at: f64) {
        self.exec(
            "INSERT INTO sessions (id, source, started_at, title) VALUES (?1, 'cli', ?2, ?3)",
            params![id, started_at, title],
        );
    }

    /// A child session (parent must exist: foreign keys are on).
    pub fn child(&self, id: &str, parent: &str, title: Option<&str>, started_at: f64) {
        self.exec(
            "INSERT INTO sessions (id, source, started_at, parent_session_id, title) VALUES (?1, 'cli', ?2, ?3, ?4)",
            params![id, started_at, parent, title],
        );
    }

    /// Ends a session with a reason.
    pub fn end(&self, id: &str, reason: &str, ended_at: f64) {
        self.exec(
            "UPDATE sessions SET ended_at = ?2, end_reason = ?3 WHERE id = ?1",
            params![id, ended_at, reason],
        );
    }

    /// A message row; returns its id.
    pub fn message(&self, session: &str, role: &str, content: Option<&str>, timestamp: f64) -> i64 {
        self.exec(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?1, ?2, ?3, ?4)",
            params![session, role, content, timestamp],
        );
        self.conn.last_insert_rowid()
    }

    /// A read-only connection on the same file.
    pub fn read_only(&self) -> Connection {
        hermes_state_schema::open_read_only(&self.path).expect("open_read_only")
    }
}
