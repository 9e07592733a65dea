use serde::{Serialize, Serializer};
use serde_json::Value;

/// The content of a message, in the shapes the original store accepts.
///
/// How each shape is stored (`api.md` §4.2; the codec is [`crate::stored`]):
/// * [`Content::Text`]: the string itself, NUL bytes included;
/// * [`Content::Structured`]: a JSON list or object (multimodal content), stored as
///   the string `"\x00json:"` followed by Python-compatible JSON text;
/// * [`Content::Integer`], [`Content::Real`], [`Content::Bool`]: bound as numbers and
///   turned into text by the column's TEXT affinity (`42` → `'42'`, `true` → `'1'`);
/// * [`Content::Bytes`]: a BLOB.
///
/// When read back, content is [`Content::Text`], [`Content::Structured`] (the
/// `"\x00json:"` prefix was removed and the JSON parsed) or [`Content::Bytes`].
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Multimodal content: a JSON array or object.
    Structured(Value),
    /// An integer; stored as its decimal text.
    Integer(i64),
    /// A float; stored as text by SQLite's conversion.
    Real(f64),
    /// A boolean; stored as `'1'` or `'0'`.
    Bool(bool),
    /// Raw bytes, stored as a BLOB.
    Bytes(Vec<u8>),
}

impl Content {
    /// The marker that starts stored multimodal content: a NUL byte, then `json:`
    /// ([`crate::stored::CONTENT_JSON_PREFIX`]).
    pub const JSON_PREFIX: &'static str = crate::stored::CONTENT_JSON_PREFIX;

    /// The text, when this is [`Content::Text`].
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(text) => Some(text),
            _ => None,
        }
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::Text(text.to_owned())
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::Text(text)
    }
}

impl From<Value> for Content {
    /// Strings become text, arrays and objects structured content, numbers and
    /// booleans their scalar shapes; `null` becomes the empty text.
    fn from(value: Value) -> Self {
        match value {
            Value::String(text) => Content::Text(text),
            Value::Bool(b) => Content::Bool(b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Content::Integer(i),
                None => Content::Real(n.as_f64().unwrap_or(0.0)),
            },
            Value::Null => Content::Text(String::new()),
            other => Content::Structured(other),
        }
    }
}

impl Serialize for Content {
    /// Serialises as the original's decoded value: a string, the JSON value, a
    /// number or boolean; bytes as a list of integers (JSON has no bytes).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Text(text) => serializer.serialize_str(text),
            Content::Structured(value) => value.serialize(serializer),
            Content::Integer(i) => serializer.serialize_i64(*i),
            Content::Real(f) => serializer.serialize_f64(*f),
            Content::Bool(b) => serializer.serialize_bool(*b),
            Content::Bytes(bytes) => bytes.serialize(serializer),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(Content::from)
    }
}
