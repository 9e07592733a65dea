//! Writing the streaming JSONL export (`docs/EXPORT-FORMAT.md`).

use super::*;

/// The selected sessions, parents before children: by depth in the lineage
/// forest (roots, and sessions whose parent is missing, first), then
/// `started_at`, then id. Sessions on a parent cycle (damaged files) are never
/// reached from a root and come last. `UNION` keeps the recursion finite.
pub(super) const SESSIONS_IN_LINEAGE_ORDER: &str = "WITH RECURSIVE lineage(id, depth) AS (
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

pub(super) const SESSION_MESSAGES: &str =
    "SELECT * FROM messages WHERE session_id = ?1 ORDER BY id";

pub(super) fn write_jsonl<W: Write>(
    conn: &Connection,
    writer: W,
    filter: &ExportFilter,
    exported_at: f64,
    progress: &mut impl FnMut(u64),
) -> Result<ExportSummary> {
    let mut out = LineWriter::new(writer);
    let schema_version = conn
        .query_row("SELECT MAX(version) FROM schema_version", [], |row| {
            row.get::<_, Option<i64>>(0)
        })
        .ok()
        .flatten()
        .unwrap_or(SCHEMA_VERSION);
    out.line(&header_line(schema_version, exported_at))?;

    let mut sessions = conn
        .prepare(SESSIONS_IN_LINEAGE_ORDER)
        .context("listing sessions to export")?;
    let session_columns = LineColumns::new(sessions.column_names(), None);
    let id_index = sessions
        .column_index("id")
        .context("listing sessions to export")?;
    let mut messages = conn
        .prepare(SESSION_MESSAGES)
        .context("reading messages to export")?;
    let message_columns = LineColumns::new(messages.column_names(), Some("content"));

    let source = filter.source.as_deref().filter(|s| !s.is_empty());
    let ids = filter
        .session_ids
        .as_ref()
        .map(|ids| Value::from(ids.clone()).to_string());
    let mut summary = ExportSummary::default();
    let mut rows = sessions
        .query(rusqlite::params![source, ids])
        .context("listing sessions to export")?;
    while let Some(row) = rows.next().context("listing sessions to export")? {
        out.line(&session_columns.line("session", row)?)?;
        summary.sessions += 1;
        let id = Cell::from(row.get_ref(id_index).context("reading a session id")?);
        let mut message_rows = messages.query([id]).context("reading messages to export")?;
        while let Some(message) = message_rows.next().context("reading messages to export")? {
            out.line(&message_columns.line("message", message)?)?;
            summary.messages += 1;
            if summary.messages.is_multiple_of(PROGRESS_EVERY) {
                progress(summary.messages);
            }
        }
    }
    out.finish(summary, progress)
}

/// The first line: format, version, the store's schema version, when.
pub(super) fn header_line(schema_version: i64, exported_at: f64) -> Map<String, Value> {
    let mut header = Map::new();
    header.insert("format".to_owned(), EXPORT_FORMAT.into());
    header.insert("version".to_owned(), EXPORT_FORMAT_VERSION.into());
    header.insert("schema_version".to_owned(), schema_version.into());
    header.insert("exported_at".to_owned(), float(exported_at));
    header
}

pub(super) struct LineWriter<W: Write> {
    pub(super) inner: BufWriter<W>,
    pub(super) bytes: u64,
}

impl<W: Write> LineWriter<W> {
    pub(super) fn new(writer: W) -> Self {
        LineWriter {
            inner: BufWriter::with_capacity(64 << 10, writer),
            bytes: 0,
        }
    }

    /// Writes the end line with the counts and flushes; the summary with
    /// the bytes written.
    pub(super) fn finish(
        mut self,
        mut summary: ExportSummary,
        progress: &mut impl FnMut(u64),
    ) -> Result<ExportSummary> {
        let mut end = Map::new();
        end.insert("type".to_owned(), "end".into());
        end.insert("sessions".to_owned(), summary.sessions.into());
        end.insert("messages".to_owned(), summary.messages.into());
        self.line(&end)?;
        self.inner
            .flush()
            .map_err(|e| io_error("<export writer>", e))?;
        summary.bytes = self.bytes;
        progress(summary.messages);
        Ok(summary)
    }

