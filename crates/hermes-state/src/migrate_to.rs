//! Moving a store to PostgreSQL: a verified copy, then a marker in the old
//! file (`docs/POSTGRES.md`, "Moving a store").
//!
//! The copy reads one snapshot of the SQLite file (one read transaction on
//! this handle's read connection), refuses a non-empty target, loads and
//! verifies everything in one PostgreSQL transaction
//! ([`hermes_state_postgres::PgStore::copy_from`]), and only after that
//! commit writes `superseded_by` (the target without its password) and
//! `superseded_at` into the old file's `state_meta`, so other readers of
//! the file can tell it is frozen. The old file stays usable for a rollback.

use hermes_state_postgres::copy::{CopyReport, RowSource};
use hermes_state_postgres::{PgError, PgStore};
use hermes_state_query::values::sql_value;
use hermes_state_types::stored::StoredValue;
use rusqlite::Connection;
use rusqlite::types::ValueRef;

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};

pub use crate::backend::{SUPERSEDED_AT, SUPERSEDED_BY};

/// What [`SessionDb::migrate_to_postgres`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveReport {
    /// The target, without its password.
    pub target: String,
    /// Rows copied per table, in copy order.
    pub rows: Vec<(String, u64)>,
    /// When the old file was marked (Unix seconds).
    pub superseded_at: f64,
}

impl SessionDb {
    /// Copies this store into the PostgreSQL store `url` names (created if
    /// missing, refused if not empty), verifies every row and column, then
    /// marks this file as superseded. The file must be at schema version 23
    /// (`migrate` first); nothing is written to it unless the copy
    /// committed.
    pub fn migrate_to_postgres(&self, url: &str) -> Result<MoveReport> {
        self.migrate_to_postgres_location(&crate::PostgresUrl::parse(url)?)
    }

    /// [`SessionDb::migrate_to_postgres`] to a URL already parsed.
    pub fn migrate_to_postgres_location(&self, url: &crate::PostgresUrl) -> Result<MoveReport> {
        let url = url.store_url();
        let created = !PgStore::schema_exists(url)?;
        let target = PgStore::open(url)?;
        let copied = self.copy_into_postgres(&target);
        drop(target);
        if copied.is_err() && created {
            // The store was made for this move: a failed move takes it back.
            // Best effort: the copy's own error is the one to report.
            let _kept = PgStore::drop_created_store(url);
        }
        self.mark_moved(url, copied?)
    }

    /// Copies this file's rows into `target` from one read snapshot, once
    /// the file is at the current schema version.
    fn copy_into_postgres(&self, target: &PgStore) -> Result<CopyReport> {
        self.read(|conn| {
            let version: i64 = conn
                .query_row("SELECT max(version) FROM schema_version", [], |row| {
                    row.get(0)
                })
                .context("reading the schema version")?;
            if version != hermes_state_types::SCHEMA_VERSION {
                return Err(Error::InvalidInput(format!(
                    "the file is at schema version {version}; run `hermes-state migrate` \
                     to bring it to {} before moving it",
                    hermes_state_types::SCHEMA_VERSION
                )));
            }
            conn.execute_batch("BEGIN")
                .context("starting the snapshot")?;
            let copied = target.copy_from(&mut SqliteRows { conn });
            let _ended = conn.execute_batch("COMMIT");
            Ok(copied?)
        })
    }
}

impl SessionDb {
    /// Marks this file as moved to `url` (the copy committed).
    fn mark_moved(
        &self,
        url: &hermes_state_postgres::StoreUrl,
        report: CopyReport,
    ) -> Result<MoveReport> {
        let now = self.now();
        let redacted = url.redacted();
        self.write("marking the store as moved", |conn| {
            for (key, value) in [
                (SUPERSEDED_BY, redacted.clone()),
                (SUPERSEDED_AT, now.to_string()),
            ] {
                conn.execute(
                    "INSERT INTO state_meta (key, value) VALUES (?1, ?2) \
                     ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    [key, value.as_str()],
                )
                .context("marking the store as moved")?;
            }
            Ok(())
        })?;
        Ok(MoveReport {
            target: redacted,
            rows: report.rows,
            superseded_at: now,
        })
    }
}

/// The rows of a SQLite store, read on one connection.
struct SqliteRows<'a> {
    conn: &'a Connection,
}

