//! Message writes and reads (`api.md` §4, §5.1).

use hermes_state_types::stored::{self, StoredToolCalls, StoredValue};
use hermes_state_types::{Message, NewMessage};
use postgres::ToStatement;
use postgres::Transaction;
use postgres::types::{ToSql, Type};

use crate::content;
use crate::error::{Context, Result};
use crate::rows::{MESSAGE_COLUMNS, message_from_row, select_list};
use crate::sessions::foreign_key_to_not_found;
use crate::{PgStore, WriteScope, WriteTx};

/// The columns a new message row gets, in the order of the statements'
/// parameters (`active` is always 1).
macro_rules! message_columns {
    () => {
        "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, effect_disposition, timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, platform_message_id, observed, active, api_content, display_kind, display_metadata)"
    };
}

const INSERT_MESSAGE: &str = concat!(
    message_columns!(),
    "
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, 1, $18, $19, $20)
RETURNING id"
);

/// An append in one statement: the session's counters first, then the row
/// — only when the session exists (`counted` is empty otherwise, so no row
/// is inserted and no value of the id sequence is drawn). `$21` is the
/// message's tool calls.
/// The parameter types of [`APPEND_MESSAGE`], in order.
const APPEND_TYPES: [Type; 21] = [
    Type::TEXT,   // session_id
    Type::TEXT,   // role
    Type::TEXT,   // content
    Type::TEXT,   // tool_call_id
    Type::TEXT,   // tool_calls
    Type::TEXT,   // tool_name
    Type::TEXT,   // effect_disposition
    Type::FLOAT8, // timestamp
    Type::INT8,   // token_count
    Type::TEXT,   // finish_reason
    Type::TEXT,   // reasoning
    Type::TEXT,   // reasoning_content
    Type::TEXT,   // reasoning_details
    Type::TEXT,   // codex_reasoning_items
    Type::TEXT,   // codex_message_items
    Type::TEXT,   // platform_message_id
    Type::INT8,   // observed
    Type::TEXT,   // api_content
    Type::TEXT,   // display_kind
    Type::TEXT,   // display_metadata
    Type::INT8,   // $21: the message's tool calls
];

const APPEND_MESSAGE: &str = concat!(
    "WITH counted AS (
    UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + $21
    WHERE id = $1 RETURNING id
)
",
    message_columns!(),
    "
SELECT counted.id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, 1, $18, $19, $20
FROM counted
RETURNING id"
);

/// A message's columns as stored, computed before the transaction.
pub(crate) struct Encoded {
    content: Option<String>,
    tool_calls: Option<String>,
    pub(crate) tool_call_count: i64,
    reasoning_details: Option<String>,
    codex_reasoning_items: Option<String>,
    codex_message_items: Option<String>,
    display_metadata: Option<String>,
    timestamp: f64,
}

impl Encoded {
    pub(crate) fn new(message: &NewMessage, now: f64) -> Result<Encoded> {
        let StoredToolCalls {
            text: tool_calls,
            count: tool_call_count,
        } = stored::encode_tool_calls(message.tool_calls.as_ref());
        let value = match message.content.as_ref() {
            Some(c) => content::as_written(stored::encode_content(c)),
            None => StoredValue::Null,
        };
        let what = format!("a message of session {:?}", message.session_id);
        Ok(Encoded {
            content: content::to_pg(&value, &what)?,
            tool_calls,
            tool_call_count,
            reasoning_details: stored::encode_json_field(message.reasoning_details.as_ref()),
            codex_reasoning_items: stored::encode_json_field(
                message.codex_reasoning_items.as_ref(),
            ),
            codex_message_items: stored::encode_json_field(message.codex_message_items.as_ref()),
            display_metadata: stored::encode_json_field(message.display_metadata.as_ref()),
            timestamp: message.timestamp.unwrap_or(now),
        })
    }
}

impl PgStore {
    /// Appends a message and counts it in its session, in one transaction
    /// (`api.md` §4); returns the new id. Errors:
    /// [`crate::PgError::SessionNotFound`] for an unknown session.
    pub fn append_message(&self, message: &NewMessage) -> Result<i64> {
        let encoded = Encoded::new(message, self.now())?;
        self.write_in(
            "appending a message",
            &WriteScope::session(&message.session_id),
            |tx| insert(tx, message, &encoded),
        )
    }

