//! Keyword arguments of a call by name, read as the original reads them.
//!
//! Every argument is named by the original's keyword (`api.md` §0); an
//! absent key means the original's default. What a typed API cannot be
//! handed literally (an unknown keyword, a non-string title) is answered here
//! with the error the original raises before it touches the store, and is
//! never silently dropped.

use serde_json::{Map, Value};

/// Why a call by name could not be made or failed.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The store refused or failed; [`crate::Error::original_class`] names
    /// the original's exception.
    #[error(transparent)]
    Library(#[from] crate::Error),
    /// The original raises this before it touches the store (its argument
    /// boundary): `kind` is the portable class of its traces
    /// (`invalid.argument` is Python's `TypeError`, `integrity.not_null` a
    /// NOT NULL failure of `sqlite3`), `message` the original's text.
    #[error("{message}")]
    Boundary {
        /// The trace kind of the original's exception.
        kind: &'static str,
        /// The original's text.
        message: String,
    },
    /// The original has no method of this name (Python's `AttributeError`).
    #[error("'SessionDB' object has no attribute '{0}'")]
    UnknownOperation(String),
}

impl CallError {
    /// Python's `TypeError`.
    pub fn type_error(message: impl Into<String>) -> CallError {
        CallError::Boundary {
            kind: "invalid.argument",
            message: message.into(),
        }
    }

    /// The portable class of this failure as the original's traces name it
    /// (`integrity.foreign_key`, `invalid.argument`, …); `None` for a
    /// library failure the original has no class for (a lock, an I/O error).
    pub fn trace_kind(&self) -> Option<&'static str> {
        match self {
            CallError::Library(error) => error.original_class().map(|class| class.trace_kind()),
            CallError::Boundary { kind, .. } => Some(kind),
            CallError::UnknownOperation(_) => Some("invalid.attribute"),
        }
    }
}

/// The outcome of one call by name.
pub type Call<T> = Result<T, CallError>;

/// The keyword arguments of one call.
pub(super) struct Args<'a> {
    /// The method's name, for the original's `TypeError` texts.
    pub(super) op: &'a str,
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// The keyword map `map` of a call of `op`.
    pub(super) fn new(op: &'a str, map: &'a Map<String, Value>) -> Self {
        Args { op, map }
    }

    /// Refuses a keyword the original's signature does not have, as Python
    /// does before the body runs (`TypeError`).
    pub(super) fn only(&self, known: &[&str]) -> Call<()> {
        match self.map.keys().find(|key| !known.contains(&key.as_str())) {
            Some(key) => Err(CallError::type_error(format!(
                "{}() got an unexpected keyword argument '{key}'",
                self.op
            ))),
            None => Ok(()),
        }
    }

    /// The value given, `None` when absent.
    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// The value given, `None` when absent or `null`.
    pub(super) fn present(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|value| !value.is_null())
    }

    /// A required string (a missing or non-string one is the caller's
    /// `TypeError` in the original).
    pub(super) fn str(&self, key: &str) -> Call<&'a str> {
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

    /// A required argument the original passes through Python's `str()`
    /// (any value: `12345` is `"12345"`).
    pub(super) fn python_str(&self, key: &str) -> Call<String> {
        match self.map.get(key) {
            Some(value) => Ok(hermes_state_types::pyvalue::to_str(value)),
            None => Err(CallError::type_error(format!(
                "{}() missing required argument: '{key}'",
                self.op
            ))),
        }
    }

    /// An optional string: absent or `null` is `None`.
    pub(super) fn opt_str(&self, key: &str) -> Call<Option<&'a str>> {
        match self.present(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(CallError::type_error(format!(
                "expected string or bytes-like object, got {}",
                python_type(other)
            ))),
        }
    }

    /// An optional value the original binds straight into a TEXT column
    /// (`create_session`'s keywords): text as it is, and a number as
    /// SQLite's TEXT affinity stores it (`9` → `'9'`, `True` → `'1'`,
    /// `2.5` → `'2.5'`); a list or dict cannot be bound (the original's
    /// `sqlite3` refuses it).
    pub(super) fn opt_column_text(&self, key: &str) -> Call<Option<String>> {
        match self.present(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(Value::Bool(flag)) => Ok(Some(if *flag { "1" } else { "0" }.to_owned())),
            Some(Value::Number(number)) => Ok(Some(match number.as_i64() {
                Some(integer) => integer.to_string(),
                None => match number.as_f64() {
                    Some(real) => sqlite_real_text(real),
                    None => number.to_string(),
                },
            })),
            Some(other) => Err(CallError::Boundary {
                kind: "invalid.argument",
                message: format!(
                    "Error binding parameter: type {} is not supported",
                    python_type(other)
                ),
            }),
        }
    }

    /// A number, `default` when absent or `None`.
    pub(super) fn f64_or(&self, key: &str, default: f64) -> Call<f64> {
        Ok(self.opt_f64(key)?.unwrap_or(default))
    }

    /// A number (a bool counts as 0 or 1, as in Python).
    pub(super) fn opt_f64(&self, key: &str) -> Call<Option<f64>> {
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

    /// An integer, `default` when absent or `None`.
    pub(super) fn i64_or(&self, key: &str, default: i64) -> Call<i64> {
        Ok(self.opt_i64(key)?.unwrap_or(default))
    }

    /// An integer (a bool counts as 0 or 1, as in Python).
    pub(super) fn opt_i64(&self, key: &str) -> Call<Option<i64>> {
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
    pub(super) fn u32_or(&self, key: &str, default: u32) -> Call<u32> {
        let value = self.i64_or(key, i64::from(default))?;
        u32::try_from(value).map_err(|_| CallError::type_error(format!("{key}={value}")))
    }

    /// Python truthiness of an optional flag.
    pub(super) fn bool_or(&self, key: &str, default: bool) -> bool {
        match self.map.get(key) {
            None => default,
            Some(value) => hermes_state_types::dynamic::python_truthy(value),
        }
    }

    /// A list of strings (`None` when absent or `null`).
    pub(super) fn opt_strings(&self, key: &str) -> Call<Option<Vec<String>>> {
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
    pub(super) fn string_pairs(&self, key: &str) -> Call<Vec<(String, String)>> {
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

/// The text SQLite's TEXT affinity makes of a REAL (`%!.15g`: 15
/// significant digits, a `.0` kept on whole numbers).
fn sqlite_real_text(real: f64) -> String {
    if !real.is_finite() {
        return if real.is_nan() {
            String::new()
        } else if real > 0.0 {
            "Inf".to_owned()
        } else {
            "-Inf".to_owned()
        };
    }
    let scientific = format!("{real:.14e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..15).contains(&exponent) {
        let decimals = usize::try_from(14 - exponent).unwrap_or(0);
        let fixed = format!("{real:.decimals$}");
        let trimmed = fixed.trim_end_matches('0');
        if let Some(whole) = trimmed.strip_suffix('.') {
            format!("{whole}.0")
        } else {
            trimmed.to_owned()
        }
    } else {
        let mantissa = mantissa.trim_end_matches('0');
        let mantissa = mantissa
            .strip_suffix('.')
            .map_or(mantissa.to_owned(), |m| format!("{m}.0"));
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.abs())
    }
}

/// Python's name of a JSON value's type, for boundary messages.
pub(super) fn python_type(value: &Value) -> &'static str {
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
