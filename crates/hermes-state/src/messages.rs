//! Message writes and reads, clearing and deleting.

use hermes_state_query::MessagePage;
use hermes_state_query::messages::ResumeConversations;
use hermes_state_query::values::sql_value;
use hermes_state_types::stored::{self, StoredToolCalls};
use hermes_state_types::{ConversationMessage, Message, NewMessage};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, named_params};

use crate::db::SessionDb;
use crate::error::Error;
use crate::error::{Result, WriteContext};
use crate::message_edits::ARCHIVE_LIVE_ROWS;
use crate::message_edits::COUNT_REWIND;
use crate::message_edits::LATEST_MATCHING;
use crate::message_edits::NEW_HEAD;
use crate::message_edits::RESTORE_FROM;
use crate::message_edits::REWIND_FROM;
use crate::message_edits::SET_DISPLAY_KIND;
use crate::message_edits::SET_LATEST_USER_API_CONTENT;
use crate::message_edits::insert_rows;
use crate::sessions::foreign_key_to_not_found;
use hermes_state_core::store::Messages;
use hermes_state_query::message_reads;
use hermes_state_query::message_reads::AnchoredView;
use hermes_state_query::message_reads::MessagesAround;
use hermes_state_query::message_reads::RecentUserMessage;
use hermes_state_query::message_reads::RewindResult;
use hermes_state_types::Content;
use rusqlite::OptionalExtension;
use rusqlite::params;
use serde_json::Value;

const INSERT_MESSAGE: &str = "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, effect_disposition, timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, platform_message_id, observed, active, api_content, display_kind, display_metadata)
VALUES (:session_id, :role, :content, :tool_call_id, :tool_calls, :tool_name, :effect_disposition, :timestamp, :token_count, :finish_reason, :reasoning, :reasoning_content, :reasoning_details, :codex_reasoning_items, :codex_message_items, :platform_message_id, :observed, 1, :api_content, :display_kind, :display_metadata)";

const COUNT_MESSAGE: &str = "UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + ?2 WHERE id = ?1";

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

impl Messages for SessionDb {
    /// Number of messages of the sessions of one source.
    fn message_count_of_source(&self, source: &str) -> Result<i64> {
        self.read(|conn| {
            Ok(hermes_state_query::messages::message_count_of_source(
                conn, source,
            )?)
        })
    }

    /// Replaces the messages of a session in one transaction (`api.md` §4.5):
    /// deletes all its rows (only the live ones with `active_only`, so rewound
    /// and compacted rows stay), inserts `messages` as live rows, and sets
    /// `message_count` / `tool_call_count` to the inserted rows (tool calls
    /// counted as by `append_message`).
    ///
    /// Each message is stored as by `append_message`, except that the
    /// reasoning fields (`reasoning`, `reasoning_content`,
    /// `reasoning_details`, `codex_*`) are kept for `assistant` rows only and
    /// timestamps are strictly increasing: a message without one gets a
    /// running default that starts at now and becomes `max(default, row
    /// timestamp) + 1e-6` after each row. A message's `session_id` must be
    /// empty or `session_id` ([`crate::ErrorKind::InvalidInput`] otherwise).
    /// Deleted rows leave the FTS indexes through the triggers.
    ///
    /// Errors: [`Error::SessionNotFound`] when rows are to be inserted into an
    /// unknown session (an empty list on an unknown session changes nothing).
    fn replace_messages(
        &self,
        session_id: &str,
        messages: &[NewMessage],
        active_only: bool,
    ) -> Result<()> {
        let rows = self.replacement_rows(session_id, messages)?;
        let delete = if active_only {
            "DELETE FROM messages WHERE session_id = ?1 AND active = 1"
        } else {
            "DELETE FROM messages WHERE session_id = ?1"
        };
        self.write("replacing messages", |conn| {
            conn.execute(delete, [session_id])
                .context("deleting the replaced messages")?;
            insert_rows(conn, session_id, &rows).map(|_| ())
        })
    }

    /// Compacts a session in place (`api.md` §4.5): in one transaction its
    /// live rows become archived (`active = 0, compacted = 1`; they stay on
    /// disk and searchable), `messages` are inserted as live rows exactly as
    /// by [`SessionDb::replace_messages`], and the counters are set to the
    /// inserted rows. Returns the number of rows inserted.
    ///
    /// Errors: [`Error::SessionNotFound`] when rows are to be inserted into an
    /// unknown session.
    fn archive_and_compact(&self, session_id: &str, messages: &[NewMessage]) -> Result<usize> {
        let rows = self.replacement_rows(session_id, messages)?;
        self.write("compacting messages", |conn| {
            conn.execute(ARCHIVE_LIVE_ROWS, [session_id])
                .context("archiving the live messages")?;
            insert_rows(conn, session_id, &rows)
        })
    }

