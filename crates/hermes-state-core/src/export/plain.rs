//! The plain SQL encoding of the JSONL format (`docs/EXPORT-FORMAT.md`,
//! "Plain SQL encoding"): a stored value as JSON and back, written once so
//! that every backend writes the same bytes and reads a file alike.

use hermes_state_types::pyjson;
use hermes_state_types::stored::{self, StoredValue, StoredValueRef};
use serde_json::{Map, Value};

/// A value read from an export line, to be written: a stored value, or
/// text that is not UTF-8 (a damaged SQLite file held it; it goes back as
/// TEXT byte for byte where the backend can hold it).
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A value in SQLite's storage classes.
    Stored(StoredValue),
    /// TEXT that is not valid UTF-8.
    RawText(Vec<u8>),
}

impl Cell {
    /// The value as a reader sees it: raw text is TEXT.
    pub fn as_ref(&self) -> StoredValueRef<'_> {
        match self {
            Cell::Stored(value) => value.as_ref(),
            Cell::RawText(bytes) => StoredValueRef::Text(bytes),
        }
    }

    /// The text, when this is UTF-8 TEXT.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Cell::Stored(StoredValue::Text(text)) => Some(text),
            _ => None,
        }
    }
}

impl From<StoredValueRef<'_>> for Cell {
    fn from(value: StoredValueRef<'_>) -> Self {
        Cell::Stored(match value {
            StoredValueRef::Null => StoredValue::Null,
            StoredValueRef::Integer(i) => StoredValue::Integer(i),
            StoredValueRef::Real(f) => StoredValue::Real(f),
            StoredValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => StoredValue::Text(text.to_owned()),
                Err(_) => return Cell::RawText(bytes.to_vec()),
            },
            StoredValueRef::Blob(bytes) => StoredValue::Blob(bytes.to_vec()),
        })
    }
}

/// A stored value in the plain SQL encoding: NULL, integers, finite reals and
/// UTF-8 text map to their JSON counterparts (reals always with a fraction or
/// an exponent, so they never read back as integers); the rest to a one-key
/// object.
pub fn sql_to_json(value: StoredValueRef<'_>) -> Value {
    match value {
        StoredValueRef::Null => Value::Null,
        StoredValueRef::Integer(i) => Value::from(i),
        StoredValueRef::Real(f) => match serde_json::Number::from_f64(f) {
            Some(number) => Value::Number(number),
            None => tagged("real", pyjson::float_repr(f)),
        },
        StoredValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Value::String(text.to_owned()),
            Err(_) => tagged("text_hex", hex(bytes)),
        },
        StoredValueRef::Blob(bytes) => tagged("blob", hex(bytes)),
    }
}

/// A value in the plain SQL encoding back to what is stored; the error says
/// why the JSON is not one.
pub fn json_to_sql(value: &Value) -> Result<Cell, String> {
    let stored = |value| Ok(Cell::Stored(value));
    match value {
        Value::Null => stored(StoredValue::Null),
        Value::String(text) => stored(StoredValue::Text(text.clone())),
        Value::Number(number) => {
            if let Some(i) = number.as_i64() {
                stored(StoredValue::Integer(i))
            } else if number.is_f64() {
                number
                    .as_f64()
                    .map(|f| Cell::Stored(StoredValue::Real(f)))
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
                    .map(|bytes| Cell::Stored(StoredValue::Blob(bytes)))
                    .ok_or_else(|| "bad hex".to_owned()),
                "text_hex" => unhex(text)
                    .map(Cell::RawText)
                    .ok_or_else(|| "bad hex".to_owned()),
                "real" => match text {
                    "Infinity" => stored(StoredValue::Real(f64::INFINITY)),
                    "-Infinity" => stored(StoredValue::Real(f64::NEG_INFINITY)),
                    _ => Err(format!("unknown real {text:?}")),
                },
                _ => Err(format!("unknown tag {tag:?}")),
            }
        }
        _ => Err("not a SQL value".to_owned()),
    }
}

/// Decoded content back to what the store holds ([`stored::content_from_json`]):
/// text as is, an array or an object as `"\x00json:"` + Python-compatible JSON.
pub fn content_to_sql(value: Value) -> Result<Cell, String> {
    stored::content_from_json(value)
        .map(Cell::Stored)
        .ok_or_else(|| "decoded content must be a string, an array, an object or null".to_owned())
}

fn tagged(tag: &str, value: String) -> Value {
    let mut map = Map::new();
    map.insert(tag.to_owned(), Value::String(value));
    Value::Object(map)
}

/// Bytes in lower-case hex.
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
