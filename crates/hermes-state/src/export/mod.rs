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

use import::*;
use jsonl::*;
pub use parts::ExportPart;

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

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};

/// The `format` of the JSONL header line.
pub const EXPORT_FORMAT: &str = "hermes-state-export";
/// The `version` of the JSONL format this library writes and reads.
pub const EXPORT_FORMAT_VERSION: i64 = 1;

/// The longest line an import reads, in bytes (64 MiB): one session or one
/// message of the JSONL format, its longest content included, with room to
/// spare; a longer line is refused as [`crate::ErrorKind::InvalidInput`]
/// naming its number, never read into memory whole.
pub const IMPORT_LINE_LIMIT: usize = 64 << 20;

/// At most this many sessions per import transaction.
const IMPORT_BATCH_SESSIONS: usize = 500;
/// At most about this many messages per import transaction.
const IMPORT_BATCH_MESSAGES: usize = 10_000;
/// At most about this many bytes of JSONL per import transaction.
const IMPORT_BATCH_BYTES: usize = 32 << 20;
/// `progress` of the JSONL export is called every this many messages.
const PROGRESS_EVERY: u64 = 1000;

/// One session as the original's `export_session` / `export_all` return it.
///
/// It serialises (and [`SessionExport::to_value`] gives) the original's
/// dict: the session's columns, then `last_active` (in
/// [`SessionDb::export_all`] only), then `messages`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionExport {
    /// The session row.
    pub session: Session,
    /// The newest message's timestamp, else `started_at`; `Some` only in
    /// [`SessionDb::export_all`], as in the original.
    pub last_active: Option<f64>,
    /// The active messages in id order, decoded as `get_messages` does.
    pub messages: Vec<Message>,
}

impl SessionExport {
    /// The original's dict as JSON: the session's keys (v23 columns in table
    /// order, then unknown columns), `last_active` when present, `messages`.
    pub fn to_value(&self) -> Value {
        let mut map = match serde_json::to_value(&self.session) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        if let Some(last_active) = self.last_active {
            map.insert("last_active".to_owned(), float(last_active));
        }
        let messages = self
            .messages
            .iter()
            .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
            .collect();
        map.insert("messages".to_owned(), Value::Array(messages));
        Value::Object(map)
    }
}

impl serde::Serialize for SessionExport {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

/// A compression lineage exported as one logical session
/// (`export_session_lineage`): each session of the lineage, root first, as
/// [`SessionDb::export_session`] gives it.
///
/// It serialises (and [`LineageExport::to_value`] gives) the original's
/// dict: the tip's export with `message_count` the number of messages of
/// every segment and `messages` all of them in lineage order, then
/// `segments` and `lineage_session_ids`.
#[derive(Debug, Clone, PartialEq)]
pub struct LineageExport {
    /// The lineage's sessions with their active messages, root first; never
    /// empty.
    pub segments: Vec<SessionExport>,
}

impl LineageExport {
    /// The export of these segments; `None` when there are none (an
    /// unknown id).
    pub fn of(segments: Vec<SessionExport>) -> Option<LineageExport> {
        (!segments.is_empty()).then_some(LineageExport { segments })
    }

    /// The lineage's session ids, root first.
    pub fn lineage_session_ids(&self) -> Vec<String> {
        self.segments.iter().map(|s| s.session.id.clone()).collect()
    }

    /// The original's dict as JSON (see [`LineageExport`]).
    pub fn to_value(&self) -> Value {
        let mut map = match self.segments.last().map(SessionExport::to_value) {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let segments: Vec<Value> = self.segments.iter().map(SessionExport::to_value).collect();
        let messages: Vec<Value> = segments
            .iter()
            .filter_map(|segment| segment.get("messages").and_then(Value::as_array))
            .flatten()
            .cloned()
            .collect();
        map.insert("segments".to_owned(), Value::Array(segments));
        let ids = self.lineage_session_ids().into_iter().map(Value::String);
        map.insert(
            "lineage_session_ids".to_owned(),
            Value::Array(ids.collect()),
        );
        map.insert("message_count".to_owned(), Value::from(messages.len()));
        map.insert("messages".to_owned(), Value::Array(messages));
        Value::Object(map)
    }
}

impl serde::Serialize for LineageExport {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

/// Which sessions [`SessionDb::export_jsonl`] writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportFilter {
    /// Only sessions of this source (when `Some` and non-empty).
    pub source: Option<String>,
    /// Only these sessions (when `Some`; an empty list exports none).
    pub session_ids: Option<Vec<String>>,
}

/// What [`SessionDb::export_jsonl`] wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Session lines.
    pub sessions: u64,
    /// Message lines.
    pub messages: u64,
    /// Bytes written, every line included.
    pub bytes: u64,
}

/// How [`SessionDb::import_jsonl`] treats sessions the store already has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Replace an existing session (its columns and all its messages) by the
    /// file's; when false (the default) it is reported and left untouched.
    pub overwrite_existing: bool,
}

/// What [`SessionDb::import_jsonl`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ImportReport {
    /// Sessions written (new ones and replaced ones).
    pub imported: u64,
    /// Existing sessions replaced (only with `overwrite_existing`).
    pub replaced: Vec<String>,
    /// Existing sessions left untouched, with their messages in the file skipped.
    pub skipped_existing: Vec<String>,
    /// Messages written.
    pub messages: u64,
    /// Messages written with a new id because theirs was taken in this store
    /// (their order within the session is kept).
    pub renumbered_messages: u64,
    /// Sessions whose parent is neither in the store nor earlier in the file
    /// (or would close a cycle): imported with `parent_session_id` NULL.
    pub orphaned: Vec<String>,
    /// `(session id, title)` of sessions whose title is held by another
    /// session of the store: imported untitled, so titles stay unique.
    pub title_conflicts: Vec<(String, String)>,
    /// `table.column` of columns in the file that this store does not have;
    /// their values were not imported.
    pub dropped_columns: Vec<String>,
}

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
