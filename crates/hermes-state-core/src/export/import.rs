//! Reading a JSONL export (`docs/EXPORT-FORMAT.md`, "Import") into a store,
//! written once over [`ImportSink`]: the lines are read, checked and turned
//! into rows here; a backend only writes them, by the format's rules, in
//! the transactions [`ImportSink::batch_limits`] asks for.

use std::collections::{BTreeSet, HashSet};
use std::io::BufRead;

use hermes_state_types::stored::{StoredValue, StoredValueRef};
use serde_json::{Map, Value};

use super::lines::{JsonLines, RawLine, check_header, invalid};
use super::plain::{Cell, content_to_sql, json_to_sql};
use super::{ImportOptions, ImportReport};
use crate::error::{Error, Result};

/// The columns of the target store's `sessions` and `messages`: a line's
/// other columns are left out and reported in `dropped_columns`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetColumns {
    /// The columns of `sessions`.
    pub sessions: HashSet<String>,
    /// The columns of `messages`.
    pub messages: HashSet<String>,
}

/// One data line, checked, as the rows a store writes.
#[derive(Debug, Clone, PartialEq)]
pub enum ImportRow {
    /// A session line: its id and every column the store has (`id` included).
    Session {
        /// The line's number in the file, for errors.
        line: u64,
        /// The session's id.
        id: String,
        /// `(column, value)` pairs.
        values: Vec<(String, Cell)>,
    },
    /// A message line of the session before it.
    Message {
        /// The line's number in the file, for errors.
        line: u64,
        /// The exported id, kept when free.
        id: Option<i64>,
        /// Every other column the store has.
        values: Vec<(String, Cell)>,
    },
}

/// What writing some rows did ([`ImportReport`] without the columns
/// dropped while reading).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportOutcome {
    /// Sessions written (new and replaced).
    pub imported: u64,
    /// Existing sessions replaced.
    pub replaced: Vec<String>,
    /// Existing sessions left untouched, their messages skipped.
    pub skipped: Vec<String>,
    /// Messages written.
    pub messages: u64,
    /// Messages written under a new id because theirs was taken.
    pub renumbered: u64,
    /// Sessions written without their missing (or cycle-closing) parent.
    pub orphaned: Vec<String>,
    /// `(session, title)` written untitled because the title is taken.
    pub title_conflicts: Vec<(String, String)>,
}

/// How much one transaction of an import holds at most, for a store whose
/// writers must not wait long (SQLite's one write lock). A batch is cut
/// between sessions once it is full, and inside a session at twice the
/// messages or bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchLimits {
    /// Sessions per transaction.
    pub sessions: usize,
    /// Messages per transaction, about.
    pub messages: usize,
    /// Bytes of lines per transaction, about.
    pub bytes: usize,
}

/// Where an import writes: a store, in transactions.
///
/// [`ImportSink::write`] applies the rules of writing with [`write_rows`]
/// over its transaction's [`ImportWriter`], since they read the store
/// inside the transaction; how rows are cut into transactions, and what a
/// failure leaves, is the backend's (SQLite's one write lock wants short
/// ones; PostgreSQL writes a file all or nothing).
pub trait ImportSink {
    /// Called once the header is accepted, before any row: refuses a store
    /// that cannot be written ([`Error::ReadOnly`]) and names the columns
    /// it has.
    fn begin(&mut self) -> Result<TargetColumns>;
    /// The transactions' size; `None` writes the whole file in one
    /// transaction (all or nothing, the file's rows held in memory).
    fn batch_limits(&self) -> Option<BatchLimits>;
    /// Writes `rows` in one transaction, in order. `at_boundary` when they
    /// end with a session's last message (or the file's); a later batch
    /// continues the session of the last row otherwise.
    fn write(
        &mut self,
        rows: &[ImportRow],
        options: &ImportOptions,
        at_boundary: bool,
    ) -> Result<ImportOutcome>;
    /// After a failure: undoes what a complete file would not have left
    /// (a new session whose messages were cut short). Best effort.
    fn abandon(&mut self) {}
}

