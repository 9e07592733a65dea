//! The shapes of export and import: the original's `export_session` /
//! `export_all` / `export_session_lineage` values, the parts an export walk
//! hands out one at a time, and the options and reports of the streaming
//! JSONL format (`docs/EXPORT-FORMAT.md`). Both backends produce and accept
//! exactly these, so an export from one imports into the other.
//!
//! The codecs are here too, written once over plain values: the lines of
//! the JSONL format and their plain SQL encoding ([`LineColumns`],
//! [`sql_to_json`], [`JsonLines`]), every export over a backend's read
//! snapshot ([`ExportSource`]: [`export_jsonl`], [`export_all_each`], …)
//! and the import over a backend's writer ([`ImportSink`]:
//! [`import_jsonl`]), and the original's JSON document written as a walk
//! hands it over ([`OriginalJsonWriter`]; its import is
//! [`crate::cleanup::original_json_to_jsonl`]). A backend reads and writes
//! rows; what a file says is decided here alone.

mod import;
mod lines;
mod original_json;
mod plain;
mod source;

pub use import::{
    BatchLimits, ImportCursor, ImportOutcome, ImportRow, ImportSink, ImportWriter, TargetColumns,
    import_jsonl, write_rows,
};
pub use lines::{
    JsonLines, LineColumns, LineWriter, RawLine, StreamError, check_header, header_line, invalid,
};
pub use original_json::OriginalJsonWriter;
pub use plain::{Cell, content_to_sql, json_to_sql, sql_to_json};
pub use source::{
    ExportSource, PROGRESS_EVERY, export_all, export_all_each, export_all_parts, export_jsonl,
    export_session, export_session_lineage, export_session_parts, walk_messages,
};

use hermes_state_types::{Message, Session};
use serde_json::{Map, Value};

/// The `format` of the JSONL header line.
pub const EXPORT_FORMAT: &str = "hermes-state-export";
/// The `version` of the JSONL format this library writes and reads.
pub const EXPORT_FORMAT_VERSION: i64 = 1;

/// The longest line an import reads, in bytes (64 MiB): one session or one
/// message of the JSONL format, its longest content included, with room to
/// spare; a longer line is refused as [`ErrorKind::InvalidInput`](hermes_state_types::ErrorKind::InvalidInput)
/// naming its number, never read into memory whole.
pub const IMPORT_LINE_LIMIT: usize = 64 << 20;

/// One session as the original's `export_session` / `export_all` return it.
///
/// It serialises (and [`SessionExport::to_value`] gives) the original's
/// dict: the session's columns, then `last_active` (in
/// `export_all` only), then `messages`.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionExport {
    /// The session row.
    pub session: Session,
    /// The newest message's timestamp, else `started_at`; `Some` only in
    /// `export_all`, as in the original.
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
/// `export_session` gives it.
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

/// Which sessions `export_jsonl` writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportFilter {
    /// Only sessions of this source (when `Some` and non-empty).
    pub source: Option<String>,
    /// Only these sessions (when `Some`; an empty list exports none).
    pub session_ids: Option<Vec<String>>,
}

/// What `export_jsonl` (or an [`OriginalJsonWriter`]) wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Sessions.
    pub sessions: u64,
    /// Messages.
    pub messages: u64,
    /// Bytes written, every line included.
    pub bytes: u64,
}

/// How `import_jsonl` treats sessions the store already has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportOptions {
    /// Replace an existing session (its columns and all its messages) by the
    /// file's; when false (the default) it is reported and left untouched.
    pub overwrite_existing: bool,
}

/// What `import_jsonl` did.
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

/// One part of an export walk.
#[derive(Debug, Clone, PartialEq)]
#[expect(
    clippy::large_enum_variant,
    reason = "each part is moved once into the caller's callback; boxing would allocate once per message"
)]
pub enum ExportPart {
    /// A session starts: its row and `last_active`, `messages` empty.
    Session(SessionExport),
    /// One of its active messages, in id order.
    Message(Message),
    /// The session's messages are done.
    SessionEnd,
}

/// A float as JSON; NaN and infinities (which JSON cannot hold) as `null`.
fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}