    /// Rewinds a session to one of its `user` messages (`api.md` §4.5): that
    /// message and every later live row become rewound (`active = 0,
    /// compacted = 0`: hidden from the conversation and from search) and the
    /// session's `rewind_count` grows by one, in one transaction.
    /// `message_count` is unchanged (the rows are still there, see
    /// [`SessionDb::restore_rewound`]).
    ///
    /// Errors, with the original's texts: [`Error::MessageNotFound`] when
    /// the message is not one of the session's (an unknown or empty session
    /// included), [`Error::RewindTargetRole`] when it is not a `user` message.
    fn rewind_to_message(&self, session_id: &str, message_id: i64) -> Result<RewindResult> {
        self.write("rewinding a session", |conn| {
            let Some(target) = message_reads::rewind_target(conn, session_id, message_id)? else {
                return Err(Error::MessageNotFound {
                    session_id: session_id.to_owned(),
                    message_id,
                });
            };
            if target.role != "user" {
                return Err(Error::RewindTargetRole {
                    role: target.role,
                    message_id,
                });
            }
            let rewound_count = conn
                .execute(REWIND_FROM, params![session_id, message_id])
                .context("rewinding messages")?;
            conn.execute(COUNT_REWIND, [session_id])
                .context("counting the rewind")?;
            let new_head_id = conn
                .query_row(NEW_HEAD, [session_id], |row| row.get::<_, Option<i64>>(0))
                .context("finding the new head")?;
            Ok(RewindResult {
                rewound_count,
                target_message: target,
                new_head_id,
            })
        })
    }

    /// Undoes rewinds (`api.md` §4.5): the session's rewound rows with
    /// `id >= since_id` become live again; returns how many. Counters are
    /// unchanged (a rewind did not change them).
    ///
    /// Every inactive row is restored, as the original does: rows archived
    /// by compaction come back too, still marked `compacted = 1` (so next
    /// to their summary; docs/DECISIONS.md). An unknown session restores
    /// nothing.
    fn restore_rewound(&self, session_id: &str, since_id: i64) -> Result<usize> {
        self.write("restoring rewound messages", |conn| {
            Ok(conn
                .execute(RESTORE_FROM, params![session_id, since_id])
                .context("restoring rewound messages")?)
        })
    }

    /// Sets `api_content` on the session's newest live `user` message, only
    /// if its stored content is `content` (`api.md` §4.5; `None` matches a
    /// NULL content); returns the number of rows changed, 0 or 1. The guard
    /// keeps a racing rewrite from receiving another turn's wire text.
    fn set_latest_user_api_content(
        &self,
        session_id: &str,
        content: Option<&Content>,
        api_content: &str,
    ) -> Result<usize> {
        let encoded = content.map_or(rusqlite::types::Value::Null, |c| {
            hermes_state_query::values::sql_value(stored::encode_content(c))
        });
        self.write("setting a message's api_content", |conn| {
            Ok(conn
                .execute(
                    SET_LATEST_USER_API_CONTENT,
                    params![session_id, encoded, api_content],
                )
                .context("setting a message's api_content")?)
        })
    }

    /// Stamps `display_kind` and `display_metadata` (JSON text when truthy,
    /// else NULL, replacing what was there) on the newest live message of
    /// the session with this role and this exact text content (`api.md`
    /// §4.5); returns whether a row matched. An empty session id, content or
    /// display kind changes nothing (`false`). The model-facing `role` and
    /// `content` are left as they are.
    fn set_latest_matching_message_display_kind(
        &self,
        session_id: &str,
        role: &str,
        content: &str,
        display_kind: &str,
        display_metadata: Option<&Value>,
    ) -> Result<bool> {
        if session_id.is_empty() || content.is_empty() || display_kind.is_empty() {
            return Ok(false);
        }
        let metadata = stored::encode_json_field(display_metadata);
        self.write("setting a message's display kind", |conn| {
            let id = conn
                .query_row(LATEST_MATCHING, params![session_id, role, content], |row| {
                    row.get::<_, i64>(0)
                })
                .optional()
                .context("finding the matching message")?;
            let Some(id) = id else {
                return Ok(false);
            };
            conn.execute(SET_DISPLAY_KIND, params![id, display_kind, metadata])
                .context("setting a message's display kind")?;
            Ok(true)
        })
    }