    /// Appends several messages in one transaction (all or none).
    pub fn append_messages(&self, messages: &[NewMessage]) -> Result<Vec<i64>> {
        let now = self.now();
        let encoded = messages
            .iter()
            .map(|m| Encoded::new(m, now))
            .collect::<Result<Vec<_>>>()?;
        let scope = WriteScope::sessions(messages.iter().map(|m| m.session_id.as_str()));
        self.write_in("appending messages", &scope, |tx| {
            messages
                .iter()
                .zip(&encoded)
                .map(|(message, encoded)| insert(tx, message, encoded))
                .collect()
        })
    }

    /// The active messages of a session in insertion order (`api.md` §5.1).
    pub fn get_messages(&self, session_id: &str) -> Result<Vec<Message>> {
        let sql = format!(
            "SELECT {} FROM messages m WHERE m.session_id = $1 AND m.active = 1 \
             ORDER BY m.id",
            select_list("m", &MESSAGE_COLUMNS)
        );
        self.read(|tx| {
            Ok(tx
                .query(&sql, &[&session_id])
                .context("reading messages")?
                .iter()
                .map(message_from_row)
                .collect())
        })
    }

    /// The number of messages of one session, or of the whole store.
    pub fn message_count(&self, session_id: Option<&str>) -> Result<i64> {
        self.read(|tx| {
            let row = match hermes_state_core::messages::counted_session(session_id) {
                Some(id) => tx.query_one(
                    "SELECT count(*) FROM messages WHERE session_id = $1",
                    &[&id],
                ),
                None => tx.query_one("SELECT count(*) FROM messages", &[]),
            }
            .context("counting messages")?;
            Ok(row.get(0))
        })
    }

    /// The number of messages of the sessions of one source (compared
    /// exactly).
    pub fn message_count_of_source(&self, source: &str) -> Result<i64> {
        self.read(|tx| {
            Ok(tx
                .query_one(
                    "SELECT count(*) FROM messages \
                     WHERE session_id IN (SELECT id FROM sessions WHERE source = $1)",
                    &[&source],
                )
                .context("counting messages")?
                .get(0))
        })
    }
}

fn insert(tx: &mut WriteTx<'_, '_>, message: &NewMessage, e: &Encoded) -> Result<i64> {
    // Counting first finds an unknown session before the row is inserted:
    // a refused insert would still have drawn a value of the id sequence
    // (PostgreSQL never gives one back), and the next message would skip an
    // id that SQLite, whose failed insert rolls back with its transaction,
    // gives — the original's ids, and the ids callers keep, stay the same on
    // both backends. Both in one statement: one round trip on the hot path
    // of every host.
    let append = tx.prepared(APPEND_MESSAGE, &APPEND_TYPES)?;
    run_insert(tx, &append, message, e, Some(e.tool_call_count))?
        .ok_or_else(|| crate::PgError::SessionNotFound(message.session_id.clone()))
}

/// Inserts one live message row without counting it in its session.
/// Errors: [`crate::PgError::SessionNotFound`] for an unknown session.
pub(crate) fn insert_row(
    tx: &mut Transaction<'_>,
    message: &NewMessage,
    e: &Encoded,
) -> Result<i64> {
    run_insert(tx, INSERT_MESSAGE, message, e, None)?
        .ok_or_else(|| crate::PgError::SessionNotFound(message.session_id.clone()))
}

/// Runs one of the two insert statements (prepared, or its text sent
/// typed: one round trip), with `$21` when `tool_calls` is given; the new
/// id, or `None` when no row was inserted.
fn run_insert<S: ToStatement + ?Sized>(
    tx: &mut Transaction<'_>,
    statement: &S,
    message: &NewMessage,
    e: &Encoded,
    tool_calls: Option<i64>,
) -> Result<Option<i64>> {
    let observed = i64::from(message.observed);
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![
        &message.session_id,
        &message.role,
        &e.content,
        &message.tool_call_id,
        &e.tool_calls,
        &message.tool_name,
        &message.effect_disposition,
        &e.timestamp,
        &message.token_count,
        &message.finish_reason,
        &message.reasoning,
        &message.reasoning_content,
        &e.reasoning_details,
        &e.codex_reasoning_items,
        &e.codex_message_items,
        &message.platform_message_id,
        &observed,
        &message.api_content,
        &message.display_kind,
        &e.display_metadata,
    ];
    if let Some(count) = &tool_calls {
        params.push(count);
    }
    let row = tx.query_opt(statement, &params).map_err(|error| {
        foreign_key_to_not_found(error, &message.session_id, "appending a message")
    })?;
    Ok(row.map(|row| row.get(0)))
}
