//! The demoted legacy shadow tables (`fts_v22_trash_*`): naming them when
//! the conversion demotes, and emptying them in small batches afterwards, so
//! that no single transaction deletes a huge legacy index at once.

use rusqlite::Connection;

use crate::error::SchemaError;
use crate::reconcile::quote_identifier;
use hermes_state_sqlite::Context as SqliteContext;

/// Rows deleted per teardown transaction.
pub const TEARDOWN_BATCH: i64 = 500;
/// Prefix of the demoted legacy shadow tables awaiting teardown.
pub const TRASH_PREFIX: &str = "fts_v22_trash_";

const TRASH_TABLES: &str = "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'fts\\_v22\\_trash\\_%' ESCAPE '\\' ORDER BY name";

/// What one teardown transaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeardownStep {
    /// The trash table worked on; `None` when none was left.
    pub table: Option<String>,
    /// Rows deleted from it.
    pub rows_deleted: usize,
    /// The table was empty and has been dropped.
    pub dropped: bool,
    /// No `fts_v22_trash_*` table remains.
    pub done: bool,
}

/// Deletes up to `batch` rows (by rowid, or by primary key for `WITHOUT
/// ROWID` tables) of the first `fts_v22_trash_*` table, and drops it
/// once it is empty.
pub fn teardown_trash(conn: &Connection, batch: i64) -> Result<TeardownStep, SchemaError> {
    let tables = table_names(conn, TRASH_TABLES)?;
    let Some(table) = tables.first().cloned() else {
        return Ok(TeardownStep {
            table: None,
            rows_deleted: 0,
            dropped: false,
            done: true,
        });
    };
    let batch = batch.max(1);
    let quoted = quote_identifier(&table);
    let without_rowid: bool = conn
        .query_row(
            "SELECT COALESCE((SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?1), 0)",
            [&table],
            |r| r.get(0),
        )
        .context("reading a trash table")?;
    let columns = if without_rowid {
        let mut stmt = conn
            .prepare("SELECT name FROM pragma_table_info(?1, 'main') WHERE pk > 0 ORDER BY pk")
            .context("reading a trash table")?;
        let columns = stmt
            .query_map([&table], |r| r.get::<_, String>(0))
            .context("reading a trash table")?
            .map(|name| name.map(|n| quote_identifier(&n)))
            .collect::<Result<Vec<_>, _>>()
            .context("reading a trash table")?;
        columns.join(", ")
    } else {
        "rowid".to_owned()
    };
    let rows_deleted = conn
        .execute(
            &format!(
                "DELETE FROM {quoted} WHERE ({columns}) IN (SELECT {columns} FROM {quoted} LIMIT ?1)"
            ),
            [batch],
        )
        .context("emptying a trash table")?;
    let dropped = (rows_deleted as i64) < batch;
    if dropped {
        conn.execute_batch(&format!("DROP TABLE {quoted}"))
            .context("dropping a trash table")?;
    }
    Ok(TeardownStep {
        table: Some(table),
        rows_deleted,
        dropped,
        done: dropped && tables.len() == 1,
    })
}

/// Whether any `fts_v22_trash_*` table remains.
pub(super) fn has_trash(conn: &Connection) -> Result<bool, SchemaError> {
    Ok(!table_names(conn, TRASH_TABLES)?.is_empty())
}

/// `fts_v22_trash_<name>`, or with a numeric suffix if a leftover of an
/// earlier conversion already holds that name.
pub(super) fn free_trash_name(conn: &Connection, name: &str) -> Result<String, SchemaError> {
    let base = format!("{TRASH_PREFIX}{name}");
    let mut candidate = base.clone();
    let mut n = 1;
    while conn
        .query_row(
            "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE name = ?1)",
            [&candidate],
            |r| r.get::<_, bool>(0),
        )
        .context("reading the schema")?
    {
        n += 1;
        candidate = format!("{base}_{n}");
    }
    Ok(candidate)
}

/// The names a `SELECT name FROM sqlite_master …` query returns.
pub(super) fn table_names(conn: &Connection, sql: &str) -> Result<Vec<String>, SchemaError> {
    let mut stmt = conn.prepare(sql).context("reading the schema")?;
    let rows = stmt
        .query_map([], |r| r.get(0))
        .context("reading the schema")?;
    rows.collect::<Result<_, _>>()
        .context("reading the schema")
        .map_err(Into::into)
}
