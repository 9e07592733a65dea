//! Export and import.
//!
//! Two shapes:
//! * the original's `export_session` / `export_all` (`api.md` §11.1–11.2): a
//!   session row with its active messages, decoded as `get_messages` does;
//! * a streaming, versioned JSONL format (`docs/EXPORT-FORMAT.md`) that holds
//!   every column of every selected session and message, is written from one
//!   read snapshot with bounded memory, and imports back losslessly:
//!   export → import into an empty store → export gives the same bytes (header
//!   time aside).

mod import;
mod jsonl;
mod message_walk;
#[cfg(feature = "postgres")]
pub(crate) mod on_postgres;
mod parts;
pub(crate) mod seam;
mod streamed;

pub use hermes_state_core::export::ExportPart;
use import::*;
use jsonl::*;

use std::collections::{BTreeSet, HashSet};
use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;

use hermes_state_query::MessagePage;
use hermes_state_query::rows::session_from_row;
use hermes_state_query::values::{self, real};
use hermes_state_schema::SchemaError;
use hermes_state_schema::reconcile::quote_identifier;
use hermes_state_types::stored::StoredValueRef;
use hermes_state_types::{Message, SCHEMA_VERSION, Session, pyjson, stored};
use rusqlite::types::{ToSql, ToSqlOutput, Value as SqlValue, ValueRef};
use rusqlite::{Connection, OptionalExtension, Row, params_from_iter};
use serde_json::{Map, Value};

pub use hermes_state_core::export::{
    EXPORT_FORMAT, EXPORT_FORMAT_VERSION, ExportFilter, ExportSummary, IMPORT_LINE_LIMIT,
    ImportOptions, ImportReport, LineageExport, SessionExport,
};

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};

/// At most this many sessions per import transaction.
const IMPORT_BATCH_SESSIONS: usize = 500;
/// At most about this many messages per import transaction.
const IMPORT_BATCH_MESSAGES: usize = 10_000;
/// At most about this many bytes of JSONL per import transaction.
const IMPORT_BATCH_BYTES: usize = 32 << 20;
/// `progress` of the JSONL export is called every this many messages.
const PROGRESS_EVERY: u64 = 1000;

impl SessionDb {
    /// One session with its active messages (`api.md` §11.1), `None` for an
    /// unknown id. Read in one transaction.
    pub fn export_session(&self, session_id: &str) -> Result<Option<SessionExport>> {
        self.read(|conn| {
            in_read_transaction(conn, |conn| {
                let Some(session) = hermes_state_query::get_session(conn, session_id)? else {
                    return Ok(None);
                };
                let messages =
                    hermes_state_query::get_messages(conn, session_id, MessagePage::default())?;
                Ok(Some(SessionExport {
                    session,
                    last_active: None,
                    messages,
                }))
            })
        })
    }

    /// A compression lineage as one logical session
    /// (`export_session_lineage`): every session of
    /// [`SessionDb::get_compression_lineage`] exported as by
    /// [`SessionDb::export_session`]; `None` for an unknown id. Read in one
    /// transaction.
    pub fn export_session_lineage(&self, session_id: &str) -> Result<Option<LineageExport>> {
        self.read(|conn| {
            in_read_transaction(conn, |conn| {
                let lineage =
                    hermes_state_query::lookups::get_compression_lineage(conn, session_id)?;
                let mut segments = Vec::with_capacity(lineage.len());
                for id in &lineage {
                    if let Some(session) = hermes_state_query::get_session(conn, id)? {
                        let messages =
                            hermes_state_query::get_messages(conn, id, MessagePage::default())?;
                        segments.push(SessionExport {
                            session,
                            last_active: None,
                            messages,
                        });
                    }
                }
                Ok(LineageExport::of(segments))
            })
        })
    }

    /// Every session (at most 100 000, of `source` when given and non-empty)
    /// with its last activity and active messages, newest activity first
    /// (`api.md` §11.2, the order of `search_sessions`). Read in one
    /// transaction; everything is held in memory, as in the original: use
    /// [`SessionDb::export_all_each`] for the same sessions one at a time, or
    /// [`SessionDb::export_jsonl`] for the lossless format.
    pub fn export_all(&self, source: Option<&str>) -> Result<Vec<SessionExport>> {
        let source = source.filter(|s| !s.is_empty());
        self.read(|conn| {
            in_read_transaction(conn, |conn| {
                let sessions = sessions_by_last_active(conn, source)?;
                sessions
                    .into_iter()
                    .map(|(session, last_active)| {
                        let messages = hermes_state_query::get_messages(
                            conn,
                            &session.id,
                            MessagePage::default(),
                        )?;
                        Ok(SessionExport {
                            session,
                            last_active: Some(last_active),
                            messages,
                        })
                    })
                    .collect()
            })
        })
    }

