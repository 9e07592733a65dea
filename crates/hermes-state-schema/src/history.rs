//! This project's own forward migrations, run by refinery (`migrations/`).
//!
//! Two histories meet in a `state.db` (see `docs/ARCHITECTURE.md`, "Migrations"):
//! the original's versions 1..23, kept in `schema_version` and brought to 23 by
//! the open algorithm in [`crate::open`], and this project's steps after 23,
//! kept by refinery in `refinery_schema_history`.
//!
//! `V1__v23_baseline.sql` *is* the v23 schema. It is never executed by refinery:
//! every file, fresh or old, is brought to the v23 shape by the open algorithm
//! (which must reproduce the original's object order and first-open FTS rebuild,
//! something a replayed script cannot), and then V1 is recorded as applied with
//! refinery's `Target::FakeVersion(1)` baseline. Steps `V2__…` onwards are real
//! refinery migrations, applied in order on the next open of each file.
//!
//! Everything here runs inside the open's `BEGIN IMMEDIATE` transaction (the
//! migration lock), through an adapter that executes refinery's statements on
//! that transaction instead of letting refinery open its own. So the v23 steps,
//! the baseline and every later step commit together or not at all, and two
//! processes never run them concurrently.

use refinery::{Migration, Target};
use refinery_core::traits::sync::{Migrate, Query, Transaction};
use rusqlite::Connection;
use rusqlite::types::Type;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::SchemaError;

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// The refinery version that stands for "the v23 schema of the original".
pub const BASELINE_VERSION: i32 = 1;

/// Refinery's history table (its default name).
pub const HISTORY_TABLE: &str = "refinery_schema_history";

/// The embedded migrations, in version order.
pub fn migrations() -> Vec<Migration> {
    embedded::migrations::runner().get_migrations().clone()
}

/// What [`apply`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HistoryReport {
    /// Whether the baseline (V1) was recorded by this call.
    pub baselined: bool,
    /// Names of the migrations applied by this call (after the baseline).
    pub applied: Vec<String>,
}

/// Records the baseline when the file has no history, then applies every
/// migration newer than the file's history. The caller holds the open's write
/// transaction and commits it.
pub fn apply(conn: &Connection) -> Result<HistoryReport, SchemaError> {
    let mut tx = InOpenTransaction(conn);
    let mut report = HistoryReport::default();
    let has_rows = crate::detect::object_exists(conn, "table", HISTORY_TABLE)?
        && conn
            .query_row(
                &format!("SELECT EXISTS(SELECT 1 FROM {HISTORY_TABLE})"),
                [],
                |row| row.get::<_, bool>(0),
            )
            .map_err(|e| SchemaError::sqlite("reading the migration history", e))?;
    if !has_rows {
        embedded::migrations::runner()
            .set_target(Target::FakeVersion(BASELINE_VERSION))
            .run(&mut tx)
            .map_err(history_error)?;
        report.baselined = true;
    }
    let applied = embedded::migrations::runner()
        .set_grouped(true)
        .run(&mut tx)
        .map_err(history_error)?;
    report.applied = applied
        .applied_migrations()
        .iter()
        .map(|m| m.to_string())
        .collect();
    Ok(report)
}

fn history_error(error: refinery::Error) -> SchemaError {
    // A lock error must stay a lock error so the open can be retried.
    let text = error.to_string();
    let lowered = text.to_ascii_lowercase();
    if lowered.contains("database is locked") || lowered.contains("database is busy") {
        return SchemaError::sqlite(
            "applying migrations",
            rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                Some(text),
            ),
        );
    }
    SchemaError::History(text)
}

/// Runs refinery's statements on the connection's current transaction.
struct InOpenTransaction<'a>(&'a Connection);

impl Transaction for InOpenTransaction<'_> {
    type Error = rusqlite::Error;

    fn execute<'q, T: Iterator<Item = &'q str>>(
        &mut self,
        queries: T,
    ) -> Result<usize, Self::Error> {
        let mut count = 0;
        for query in queries {
            self.0.execute_batch(query)?;
            count += 1;
        }
        Ok(count)
    }
}

impl Query<Vec<Migration>> for InOpenTransaction<'_> {
    fn query(&mut self, query: &str) -> Result<Vec<Migration>, Self::Error> {
        let mut stmt = self.0.prepare(query)?;
        let rows = stmt.query_map([], |row| {
            let version: i32 = row.get(0)?;
            let name: String = row.get(1)?;
            let applied_on: String = row.get(2)?;
            let checksum: String = row.get(3)?;
            let applied_on = OffsetDateTime::parse(&applied_on, &Rfc3339).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(2, Type::Text, Box::new(e))
            })?;
            let checksum = checksum.parse::<u64>().map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(3, Type::Text, Box::new(e))
            })?;
            Ok(Migration::applied(version, name, applied_on, checksum))
        })?;
        rows.collect()
    }
}

impl Migrate for InOpenTransaction<'_> {}
