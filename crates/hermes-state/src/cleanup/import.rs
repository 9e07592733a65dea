//! `import_sessions`: restoring the original's export shape (`api.md` §11.2),
//! the list `export_session` / `export_all` produce, with the original's
//! limits. Everything is validated before anything is written; the import
//! is one write transaction.

use std::collections::{HashMap, HashSet};

use hermes_state_schema::reconcile::{ColumnInfo, live_columns, quote_identifier};
use hermes_state_types::{Content, pyjson, stored};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension};
use serde_json::{Map, Value};

use crate::db::SessionDb;
use crate::error::{Result, WriteContext};

#[cfg(feature = "postgres")]
pub(crate) mod on_postgres;

/// At most this many sessions per import.
const MAX_SESSIONS: usize = 500;
/// At most this many messages per session.
const MAX_SESSION_MESSAGES: usize = 10_000;
/// At most this many messages per import.
const MAX_MESSAGES: usize = 50_000;
/// At most this many bytes of JSON per session (its messages included).
const MAX_SESSION_BYTES: usize = 5 << 20;
/// At most this many bytes of JSON per import.
const MAX_TOTAL_BYTES: usize = 25 << 20;

/// Columns describing what a running agent is doing with a session; an
/// imported session starts without that state (their defaults).
const LIVE_STATE_COLUMNS: [&str; 7] = [
    "handoff_state",
    "handoff_platform",
    "handoff_error",
    "compression_failure_cooldown_until",
    "compression_failure_error",
    "compression_fallback_streak",
    "compression_ineffective_count",
];

/// Session columns the import sets itself.
const COMPUTED_COLUMNS: [&str; 4] = [
    "id",
    "parent_session_id",
    "message_count",
    "tool_call_count",
];

/// What [`SessionDb::import_sessions`] did: the original's `{"ok",
/// "imported", "skipped", "detached", "errors"}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SessionsImportReport {
    /// False when validation failed; then nothing was written and the
    /// counts are 0.
    pub ok: bool,
    /// Sessions written.
    pub imported: usize,
    /// Sessions left out because the store already has their id.
    pub skipped: usize,
    /// Imported sessions whose parent is missing (or would close a cycle):
    /// written with `parent_session_id` NULL.
    pub detached: usize,
    /// Every validation error, each naming the item (`sessions[3]…`).
    pub errors: Vec<String>,
}

/// One validated session of the import.
struct Item<'a> {
    id: &'a str,
    row: &'a Map<String, Value>,
    messages: Vec<&'a Map<String, Value>>,
}

impl SessionDb {
    /// Restores sessions from the original's export shape (`api.md` §11.2):
    /// a JSON list of session objects (columns, optional `last_active`,
    /// `messages` with the decoded fields of `get_messages`).
    ///
    /// Limits: 500 sessions, 10 000 messages per session, 50 000 in all,
    /// 5 MiB per session and 25 MiB in all (compact JSON). Every item needs
    /// a non-empty unique string `id`, a non-empty string `source`, a numeric
    /// `started_at`; every message an object with a non-empty string `role`
    /// and a numeric `timestamp`. Any violation gives a report with `ok`
    /// false and every error found, and nothing is written.
    ///
    /// In one write transaction: ids the store already has are skipped;
    /// each new session gets its known columns (keys that are not columns
    /// of this store are ignored), the live-state columns (handoff and
    /// compression-failure state) are reset to their defaults, a title
    /// another session holds is dropped (titles stay unique), messages get
    /// new ids in list order and the session's `message_count` and
    /// `tool_call_count` count them. Parents are re-linked last, only when
    /// the parent exists (in the store or the import) and the link closes no
    /// cycle; otherwise the session is counted as `detached`.
    ///
    /// Errors (not reports): a read-only handle, a failed write.
    pub fn import_sessions(&self, sessions: &Value) -> Result<SessionsImportReport> {
        let items = match validate(sessions) {
            Ok(items) => items,
            Err(errors) => {
                return Ok(SessionsImportReport {
                    ok: false,
                    errors,
                    ..SessionsImportReport::default()
                });
            }
        };
        self.write("importing sessions", |conn| import(conn, &items))
    }
}