/// One transaction of an import as the format's rules use it
/// (`docs/EXPORT-FORMAT.md`, "Import", 3–4): a backend's statements, so
/// that [`write_rows`] applies the rules alike on every backend.
pub trait ImportWriter {
    /// The backend's error.
    type Error;
    /// Whether a session with this id exists (any stored value: a damaged
    /// file's parent may be a number).
    fn session_exists(&mut self, id: StoredValueRef<'_>) -> Result<bool, Self::Error>;
    /// A session's parent; `None` for a root or an unknown session.
    fn parent_of(&mut self, id: &str) -> Result<Option<String>, Self::Error>;
    /// Whether a session other than `id` holds `title`.
    fn title_taken(&mut self, title: &str, id: &str) -> Result<bool, Self::Error>;
    /// Deletes a session's messages, before the session is replaced.
    fn delete_messages(&mut self, session_id: &str) -> Result<(), Self::Error>;
    /// Writes a session row: inserted, or updated in place (every given
    /// column) when its id exists, so children pointing at it stay valid.
    fn upsert_session(&mut self, line: u64, values: &[(String, Cell)]) -> Result<(), Self::Error>;
    /// Inserts a message under `id` when that id is free; `false`, and
    /// nothing written, when it is taken.
    fn insert_message_as(
        &mut self,
        line: u64,
        id: i64,
        values: &[(String, Cell)],
    ) -> Result<bool, Self::Error>;
    /// Inserts a message under a new id, larger than every id in the
    /// table; returns that id.
    fn insert_message(&mut self, line: u64, values: &[(String, Cell)]) -> Result<i64, Self::Error>;
}

/// Where the walk through an import's rows stands, carried from one
/// transaction to the next.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ImportCursor {
    /// Before the first session.
    #[default]
    Idle,
    /// The session exists and is kept: its messages are skipped.
    Skipping,
    /// The session was written; its messages follow.
    Writing {
        /// The session.
        id: String,
        /// Created by this import (not replaced).
        created: bool,
        /// Still inserting the exported ids.
        explicit_ids: bool,
        /// The id of the session's last message written.
        last_id: i64,
    },
}

/// Writes `rows` through `writer` by the format's rules (`docs/EXPORT-FORMAT.md`,
/// "Import", 3–4), continuing from `cursor`: an existing session is skipped
/// (or, with `overwrite`, replaced: its messages deleted, its row updated);
/// a missing parent, or one that would close a cycle, is dropped
/// (`orphaned`); a title another session holds is dropped
/// (`title_conflicts`); a message keeps its id while that id is free and
/// above the session's previous one, and from the first that is not on,
/// the session's messages get new ids (so its order is kept).
pub fn write_rows<W: ImportWriter + ?Sized>(
    writer: &mut W,
    rows: &[ImportRow],
    overwrite: bool,
    cursor: &mut ImportCursor,
) -> Result<ImportOutcome, W::Error> {
    let mut outcome = ImportOutcome::default();
    for row in rows {
        match row {
            ImportRow::Session { line, id, values } => {
                let exists = writer.session_exists(StoredValueRef::Text(id.as_bytes()))?;
                if exists && !overwrite {
                    outcome.skipped.push(id.clone());
                    *cursor = ImportCursor::Skipping;
                    continue;
                }
                if exists {
                    writer.delete_messages(id)?;
                    outcome.replaced.push(id.clone());
                }
                let mut values = values.clone();
                for (column, value) in &mut values {
                    let dropped = match column.as_str() {
                        "parent_session_id" if *value != Cell::Stored(StoredValue::Null) => {
                            let orphan = !writer.session_exists(value.as_ref())?
                                || closes_cycle(writer, id, value.as_text())?;
                            if orphan {
                                outcome.orphaned.push(id.clone());
                            }
                            orphan
                        }
                        "title" => match value.as_text() {
                            Some(title) if writer.title_taken(title, id)? => {
                                let conflict = (id.clone(), title.to_owned());
                                outcome.title_conflicts.push(conflict);
                                true
                            }
                            _ => false,
                        },
                        _ => false,
                    };
                    if dropped {
                        *value = Cell::Stored(StoredValue::Null);
                    }
                }
                writer.upsert_session(*line, &values)?;
                outcome.imported += 1;
                *cursor = ImportCursor::Writing {
                    id: id.clone(),
                    created: !exists,
                    explicit_ids: true,
                    last_id: i64::MIN,
                };
            }
            ImportRow::Message { line, id, values } => {
                let ImportCursor::Writing {
                    explicit_ids,
                    last_id,
                    ..
                } = cursor
                else {
                    continue;
                };
                let kept = match *id {
                    Some(id) if *explicit_ids && id > *last_id => {
                        writer.insert_message_as(*line, id, values)?.then_some(id)
                    }
                    _ => None,
                };
                *last_id = match kept {
                    Some(kept) => kept,
                    None => {
                        *explicit_ids = false;
                        if id.is_some() {
                            outcome.renumbered += 1;
                        }
                        writer.insert_message(*line, values)?
                    }
                };
                outcome.messages += 1;
            }
        }
    }
    Ok(outcome)
}

