//! Lenient conversion of stored values.
//!
//! Files written by other builds, forks or damaged processes can hold a value
//! of an unexpected storage class in any column (TEXT in an INTEGER column, a
//! BLOB where text was expected). Reading must never fail or panic on that:
//! each conversion here takes what SQLite holds and makes the closest value of
//! the wanted type, the way Python's dynamic typing would hand it through.
//!
//! This is also the edge between rusqlite's values and the stored-value codec
//! of the types crate ([`hermes_state_types::stored`]): [`stored`] and
//! [`sql_value`] convert between them.

use hermes_state_types::{StoredValue, StoredValueRef};
use rusqlite::types::{Value as SqlValue, ValueRef};
use serde_json::Value;

/// A cell of a row as the codec of the types crate reads it.
pub fn stored(value: ValueRef<'_>) -> StoredValueRef<'_> {
    match value {
        ValueRef::Null => StoredValueRef::Null,
        ValueRef::Integer(i) => StoredValueRef::Integer(i),
        ValueRef::Real(f) => StoredValueRef::Real(f),
        ValueRef::Text(bytes) => StoredValueRef::Text(bytes),
        ValueRef::Blob(bytes) => StoredValueRef::Blob(bytes),
    }
}

/// A value the codec of the types crate encoded, to bind.
pub fn sql_value(value: StoredValue) -> SqlValue {
    match value {
        StoredValue::Null => SqlValue::Null,
        StoredValue::Integer(i) => SqlValue::Integer(i),
        StoredValue::Real(f) => SqlValue::Real(f),
        StoredValue::Text(text) => SqlValue::Text(text),
        StoredValue::Blob(bytes) => SqlValue::Blob(bytes),
    }
}

/// Text of any value; NULL → `None`. Invalid UTF-8 is replaced, never refused
/// ([`StoredValueRef::to_text_lossy`]).
pub fn text(value: ValueRef<'_>) -> Option<String> {
    stored(value).to_text_lossy()
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