fn validate(sessions: &Value) -> std::result::Result<Vec<Item<'_>>, Vec<String>> {
    let Some(list) = sessions.as_array() else {
        return Err(vec!["expected a list of sessions".to_owned()]);
    };
    let mut errors = Vec::new();
    if list.len() > MAX_SESSIONS {
        errors.push(format!(
            "too many sessions: {} (at most {MAX_SESSIONS})",
            list.len()
        ));
    }
    let mut items = Vec::with_capacity(list.len());
    let mut seen = HashSet::new();
    let (mut total_messages, mut total_bytes) = (0usize, 0usize);
    for (index, value) in list.iter().enumerate() {
        let at = format!("sessions[{index}]");
        let Some(row) = value.as_object() else {
            errors.push(format!("{at}: not an object"));
            continue;
        };
        let bytes = serde_json::to_vec(value).map_or(usize::MAX, |json| json.len());
        total_bytes = total_bytes.saturating_add(bytes);
        if bytes > MAX_SESSION_BYTES {
            errors.push(format!("{at}: {bytes} bytes (at most {MAX_SESSION_BYTES})"));
        }
        let id = row.get("id").and_then(Value::as_str).unwrap_or_default();
        if id.is_empty() {
            errors.push(format!("{at}: id must be a non-empty string"));
        } else if !seen.insert(id) {
            errors.push(format!("{at}: duplicate id {id:?}"));
        }
        if row
            .get("source")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            errors.push(format!("{at}: source must be a non-empty string"));
        }
        if !row.get("started_at").is_some_and(is_finite_number) {
            errors.push(format!("{at}: started_at must be a number"));
        }
        let messages = match row.get("messages") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(messages)) => check_messages(&at, messages, &mut errors),
            Some(_) => {
                errors.push(format!("{at}: messages must be a list"));
                Vec::new()
            }
        };
        total_messages += messages.len();
        items.push(Item { id, row, messages });
    }
    if total_messages > MAX_MESSAGES {
        errors.push(format!(
            "too many messages: {total_messages} (at most {MAX_MESSAGES})"
        ));
    }
    if total_bytes > MAX_TOTAL_BYTES {
        errors.push(format!(
            "too large: {total_bytes} bytes (at most {MAX_TOTAL_BYTES})"
        ));
    }
    if errors.is_empty() {
        Ok(items)
    } else {
        Err(errors)
    }
}

fn check_messages<'a>(
    at: &str,
    messages: &'a [Value],
    errors: &mut Vec<String>,
) -> Vec<&'a Map<String, Value>> {
    if messages.len() > MAX_SESSION_MESSAGES {
        errors.push(format!(
            "{at}: {} messages (at most {MAX_SESSION_MESSAGES})",
            messages.len()
        ));
    }
    let mut valid = Vec::with_capacity(messages.len());
    for (index, message) in messages.iter().enumerate() {
        let at = format!("{at}.messages[{index}]");
        let Some(message) = message.as_object() else {
            errors.push(format!("{at}: not an object"));
            continue;
        };
        if message
            .get("role")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            errors.push(format!("{at}: role must be a non-empty string"));
        }
        if !message.get("timestamp").is_some_and(is_finite_number) {
            errors.push(format!("{at}: timestamp must be a number"));
        }
        valid.push(message);
    }
    valid
}

fn is_finite_number(value: &Value) -> bool {
    value.as_f64().is_some_and(f64::is_finite)
}

