//! The message writers besides `append_message` (`api.md` §4.5): replacing
//! a transcript, compacting it in place, rewinding and restoring, with the
//! SQLite backend's rules (the rows to insert come from the contract crate's
//! `replacement_messages`). Each is one write transaction.
//!
//! A message is live (`active = 1, compacted = 0`), rewound (`active = 0,
//! compacted = 0`) or archived by compaction (`active = 0, compacted = 1`).
//! `message_count` counts the rows that are not compacted away: a rewind
//! keeps it, a replacement or a compaction sets it to the rows inserted.

use hermes_state_core::message_reads::{RewindResult, raw_tool_calls, replacement_messages};
use hermes_state_types::{Message, NewMessage};
use postgres::Transaction;

use crate::error::{Context, PgError, Result};
use crate::messages::{Encoded, insert_row};
use crate::rows::{MESSAGE_COLUMNS, message_from_row, select_list};
use crate::{PgStore, WriteScope};

const SET_COUNTERS: &str =
    "UPDATE sessions SET message_count = $2, tool_call_count = $3 WHERE id = $1";
const ARCHIVE_LIVE_ROWS: &str =
    "UPDATE messages SET active = 0, compacted = 1 WHERE session_id = $1 AND active = 1";
const REWIND_FROM: &str =
    "UPDATE messages SET active = 0 WHERE session_id = $1 AND id >= $2 AND active = 1";
const COUNT_REWIND: &str =
    "UPDATE sessions SET rewind_count = COALESCE(rewind_count, 0) + 1 WHERE id = $1";
const NEW_HEAD: &str = "SELECT MAX(id) FROM messages WHERE session_id = $1 AND active = 1";
const RESTORE_FROM: &str = "UPDATE messages SET active = 1 \
     WHERE session_id = $1 AND id >= $2 AND active = 0";

/// One message to insert with its stored columns, encoded before the
/// transaction (a retried transaction binds the same values).
struct ReplacementRow {
    message: NewMessage,
    encoded: Encoded,
}

impl PgStore {
    /// Replaces the messages of a session in one transaction (`api.md`
    /// §4.5): deletes all its rows (only the live ones with `active_only`),
    /// inserts `messages` as live rows, and sets `message_count` /
    /// `tool_call_count` to the inserted rows.
    ///
    /// Errors: [`PgError::InvalidInput`] for a message of another session;
    /// [`PgError::SessionNotFound`] when rows are to be inserted into an
    /// unknown session.
    pub fn replace_messages(
        &self,
        session_id: &str,
        messages: &[NewMessage],
        active_only: bool,
    ) -> Result<()> {
        let rows = self.replacement_rows(session_id, messages)?;
        let delete = if active_only {
            "DELETE FROM messages WHERE session_id = $1 AND active = 1"
        } else {
            "DELETE FROM messages WHERE session_id = $1"
        };
        self.write_in(
            "replacing messages",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute(delete, &[&session_id])
                    .context("deleting the replaced messages")?;
                insert_rows(tx, session_id, &rows).map(|_| ())
            },
        )
    }

    /// Compacts a session in place (`api.md` §4.5): its live rows become
    /// archived, `messages` are inserted as live rows as by
    /// [`PgStore::replace_messages`], and the counters are set to the
    /// inserted rows. Returns the number of rows inserted.
    pub fn archive_and_compact(&self, session_id: &str, messages: &[NewMessage]) -> Result<usize> {
        let rows = self.replacement_rows(session_id, messages)?;
        self.write_in(
            "compacting messages",
            &WriteScope::session(session_id),
            |tx| {
                tx.execute(ARCHIVE_LIVE_ROWS, &[&session_id])
                    .context("archiving the live messages")?;
                insert_rows(tx, session_id, &rows)
            },
        )
    }

    /// Rewinds a session to one of its `user` messages (`api.md` §4.5):
    /// that message and every later live row become rewound and the
    /// session's `rewind_count` grows by one.
    ///
    /// Errors: [`PgError::MessageNotFound`] when the message is not one of
    /// the session's (an unknown session included) and
    /// [`PgError::RewindTargetRole`] when it is not a `user` message, with
    /// the original's texts.
    pub fn rewind_to_message(&self, session_id: &str, message_id: i64) -> Result<RewindResult> {
        let sql = format!(
            "SELECT {} FROM messages m WHERE m.id = $1 AND m.session_id = $2",
            select_list("m", &MESSAGE_COLUMNS)
        );
        self.write_in(
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
        )
    }

    /// Undoes rewinds (`api.md` §4.5): the session's rewound rows with
    /// `id >= since_id` become live again; returns how many. Rows archived
    /// by compaction stay archived; counters are unchanged.
    pub fn restore_rewound(&self, session_id: &str, since_id: i64) -> Result<usize> {
        self.write_in(
            "restoring rewound messages",
            &WriteScope::session(session_id),
            |tx| {
                let restored = tx
                    .execute(RESTORE_FROM, &[&session_id, &since_id])
                    .context("restoring rewound messages")?;
                Ok(usize::try_from(restored).unwrap_or(usize::MAX))
            },
        )
    }

    fn replacement_rows(
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
fn insert_rows(
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
fn rewind_target(row: &postgres::Row) -> Message {
    let mut message = message_from_row(row);
    message.tool_calls = raw_tool_calls(row.get("tool_calls"));
    message
}
