//! Cleanup beyond `prune_sessions`: batch and conditional deletes, the
//! automatic prune and archive runs, the import of the original's export
//! shape and the Telegram topic opt-in (`api.md` §11.2–11.6, §12.4).

mod auto;
pub(crate) mod import;

pub use auto::{AutoArchiveOptions, AutoArchiveReport, AutoPruneOptions, AutoPruneReport};
pub use import::{RefusedSession, SessionsImportReport};

use std::path::Path;

use rusqlite::Connection;

use crate::db::SessionDb;
use crate::error::{Result, WriteContext};
use crate::maintenance::remove_transcripts;
use crate::messages::collect_delegates;

/// A session that can go without losing anything: untitled, no message rows,
/// no child sessions.
const IS_EMPTY_SESSION: &str = "SELECT 1 FROM sessions s
WHERE s.id = ?1
  AND (s.title IS NULL OR s.title = '')
  AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
  AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = s.id)";

impl SessionDb {
    /// Deletes a session with its messages (`api.md` §11.6); returns `false`
    /// for an unknown id. [`SessionDb::delete_session_with`] without a
    /// transcript folder.
    pub fn delete_session(&self, session_id: &str) -> Result<bool> {
        self.delete_session_with(session_id, None)
    }

    /// Deletes a session with its messages (`api.md` §11.6
    /// `delete_session(session_id, sessions_dir)`), in one write
    /// transaction; returns `false` for an unknown id.
    ///
    /// Delegate (subagent) children, marked `$._delegate_from`, are deleted
    /// with it, recursively; every other child (branches, compression
    /// continuations) is kept and orphaned (`parent_session_id = NULL`).
    /// Usage rows go with their session. With `sessions_dir`, the transcript
    /// files of the session and of each deleted delegate are removed after
    /// the commit, as [`SessionDb::delete_sessions`] does.
    pub fn delete_session_with(
        &self,
        session_id: &str,
        sessions_dir: Option<&Path>,
    ) -> Result<bool> {
        let deleted = self.write("deleting a session", |conn| {
            delete_with_delegates(conn, session_id)
        })?;
        let Some(deleted) = deleted else {
            return Ok(false);
        };
        if let Some(dir) = sessions_dir {
            remove_transcripts(dir, &deleted);
        }
        Ok(true)
    }

    /// Deletes several sessions as [`SessionDb::delete_session`] does, in one
    /// write transaction (`api.md` §11.6): each session's delegate children
    /// go with it, its other children are orphaned. Empty ids are ignored,
    /// unknown ids skipped; returns how many of the given sessions existed.
    ///
    /// With `sessions_dir`, the transcript files (`<id>.json`, `<id>.jsonl`,
    /// `request_dump_<id>_*.json`) of every deleted session, delegates
    /// included, are removed after the commit (errors ignored).
    pub fn delete_sessions<I, S>(&self, ids: I, sessions_dir: Option<&Path>) -> Result<usize>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let ids: Vec<String> = ids
            .into_iter()
            .map(|id| id.as_ref().to_owned())
            .filter(|id| !id.is_empty())
            .collect();
        let (count, deleted) = self.write("deleting sessions", |conn| {
            let mut count = 0;
            let mut deleted = Vec::new();
            for id in &ids {
                if let Some(gone) = delete_with_delegates(conn, id)? {
                    count += 1;
                    deleted.extend(gone);
                }
            }
            Ok((count, deleted))
        })?;
        if let Some(dir) = sessions_dir {
            remove_transcripts(dir, &deleted);
        }
        Ok(count)
    }

    /// Deletes a session only when it is untitled, has no message rows and
    /// no child sessions (`api.md` §11.6); returns whether it was deleted
    /// (`false` for an unknown id). One write transaction.
    pub fn delete_session_if_empty(&self, session_id: &str) -> Result<bool> {
        self.write("deleting an empty session", |conn| {
            let empty = conn
                .prepare_cached(IS_EMPTY_SESSION)
                .and_then(|mut stmt| stmt.exists([session_id]))
                .context("checking that a session is empty")?;
            if empty {
                conn.execute("DELETE FROM sessions WHERE id = ?1", [session_id])
                    .context("deleting an empty session")?;
            }
            Ok(empty)
        })
    }

    /// Deletes every empty session (`api.md` §11.6: `message_count = 0`,
    /// ended, not archived; the sessions [`SessionDb::count_empty_sessions`]
    /// counts), orphaning their children (`parent_session_id =
    /// NULL`, never deleted) and removing any message rows left uncounted.
    /// One write transaction; returns how many sessions were deleted.
    pub fn delete_empty_sessions(&self) -> Result<usize> {
        self.write("deleting empty sessions", |conn| {
            let ids = hermes_state_query::rich_listing::empty_session_ids(conn)?;
            for id in &ids {
                delete_row(conn, id)?;
            }
            Ok(ids.len())
        })
    }

    /// Creates the Telegram DM topic tables and indexes where missing and
    /// sets `telegram_dm_topic_schema_version = '2'` (`api.md` §12.4), in
    /// one write transaction. Only on explicit request: opening a store
    /// never creates them. Idempotent.
    pub fn apply_telegram_topic_migration(&self) -> Result<()> {
        self.write("applying the Telegram topic migration", |conn| {
            hermes_state_schema::telegram_topics::apply_telegram_topic_migration(conn)?;
            Ok(())
        })
    }
}

/// Deletes one session with its delegate descendants, orphaning every other
/// child, inside the caller's transaction; the ids deleted (the session
/// last), or `None` for an unknown id.
fn delete_with_delegates(conn: &Connection, session_id: &str) -> Result<Option<Vec<String>>> {
    if !hermes_state_query::session_exists(conn, session_id)? {
        return Ok(None);
    }
    let mut ids = collect_delegates(conn, session_id)?;
    ids.push(session_id.to_owned());
    for id in &ids {
        delete_row(conn, id)?;
    }
    Ok(Some(ids))
}

/// Orphans the session's children, deletes its messages and its row (usage
/// rows cascade, FTS entries follow through the triggers), inside the
/// caller's transaction: every delete of a session (single, batch, empty,
/// prune) ends here.
pub(crate) fn delete_row(conn: &Connection, id: &str) -> Result<()> {
    conn.prepare_cached(
        "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?1",
    )
    .and_then(|mut stmt| stmt.execute([id]))
    .context("orphaning children")?;
    conn.prepare_cached("DELETE FROM messages WHERE session_id = ?1")
        .and_then(|mut stmt| stmt.execute([id]))
        .context("deleting messages")?;
    conn.prepare_cached("DELETE FROM sessions WHERE id = ?1")
        .and_then(|mut stmt| stmt.execute([id]))
        .context("deleting a session")?;
    Ok(())
}
