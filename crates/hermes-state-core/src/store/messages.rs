//! The `Messages` part of the contract: appending, reading, rewinding and
//! replacing messages (`api.md` §4, §5).

use crate::error::Result;
use crate::message_reads::{AnchoredView, MessagesAround, RecentUserMessage, RewindResult};
use crate::messages::{MessagePage, ResumeConversations};
use hermes_state_types::{Content, ConversationMessage, Message, NewMessage};
use serde_json::Value;

/// Appending, reading, rewinding and replacing messages (`api.md` §4, §5).
///
/// Every method has the SQLite store's meaning (`api.md`); a backend that
/// cannot offer one says so with an error, never with an empty answer.
pub trait Messages {
    /// `api.md` §4.
    fn append_message(&self, message: &NewMessage) -> Result<i64>;
    /// Several messages in one transaction.
    fn append_messages(&self, messages: &[NewMessage]) -> Result<Vec<i64>>;
    /// `api.md` §5.1.
    fn get_messages(&self, session_id: &str) -> Result<Vec<Message>>;
    /// Rows of one session or of the store.
    fn message_count(&self, session_id: Option<&str>) -> Result<i64>;
    /// `api.md` §5.1 with inactive rows and paging.
    fn get_messages_page(&self, session_id: &str, page: MessagePage) -> Result<Vec<Message>>;
    /// `api.md` §5.2: the OpenAI-style conversation of a session, rewound
    /// messages left out; with `include_ancestors` its lineage's earlier
    /// messages come first. Written once here: it is
    /// [`Messages::get_messages_as_conversation_with`] without the inactive
    /// rows.
    fn get_messages_as_conversation(
        &self,
        session_id: &str,
        include_ancestors: bool,
    ) -> Result<Vec<ConversationMessage>> {
        self.get_messages_as_conversation_with(session_id, include_ancestors, false)
    }
    /// `api.md` §5.2 with `include_inactive`.
    fn get_messages_as_conversation_with(
        &self,
        session_id: &str,
        include_ancestors: bool,
        include_inactive: bool,
    ) -> Result<Vec<ConversationMessage>>;
    /// `api.md` §5.3.
    fn get_messages_around(
        &self,
        session_id: &str,
        message_id: i64,
        window: i64,
    ) -> Result<MessagesAround>;
    /// `api.md` §5.3.
    fn list_recent_user_messages(
        &self,
        session_id: &str,
        limit: u32,
        include_inactive: bool,
    ) -> Result<Vec<RecentUserMessage>>;
    /// `api.md` §5.3.
    fn has_platform_message_id(&self, session_id: &str, platform_message_id: &str) -> Result<bool>;
    /// `api.md` §4.5.
    fn rewind_to_message(&self, session_id: &str, message_id: i64) -> Result<RewindResult>;
    /// `api.md` §4.5.
    fn restore_rewound(&self, session_id: &str, since_id: i64) -> Result<usize>;
    /// `api.md` §4.5.
    fn archive_and_compact(&self, session_id: &str, messages: &[NewMessage]) -> Result<usize>;
    /// `api.md` §4.5.
    fn replace_messages(
        &self,
        session_id: &str,
        messages: &[NewMessage],
        active_only: bool,
    ) -> Result<()>;
    /// `api.md` §4.5.
    fn set_latest_user_api_content(
        &self,
        session_id: &str,
        content: Option<&Content>,
        api_content: &str,
    ) -> Result<usize>;
    /// `api.md` §4.5.
    fn set_latest_matching_message_display_kind(
        &self,
        session_id: &str,
        role: &str,
        content: &str,
        display_kind: &str,
        display_metadata: Option<&Value>,
    ) -> Result<bool>;
    /// `api.md` §5.3.
    fn has_archived_messages(&self, session_id: &str) -> Result<bool>;
    /// Messages of the sessions of one source.
    fn message_count_of_source(&self, source: &str) -> Result<i64>;
    /// The original's `get_anchored_view` (docs/DECISIONS.md, "The
    /// original's methods beyond `api.md`"): the window around a message,
    /// role-filtered, with the session's bookends.
    fn get_anchored_view(
        &self,
        session_id: &str,
        message_id: i64,
        window: i64,
        bookend: i64,
        keep_roles: Option<&[&str]>,
    ) -> Result<AnchoredView>;
    /// The original's `get_resume_conversations`: the repaired model
    /// history and the lineage's display history.
    fn get_resume_conversations(&self, session_id: &str) -> Result<ResumeConversations>;
    /// The original's `get_ancestor_display_prefix`.
    fn get_ancestor_display_prefix(&self, session_id: &str) -> Result<Vec<ConversationMessage>>;
}
