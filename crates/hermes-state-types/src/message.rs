use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Content, ExtraColumns};

/// One row of `messages`, decoded as the original's `get_messages` returns it
/// (`api.md` §5.1): `content` decoded, `tool_calls` parsed (invalid JSON → `[]`),
/// every other JSON column as its raw text.
#[allow(missing_docs)] // the fields are the columns of schema-v23.md §4.3
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Message {
    pub id: i64,
    pub session_id: String,
    pub role: String,
    pub content: Option<Content>,
    pub tool_call_id: Option<String>,
    pub tool_calls: Option<Value>,
    pub tool_name: Option<String>,
    pub effect_disposition: Option<String>,
    pub timestamp: f64,
    pub token_count: Option<i64>,
    pub finish_reason: Option<String>,
    pub reasoning: Option<String>,
    pub reasoning_content: Option<String>,
    pub reasoning_details: Option<String>,
    pub codex_reasoning_items: Option<String>,
    pub codex_message_items: Option<String>,
    pub platform_message_id: Option<String>,
    pub observed: Option<i64>,
    pub active: i64,
    pub compacted: i64,
    pub api_content: Option<String>,
    pub display_kind: Option<String>,
    pub display_metadata: Option<String>,
    /// Columns the v23 schema does not declare, by name, in table order.
    #[serde(flatten)]
    pub extra: ExtraColumns,
}

/// The arguments of `append_message` (`api.md` §4.1).
///
/// Only `session_id` and `role` are required. Build it with
/// [`NewMessage::new`] and the setters.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NewMessage {
    /// The session the message belongs to; it must exist.
    pub session_id: String,
    /// `user`, `assistant`, `tool`, `system`, ... (free text).
    pub role: String,
    /// The content; `None` stores NULL.
    pub content: Option<Content>,
    /// Name of the tool, on `tool` rows.
    pub tool_name: Option<String>,
    /// The assistant's tool calls: a JSON array (or object). A JSON *string* is
    /// parsed first, as the original does (invalid JSON counts as no calls).
    pub tool_calls: Option<Value>,
    /// The call this `tool` row answers.
    pub tool_call_id: Option<String>,
    /// Token count of the message.
    pub token_count: Option<i64>,
    /// Why generation stopped.
    pub finish_reason: Option<String>,
    /// Reasoning text.
    pub reasoning: Option<String>,
    /// Provider reasoning content (`""` is kept, distinct from NULL).
    pub reasoning_content: Option<String>,
    /// Structured reasoning details (JSON).
    pub reasoning_details: Option<Value>,
    /// Codex reasoning items (JSON).
    pub codex_reasoning_items: Option<Value>,
    /// Codex message items (JSON).
    pub codex_message_items: Option<Value>,
    /// The external platform's message id.
    pub platform_message_id: Option<String>,
    /// Whether the message was observed rather than sent to the model.
    pub observed: bool,
    /// Effect disposition of a tool call (free text).
    pub effect_disposition: Option<String>,
    /// Unix seconds; now when `None`.
    pub timestamp: Option<f64>,
    /// The exact wire string, when it differed from `content`.
    pub api_content: Option<String>,
    /// Display kind, e.g. `steer` or `hidden`.
    pub display_kind: Option<String>,
    /// Display metadata (JSON object).
    pub display_metadata: Option<Value>,
}

impl NewMessage {
    /// A message of this role in this session, every optional field empty.
    pub fn new(session_id: impl Into<String>, role: impl Into<String>) -> Self {
        NewMessage {
            session_id: session_id.into(),
            role: role.into(),
            ..Default::default()
        }
    }

    /// Sets the content.
    #[must_use]
    pub fn content(mut self, content: impl Into<Content>) -> Self {
        self.content = Some(content.into());
        self
    }

    /// Sets the tool calls.
    #[must_use]
    pub fn tool_calls(mut self, calls: Value) -> Self {
        self.tool_calls = Some(calls);
        self
    }

    /// Sets `tool_name` and `tool_call_id` of a tool result.
    #[must_use]
    pub fn tool_result(
        mut self,
        tool_name: impl Into<String>,
        tool_call_id: impl Into<String>,
    ) -> Self {
        self.tool_name = Some(tool_name.into());
        self.tool_call_id = Some(tool_call_id.into());
        self
    }

    /// Sets the timestamp (Unix seconds).
    #[must_use]
    pub fn timestamp(mut self, timestamp: f64) -> Self {
        self.timestamp = Some(timestamp);
        self
    }

    /// Sets the finish reason.
    #[must_use]
    pub fn finish_reason(mut self, reason: impl Into<String>) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    /// Sets the reasoning text.
    #[must_use]
    pub fn reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// Sets the token count.
    #[must_use]
    pub fn token_count(mut self, count: i64) -> Self {
        self.token_count = Some(count);
        self
    }
}

/// One entry of the OpenAI-style conversation built by
/// `get_messages_as_conversation` (`api.md` §5.2).
///
/// A key is present only when the original would include it, in the original's
/// key order, so the serialised form is the original's dict.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ConversationMessage {
    pub role: String,
    /// Always present; `null` when the stored content is NULL.
    pub content: Option<Content>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub api_content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub display_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub display_metadata: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub timestamp: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tool_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub effect_disposition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tool_calls: Option<Value>,
    /// The stored `platform_message_id`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub message_id: Option<String>,
    /// `Some(true)` when the stored flag is non-zero, else absent.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub observed: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub finish_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reasoning: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reasoning_content: Option<String>,
    /// Parsed JSON; `Some(Value::Null)` when the stored text is not valid JSON.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reasoning_details: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub codex_reasoning_items: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub codex_message_items: Option<Value>,
}
