//! Reading messages (`api.md` §5): which rows a page holds, the views a
//! resume builds from a lineage's messages (every backend reads the rows
//! its way, then builds them here), and which session a count counts.

use hermes_state_types::{ConversationMessage, Message};
use serde::{Serialize, Serializer};

use crate::conversation::build_conversation;
use crate::conversation_repair::{ConversationDict, RepairError, repaired};

/// Which rows `get_messages` returns: the original's `include_inactive`,
/// `limit` and `offset` keyword arguments (`api.md` §5.1), whose
/// [`Default`] is the original's defaults, over the whole integer range the
/// original takes, with SQLite's meaning: a negative `limit` is no limit, a
/// negative `offset` skips nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MessagePage {
    /// Include rewound and compacted rows (`active = 0`).
    pub include_inactive: bool,
    /// At most this many rows (`None` or negative: all).
    pub limit: Option<i64>,
    /// Skip this many rows (0 or negative: none).
    pub offset: i64,
}

/// The two views a resume needs, from one read of the lineage's messages
/// (`get_resume_conversations`): serialised as the original's pair
/// `(model_history, display_history)`, a two-element list.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResumeConversations {
    /// The session's own active messages as the conversation view, with the
    /// role-alternation repair applied (the live-replay history).
    pub model_history: Vec<ConversationDict>,
    /// The whole lineage's active messages, root first, as the conversation
    /// view with ancestors (replayed user messages dropped).
    pub display_history: Vec<ConversationMessage>,
}

impl Serialize for ResumeConversations {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&self.model_history, &self.display_history).serialize(serializer)
    }
}

/// The resume views of `session_id` from its lineage's active messages in
/// id order (every backend reads them its way, then builds them here).
pub fn resume_conversations(
    rows: &[Message],
    session_id: &str,
) -> Result<ResumeConversations, RepairError> {
    let tip: Vec<Message> = rows
        .iter()
        .filter(|row| row.session_id == session_id)
        .cloned()
        .collect();
    Ok(ResumeConversations {
        model_history: repaired(&build_conversation(&tip, false))?,
        display_history: build_conversation(rows, true),
    })
}

/// The ancestors' part of the display history, from the lineage's active
/// messages in id order (for a lineage of more than one session).
pub fn ancestor_display_prefix(rows: &[Message], session_id: &str) -> Vec<ConversationMessage> {
    let ancestors: Vec<Message> = rows
        .iter()
        .filter(|row| row.session_id != session_id)
        .cloned()
        .collect();
    build_conversation(&ancestors, true)
}

/// The session `message_count` counts: `None` (the whole store) for no id
/// and for the empty one, which the original's truth test treats alike.
/// Every backend applies it.
pub fn counted_session(session_id: Option<&str>) -> Option<&str> {
    session_id.filter(|id| !id.is_empty())
}
