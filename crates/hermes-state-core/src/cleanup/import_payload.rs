//! The original's first pass over an `import_sessions` payload: what it
//! refuses (each session's first problem, with the original's text) and
//! what it normalises before anything is written.

use std::collections::HashSet;

use hermes_state_types::{pyjson, pyvalue};
use serde_json::{Map, Value};

use super::RefusedSession;
use crate::error::{Error, Result};

/// At most this many sessions per import.
const MAX_SESSIONS: usize = 500;
/// At most this many messages per session.
const MAX_SESSION_MESSAGES: usize = 10_000;
/// At most this many messages per import.
const MAX_MESSAGES: usize = 50_000;
/// At most this many bytes of compact JSON per session (messages included).
const MAX_SESSION_BYTES: usize = 5 << 20;
/// At most this many bytes of compact JSON per import.
const MAX_TOTAL_BYTES: usize = 25 << 20;

/// The session fields that must be text or null, in the order checked.
const SESSION_TEXT_FIELDS: [&str; 15] = [
    "source",
    "user_id",
    "model",
    "system_prompt",
    "end_reason",
    "cwd",
    "git_branch",
    "git_repo_root",
    "billing_provider",
    "billing_base_url",
    "billing_mode",
    "cost_status",
    "cost_source",
    "pricing_version",
    "title",
];

/// The message fields (after `role`) that must be text or null, in the
/// order checked.
const MESSAGE_TEXT_FIELDS: [&str; 8] = [
    "tool_call_id",
    "tool_name",
    "effect_disposition",
    "finish_reason",
    "reasoning",
    "reasoning_content",
    "platform_message_id",
    "message_id",
];

/// A session the first pass accepted.
pub(crate) struct Accepted<'a> {
    /// Python `str(id).strip()` of the given id.
    pub id: String,
    /// The item as given; its text fields are text or null.
    pub raw: &'a Map<String, Value>,
    /// `model_config` as stored: JSON text of an object as given, or an
    /// object as Python `json.dumps` writes it.
    pub model_config: Option<String>,
    /// Its messages (each an object with a non-empty text `role`, its text
    /// fields text or null, `token_count` an integer or null).
    pub messages: Vec<&'a Map<String, Value>>,
}

/// Which of the original's limits apply: all (`import_sessions`), or only
/// one session's (10 000 messages, 5 MiB) for a document of many calls'.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limits {
    PerCall,
    PerSession,
}

/// The outcome of the first pass.
pub(crate) enum Checked<'a> {
    /// Every session passed.
    Accepted(Vec<Accepted<'a>>),
    /// At least one did not: nothing is written.
    Refused(Vec<RefusedSession>),
}

