//! Reading a JSONL export (`docs/EXPORT-FORMAT.md`, "Import") into a store,
//! written once over [`ImportSink`]: the lines are read, checked and turned
//! into rows here; a backend only writes them, by the format's rules, in
//! the transactions [`ImportSink::batch_limits`] asks for.

use std::collections::{BTreeSet, HashSet};
use std::io::BufRead;

use hermes_state_types::stored::StoredValue;
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

impl TargetColumns {
    /// The two tables' column names.
    pub fn from_names(
        sessions: impl IntoIterator<Item = String>,
        messages: impl IntoIterator<Item = String>,
    ) -> Self {
        TargetColumns {
            sessions: sessions.into_iter().collect(),
            messages: messages.into_iter().collect(),
        }
    }
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
/// The rules of writing (`docs/EXPORT-FORMAT.md`, "Import", 3–4: existing
/// sessions, parents, titles, message ids) are the backend's to apply in
/// [`ImportSink::write`], since they read the store inside the transaction.
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
