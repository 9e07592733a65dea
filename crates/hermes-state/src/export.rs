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

use std::collections::{BTreeSet, HashSet};
use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;

use hermes_state_query::MessagePage;
use hermes_state_query::rows::session_from_row;
use hermes_state_query::values::real;
use hermes_state_schema::SchemaError;
use hermes_state_schema::reconcile::quote_identifier;
use hermes_state_types::{Content, Message, SCHEMA_VERSION, Session, pyjson};
use rusqlite::types::{ToSql, ToSqlOutput, Value as SqlValue, ValueRef};
use rusqlite::{Connection, OptionalExtension, Row, params_from_iter};
use serde_json::{Map, Value};

use crate::db::{SessionDb, now};
use crate::error::{Error, Result, WriteContext};

/// The `format` of the JSONL header line.
pub const EXPORT_FORMAT: &str = "hermes-state-export";
/// The `version` of the JSONL format this library writes and reads.
pub const EXPORT_FORMAT_VERSION: i64 = 1;

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
/// [`SessionExport::to_value`] gives the original's dict: the session's
/// columns, then `last_active` (in [`SessionDb::export_all`] only), then
/// `messages`.
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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

    /// Every session (at most 100 000, of `source` when given and non-empty)
    /// with its last activity and active messages, newest activity first
    /// (`api.md` §11.2, the order of `search_sessions`). Read in one
    /// transaction; everything is held in memory, as in the original: use
    /// [`SessionDb::export_jsonl`] for stores of any size.
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
        conn.execute_batch("BEGIN DEFERRED")
            .context("starting the export snapshot")?;
        let result = write_jsonl(&conn, writer, filter, &mut progress);
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
fn in_read_transaction<T>(
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
const SESSIONS_BY_LAST_ACTIVE: &str =
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
    rows.collect::<Result<_, _>>().context("listing sessions")
}

// ---------------------------------------------------------------------------
// JSONL export

/// The selected sessions, parents before children: by depth in the lineage
/// forest (roots, and sessions whose parent is missing, first), then
/// `started_at`, then id. Sessions on a parent cycle (damaged files) are never
/// reached from a root and come last. `UNION` keeps the recursion finite.
const SESSIONS_IN_LINEAGE_ORDER: &str = "WITH RECURSIVE lineage(id, depth) AS (
    SELECT s.id, 0 FROM sessions s
    WHERE s.parent_session_id IS NULL
       OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id)
    UNION
    SELECT c.id, l.depth + 1 FROM sessions c JOIN lineage l ON c.parent_session_id = l.id
)
SELECT s.* FROM sessions s
LEFT JOIN (SELECT id, MIN(depth) AS depth FROM lineage GROUP BY id) d ON d.id = s.id
WHERE (?1 IS NULL OR s.source = ?1)
  AND (?2 IS NULL OR s.id IN (SELECT value FROM json_each(?2)))
ORDER BY d.depth IS NULL, d.depth, s.started_at, s.id";

const SESSION_MESSAGES: &str = "SELECT * FROM messages WHERE session_id = ?1 ORDER BY id";

