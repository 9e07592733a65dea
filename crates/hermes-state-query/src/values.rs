//! Lenient conversion of stored values.
//!
//! Files written by other builds, forks or damaged processes can hold a value
//! of an unexpected storage class in any column (TEXT in an INTEGER column, a
//! BLOB where text was expected). Reading must never fail or panic on that:
//! each conversion here takes what SQLite holds and makes the closest value of
//! the wanted type, the way Python's dynamic typing would hand it through.

use rusqlite::types::ValueRef;
use serde_json::Value;

/// Text of any value; NULL → `None`. Invalid UTF-8 is replaced, never refused.
pub fn text(value: ValueRef<'_>) -> Option<String> {
    match value {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(bytes) | ValueRef::Blob(bytes) => {
            Some(String::from_utf8_lossy(bytes).into_owned())
        }
    }
}

/// Integer of any value; text that does not parse and NULL → `None`.
pub fn integer(value: ValueRef<'_>) -> Option<i64> {
    match value {
        ValueRef::Integer(i) => Some(i),
        ValueRef::Real(f) if f.is_finite() => Some(f as i64),
        ValueRef::Text(bytes) => std::str::from_utf8(bytes).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// Float of any value; text that does not parse and NULL → `None`.
pub fn real(value: ValueRef<'_>) -> Option<f64> {
    match value {
        ValueRef::Integer(i) => Some(i as f64),
        ValueRef::Real(f) => Some(f),
        ValueRef::Text(bytes) => std::str::from_utf8(bytes).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// A JSON value for a column this library does not know (kept in `extra`).
pub fn json(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
        ValueRef::Text(bytes) => Value::String(String::from_utf8_lossy(bytes).into_owned()),
        ValueRef::Blob(bytes) => Value::Array(bytes.iter().map(|b| Value::from(*b)).collect()),
    }
}
