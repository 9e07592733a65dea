//! The baseline: the same work as the facade, written by hand on one plain
//! `rusqlite` connection — the same SQL, the same schema and triggers (the
//! store is created by the facade), the same pragmas (WAL, `foreign_keys=ON`,
//! SQLite's default `synchronous`, the `cjk_unicode61` tokenizer registered so
//! the CJK triggers run) — and nothing else: no routing, no sanitizing, no
//! retries, no capability probes, no checkpoint or `optimize` policy, no
//! search context, no decoding into the library's types.
//!
//! Each figure of the benches is a ratio to this: what SQLite itself allows
//! for the same statements.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hermes_state::rusqlite::types::{Value as SqlValue, ValueRef};
use hermes_state::rusqlite::{self, Connection, OpenFlags, params, params_from_iter};
use serde::ser::{SerializeMap, Serializer};

/// The facade's message INSERT, with positional parameters.
pub const INSERT_MESSAGE: &str = "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, effect_disposition, timestamp, token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, platform_message_id, observed, active, api_content, display_kind, display_metadata)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, 1, ?18, ?19, ?20)";

/// The facade's counter update.
pub const COUNT_MESSAGE: &str = "UPDATE sessions SET message_count = message_count + 1, tool_call_count = tool_call_count + ?2 WHERE id = ?1";

/// The facade's recent-sessions query (no source filter).
pub const RECENT_SESSIONS: &str = "SELECT s.*,
    COALESCE(
        (SELECT SUBSTR(m.content, 1, 63)
         FROM messages m
         WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL
         ORDER BY m.timestamp, m.id LIMIT 1),
        ''
    ) AS preview,
    COALESCE(
        (SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id),
        s.started_at
    ) AS last_active
FROM sessions s";

/// The facade's ancestor walk.
pub const ANCESTORS: &str = "WITH RECURSIVE lineage(id, title, started_at, parent_session_id) AS (
    SELECT id, title, started_at, parent_session_id FROM sessions WHERE id = ?1
    UNION
    SELECT s.id, s.title, s.started_at, s.parent_session_id
    FROM sessions s JOIN lineage l ON s.id = l.parent_session_id
)
SELECT id, title, started_at, parent_session_id FROM lineage";

/// The facade's descendant walk.
pub const DESCENDANTS: &str =
    "WITH RECURSIVE descendants(id, title, started_at, parent_session_id) AS (
    SELECT id, title, started_at, parent_session_id FROM sessions WHERE id = ?1
    UNION
    SELECT s.id, s.title, s.started_at, s.parent_session_id
    FROM sessions s JOIN descendants d ON s.parent_session_id = d.id
)
SELECT id, title, started_at, parent_session_id FROM descendants";

/// The facade's model totals.
pub const MODEL_TOTALS: &str =
    "SELECT model, COUNT(*) as session_count, SUM(input_tokens) as total_input,
                    SUM(output_tokens) as total_output, SUM(estimated_cost_usd) as total_cost,
                    SUM(cache_read_tokens), SUM(cache_write_tokens), SUM(reasoning_tokens)
             FROM sessions WHERE model IS NOT NULL GROUP BY model ORDER BY total_cost DESC";

/// The facade's top sessions.
pub const TOP_SESSIONS: &str =
    "SELECT id, title, model, input_tokens + output_tokens AS total_tokens, estimated_cost_usd
             FROM sessions ORDER BY total_tokens DESC LIMIT ?1";

/// The export's session order (parents first).
pub const SESSIONS_IN_LINEAGE_ORDER: &str = "WITH RECURSIVE lineage(id, depth) AS (
    SELECT s.id, 0 FROM sessions s
    WHERE s.parent_session_id IS NULL
       OR NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id)
    UNION
    SELECT c.id, l.depth + 1 FROM sessions c JOIN lineage l ON c.parent_session_id = l.id
)
SELECT s.* FROM sessions s
LEFT JOIN (SELECT id, MIN(depth) AS depth FROM lineage GROUP BY id) d ON d.id = s.id
WHERE (?1 IS NULL OR s.source = ?1)
  AND (?2 IS NULL OR s.id IN (SELECT value FROM json_each(?2)))
