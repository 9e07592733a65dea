//! `export --format json` of every session, streamed.
//!
//! The document is the original's `export_all` list, written one session at
//! a time ([`SessionDb::export_all_each`]): memory is bounded by the largest
//! session, not by the store. The bytes are those `serde_json` writes for the
//! whole array at once, compact or pretty:
//! * compact: `[` + the sessions joined by `,` + `]`;
//! * pretty: `[` + for each session `\n` + its own pretty form with every line
//!   indented by two spaces, joined by `,` + `\n]` (`[]` when empty). JSON
//!   strings hold no raw newline, so indenting line by line is exact.

use std::io::Write;
use std::ops::ControlFlow;

use hermes_state::SessionDb;

use crate::error::{CliError, CliResult};
use crate::output::json_error;
use crate::time_window::TimeWindow;

/// Writes the sessions of `source` started in `window`; returns the numbers
/// of sessions and messages written.
pub fn write_all(
    db: &SessionDb,
    source: Option<&str>,
    window: TimeWindow,
    pretty: bool,
    writer: &mut dyn Write,
    fail: impl Fn(&hermes_state::Error) -> CliError,
) -> CliResult<(u64, u64)> {
    let mut array = JsonArray::start(&mut *writer, pretty)?;
    let mut messages = 0_u64;
    let mut output_error = None;
    let walked = db.export_all_each(source, |export| {
        if !window.contains(export.session.started_at) {
            return ControlFlow::Continue(());
        }
        if let Err(error) = array.item(&export.to_value()) {
            output_error = Some(error);
            return ControlFlow::Break(());
        }
        messages += export.messages.len() as u64;
        ControlFlow::Continue(())
    });
    if let Some(error) = output_error {
        return Err(error);
    }
    walked.map_err(|e| fail(&e))?;
    let sessions = array.finish()?;
    Ok((sessions, messages))
}

/// A JSON array written item by item, byte for byte as `serde_json` writes
/// the whole array (then a newline).
struct JsonArray<'w> {
    writer: &'w mut dyn Write,
    pretty: bool,
    items: u64,
    buffer: Vec<u8>,
}

impl<'w> JsonArray<'w> {
    fn start(writer: &'w mut dyn Write, pretty: bool) -> CliResult<Self> {
        writer.write_all(b"[")?;
        Ok(Self {
            writer,
            pretty,
            items: 0,
            buffer: Vec::new(),
        })
    }

    fn item(&mut self, value: &serde_json::Value) -> CliResult {
        if self.items > 0 {
            self.writer.write_all(b",")?;
        }
        self.items += 1;
        if !self.pretty {
            return serde_json::to_writer(&mut *self.writer, value).map_err(json_error);
        }
        self.buffer.clear();
        serde_json::to_writer_pretty(&mut self.buffer, value).map_err(json_error)?;
        for line in self.buffer.split(|b| *b == b'\n') {
            self.writer.write_all(b"\n  ")?;
            self.writer.write_all(line)?;
        }
        Ok(())
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

    fn streamed(values: &[Value], pretty: bool) -> String {
        let mut out = Vec::new();
        let mut array = JsonArray::start(&mut out, pretty).expect("start");
        for value in values {
            array.item(value).expect("item");
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
        let session = |id: &str| {
            json!({
                "id": id, "title": "line\nbreak \"quoted\" 日本",
                "cost": 1.5, "empty": {}, "none": [], "nested": {"a": [1, {"b": null}]},
                "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": null}],
            })
        };
        for values in [
            vec![],
            vec![session("a")],
            vec![session("a"), session("b"), json!({})],
        ] {
            for pretty in [false, true] {
                assert_eq!(
                    streamed(&values, pretty),
                    whole(&values, pretty),
                    "pretty={pretty}"
                );
            }
        }
    }
}
