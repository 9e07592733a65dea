//! Reading the columns of [`super::Raw::query`]'s rows, each of one JSON
//! type exactly: a column read as an integer on one backend and as a float
//! on the other is a difference the cases must see.

use serde_json::Value;

/// An INTEGER column.
///
/// # Panics
/// When the value is not an integer.
pub fn int(value: &Value) -> i64 {
    value
        .as_i64()
        .unwrap_or_else(|| panic!("an integer column, got {value}"))
}

/// A REAL column.
///
/// # Panics
/// When the value is not a float.
pub fn real(value: &Value) -> f64 {
    match value {
        Value::Number(n) if n.is_f64() => n.as_f64().expect("a float"),
        other => panic!("a REAL column, got {other}"),
    }
}

/// A TEXT column that is never NULL.
///
/// # Panics
/// When the value is not a text.
pub fn text(value: &Value) -> String {
    value
        .as_str()
        .unwrap_or_else(|| panic!("a TEXT column, got {value}"))
        .to_owned()
}

/// A TEXT column that may be NULL.
///
/// # Panics
/// When the value is neither NULL nor a text.
pub fn optional_text(value: &Value) -> Option<String> {
    (!value.is_null()).then(|| text(value))
}
