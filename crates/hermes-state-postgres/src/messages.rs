//! Message writes and reads (`api.md` §4, §5.1).

use hermes_state_types::stored::{self, StoredToolCalls, StoredValue};
use hermes_state_types::{Message, NewMessage};
use postgres::ToStatement;
use postgres::Transaction;
use postgres::types::{ToSql, Type};

use crate::content;
use crate::error::PgError;
use crate::error::{Context, Result};
use crate::lineage::root_to_tip;
use crate::lookups::bookend_rows;
use crate::message_edits::ARCHIVE_LIVE_ROWS;
use crate::message_edits::COUNT_REWIND;
use crate::message_edits::NEW_HEAD;
use crate::message_edits::RESTORE_FROM;
use crate::message_edits::REWIND_FROM;
use crate::message_edits::insert_rows;
use crate::message_edits::rewind_target;
use crate::message_reads::repair_error;
use crate::rows::{MESSAGE_COLUMNS, message_from_row, select_list};
use crate::sessions::foreign_key_to_not_found;
use crate::{PgStore, WriteScope, WriteTx};
use hermes_state_core::Result as CoreResult;
use hermes_state_core::conversation::build_conversation;
use hermes_state_core::message_reads::AnchoredView;
use hermes_state_core::message_reads::MessagesAround;
use hermes_state_core::message_reads::RecentUserMessage;
use hermes_state_core::message_reads::RewindResult;
use hermes_state_core::message_reads::anchored_view;
use hermes_state_core::message_reads::preview;
use hermes_state_core::messages::MessagePage;
use hermes_state_core::messages::ResumeConversations;
use hermes_state_core::messages::ancestor_display_prefix;
use hermes_state_core::messages::resume_conversations;
use hermes_state_core::store::Messages;
use hermes_state_types::Content;
use hermes_state_types::ConversationMessage;
use serde_json::Value;

/// The columns a new message row gets, in the order of the statements'
/// parameters (`active` is always 1).
macro_rules! message_columns {
    () => {
        "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, effect_disposition, timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, platform_message_id, observed, active, api_content, display_kind, display_metadata)"
    };
}

const INSERT_MESSAGE: &str = concat!(
    message_columns!(),
    "
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, 1, $18, $19, $20)
RETURNING id"
);

/// An append in one statement: the session's counters first, then the row
/// — only when the session exists (`counted` is empty otherwise, so no row
/// is inserted and no value of the id sequence is drawn). `$21` is the
/// message's tool calls.
/// The parameter types of [`APPEND_MESSAGE`], in order.
const APPEND_TYPES: [Type; 21] = [
    Type::TEXT,   // session_id
    Type::TEXT,   // role
    Type::TEXT,   // content
    Type::TEXT,   // tool_call_id
    Type::TEXT,   // tool_calls
    Type::TEXT,   // tool_name
    Type::TEXT,   // effect_disposition
    Type::FLOAT8, // timestamp
    Type::INT8,   // token_count
    Type::TEXT,   // finish_reason
    Type::TEXT,   // reasoning
    Type::TEXT,   // reasoning_content
    Type::TEXT,   // reasoning_details
    Type::TEXT,   // codex_reasoning_items
    Type::TEXT,   // codex_message_items
    Type::TEXT,   // platform_message_id
    Type::INT8,   // observed
    Type::TEXT,   // api_content
    Type::TEXT,   // display_kind
    Type::TEXT,   // display_metadata
    Type::INT8,   // $21: the message's tool calls
];

const APPEND_MESSAGE: &str = concat!(
    "WITH counted AS (
    UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + $21
    WHERE id = $1 RETURNING id
)
",
    message_columns!(),
    "
SELECT counted.id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, 1, $18, $19, $20
FROM counted
RETURNING id"
);

/// A message's columns as stored, computed before the transaction.
pub(crate) struct Encoded {
    content: Option<String>,
    tool_calls: Option<String>,
    pub(crate) tool_call_count: i64,
    reasoning_details: Option<String>,
    codex_reasoning_items: Option<String>,
    codex_message_items: Option<String>,
    display_metadata: Option<String>,
    timestamp: f64,
}

