//! Message writes and reads, clearing and deleting.

use hermes_state_query::MessagePage;
use hermes_state_query::messages::ResumeConversations;
use hermes_state_query::values::sql_value;
use hermes_state_types::stored::{self, StoredToolCalls};
use hermes_state_types::{ConversationMessage, Message, NewMessage};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, named_params};

use crate::db::SessionDb;
use crate::error::{Result, WriteContext};
use crate::sessions::foreign_key_to_not_found;

const INSERT_MESSAGE: &str = "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, effect_disposition, timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, platform_message_id, observed, active, api_content, display_kind, display_metadata)
VALUES (:session_id, :role, :content, :tool_call_id, :tool_calls, :tool_name, :effect_disposition, :timestamp, :token_count, :finish_reason, :reasoning, :reasoning_content, :reasoning_details, :codex_reasoning_items, :codex_message_items, :platform_message_id, :observed, 1, :api_content, :display_kind, :display_metadata)";

const COUNT_MESSAGE: &str = "UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + ?2 WHERE id = ?1";

impl SessionDb {
    /// Appends a message and updates the session's counters in one
    /// transaction (`api.md` §4); returns the new message id.
    ///
    /// `message_count` grows by one; `tool_call_count` by the number of the
    /// message's tool calls (a list counts its entries, any other non-null
    /// value counts one; tool *results* count nothing). The FTS indexes follow
    /// through the schema's triggers, in the same transaction.
    ///
    /// Errors: [`crate::Error::SessionNotFound`] for an unknown session.
    pub fn append_message(&self, message: &NewMessage) -> Result<i64> {
        let encoded = EncodedMessage::new(message);
        let timestamp = message.timestamp.unwrap_or_else(|| self.now());
        self.write("appending a message", |conn| {
            insert_message(conn, message, &encoded, timestamp)
        })
    }

    /// Appends several messages in one transaction (all or none), each exactly
    /// as [`SessionDb::append_message`] would; returns their ids in order.
    ///
    /// One commit instead of one per message: the way to import or replay a
    /// conversation quickly.
    pub fn append_messages(&self, messages: &[NewMessage]) -> Result<Vec<i64>> {
        let encoded: Vec<(EncodedMessage, f64)> = messages
            .iter()
            .map(|m| {
                (
                    EncodedMessage::new(m),
                    m.timestamp.unwrap_or_else(|| self.now()),
                )
            })
            .collect();
        self.write("appending messages", |conn| {
            messages
                .iter()
                .zip(&encoded)
                .map(|(message, (encoded, timestamp))| {
                    insert_message(conn, message, encoded, *timestamp)
                })
                .collect()
        })
    }

    /// The active messages of a session in insertion order (`api.md` §5.1);
    /// an unknown session gives an empty list.
    pub fn get_messages(&self, session_id: &str) -> Result<Vec<Message>> {
        self.get_messages_page(session_id, MessagePage::default())
    }

    /// [`SessionDb::get_messages`] with inactive rows and paging.
    pub fn get_messages_page(&self, session_id: &str, page: MessagePage) -> Result<Vec<Message>> {
        self.read(|conn| Ok(hermes_state_query::get_messages(conn, session_id, page)?))
    }

    /// The OpenAI-style conversation of a session, exactly as the original
    /// builds it (`api.md` §5.2); with `include_ancestors` its lineage's
    /// earlier messages come first. Rewound messages are left out.
    pub fn get_messages_as_conversation(
        &self,
        session_id: &str,
        include_ancestors: bool,
    ) -> Result<Vec<ConversationMessage>> {
        self.get_messages_as_conversation_with(session_id, include_ancestors, false)
    }

    /// [`SessionDb::get_messages_as_conversation`], optionally with the
    /// inactive (rewound or compacted) messages too.
    pub fn get_messages_as_conversation_with(
        &self,
        session_id: &str,
        include_ancestors: bool,
        include_inactive: bool,
    ) -> Result<Vec<ConversationMessage>> {
        self.read(|conn| {
            Ok(hermes_state_query::get_messages_as_conversation(
                conn,
                session_id,
                include_ancestors,
                include_inactive,
            )?)
        })
    }

    /// The two histories a resume shows (`get_resume_conversations`), from
    /// one read of the lineage's active messages: the session's own
    /// conversation with the role-alternation repair (what the model is
    /// given again) and the lineage's, root first, with replayed user
    /// messages dropped (what the user is shown). A stored tool-call value
    /// that is not a list makes the repair fail as the original's
    /// (`TypeError`, [`crate::ErrorKind::InvalidInput`]).
    pub fn get_resume_conversations(&self, session_id: &str) -> Result<ResumeConversations> {
        self.snapshot_read(|conn| {
            Ok(hermes_state_query::messages::get_resume_conversations(
                conn, session_id,
            )?)
        })
    }

    /// The display history's messages that come from the session's
    /// ancestors (`get_ancestor_display_prefix`): the conversation view with
    /// ancestors of the lineage's other sessions; `[]` without ancestors.
    pub fn get_ancestor_display_prefix(
        &self,
        session_id: &str,
    ) -> Result<Vec<ConversationMessage>> {
        self.snapshot_read(|conn| {
            Ok(hermes_state_query::messages::get_ancestor_display_prefix(
                conn, session_id,
            )?)
        })
    }

