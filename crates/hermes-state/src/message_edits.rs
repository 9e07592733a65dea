//! The message writers besides `append_message` (`api.md` §4.5) — replacing
//! a transcript, compacting it in place, rewinding and restoring, stamping
//! the newest matching row — and the other message readers (§5.3).
//!
//! A message is in one of three states (`schema-v23.md` §4.3): live
//! (`active = 1, compacted = 0`), rewound (`active = 0, compacted = 0`,
//! hidden from search) or archived by compaction (`active = 0, compacted =
//! 1`, still searchable). The FTS indexes follow every change through the
//! schema's triggers, in the same transaction. `message_count` counts the
//! rows that are not compacted away: a rewind keeps the rewound rows
//! counted, a replacement or a compaction sets the counters to the rows it
//! inserted.

use hermes_state_query::message_reads::{self, AnchoredView, MessagesAround, RecentUserMessage};
use hermes_state_types::stored;
use hermes_state_types::{Content, NewMessage};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::Value;

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};
use crate::messages::{EncodedMessage, insert_message};

const SET_COUNTERS: &str =
    "UPDATE sessions SET message_count = ?2, tool_call_count = ?3 WHERE id = ?1";
const ARCHIVE_LIVE_ROWS: &str =
    "UPDATE messages SET active = 0, compacted = 1 WHERE session_id = ?1 AND active = 1";
const REWIND_FROM: &str =
    "UPDATE messages SET active = 0 WHERE session_id = ?1 AND id >= ?2 AND active = 1";
const COUNT_REWIND: &str =
    "UPDATE sessions SET rewind_count = COALESCE(rewind_count, 0) + 1 WHERE id = ?1";
const NEW_HEAD: &str = "SELECT MAX(id) FROM messages WHERE session_id = ?1 AND active = 1";
const RESTORE_FROM: &str =
    "UPDATE messages SET active = 1 WHERE session_id = ?1 AND id >= ?2 AND active = 0";
const SET_LATEST_USER_API_CONTENT: &str = "UPDATE messages SET api_content = ?3 WHERE id = (SELECT id FROM messages WHERE session_id = ?1 AND role = 'user' AND active = 1 ORDER BY id DESC LIMIT 1) AND content IS ?2";
const LATEST_MATCHING: &str = "SELECT id FROM messages WHERE session_id = ?1 AND role = ?2 AND content = ?3 AND active = 1 ORDER BY id DESC LIMIT 1";
const SET_DISPLAY_KIND: &str =
    "UPDATE messages SET display_kind = ?2, display_metadata = ?3 WHERE id = ?1";

/// What [`SessionDb::rewind_to_message`] did (`api.md` §4.5); the type
/// lives in the query crate so that every backend returns it.
pub use hermes_state_query::message_reads::RewindResult;

impl SessionDb {
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
    pub fn replace_messages(
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
    pub fn archive_and_compact(&self, session_id: &str, messages: &[NewMessage]) -> Result<usize> {
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
    pub fn rewind_to_message(&self, session_id: &str, message_id: i64) -> Result<RewindResult> {
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
    pub fn restore_rewound(&self, session_id: &str, since_id: i64) -> Result<usize> {
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
    pub fn set_latest_user_api_content(
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
    pub fn set_latest_matching_message_display_kind(
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
    pub fn get_messages_around(
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
    pub fn get_anchored_view(
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
    pub fn list_recent_user_messages(
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
    pub fn has_platform_message_id(
        &self,
        session_id: &str,
        platform_message_id: &str,
    ) -> Result<bool> {
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
    pub fn has_archived_messages(&self, session_id: &str) -> Result<bool> {
        self.read(|conn| Ok(message_reads::has_archived_messages(conn, session_id)?))
    }

    /// The rows [`SessionDb::replace_messages`] and
    /// [`SessionDb::archive_and_compact`] insert, encoded once before the
    /// write (a retried transaction binds the same values), with their
    /// timestamps fixed.
    fn replacement_rows(
        &self,
        session_id: &str,
        messages: &[NewMessage],
    ) -> Result<Vec<ReplacementRow>> {
        let messages = message_reads::replacement_messages(session_id, messages, self.now())
            .map_err(Error::InvalidInput)?;
        Ok(messages
            .into_iter()
            .map(|message| ReplacementRow {
                timestamp: message.timestamp.unwrap_or_default(),
                encoded: EncodedMessage::new(&message),
                message,
            })
            .collect())
    }
}

/// One message to insert, encoded, with its final timestamp.
struct ReplacementRow {
    message: NewMessage,
    encoded: EncodedMessage,
    timestamp: f64,
}

/// Inserts the rows as live messages and sets the session's counters to
/// them, inside the caller's transaction; returns how many were inserted.
fn insert_rows(conn: &Connection, session_id: &str, rows: &[ReplacementRow]) -> Result<usize> {
    let mut tool_calls = 0;
    for row in rows {
        insert_message(conn, &row.message, &row.encoded, row.timestamp)?;
        tool_calls += row.encoded.tool_call_count;
    }
    let inserted = rows.len();
    conn.execute(
        SET_COUNTERS,
        params![session_id, inserted as i64, tool_calls],
    )
    .context("setting the message counters")?;
    Ok(inserted)
}
