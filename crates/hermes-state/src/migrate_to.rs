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
use hermes_state_postgres::{PgError, PgStore, StoreUrl};
use hermes_state_types::stored::StoredValue;
use rusqlite::Connection;
use rusqlite::types::ValueRef;

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};

/// The `state_meta` key naming where the store moved (no credentials).
pub const SUPERSEDED_BY: &str = "superseded_by";
/// The `state_meta` key holding when it moved (Unix seconds).
pub const SUPERSEDED_AT: &str = "superseded_at";

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
        let url = StoreUrl::parse(url)?;
        let target = PgStore::open(&url)?;
        let report: CopyReport = self.read(|conn| {
            let version: i64 = conn
                .query_row("SELECT max(version) FROM schema_version", [], |row| {
                    row.get(0)
                })
                .context("reading the schema version")?;
            if version != i64::from(hermes_state_types::SCHEMA_VERSION) {
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
        })?;
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
            for index in 0..columns.len() {
                values.push(match row.get_ref(index).map_err(read_error)? {
                    ValueRef::Null => StoredValue::Null,
                    ValueRef::Integer(i) => StoredValue::Integer(i),
                    ValueRef::Real(f) => StoredValue::Real(f),
                    ValueRef::Text(bytes) => {
                        StoredValue::Text(String::from_utf8(bytes.to_vec()).map_err(|_| {
                            PgError::InvalidInput(format!(
                                "{table}, column {}: text that is not UTF-8",
                                columns[index]
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
