//! Keyword arguments of a recorded call, read as the original reads them.
//!
//! A script names every argument by the original's keyword (`api.md` §0); an
//! absent key means the original's default. What a typed API cannot be
//! handed literally (an unknown keyword, a non-string title) is answered here
//! with the error the original raises before it touches the store
//! (the apidiff README beside the checkout, section 2.3), and is never silently dropped.

use serde_json::{Map, Value};

/// Why a call could not be made or failed: the library's error, or an error
/// the original raises at its argument boundary (its trace kind and text).
#[derive(Debug)]
pub enum CallError {
    Library(hermes_state::Error),
    Boundary { kind: &'static str, message: String },
}

impl From<hermes_state::Error> for CallError {
    fn from(error: hermes_state::Error) -> Self {
        CallError::Library(error)
    }
}

impl CallError {
    /// Python's `TypeError`.
    pub fn type_error(message: impl Into<String>) -> CallError {
        CallError::Boundary {
            kind: "invalid.argument",
            message: message.into(),
        }
    }
}

pub type Call<T> = Result<T, CallError>;

/// The arguments of one call.
pub struct Args<'a> {
    pub op: &'a str,
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    pub fn new(op: &'a str, map: &'a Map<String, Value>) -> Self {
        Args { op, map }
    }

    /// Refuses a keyword the original's signature does not have, as Python
    /// does before the body runs (`TypeError`).
    pub fn only(&self, known: &[&str]) -> Call<()> {
        match self.map.keys().find(|key| !known.contains(&key.as_str())) {
            Some(key) => Err(CallError::type_error(format!(
                "{}() got an unexpected keyword argument '{key}'",
                self.op
            ))),
            None => Ok(()),
        }
    }

    /// The value given, `None` when absent.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// The value given, `None` when absent or `null`.
    pub fn present(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|value| !value.is_null())
    }

    /// A required string (a missing or non-string one is the caller's
    /// `TypeError` in the original).
    pub fn str(&self, key: &str) -> Call<&'a str> {
        match self.map.get(key) {
            Some(Value::String(text)) => Ok(text),
            Some(other) => Err(CallError::type_error(format!(
                "expected string or bytes-like object, got {}",
                python_type(other)
            ))),
            None => Err(CallError::type_error(format!(
                "{}() missing required argument: '{key}'",
                self.op
            ))),
        }
    }

    /// An optional string: absent or `null` is `None`.
    pub fn opt_str(&self, key: &str) -> Call<Option<&'a str>> {
        match self.present(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(CallError::type_error(format!(
                "expected string or bytes-like object, got {}",
                python_type(other)
            ))),
        }
    }

    pub fn f64_or(&self, key: &str, default: f64) -> Call<f64> {
        Ok(self.opt_f64(key)?.unwrap_or(default))
    }

    pub fn opt_f64(&self, key: &str) -> Call<Option<f64>> {
        match self.present(key) {
            None => Ok(None),
            Some(Value::Number(number)) => Ok(number.as_f64()),
            Some(Value::Bool(flag)) => Ok(Some(f64::from(u8::from(*flag)))),
            Some(other) => Err(CallError::type_error(format!(
                "'{}' is not a number",
                python_type(other)
            ))),
        }
    }

    pub fn i64_or(&self, key: &str, default: i64) -> Call<i64> {
        Ok(self.opt_i64(key)?.unwrap_or(default))
    }

    pub fn opt_i64(&self, key: &str) -> Call<Option<i64>> {
        match self.present(key) {
            None => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(i64::from(*flag))),
            Some(Value::Number(number)) => match number.as_i64() {
                Some(integer) => Ok(Some(integer)),
                None => Err(CallError::type_error("an integer is required")),
            },
            Some(other) => Err(CallError::type_error(format!(
                "'{}' object cannot be interpreted as an integer",
                python_type(other)
            ))),
        }
    }

    /// A `LIMIT`/`OFFSET`-like count; negative values are clamped by the
    /// library's own rule, so they are passed on as given when they fit.
    pub fn u32_or(&self, key: &str, default: u32) -> Call<u32> {
        let value = self.i64_or(key, i64::from(default))?;
        u32::try_from(value).map_err(|_| CallError::type_error(format!("{key}={value}")))
    }

    /// Python truthiness of an optional flag.
    pub fn bool_or(&self, key: &str, default: bool) -> bool {
        match self.map.get(key) {
            None => default,
            Some(value) => hermes_state_types::dynamic::python_truthy(value),
        }
    }

    /// A list of strings (`None` when absent or `null`).
    pub fn opt_strings(&self, key: &str) -> Call<Option<Vec<String>>> {
        match self.present(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(text) => Ok(text.clone()),
                    other => Err(CallError::type_error(format!(
                        "expected str, got {}",
                        python_type(other)
                    ))),
                })
                .collect::<Call<Vec<String>>>()
                .map(Some),
            Some(other) => Err(CallError::type_error(format!(
                "'{}' object is not iterable as strings",
                python_type(other)
            ))),
        }
    }

    /// A dict of strings to strings, in the caller's order.
    pub fn string_pairs(&self, key: &str) -> Call<Vec<(String, String)>> {
        match self.present(key) {
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, value)| match value {
                    Value::String(text) => Ok((name.clone(), text.clone())),
                    other => Err(CallError::type_error(format!(
                        "expected str, got {}",
                        python_type(other)
                    ))),
                })
                .collect(),
            None => Ok(Vec::new()),
            Some(other) => Err(CallError::type_error(format!(
                "'{}' object has no attribute 'items'",
                python_type(other)
            ))),
        }
    }
}

/// Python's name of a JSON value's type, for boundary messages.
pub fn python_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "'NoneType'",
        Value::Bool(_) => "'bool'",
        Value::Number(number) if number.is_f64() => "'float'",
        Value::Number(_) => "'int'",
        Value::String(_) => "'str'",
        Value::Array(_) => "'list'",
        Value::Object(_) => "'dict'",
    }
}