impl Encoded {
    pub(crate) fn new(message: &NewMessage, now: f64) -> Result<Encoded> {
        let StoredToolCalls {
            text: tool_calls,
            count: tool_call_count,
        } = stored::encode_tool_calls(message.tool_calls.as_ref());
        let value = match message.content.as_ref() {
            Some(c) => content::as_written(stored::encode_content(c)),
            None => StoredValue::Null,
        };
        let what = format!("a message of session {:?}", message.session_id);
        Ok(Encoded {
            content: content::to_pg(&value, &what)?,
            tool_calls,
            tool_call_count,
            reasoning_details: stored::encode_json_field(message.reasoning_details.as_ref()),
            codex_reasoning_items: stored::encode_json_field(
                message.codex_reasoning_items.as_ref(),
            ),
            codex_message_items: stored::encode_json_field(message.codex_message_items.as_ref()),
            display_metadata: stored::encode_json_field(message.display_metadata.as_ref()),
            timestamp: message.timestamp.unwrap_or(now),
        })
    }
}

fn insert(tx: &mut WriteTx<'_, '_>, message: &NewMessage, e: &Encoded) -> Result<i64> {
    // Counting first finds an unknown session before the row is inserted:
    // a refused insert would still have drawn a value of the id sequence
    // (PostgreSQL never gives one back), and the next message would skip an
    // id that SQLite, whose failed insert rolls back with its transaction,
    // gives — the original's ids, and the ids callers keep, stay the same on
    // both backends. Both in one statement: one round trip on the hot path
    // of every host.
    let append = tx.prepared(APPEND_MESSAGE, &APPEND_TYPES)?;
    run_insert(tx, &append, message, e, Some(e.tool_call_count))?
        .ok_or_else(|| crate::PgError::SessionNotFound(message.session_id.clone()))
}

/// Inserts one live message row without counting it in its session.
/// Errors: [`crate::PgError::SessionNotFound`] for an unknown session.
pub(crate) fn insert_row(
    tx: &mut Transaction<'_>,
    message: &NewMessage,
    e: &Encoded,
) -> Result<i64> {
    run_insert(tx, INSERT_MESSAGE, message, e, None)?
        .ok_or_else(|| crate::PgError::SessionNotFound(message.session_id.clone()))
}

/// Runs one of the two insert statements (prepared, or its text sent
/// typed: one round trip), with `$21` when `tool_calls` is given; the new
/// id, or `None` when no row was inserted.
fn run_insert<S: ToStatement + ?Sized>(
    tx: &mut Transaction<'_>,
    statement: &S,
    message: &NewMessage,
    e: &Encoded,
    tool_calls: Option<i64>,
) -> Result<Option<i64>> {
    let observed = i64::from(message.observed);
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![
        &message.session_id,
        &message.role,
        &e.content,
        &message.tool_call_id,
        &e.tool_calls,
        &message.tool_name,
        &message.effect_disposition,
        &e.timestamp,
        &message.token_count,
        &message.finish_reason,
        &message.reasoning,
        &message.reasoning_content,
        &e.reasoning_details,
        &e.codex_reasoning_items,
        &e.codex_message_items,
        &message.platform_message_id,
        &observed,
        &message.api_content,
        &message.display_kind,
        &e.display_metadata,
    ];
    if let Some(count) = &tool_calls {
        params.push(count);
    }
    let row = tx.query_opt(statement, &params).map_err(|error| {
        foreign_key_to_not_found(error, &message.session_id, "appending a message")
    })?;
    Ok(row.map(|row| row.get(0)))
}