fn write_jsonl<W: Write>(
    conn: &Connection,
    writer: W,
    filter: &ExportFilter,
    progress: &mut impl FnMut(u64),
) -> Result<ExportSummary> {
    let mut out = LineWriter {
        inner: BufWriter::with_capacity(64 << 10, writer),
        bytes: 0,
    };
    let schema_version = conn
        .query_row("SELECT MAX(version) FROM schema_version", [], |row| {
            row.get::<_, Option<i64>>(0)
        })
        .ok()
        .flatten()
        .unwrap_or(SCHEMA_VERSION);
    let mut header = Map::new();
    header.insert("format".to_owned(), EXPORT_FORMAT.into());
    header.insert("version".to_owned(), EXPORT_FORMAT_VERSION.into());
    header.insert("schema_version".to_owned(), schema_version.into());
    header.insert("exported_at".to_owned(), float(now()));
    out.line(&header)?;

    let mut sessions = conn
        .prepare(SESSIONS_IN_LINEAGE_ORDER)
        .context("listing sessions to export")?;
    let session_columns = LineColumns::new(sessions.column_names(), None);
    let id_index = sessions
        .column_index("id")
        .context("listing sessions to export")?;
    let mut messages = conn
        .prepare(SESSION_MESSAGES)
        .context("reading messages to export")?;
    let message_columns = LineColumns::new(messages.column_names(), Some("content"));

    let source = filter.source.as_deref().filter(|s| !s.is_empty());
    let ids = filter
        .session_ids
        .as_ref()
        .map(|ids| Value::from(ids.clone()).to_string());
    let mut summary = ExportSummary::default();
    let mut rows = sessions
        .query(rusqlite::params![source, ids])
        .context("listing sessions to export")?;
    while let Some(row) = rows.next().context("listing sessions to export")? {
        out.line(&session_columns.line("session", row)?)?;
        summary.sessions += 1;
        let id = Cell::from(row.get_ref(id_index).context("reading a session id")?);
        let mut message_rows = messages.query([id]).context("reading messages to export")?;
        while let Some(message) = message_rows.next().context("reading messages to export")? {
            out.line(&message_columns.line("message", message)?)?;
            summary.messages += 1;
            if summary.messages.is_multiple_of(PROGRESS_EVERY) {
                progress(summary.messages);
            }
        }
    }
    let mut end = Map::new();
    end.insert("type".to_owned(), "end".into());
    end.insert("sessions".to_owned(), summary.sessions.into());
    end.insert("messages".to_owned(), summary.messages.into());
    out.line(&end)?;
    out.inner
        .flush()
        .map_err(|e| io_error("<export writer>", e))?;
    summary.bytes = out.bytes;
    progress(summary.messages);
    Ok(summary)
}

struct LineWriter<W: Write> {
    inner: BufWriter<W>,
    bytes: u64,
}

impl<W: Write> LineWriter<W> {
    fn line(&mut self, object: &Map<String, Value>) -> Result<()> {
        let mut text = serde_json::to_vec(object)
            .map_err(|e| Error::InvalidInput(format!("encoding an export line: {e}")))?;
        text.push(b'\n');
        self.inner
            .write_all(&text)
            .map_err(|e| io_error("<export writer>", e))?;
        self.bytes += text.len() as u64;
        Ok(())
    }
}

/// The keys of a table's columns in a line, and which column is decoded content.
struct LineColumns {
    keys: Vec<String>,
    content: Option<usize>,
}

impl LineColumns {
    fn new<'a>(names: impl IntoIterator<Item = &'a str>, content: Option<&str>) -> Self {
        let names: Vec<&str> = names.into_iter().collect();
        LineColumns {
            content: content.and_then(|c| names.iter().position(|n| *n == c)),
            keys: names.into_iter().map(column_key).collect(),
        }
    }

    fn line(&self, kind: &str, row: &Row<'_>) -> Result<Map<String, Value>> {
        let mut line = Map::with_capacity(self.keys.len() + 1);
        line.insert("type".to_owned(), kind.into());
        for (index, key) in self.keys.iter().enumerate() {
            let value = row.get_ref(index).context("reading a row to export")?;
            if Some(index) == self.content {
                match decoded_content(value) {
                    Some(decoded) => line.insert(key.clone(), decoded),
                    None => line.insert(format!("${key}"), sql_to_json(value)),
                };
            } else {
                line.insert(key.clone(), sql_to_json(value));
            }
        }
        Ok(line)
    }
}

/// A column's key: its name, or `$` + its name when the name is `type` or
/// starts with `$` (keys starting with `$` always name a column in the plain
/// SQL encoding).
fn column_key(name: &str) -> String {
    if name == "type" || name.starts_with('$') {
        format!("${name}")
    } else {
        name.to_owned()
    }
}

/// A stored value in the plain SQL encoding: NULL, integers, finite reals and
/// UTF-8 text map to their JSON counterparts (reals always with a fraction or
/// an exponent); the rest to a one-key object.
fn sql_to_json(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => match serde_json::Number::from_f64(f) {
            Some(number) => Value::Number(number),
            None => tagged("real", pyjson::float_repr(f)),
        },
        ValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Value::String(text.to_owned()),
            Err(_) => tagged("text_hex", hex(bytes)),
        },
        ValueRef::Blob(bytes) => tagged("blob", hex(bytes)),
    }
}

