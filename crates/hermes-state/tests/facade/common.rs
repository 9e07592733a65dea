//! Shared fixtures: a store in a temporary folder, second connections, raw
//! SQL helpers, shorthands for SQLite values, and the test binary re-run as a
//! child process.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_state::rusqlite::types::Value as Sql;
use hermes_state::rusqlite::{self, Connection, Params};
use hermes_state::{ErrorKind, NewSession, SessionDb};
use hermes_state_core::store::Sessions;

/// A writable store in its own temporary folder.
pub struct Store {
    pub db: SessionDb,
    pub path: PathBuf,
    /// The temporary folder holding the store (removed on drop).
    pub dir: tempfile::TempDir,
}

impl Store {
    pub fn new() -> Store {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state.db");
        let db = SessionDb::open(&path).expect("open a fresh store");
        Store { db, path, dir }
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
            .write_raw(|conn| {
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
/// for checks independent of the store's connection. It has no CJK
/// tokenizer, as another program's connection would not.
pub fn raw_connection(path: &Path) -> Connection {
    let conn = Connection::open(path).expect("second connection");
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .expect("busy timeout");
    conn.pragma_update(None, "foreign_keys", "ON")
        .expect("foreign keys");
    conn
}

/// A second connection for setup the API has no method for and for checks,
/// with the CJK tokenizer registered so the FTS triggers of `messages` and
/// the FTS integrity checks can run.
pub fn setup_connection(path: &Path) -> Connection {
    let conn = Connection::open(path).expect("raw connection");
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .expect("busy timeout");
    conn.pragma_update(None, "foreign_keys", "ON")
        .expect("foreign keys");
    hermes_state::schema::connection::register_tokenizers(&conn);
    conn
}

/// A single integer from a query without parameters (`count(*)`, a pragma).
pub fn count(conn: &Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |row| row.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Now, in seconds since the Unix epoch (the stores' timestamps).
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64()
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

// --- The test binary as a child process ----------------------------------------

/// The name libtest gives the test `function` of the module whose
/// `module_path!()` is `module_path`: the path without the crate name, such
/// as `contention::writer_child`. Filters built from it follow a module that
/// moves.
pub fn test_name(module_path: &str, function: &str) -> String {
    match module_path.split_once("::") {
        Some((_crate, path)) => format!("{path}::{function}"),
        None => function.to_owned(),
    }
}

/// The test binary re-run as a child process that runs only the ignored test
/// `function` of the module at `module_path` (pass `module_path!()`), one
/// thread, output not captured. The caller adds the environment and spawns it.
pub fn child_test(module_path: &str, function: &str) -> Command {
    let name = test_name(module_path, function);
    assert_selects_one_ignored_test(&name);
    let mut command = Command::new(test_binary());
    command.args([
        name.as_str(),
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    command
}

/// Asserts that `<name> --exact --ignored` selects exactly one test of this
/// binary, the ignored test `name`. A filter that matches nothing runs zero
/// tests and exits successfully, so a parent checking only the exit status
/// would pass without a child having done anything. Checked once per name.
pub fn assert_selects_one_ignored_test(name: &str) {
    static CHECKED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let mut checked = CHECKED.lock().unwrap_or_else(PoisonError::into_inner);
    if checked.contains(name) {
        return;
    }
    let output = Command::new(test_binary())
        .args(["--list", "--ignored", "--exact", name])
        .output()
        .expect("list the tests of this binary");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let listed: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .collect();
    assert_eq!(
        listed,
        [name],
        "the child-process filter {name:?} selects exactly one ignored test:\n{stdout}"
    );
    checked.insert(name.to_owned());
}

/// The environment variable that tells a re-run test it is the child of
/// [`in_own_process`] (its value is the test's name).
const OWN_PROCESS: &str = "HERMES_STATE_TEST_OWN_PROCESS";

/// Runs `body` as the test `function` of the module at `module_path` (pass
/// `module_path!()`) in a process of its own: the test re-runs the binary
/// selecting only itself, and the child runs `body`. For tests that change
/// process-global state (environment variables), which the other tests of
/// this binary, on other threads, would otherwise race with. The parent
/// fails unless the child ran `body` to its end.
pub fn in_own_process(module_path: &str, function: &str, body: impl FnOnce()) {
    let name = test_name(module_path, function);
    let done = format!("{OWN_PROCESS} done: {name}");
    if std::env::var_os(OWN_PROCESS).is_some_and(|value| value == name.as_str()) {
        body();
        #[allow(clippy::print_stdout)]
        {
            println!("\n{done}");
        }
        return;
    }
    let output = Command::new(test_binary())
        .args([name.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env(OWN_PROCESS, &name)
        .output()
        .expect("run the test in a process of its own");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{name} failed in its own process:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.lines().any(|line| line == done),
        "{name} did not run in its own process:\n{stdout}\n{stderr}"
    );
}

fn test_binary() -> PathBuf {
    std::env::current_exe().expect("the test binary")
}
