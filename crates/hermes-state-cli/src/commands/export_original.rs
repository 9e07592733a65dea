//! `export --format json`, streamed message by message.
//!
//! The document is the original's `export_all` list (or, with `--session`,
//! `export_session`'s), written as the library's walk hands over its parts
//! ([`SessionStore::export_all_parts`]): a session, its messages one at a time,
//! its end. Memory holds one message, not a session nor the store. The bytes
//! are those `serde_json` writes for the whole array at once, compact or
//! pretty:
//! * compact: `[` + the sessions joined by `,` + `]`; a session is its
//!   object without the closing `}` (its `messages` key comes last), then
//!   `,"messages":[` + the messages joined by `,` + `]}`;
//! * pretty: the same structure with serde_json's two-space indentation:
//!   every line of an array item is indented by two more spaces than its
//!   parent's. JSON strings hold no raw newline, so indenting line by line
//!   (every `\n` followed by the indentation) is exact.

use std::io::Write;
use std::ops::ControlFlow;

use hermes_state::{ExportPart, SessionExport, SessionStore};
use serde_json::{Map, Value};

use crate::error::{CliError, CliResult};
use crate::output::json_error;
use crate::time_window::TimeWindow;

/// Writes the sessions of `source` started in `window` (every session, or
/// only `session` in `export_session`'s shape); returns the numbers of
/// sessions and messages written.
pub fn write_all(
    store: &dyn SessionStore,
    scope: Scope<'_>,
    window: TimeWindow,
    pretty: bool,
    writer: &mut dyn Write,
    fail: impl Fn(&hermes_state::Error) -> CliError,
) -> CliResult<(u64, u64)> {
    let mut array = JsonArray::start(&mut *writer, pretty)?;
    let mut messages = 0_u64;
    let mut output_error = None;
    // Sessions outside the window are walked past, not written.
    let mut writing = false;
    let mut take = |part: ExportPart| {
        let step = match part {
            ExportPart::Session(export) => {
                writing = window.contains(export.session.started_at);
                if writing {
                    array.begin_session(session_object(&export))
                } else {
                    Ok(())
                }
            }
            ExportPart::Message(message) if writing => {
                messages += 1;
                array.message(&serde_json::to_value(&message).unwrap_or(Value::Null))
            }
            ExportPart::SessionEnd if writing => array.end_session(),
            _ => Ok(()),
        };
        match step {
            Ok(()) => ControlFlow::Continue(()),
            Err(error) => {
                output_error = Some(error);
                ControlFlow::Break(())
            }
        }
    };
    let walked = match scope {
        Scope::All { source } => store.export_all_parts(source, &mut take).map(|_| ()),
        Scope::Session(id) => store.export_session_parts(id, &mut take).map(|_| ()),
    };
    if let Some(error) = output_error {
        return Err(error);
    }
    walked.map_err(|e| fail(&e))?;
    let sessions = array.finish()?;
    Ok((sessions, messages))
}

/// Which sessions [`write_all`] writes.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// `export_all`'s: every session, of this source when given.
    All {
        /// The source.
        source: Option<&'a str>,
    },
    /// `export_session`'s: this session only (no `last_active`).
    Session(&'a str),
}

