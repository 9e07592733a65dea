//! `--format table|json|jsonl|csv` of the listings (`sessions list`,
//! `search`): the rows a command found, as a person or a program wants them.
//!
//! * `table`: the command's human output (the default);
//! * `json`: one JSON array, what `--json` prints (`--json` is its alias);
//! * `jsonl`: one compact JSON object per row, one row per line;
//! * `csv`: a header row, then one record per row (RFC 4180: CRLF line ends,
//!   a field holding `,`, `"`, CR or LF is quoted, `"` doubled). Nested
//!   objects become dotted columns (`session.id`); arrays are written as
//!   their JSON text; `null` is an empty field.
//!
//! The CSV writer is hand-written: quoting is a dozen lines, tested here,
//! and the workspace has no CSV crate to share.

use std::io::{self, Write};

use clap::ValueEnum;
use serde_json::{Map, Value};

use crate::error::{CliError, CliResult};
use crate::output::{Output, json_error};

/// How a listing prints its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RowFormat {
    /// The human table (the default)
    Table,
    /// One JSON array (the same as --json)
    Json,
    /// One JSON object per line
    Jsonl,
    /// Comma-separated values with a header row (RFC 4180)
    Csv,
}

impl RowFormat {
    /// The format asked for: `--format`, else `json` under `--json`, else
    /// `table`. `--json` with another `--format` is a usage error.
    pub fn chosen(out: &Output, format: Option<RowFormat>) -> CliResult<RowFormat> {
        match format {
            None if out.json => Ok(RowFormat::Json),
            None => Ok(RowFormat::Table),
            Some(RowFormat::Json) => Ok(RowFormat::Json),
            Some(other) if out.json => Err(CliError::usage(format!(
                "--json means --format json; it cannot go with --format {}",
                other.name()
            ))),
            Some(other) => Ok(other),
        }
    }

    fn name(self) -> &'static str {
        match self {
            RowFormat::Table => "table",
            RowFormat::Json => "json",
            RowFormat::Jsonl => "jsonl",
            RowFormat::Csv => "csv",
        }
    }

    /// Prints `rows` (a JSON array) in a machine format; `false` for
    /// `table`, which the command prints itself.
    pub fn print(self, out: &Output, rows: &Value) -> CliResult<bool> {
        let rows: Vec<Value> = rows
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(with_iso_times)
            .collect();
        let rows = rows.as_slice();
        let text = match self {
            RowFormat::Table => return Ok(false),
            RowFormat::Json => {
                out.json(&Value::Array(rows.to_vec()))?;
                return Ok(true);
            }
            RowFormat::Jsonl => jsonl(rows)?,
            RowFormat::Csv => csv(rows),
        };
        let mut stdout = io::stdout().lock();
        stdout.write_all(text.as_bytes())?;
        stdout.flush()?;
        Ok(true)
    }
}

/// The time fields of the rows (Unix seconds, as the library gives them).
const TIME_FIELDS: [&str; 5] = [
    "started_at",
    "ended_at",
    "timestamp",
    "last_active",
    "session_started",
];

/// The row with an ISO 8601 UTC text (`2026-07-24T09:30:15.250Z`) after
/// each time field, as `<field>_iso`: the number stays for programs, the
/// text is for people and for tools that read dates (sqlite-utils and
/// `llm logs` print such times). Nested objects get them too; `null`
/// stays `null`.
fn with_iso_times(row: &Value) -> Value {
    let Value::Object(map) = row else {
        return row.clone();
    };
    let mut out = Map::new();
    for (key, value) in map {
        out.insert(key.clone(), with_iso_times(value));
        if TIME_FIELDS.contains(&key.as_str()) && !map.contains_key(&format!("{key}_iso")) {
            let iso = value.as_f64().map(iso_utc);
            out.insert(format!("{key}_iso"), iso.map_or(Value::Null, Value::String));
        }
    }
    Value::Object(out)
}

/// Unix seconds as ISO 8601 in UTC, milliseconds when there are any.
pub fn iso_utc(unix: f64) -> String {
    let (date, time) = crate::local_time::utc_civil(unix);
    let millis = ((unix - unix.floor()) * 1000.0).round() as u32;
    if millis == 0 || millis >= 1000 {
        format!("{date}T{time}Z")
    } else {
        format!("{date}T{time}.{millis:03}Z")
    }
}

fn jsonl(rows: &[Value]) -> CliResult<String> {
    let mut text = String::new();
    for row in rows {
        text.push_str(&serde_json::to_string(row).map_err(json_error)?);
        text.push('\n');
    }
    Ok(text)
}

/// The rows as CSV: the columns are every key met, in first-seen order (no
/// rows: no output, not even a header, as there are no columns to name).
fn csv(rows: &[Value]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let flat: Vec<Map<String, Value>> = rows
        .iter()
        .map(|row| {
            let mut cells = Map::new();
            flatten("", row, &mut cells);
            cells
        })
        .collect();
    let mut columns: Vec<&str> = Vec::new();
    for cells in &flat {
        for key in cells.keys() {
            if !columns.contains(&key.as_str()) {
                columns.push(key);
            }
        }
    }
    let mut text = String::new();
    record(&mut text, columns.iter().map(|c| (*c).to_owned()));
    for cells in &flat {
        record(
            &mut text,
            columns
                .iter()
                .map(|c| cells.get(*c).map(field).unwrap_or_default()),
        );
    }
    text
}

/// Objects become dotted keys; anything else is one cell (`value` for a
/// row that is not an object).
fn flatten(prefix: &str, value: &Value, cells: &mut Map<String, Value>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                let name = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&name, inner, cells);
            }
        }
        other => {
            let name = if prefix.is_empty() { "value" } else { prefix };
            cells.insert(name.to_owned(), other.clone());
        }
    }
}

/// A cell's text: strings as they are, `null` empty, the rest as JSON.
fn field(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// One CSV record, CRLF-terminated, fields quoted when they must be.
fn record(text: &mut String, fields: impl Iterator<Item = String>) {
    for (i, value) in fields.enumerate() {
        if i > 0 {
            text.push(',');
        }
        if value.contains([',', '"', '\r', '\n']) {
            text.push('"');
            text.push_str(&value.replace('"', "\"\""));
            text.push('"');
        } else {
            text.push_str(&value);
        }
    }
    text.push_str("\r\n");
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn csv_quotes_only_what_must_be_quoted() {
        let rows = vec![
            json!({"id": "a", "title": "plain", "n": 1, "tags": ["x", "y"], "session": {"model": null}}),
            json!({"id": "b,c", "title": "say \"hi\"\nthen go", "n": 2.5, "extra": true}),
        ];
        assert_eq!(
            csv(&rows),
            "id,title,n,tags,session.model,extra\r\n\
             a,plain,1,\"[\"\"x\"\",\"\"y\"\"]\",,\r\n\
             \"b,c\",\"say \"\"hi\"\"\nthen go\",2.5,,,true\r\n"
        );
    }

    #[test]
    fn csv_of_no_rows_is_empty() {
        assert_eq!(csv(&[]), "");
    }

    #[test]
    fn jsonl_is_one_compact_object_per_line() {
        let rows = vec![json!({"a": 1, "b": "x\ny"}), json!({"a": 2})];
        assert_eq!(
            jsonl(&rows).expect("jsonl"),
            "{\"a\":1,\"b\":\"x\\ny\"}\n{\"a\":2}\n"
        );
    }
}
