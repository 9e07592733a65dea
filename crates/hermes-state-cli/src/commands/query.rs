//! `query "SQL"`: one read-only statement on the file, for people who know
//! SQLite (as `sqlite-utils query` does). The library runs it on a
//! read-only connection of its own and refuses a statement that could
//! write (`SessionDb::query_read_only`); the store is opened read-only too.

use std::fmt::Write as _;

use hermes_state::{QueryRows, StoredValue};
use serde_json::{Map, Value, json};

use crate::cli::QueryArgs;
use crate::error::CliResult;
use crate::store::{Access, Context};

pub fn query(ctx: &Context, args: &QueryArgs) -> CliResult {
    let db = ctx.open_file(Access::Read)?;
    let max = (args.limit > 0).then_some(args.limit);
    let answer = db
        .query_read_only(&args.sql, max)
        .map_err(|e| ctx.fail(&e))?;
    if answer.truncated {
        ctx.out.note(format!(
            "note: the first {} rows; --limit N shows more (0 = all)",
            args.limit
        ));
    }
    if ctx.out.json {
        return ctx.out.json(&as_json(&answer));
    }
    ctx.out.text(as_table(&answer))
}

/// An array of objects, one per row, keyed by column name; a BLOB as
/// `{"blob_hex": "…"}` (JSON has no bytes).
fn as_json(answer: &QueryRows) -> Value {
    let rows = answer
        .rows
        .iter()
        .map(|row| {
            let mut object = Map::new();
            for (column, value) in answer.columns.iter().zip(row) {
                object.insert(column.clone(), json_value(value));
            }
            Value::Object(object)
        })
        .collect();
    Value::Array(rows)
}

fn json_value(value: &StoredValue) -> Value {
    match value {
        StoredValue::Null => Value::Null,
        StoredValue::Integer(i) => json!(i),
        StoredValue::Real(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        StoredValue::Text(text) => json!(text),
        StoredValue::Blob(bytes) => json!({"blob_hex": hex(bytes)}),
    }
}

/// Columns padded to their widest cell (text cut at 60 columns, one line).
fn as_table(answer: &QueryRows) -> String {
    let cells: Vec<Vec<String>> = answer
        .rows
        .iter()
        .map(|row| row.iter().map(cell).collect())
        .collect();
    let widths: Vec<usize> = (0..answer.columns.len())
        .map(|i| {
            cells
                .iter()
                .map(|row| crate::columns::width(&row[i]))
                .chain([crate::columns::width(&answer.columns[i])])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |values: &[String]| {
        values
            .iter()
            .zip(&widths)
            .map(|(value, &width)| crate::columns::fit(value, width))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    let mut text = String::new();
    let _ = writeln!(text, "{}", line(&answer.columns));
    for row in &cells {
        let _ = writeln!(text, "{}", line(row));
    }
    text
}

fn cell(value: &StoredValue) -> String {
    let shown = match value {
        StoredValue::Null => "NULL".to_owned(),
        StoredValue::Integer(i) => i.to_string(),
        StoredValue::Real(f) => f.to_string(),
        StoredValue::Text(text) => text.split_whitespace().collect::<Vec<_>>().join(" "),
        StoredValue::Blob(bytes) => format!("x'{}'", hex(bytes)),
    };
    crate::columns::cut(&shown, 60)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}