/// The session's object as the original writes it, without its messages
/// (which [`SessionExport::to_value`] puts last).
fn session_object(export: &SessionExport) -> Map<String, Value> {
    match export.to_value() {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A JSON array written item by item (a session's messages one by one too),
/// byte for byte as `serde_json` writes the whole array (then a newline).
struct JsonArray<'w> {
    writer: &'w mut dyn Write,
    pretty: bool,
    items: u64,
    /// Messages of the open session written so far.
    messages: u64,
    buffer: Vec<u8>,
    /// The open session's object when its `messages` is not its last key (a
    /// column named `messages`): its messages are gathered and it is
    /// written whole at its end.
    whole: Option<Map<String, Value>>,
}

impl<'w> JsonArray<'w> {
    fn start(writer: &'w mut dyn Write, pretty: bool) -> CliResult<Self> {
        writer.write_all(b"[")?;
        Ok(Self {
            writer,
            pretty,
            items: 0,
            messages: 0,
            buffer: Vec::new(),
            whole: None,
        })
    }

    /// Starts an item: the separator, and in pretty form its first line break.
    fn begin_item(&mut self) -> CliResult {
        if self.items > 0 {
            self.writer.write_all(b",")?;
        }
        self.items += 1;
        if self.pretty {
            self.writer.write_all(b"\n  ")?;
        }
        Ok(())
    }

    /// Writes `text` as part of an item: in pretty form, every line break is
    /// followed by the item's two-space indentation.
    fn write_in_item(&mut self, text: &[u8]) -> CliResult {
        if !self.pretty {
            self.writer.write_all(text)?;
            return Ok(());
        }
        let mut lines = text.split(|b| *b == b'\n');
        if let Some(first) = lines.next() {
            self.writer.write_all(first)?;
        }
        for line in lines {
            self.writer.write_all(b"\n  ")?;
            self.writer.write_all(line)?;
        }
        Ok(())
    }

    fn serialize(&mut self, value: &Value) -> CliResult<Vec<u8>> {
        self.buffer.clear();
        if self.pretty {
            serde_json::to_writer_pretty(&mut self.buffer, value).map_err(json_error)?;
        } else {
            serde_json::to_writer(&mut self.buffer, value).map_err(json_error)?;
        }
        Ok(std::mem::take(&mut self.buffer))
    }

    /// One whole item.
    #[cfg(test)]
    fn item(&mut self, value: &Value) -> CliResult {
        self.begin_item()?;
        let text = self.serialize(value)?;
        self.write_in_item(&text)
    }

    /// Opens a session's object (`object` ends with an empty `messages`).
    fn begin_session(&mut self, mut object: Map<String, Value>) -> CliResult {
        self.begin_item()?;
        self.messages = 0;
        if object.keys().next_back().map(String::as_str) != Some("messages") {
            self.whole = Some(object);
            return Ok(());
        }
        object.remove("messages");
        let empty = object.is_empty();
        let text = self.serialize(&Value::Object(object))?;
        // Everything but the closing brace (and, pretty, its line break).
        let open = if empty {
            &b"{"[..]
        } else if self.pretty {
            &text[..text.len() - 2]
        } else {
            &text[..text.len() - 1]
        };
        let key: &[u8] = match (empty, self.pretty) {
            (true, false) => b"\"messages\":[",
            (false, false) => b",\"messages\":[",
            (true, true) => b"\n  \"messages\": [",
            (false, true) => b",\n  \"messages\": [",
        };
        let mut head = open.to_vec();
        head.extend_from_slice(key);
        self.write_in_item(&head)
    }

    /// One message of the open session.
    fn message(&mut self, message: &Value) -> CliResult {
        if let Some(object) = &mut self.whole {
            if let Some(Value::Array(list)) = object.get_mut("messages") {
                list.push(message.clone());
            }
            return Ok(());
        }
        let text = self.serialize(message)?;
        let mut part = Vec::with_capacity(text.len() + 8);
        if self.messages > 0 {
            part.push(b',');
        }
        if self.pretty {
            // An element of `messages`: two spaces deeper than the key.
            part.extend_from_slice(b"\n    ");
            for (i, line) in text.split(|b| *b == b'\n').enumerate() {
                if i > 0 {
                    part.extend_from_slice(b"\n    ");
                }
                part.extend_from_slice(line);
            }
        } else {
            part.extend_from_slice(&text);
        }
        self.messages += 1;
        self.write_in_item(&part)
    }

    /// Closes the open session's object.
    fn end_session(&mut self) -> CliResult {
        if let Some(object) = self.whole.take() {
            let text = self.serialize(&Value::Object(object))?;
            return self.write_in_item(&text);
        }
        let close: &[u8] = match (self.pretty, self.messages > 0) {
            (false, _) => b"]}",
            (true, true) => b"\n  ]\n}",
            (true, false) => b"]\n}",
        };
        self.write_in_item(close)
    }

    /// Closes the array; returns the number of items.
    fn finish(self) -> CliResult<u64> {
        if self.pretty && self.items > 0 {
            self.writer.write_all(b"\n")?;
        }
        self.writer.write_all(b"]\n")?;
        Ok(self.items)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// Sessions written in parts (object, then each message), and any other
    /// value whole.
    fn streamed(values: &[Value], pretty: bool) -> String {
        let mut out = Vec::new();
        let mut array = JsonArray::start(&mut out, pretty).expect("start");
        for value in values {
            match value {
                Value::Object(map) if map.contains_key("messages") => {
                    let mut object = map.clone();
                    let messages = object.insert("messages".to_owned(), json!([]));
                    array.begin_session(object).expect("begin");
                    for message in messages
                        .and_then(|m| m.as_array().cloned())
                        .unwrap_or_default()
                    {
                        array.message(&message).expect("message");
                    }
                    array.end_session().expect("end");
                }
                other => array.item(other).expect("item"),
            }
        }
        array.finish().expect("finish");
        String::from_utf8(out).expect("utf-8")
    }

    fn whole(values: &[Value], pretty: bool) -> String {
        let array = Value::Array(values.to_vec());
        let text = if pretty {
            serde_json::to_string_pretty(&array)
        } else {
            serde_json::to_string(&array)
        };
        text.expect("json") + "\n"
    }

    #[test]
    fn streamed_array_has_the_bytes_of_the_whole_array() {
        let session = |id: &str, messages: Value| {
            json!({
                "id": id, "title": "line\nbreak \"quoted\" 日本",
                "cost": 1.5, "empty": {}, "none": [], "nested": {"a": [1, {"b": null}]},
                "messages": messages,
            })
        };
        let two = json!([{"role": "user", "content": "hi", "calls": [{"x": 1}]}, {"role": "assistant", "content": null, "empty": []}]);
        // `messages` not last: written whole.
        let odd = json!({"messages": [{"a": 1}], "id": "odd"});
        for values in [
            vec![],
            vec![session("a", two.clone())],
            vec![session("a", json!([]))],
            vec![json!({"messages": []}), json!({"messages": [{"a": 1}, {}]})],
            vec![
                session("a", two.clone()),
                session("b", json!([])),
                json!({}),
                odd,
            ],
        ] {
            for pretty in [false, true] {
                assert_eq!(
                    streamed(&values, pretty),
                    whole(&values, pretty),
                    "pretty={pretty}: {values:?}"
                );
            }
        }
    }
}