impl Messages for PgStore {
    /// A window of a session's messages around `message_id` (`api.md`
    /// §5.3): up to `window` rows before and after it, inactive ones
    /// included (a negative `window` gives the anchor alone); empty with
    /// zero counts when the message is not one of the session's.
    fn get_messages_around(
        &self,
        session_id: &str,
        message_id: i64,
        window: i64,
    ) -> CoreResult<MessagesAround> {
        let columns = select_list("m", &MESSAGE_COLUMNS);
        let before_sql = format!(
            "SELECT {columns} FROM messages m WHERE m.session_id = $1 AND m.id < $2 \
             ORDER BY m.id DESC LIMIT $3"
        );
        let after_sql = format!(
            "SELECT {columns} FROM messages m WHERE m.session_id = $1 AND m.id >= $2 \
             ORDER BY m.id LIMIT $3"
        );
        let window = window.max(0);
        Ok(self.read(|tx| {
            let found = tx
                .query_opt(
                    "SELECT 1 FROM messages WHERE id = $1 AND session_id = $2",
                    &[&message_id, &session_id],
                )
                .context("finding the anchor message")?;
            if found.is_none() {
                return Ok(MessagesAround::default());
            }
            let rows = |tx: &mut Transaction<'_>, sql: &str, limit: i64| -> Result<Vec<Message>> {
                Ok(tx
                    .query(sql, &[&session_id, &message_id, &limit])
                    .context("reading messages")?
                    .iter()
                    .map(message_from_row)
                    .collect())
            };
            let mut before = rows(tx, &before_sql, window)?;
            before.reverse();
            let rest = rows(tx, &after_sql, window.saturating_add(1))?;
            let messages_before = before.len();
            let messages_after = rest.len().saturating_sub(1);
            before.extend(rest);
            Ok(MessagesAround {
                window: before,
                messages_before,
                messages_after,
            })
        })?)
    }

    /// The window around `message_id` with the session's bookends (the
    /// original's `get_anchored_view`), by the query crate's rule as on
    /// SQLite: a bookend is a message of the kept roles whose content
    /// SQLite's `length()` counts as non-empty (never structured content,
    /// which SQLite stores behind a NUL).
    fn get_anchored_view(
        &self,
        session_id: &str,
        message_id: i64,
        window: i64,
        bookend: i64,
        keep_roles: Option<&[&str]>,
    ) -> CoreResult<AnchoredView> {
        let around = self.get_messages_around(session_id, message_id, window)?;
        let roles: Option<Vec<String>> =
            keep_roles.map(|roles| roles.iter().map(|r| (*r).to_owned()).collect());
        Ok(anchored_view(
            around,
            message_id,
            bookend,
            keep_roles,
            |first, last, bookend| {
                self.read(|tx| {
                    let start =
                        bookend_rows(tx, session_id, first, bookend, roles.as_deref(), true)?;
                    let mut end =
                        bookend_rows(tx, session_id, last, bookend, roles.as_deref(), false)?;
                    end.reverse();
                    Ok((start, end))
                })
            },
        )?)
    }

    /// The newest `user` messages of a session, newest first, at most
    /// `limit`, with a one-line preview of each (`api.md` §5.3); rewound and
    /// compacted ones only with `include_inactive`.
    fn list_recent_user_messages(
        &self,
        session_id: &str,
        limit: u32,
        include_inactive: bool,
    ) -> CoreResult<Vec<RecentUserMessage>> {
        let active = if include_inactive {
            ""
        } else {
            " AND active = 1"
        };
        let sql = format!(
            "SELECT id, timestamp, content FROM messages \
             WHERE session_id = $1 AND role = 'user'{active} ORDER BY id DESC LIMIT $2"
        );
        Ok(self.read(|tx| {
            Ok(tx
                .query(&sql, &[&session_id, &i64::from(limit)])
                .context("listing recent user messages")?
                .iter()
                .map(|row| {
                    let stored_content = content::from_pg(row.get(2));
                    let decoded = stored::decode_content(stored_content.as_ref());
                    RecentUserMessage {
                        id: row.get(0),
                        timestamp: row.get::<_, Option<f64>>(1).unwrap_or_default(),
                        preview: preview(decoded.as_ref()),
                    }
                })
                .collect())
        })?)
    }

    /// Whether the session has a message (in any state) with this platform
    /// message id (`api.md` §5.3); `false` for empty ids.
    fn has_platform_message_id(
        &self,
        session_id: &str,
        platform_message_id: &str,
    ) -> CoreResult<bool> {
        if session_id.is_empty() || platform_message_id.is_empty() {
            return Ok(false);
        }
        Ok(self.read(|tx| {
            Ok(tx
                .query_opt(
                    "SELECT 1 FROM messages WHERE session_id = $1 AND platform_message_id = $2 \
                     LIMIT 1",
                    &[&session_id, &platform_message_id],
                )
                .context("probing messages")?
                .is_some())
        })?)
    }

    /// Replaces the messages of a session in one transaction (`api.md`
    /// §4.5): deletes all its rows (only the live ones with `active_only`),
    /// inserts `messages` as live rows, and sets `message_count` /
    /// `tool_call_count` to the inserted rows.
    ///
    /// Errors: [`PgError::InvalidInput`] for a message of another session;
    /// [`PgError::SessionNotFound`] when rows are to be inserted into an
    /// unknown session.
    fn replace_messages(
        &self,
        session_id: &str,
        messages: &[NewMessage],
        active_only: bool,
    ) -> CoreResult<()> {
        let rows = self.replacement_rows(session_id, messages)?;
        let delete = if active_only {
            "DELETE FROM messages WHERE session_id = $1 AND active = 1"
        } else {
            "DELETE FROM messages WHERE session_id = $1"
        };
        Ok(self.write_in(
            "replacing messages",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute(delete, &[&session_id])
                    .context("deleting the replaced messages")?;
                insert_rows(tx, session_id, &rows).map(|_| ())
            },
        )?)
    }

    /// Compacts a session in place (`api.md` §4.5): its live rows become
    /// archived, `messages` are inserted as live rows as by
    /// [`PgStore::replace_messages`], and the counters are set to the
    /// inserted rows. Returns the number of rows inserted.
    fn archive_and_compact(&self, session_id: &str, messages: &[NewMessage]) -> CoreResult<usize> {
        let rows = self.replacement_rows(session_id, messages)?;
        Ok(self.write_in(
            "compacting messages",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute(ARCHIVE_LIVE_ROWS, &[&session_id])
                    .context("archiving the live messages")?;
                insert_rows(tx, session_id, &rows)
            },
        )?)
    }

    /// Rewinds a session to one of its `user` messages (`api.md` §4.5):
    /// that message and every later live row become rewound and the
    /// session's `rewind_count` grows by one.
    ///
    /// Errors: [`PgError::MessageNotFound`] when the message is not one of
    /// the session's (an unknown session included) and
    /// [`PgError::RewindTargetRole`] when it is not a `user` message, with
    /// the original's texts.
    fn rewind_to_message(&self, session_id: &str, message_id: i64) -> CoreResult<RewindResult> {
        let sql = format!(
            "SELECT {} FROM messages m WHERE m.id = $1 AND m.session_id = $2",
            select_list("m", &MESSAGE_COLUMNS)
        );
        Ok(self.write_in(
            "rewinding a session",
            &WriteScope::session(session_id),
            |tx| {
                let Some(target) = tx
                    .query_opt(&sql, &[&message_id, &session_id])
                    .context("reading a message")?
                    .as_ref()
                    .map(rewind_target)
                else {
                    return Err(PgError::MessageNotFound {
                        session_id: session_id.to_owned(),
                        message_id,
                    });
                };
                if target.role != "user" {
                    return Err(PgError::RewindTargetRole {
                        role: target.role,
                        message_id,
                    });
                }
                let rewound = tx
                    .execute(REWIND_FROM, &[&session_id, &message_id])
                    .context("rewinding messages")?;
                tx.execute(COUNT_REWIND, &[&session_id])
                    .context("counting the rewind")?;
                let new_head_id: Option<i64> = tx
                    .query_one(NEW_HEAD, &[&session_id])
                    .context("finding the new head")?
                    .get(0);
                Ok(RewindResult {
                    rewound_count: usize::try_from(rewound).unwrap_or(usize::MAX),
                    target_message: target,
                    new_head_id,
                })
            },
        )?)
    }

    /// Undoes rewinds (`api.md` §4.5): the session's rewound rows with
    /// `id >= since_id` become live again; returns how many. Rows archived
    /// by compaction stay archived; counters are unchanged.
    fn restore_rewound(&self, session_id: &str, since_id: i64) -> CoreResult<usize> {
        Ok(self.write_in(
            "restoring rewound messages",
            &WriteScope::session(session_id),
            |tx| {
                let restored = tx
                    .execute(RESTORE_FROM, &[&session_id, &since_id])
                    .context("restoring rewound messages")?;
                Ok(usize::try_from(restored).unwrap_or(usize::MAX))
            },
        )?)
    }

    /// The messages of a session in insertion (id) order, the inactive ones
    /// too with `include_inactive`, paged by `limit` and `offset` with
    /// SQLite's meaning of negative values (no limit; no rows skipped),
    /// which PostgreSQL refuses as such.
    fn get_messages_page(&self, session_id: &str, page: MessagePage) -> CoreResult<Vec<Message>> {
        let active = if page.include_inactive {
            ""
        } else {
            " AND m.active = 1"
        };
        let sql = format!(
            "SELECT {} FROM messages m WHERE m.session_id = $1{active} \
             ORDER BY m.id LIMIT $2 OFFSET $3",
            select_list("m", &MESSAGE_COLUMNS)
        );
        let limit = page.limit.filter(|limit| *limit >= 0);
        let offset = page.offset.max(0);
        Ok(self.read(|tx| {
            Ok(tx
                .query(&sql, &[&session_id, &limit, &offset])
                .context("reading messages")?
                .iter()
                .map(message_from_row)
                .collect())
        })?)
    }

    /// [`PgStore::get_messages_as_conversation`], optionally with the
    /// inactive (rewound or compacted) messages too.
    fn get_messages_as_conversation_with(
        &self,
        session_id: &str,
        include_ancestors: bool,
        include_inactive: bool,
    ) -> CoreResult<Vec<ConversationMessage>> {
        let active = if include_inactive {
            ""
        } else {
            " AND m.active = 1"
        };
        let sql = format!(
            "SELECT {} FROM messages m WHERE m.session_id = ANY($1){active} ORDER BY m.id",
            select_list("m", &MESSAGE_COLUMNS)
        );
        let rows = self.read(|tx| {
            let sessions = if include_ancestors {
                root_to_tip(tx, session_id)?
            } else {
                vec![session_id.to_owned()]
            };
            Ok(tx
                .query(&sql, &[&sessions])
                .context("reading the conversation")?
                .iter()
                .map(message_from_row)
                .collect::<Vec<_>>())
        })?;
        Ok(build_conversation(&rows, include_ancestors))
    }

    /// The two histories of a resume (the original's
    /// `get_resume_conversations`), from one read of the lineage's active
    /// messages, built by the contract crate's rule as on SQLite.
    fn get_resume_conversations(&self, session_id: &str) -> CoreResult<ResumeConversations> {
        let (_, rows) = self.lineage_messages(session_id)?;
        Ok(resume_conversations(&rows, session_id).map_err(repair_error)?)
    }

    /// The display history's messages of the session's ancestors (the
    /// original's `get_ancestor_display_prefix`); `[]` without ancestors.
    fn get_ancestor_display_prefix(
        &self,
        session_id: &str,
    ) -> CoreResult<Vec<ConversationMessage>> {
        let (sessions, rows) = self.lineage_messages(session_id)?;
        if sessions <= 1 {
            return Ok(Vec::new());
        }
        Ok(ancestor_display_prefix(&rows, session_id))
    }

    /// Whether the session has inactive (rewound or compacted) messages
    /// (`api.md` §5.3); `false` for an unknown session.
    fn has_archived_messages(&self, session_id: &str) -> CoreResult<bool> {
        Ok(self.read(|tx| {
            Ok(tx
                .query_opt(
                    "SELECT 1 FROM messages WHERE session_id = $1 AND active = 0 LIMIT 1",
                    &[&session_id],
                )
                .context("probing messages")?
                .is_some())
        })?)
    }

    /// Appends a message and counts it in its session, in one transaction
    /// (`api.md` §4); returns the new id. Errors:
    /// [`crate::PgError::SessionNotFound`] for an unknown session.
    fn append_message(&self, message: &NewMessage) -> CoreResult<i64> {
        let encoded = Encoded::new(message, self.now())?;
        Ok(self.write_in(
            "appending a message",
            &WriteScope::session(&message.session_id),
            |tx| insert(tx, message, &encoded),
        )?)
    }

    /// Appends several messages in one transaction (all or none).
    fn append_messages(&self, messages: &[NewMessage]) -> CoreResult<Vec<i64>> {
        let now = self.now();
        let encoded = messages
            .iter()
            .map(|m| Encoded::new(m, now))
            .collect::<Result<Vec<_>>>()?;
        let scope = WriteScope::sessions(messages.iter().map(|m| m.session_id.as_str()));
        Ok(self.write_in("appending messages", &scope, |tx| {
            messages
                .iter()
                .zip(&encoded)
                .map(|(message, encoded)| insert(tx, message, encoded))
                .collect()
        })?)
    }

    /// The active messages of a session in insertion order (`api.md` §5.1).
    fn get_messages(&self, session_id: &str) -> CoreResult<Vec<Message>> {
        let sql = format!(
            "SELECT {} FROM messages m WHERE m.session_id = $1 AND m.active = 1 \
             ORDER BY m.id",
            select_list("m", &MESSAGE_COLUMNS)
        );
        Ok(self.read(|tx| {
            Ok(tx
                .query(&sql, &[&session_id])
                .context("reading messages")?
                .iter()
                .map(message_from_row)
                .collect())
        })?)
    }

    /// The number of messages of one session, or of the whole store.
    fn message_count(&self, session_id: Option<&str>) -> CoreResult<i64> {
        Ok(self.read(|tx| {
            let row = match hermes_state_core::messages::counted_session(session_id) {
                Some(id) => tx.query_one(
                    "SELECT count(*) FROM messages WHERE session_id = $1",
                    &[&id],
                ),
                None => tx.query_one("SELECT count(*) FROM messages", &[]),
            }
            .context("counting messages")?;
            Ok(row.get(0))
        })?)
    }

    /// The number of messages of the sessions of one source (compared
    /// exactly).
    fn message_count_of_source(&self, source: &str) -> CoreResult<i64> {
        Ok(self.read(|tx| {
            Ok(tx
                .query_one(
                    "SELECT count(*) FROM messages \
                     WHERE session_id IN (SELECT id FROM sessions WHERE source = $1)",
                    &[&source],
                )
                .context("counting messages")?
                .get(0))
        })?)
    }

    /// Sets `api_content` on the session's newest live `user` message, only
    /// if its stored content is `content` (`api.md` §4.5; `None` matches a
    /// NULL content); returns the number of rows changed, 0 or 1.
    fn set_latest_user_api_content(
        &self,
        session_id: &str,
        content: Option<&Content>,
        api_content: &str,
    ) -> CoreResult<usize> {
        const WHAT: &str = "setting a message's api_content";
        let encoded = match content {
            None => None,
            // Content PostgreSQL cannot hold (a NUL) is in no row here.
            Some(c) => {
                match content::to_pg(&content::as_written(stored::encode_content(c)), WHAT) {
                    Ok(Some(text)) => Some(text),
                    Ok(None) => None,
                    Err(_) => return Ok(0),
                }
            }
        };
        Ok(self.write_in(WHAT, &WriteScope::session(session_id), |tx| {
            let changed = tx
                .execute(
                    SET_LATEST_USER_API_CONTENT,
                    &[&session_id, &encoded, &api_content],
                )
                .context(WHAT)?;
            Ok(usize::try_from(changed).unwrap_or(usize::MAX))
        })?)
    }

    /// Stamps `display_kind` and `display_metadata` (JSON text when truthy,
    /// else NULL, replacing what was there) on the newest live message of
    /// the session with this role and this exact text content (`api.md`
    /// §4.5); returns whether a row matched. An empty session id, content or
    /// display kind changes nothing (`false`).
    fn set_latest_matching_message_display_kind(
        &self,
        session_id: &str,
        role: &str,
        content: &str,
        display_kind: &str,
        display_metadata: Option<&Value>,
    ) -> CoreResult<bool> {
        const WHAT: &str = "setting a message's display kind";
        if session_id.is_empty() || content.is_empty() || display_kind.is_empty() {
            return Ok(false);
        }
        // Text PostgreSQL cannot hold (a NUL) is in no row here.
        let Ok(content) = content::text_to_pg(content, WHAT) else {
            return Ok(false);
        };
        let metadata = stored::encode_json_field(display_metadata);
        Ok(self.write_in(WHAT, &WriteScope::session(session_id), |tx| {
            let Some(row) = tx
                .query_opt(LATEST_MATCHING, &[&session_id, &role, &content])
                .context("finding the matching message")?
            else {
                return Ok(false);
            };
            let id: i64 = row.get(0);
            tx.execute(
                "UPDATE messages SET display_kind = $2, display_metadata = $3 WHERE id = $1",
                &[&id, &display_kind, &metadata],
            )
            .context(WHAT)?;
            Ok(true)
        })?)
    }
}

const SET_LATEST_USER_API_CONTENT: &str = "UPDATE messages SET api_content = $3
WHERE id = (SELECT id FROM messages WHERE session_id = $1 AND role = 'user' AND active = 1
            ORDER BY id DESC LIMIT 1)
  AND content IS NOT DISTINCT FROM $2";

const LATEST_MATCHING: &str = "SELECT id FROM messages
WHERE session_id = $1 AND role = $2 AND content = $3 AND active = 1 ORDER BY id DESC LIMIT 1";
