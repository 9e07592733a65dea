//! Reading messages and the conversation view.

pub use hermes_state_core::messages::{
    MessagePage, ResumeConversations, ancestor_display_prefix, counted_session,
    resume_conversations,
};
use hermes_state_types::{ConversationMessage, Message};
use rusqlite::{Connection, params_from_iter, types::Value as SqlValue};

use crate::conversation::build_conversation;
use crate::error::{QueryContext, QueryError};
use crate::rows::message_from_row;
use crate::sessions::lineage_root_to_tip;

/// The messages of a session in insertion (id) order (`api.md` §5.1).
pub fn get_messages(
    conn: &Connection,
    session_id: &str,
    page: MessagePage,
) -> Result<Vec<Message>, QueryError> {
    let mut sql = String::from("SELECT * FROM messages WHERE session_id = ?1");
    if !page.include_inactive {
        sql.push_str(" AND active = 1");
    }
    sql.push_str(" ORDER BY id");
    if page.limit.is_some() || page.offset != 0 {
        sql.push_str(" LIMIT ?2 OFFSET ?3");
    }
    let mut stmt = conn.prepare_cached(&sql).context("reading messages")?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let mut params = vec![SqlValue::Text(session_id.to_owned())];
    if page.limit.is_some() || page.offset != 0 {
        params.push(SqlValue::Integer(page.limit.unwrap_or(-1)));
        params.push(SqlValue::Integer(page.offset));
    }
    let rows = stmt
        .query_map(params_from_iter(params), |row| {
            message_from_row(row, &columns)
        })
        .context("reading messages")?;
    rows.collect::<Result<_, _>>()
        .context("reading messages")
        .map_err(Into::into)
}

/// The OpenAI-style conversation of a session (`api.md` §5.2), optionally
/// preceded by its ancestors' messages (root first).
pub fn get_messages_as_conversation(
    conn: &Connection,
    session_id: &str,
    include_ancestors: bool,
    include_inactive: bool,
) -> Result<Vec<ConversationMessage>, QueryError> {
    let sessions = if include_ancestors {
        lineage_root_to_tip(conn, session_id)?
    } else {
        vec![session_id.to_owned()]
    };
    let rows = messages_of(conn, &sessions, include_inactive)?;
    Ok(build_conversation(&rows, include_ancestors))
}

/// `get_resume_conversations`: the lineage's (root to `session_id`) active
/// messages read once; the session's own rows give the model history
/// (the conversation view, then [`repaired`](crate::conversation_repair::repaired)), all of them
/// the display history (the view with ancestors). An `Err` of
/// [`QueryError::TypeError`] is the repair's (tool calls that are no list).
pub fn get_resume_conversations(
    conn: &Connection,
    session_id: &str,
) -> Result<ResumeConversations, QueryError> {
    let sessions = lineage_root_to_tip(conn, session_id)?;
    Ok(resume_conversations(
        &messages_of(conn, &sessions, false)?,
        session_id,
    )?)
}

/// `get_ancestor_display_prefix`: the display history's messages that come
/// from the ancestors of `session_id` (its lineage's other sessions), as the
/// conversation view with ancestors; `[]` for a session without ancestors.
pub fn get_ancestor_display_prefix(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<ConversationMessage>, QueryError> {
    let sessions = lineage_root_to_tip(conn, session_id)?;
    if sessions.len() <= 1 {
        return Ok(Vec::new());
    }
    Ok(ancestor_display_prefix(
        &messages_of(conn, &sessions, false)?,
        session_id,
    ))
}

/// The messages of these sessions in id order, active ones only unless
/// `include_inactive`.
fn messages_of(
    conn: &Connection,
    sessions: &[String],
    include_inactive: bool,
) -> Result<Vec<Message>, QueryError> {
    let placeholders = (1..=sessions.len())
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ");
    let active = if include_inactive {
        ""
    } else {
        " AND active = 1"
    };
    let sql =
        format!("SELECT * FROM messages WHERE session_id IN ({placeholders}){active} ORDER BY id");
    let mut stmt = conn.prepare(&sql).context("reading the conversation")?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let rows = stmt
        .query_map(params_from_iter(sessions.iter()), |row| {
            message_from_row(row, &columns)
        })
        .context("reading the conversation")?
        .collect::<Result<Vec<_>, _>>()
        .context("reading the conversation")?;
    Ok(rows)
}

/// Number of message rows of a session, or of the whole store (inactive rows included).
/// The empty id counts the whole store, as the original's `if session_id:`
/// does ([`counted_session`]).
pub fn message_count(conn: &Connection, session_id: Option<&str>) -> Result<i64, QueryError> {
    match counted_session(session_id) {
        Some(id) => conn.query_row(
            "SELECT COUNT(*) FROM messages WHERE session_id = ?1",
            [id],
            |r| r.get(0),
        ),
        None => conn.query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0)),
    }
    .context("counting messages")
    .map_err(Into::into)
}

/// Number of messages of the sessions of one source.
pub fn message_count_of_source(conn: &Connection, source: &str) -> Result<i64, QueryError> {
    conn.query_row(
        "SELECT COUNT(*) FROM messages WHERE session_id IN (SELECT id FROM sessions WHERE source = ?1)",
        [source],
        |r| r.get(0),
    )
    .context("counting messages")
    .map_err(Into::into)
}

/// The rows [`get_messages`] would return (every page), counted.
pub fn count_session_messages(
    conn: &Connection,
    session_id: &str,
    include_inactive: bool,
) -> Result<u64, QueryError> {
    let sql = if include_inactive {
        "SELECT COUNT(*) FROM messages WHERE session_id = ?1"
    } else {
        "SELECT COUNT(*) FROM messages WHERE session_id = ?1 AND active = 1"
    };
    conn.query_row(sql, [session_id], |r| r.get::<_, i64>(0))
        .context("counting messages")
        .map(|n| n.max(0) as u64)
        .map_err(Into::into)
}

/// Hands the rows [`get_messages`] would return to `each`, one at a time as
/// the statement steps, so memory holds one message, not the session
/// (SQLite's sorter for `ORDER BY id` spills to temporary storage past its
/// cache). `each` returning [`ControlFlow::Break`](std::ops::ControlFlow::Break) stops the walk. Returns
/// how many messages were handed over.
pub fn for_each_message(
    conn: &Connection,
    session_id: &str,
    include_inactive: bool,
    mut each: impl FnMut(Message) -> std::ops::ControlFlow<()>,
) -> Result<u64, QueryError> {
    const WHAT: &str = "reading messages";
    let sql = if include_inactive {
        "SELECT * FROM messages WHERE session_id = ?1 ORDER BY id"
    } else {
        "SELECT * FROM messages WHERE session_id = ?1 AND active = 1 ORDER BY id"
    };
    let mut stmt = conn.prepare(sql).context(WHAT)?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let mut rows = stmt.query([session_id]).context(WHAT)?;
    let mut handed = 0;
    while let Some(row) = rows.next().context(WHAT)? {
        let message = message_from_row(row, &columns).context(WHAT)?;
        handed += 1;
        if each(message).is_break() {
            break;
        }
    }
    Ok(handed)
}