/// Message content decoded, when that is lossless: NULL → `null`; UTF-8 text
/// → the string, except multimodal content whose JSON re-encodes to exactly
/// the stored text → that array or object. `None`: use the plain encoding.
fn decoded_content(value: ValueRef<'_>) -> Option<Value> {
    match value {
        ValueRef::Null => Some(Value::Null),
        ValueRef::Text(bytes) => {
            let text = std::str::from_utf8(bytes).ok()?;
            if let Some(json) = text.strip_prefix(Content::JSON_PREFIX)
                && let Ok(parsed) = serde_json::from_str::<Value>(json)
                && (parsed.is_array() || parsed.is_object())
                && pyjson::to_string(&parsed) == json
            {
                return Some(parsed);
            }
            Some(Value::String(text.to_owned()))
        }
        _ => None,
    }
}

fn tagged(tag: &str, value: String) -> Value {
    let mut map = Map::new();
    map.insert(tag.to_owned(), Value::String(value));
    Value::Object(map)
}

fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    out
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| {
        char::from(c)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    };
    text.as_bytes()
        .chunks_exact(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

fn io_error(what: &str, source: std::io::Error) -> Error {
    Error::Schema(SchemaError::Io {
        path: PathBuf::from(what),
        source,
    })
}

// ---------------------------------------------------------------------------
// JSONL import

/// The non-empty lines of the file as JSON objects, with their line numbers.
struct JsonLines<R> {
    reader: R,
    buffer: String,
    number: u64,
}

impl<R: BufRead> JsonLines<R> {
    fn new(reader: R) -> Self {
        JsonLines {
            reader,
            buffer: String::new(),
            number: 0,
        }
    }

    fn next(&mut self) -> Result<Option<RawLine>> {
        loop {
            self.buffer.clear();
            let read = self.reader.read_line(&mut self.buffer).map_err(|e| {
                if e.kind() == std::io::ErrorKind::InvalidData {
                    invalid(self.number + 1, "not UTF-8")
                } else {
                    io_error("<import reader>", e)
                }
            })?;
            if read == 0 {
                return Ok(None);
            }
            self.number += 1;
            let text = self.buffer.trim();
            if text.is_empty() {
                continue;
            }
            let object = serde_json::from_str::<Map<String, Value>>(text)
                .map_err(|e| invalid(self.number, &format!("not a JSON object ({e})")))?;
            return Ok(Some(RawLine {
                number: self.number,
                object,
                size: read,
            }));
        }
    }
}

fn invalid(line: u64, why: &str) -> Error {
    Error::InvalidInput(format!("export line {line}: {why}"))
}

/// One non-empty line: its number, its object and its size in bytes.
struct RawLine {
    number: u64,
    object: Map<String, Value>,
    size: usize,
}

fn check_header(line: Option<RawLine>) -> Result<()> {
    let Some(RawLine {
        number,
        object: header,
        ..
    }) = line
    else {
        return Err(Error::InvalidInput("empty export file".to_owned()));
    };
    if header.get("format").and_then(Value::as_str) != Some(EXPORT_FORMAT) {
        return Err(invalid(number, "not a hermes-state export header"));
    }
    match header.get("version").and_then(Value::as_i64) {
        Some(EXPORT_FORMAT_VERSION) => Ok(()),
        _ => Err(invalid(
            number,
            &format!(
                "unsupported export version {} (this library reads version {EXPORT_FORMAT_VERSION})",
                header.get("version").unwrap_or(&Value::Null)
            ),
        )),
    }
}

/// The columns of this store's `sessions` and `messages`.
struct TargetColumns {
    sessions: HashSet<String>,
    messages: HashSet<String>,
}

impl TargetColumns {
    fn load(conn: &Connection) -> Result<Self> {
        let names = |table: &str| -> Result<HashSet<String>> {
            Ok(hermes_state_schema::reconcile::live_columns(conn, table)?
                .into_iter()
                .map(|c| c.name)
                .collect())
        };
        Ok(TargetColumns {
            sessions: names("sessions")?,
            messages: names("messages")?,
        })
    }
}

/// One data line, validated and converted to SQL values.
enum ImportLine {
    Session {
        id: String,
        values: Vec<(String, Cell)>,
    },
    Message {
        /// The exported id, kept when free.
        id: Option<i64>,
        /// Every other column.
        values: Vec<(String, Cell)>,
    },
}

/// Lines read but not written yet.
#[derive(Default)]
struct Batch {
    lines: Vec<ImportLine>,
    sessions: usize,
    messages: usize,
    bytes: usize,
}

impl Batch {
    fn is_full(&self) -> bool {
        self.sessions >= IMPORT_BATCH_SESSIONS
            || self.messages >= IMPORT_BATCH_MESSAGES
            || self.bytes >= IMPORT_BATCH_BYTES
    }
}

/// What the last written line decided for the session being imported.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cursor {
    Idle,
    /// The session exists and is kept: its messages are skipped.
    Skipping,
    /// The session was written; its messages follow.
    Writing {
        id: String,
        /// Created by this import (not replaced).
        created: bool,
        /// Still inserting the exported ids.
        explicit_ids: bool,
        last_id: i64,
    },
}

