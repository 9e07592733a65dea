//! Title writes (`api.md` §6.2).

use hermes_state_query::titles;
use rusqlite::{Connection, OptionalExtension};

use crate::db::SessionDb;
use crate::error::{Error, Result, WriteContext};
use hermes_state_core::store::Titles;
use hermes_state_query::lookups;
use hermes_state_types::Session;

impl SessionDb {
    /// The original's static `sanitize_title` (`api.md` §6.1): the title as
    /// it would be stored (whitespace collapsed, invisible characters
    /// removed), `None` for a title that normalises to nothing; longer than
    /// 100 characters is [`crate::ErrorKind::InvalidInput`]. Needs no store.
    pub fn sanitize_title(title: Option<&str>) -> Result<Option<String>> {
        Ok(titles::sanitize_title(title)?)
    }
}

fn assign_title(
    conn: &Connection,
    session_id: &str,
    title: Option<&str>,
    only_if_empty: bool,
) -> Result<bool> {
    // `api.md` §6: an automatic title is for an existing, untitled session
    // only; otherwise the answer is `false` and no uniqueness check runs.
    if only_if_empty && !is_untitled(conn, session_id)? {
        return Ok(false);
    }
    if let Some(title) = title
        && let Some(holder) =
            titles::session_id_by_title(conn, title)?.filter(|holder| holder != session_id)
    {
        if !titles::is_compression_ancestor(conn, session_id, &holder)? {
            return Err(Error::TitleInUse {
                title: title.to_owned(),
                session_id: holder,
            });
        }
        conn.execute("UPDATE sessions SET title = NULL WHERE id = ?1", [&holder])
            .context("moving a title from a compression ancestor")?;
    }
    let sql = if only_if_empty {
        "UPDATE sessions SET title = ?1 WHERE id = ?2 AND title IS NULL"
    } else {
        "UPDATE sessions SET title = ?1 WHERE id = ?2"
    };
    let changed = conn
        .execute(sql, rusqlite::params![title, session_id])
        .context("setting a title")?;
    Ok(changed > 0)
}

/// The session exists and has no title.
fn is_untitled(conn: &Connection, session_id: &str) -> Result<bool> {
    Ok(conn
        .query_row(
            "SELECT title IS NULL FROM sessions WHERE id = ?1",
            [session_id],
            |row| row.get::<_, bool>(0),
        )
        .optional()
        .context("reading a title")?
        .unwrap_or(false))
}

impl Titles for SessionDb {
    /// `api.md` §6.2: the session holding exactly this title
    /// (case-sensitive), or `None`.
    fn get_session_by_title(&self, title: &str) -> Result<Option<Session>> {
        self.read(|conn| Ok(lookups::get_session_by_title(conn, title)?))
    }

    /// The title of a session.
    fn get_session_title(&self, session_id: &str) -> Result<Option<String>> {
        self.snapshot_read(|conn| Ok(titles::get_session_title(conn, session_id)?))
    }

    /// The session a title names: its newest numbered continuation, else its exact holder.
    fn resolve_session_by_title(&self, title: &str) -> Result<Option<String>> {
        self.snapshot_read(|conn| Ok(titles::resolve_session_by_title(conn, title)?))
    }

    /// The next title of a lineage: `X` → `X #2` → `X #3`.
    fn get_next_title_in_lineage(&self, base_title: &str) -> Result<String> {
        self.snapshot_read(|conn| Ok(titles::get_next_title_in_lineage(conn, base_title)?))
    }

    /// Sets (or with `None`, clears) a session's title; returns whether the
    /// session exists.
    ///
    /// The title is normalised first (whitespace collapsed, invisible
    /// characters removed, at most 100 characters, else
    /// [`crate::ErrorKind::InvalidInput`]). Titles are unique among sessions,
    /// case-sensitively: a title held by a compression ancestor moves to this
    /// session (the continuation); held by any other session it is refused
    /// with [`Error::TitleInUse`] (kind `Constraint`).
    fn set_session_title(&self, session_id: &str, title: Option<&str>) -> Result<bool> {
        let title = titles::sanitize_title(title)?;
        self.write("setting a title", |conn| {
            assign_title(conn, session_id, title.as_deref(), false)
        })
    }

    /// Like [`SessionDb::set_session_title`], but only when the session has
    /// no title yet; `false` for a missing session or an existing title.
    fn set_auto_title_if_empty(&self, session_id: &str, title: &str) -> Result<bool> {
        let Some(title) = titles::sanitize_title(Some(title))? else {
            // Nothing to set: an empty title never counts as setting one.
            return Ok(false);
        };
        let title = Some(title);
        self.write("setting a title", |conn| {
            assign_title(conn, session_id, title.as_deref(), true)
        })
    }
}