/// Whether linking `id` under `parent` would close a parent cycle: `id` is
/// `parent` or one of its ancestors in the store.
fn closes_cycle<W: ImportWriter + ?Sized>(
    writer: &mut W,
    id: &str,
    parent: Option<&str>,
) -> Result<bool, W::Error> {
    let mut seen = HashSet::new();
    let mut current = parent.map(str::to_owned);
    while let Some(node) = current {
        if node == id {
            return Ok(true);
        }
        if !seen.insert(node.clone()) {
            return Ok(false);
        }
        current = writer.parent_of(&node)?;
    }
    Ok(false)
}

/// Imports a JSONL export into `sink` (`docs/EXPORT-FORMAT.md`, "Import").
///
/// The header is checked before [`ImportSink::begin`], so another format or
/// version fails with [`Error::InvalidInput`] and nothing is written. A
/// malformed line, a truncated file (no end line, counts that do not match
/// it) or a failed write stop the import with an error; batches written
/// before stay. `progress` gets the number of messages written after each
/// transaction.
pub fn import_jsonl<R: BufRead, K: ImportSink + ?Sized>(
    sink: &mut K,
    reader: R,
    options: &ImportOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<ImportReport> {
    let mut lines = JsonLines::new(reader);
    check_header(lines.next_line()?)?;
    let targets = sink.begin()?;
    let mut import = Import {
        targets,
        limits: sink.batch_limits(),
        report: ImportReport::default(),
        dropped: BTreeSet::new(),
    };
    match import.run(sink, &mut lines, options, progress) {
        Ok(()) => {
            import.report.dropped_columns = import.dropped.into_iter().collect();
            Ok(import.report)
        }
        Err(error) => {
            sink.abandon();
            Err(error)
        }
    }
}

/// Rows read but not written yet.
#[derive(Default)]
struct Batch {
    rows: Vec<ImportRow>,
    sessions: usize,
    messages: usize,
    bytes: usize,
}

struct Import {
    targets: TargetColumns,
    limits: Option<BatchLimits>,
    report: ImportReport,
    dropped: BTreeSet<String>,
}

impl Import {
    fn run<R: BufRead, K: ImportSink + ?Sized>(
        &mut self,
        sink: &mut K,
        lines: &mut JsonLines<R>,
        options: &ImportOptions,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        let mut batch = Batch::default();
        let mut current: Option<String> = None;
        let (mut sessions_seen, mut messages_seen) = (0_u64, 0_u64);
        loop {
            let Some(RawLine {
                number,
                mut object,
                size,
            }) = lines.next_line()?
            else {
                return Err(Error::InvalidInput(
                    "truncated export: the end line is missing".to_owned(),
                ));
            };
            // Removed in place: the row keeps the line's column order.
            let kind = match object.shift_remove("type") {
                Some(Value::String(kind)) => kind,
                _ => return Err(invalid(number, "no \"type\"")),
            };
            match kind.as_str() {
                "session" => {
                    let row = self.session_row(number, object)?;
                    let full = self.limits.is_some_and(|limits| {
                        batch.sessions >= limits.sessions
                            || batch.messages >= limits.messages
                            || batch.bytes >= limits.bytes
                    });
                    if full {
                        self.write(sink, std::mem::take(&mut batch), options, true, progress)?;
                    }
                    if let ImportRow::Session { id, .. } = &row {
                        current = Some(id.clone());
                    }
                    batch.rows.push(row);
                    batch.sessions += 1;
                    batch.bytes += size;
                    sessions_seen += 1;
                }
                "message" => {
                    let row = self.message_row(number, object, current.as_deref())?;
                    batch.rows.push(row);
                    batch.messages += 1;
                    batch.bytes += size;
                    messages_seen += 1;
                    let huge = self.limits.is_some_and(|limits| {
                        batch.messages >= limits.messages.saturating_mul(2)
                            || batch.bytes >= limits.bytes.saturating_mul(2)
                    });
                    if huge {
                        // One very large session: written in parts.
                        self.write(sink, std::mem::take(&mut batch), options, false, progress)?;
                    }
                }
                "end" => {
                    check_end(lines, number, &object, sessions_seen, messages_seen)?;
                    return self.write(sink, batch, options, true, progress);
                }
                other => return Err(invalid(number, &format!("unknown line type {other:?}"))),
            }
        }
    }

    fn write<K: ImportSink + ?Sized>(
        &mut self,
        sink: &mut K,
        batch: Batch,
        options: &ImportOptions,
        at_boundary: bool,
        progress: &mut dyn FnMut(u64),
    ) -> Result<()> {
        if batch.rows.is_empty() {
            return Ok(());
        }
        let outcome = sink.write(&batch.rows, options, at_boundary)?;
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

    /// A session line's columns that this store has (the others noted in
    /// `dropped`), checked.
    fn session_row(&mut self, number: u64, object: Map<String, Value>) -> Result<ImportRow> {
        let values = self.columns(number, object, "sessions")?;
        let Some(id) = values
            .iter()
            .find(|(column, _)| column == "id")
            .and_then(|(_, cell)| cell.as_text())
            .map(str::to_owned)
        else {
            return Err(invalid(number, "a session line needs a text \"id\""));
        };
        Ok(ImportRow::Session {
            line: number,
            id,
            values,
        })
    }

    /// A message line of the session `current`, checked; its id apart.
    fn message_row(
        &mut self,
        number: u64,
        object: Map<String, Value>,
        current: Option<&str>,
    ) -> Result<ImportRow> {
        let mut values = self.columns(number, object, "messages")?;
        let session = values.iter().find(|(column, _)| column == "session_id");
        if session
            .and_then(|(_, cell)| cell.as_text())
            .is_none_or(|s| Some(s) != current)
        {
            return Err(invalid(
                number,
                "a message line must follow its session's line and name it in \"session_id\"",
            ));
        }
        let id = match values.iter().position(|(column, _)| column == "id") {
            Some(index) => match values.remove(index).1 {
                Cell::Stored(StoredValue::Integer(id)) => Some(id),
                Cell::Stored(StoredValue::Null) => None,
                _ => return Err(invalid(number, "a message \"id\" must be an integer")),
            },
            None => None,
        };
        Ok(ImportRow::Message {
            line: number,
            id,
            values,
        })
    }

    /// The line's columns that this store has, as values to store.
    fn columns(
        &mut self,
        number: u64,
        object: Map<String, Value>,
        table: &str,
    ) -> Result<Vec<(String, Cell)>> {
        let known = if table == "messages" {
            &self.targets.messages
        } else {
            &self.targets.sessions
        };
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
}

/// The end line's counts must match the lines read, and nothing may follow it.
fn check_end<R: BufRead>(
    lines: &mut JsonLines<R>,
    number: u64,
    object: &Map<String, Value>,
    sessions_seen: u64,
    messages_seen: u64,
) -> Result<()> {
    let count = |key: &str| object.get(key).and_then(Value::as_u64);
    if count("sessions") != Some(sessions_seen) || count("messages") != Some(messages_seen) {
        return Err(invalid(
            number,
            &format!(
                "the end line counts do not match the file ({sessions_seen} sessions, {messages_seen} messages)"
            ),
        ));
    }
    if let Some(extra) = lines.next_line()? {
        return Err(invalid(extra.number, "data after the end line"));
    }
    Ok(())
}