/// What one committed batch did.
#[derive(Default)]
struct BatchOutcome {
    imported: u64,
    replaced: Vec<String>,
    skipped: Vec<String>,
    messages: u64,
    renumbered: u64,
    orphaned: Vec<String>,
    title_conflicts: Vec<(String, String)>,
}

struct Import<'a> {
    db: &'a SessionDb,
    overwrite: bool,
    /// The cursor after the last committed batch.
    cursor: Cursor,
    report: ImportReport,
    /// A session created by this import whose messages are partly committed.
    partial: Option<String>,
    dropped: BTreeSet<String>,
}

impl Import<'_> {
    fn run<R: BufRead>(
        &mut self,
        lines: &mut JsonLines<R>,
        targets: &TargetColumns,
        progress: &mut impl FnMut(u64),
    ) -> Result<()> {
        let mut batch = Batch::default();
        let mut current: Option<String> = None;
        let (mut sessions_seen, mut messages_seen) = (0_u64, 0_u64);
        loop {
            let Some(RawLine {
                number,
                mut object,
                size,
            }) = lines.next()?
            else {
                return Err(Error::InvalidInput(
                    "truncated export: the end line is missing".to_owned(),
                ));
            };
            let kind = match object.remove("type") {
                Some(Value::String(kind)) => kind,
                _ => return Err(invalid(number, "no \"type\"")),
            };
            match kind.as_str() {
                "session" => {
                    let line = self.session_line(number, object, targets)?;
                    if batch.is_full() {
                        self.commit(std::mem::take(&mut batch), true, progress)?;
                    }
                    if let ImportLine::Session { id, .. } = &line {
                        current = Some(id.clone());
                    }
                    batch.lines.push(line);
                    batch.sessions += 1;
                    batch.bytes += size;
                    sessions_seen += 1;
                }
                "message" => {
                    let line = self.message_line(number, object, targets, current.as_deref())?;
                    batch.lines.push(line);
                    batch.messages += 1;
                    batch.bytes += size;
                    messages_seen += 1;
                    if batch.messages >= 2 * IMPORT_BATCH_MESSAGES
                        || batch.bytes >= 2 * IMPORT_BATCH_BYTES
                    {
                        // One very large session: commit it in parts.
                        self.commit(std::mem::take(&mut batch), false, progress)?;
                    }
                }
                "end" => {
                    let count = |key: &str| object.get(key).and_then(Value::as_u64);
                    if count("sessions") != Some(sessions_seen)
                        || count("messages") != Some(messages_seen)
                    {
                        return Err(invalid(
                            number,
                            &format!(
                                "the end line counts do not match the file ({sessions_seen} sessions, {messages_seen} messages)"
                            ),
                        ));
                    }
                    if let Some(extra) = lines.next()? {
                        return Err(invalid(extra.number, "data after the end line"));
                    }
                    return self.commit(batch, true, progress);
                }
                other => return Err(invalid(number, &format!("unknown line type {other:?}"))),
            }
        }
    }

    fn session_line(
        &mut self,
        number: u64,
        object: Map<String, Value>,
        targets: &TargetColumns,
    ) -> Result<ImportLine> {
        let values = self.columns(number, object, "sessions", &targets.sessions)?;
        let id = match values.iter().find(|(column, _)| column == "id") {
            Some((_, Cell::Sql(SqlValue::Text(id)))) => id.clone(),
            _ => return Err(invalid(number, "a session line needs a text \"id\"")),
        };
        Ok(ImportLine::Session { id, values })
    }

    fn message_line(
        &mut self,
        number: u64,
        object: Map<String, Value>,
        targets: &TargetColumns,
        current: Option<&str>,
    ) -> Result<ImportLine> {
        let mut values = self.columns(number, object, "messages", &targets.messages)?;
        match values.iter().find(|(column, _)| column == "session_id") {
            Some((_, Cell::Sql(SqlValue::Text(session)))) if Some(session.as_str()) == current => {}
            _ => {
                return Err(invalid(
                    number,
                    "a message line must follow its session's line and name it in \"session_id\"",
                ));
            }
        }
        let id = match values.iter().position(|(column, _)| column == "id") {
            Some(index) => match values.remove(index).1 {
                Cell::Sql(SqlValue::Integer(id)) => Some(id),
                Cell::Sql(SqlValue::Null) => None,
                _ => return Err(invalid(number, "a message \"id\" must be an integer")),
            },
            None => None,
        };
        Ok(ImportLine::Message { id, values })
    }

    /// The line's columns that this store has, as SQL values.
    fn columns(
        &mut self,
        number: u64,
        object: Map<String, Value>,
        table: &str,
        known: &HashSet<String>,
    ) -> Result<Vec<(String, Cell)>> {
        let mut values = Vec::with_capacity(object.len());
        for (key, value) in object {
            let (column, plain) = match key.strip_prefix('$') {
                Some(column) => (column.to_owned(), true),
                None => (key, false),
            };
            let converted = if table == "messages" && column == "content" && !plain {
                content_to_sql(value)
            } else {
                json_to_sql(&value)
            }
            .map_err(|why| invalid(number, &format!("column {column:?}: {why}")))?;
            if known.contains(&column) {
                values.push((column, converted));
            } else {
                self.dropped.insert(format!("{table}.{column}"));
            }
        }
        Ok(values)
    }

    /// Writes a batch in one transaction; `at_boundary` when it ends with a
    /// session's last message (or the file's).
    fn commit(
        &mut self,
        batch: Batch,
        at_boundary: bool,
        progress: &mut impl FnMut(u64),
    ) -> Result<()> {
        if batch.lines.is_empty() {
            return Ok(());
        }
        let overwrite = self.overwrite;
        let start = self.cursor.clone();
        let (cursor, outcome) = self.db.write("importing sessions", |conn| {
            let mut cursor = start.clone();
            let mut outcome = BatchOutcome::default();
            for line in &batch.lines {
                apply_line(conn, line, overwrite, &mut cursor, &mut outcome)?;
            }
            Ok((cursor, outcome))
        })?;
        self.partial = match &cursor {
            Cursor::Writing {
                id, created: true, ..
            } if !at_boundary => Some(id.clone()),
            _ => None,
        };
        self.cursor = cursor;
        let report = &mut self.report;
        report.imported += outcome.imported;
        report.replaced.extend(outcome.replaced);
        report.skipped_existing.extend(outcome.skipped);
        report.messages += outcome.messages;
        report.renumbered_messages += outcome.renumbered;
        report.orphaned.extend(outcome.orphaned);
        report.title_conflicts.extend(outcome.title_conflicts);
        progress(report.messages);
        Ok(())
    }

    /// After a failure: removes a session this import created but could not
    /// finish, so that no half-imported session stays. Best effort.
    fn remove_partial_session(&self) {
        let Some(id) = &self.partial else { return };
        let _ = self.db.write("removing a partly imported session", |conn| {
            conn.execute(
                "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?1",
                [id],
            )
            .context("removing a partly imported session")?;
            conn.execute("DELETE FROM messages WHERE session_id = ?1", [id])
                .context("removing a partly imported session")?;
            conn.execute("DELETE FROM sessions WHERE id = ?1", [id])
                .context("removing a partly imported session")?;
            Ok(())
        });
    }
}

