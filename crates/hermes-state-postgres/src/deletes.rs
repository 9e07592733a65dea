//! Deleting sessions (`api.md` §11.6) with the SQLite backend's rules: one
//! session with its delegate descendants (other children orphaned), a
//! batch, a session only when it is empty, and every empty session. Each is
//! one write transaction; transcript files go after the commit.
//!
//! Every delete of sessions ends in [`delete_rows`]: children orphaned,
//! messages and rows deleted (usage rows cascade).

use std::collections::HashSet;
use std::path::Path;

use hermes_state_core::prune::remove_transcripts;
use postgres::Transaction;
use serde_json::Value;

use crate::PgStore;
use crate::error::{Context, Result};

/// A session that can go without losing anything: untitled, no message
/// rows, no child sessions.
pub(crate) const IS_EMPTY_SESSION: &str = "SELECT 1 FROM sessions s
WHERE s.id = $1
  AND (s.title IS NULL OR s.title = '')
  AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)
  AND NOT EXISTS (SELECT 1 FROM sessions c WHERE c.parent_session_id = s.id)";

/// The sessions `count_empty_sessions` counts (`api.md` §11.6), oldest
/// start first.
pub(crate) const EMPTY_SESSIONS: &str = "SELECT s.id FROM sessions s
WHERE s.message_count = 0 AND s.ended_at IS NOT NULL AND s.archived = 0
ORDER BY s.started_at, s.id";

/// Sessions whose `model_config` may carry a delegate marker: the JSON is
/// parsed in Rust, because a cast of text that is not JSON would fail the
/// whole statement.
const MAYBE_MARKED: &str = "SELECT id, parent_session_id, model_config FROM sessions
WHERE model_config LIKE '%\\_delegate\\_from%'";

impl PgStore {
    /// Deletes several sessions as [`PgStore::delete_session_with`](hermes_state_core::store::Cleanup::delete_session_with) does,
    /// in one write transaction (`api.md` §11.6). Empty ids are ignored,
    /// unknown ids (and ids already deleted as an earlier one's delegate)
    /// skipped; returns how many of the given sessions existed. Transcripts
    /// of every deleted session, delegates included, go after the commit.
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
        let (count, deleted) = self.write("deleting sessions", |tx| {
            let mut count = 0;
            let mut deleted = Vec::new();
            for id in &ids {
                if let Some(gone) = delete_with_delegates(tx, id)? {
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
}

/// Deletes one session with its delegate descendants, orphaning every other
/// child, inside the caller's transaction; the ids deleted (the session
/// last), or `None` for an unknown id.
pub(crate) fn delete_with_delegates(
    tx: &mut Transaction<'_>,
    session_id: &str,
) -> Result<Option<Vec<String>>> {
    let exists = tx
        .query_opt("SELECT 1 FROM sessions WHERE id = $1", &[&session_id])
        .context("deleting a session")?
        .is_some();
    if !exists {
        return Ok(None);
    }
    let mut ids = collect_delegates(tx, session_id)?;
    ids.push(session_id.to_owned());
    delete_rows(tx, &ids)?;
    Ok(Some(ids))
}

/// A session carrying a `_delegate_from` key, as SQLite's JSON functions
/// read it: `from` is the marker's value when it is a string (only a string
/// equals a session id there), and any value, JSON `null` included, marks
/// the session as a delegate of its parent.
struct Marked {
    id: String,
    parent: Option<String>,
    from: Option<String>,
}

/// Every delegate descendant of `root` (`api.md` §11.6): sessions whose
/// `_delegate_from` names a collected id, or whose parent is a collected id
/// and that carry the marker; never `root` itself.
fn collect_delegates(tx: &mut Transaction<'_>, root: &str) -> Result<Vec<String>> {
    let marked: Vec<Marked> = tx
        .query(MAYBE_MARKED, &[])
        .context("finding delegate children")?
        .iter()
        .filter_map(|row| {
            let config: String = row.get(2);
            let marker = serde_json::from_str::<Value>(&config)
                .ok()?
                .get("_delegate_from")?
                .clone();
            Some(Marked {
                id: row.get(0),
                parent: row.get(1),
                from: marker.as_str().map(str::to_owned),
            })
        })
        .filter(|marked| marked.id != root)
        .collect();
    let mut reached: HashSet<&str> = HashSet::from([root]);
    let mut collected: Vec<String> = Vec::new();
    loop {
        let before = collected.len();
        for marked in &marked {
            if reached.contains(marked.id.as_str()) {
                continue;
            }
            let by_marker = marked.from.as_deref().is_some_and(|f| reached.contains(f));
            let by_parent = marked
                .parent
                .as_deref()
                .is_some_and(|p| reached.contains(p));
            if by_marker || by_parent {
                reached.insert(&marked.id);
                collected.push(marked.id.clone());
            }
        }
        if collected.len() == before {
            return Ok(collected);
        }
    }
}

/// Orphans the sessions' children, deletes their messages and their rows
/// (usage rows cascade), inside the caller's transaction.
pub(crate) fn delete_rows(tx: &mut Transaction<'_>, ids: &[String]) -> Result<()> {
    tx.execute(
        "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ANY($1)",
        &[&ids],
    )
    .context("orphaning children")?;
    tx.execute("DELETE FROM messages WHERE session_id = ANY($1)", &[&ids])
        .context("deleting messages")?;
    tx.execute("DELETE FROM sessions WHERE id = ANY($1)", &[&ids])
        .context("deleting sessions")?;
    Ok(())
}
