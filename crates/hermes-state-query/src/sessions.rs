//! Reading sessions.

use std::collections::HashSet;

pub use hermes_state_core::sessions::{MAX_LINEAGE_STEPS, SessionCountOptions};
use hermes_state_types::Session;
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, params_from_iter};

use crate::conditions::{Conditions, text_value};
use crate::error::{QueryContext, QueryError};
use crate::lookups::listable_sql;
use crate::rows::session_from_row;

/// One session row (`SELECT *`), or `None` for an unknown id.
pub fn get_session(conn: &Connection, session_id: &str) -> Result<Option<Session>, QueryError> {
    let mut stmt = conn
        .prepare_cached("SELECT * FROM sessions WHERE id = ?1")
        .context("reading a session")?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    stmt.query_row([session_id], |row| session_from_row(row, &columns))
        .optional()
        .context("reading a session")
        .map_err(Into::into)
}

/// The parent of a session, `None` for roots and unknown ids; a parent link
/// that is not text (a file another tool wrote) is no link.
pub fn parent_of(conn: &Connection, session_id: &str) -> Result<Option<String>, QueryError> {
    conn.prepare_cached("SELECT parent_session_id FROM sessions WHERE id = ?1")
        .context("reading a parent link")?
        .query_row([session_id], |row| {
            Ok(match row.get_ref(0)? {
                rusqlite::types::ValueRef::Text(bytes) => {
                    Some(String::from_utf8_lossy(bytes).into_owned())
                }
                _ => None,
            })
        })
        .optional()
        .context("reading a parent link")
        .map(Option::flatten)
        .map_err(Into::into)
}

/// The lineage from its root down to `session_id` (`api.md` §9.2): walk
/// `parent_session_id` upwards at most [`MAX_LINEAGE_STEPS`] steps, stopping at
/// a missing row or a repeated id, then reverse. An unknown id gives `[id]`.
pub fn lineage_root_to_tip(conn: &Connection, session_id: &str) -> Result<Vec<String>, QueryError> {
    let mut chain = vec![session_id.to_owned()];
    let mut seen: HashSet<String> = chain.iter().cloned().collect();
    let mut current = session_id.to_owned();
    for _ in 0..MAX_LINEAGE_STEPS {
        let Some(parent) = parent_of(conn, &current)? else {
            break;
        };
        if !seen.insert(parent.clone()) || !session_exists(conn, &parent)? {
            break;
        }
        chain.push(parent.clone());
        current = parent;
    }
    chain.reverse();
    Ok(chain)
}

/// Whether a session row exists.
pub fn session_exists(conn: &Connection, session_id: &str) -> Result<bool, QueryError> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)")
        .context("checking a session")?
        .query_row([session_id], |row| row.get(0))
        .context("checking a session")
        .map_err(Into::into)
}

/// A `state_meta` value, `None` when the key is absent.
pub fn get_meta(conn: &Connection, key: &str) -> Result<Option<String>, QueryError> {
    conn.prepare_cached("SELECT value FROM state_meta WHERE key = ?1")
        .context("reading state_meta")?
        .query_row([key], |row| row.get::<_, Option<String>>(0))
        .optional()
        .context("reading state_meta")
        .map(Option::flatten)
        .map_err(Into::into)
}

/// Number of sessions `options` selects (`api.md` §2.4): by default every
/// session that is not archived.
pub fn session_count(conn: &Connection, options: &SessionCountOptions) -> Result<i64, QueryError> {
    let mut conditions = Conditions::default();
    if options.exclude_children {
        conditions.push(&listable_sql("s"), []);
    }
    if let Some(source) = options.source.as_deref().filter(|s| !s.is_empty()) {
        conditions.push("s.source = ?", [text_value(source)]);
    }
    if !options.exclude_sources.is_empty() {
        let marks = vec!["?"; options.exclude_sources.len()].join(", ");
        conditions.push(
            &format!("s.source NOT IN ({marks})"),
            options.exclude_sources.iter().map(|s| text_value(s)),
        );
    }
    if let Some(prefix) = options.cwd_prefix.as_deref().filter(|p| !p.is_empty()) {
        conditions.push_cwd_prefix(prefix);
    }
    if options.min_message_count > 0 {
        conditions.push(
            "s.message_count >= ?",
            [SqlValue::Integer(options.min_message_count)],
        );
    }
    if options.archived_only {
        conditions.push("s.archived = 1", []);
    } else if !options.include_archived {
        conditions.push("s.archived = 0", []);
    }
    let sql = format!(
        "SELECT COUNT(*) FROM sessions s{}",
        conditions.where_clause()
    );
    conn.query_row(&sql, params_from_iter(conditions.params), |r| r.get(0))
        .context("counting sessions")
        .map_err(Into::into)
}