/// A value to bind: an SQL value, or text that is not valid UTF-8 (bound as
/// TEXT byte for byte, as a damaged file held it).
#[derive(Debug, Clone, PartialEq)]
enum Cell {
    Sql(SqlValue),
    RawText(Vec<u8>),
}

impl From<ValueRef<'_>> for Cell {
    fn from(value: ValueRef<'_>) -> Self {
        match value {
            ValueRef::Null => Cell::Sql(SqlValue::Null),
            ValueRef::Integer(i) => Cell::Sql(SqlValue::Integer(i)),
            ValueRef::Real(f) => Cell::Sql(SqlValue::Real(f)),
            ValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => Cell::Sql(SqlValue::Text(text.to_owned())),
                Err(_) => Cell::RawText(bytes.to_vec()),
            },
            ValueRef::Blob(bytes) => Cell::Sql(SqlValue::Blob(bytes.to_vec())),
        }
    }
}

impl ToSql for Cell {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Cell::Sql(value) => value.to_sql(),
            Cell::RawText(bytes) => Ok(ToSqlOutput::Borrowed(ValueRef::Text(bytes))),
        }
    }
}

/// A value in the plain SQL encoding back to SQL.
fn json_to_sql(value: &Value) -> std::result::Result<Cell, String> {
    match value {
        Value::Null => Ok(Cell::Sql(SqlValue::Null)),
        Value::String(text) => Ok(Cell::Sql(SqlValue::Text(text.clone()))),
        Value::Number(number) => {
            if let Some(i) = number.as_i64() {
                Ok(Cell::Sql(SqlValue::Integer(i)))
            } else if number.is_f64() {
                number
                    .as_f64()
                    .map(|f| Cell::Sql(SqlValue::Real(f)))
                    .ok_or_else(|| "not a number".to_owned())
            } else {
                Err(format!("integer {number} out of range"))
            }
        }
        Value::Object(map) if map.len() == 1 => {
            let (tag, inner) = map.iter().next().ok_or("empty object")?;
            let text = inner.as_str().ok_or("a tagged value must be a string")?;
            match tag.as_str() {
                "blob" => unhex(text)
                    .map(|bytes| Cell::Sql(SqlValue::Blob(bytes)))
                    .ok_or_else(|| "bad hex".to_owned()),
                "text_hex" => unhex(text)
                    .map(Cell::RawText)
                    .ok_or_else(|| "bad hex".to_owned()),
                "real" => match text {
                    "Infinity" => Ok(Cell::Sql(SqlValue::Real(f64::INFINITY))),
                    "-Infinity" => Ok(Cell::Sql(SqlValue::Real(f64::NEG_INFINITY))),
                    _ => Err(format!("unknown real {text:?}")),
                },
                _ => Err(format!("unknown tag {tag:?}")),
            }
        }
        _ => Err("not a SQL value".to_owned()),
    }
}