    pub(super) fn line(&mut self, object: &Map<String, Value>) -> Result<()> {
        let mut text = serde_json::to_vec(object)
            .map_err(|e| Error::InvalidInput(format!("encoding an export line: {e}")))?;
        text.push(b'\n');
        self.inner
            .write_all(&text)
            .map_err(|e| io_error("<export writer>", e))?;
        self.bytes += text.len() as u64;
        Ok(())
    }
}

/// The keys of a table's columns in a line, and which column is decoded content
/// (written decoded where that is lossless: [`stored::content_to_json`]).
pub(super) struct LineColumns {
    keys: Vec<String>,
    content: Option<usize>,
}

impl LineColumns {
    pub(super) fn new<'a>(names: impl IntoIterator<Item = &'a str>, content: Option<&str>) -> Self {
        let names: Vec<&str> = names.into_iter().collect();
        LineColumns {
            content: content.and_then(|c| names.iter().position(|n| *n == c)),
            keys: names.into_iter().map(column_key).collect(),
        }
    }

    pub(super) fn line(&self, kind: &str, row: &Row<'_>) -> Result<Map<String, Value>> {
        let values = (0..self.keys.len())
            .map(|index| row.get_ref(index).map(values::stored))
            .collect::<rusqlite::Result<Vec<_>>>()
            .context("reading a row to export")?;
        Ok(self.line_of(kind, values))
    }

    /// The line of one row given as its values in column order, whichever
    /// backend read them: both write the same bytes for the same values.
    pub(super) fn line_of<'v>(
        &self,
        kind: &str,
        values: impl IntoIterator<Item = StoredValueRef<'v>>,
    ) -> Map<String, Value> {
        let mut line = Map::with_capacity(self.keys.len() + 1);
        line.insert("type".to_owned(), kind.into());
        for ((index, key), value) in self.keys.iter().enumerate().zip(values) {
            if Some(index) == self.content {
                match stored::content_to_json(value) {
                    Some(decoded) => line.insert(key.clone(), decoded),
                    None => line.insert(format!("${key}"), sql_to_json(value)),
                };
            } else {
                line.insert(key.clone(), sql_to_json(value));
            }
        }
        line
    }
}

/// A column's key: its name, or `$` + its name when the name is `type` or
/// starts with `$` (keys starting with `$` always name a column in the plain
/// SQL encoding).
pub(super) fn column_key(name: &str) -> String {
    if name == "type" || name.starts_with('$') {
        format!("${name}")
    } else {
        name.to_owned()
    }
}

/// A stored value in the plain SQL encoding: NULL, integers, finite reals and
/// UTF-8 text map to their JSON counterparts (reals always with a fraction or
/// an exponent); the rest to a one-key object.
pub(super) fn sql_to_json(value: StoredValueRef<'_>) -> Value {
    match value {
        StoredValueRef::Null => Value::Null,
        StoredValueRef::Integer(i) => Value::from(i),
        StoredValueRef::Real(f) => match serde_json::Number::from_f64(f) {
            Some(number) => Value::Number(number),
            None => tagged("real", pyjson::float_repr(f)),
        },
        StoredValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => Value::String(text.to_owned()),
            Err(_) => tagged("text_hex", hex(bytes)),
        },
        StoredValueRef::Blob(bytes) => tagged("blob", hex(bytes)),
    }
}

pub(super) fn tagged(tag: &str, value: String) -> Value {
    let mut map = Map::new();
    map.insert(tag.to_owned(), Value::String(value));
    Value::Object(map)
}

pub(super) fn float(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

pub(super) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    out
}

pub(super) fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| {
        char::from(c)
            .to_digit(16)
            .and_then(|d| u8::try_from(d).ok())
    };
    text.as_bytes()
        .chunks_exact(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

pub(super) fn io_error(what: &str, source: std::io::Error) -> Error {
    Error::from(SchemaError::Io {
        path: PathBuf::from(what),
        source,
    })
}
