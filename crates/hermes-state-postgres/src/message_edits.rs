//! The message writers besides `append_message` (`api.md` §4.5): replacing
//! a transcript, compacting it in place, rewinding and restoring, with the
//! SQLite backend's rules (the rows to insert come from the contract crate's
//! `replacement_messages`). Each is one write transaction.
//!
//! A message is live (`active = 1, compacted = 0`), rewound (`active = 0,
//! compacted = 0`) or archived by compaction (`active = 0, compacted = 1`).
//! `message_count` counts the rows that are not compacted away: a rewind
//! keeps it, a replacement or a compaction sets it to the rows inserted.

use hermes_state_core::message_reads::{raw_tool_calls, replacement_messages};
use hermes_state_types::{Message, NewMessage};
use postgres::Transaction;

use crate::PgStore;
use crate::error::{Context, PgError, Result};
use crate::messages::{Encoded, insert_row};
use crate::rows::message_from_row;

const SET_COUNTERS: &str =
    "UPDATE sessions SET message_count = $2, tool_call_count = $3 WHERE id = $1";
pub(crate) const ARCHIVE_LIVE_ROWS: &str =
    "UPDATE messages SET active = 0, compacted = 1 WHERE session_id = $1 AND active = 1";
pub(crate) const REWIND_FROM: &str =
    "UPDATE messages SET active = 0 WHERE session_id = $1 AND id >= $2 AND active = 1";
pub(crate) const COUNT_REWIND: &str =
    "UPDATE sessions SET rewind_count = COALESCE(rewind_count, 0) + 1 WHERE id = $1";
pub(crate) const NEW_HEAD: &str =
    "SELECT MAX(id) FROM messages WHERE session_id = $1 AND active = 1";
pub(crate) const RESTORE_FROM: &str = "UPDATE messages SET active = 1 \
     WHERE session_id = $1 AND id >= $2 AND active = 0";

/// One message to insert with its stored columns, encoded before the
/// transaction (a retried transaction binds the same values).
pub(crate) struct ReplacementRow {
    message: NewMessage,
    encoded: Encoded,
}

impl PgStore {
    pub(crate) fn replacement_rows(
        &self,
        session_id: &str,
        messages: &[NewMessage],
    ) -> Result<Vec<ReplacementRow>> {
        let now = self.now();
        replacement_messages(session_id, messages, now)
            .map_err(PgError::InvalidInput)?
            .into_iter()
            .map(|message| {
                Ok(ReplacementRow {
                    encoded: Encoded::new(&message, now)?,
                    message,
                })
            })
            .collect()
    }
}

/// Inserts the rows as live messages and sets the session's counters to
/// them, inside the caller's transaction; returns how many were inserted.
pub(crate) fn insert_rows(
    tx: &mut Transaction<'_>,
    session_id: &str,
    rows: &[ReplacementRow],
) -> Result<usize> {
    // An unknown session is found before any row is inserted: a refused
    // insert would still draw an id from the sequence (never given back),
    // and later messages would skip ids that SQLite gives. `FOR KEY SHARE`
    // keeps the session from being deleted until the rows are in.
    if !rows.is_empty()
        && tx
            .query_opt(
                "SELECT 1 FROM sessions WHERE id = $1 FOR KEY SHARE",
                &[&session_id],
            )
            .context("looking up the session")?
            .is_none()
    {
        return Err(crate::PgError::SessionNotFound(session_id.to_owned()));
    }
    let mut tool_calls = 0;
    for row in rows {
        insert_row(tx, &row.message, &row.encoded)?;
        tool_calls += row.encoded.tool_call_count;
    }
    let inserted = i64::try_from(rows.len()).unwrap_or(i64::MAX);
    tx.execute(SET_COUNTERS, &[&session_id, &inserted, &tool_calls])
        .context("setting the message counters")?;
    Ok(rows.len())
}

/// A rewind target as the original returns it: decoded as `get_messages`
/// does, but with `tool_calls` the stored text (`raw_tool_calls`).
pub(crate) fn rewind_target(row: &postgres::Row) -> Message {
    let mut message = message_from_row(row);
    message.tool_calls = raw_tool_calls(row.get("tool_calls"));
    message
}