/// Decoded content back to what the store holds: text as is, an array or an
/// object as `"\x00json:"` + Python-compatible JSON.
fn content_to_sql(value: Value) -> std::result::Result<Cell, String> {
    match value {
        Value::Null => Ok(Cell::Sql(SqlValue::Null)),
        Value::String(text) => Ok(Cell::Sql(SqlValue::Text(text))),
        structured @ (Value::Array(_) | Value::Object(_)) => Ok(Cell::Sql(SqlValue::Text(
            format!("{}{}", Content::JSON_PREFIX, pyjson::to_string(&structured)),
        ))),
        _ => Err("decoded content must be a string, an array, an object or null".to_owned()),
    }
}

fn apply_line(
    conn: &Connection,
    line: &ImportLine,
    overwrite: bool,
    cursor: &mut Cursor,
    outcome: &mut BatchOutcome,
) -> Result<()> {
    match line {
        ImportLine::Session { id, values } => {
            let exists = session_exists(conn, &Cell::Sql(SqlValue::Text(id.clone())))?;
            if exists && !overwrite {
                outcome.skipped.push(id.clone());
                *cursor = Cursor::Skipping;
                return Ok(());
            }
            if exists {
                conn.execute("DELETE FROM messages WHERE session_id = ?1", [id])
                    .context("replacing a session's messages")?;
                outcome.replaced.push(id.clone());
            }
            let mut values = values.clone();
            for (column, value) in &mut values {
                match column.as_str() {
                    "parent_session_id"
                        if *value != Cell::Sql(SqlValue::Null)
                            && (!session_exists(conn, value)?
                                || closes_cycle(conn, id, value)?) =>
                    {
                        *value = Cell::Sql(SqlValue::Null);
                        outcome.orphaned.push(id.clone());
                    }
                    "title" => {
                        if let Cell::Sql(SqlValue::Text(title)) = value
                            && title_holder(conn, title, id)?.is_some()
                        {
                            outcome.title_conflicts.push((id.clone(), title.clone()));
                            *value = Cell::Sql(SqlValue::Null);
                        }
                    }
                    _ => {}
                }
            }
            upsert_session(conn, &values)?;
            outcome.imported += 1;
            *cursor = Cursor::Writing {
                id: id.clone(),
                created: !exists,
                explicit_ids: true,
                last_id: i64::MIN,
            };
            Ok(())
        }
        ImportLine::Message { id, values } => {
            let Cursor::Writing {
                explicit_ids,
                last_id,
                ..
            } = cursor
            else {
                return Ok(());
            };
            let keep = *explicit_ids
                && match id {
                    Some(id) => *id > *last_id && !message_exists(conn, *id)?,
                    None => false,
                };
            if !keep {
                *explicit_ids = false;
                if id.is_some() {
                    outcome.renumbered += 1;
                }
            }
            *last_id = insert_message(conn, keep.then_some(*id).flatten(), values)?;
            outcome.messages += 1;
            Ok(())
        }
    }
}

