//! How a message's fields are stored in `messages`, and how they are read
//! back: the one codec every writer and reader of the workspace calls
//! (`api.md` §0.3, §4.2, §5.1).
//!
//! It works on plain values — [`StoredValue`] and [`StoredValueRef`] are
//! SQLite's five storage classes without SQLite — so this crate stays free of
//! a database; the SQLite crates convert their cells at their edge.
//!
//! * `content` ([`encode_content`], [`decode_content`]): text as is, with its
//!   full length (NUL bytes included); structured content (a list or object)
//!   as [`CONTENT_JSON_PREFIX`] followed by Python `json.dumps` text
//!   ([`crate::pyjson`]); numbers and booleans as numbers (the column's TEXT
//!   affinity stores their text); bytes as a BLOB.
//! * `tool_calls` ([`encode_tool_calls`], [`decode_tool_calls`]): JSON text
//!   when truthy, else NULL; a string is parsed first, as the original does.
//! * `reasoning_details`, `codex_reasoning_items`, `codex_message_items`,
//!   `display_metadata` ([`encode_json_field`]): JSON text when truthy, else
//!   NULL; the readers hand back the raw text.
//! * The JSONL export writes content decoded only where that is lossless
//!   ([`content_to_json`], [`content_from_json`]).
//!
//! The readers are lenient, because files written by other builds hold
//! anything: invalid JSON after the prefix reads as the raw text, and every
//! storage class but BLOB reads as text. The format is ambiguous, as the
//! original's is: text that itself starts with the prefix followed by valid
//! JSON reads back as structured content.

use serde_json::Value;

use crate::Content;
use crate::pyjson;

/// The marker that starts stored structured content: a NUL byte, then `json:`.
pub const CONTENT_JSON_PREFIX: &str = "\u{0}json:";

/// A value as a SQLite column holds it, owned: what a writer binds.
#[derive(Debug, Clone, PartialEq)]
pub enum StoredValue {
    /// `NULL`.
    Null,
    /// An `INTEGER`.
    Integer(i64),
    /// A `REAL`.
    Real(f64),
    /// `TEXT`.
    Text(String),
    /// A `BLOB`.
    Blob(Vec<u8>),
}

impl StoredValue {
    /// The borrowed form, as a reader would see this value.
    pub fn as_ref(&self) -> StoredValueRef<'_> {
        match self {
            StoredValue::Null => StoredValueRef::Null,
            StoredValue::Integer(i) => StoredValueRef::Integer(*i),
            StoredValue::Real(f) => StoredValueRef::Real(*f),
            StoredValue::Text(text) => StoredValueRef::Text(text.as_bytes()),
            StoredValue::Blob(bytes) => StoredValueRef::Blob(bytes),
        }
    }
}

impl From<Content> for StoredValue {
    /// [`encode_content`] of owned content, without copying text or bytes.
    fn from(content: Content) -> Self {
        match content {
            Content::Text(text) => StoredValue::Text(text),
            Content::Bytes(bytes) => StoredValue::Blob(bytes),
            other => encode_content(&other),
        }
    }
}

/// A value as a SQLite column holds it, borrowed from the row: what a reader
/// decodes. `Text` is raw bytes: a damaged file may hold invalid UTF-8.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StoredValueRef<'a> {
    /// `NULL`.
    Null,
    /// An `INTEGER`.
    Integer(i64),
    /// A `REAL`.
    Real(f64),
    /// `TEXT`, as stored (normally UTF-8).
    Text(&'a [u8]),
    /// A `BLOB`.
    Blob(&'a [u8]),
}

impl StoredValueRef<'_> {
    /// The text of any storage class, as the readers take a text column;
    /// `NULL` → `None`. Numbers give their decimal text; invalid UTF-8 (in
    /// TEXT or a BLOB) is replaced, never refused.
    pub fn to_text_lossy(self) -> Option<String> {
        match self {
            StoredValueRef::Null => None,
            StoredValueRef::Integer(i) => Some(i.to_string()),
            StoredValueRef::Real(f) => Some(f.to_string()),
            StoredValueRef::Text(bytes) | StoredValueRef::Blob(bytes) => {
                Some(String::from_utf8_lossy(bytes).into_owned())
            }
        }
    }
}

/// How content is stored (`api.md` §4.2): text as is, structured content as
/// [`structured_content_text`], integers and reals as numbers, booleans as
/// `1`/`0`, bytes as a BLOB. NULL content is the caller's `None`.
pub fn encode_content(content: &Content) -> StoredValue {
    match content {
        Content::Text(text) => StoredValue::Text(text.clone()),
        Content::Structured(value) => StoredValue::Text(structured_content_text(value)),
        Content::Integer(i) => StoredValue::Integer(*i),
        Content::Real(f) => StoredValue::Real(*f),
        Content::Bool(b) => StoredValue::Integer(i64::from(*b)),
        Content::Bytes(bytes) => StoredValue::Blob(bytes.clone()),
    }
}

/// The stored text of structured content: [`CONTENT_JSON_PREFIX`] + Python
/// `json.dumps` of the value.
pub fn structured_content_text(value: &Value) -> String {
    format!("{CONTENT_JSON_PREFIX}{}", pyjson::to_string(value))
}