impl RowSource for SqliteRows<'_> {
    fn has_table(&mut self, table: &str) -> hermes_state_postgres::Result<bool> {
        hermes_state_sqlite::catalog::object_exists(self.conn, "table", table)
            .map_err(|e| PgError::Migration(format!("looking for table {table}: {e}")))
    }

    fn each_row(
        &mut self,
        table: &str,
        columns: &[String],
        key: &str,
        sink: &mut dyn FnMut(Vec<StoredValue>) -> hermes_state_postgres::Result<()>,
    ) -> hermes_state_postgres::Result<()> {
        let only = if table == "state_meta" {
            // SQLite's FTS bookkeeping means nothing to another backend.
            " WHERE key NOT LIKE 'fts\\_%' ESCAPE '\\'"
        } else {
            ""
        };
        let sql = format!(
            "SELECT {} FROM {table}{only} ORDER BY {key}",
            columns.join(", ")
        );
        let read_error = |e: rusqlite::Error| PgError::Migration(format!("reading {table}: {e}"));
        let mut stmt = self.conn.prepare(&sql).map_err(read_error)?;
        let mut rows = stmt.query([]).map_err(read_error)?;
        while let Some(row) = rows.next().map_err(read_error)? {
            let mut values = Vec::with_capacity(columns.len());
            for (index, column) in columns.iter().enumerate() {
                values.push(match row.get_ref(index).map_err(read_error)? {
                    ValueRef::Null => StoredValue::Null,
                    ValueRef::Integer(i) => StoredValue::Integer(i),
                    ValueRef::Real(f) => StoredValue::Real(f),
                    ValueRef::Text(bytes) => {
                        StoredValue::Text(String::from_utf8(bytes.to_vec()).map_err(|_| {
                            PgError::InvalidInput(format!(
                                "{table}, column {column}: text that is not UTF-8"
                            ))
                        })?)
                    }
                    ValueRef::Blob(bytes) => StoredValue::Blob(bytes.to_vec()),
                });
            }
            sink(values)?;
        }
        Ok(())
    }
}

/// Copies the PostgreSQL store `url` names into a new SQLite store at
/// `path` (created; an existing file must hold an empty store), verifies
/// every row and column, then marks the PostgreSQL store as superseded
/// (`superseded_by` = `sqlite:PATH`, `superseded_at`): the way back from
/// PostgreSQL. The copy reads one snapshot and writes one SQLite
/// transaction; on any error nothing is committed and nothing is marked.
pub fn migrate_postgres_to_sqlite(url: &str, path: &std::path::Path) -> Result<MoveReport> {
    migrate_postgres_location_to_sqlite(&crate::PostgresUrl::parse(url)?, path)
}

