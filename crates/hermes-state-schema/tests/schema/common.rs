//! Helpers shared by the subjects of the former `schema.rs`: temporary
//! files, the open under test, raw reads of `sqlite_master`, tables and
//! pragmas, and hand-made historical and broken files.

use std::path::{Path, PathBuf};

use hermes_state_schema::rusqlite::Connection;
use hermes_state_schema::rusqlite::types::Value;
use hermes_state_schema::{OpenReport, open_writable};
use hermes_state_types::ErrorKind;
use tempfile::TempDir;

use crate::spec;

/// One `sqlite_master` row: `(rowid, type, name, tbl_name, rootpage, sql)`.
pub type MasterRow = (i64, String, String, String, i64, Option<String>);

/// refinery's history table, appended after the v23 objects by design.
pub const HISTORY_TABLE: &str = "refinery_schema_history";

pub fn temp_db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("state.db");
    (dir, path)
}

pub fn open(path: &Path) -> (Connection, OpenReport) {
    open_writable(path)
        .unwrap_or_else(|error| panic!("open_writable({}) failed: {error}", path.display()))
}

pub fn open_error_kind(path: &Path) -> ErrorKind {
    match open_writable(path) {
        Ok((_, report)) => panic!(
            "open_writable({}) unexpectedly succeeded: {report:?}",
            path.display()
        ),
        Err(error) => error.kind(),
    }
}

/// A plain SQLite connection with none of the store's logic.
pub fn plain(path: &Path) -> Connection {
    Connection::open(path).expect("plain connection")
}

pub fn master(conn: &Connection) -> Vec<MasterRow> {
    let mut stmt = conn
        .prepare(
            "SELECT rowid, type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY rowid",
        )
        .expect("prepare");
    stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

pub fn inventory(conn: &Connection) -> Vec<(i64, String, String, String)> {
    master(conn)
        .into_iter()
        .map(|(rowid, ty, name, tbl, _, _)| (rowid, ty, name, tbl))
        .collect()
}

pub fn strings(conn: &Connection, sql: &str) -> Vec<String> {
    let mut stmt = conn.prepare(sql).expect("prepare");
    stmt.query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

pub fn count(conn: &Connection, table: &str) -> i64 {
    conn.query_row(&format!("SELECT COUNT(*) FROM \"{table}\""), [], |r| {
        r.get(0)
    })
    .expect("count")
}

pub fn meta(conn: &Connection) -> Vec<(String, Option<String>)> {
    let mut stmt = conn
        .prepare("SELECT key, value FROM state_meta ORDER BY key")
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

pub fn schema_versions(conn: &Connection) -> Vec<i64> {
    let mut stmt = conn
        .prepare("SELECT version FROM schema_version")
        .expect("prepare");
    stmt.query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

pub fn pragma_i64(conn: &Connection, name: &str) -> i64 {
    conn.pragma_query_value(None, name, |r| r.get(0))
        .expect("pragma")
}

pub fn pragma_string(conn: &Connection, name: &str) -> String {
    conn.pragma_query_value(None, name, |r| r.get(0))
        .expect("pragma")
}

/// Every row of every ordinary (non-virtual) table, rows sorted, for
/// "nothing changed" comparisons.
pub fn dump(conn: &Connection) -> Vec<(String, Vec<Vec<Value>>)> {
    let tables = strings(
        conn,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name",
    );
    tables
        .into_iter()
        .map(|table| {
            let mut stmt = conn
                .prepare(&format!("SELECT * FROM \"{table}\""))
                .expect("prepare");
            let width = stmt.column_count();
            let mut rows: Vec<Vec<Value>> = stmt
                .query_map([], |r| (0..width).map(|i| r.get::<_, Value>(i)).collect())
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows");
            rows.sort_by_key(|row| format!("{row:?}"));
            (table, rows)
        })
        .collect()
}

/// `PRAGMA table_xinfo` as `(cid, name, type, notnull, dflt_value, pk, hidden)`.
pub type XInfo = (i64, String, String, i64, Option<String>, i64, i64);

pub fn table_xinfo(conn: &Connection, table: &str) -> Vec<XInfo> {
    let mut stmt = conn
        .prepare("SELECT cid, name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo(?1) ORDER BY cid")
        .expect("prepare");
    stmt.query_map([table], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
        ))
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

pub fn expected_xinfo(columns: &[spec::Column]) -> Vec<XInfo> {
    columns
        .iter()
        .map(|&(cid, name, ty, notnull, dflt, pk)| {
            (
                cid,
                name.to_owned(),
                ty.to_owned(),
                notnull,
                dflt.map(str::to_owned),
                pk,
                0,
            )
        })
        .collect()
}

/// A fresh table's stored text at an older version, by the layout rule of
/// `migrations.md` §1.1, with the column lines of the spec's v23 DDL.
pub fn historical_table_ddl(table: &str, columns: &[&str]) -> String {
    let mut lines: Vec<String> = columns
        .iter()
        .map(|c| format!("    {}", spec::column_line(table, c)))
        .collect();
    if let Some(constraint) = spec::constraint_line(table) {
        lines.push(format!("    {constraint}"));
    }
    format!(
        "CREATE TABLE IF NOT EXISTS {table} (\n{}\n)",
        lines.join(",\n")
    )
}

/// Deterministic pseudo-random bytes (xorshift64*).
pub fn pseudo_random_bytes(len: usize, mut state: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        out.extend_from_slice(&state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Makes a v23 store with the library, then runs `edit` on it through a plain
/// connection (closed afterwards, so no WAL content is left behind).
pub fn store_edited_by_hand(edit: &str) -> (TempDir, PathBuf) {
    let (dir, path) = temp_db();
    drop(open(&path));
    let conn = plain(&path);
    conn.execute_batch(edit).expect("hand edit");
    drop(conn);
    (dir, path)
}

pub fn assert_refused_untouched(path: &Path, expected: ErrorKind) {
    let before = std::fs::read(path).expect("read before");
    assert_eq!(
        open_error_kind(path),
        expected,
        "error kind for {}",
        path.display()
    );
    let after = std::fs::read(path).expect("read after");
    assert!(
        before == after,
        "{} changed although the open was refused",
        path.display()
    );
}
