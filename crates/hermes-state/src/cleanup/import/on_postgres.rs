//! `import_sessions` on a PostgreSQL store (feature `postgres`): the same
//! validation and the same value conversions as on SQLite, then one
//! transaction on the server ([`PgStore::import_session_list`]).

use std::collections::HashSet;

use hermes_state_postgres::PgStore;
use hermes_state_postgres::import::{ListedMessage, ListedSession};
use hermes_state_types::stored::StoredValue;

use super::*;

/// [`SessionDb::import_sessions`] on PostgreSQL.
pub(crate) fn import_sessions(store: &PgStore, sessions: &Value) -> Result<SessionsImportReport> {
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
    let session_columns: HashSet<String> = store.table_columns("sessions")?.into_iter().collect();
    let message_columns: HashSet<String> = store.table_columns("messages")?.into_iter().collect();
    let listed: Vec<ListedSession> = items
        .iter()
        .map(|item| listed_session(item, &session_columns, &message_columns))
        .collect();
    let outcome = store.import_session_list(&listed)?;
    Ok(SessionsImportReport {
        ok: true,
        imported: outcome.imported,
        skipped: outcome.skipped,
        detached: outcome.detached,
        errors: Vec::new(),
    })
}

fn listed_session(
    item: &Item<'_>,
    session_columns: &HashSet<String>,
    message_columns: &HashSet<String>,
) -> ListedSession {
    let mut values = vec![("id".to_owned(), StoredValue::Text(item.id.to_owned()))];
    for (key, value) in item.row {
        if !session_columns.contains(key)
            || COMPUTED_COLUMNS.contains(&key.as_str())
            || LIVE_STATE_COLUMNS.contains(&key.as_str())
        {
            continue;
        }
        values.push((key.clone(), stored(sql_value(value))));
    }
    let messages = item
        .messages
        .iter()
        .map(|message| {
            let mut values = Vec::new();
            let mut tool_calls = 0;
            for (key, value) in *message {
                if !message_columns.contains(key) {
                    continue;
                }
                let value = match key.as_str() {
                    "id" | "session_id" => continue,
                    "content" => content_value(value),
                    "tool_calls" => {
                        let encoded = stored::encode_tool_calls(Some(value));
                        tool_calls = encoded.count;
                        encoded.text.map_or(SqlValue::Null, SqlValue::Text)
                    }
                    _ => sql_value(value),
                };
                values.push((key.clone(), stored(value)));
            }
            ListedMessage { values, tool_calls }
        })
        .collect();
    ListedSession {
        id: item.id.to_owned(),
        values,
        parent: item
            .row
            .get("parent_session_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        messages,
    }
}

fn stored(value: SqlValue) -> StoredValue {
    match value {
        SqlValue::Null => StoredValue::Null,
        SqlValue::Integer(i) => StoredValue::Integer(i),
        SqlValue::Real(f) => StoredValue::Real(f),
        SqlValue::Text(text) => StoredValue::Text(text),
        SqlValue::Blob(bytes) => StoredValue::Blob(bytes),
    }
}