/// Decodes stored content as `get_messages` does (`api.md` §5.1): NULL →
/// `None`, a BLOB → bytes, any other storage class → its text (see
/// [`StoredValueRef::to_text_lossy`]) decoded by [`decode_content_text`].
pub fn decode_content(value: StoredValueRef<'_>) -> Option<Content> {
    match value {
        StoredValueRef::Null => None,
        StoredValueRef::Blob(bytes) => Some(Content::Bytes(bytes.to_vec())),
        other => other.to_text_lossy().map(decode_content_text),
    }
}

/// Decodes stored content text: after [`CONTENT_JSON_PREFIX`], the JSON is
/// parsed into [`Content::Structured`] (whatever JSON it is); invalid JSON
/// after the prefix, and text without it, give the text back as is, as the
/// original does.
pub fn decode_content_text(text: String) -> Content {
    if let Some(Ok(value)) = text
        .strip_prefix(CONTENT_JSON_PREFIX)
        .map(serde_json::from_str::<Value>)
    {
        return Content::Structured(value);
    }
    Content::Text(text)
}

/// Stored content as the JSONL export writes it decoded, when that is
/// lossless: NULL → `null`; UTF-8 text → the string, except structured
/// content whose JSON is an array or object that re-encodes to exactly the
/// stored text → that value. `None` for every other value (numbers, BLOBs,
/// text that is not UTF-8): the export writes those in its plain encoding.
///
/// Whatever this returns, [`content_from_json`] turns back into the same
/// stored value.
pub fn content_to_json(value: StoredValueRef<'_>) -> Option<Value> {
    match value {
        StoredValueRef::Null => Some(Value::Null),
        StoredValueRef::Text(bytes) => {
            let text = std::str::from_utf8(bytes).ok()?;
            if let Some(json) = text.strip_prefix(CONTENT_JSON_PREFIX)
                && let Ok(parsed) = serde_json::from_str::<Value>(json)
                && (parsed.is_array() || parsed.is_object())
                && pyjson::to_string(&parsed) == json
            {
                return Some(parsed);
            }
            Some(Value::String(text.to_owned()))
        }
        _ => None,
    }
}

/// Decoded content in the export's JSON form back to what the store holds:
/// `null` → NULL, a string → that text, an array or object → structured
/// content ([`encode_content`]); `None` for a number or a boolean, which
/// [`content_to_json`] never produces.
pub fn content_from_json(value: Value) -> Option<StoredValue> {
    match value {
        Value::Null => Some(StoredValue::Null),
        Value::String(text) => Some(Content::Text(text).into()),
        structured @ (Value::Array(_) | Value::Object(_)) => {
            Some(Content::Structured(structured).into())
        }
        Value::Bool(_) | Value::Number(_) => None,
    }
}

/// The stored form of a message's tool calls (`api.md` §4.2, §4.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredToolCalls {
    /// The `tool_calls` column: JSON text, or `None` (NULL) when not truthy.
    pub text: Option<String>,
    /// The number of calls for the session's `tool_call_count`: a list
    /// counts its entries, any other non-null value one (even when stored as
    /// NULL, as `{}` is), `null` none.
    pub count: i64,
}

/// Encodes the tool calls of `append_message`.
///
/// The original parses a string given as tool calls with `json.loads`
/// (invalid JSON → no calls) and writes it back with `json.dumps`; that is
/// done text to text by [`pyjson::reserialize`], which keeps what a [`Value`]
/// cannot (integers beyond 64 bits, `-0` as `0`, `NaN` and `Infinity`,
/// escaped lone surrogates).
pub fn encode_tool_calls(value: Option<&Value>) -> StoredToolCalls {
    const NONE: StoredToolCalls = StoredToolCalls {
        text: None,
        count: 0,
    };
    match value {
        None | Some(Value::Null) => NONE,
        Some(Value::String(text)) => {
            let Some(parsed) = pyjson::reserialize(text) else {
                return NONE;
            };
            let count = match parsed.kind {
                pyjson::TopLevel::Null => return NONE,
                pyjson::TopLevel::Array { len } => len as i64,
                _ => 1,
            };
            StoredToolCalls {
                text: parsed.truthy.then_some(parsed.text),
                count,
            }
        }
        Some(calls) => StoredToolCalls {
            text: pyjson::is_truthy(calls).then(|| pyjson::to_string(calls)),
            count: match calls {
                Value::Array(list) => list.len() as i64,
                _ => 1,
            },
        },
    }
}

/// Decodes stored `tool_calls` as `get_messages` does (`api.md` §5.1): NULL
/// → `None`; non-empty text (of any storage class) parsed as JSON, invalid →
/// `[]`; the empty string stays a string, as in the original.
pub fn decode_tool_calls(value: StoredValueRef<'_>) -> Option<Value> {
    let raw = value.to_text_lossy()?;
    if raw.is_empty() {
        return Some(Value::String(raw));
    }
    Some(serde_json::from_str(&raw).unwrap_or_else(|_| Value::Array(Vec::new())))
}

/// Encodes `reasoning_details`, `codex_reasoning_items`,
/// `codex_message_items` and `display_metadata` (`api.md` §4.2): Python
/// `json.dumps` text when the value is truthy, else `None` (NULL; `{}` and
/// `[]` included).
pub fn encode_json_field(value: Option<&Value>) -> Option<String> {
    value
        .filter(|v| pyjson::is_truthy(v))
        .map(pyjson::to_string)
}

#[cfg(test)]
mod tests;