/// Runs the first pass. A payload that is not a list, or (per call) a list
/// of more than 500 sessions, is an error ([`Error::InvalidInput`] with the
/// original's text); a session the original refuses is reported.
pub(crate) fn check(sessions: &Value, limits: Limits) -> Result<Checked<'_>> {
    let Some(list) = sessions.as_array() else {
        return Err(Error::InvalidValue("sessions must be a list".to_owned()));
    };
    let per_call = limits == Limits::PerCall;
    if per_call && list.len() > MAX_SESSIONS {
        return Err(Error::InvalidValue(format!(
            "sessions must contain at most {MAX_SESSIONS} entries"
        )));
    }
    let mut accepted = Vec::with_capacity(list.len());
    let mut refused = Vec::new();
    let mut seen = HashSet::new();
    let (mut total_messages, mut total_bytes) = (0usize, 0usize);
    for (index, value) in list.iter().enumerate() {
        let refuse = |session_id: &str, error: &str| RefusedSession {
            index,
            session_id: (!session_id.is_empty()).then(|| session_id.to_owned()),
            error: error.to_owned(),
        };
        let Some(raw) = value.as_object() else {
            refused.push(refuse("", "session must be an object"));
            continue;
        };
        let id = raw
            .get("id")
            .filter(|id| pyjson::is_truthy(id))
            .map(|id| hermes_state_types::text::python_strip(&pyvalue::to_str(id)).to_owned())
            .unwrap_or_default();
        if id.is_empty() {
            refused.push(refuse("", "session id is required"));
            continue;
        }
        if seen.contains(&id) {
            refused.push(refuse(&id, "duplicate session id"));
            continue;
        }
        let messages = match raw.get("messages").filter(|m| pyjson::is_truthy(m)) {
            None => &[][..],
            Some(Value::Array(messages)) => messages.as_slice(),
            Some(_) => {
                refused.push(refuse(&id, "messages must be a list"));
                continue;
            }
        };
        if messages.len() > MAX_SESSION_MESSAGES {
            refused.push(refuse(&id, "messages exceeds the per-session import limit"));
            continue;
        }
        let Some(messages) = messages
            .iter()
            .map(Value::as_object)
            .collect::<Option<Vec<_>>>()
        else {
            refused.push(refuse(&id, "messages must contain only objects"));
            continue;
        };
        let bytes = pyjson::compact_utf8_len(value);
        if bytes > MAX_SESSION_BYTES {
            refused.push(refuse(&id, "session exceeds the import size limit"));
            continue;
        }
        total_bytes += bytes;
        if per_call && total_bytes > MAX_TOTAL_BYTES {
            refused.push(refuse(&id, "import exceeds the total size limit"));
            continue;
        }
        let model_config = match check_fields(raw, &messages) {
            Ok(model_config) => model_config,
            Err(error) => {
                refused.push(refuse(&id, &error));
                continue;
            }
        };
        // Counted before the check: once over, every later session is refused too.
        total_messages += messages.len();
        if per_call && total_messages > MAX_MESSAGES {
            refused.push(refuse(&id, "messages exceeds the total import limit"));
            continue;
        }
        seen.insert(id.clone());
        accepted.push(Accepted {
            id,
            raw,
            model_config,
            messages,
        });
    }
    Ok(if refused.is_empty() {
        Checked::Accepted(accepted)
    } else {
        Checked::Refused(refused)
    })
}

/// The field checks of one session, in the original's order; the first
/// failure's text. Returns `model_config` as stored.
fn check_fields(
    raw: &Map<String, Value>,
    messages: &[&Map<String, Value>],
) -> std::result::Result<Option<String>, String> {
    let model_config = json_object_text(raw.get("model_config"), "model_config")?;
    text_or_null(raw, "parent_session_id")?;
    for field in SESSION_TEXT_FIELDS {
        text_or_null(raw, field)?;
    }
    for (at, message) in messages.iter().enumerate() {
        if message
            .get("role")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(format!("messages[{at}].role must be a non-empty string"));
        }
        for field in MESSAGE_TEXT_FIELDS {
            text_or_null(message, field)?;
        }
        if let Some(count) = message.get("token_count").filter(|v| !v.is_null())
            && pyvalue::to_int(count) == pyvalue::Int::Invalid
        {
            return Err("token_count must be an integer".to_owned());
        }
    }
    Ok(model_config)
}

fn text_or_null(object: &Map<String, Value>, field: &str) -> std::result::Result<(), String> {
    match object.get(field) {
        None | Some(Value::Null | Value::String(_)) => Ok(()),
        Some(_) => Err(format!("{field} must be a string")),
    }
}

/// `model_config`: null; text that parses (as Python's `json` does) to an
/// object, kept as given; or an object, written as `json.dumps` does.
fn json_object_text(
    value: Option<&Value>,
    field: &str,
) -> std::result::Result<Option<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => match pyjson::reserialize(text) {
            None => Err(format!("{field} must be valid JSON")),
            Some(parsed) if parsed.kind != pyjson::TopLevel::Object => {
                Err(format!("{field} must be a JSON object"))
            }
            Some(_) => Ok(Some(text.clone())),
        },
        Some(object @ Value::Object(_)) => Ok(Some(pyjson::to_string(object))),
        Some(_) => Err(format!("{field} must be a JSON object")),
    }
}