ORDER BY d.depth IS NULL, d.depth, s.started_at, s.id";

/// The export's messages of one session.
pub const SESSION_MESSAGES: &str = "SELECT * FROM messages WHERE session_id = ?1 ORDER BY id";

/// A message as the baseline appends it: text content and tool calls as JSON.
#[derive(Debug, Clone)]
pub struct RawMessage {
    /// Its session.
    pub session_id: String,
    /// Its role.
    pub role: String,
    /// Text content.
    pub content: Option<String>,
    /// Tool calls (serialized at append time, as the facade does).
    pub tool_calls: Option<serde_json::Value>,
    /// Tool name of a tool result.
    pub tool_name: Option<String>,
    /// Call id of a tool result.
    pub tool_call_id: Option<String>,
    /// Finish reason.
    pub finish_reason: Option<String>,
    /// Token count.
    pub token_count: Option<i64>,
}

impl RawMessage {
    /// The baseline's view of a facade message (text content only).
    pub fn from_new(message: &hermes_state::NewMessage) -> RawMessage {
        RawMessage {
            session_id: message.session_id.clone(),
            role: message.role.clone(),
            content: match &message.content {
                Some(hermes_state::Content::Text(text)) => Some(text.clone()),
                _ => None,
            },
            tool_calls: message.tool_calls.clone(),
            tool_name: message.tool_name.clone(),
            tool_call_id: message.tool_call_id.clone(),
            finish_reason: message.finish_reason.clone(),
            token_count: message.token_count,
        }
    }
}

/// One search hit of the baseline (the columns the facade's SQL selects).
#[derive(Debug, Clone, PartialEq)]
pub struct RawHit {
    /// Message id.
    pub id: i64,
    /// Session id.
    pub session_id: String,
    /// Role.
    pub role: String,
    /// `snippet()` text.
    pub snippet: String,
    /// Content.
    pub content: Option<String>,
    /// Timestamp.
    pub timestamp: f64,
    /// Tool name.
    pub tool_name: Option<String>,
    /// Session source.
    pub source: Option<String>,
    /// Session model.
    pub model: Option<String>,
    /// Session start.
    pub session_started: Option<f64>,
}

/// A hit's neighbours in the baseline: (role, content) of the message
/// before and of the message after, those that exist.
pub type RawContext = Vec<(String, Option<String>)>;

/// The order of a baseline search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawOrder {
    /// `ORDER BY rank` (relevance, the default).
    Rank,
    /// `ORDER BY m.timestamp DESC, rank` (`sort = newest`).
    Newest,
    /// `ORDER BY m.timestamp ASC, rank` (`sort = oldest`).
    Oldest,
}

/// The filters of a baseline search, as in the facade's SQL.
#[derive(Debug, Clone, Default)]
pub struct RawFilters {
    /// `s.source IN (...)`.
    pub sources: Vec<String>,
    /// `m.role IN (...)`.
    pub roles: Vec<String>,
}

/// A lineage row.
pub type LineageRow = (String, Option<String>, f64, Option<String>);

/// What an export wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportCounts {
    /// Session lines.
    pub sessions: u64,
    /// Message lines.
    pub messages: u64,
    /// Bytes.
    pub bytes: u64,
}

/// The baseline's connection.
#[derive(Debug)]
pub struct Baseline {
    conn: Connection,
    /// Searches write `LIMIT`/`OFFSET` into their text instead of binding
    /// them ([`Baseline::with_literal_paging`]).
    literal_paging: bool,
}

