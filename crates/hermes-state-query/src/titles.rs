//! Session titles (`api.md` §6): the look-ups on a SQLite store; the
//! normalisation and lineage numbering ("Title", "Title #2", …) are the
//! contract crate's (`hermes_state_core::titles`).

pub use hermes_state_core::titles::{
    MAX_TITLE_CHARS, TitleError, decimal_digit, escape_like, next_numbered_title, sanitize_title,
    split_numbered,
};
use rusqlite::{Connection, OptionalExtension};

use crate::error::{QueryContext, QueryError};

/// The title of a session, `None` when it has none or does not exist.
pub fn get_session_title(
    conn: &Connection,
    session_id: &str,
) -> Result<Option<String>, QueryError> {
    conn.query_row(
        "SELECT title FROM sessions WHERE id = ?1",
        [session_id],
        |row| row.get::<_, Option<String>>(0),
    )
    .optional()
    .context("reading a title")
    .map(Option::flatten)
    .map_err(Into::into)
}

/// The session holding exactly this title (case-sensitive), if any.
pub fn session_id_by_title(conn: &Connection, title: &str) -> Result<Option<String>, QueryError> {
    conn.query_row("SELECT id FROM sessions WHERE title = ?1", [title], |row| {
        row.get(0)
    })
    .optional()
    .context("looking up a title")
    .map_err(Into::into)
}

/// The session a title names, preferring the newest numbered continuation
/// (`api.md` §6.3): the newest session whose title is LIKE `<title> #%`
/// (ASCII case-insensitive, any suffix), else the exact holder, else `None`.
pub fn resolve_session_by_title(
    conn: &Connection,
    title: &str,
) -> Result<Option<String>, QueryError> {
    let numbered: Option<String> = conn
        .query_row(
            "SELECT id FROM sessions WHERE title LIKE ?1 ESCAPE '\\' ORDER BY started_at DESC LIMIT 1",
            [format!("{} #%", escape_like(title))],
            |row| row.get(0),
        )
        .optional()
        .context("resolving a title")?;
    match numbered {
        Some(id) => Ok(Some(id)),
        None => session_id_by_title(conn, title),
    }
}

/// The next title of a lineage (`api.md` §6.4): `X` → `X #2` → `X #3`.
///
/// The base is the argument without a trailing ` #<digits>`; with no title
/// equal to the base or LIKE `<base> #%`, the base itself; otherwise the base
/// numbered one more than the highest ` #N` found (at least 2).
pub fn get_next_title_in_lineage(
    conn: &Connection,
    base_title: &str,
) -> Result<String, QueryError> {
    let base = split_numbered(base_title).map_or(base_title, |(base, _)| base);
    let mut stmt = conn
        .prepare("SELECT title FROM sessions WHERE title = ?1 OR title LIKE ?2 ESCAPE '\\'")
        .context("reading titles")?;
    let existing = stmt
        .query_map(
            [base.to_owned(), format!("{} #%", escape_like(base))],
            |row| row.get::<_, String>(0),
        )
        .context("reading titles")?
        .collect::<Result<Vec<_>, _>>()
        .context("reading titles")?;
    Ok(next_numbered_title(base, &existing))
}

/// Whether `ancestor_id` is a compression ancestor of `session_id`: reachable
/// by walking parent links upwards through parents ended by compression.
pub fn is_compression_ancestor(
    conn: &Connection,
    session_id: &str,
    ancestor_id: &str,
) -> Result<bool, QueryError> {
    let mut seen = vec![session_id.to_owned()];
    let mut current = session_id.to_owned();
    for _ in 0..crate::sessions::MAX_LINEAGE_STEPS {
        let parent: Option<(String, Option<String>)> = conn
            .query_row(
                "SELECT p.id, p.end_reason FROM sessions c JOIN sessions p ON p.id = c.parent_session_id WHERE c.id = ?1",
                [&current],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .context("walking compression ancestors")?;
        let Some((parent, end_reason)) = parent else {
            return Ok(false);
        };
        if end_reason.as_deref() != Some("compression") || seen.contains(&parent) {
            return Ok(false);
        }
        if parent == ancestor_id {
            return Ok(true);
        }
        seen.push(parent.clone());
        current = parent;
    }
    Ok(false)
}
