//! The lines of the JSONL format (`docs/EXPORT-FORMAT.md`): the header and
//! end lines, a row as a line, and the bounded line reader. Written once
//! over plain values, so both backends write the same bytes for the same
//! store and refuse a file with the same words.

use std::io::{BufRead, BufWriter, Write};

use hermes_state_types::ErrorKind;
use hermes_state_types::stored::{self, StoredValueRef};
use serde_json::{Map, Value};

use super::plain::sql_to_json;
use super::{EXPORT_FORMAT, EXPORT_FORMAT_VERSION, ExportSummary, IMPORT_LINE_LIMIT};
use crate::error::{BackendFailure, Error, Result};

/// A failure of the stream an export writes to or an import reads from:
/// the caller's, not the store's, so it is its own error (boxed in
/// [`Error::Backend`]) with the I/O error inside for the caller to look at
/// (a closed pipe is not a failure to a command line).
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct StreamError {
    /// `<export writer>` or `<import reader>`.
    pub what: &'static str,
    /// The I/O error.
    #[source]
    pub source: std::io::Error,
}

impl BackendFailure for StreamError {
    fn kind(&self) -> ErrorKind {
        match self.source.kind() {
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                ErrorKind::ReadOnly
            }
            std::io::ErrorKind::NotFound => ErrorKind::NotFound,
            _ => ErrorKind::Io,
        }
    }
}

fn stream_error(what: &'static str, source: std::io::Error) -> Error {
    Error::backend(StreamError { what, source })
}

/// The refusal of a line of a file: [`Error::InvalidInput`] naming it.
pub fn invalid(line: u64, why: &str) -> Error {
    Error::InvalidInput(format!("export line {line}: {why}"))
}

/// The first line: format, version, the store's schema version, when.
pub fn header_line(schema_version: i64, exported_at: f64) -> Map<String, Value> {
    let mut header = Map::new();
    header.insert("format".to_owned(), EXPORT_FORMAT.into());
    header.insert("version".to_owned(), EXPORT_FORMAT_VERSION.into());
    header.insert("schema_version".to_owned(), schema_version.into());
    header.insert(
        "exported_at".to_owned(),
        serde_json::Number::from_f64(exported_at).map_or(Value::Null, Value::Number),
    );
    header
}

/// Writes lines through a 64 KiB buffer and counts their bytes.
pub struct LineWriter<W: Write> {
    inner: BufWriter<W>,
    bytes: u64,
}

impl<W: Write> LineWriter<W> {
    /// A writer of lines to `writer`.
    pub fn new(writer: W) -> Self {
        LineWriter {
            inner: BufWriter::with_capacity(64 << 10, writer),
            bytes: 0,
        }
    }

    /// Writes the end line with the counts and flushes; the summary with
    /// the bytes written.
    pub fn finish(
        mut self,
        mut summary: ExportSummary,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ExportSummary> {
        let mut end = Map::new();
        end.insert("type".to_owned(), "end".into());
        end.insert("sessions".to_owned(), summary.sessions.into());
        end.insert("messages".to_owned(), summary.messages.into());
        self.line(&end)?;
        self.inner
            .flush()
            .map_err(|e| stream_error("<export writer>", e))?;
        summary.bytes = self.bytes;
        progress(summary.messages);
        Ok(summary)
    }

    /// Writes one object as a compact line.
    pub fn line(&mut self, object: &Map<String, Value>) -> Result<()> {
        let mut text = serde_json::to_vec(object)
            .map_err(|e| Error::InvalidInput(format!("encoding an export line: {e}")))?;
        text.push(b'\n');
        self.inner
            .write_all(&text)
            .map_err(|e| stream_error("<export writer>", e))?;
        self.bytes += text.len() as u64;
        Ok(())
    }
}

/// The keys of a table's columns in a line, and which column is decoded content
/// (written decoded where that is lossless: [`stored::content_to_json`]).
///
/// A column's key is its name, or `$` + its name when the name is `type` or
/// starts with `$`: `"type"` is always the line's type, and a key starting
/// with `$` always names a column in the plain SQL encoding.
#[derive(Debug, Clone)]
pub struct LineColumns {
    keys: Vec<String>,
    content: Option<usize>,
}

impl LineColumns {
    /// The keys of the columns `names`, in their order; `content` names the
    /// column written decoded (`messages.content`), if any.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>, content: Option<&str>) -> Self {
        let names: Vec<&str> = names.into_iter().collect();
        LineColumns {
            content: content.and_then(|c| names.iter().position(|n| *n == c)),
            keys: names
                .into_iter()
                .map(|name| {
                    let escaped = name == "type" || name.starts_with('$');
                    if escaped {
                        format!("${name}")
                    } else {
                        name.to_owned()
                    }
                })
                .collect(),
        }
    }