impl Baseline {
    /// Opens an existing store with the facade's pragmas.
    pub fn open(path: &Path) -> rusqlite::Result<Baseline> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(Duration::from_millis(1000))?;
        // The CJK index's triggers need the tokenizer on every writing connection.
        hermes_state::schema::cjk::register(&conn)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        Ok(Baseline {
            conn,
            literal_paging: false,
        })
    }

    /// Opens an existing store read-only (`mode=ro`), as the facade's pooled
    /// readers do; the CJK tokenizer is registered for CJK MATCH queries.
    pub fn open_read_only(path: &Path) -> rusqlite::Result<Baseline> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(Duration::from_millis(1000))?;
        hermes_state::schema::cjk::register(&conn)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        Ok(Baseline {
            conn,
            literal_paging: false,
        })
    }

    /// This baseline with its searches' `LIMIT`/`OFFSET` written into the
    /// SQL text, as the facade writes them: bound there, SQLite marks them
    /// plan-relevant and the cached statement is prepared again on every
    /// run; written in, it runs ready. The strictest hand-written baseline.
    pub fn with_literal_paging(mut self) -> Baseline {
        self.literal_paging = true;
        self
    }

    /// The raw connection.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// `PRAGMA synchronous` of the connection.
    pub fn synchronous(&self) -> rusqlite::Result<i64> {
        self.conn.query_row("PRAGMA synchronous", [], |r| r.get(0))
    }

    /// Appends one message: `BEGIN IMMEDIATE`, INSERT, counter UPDATE, `COMMIT`.
    pub fn append(&self, message: &RawMessage) -> rusqlite::Result<i64> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let id = self.insert(message);
        match id {
            Ok(id) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(id)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Appends several messages in one transaction.
    pub fn append_batch(&self, messages: &[RawMessage]) -> rusqlite::Result<Vec<i64>> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        let ids: rusqlite::Result<Vec<i64>> = messages.iter().map(|m| self.insert(m)).collect();
        match ids {
            Ok(ids) => {
                self.conn.execute_batch("COMMIT")?;
                Ok(ids)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn insert(&self, m: &RawMessage) -> rusqlite::Result<i64> {
        let (tool_calls, count) = match &m.tool_calls {
            Some(serde_json::Value::Array(calls)) if !calls.is_empty() => (
                Some(serde_json::to_string(&m.tool_calls).unwrap_or_default()),
                calls.len() as i64,
            ),
            _ => (None, 0),
        };
        let mut insert = self.conn.prepare_cached(INSERT_MESSAGE)?;
        insert.execute(params![
            m.session_id,
            m.role,
            m.content,
            m.tool_call_id,
            tool_calls,
            m.tool_name,
            None::<String>,
            now(),
            m.token_count,
            m.finish_reason,
            None::<String>,
            None::<String>,
            None::<String>,
            None::<String>,
            None::<String>,
            None::<String>,
            0_i64,
            None::<String>,
            None::<String>,
            None::<String>,
        ])?;
        let id = self.conn.last_insert_rowid();
        self.conn
            .prepare_cached(COUNT_MESSAGE)?
            .execute(params![m.session_id, count])?;
        Ok(id)
    }

    /// One MATCH query on `table` with the facade's SELECT, joins, visibility
    /// filter, optional source/role filters and `ORDER BY rank LIMIT`.
    pub fn search(
        &self,
        table: &str,
        match_text: &str,
        filters: &RawFilters,
        limit: u32,
    ) -> rusqlite::Result<Vec<RawHit>> {
        self.search_ordered(table, match_text, filters, limit, RawOrder::Rank)
    }

    /// [`Baseline::search`] in the given order: the facade's `ORDER BY`
    /// for `sort = newest` / `oldest` (time, then rank), or rank.
    pub fn search_ordered(
        &self,
        table: &str,
        match_text: &str,
        filters: &RawFilters,
        limit: u32,
        order: RawOrder,
    ) -> rusqlite::Result<Vec<RawHit>> {
        let order = match order {
            RawOrder::Rank => "rank",
            RawOrder::Newest => "m.timestamp DESC, rank",
            RawOrder::Oldest => "m.timestamp ASC, rank",
        };
        let mut params: Vec<SqlValue> = vec![SqlValue::Text(match_text.to_owned())];
        let mut clauses = String::from(" AND (m.active = 1 OR m.compacted = 1)");
        for (column, values) in [("s.source", &filters.sources), ("m.role", &filters.roles)] {
            if values.is_empty() {
                continue;
            }
            let start = params.len() + 1;
            params.extend(values.iter().map(|v| SqlValue::Text(v.clone())));
            let placeholders: Vec<String> = (start..start + values.len())
                .map(|i| format!("?{i}"))
                .collect();
            clauses.push_str(&format!(" AND {column} IN ({})", placeholders.join(", ")));
        }
        let sql = format!(
            "SELECT m.id, m.session_id, m.role,
                    snippet({table}, -1, '>>>', '<<<', '...', 40) AS snippet,
                    m.content, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started
             FROM {table} JOIN messages m ON m.id = {table}.rowid
             JOIN sessions s ON s.id = m.session_id
             WHERE {table} MATCH ?1{clauses}
             ORDER BY {order} {}",
            if self.literal_paging {
                format!("LIMIT {limit} OFFSET 0")
            } else {
                format!("LIMIT ?{} OFFSET ?{}", params.len() + 1, params.len() + 2)
            }
        );
        if !self.literal_paging {
            params.push(SqlValue::Integer(i64::from(limit)));
            params.push(SqlValue::Integer(0));
        }
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params_from_iter(params), |row| {
            Ok(RawHit {
                id: row.get(0)?,
                session_id: row.get(1)?,
                role: row.get(2)?,
                snippet: row.get(3)?,
                content: row.get(4)?,
                timestamp: row.get(5)?,
                tool_name: row.get(6)?,
                source: row.get(7)?,
                model: row.get(8)?,
                session_started: row.get(9)?,
            })
        })?;
        rows.collect()
    }

    /// [`Baseline::search_ordered`] plus each hit's `context` as a
    /// hand-written client would fetch it: the message before and after the
    /// hit in its session (role and content), two indexed look-ups per hit
    /// with statements prepared once per call — the work the result contract
    /// (`api.md` §8.5) asks of the facade beyond the one search query.
    pub fn search_with_context(
        &self,
        table: &str,
        match_text: &str,
        filters: &RawFilters,
        limit: u32,
        order: RawOrder,
    ) -> rusqlite::Result<Vec<(RawHit, RawContext)>> {
        let hits = self.search_ordered(table, match_text, filters, limit, order)?;
        let mut before = self.conn.prepare(
            "SELECT role, content FROM messages WHERE session_id = ?1 AND (timestamp < ?2 OR (timestamp = ?2 AND id < ?3)) ORDER BY timestamp DESC, id DESC LIMIT 1",
        )?;
        let mut after = self.conn.prepare(
            "SELECT role, content FROM messages WHERE session_id = ?1 AND (timestamp > ?2 OR (timestamp = ?2 AND id > ?3)) ORDER BY timestamp ASC, id ASC LIMIT 1",
        )?;
        let mut out = Vec::with_capacity(hits.len());
        for hit in hits {
            let mut context = Vec::with_capacity(3);
            for stmt in [&mut before, &mut after] {
                let mut rows = stmt.query(params![hit.session_id, hit.timestamp, hit.id])?;
                if let Some(row) = rows.next()? {
                    context.push((row.get(0)?, row.get(1)?));
                }
            }
            out.push((hit, context));
        }
        Ok(out)
    }

    /// Recent sessions: every column of the session, preview and last activity.
    pub fn recent_sessions(
        &self,
        source: Option<&str>,
        limit: u32,
    ) -> rusqlite::Result<Vec<Vec<SqlValue>>> {
        let mut sql = String::from(RECENT_SESSIONS);
        let mut params: Vec<SqlValue> = Vec::new();
        if let Some(source) = source {
            sql.push_str(" WHERE s.source = ?1");
            params.push(SqlValue::Text(source.to_owned()));
        }
        sql.push_str(&format!(
            " ORDER BY s.started_at DESC LIMIT ?{} OFFSET ?{}",
            params.len() + 1,
            params.len() + 2
        ));
        params.push(SqlValue::Integer(i64::from(limit)));
        params.push(SqlValue::Integer(0));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let columns = stmt.column_count();
        let rows = stmt.query_map(params_from_iter(params), |row| {
            (0..columns).map(|i| row.get::<_, SqlValue>(i)).collect()
        })?;
        rows.collect()
    }

    /// The session and its ancestors.
    pub fn ancestors(&self, session_id: &str) -> rusqlite::Result<Vec<LineageRow>> {
        self.lineage(ANCESTORS, session_id)
    }

    /// The session and its descendants.
    pub fn descendants(&self, session_id: &str) -> rusqlite::Result<Vec<LineageRow>> {
        self.lineage(DESCENDANTS, session_id)
    }

    fn lineage(&self, sql: &str, session_id: &str) -> rusqlite::Result<Vec<LineageRow>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = stmt.query_map([session_id], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })?;
        rows.collect()
    }

    /// Totals per model.
    pub fn model_totals(&self) -> rusqlite::Result<Vec<Vec<SqlValue>>> {
        let mut stmt = self.conn.prepare_cached(MODEL_TOTALS)?;
        let rows = stmt.query_map([], |row| {
            (0..8).map(|i| row.get::<_, SqlValue>(i)).collect()
        })?;
        rows.collect()
    }

    /// The sessions with the most tokens.
    pub fn top_sessions(&self, limit: u32) -> rusqlite::Result<Vec<Vec<SqlValue>>> {
        let mut stmt = self.conn.prepare_cached(TOP_SESSIONS)?;
        let rows = stmt.query_map([limit], |row| {
            (0..5).map(|i| row.get::<_, SqlValue>(i)).collect()
        })?;
        rows.collect()
    }

    /// Every session then its messages as JSON lines (one object per row,
    /// keyed by column name, plus `"type"`), in one read transaction, with
    /// a 64 KiB buffer: the export's SQL and line shape without its header,
    /// content decoding or `Map` building.
    pub fn export_jsonl<W: Write>(&self, writer: W) -> rusqlite::Result<ExportCounts> {
        let mut out = CountingWriter {
            inner: std::io::BufWriter::with_capacity(64 << 10, writer),
            bytes: 0,
        };
        let mut counts = ExportCounts::default();
        self.conn.execute_batch("BEGIN DEFERRED")?;
        let result = (|| -> rusqlite::Result<()> {
            let mut sessions = self.conn.prepare_cached(SESSIONS_IN_LINEAGE_ORDER)?;
            let session_names: Vec<String> = sessions.column_names().map(str::to_owned).collect();
            let mut messages = self.conn.prepare_cached(SESSION_MESSAGES)?;
            let message_names: Vec<String> = messages.column_names().map(str::to_owned).collect();
            let mut rows = sessions.query(params![None::<String>, None::<String>])?;
            while let Some(row) = rows.next()? {
                write_line(&mut out, "session", &session_names, row)?;
                counts.sessions += 1;
                let id: String = row.get(0)?;
                let mut message_rows = messages.query([id])?;
                while let Some(message) = message_rows.next()? {
                    write_line(&mut out, "message", &message_names, message)?;
                    counts.messages += 1;
                }
            }
            out.inner.flush().map_err(io_to_sqlite)?;
            Ok(())
        })();
        let _ = self.conn.execute_batch("COMMIT");
        result?;
        counts.bytes = out.bytes;
        Ok(counts)
    }
}