/// [`migrate_postgres_to_sqlite`] from a URL already parsed.
pub fn migrate_postgres_location_to_sqlite(
    url: &crate::PostgresUrl,
    path: &std::path::Path,
) -> Result<MoveReport> {
    let source = PgStore::open(url.store_url())?;
    let db = SessionDb::open(path)?;
    let mut rows = Vec::new();
    let mut once = Some(&source);
    db.write("copying a store into this file", |conn| {
        let source = once.take().ok_or_else(|| {
            Error::InvalidInput(
                "the copy met a busy file and cannot be retried; run it again".into(),
            )
        })?;
        ensure_empty_sqlite(conn)?;
        rows = source.with_snapshot(|snapshot| load_sqlite(conn, snapshot))?;
        Ok(())
    })?;
    let now = db.now();
    let target = format!(
        "sqlite:{}",
        std::path::absolute(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
    );
    source.set_meta(SUPERSEDED_BY, Some(&target))?;
    source.set_meta(SUPERSEDED_AT, Some(&now.to_string()))?;
    Ok(MoveReport {
        target,
        rows,
        superseded_at: now,
    })
}

fn ensure_empty_sqlite(conn: &Connection) -> Result<()> {
    for (table, _) in hermes_state_postgres::copy::COPIED_TABLES {
        let any: bool = conn
            .query_row(&format!("SELECT EXISTS (SELECT 1 FROM {table})"), [], |r| {
                r.get(0)
            })
            .context("checking that the target is empty")?;
        if any {
            return Err(Error::InvalidInput(format!(
                "the target file is not empty (table {table} has rows); copy into a new file"
            )));
        }
    }
    Ok(())
}

/// Loads every copied table from `source` into `conn`, then compares a
/// second pass over `source` with what the file holds.
fn load_sqlite(
    conn: &Connection,
    source: &mut dyn RowSource,
) -> hermes_state_postgres::Result<Vec<(String, u64)>> {
    let failed = |what: &str, e: rusqlite::Error| PgError::Migration(format!("{what}: {e}"));
    let mut tables = hermes_state_postgres::copy::COPIED_TABLES.to_vec();
    for (table, key) in hermes_state_postgres::copy::OPTIONAL_TABLES {
        if source.has_table(table)? {
            tables.push((table, key));
        }
    }
    if tables.len() > hermes_state_postgres::copy::COPIED_TABLES.len() {
        hermes_state_schema::telegram_topics::create_telegram_topic_tables(conn)
            .map_err(|e| PgError::Migration(e.to_string()))?;
    }
    let mut report = Vec::new();
    for &(table, key) in &tables {
        let columns = sqlite_columns(conn, table).map_err(|e| failed("reading columns", e))?;
        let parent_at = (table == "sessions")
            .then(|| columns.iter().position(|c| c == "parent_session_id"))
            .flatten();
        let placeholders = vec!["?"; columns.len()].join(", ");
        let sql = format!(
            "INSERT INTO {table} ({}) VALUES ({placeholders})",
            columns.join(", ")
        );
        let mut insert = conn
            .prepare(&sql)
            .map_err(|e| failed("preparing the copy", e))?;
        let mut links = Vec::new();
        let mut count = 0u64;
        source.each_row(table, &columns, key, &mut |mut row| {
            if let Some(at) = parent_at
                && let StoredValue::Text(parent) =
                    std::mem::replace(&mut row[at], StoredValue::Null)
            {
                links.push((sql_value(row[0].clone()), parent));
            }
            insert
                .execute(rusqlite::params_from_iter(row.into_iter().map(sql_value)))
                .map_err(|e| failed(&format!("copying a {table} row"), e))?;
            count += 1;
            Ok(())
        })?;
        for (id, parent) in links {
            conn.execute(
                "UPDATE sessions SET parent_session_id = ?2 WHERE id = ?1",
                rusqlite::params![id, parent],
            )
            .map_err(|e| failed("linking sessions to their parents", e))?;
        }
        report.push((table.to_owned(), count));
    }
    for &(table, key) in &tables {
        let columns = sqlite_columns(conn, table).map_err(|e| failed("reading columns", e))?;
        let sql = format!("SELECT {} FROM {table} ORDER BY {key}", columns.join(", "));
        let mut stmt = conn
            .prepare(&sql)
            .map_err(|e| failed("reading the copy back", e))?;
        let mut copied = stmt
            .query([])
            .map_err(|e| failed("reading the copy back", e))?;
        let mut checked = 0u64;
        source.each_row(table, &columns, key, &mut |row| {
            let Some(back) = copied
                .next()
                .map_err(|e| failed("reading the copy back", e))?
            else {
                return Err(PgError::Mismatch(format!(
                    "{table}: the copy has fewer rows"
                )));
            };
            for (index, want) in row.into_iter().enumerate() {
                let got = stored_value(back.get_ref(index).map_err(|e| failed("reading", e))?);
                if got != want {
                    return Err(PgError::Mismatch(format!(
                        "{table} row {checked}, column {}: source {want:?}, copy {got:?}",
                        columns[index]
                    )));
                }
            }
            checked += 1;
            Ok(())
        })?;
        if copied
            .next()
            .map_err(|e| failed("reading the copy back", e))?
            .is_some()
        {
            return Err(PgError::Mismatch(format!(
                "{table}: the copy has more rows"
            )));
        }
    }
    Ok(report)
}

fn sqlite_columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT name FROM pragma_table_info('{table}') ORDER BY cid"
    ))?;
    stmt.query_map([], |row| row.get(0))?.collect()
}

fn stored_value(value: ValueRef<'_>) -> StoredValue {
    match value {
        ValueRef::Null => StoredValue::Null,
        ValueRef::Integer(i) => StoredValue::Integer(i),
        ValueRef::Real(f) => StoredValue::Real(f),
        ValueRef::Text(t) => StoredValue::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => StoredValue::Blob(b.to_vec()),
    }
}
