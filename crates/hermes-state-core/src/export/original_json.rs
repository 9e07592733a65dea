//! The original's export document written as an export walk hands it over.

use std::io::{self, Write};

use serde_json::{Map, Value};

use super::{ExportPart, ExportSummary};

/// Writes `export_all`'s list (or a list of `export_session`'s objects)
/// from the parts of [`export_all_parts`](super::export_all_parts) /
/// [`export_session_parts`](super::export_session_parts), holding one
/// message at a time, with the bytes of [`serde_json::to_vec`] (or
/// [`serde_json::to_vec_pretty`]) of the whole list then a newline: a
/// session's object up to its `messages` key (last), each message, the
/// closing brackets, every line indented two spaces a level when pretty (a
/// JSON string holds no raw newline). A session with a column named
/// `messages` (not last then) is written whole at its end.
pub struct OriginalJsonWriter<W: Write> {
    writer: W,
    pretty: bool,
    summary: ExportSummary,
    /// Messages of the open session written so far.
    open_messages: u64,
    /// The open session, when it is written whole at its end.
    whole: Option<Map<String, Value>>,
}

impl<W: Write> OriginalJsonWriter<W> {
    /// Starts the document; `pretty` for serde_json's pretty form.
    pub fn new(writer: W, pretty: bool) -> io::Result<Self> {
        let mut document = OriginalJsonWriter {
            writer,
            pretty,
            summary: ExportSummary::default(),
            open_messages: 0,
            whole: None,
        };
        document.put(b"[", 0)?;
        Ok(document)
    }

    /// Writes one part of the walk.
    pub fn part(&mut self, part: ExportPart) -> io::Result<()> {
        match part {
            ExportPart::Session(export) => {
                self.put(separator(self.summary.sessions), 1)?;
                self.summary.sessions += 1;
                self.open_messages = 0;
                let Value::Object(mut object) = export.to_value() else {
                    return Ok(());
                };
                if object.keys().next_back().is_none_or(|k| k != "messages") {
                    self.whole = Some(object);
                    return Ok(());
                }
                object.remove("messages");
                let head = self.json(&Value::Object(object))?;
                // Up to the closing brace (pretty: its line break); the object has columns.
                let (close, key): (_, &[u8]) = match self.pretty {
                    true => (2, b",\n\"messages\": ["),
                    false => (1, b",\"messages\":["),
                };
                self.put(&head[..head.len() - close], 1)?;
                self.put(key, 2)
            }
            ExportPart::Message(message) => {
                self.summary.messages += 1;
                let value = serde_json::to_value(&message)?;
                let whole = self.whole.as_mut().and_then(|o| o.get_mut("messages"));
                if let Some(Value::Array(list)) = whole {
                    list.push(value);
                    return Ok(());
                }
                self.put(separator(self.open_messages), 3)?;
                self.open_messages += 1;
                let text = self.json(&value)?;
                self.put(&text, 3)
            }
            ExportPart::SessionEnd => match self.whole.take() {
                Some(object) => {
                    let text = self.json(&Value::Object(object))?;
                    self.put(&text, 1)
                }
                None => {
                    let last: &[u8] = if self.open_messages > 0 { b"\n]" } else { b"]" };
                    self.put(last, 2)?;
                    self.put(b"\n}", 1)
                }
            },
        }
    }

    /// Closes the document and flushes; the sessions, messages and bytes written.
    pub fn finish(mut self) -> io::Result<ExportSummary> {
        let pretty = self.pretty && self.summary.sessions > 0;
        let close: &[u8] = if pretty { b"\n]\n" } else { b"]\n" };
        self.writer.write_all(close)?;
        self.writer.flush()?;
        self.summary.bytes += close.len() as u64;
        Ok(self.summary)
    }

    fn json(&self, value: &Value) -> io::Result<Vec<u8>> {
        Ok(match self.pretty {
            true => serde_json::to_vec_pretty(value)?,
            false => serde_json::to_vec(value)?,
        })
    }

    /// Writes `text` at `depth`: each line break in it is, pretty, followed
    /// by that level's indentation (two spaces a level) and, compact, left
    /// out (compact JSON has none of its own).
    fn put(&mut self, text: &[u8], depth: usize) -> io::Result<()> {
        let indent = match self.pretty {
            true => format!("\n{}", "  ".repeat(depth)),
            false => String::new(),
        };
        let out = text
            .split(|b| *b == b'\n')
            .collect::<Vec<_>>()
            .join(indent.as_bytes());
        self.writer.write_all(&out)?;
        self.summary.bytes += out.len() as u64;
        Ok(())
    }
}

/// What comes before an item of a list: a comma after the first, and a
/// line break (pretty).
fn separator(written: u64) -> &'static [u8] {
    if written > 0 { b",\n" } else { b"\n" }
}