    /// A window of a session's messages around `message_id` (`api.md` §5.3):
    /// up to `window` rows before and after it, inactive ones included, with
    /// how many of each; a negative `window` gives the anchor alone, as in
    /// the original. Empty with zero counts when the message is not one of
    /// the session's.
    fn get_messages_around(
        &self,
        session_id: &str,
        message_id: i64,
        window: i64,
    ) -> Result<MessagesAround> {
        self.read(|conn| {
            Ok(message_reads::get_messages_around(
                conn, session_id, message_id, window,
            )?)
        })
    }

    /// The window around `message_id` with the session's bookends
    /// (`get_anchored_view`): [`SessionDb::get_messages_around`]'s window
    /// filtered to `keep_roles` (the anchor always kept; `None` keeps
    /// every role), and up to `bookend` messages of those roles with
    /// non-empty content from the session's start before the window and
    /// from its end after it. The original's defaults are `window = 5`,
    /// `bookend = 3`, `keep_roles = Some(&["user", "assistant"])`. Empty
    /// when the message is not one of the session's.
    fn get_anchored_view(
        &self,
        session_id: &str,
        message_id: i64,
        window: i64,
        bookend: i64,
        keep_roles: Option<&[&str]>,
    ) -> Result<AnchoredView> {
        self.snapshot_read(|conn| {
            Ok(message_reads::get_anchored_view(
                conn, session_id, message_id, window, bookend, keep_roles,
            )?)
        })
    }

    /// The newest `user` messages of a session, newest first, at most
    /// `limit`, with a one-line preview of each (`api.md` §5.3); rewound and
    /// compacted ones only with `include_inactive`.
    fn list_recent_user_messages(
        &self,
        session_id: &str,
        limit: u32,
        include_inactive: bool,
    ) -> Result<Vec<RecentUserMessage>> {
        self.read(|conn| {
            Ok(message_reads::list_recent_user_messages(
                conn,
                session_id,
                limit,
                include_inactive,
            )?)
        })
    }

    /// Whether the session has a message (in any state) with this platform
    /// message id (`api.md` §5.3); `false` for empty ids.
    fn has_platform_message_id(&self, session_id: &str, platform_message_id: &str) -> Result<bool> {
        self.read(|conn| {
            Ok(message_reads::has_platform_message_id(
                conn,
                session_id,
                platform_message_id,
            )?)
        })
    }

    /// Whether the session has inactive (rewound or compacted) messages
    /// (`api.md` §5.3).
    fn has_archived_messages(&self, session_id: &str) -> Result<bool> {
        self.read(|conn| Ok(message_reads::has_archived_messages(conn, session_id)?))
    }

    /// Appends a message and updates the session's counters in one
    /// transaction (`api.md` §4); returns the new message id.
    ///
    /// `message_count` grows by one; `tool_call_count` by the number of the
    /// message's tool calls (a list counts its entries, any other non-null
    /// value counts one; tool *results* count nothing). The FTS indexes follow
    /// through the schema's triggers, in the same transaction.
    ///
    /// Errors: [`crate::Error::SessionNotFound`] for an unknown session.
    fn append_message(&self, message: &NewMessage) -> Result<i64> {
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
    fn append_messages(&self, messages: &[NewMessage]) -> Result<Vec<i64>> {
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
    fn get_messages(&self, session_id: &str) -> Result<Vec<Message>> {
        self.get_messages_page(session_id, MessagePage::default())
    }

    /// [`SessionDb::get_messages`] with inactive rows and paging.
    fn get_messages_page(&self, session_id: &str, page: MessagePage) -> Result<Vec<Message>> {
        self.read(|conn| Ok(hermes_state_query::get_messages(conn, session_id, page)?))
    }

    /// [`SessionDb::get_messages_as_conversation`], optionally with the
    /// inactive (rewound or compacted) messages too.
    fn get_messages_as_conversation_with(
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
    fn get_resume_conversations(&self, session_id: &str) -> Result<ResumeConversations> {
        self.snapshot_read(|conn| {
            Ok(hermes_state_query::messages::get_resume_conversations(
                conn, session_id,
            )?)
        })
    }

    /// The display history's messages that come from the session's
    /// ancestors (`get_ancestor_display_prefix`): the conversation view with
    /// ancestors of the lineage's other sessions; `[]` without ancestors.
    fn get_ancestor_display_prefix(&self, session_id: &str) -> Result<Vec<ConversationMessage>> {
        self.snapshot_read(|conn| {
            Ok(hermes_state_query::messages::get_ancestor_display_prefix(
                conn, session_id,
            )?)
        })
    }

    /// Number of message rows of a session (inactive included), or of the store.
    fn message_count(&self, session_id: Option<&str>) -> Result<i64> {
        self.read(|conn| Ok(hermes_state_query::message_count(conn, session_id)?))
    }
}