    /// Number of message rows of a session (inactive included), or of the store.
    pub fn message_count(&self, session_id: Option<&str>) -> Result<i64> {
        self.read(|conn| Ok(hermes_state_query::message_count(conn, session_id)?))
    }

    /// Deletes every message of a session (inactive ones too) and zeroes its
    /// message and tool-call counters; token counters, title and times stay.
    /// Unknown ids are ignored.
    pub fn clear_messages(&self, session_id: &str) -> Result<()> {
        self.write("clearing messages", |conn| {
            conn.execute("DELETE FROM messages WHERE session_id = ?1", [session_id])
                .context("clearing messages")?;
            conn.execute(
                "UPDATE sessions SET message_count = 0, tool_call_count = 0 WHERE id = ?1",
                [session_id],
            )
            .context("clearing messages")?;
            Ok(())
        })
    }
}

/// Inserts one message and counts it on its session, inside the caller's
/// transaction.
pub(crate) fn insert_message(
    conn: &Connection,
    message: &NewMessage,
    encoded: &EncodedMessage,
    timestamp: f64,
) -> Result<i64> {
    conn.prepare_cached(INSERT_MESSAGE)
        .and_then(|mut stmt| {
            stmt.execute(named_params! {
                ":session_id": message.session_id, ":role": message.role,
                ":content": encoded.content, ":tool_call_id": message.tool_call_id,
                ":tool_calls": encoded.tool_calls, ":tool_name": message.tool_name,
                ":effect_disposition": message.effect_disposition, ":timestamp": timestamp,
                ":token_count": message.token_count, ":finish_reason": message.finish_reason,
                ":reasoning": message.reasoning, ":reasoning_content": message.reasoning_content,
                ":reasoning_details": encoded.reasoning_details,
                ":codex_reasoning_items": encoded.codex_reasoning_items,
                ":codex_message_items": encoded.codex_message_items,
                ":platform_message_id": message.platform_message_id,
                ":observed": i64::from(message.observed), ":api_content": message.api_content,
                ":display_kind": message.display_kind, ":display_metadata": encoded.display_metadata,
            })
        })
        // The only foreign key of `messages` is its session.
        .map_err(|e| foreign_key_to_not_found(e, &message.session_id, "appending a message"))?;
    let id = conn.last_insert_rowid();
    conn.prepare_cached(COUNT_MESSAGE)
        .and_then(|mut stmt| {
            stmt.execute(rusqlite::params![
                message.session_id,
                encoded.tool_call_count
            ])
        })
        .context("counting the message")?;
    Ok(id)
}

/// The `$._delegate_from` marker of a session's `model_config`, read safely:
/// malformed JSON in an old row reads as "no marker" instead of failing.
const DELEGATE_FROM: &str =
    "CASE WHEN json_valid(model_config) THEN json_extract(model_config, '$._delegate_from') END";
const HAS_DELEGATE_MARK: &str = "CASE WHEN json_valid(model_config) THEN json_type(model_config, '$._delegate_from') END IS NOT NULL";

/// Every delegate descendant of a session: sessions whose `$._delegate_from`
/// names a collected id, or whose parent is a collected id and that carry a
/// `$._delegate_from` marker; never the session itself.
pub(crate) fn collect_delegates(conn: &Connection, root: &str) -> Result<Vec<String>> {
    let sql = format!(
        "SELECT id FROM sessions WHERE id <> ?1 AND (({DELEGATE_FROM}) = ?2 OR (parent_session_id = ?2 AND {HAS_DELEGATE_MARK}))"
    );
    let mut stmt = conn.prepare(&sql).context("finding delegate children")?;
    let mut collected: Vec<String> = Vec::new();
    let mut frontier = vec![root.to_owned()];
    while let Some(current) = frontier.pop() {
        let children = stmt
            .query_map([root, current.as_str()], |row| row.get::<_, String>(0))
            .context("finding delegate children")?
            .collect::<Result<Vec<_>, _>>()
            .context("finding delegate children")?;
        for child in children {
            if !collected.contains(&child) {
                collected.push(child.clone());
                frontier.push(child);
            }
        }
    }
    Ok(collected)
}

/// The stored forms of a message's structured fields (the types crate's
/// codec, [`stored`]), computed once before the write (so a retried
/// transaction binds the same values).
pub(crate) struct EncodedMessage {
    content: SqlValue,
    tool_calls: Option<String>,
    pub(crate) tool_call_count: i64,
    reasoning_details: Option<String>,
    codex_reasoning_items: Option<String>,
    codex_message_items: Option<String>,
    display_metadata: Option<String>,
}

impl EncodedMessage {
    pub(crate) fn new(message: &NewMessage) -> Self {
        let StoredToolCalls {
            text: tool_calls,
            count: tool_call_count,
        } = stored::encode_tool_calls(message.tool_calls.as_ref());
        EncodedMessage {
            content: message
                .content
                .as_ref()
                .map_or(SqlValue::Null, |c| sql_value(stored::encode_content(c))),
            tool_calls,
            tool_call_count,
            reasoning_details: stored::encode_json_field(message.reasoning_details.as_ref()),
            codex_reasoning_items: stored::encode_json_field(
                message.codex_reasoning_items.as_ref(),
            ),
            codex_message_items: stored::encode_json_field(message.codex_message_items.as_ref()),
            display_metadata: stored::encode_json_field(message.display_metadata.as_ref()),
        }
    }
}
