//! `SessionDb::repair_malformed_schema`: the original's one-shot repair of a
//! file whose schema SQLite cannot read (`migrations.md` §2.1), as an
//! explicit operation, and run once per path per process by the writable
//! open (the first write, or `migrate`) when the open meets it.
//!
//! Never from a read (docs/DECISIONS.md, "Reads never write"): a read of
//! such a file fails with [`ErrorKind::Corrupt`] naming the repair. The
//! statements themselves are the schema crate's
//! (`hermes_state_schema::malformed`), which makes the backup through
//! SQLite's backup API first.
//!
//! [`ErrorKind::Corrupt`]: hermes_state_types::ErrorKind::Corrupt

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use hermes_state_query::QueryError;
use hermes_state_schema::SchemaError;
use hermes_state_schema::malformed;
use hermes_state_sqlite::SqliteError;

use crate::db::SessionDb;
use crate::error::{Error, Result};

pub use hermes_state_schema::malformed::{
    HealthCheck, MalformedRepairReport, RepairStep, StepOutcome,
};

/// What a caller can do about a malformed schema, appended to the error.
const REPAIR_HINT: &str = "the schema is malformed; reads never repair it: \
     `SessionDb::repair_malformed_schema` (or the first write, e.g. `migrate`) \
     backs the file up and repairs it";

impl SessionDb {
    /// Repairs a store whose schema SQLite cannot read ("malformed database
    /// schema", "database disk image is malformed") with the original's
    /// one-shot ladder (`migrations.md` §2.1), and returns what it did.
    ///
    /// A healthy store is left alone (no backup, no step). Otherwise a
    /// backup `<name>.malformed-backup-<YYYYmmdd_HHMMSS>` (UTC, by the
    /// handle's clock) is made next to the file through SQLite's backup API
    /// (if it cannot be made, nothing is done and the error is returned);
    /// then FTS rebuild, `REINDEX`, duplicate `sqlite_master` rows removed,
    /// FTS objects removed and `VACUUM`, each followed by the health check,
    /// up to the first step after which the store is healthy. Rows of
    /// `sessions` and `messages` are never modified. A store no step
    /// repairs is reported ([`MalformedRepairReport::is_healthy`] false),
    /// with its backup.
    ///
    /// The handle's connections are closed for the repair; the next write
    /// runs the open algorithm again, which recreates FTS objects the last
    /// step removed. Runs every time it is called (the once-per-process rule
    /// is for the open's automatic run, which a call here counts as).
    /// Fails with [`ErrorKind::ReadOnly`](hermes_state_types::ErrorKind::ReadOnly)
    /// on a read-only handle.
    pub fn repair_malformed_schema(&self) -> Result<MalformedRepairReport> {
        self.with_connections_closed("repairing a malformed schema", || {
            claim_automatic_repair(self.path());
            Ok(malformed::repair(self.path(), self.now().floor() as i64)?)
        })
    }

    /// What the automatic malformed-schema repair of this handle's writable
    /// open did, if it ran (whether or not it repaired the store).
    pub fn malformed_repair_report(&self) -> Option<&MalformedRepairReport> {
        self.malformed_repair.get()
    }
}

/// Takes this process's one automatic repair of `path`: true the first time
/// only (paths compared canonicalised where they exist).
pub(crate) fn claim_automatic_repair(path: &Path) -> bool {
    static TRIED: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    TRIED
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(key)
}

/// The SQLite error inside `error`, if it has one.
fn sqlite_error(error: &Error) -> Option<&SqliteError> {
    if let Some(error) = error.downcast_backend::<SqliteError>() {
        return Some(error);
    }
    if let Some(SchemaError::Sqlite(error)) = error.downcast_backend::<SchemaError>() {
        return Some(error);
    }
    match error.downcast_backend::<QueryError>() {
        Some(QueryError::Sqlite(error)) => Some(error),
        _ => None,
    }
}

/// The SQLite error inside `error`, taken out, if it has one; `error`
/// unchanged otherwise.
fn into_sqlite_error(error: Error) -> std::result::Result<SqliteError, Error> {
    let error = match error.into_backend::<SqliteError>() {
        Ok(error) => return Ok(error),
        Err(error) => error,
    };
    let error = match error.into_backend::<SchemaError>() {
        Ok(SchemaError::Sqlite(error)) => return Ok(error),
        Ok(other) => return Err(Error::from(other)),
        Err(error) => error,
    };
    match error.into_backend::<QueryError>() {
        Ok(QueryError::Sqlite(error)) => Ok(error),
        Ok(other) => Err(Error::from(other)),
        Err(error) => Err(error),
    }
}

/// Whether `error` is SQLite's `SQLITE_CORRUPT` (any extended code).
pub(crate) fn is_malformed(error: &Error) -> bool {
    sqlite_error(error).is_some_and(|error| malformed::is_malformed(&error.source))
}

/// A `SQLITE_CORRUPT` error, with what was being done and the hint.
fn corrupt(context: String, source: rusqlite::Error) -> Error {
    Error::from(SqliteError::new(context, source))
}

/// The error a read of a file with a malformed schema returns
/// ([`ErrorKind::Corrupt`](hermes_state_types::ErrorKind::Corrupt)), from
/// the text of the error the open met.
pub(crate) fn read_error(original: &str) -> Error {
    let source = rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
        Some(original.to_owned()),
    );
    corrupt(format!("reading the store: {REPAIR_HINT}"), source)
}

/// `error` with the repair named in its context when it is `SQLITE_CORRUPT`;
/// any other error as it is.
pub(crate) fn naming_the_repair(error: Error) -> Error {
    if !is_malformed(&error) {
        return error;
    }
    match into_sqlite_error(error) {
        Ok(SqliteError { context, source }) => corrupt(format!("{context}; {REPAIR_HINT}"), source),
        Err(other) => other,
    }
}

/// The open's error after a repair that left the store unhealthy: the
/// original error, with where the backup is and what the last check found.
pub(crate) fn not_repaired(error: SchemaError, report: &MalformedRepairReport) -> Error {
    let backup = report
        .backup
        .as_ref()
        .map_or_else(|| "none".to_owned(), |path| path.display().to_string());
    let failure = report.health.failure.as_deref().unwrap_or("none");
    match error {
        SchemaError::Sqlite(SqliteError { context, source }) => corrupt(
            format!(
                "{context}; the malformed-schema repair did not make the store healthy \
                 (backup: {backup}; last check: {failure})"
            ),
            source,
        ),
        other => other.into(),
    }
}
