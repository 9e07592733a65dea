//! The opt-in Telegram DM topic tables (`api.md` §12.4): the types both
//! backends share (a binding, a binding to make, the refusal's text) and
//! the `state_meta` mark of the opt-in.

use serde::Serialize;

/// The `state_meta` key the Telegram topic opt-in sets (`api.md` §12.4).
pub const TOPIC_SCHEMA_VERSION_KEY: &str = "telegram_dm_topic_schema_version";
/// The value of [`TOPIC_SCHEMA_VERSION_KEY`] after the opt-in.
pub const TOPIC_SCHEMA_VERSION: &str = "2";

/// One row of `telegram_dm_topic_bindings`, serialised as the original's
/// `dict(row)` of `SELECT *`: its columns in table order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopicBinding {
    /// The private chat.
    pub chat_id: String,
    /// The topic thread in that chat.
    pub thread_id: String,
    /// The Telegram user.
    pub user_id: String,
    /// The gateway's session key.
    pub session_key: String,
    /// The bound session.
    pub session_id: String,
    /// `auto` unless the caller said otherwise.
    pub managed_mode: String,
    /// When the binding was first made (Unix seconds).
    pub linked_at: f64,
    /// When it was last (re)bound.
    pub updated_at: f64,
}

/// The original's `ValueError` text when a session is bound elsewhere.
pub const ALREADY_LINKED: &str = "session is already linked to another Telegram topic";

/// One topic binding to make (the original's `bind_telegram_topic`), on
/// every backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicBindingRequest<'a> {
    /// The private chat.
    pub chat_id: &'a str,
    /// The topic thread.
    pub thread_id: &'a str,
    /// The Telegram user.
    pub user_id: &'a str,
    /// The gateway's session key.
    pub session_key: &'a str,
    /// The session to bind; it must exist (the key's `FOREIGN KEY`).
    pub session_id: &'a str,
    /// `auto` in the original's default.
    pub managed_mode: &'a str,
}
