//! `SessionDb::doctor`: the health checks of `hermes_state_query::health`,
//! plus the FTS5 `integrity-check` of every FTS table, which is an `INSERT`
//! command and so runs through the write path on a writable handle.
//!
//! The doctor only reads. Damage SQLite itself reports (`PRAGMA
//! integrity_check`) is reported, never "repaired": that needs a backup, not
//! a guess. The repair is in `repair`.

use hermes_state_query::health;
use hermes_state_schema::{connection, detect};
use hermes_state_sqlite::{retry, sqlite_error_kind};
use hermes_state_types::ErrorKind;
use rusqlite::Connection;

use crate::db::{FTS_TABLES, SessionDb};
use crate::error::{Result, WriteContext};

pub use hermes_state_query::health::{
    CounterMismatch, DanglingParent, DoctorReport, DuplicateTitle, FtsCheck, FtsNote,
    FtsTableCheck, LineageCycle, OrphanedMessages,
};

impl SessionDb {
    /// Checks the store without changing it: `PRAGMA integrity_check`, FTS5
    /// `integrity-check` of every FTS table (against its content where the
    /// gate allows), the session counters against the message rows, parents
    /// that do not exist, messages of missing sessions, lineage cycles,
    /// duplicate titles, and notes on the FTS storage (legacy layout, pending
    /// backfills, stale CJK index, leftover tables).
    ///
    /// The FTS5 `integrity-check` is an `INSERT` command that writes
    /// nothing, but it needs the write lock: on a writable handle the whole
    /// check runs through the write path (which also upgrades the file, as
    /// any first write does); a read-only handle checks the indexes only
    /// (`PRAGMA integrity_check(<table>)`) and never writes.
    pub fn doctor(&self) -> Result<DoctorReport> {
        if self.is_read_only() {
            self.read(|conn| diagnose(conn, true))
        } else {
            self.write("checking the store", |conn| diagnose(conn, false))
        }
    }
}

fn diagnose(conn: &Connection, read_only: bool) -> Result<DoctorReport> {
    let mut report = health::read_checks(conn)?;
    let tokenizer = connection::has_cjk_tokenizer(conn);
    for table in FTS_TABLES {
        if detect::object_exists(conn, "table", table)? {
            report.fts.push(FtsTableCheck {
                table: table.to_owned(),
                check: check_fts(conn, table, &report.notes, tokenizer, read_only)?,
            });
        }
    }
    Ok(report)
}

fn check_fts(
    conn: &Connection,
    table: &str,
    notes: &[FtsNote],
    tokenizer: bool,
    read_only: bool,
) -> Result<FtsCheck> {
    let cjk = table == "messages_fts_cjk";
    if cjk && !tokenizer {
        return Ok(FtsCheck::Skipped(
            "this connection lacks the cjk_unicode61 tokenizer".to_owned(),
        ));
    }
    if cjk && notes.contains(&FtsNote::CjkStale) {
        return Ok(FtsCheck::Skipped(
            "stale: disabled by a process without the tokenizer; not served until rebuilt"
                .to_owned(),
        ));
    }
    let pending = notes.iter().any(|n| match n {
        FtsNote::RebuildPending { .. } => !cjk,
        FtsNote::CjkRebuildPending { .. } => cjk,
        _ => false,
    });
    let outcome = if read_only {
        // The FTS5 command is an INSERT, refused on a read-only handle;
        // PRAGMA integrity_check(<table>) checks the index only.
        let mut stmt = conn
            .prepare(&format!("PRAGMA integrity_check({table})"))
            .context("checking an FTS index")?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .context("checking an FTS index")?
            .collect::<Result<Vec<_>, _>>()
            .context("checking an FTS index")?;
        if rows == ["ok"] {
            Ok(())
        } else {
            Err(rows.join("; "))
        }
    } else {
        let sql = format!(
            "INSERT INTO {table}({table}, rank) VALUES('integrity-check', {})",
            i32::from(!pending)
        );
        match retry::with_retries(|| conn.execute_batch(&sql), sqlite_error_kind) {
            Ok(()) => Ok(()),
            Err(error) if sqlite_error_kind(&error) == ErrorKind::Busy => {
                return Err(crate::error::sqlite("checking an FTS index", error));
            }
            Err(error) => Err(error.to_string()),
        }
    };
    Ok(match outcome {
        Err(message) => FtsCheck::Failed(message),
        Ok(()) if read_only => FtsCheck::IndexOnly("read-only handle".to_owned()),
        Ok(()) if pending => FtsCheck::IndexOnly(
            "a gated backfill is pending: not-yet-backfilled rows are not indexed".to_owned(),
        ),
        Ok(()) => FtsCheck::Ok,
    })
}
