//! How `messages.content` is held in a PostgreSQL `text` column.
//!
//! SQLite's column holds any storage class, and structured content starts
//! with a NUL byte (`"\x00json:"`), which PostgreSQL text refuses. Here:
//! text as is; structured content with the marker `"\x01json:"`; bytes as
//! `"\x01bytes:"` + base64; integers and reals (which a written message
//! never holds: TEXT affinity turns them into text, [`as_written`]; a file
//! whose column lacks that affinity may) as `"\x01int:"` / `"\x01real:"` +
//! their decimal text. A NUL anywhere else cannot be stored and is refused,
//! naming the message.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hermes_state_core::affinity::real_as_text;
use hermes_state_types::stored::{CONTENT_JSON_PREFIX, StoredValue};

use crate::error::{PgError, Result};

/// The structured-content marker on PostgreSQL.
pub const PG_JSON_PREFIX: &str = "\u{1}json:";
const BYTES_PREFIX: &str = "\u{1}bytes:";
/// An empty blob as stored here (SQLite's `length()` of it is 0).
pub const EMPTY_BLOB: &str = BYTES_PREFIX;
const INT_PREFIX: &str = "\u{1}int:";
const REAL_PREFIX: &str = "\u{1}real:";

/// What SQLite's `messages.content` (TEXT affinity) holds for a value a
/// writer binds, as `api.md` §4.2 says: an integer becomes its decimal text
/// (`42` → `'42'`, a boolean's `1` → `'1'`), a real the text SQLite itself
/// makes of it (SQLite's rendering, `hermes_state_core::affinity`; a NaN
/// is NULL); text, bytes and NULL are kept.
pub fn as_written(value: StoredValue) -> StoredValue {
    match value {
        StoredValue::Integer(i) => StoredValue::Text(i.to_string()),
        StoredValue::Real(f) => real_as_text(f).map_or(StoredValue::Null, StoredValue::Text),
        other => other,
    }
}

/// The text to store for a value as SQLite would hold it; `what` names the
/// row in the error for text PostgreSQL cannot hold.
pub fn to_pg(value: &StoredValue, what: &str) -> Result<Option<String>> {
    Ok(match value {
        StoredValue::Null => None,
        StoredValue::Text(text) => Some(text_to_pg(text, what)?),
        StoredValue::Integer(i) => Some(format!("{INT_PREFIX}{i}")),
        StoredValue::Real(f) => Some(format!("{REAL_PREFIX}{f:?}")),
        StoredValue::Blob(bytes) => Some(format!("{BYTES_PREFIX}{}", STANDARD.encode(bytes))),
    })
}

/// Text for a PostgreSQL text column: the SQLite JSON marker converted, any
/// other NUL refused.
pub fn text_to_pg(text: &str, what: &str) -> Result<String> {
    let converted = match text.strip_prefix(CONTENT_JSON_PREFIX) {
        Some(json) => format!("{PG_JSON_PREFIX}{json}"),
        None => text.to_owned(),
    };
    if converted.contains('\0') {
        return Err(PgError::InvalidInput(format!(
            "{what}: PostgreSQL text cannot hold a NUL character"
        )));
    }
    Ok(converted)
}

/// The value as SQLite holds it, from the stored text (the inverse of
/// [`to_pg`]); the SQLite marker is accepted too.
pub fn from_pg(text: Option<String>) -> StoredValue {
    let Some(text) = text else {
        return StoredValue::Null;
    };
    if let Some(json) = text.strip_prefix(PG_JSON_PREFIX) {
        return StoredValue::Text(format!("{CONTENT_JSON_PREFIX}{json}"));
    }
    if let Some(encoded) = text.strip_prefix(BYTES_PREFIX)
        && let Ok(bytes) = STANDARD.decode(encoded)
    {
        return StoredValue::Blob(bytes);
    }
    if let Some(number) = text.strip_prefix(INT_PREFIX)
        && let Ok(i) = number.parse()
    {
        return StoredValue::Integer(i);
    }
    if let Some(number) = text.strip_prefix(REAL_PREFIX)
        && let Ok(f) = number.parse()
    {
        return StoredValue::Real(f);
    }
    StoredValue::Text(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_storage_class_round_trips() {
        for value in [
            StoredValue::Null,
            StoredValue::Text("plain".into()),
            StoredValue::Text(format!("{CONTENT_JSON_PREFIX}[{{\"type\": \"text\"}}]")),
            StoredValue::Integer(-42),
            StoredValue::Real(0.1),
            StoredValue::Blob(vec![0, 159, 255]),
        ] {
            let stored = to_pg(&value, "message 1").unwrap();
            assert!(!stored.as_deref().unwrap_or_default().contains('\0'));
            assert_eq!(from_pg(stored), value);
        }
    }

    #[test]
    fn a_nul_outside_the_marker_is_refused() {
        let error = to_pg(&StoredValue::Text("a\0b".into()), "message 7").unwrap_err();
        assert!(error.to_string().contains("message 7"));
    }
}