    /// Writes the selected sessions with all their messages (inactive ones
    /// included) as JSONL, in the format of `docs/EXPORT-FORMAT.md`.
    ///
    /// Everything is read from one snapshot (one read transaction on a
    /// dedicated read-only connection, so the handle stays free for writes
    /// meanwhile) and streamed row by row: memory does not grow with the size
    /// of the store. Parents come before their children. `progress` is called
    /// with the number of messages written so far, every 1000 messages and
    /// once at the end. The writer is buffered internally.
    ///
    /// In a store in rollback-journal (DELETE) mode the snapshot holds a
    /// shared lock: writers wait until the export ends.
    pub fn export_jsonl<W: Write>(
        &self,
        writer: W,
        filter: &ExportFilter,
        mut progress: impl FnMut(u64),
    ) -> Result<ExportSummary> {
        self.read(|_| Ok(()))?;
        let conn = hermes_state_schema::open_read_only(self.path())?;
        // Files of older versions are exported as they are, in the v23 shape.
        hermes_state_query::compat::adapt(&conn)?;
        conn.execute_batch("BEGIN DEFERRED")
            .context("starting the export snapshot")?;
        let result = write_jsonl(&conn, writer, filter, self.now(), &mut progress);
        let _ = conn.execute_batch(if result.is_ok() { "COMMIT" } else { "ROLLBACK" });
        result
    }

    /// Imports a JSONL export (`docs/EXPORT-FORMAT.md`) into this store.
    ///
    /// The header is checked first: another format or version fails with
    /// [`crate::ErrorKind::InvalidInput`] and nothing is written. Sessions are
    /// written in file order (parents first), in transactions of at most 500
    /// sessions or about 10 000 messages, so a huge import never holds the
    /// write lock for long; the FTS indexes follow through the triggers.
    ///
    /// * Existing sessions are reported in `skipped_existing` and left alone,
    ///   or, with `overwrite_existing`, replaced (row updated in place, its
    ///   messages deleted and re-imported; usage rows kept).
    /// * Rows keep every exported column, counters included. Message ids are
    ///   kept when free in this store (always, into an empty store); from the
    ///   first taken id on, a session's further messages get new ids, so its
    ///   order is kept.
    /// * A parent that is missing → `parent_session_id` NULL, reported in
    ///   `orphaned`. A title held by another session → imported untitled,
    ///   reported in `title_conflicts`.
    ///
    /// A malformed line, a truncated file (no end line, or counts that do not
    /// match it) or a failed write stops the import with an error. Batches
    /// committed before stay; a new session whose messages spanned committed
    /// batches is removed again, so every session left is complete. `progress`
    /// gets the number of messages written after each transaction.
    pub fn import_jsonl<R: BufRead>(
        &self,
        reader: R,
        options: &ImportOptions,
        mut progress: impl FnMut(u64),
    ) -> Result<ImportReport> {
        let mut lines = JsonLines::new(reader);
        check_header(lines.next()?)?;
        if self.is_read_only() {
            return Err(Error::ReadOnly("importing sessions".to_owned()));
        }
        let targets = self.read(TargetColumns::load)?;
        let mut import = Import {
            db: self,
            overwrite: options.overwrite_existing,
            cursor: Cursor::Idle,
            report: ImportReport::default(),
            partial: None,
            dropped: BTreeSet::new(),
        };
        match import.run(&mut lines, &targets, &mut progress) {
            Ok(()) => {
                import.report.dropped_columns = import.dropped.into_iter().collect();
                Ok(import.report)
            }
            Err(error) => {
                import.remove_partial_session();
                Err(error)
            }
        }
    }
}

/// Runs `read` inside `BEGIN DEFERRED … COMMIT`, so its statements share one snapshot.
pub(super) fn in_read_transaction<T>(
    conn: &Connection,
    read: impl FnOnce(&Connection) -> Result<T>,
) -> Result<T> {
    conn.execute_batch("BEGIN DEFERRED")
        .context("starting a read transaction")?;
    let result = read(conn);
    let _ = conn.execute_batch(if result.is_ok() { "COMMIT" } else { "ROLLBACK" });
    result
}

/// `search_sessions(source, limit=100000)` of `api.md` §10.1.
pub(super) const SESSIONS_BY_LAST_ACTIVE: &str =
    "SELECT s.*, COALESCE(m.last_active, s.started_at) AS last_active
FROM sessions s
LEFT JOIN (SELECT session_id, MAX(timestamp) AS last_active FROM messages GROUP BY session_id) m
    ON m.session_id = s.id
WHERE ?1 IS NULL OR s.source = ?1
ORDER BY last_active DESC, s.started_at DESC, s.id DESC
LIMIT 100000";

fn sessions_by_last_active(conn: &Connection, source: Option<&str>) -> Result<Vec<(Session, f64)>> {
    let mut stmt = conn
        .prepare(SESSIONS_BY_LAST_ACTIVE)
        .context("listing sessions")?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let session_columns = columns.len() - 1;
    let rows = stmt
        .query_map([source], |row| {
            Ok((
                session_from_row(row, &columns[..session_columns])?,
                real(row.get_ref(session_columns)?).unwrap_or_default(),
            ))
        })
        .context("listing sessions")?;
    rows.collect::<Result<_, _>>()
        .context("listing sessions")
        .map_err(Into::into)
}