    /// The line of one row given as its values in column order, whichever
    /// backend read them: both write the same bytes for the same values.
    pub fn line<'v>(
        &self,
        kind: &str,
        values: impl IntoIterator<Item = StoredValueRef<'v>>,
    ) -> Map<String, Value> {
        let mut line = Map::with_capacity(self.keys.len() + 1);
        line.insert("type".to_owned(), kind.into());
        for ((index, key), value) in self.keys.iter().enumerate().zip(values) {
            if Some(index) == self.content {
                match stored::content_to_json(value) {
                    Some(decoded) => line.insert(key.clone(), decoded),
                    None => line.insert(format!("${key}"), sql_to_json(value)),
                };
            } else {
                line.insert(key.clone(), sql_to_json(value));
            }
        }
        line
    }
}

/// One non-empty line: its number, its object and its size in bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct RawLine {
    /// The line's number in the file, from 1.
    pub number: u64,
    /// The line's JSON object.
    pub object: Map<String, Value>,
    /// Its size in bytes, line end included.
    pub size: usize,
}

/// The non-empty lines of the file as JSON objects, with their line numbers.
///
/// A line is read up to [`IMPORT_LINE_LIMIT`] bytes and no further: a
/// longer one (a stream with no line end, such as `/dev/zero`) is refused
/// with [`Error::InvalidInput`] naming it, instead of growing the buffer
/// until the allocation fails and the process aborts.
///
/// ```
/// use hermes_state_core::export::JsonLines;
///
/// let mut lines = JsonLines::new(&b"{\"type\":\"session\"}\n\n[1]\n"[..]);
/// let first = lines.next_line().unwrap().unwrap();
/// assert_eq!((first.number, first.object["type"].as_str()), (1, Some("session")));
/// // Line 2 is blank and skipped; line 3 is refused, named by its number.
/// let refused = lines.next_line().unwrap_err();
/// assert!(refused.to_string().contains("line 3"));
/// ```
pub struct JsonLines<R> {
    reader: R,
    buffer: Vec<u8>,
    number: u64,
}

impl<R: BufRead> JsonLines<R> {
    /// The lines of `reader`.
    pub fn new(reader: R) -> Self {
        JsonLines {
            reader,
            buffer: Vec::new(),
            number: 0,
        }
    }

    /// The next non-empty line; `None` at the end of the stream.
    pub fn next_line(&mut self) -> Result<Option<RawLine>> {
        loop {
            self.buffer.clear();
            let limit = u64::try_from(IMPORT_LINE_LIMIT).unwrap_or(u64::MAX);
            let read = std::io::Read::take(&mut self.reader, limit + 1)
                .read_until(b'\n', &mut self.buffer)
                .map_err(|e| stream_error("<import reader>", e))?;
            if read == 0 {
                return Ok(None);
            }
            self.number += 1;
            let line = self.buffer.strip_suffix(b"\n").unwrap_or(&self.buffer);
            if line.len() > IMPORT_LINE_LIMIT {
                return Err(invalid(
                    self.number,
                    &format!(
                        "longer than {} MiB, the longest line an import reads",
                        IMPORT_LINE_LIMIT >> 20
                    ),
                ));
            }
            let text = std::str::from_utf8(line)
                .map_err(|_| invalid(self.number, "not UTF-8"))?
                .trim();
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

/// Checks the header line: this format, a version this library reads.
pub fn check_header(line: Option<RawLine>) -> Result<()> {
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