struct CountingWriter<W: Write> {
    inner: std::io::BufWriter<W>,
    bytes: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn io_to_sqlite(e: std::io::Error) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(Box::new(e))
}

fn write_line<W: Write>(
    out: &mut CountingWriter<W>,
    kind: &str,
    names: &[String],
    row: &rusqlite::Row<'_>,
) -> rusqlite::Result<()> {
    let mut ser = serde_json::Serializer::new(&mut *out);
    let to_sqlite = |e: serde_json::Error| rusqlite::Error::ToSqlConversionFailure(Box::new(e));
    let mut map = ser
        .serialize_map(Some(names.len() + 1))
        .map_err(to_sqlite)?;
    map.serialize_entry("type", kind).map_err(to_sqlite)?;
    for (index, name) in names.iter().enumerate() {
        match row.get_ref(index)? {
            ValueRef::Null => map.serialize_entry(name, &()),
            ValueRef::Integer(i) => map.serialize_entry(name, &i),
            ValueRef::Real(f) => map.serialize_entry(name, &f),
            ValueRef::Text(t) => map.serialize_entry(name, &String::from_utf8_lossy(t)),
            ValueRef::Blob(b) => map.serialize_entry(name, b),
        }
        .map_err(to_sqlite)?;
    }
    SerializeMap::end(map).map_err(to_sqlite)?;
    out.write_all(b"\n").map_err(io_to_sqlite)?;
    Ok(())
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
