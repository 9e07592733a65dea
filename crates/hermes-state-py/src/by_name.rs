//! TEMPORARY stand-in for `hermes_state::by_name` until it lands on main:
//! the same shape, a handful of operations, so the binding's plumbing can be
//! built and tested. Replaced by `pub use hermes_state::by_name::*`.

use hermes_state::{NewMessage, NewSession, SessionStore};
use serde_json::{Map, Value};

/// Why a call failed.
#[derive(Debug)]
pub enum CallError {
    /// The library's error.
    Library(hermes_state::Error),
    /// An error the original raises at its argument boundary.
    Boundary {
        /// The trace kind.
        kind: &'static str,
        /// The message.
        message: String,
    },
}

impl From<hermes_state::Error> for CallError {
    fn from(error: hermes_state::Error) -> Self {
        CallError::Library(error)
    }
}

/// The methods and their parameter lists.
pub const SIGNATURES: &[(&str, &str)] = &[
    ("create_session", "session_id: str, source: str, **kwargs"),
    (
        "append_message",
        "session_id: str, role: str, content: str = None",
    ),
    ("get_session", "session_id: str"),
    (
        "get_messages",
        "session_id: str, include_inactive: bool = False, limit: Optional[int] = None, offset: int = 0",
    ),
    ("close", ""),
    ("sanitize_title", "title: Optional[str]"),
];

fn str_arg<'a>(kwargs: &'a Map<String, Value>, key: &str) -> Result<&'a str, CallError> {
    kwargs
        .get(key)
        .and_then(Value::as_str)
        .ok_or(CallError::Boundary {
            kind: "invalid.argument",
            message: format!("{key} must be a string"),
        })
}

/// Calls one operation.
pub fn call(
    store: &dyn SessionStore,
    op: &str,
    kwargs: &Map<String, Value>,
) -> Result<Value, CallError> {
    match op {
        "create_session" => {
            let session =
                NewSession::new(str_arg(kwargs, "session_id")?, str_arg(kwargs, "source")?);
            Ok(serde_json::to_value(store.create_session(&session)?).unwrap_or(Value::Null))
        }
        "append_message" => {
            let mut message =
                NewMessage::new(str_arg(kwargs, "session_id")?, str_arg(kwargs, "role")?);
            if let Some(text) = kwargs.get("content").and_then(Value::as_str) {
                message = message.content(text);
            }
            Ok(serde_json::to_value(store.append_message(&message)?).unwrap_or(Value::Null))
        }
        "get_session" => Ok(serde_json::to_value(
            store.get_session(str_arg(kwargs, "session_id")?)?,
        )
        .unwrap_or(Value::Null)),
        "get_messages" => Ok(serde_json::to_value(
            store.get_messages(str_arg(kwargs, "session_id")?)?,
        )
        .unwrap_or(Value::Null)),
        "close" => {
            if let Some(db) = store.as_sqlite() {
                db.close()?;
            }
            Ok(Value::Null)
        }
        other => Err(CallError::Boundary {
            kind: "not_implemented",
            message: format!("{other} is not implemented yet"),
        }),
    }
}
