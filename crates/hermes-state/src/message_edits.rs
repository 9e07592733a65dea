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

use hermes_state_query::message_reads::{self};
use hermes_state_types::NewMessage;
use rusqlite::{Connection, params};

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};
use crate::messages::{EncodedMessage, insert_message};

const SET_COUNTERS: &str =
    "UPDATE sessions SET message_count = ?2, tool_call_count = ?3 WHERE id = ?1";
pub(crate) const ARCHIVE_LIVE_ROWS: &str =
    "UPDATE messages SET active = 0, compacted = 1 WHERE session_id = ?1 AND active = 1";
pub(crate) const REWIND_FROM: &str =
    "UPDATE messages SET active = 0 WHERE session_id = ?1 AND id >= ?2 AND active = 1";
pub(crate) const COUNT_REWIND: &str =
    "UPDATE sessions SET rewind_count = COALESCE(rewind_count, 0) + 1 WHERE id = ?1";
pub(crate) const NEW_HEAD: &str =
    "SELECT MAX(id) FROM messages WHERE session_id = ?1 AND active = 1";
pub(crate) const RESTORE_FROM: &str =
    "UPDATE messages SET active = 1 WHERE session_id = ?1 AND id >= ?2 AND active = 0";
pub(crate) const SET_LATEST_USER_API_CONTENT: &str = "UPDATE messages SET api_content = ?3 WHERE id = (SELECT id FROM messages WHERE session_id = ?1 AND role = 'user' AND active = 1 ORDER BY id DESC LIMIT 1) AND content IS ?2";
pub(crate) const LATEST_MATCHING: &str = "SELECT id FROM messages WHERE session_id = ?1 AND role = ?2 AND content = ?3 AND active = 1 ORDER BY id DESC LIMIT 1";
pub(crate) const SET_DISPLAY_KIND: &str =
    "UPDATE messages SET display_kind = ?2, display_metadata = ?3 WHERE id = ?1";

/// What [`SessionDb::rewind_to_message`](hermes_state_core::store::Messages::rewind_to_message) did (`api.md` §4.5); the type
/// lives in the query crate so that every backend returns it.
pub use hermes_state_query::message_reads::RewindResult;

impl SessionDb {
    /// The rows [`SessionDb::replace_messages`] and
    /// [`SessionDb::archive_and_compact`] insert, encoded once before the
    /// write (a retried transaction binds the same values), with their
    /// timestamps fixed.
    pub(crate) fn replacement_rows(
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
pub(crate) struct ReplacementRow {
    message: NewMessage,
    encoded: EncodedMessage,
    timestamp: f64,
}

/// Inserts the rows as live messages and sets the session's counters to
/// them, inside the caller's transaction; returns how many were inserted.
pub(crate) fn insert_rows(
    conn: &Connection,
    session_id: &str,
    rows: &[ReplacementRow],
) -> Result<usize> {
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