fn session_exists(conn: &Connection, id: &Cell) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)")
        .and_then(|mut stmt| stmt.query_row([id], |row| row.get(0)))
        .context("checking a session")
}

fn message_exists(conn: &Connection, id: i64) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM messages WHERE id = ?1)")
        .and_then(|mut stmt| stmt.query_row([id], |row| row.get(0)))
        .context("checking a message id")
}

/// Whether linking `id` under `parent` would close a parent cycle: `id` is
/// `parent` or one of its ancestors in the store.
fn closes_cycle(conn: &Connection, id: &str, parent: &Cell) -> Result<bool> {
    let mut seen: HashSet<String> = HashSet::new();
    let Cell::Sql(mut current) = parent.clone() else {
        return Ok(false);
    };
    while let SqlValue::Text(node) = current {
        if node == id {
            return Ok(true);
        }
        if !seen.insert(node.clone()) {
            return Ok(false);
        }
        current = conn
            .prepare_cached("SELECT parent_session_id FROM sessions WHERE id = ?1")
            .and_then(|mut stmt| stmt.query_row([&node], |row| row.get(0)).optional())
            .context("walking a lineage")?
            .unwrap_or(SqlValue::Null);
    }
    Ok(false)
}

fn title_holder(conn: &Connection, title: &str, id: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT id FROM sessions WHERE title = ?1 AND id <> ?2 LIMIT 1")
        .and_then(|mut stmt| {
            stmt.query_row([title, id], |row| row.get::<_, Option<String>>(0))
                .optional()
        })
        .map(Option::flatten)
        .context("checking a title")
}

/// `INSERT … ON CONFLICT(id) DO UPDATE` of every given column.
fn upsert_session(conn: &Connection, values: &[(String, Cell)]) -> Result<()> {
    let columns: Vec<String> = values.iter().map(|(c, _)| quote_identifier(c)).collect();
    let placeholders: Vec<String> = (1..=values.len()).map(|i| format!("?{i}")).collect();
    let updates: Vec<String> = values
        .iter()
        .zip(&columns)
        .filter(|((column, _), _)| column != "id")
        .map(|(_, quoted)| format!("{quoted} = excluded.{quoted}"))
        .collect();
    let on_conflict = if updates.is_empty() {
        "DO NOTHING".to_owned()
    } else {
        format!("DO UPDATE SET {}", updates.join(", "))
    };
    let sql = format!(
        "INSERT INTO sessions ({}) VALUES ({}) ON CONFLICT(id) {on_conflict}",
        columns.join(", "),
        placeholders.join(", ")
    );
    conn.prepare_cached(&sql)
        .and_then(|mut stmt| stmt.execute(params_from_iter(values.iter().map(|(_, v)| v))))
        .context("importing a session")?;
    Ok(())
}

/// Inserts a message row (with `id` when given); returns its id.
fn insert_message(conn: &Connection, id: Option<i64>, values: &[(String, Cell)]) -> Result<i64> {
    let mut columns: Vec<String> = values.iter().map(|(c, _)| quote_identifier(c)).collect();
    let mut params: Vec<&Cell> = values.iter().map(|(_, v)| v).collect();
    let id_value = id.map(|id| Cell::Sql(SqlValue::Integer(id)));
    if let Some(id_value) = &id_value {
        columns.push("\"id\"".to_owned());
        params.push(id_value);
    }
    let placeholders: Vec<String> = (1..=params.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO messages ({}) VALUES ({})",
        columns.join(", "),
        placeholders.join(", ")
    );
    conn.prepare_cached(&sql)
        .and_then(|mut stmt| stmt.execute(params_from_iter(params)))
        .context("importing a message")?;
    Ok(conn.last_insert_rowid())
}