/// The import transaction.
fn import(conn: &Connection, items: &[Item<'_>]) -> Result<SessionsImportReport> {
    let session_columns = columns(conn, "sessions")?;
    let message_columns = columns(conn, "messages")?;
    let mut report = SessionsImportReport {
        ok: true,
        ..SessionsImportReport::default()
    };
    let mut imported = Vec::new();
    for item in items {
        if hermes_state_query::session_exists(conn, item.id)? {
            report.skipped += 1;
            continue;
        }
        insert_session(conn, item, &session_columns)?;
        let mut tool_calls = 0;
        for message in &item.messages {
            tool_calls += insert_message(conn, item.id, message, &message_columns)?;
        }
        conn.prepare_cached(
            "UPDATE sessions SET message_count = ?2, tool_call_count = ?3 WHERE id = ?1",
        )
        .and_then(|mut stmt| {
            stmt.execute(rusqlite::params![
                item.id,
                item.messages.len() as i64,
                tool_calls
            ])
        })
        .context("counting imported messages")?;
        report.imported += 1;
        imported.push(item);
    }
    for item in imported {
        let Some(parent) = item
            .row
            .get("parent_session_id")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
        else {
            continue;
        };
        if hermes_state_query::session_exists(conn, parent)? && !reaches(conn, parent, item.id)? {
            conn.execute(
                "UPDATE sessions SET parent_session_id = ?2 WHERE id = ?1",
                [item.id, parent],
            )
            .context("re-linking imported sessions")?;
        } else {
            report.detached += 1;
        }
    }
    Ok(report)
}

/// The live columns of a table by name.
fn columns(conn: &Connection, table: &str) -> Result<HashMap<String, ColumnInfo>> {
    Ok(live_columns(conn, table)?
        .into_iter()
        .map(|c| (c.name.clone(), c))
        .collect())
}

/// Whether following `parent_session_id` up from `start` reaches `target`
/// (`start` itself included); stops on a cycle already in the store.
fn reaches(conn: &Connection, start: &str, target: &str) -> Result<bool> {
    let mut seen = HashSet::new();
    let mut current = Some(start.to_owned());
    while let Some(id) = current {
        if id == target {
            return Ok(true);
        }
        if !seen.insert(id.clone()) {
            return Ok(false);
        }
        current = conn
            .prepare_cached("SELECT parent_session_id FROM sessions WHERE id = ?1")
            .and_then(|mut stmt| {
                stmt.query_row([&id], |row| row.get::<_, Option<String>>(0))
                    .optional()
            })
            .map(Option::flatten)
            .context("following parents")?;
    }
    Ok(false)
}

fn insert_session(
    conn: &Connection,
    item: &Item<'_>,
    live: &HashMap<String, ColumnInfo>,
) -> Result<()> {
    let mut names = vec![quote_identifier("id")];
    let mut values = vec![SqlValue::Text(item.id.to_owned())];
    for (key, value) in item.row {
        let Some(column) = live.get(key) else {
            continue;
        };
        if COMPUTED_COLUMNS.contains(&key.as_str()) || LIVE_STATE_COLUMNS.contains(&key.as_str()) {
            continue;
        }
        let mut value = sql_value(value);
        if key == "title" && title_is_taken(conn, &value)? {
            value = SqlValue::Null;
        }
        if matches!(value, SqlValue::Null) && column.not_null {
            continue; // the column's default
        }
        names.push(quote_identifier(key));
        values.push(value);
    }
    insert(conn, "sessions", &names, &values).context("importing a session")?;
    Ok(())
}

fn title_is_taken(conn: &Connection, title: &SqlValue) -> Result<bool> {
    match title {
        SqlValue::Text(text) if !text.is_empty() => Ok(conn
            .prepare_cached("SELECT 1 FROM sessions WHERE title = ?1")
            .and_then(|mut stmt| stmt.exists([text]))
            .context("checking an imported title")?),
        _ => Ok(false),
    }
}

/// Inserts one exported message under a new id; returns its tool-call count.
fn insert_message(
    conn: &Connection,
    session_id: &str,
    message: &Map<String, Value>,
    live: &HashMap<String, ColumnInfo>,
) -> Result<i64> {
    let mut names = vec![quote_identifier("session_id")];
    let mut values = vec![SqlValue::Text(session_id.to_owned())];
    let mut tool_call_count = 0;
    for (key, value) in message {
        let Some(column) = live.get(key) else {
            continue;
        };
        let value = match key.as_str() {
            "id" | "session_id" => continue,
            "content" => content_value(value),
            "tool_calls" => {
                let encoded = stored::encode_tool_calls(Some(value));
                tool_call_count = encoded.count;
                encoded.text.map_or(SqlValue::Null, SqlValue::Text)
            }
            _ => sql_value(value),
        };
        if matches!(value, SqlValue::Null) && column.not_null {
            continue;
        }
        names.push(quote_identifier(key));
        values.push(value);
    }
    insert(conn, "messages", &names, &values).context("importing a message")?;
    Ok(tool_call_count)
}

fn insert(
    conn: &Connection,
    table: &str,
    names: &[String],
    values: &[SqlValue],
) -> rusqlite::Result<usize> {
    let placeholders = vec!["?"; values.len()].join(", ");
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES ({placeholders})",
        names.join(", ")
    );
    conn.prepare_cached(&sql)?
        .execute(rusqlite::params_from_iter(values))
}

/// Content as `get_messages` decoded it, stored again with the store's codec.
fn content_value(value: &Value) -> SqlValue {
    let content = match value {
        Value::Null => return SqlValue::Null,
        Value::String(text) => Content::Text(text.clone()),
        Value::Bool(b) => Content::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Content::Integer(i),
            None => Content::Real(n.as_f64().unwrap_or_default()),
        },
        structured => Content::Structured(structured.clone()),
    };
    match stored::encode_content(&content) {
        stored::StoredValue::Null => SqlValue::Null,
        stored::StoredValue::Integer(i) => SqlValue::Integer(i),
        stored::StoredValue::Real(f) => SqlValue::Real(f),
        stored::StoredValue::Text(t) => SqlValue::Text(t),
        stored::StoredValue::Blob(b) => SqlValue::Blob(b),
    }
}

/// A plain column value: JSON scalars as themselves (booleans as 0/1), lists
/// and objects as Python `json.dumps` text.
fn sql_value(value: &Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => SqlValue::Integer(i),
            None => SqlValue::Real(n.as_f64().unwrap_or_default()),
        },
        Value::String(text) => SqlValue::Text(text.clone()),
        other => SqlValue::Text(pyjson::to_string(other)),
    }
}
