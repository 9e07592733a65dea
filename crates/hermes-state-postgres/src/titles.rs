//! Unique titles (`api.md` §6), with the SQLite backend's rules.

use hermes_state_core::titles::sanitize_title;
use postgres::Transaction;

use crate::error::{Context, PgError, Result};
use crate::rows::SESSION_COLUMNS;
use crate::rows::select_list;
use crate::rows::session_from_row;
use crate::{PgStore, Subject, WriteScope};
use hermes_state_core::Result as CoreResult;
use hermes_state_core::store::Titles;
use hermes_state_core::titles::escape_like;
use hermes_state_core::titles::next_numbered_title;
use hermes_state_core::titles::split_numbered;
use hermes_state_types::Session;

/// Whether `$2` is a compression ancestor of `$1`: reachable through
/// parents that ended by compression. One statement, so the walk reads one
/// snapshot of the links while other sessions' writes commit beside it;
/// `UNION` stops on a cycle.
const IS_COMPRESSION_ANCESTOR: &str = "WITH RECURSIVE up(id) AS (
    SELECT $1::text COLLATE \"C\"
    UNION
    SELECT p.id FROM up JOIN sessions c ON c.id = up.id
    JOIN sessions p ON p.id = c.parent_session_id
    WHERE p.end_reason = 'compression'
)
SELECT EXISTS (SELECT 1 FROM up WHERE id = $2::text COLLATE \"C\" AND id <> $1::text COLLATE \"C\")";

/// The keys a title change takes: the session's, and the title's, so two
/// sessions asking for one title take turns and the second sees the first.
fn title_scope<'a>(session_id: &'a str, title: Option<&'a str>) -> WriteScope<'a> {
    let mut subjects = vec![Subject::Session(session_id)];
    subjects.extend(title.map(Subject::Title));
    WriteScope::Subjects(subjects)
}

fn assign_title(
    tx: &mut Transaction<'_>,
    session_id: &str,
    title: Option<&str>,
    only_if_empty: bool,
) -> Result<bool> {
    // `api.md` §6: an automatic title is for an existing, untitled session
    // only; otherwise the answer is `false` and no uniqueness check runs.
    if only_if_empty && !is_untitled(tx, session_id)? {
        return Ok(false);
    }
    if let Some(title) = title {
        let holder: Option<String> = tx
            .query_opt("SELECT id FROM sessions WHERE title = $1", &[&title])
            .context("looking up a title")?
            .map(|row| row.get(0));
        if let Some(holder) = holder.filter(|holder| holder != session_id) {
            if !is_compression_ancestor(tx, session_id, &holder)? {
                return Err(PgError::TitleInUse {
                    title: title.to_owned(),
                    holder,
                });
            }
            // Only while the ancestor still holds it: its own title change
            // (under its key, not ours) may have committed since it was read.
            tx.execute(
                "UPDATE sessions SET title = NULL WHERE id = $1 AND title = $2",
                &[&holder, &title],
            )
            .context("moving a title from a compression ancestor")?;
        }
    }
    let sql = if only_if_empty {
        "UPDATE sessions SET title = $1 WHERE id = $2 AND title IS NULL"
    } else {
        "UPDATE sessions SET title = $1 WHERE id = $2"
    };
    let changed = tx
        .execute(sql, &[&title, &session_id])
        .context("setting a title")?;
    Ok(changed > 0)
}

/// The session exists and has no title.
fn is_untitled(tx: &mut Transaction<'_>, session_id: &str) -> Result<bool> {
    Ok(tx
        .query_opt(
            "SELECT title IS NULL FROM sessions WHERE id = $1",
            &[&session_id],
        )
        .context("reading a title")?
        .is_some_and(|row| row.get::<_, bool>(0)))
}

fn is_compression_ancestor(
    tx: &mut Transaction<'_>,
    session_id: &str,
    ancestor_id: &str,
) -> Result<bool> {
    Ok(tx
        .query_one(IS_COMPRESSION_ANCESTOR, &[&session_id, &ancestor_id])
        .context("walking compression ancestors")?
        .get(0))
}

impl Titles for PgStore {
    /// The next title of a lineage (`api.md` §6.4): `X` → `X #2` → `X #3`.
    /// Existing titles are `base` itself or start with `base #` in ASCII
    /// case-insensitive comparison (SQLite's `LIKE`).
    fn get_next_title_in_lineage(&self, base_title: &str) -> CoreResult<String> {
        let base = split_numbered(base_title).map_or(base_title, |(base, _)| base);
        let pattern = format!("{} #%", escape_like(base));
        let candidates: Vec<String> = self.read(|tx| {
            Ok(tx
                .query(
                    "SELECT title FROM sessions WHERE title = $1 OR title ILIKE $2 ESCAPE '\\'",
                    &[&base, &pattern],
                )
                .context("reading titles")?
                .iter()
                .map(|row| row.get(0))
                .collect())
        })?;
        // ILIKE folds case in every script; SQLite's LIKE in ASCII only.
        let prefix = format!("{base} #");
        let existing: Vec<String> = candidates
            .into_iter()
            .filter(|title| {
                title == base
                    || title.len() >= prefix.len()
                        && title.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
            })
            .collect();
        Ok(next_numbered_title(base, &existing))
    }

    /// `api.md` §6.2: the session holding exactly this title
    /// (case-sensitive), or `None`.
    fn get_session_by_title(&self, title: &str) -> CoreResult<Option<Session>> {
        let sql = format!(
            "SELECT {} FROM sessions s WHERE s.title = $1 LIMIT 1",
            select_list("s", &SESSION_COLUMNS)
        );
        Ok(self.read(|tx| {
            Ok(tx
                .query_opt(&sql, &[&title])
                .context("reading a session by title")?
                .as_ref()
                .map(session_from_row))
        })?)
    }

    /// Sets (or with `None` clears) a session's title (`api.md` §6.2); the
    /// title is normalised first. `false` for an unknown session. A title held
    /// by a compression ancestor moves to this session; held by any other
    /// session it is refused ([`PgError::TitleInUse`]).
    fn set_session_title(&self, session_id: &str, title: Option<&str>) -> CoreResult<bool> {
        let title = sanitize_title(title)?;
        let scope = title_scope(session_id, title.as_deref());
        Ok(self.write_in("setting a title", &scope, |tx| {
            assign_title(tx, session_id, title.as_deref(), false)
        })?)
    }

    /// Like [`PgStore::set_session_title`], but only when the session's
    /// title is NULL (`api.md` §6.2); `false` for a missing session or an
    /// existing title. As on SQLite, a title held by another session that is
    /// not a compression ancestor is refused ([`PgError::TitleInUse`]) even
    /// then; an empty title (after normalising) sets nothing (`false`).
    fn set_auto_title_if_empty(&self, session_id: &str, title: &str) -> CoreResult<bool> {
        let Some(title) = sanitize_title(Some(title))? else {
            return Ok(false);
        };
        let scope = title_scope(session_id, Some(&title));
        Ok(self.write_in("setting a title", &scope, |tx| {
            assign_title(tx, session_id, Some(&title), true)
        })?)
    }

    /// A session's title; `None` for an untitled or unknown session.
    fn get_session_title(&self, session_id: &str) -> CoreResult<Option<String>> {
        Ok(self.read(|tx| {
            Ok(tx
                .query_opt("SELECT title FROM sessions WHERE id = $1", &[&session_id])
                .context("reading a title")?
                .and_then(|row| row.get(0)))
        })?)
    }

    /// The session a title names (`api.md` §6.3): the newest numbered
    /// continuation `<title> #N` if any, else the exact holder.
    fn resolve_session_by_title(&self, title: &str) -> CoreResult<Option<String>> {
        let pattern = format!("{} #%", hermes_state_core::titles::escape_like(title));
        Ok(self.read(|tx| {
            let numbered = tx
                .query_opt(
                    "SELECT id FROM sessions WHERE title LIKE $1 ESCAPE '\\' \
                     ORDER BY started_at DESC LIMIT 1",
                    &[&pattern],
                )
                .context("resolving a title")?;
            if let Some(row) = numbered {
                return Ok(Some(row.get(0)));
            }
            Ok(tx
                .query_opt("SELECT id FROM sessions WHERE title = $1", &[&title])
                .context("resolving a title")?
                .map(|row| row.get(0)))
        })?)
    }
}
