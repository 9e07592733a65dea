//! Reading the JSONL export back into a store.

use super::*;

/// The non-empty lines of the file as JSON objects, with their line numbers.
///
/// A line is read up to [`IMPORT_LINE_LIMIT`] bytes and no further: a
/// longer one (a stream with no line end, such as `/dev/zero`) is refused
/// with [`Error::InvalidInput`] naming it, instead of growing the buffer
/// until the allocation fails and the process aborts.
pub(super) struct JsonLines<R> {
    reader: R,
    buffer: Vec<u8>,
    number: u64,
}

impl<R: BufRead> JsonLines<R> {
    pub(super) fn new(reader: R) -> Self {
        JsonLines {
            reader,
            buffer: Vec::new(),
            number: 0,
        }
    }

    pub(super) fn next(&mut self) -> Result<Option<RawLine>> {
        loop {
            self.buffer.clear();
            let limit = u64::try_from(IMPORT_LINE_LIMIT).unwrap_or(u64::MAX);
            let read = std::io::Read::take(&mut self.reader, limit + 1)
                .read_until(b'\n', &mut self.buffer)
                .map_err(|e| io_error("<import reader>", e))?;
            if read == 0 {
                return Ok(None);
            }
            self.number += 1;
            let line = self.buffer.strip_suffix(b"\n").unwrap_or(&self.buffer);
            if line.len() > IMPORT_LINE_LIMIT {
                return Err(invalid(
                    self.number,
                    &format!(
                        "longer than {} MiB, the longest line an import reads",
                        IMPORT_LINE_LIMIT >> 20
                    ),
                ));
            }
            let text = std::str::from_utf8(line)
                .map_err(|_| invalid(self.number, "not UTF-8"))?
                .trim();
            if text.is_empty() {
                continue;
            }
            let object = serde_json::from_str::<Map<String, Value>>(text)
                .map_err(|e| invalid(self.number, &format!("not a JSON object ({e})")))?;
            return Ok(Some(RawLine {
                number: self.number,
                object,
                size: read,
            }));
        }
    }
}

pub(super) fn invalid(line: u64, why: &str) -> Error {
    Error::InvalidInput(format!("export line {line}: {why}"))
}

/// One non-empty line: its number, its object and its size in bytes.
pub(super) struct RawLine {
    number: u64,
    object: Map<String, Value>,
    size: usize,
}

pub(super) fn check_header(line: Option<RawLine>) -> Result<()> {
    let Some(RawLine {
        number,
        object: header,
        ..
    }) = line
    else {
        return Err(Error::InvalidInput("empty export file".to_owned()));
    };
    if header.get("format").and_then(Value::as_str) != Some(EXPORT_FORMAT) {
        return Err(invalid(number, "not a hermes-state export header"));
    }
    match header.get("version").and_then(Value::as_i64) {
        Some(EXPORT_FORMAT_VERSION) => Ok(()),
        _ => Err(invalid(
            number,
            &format!(
                "unsupported export version {} (this library reads version {EXPORT_FORMAT_VERSION})",
                header.get("version").unwrap_or(&Value::Null)
            ),
        )),
    }
}

/// The columns of this store's `sessions` and `messages`.
pub(super) struct TargetColumns {
    sessions: HashSet<String>,
    messages: HashSet<String>,
}

impl TargetColumns {
    #[cfg(feature = "postgres")]
    pub(super) fn from_names(
        sessions: impl IntoIterator<Item = String>,
        messages: impl IntoIterator<Item = String>,
    ) -> Self {
        TargetColumns {
            sessions: sessions.into_iter().collect(),
            messages: messages.into_iter().collect(),
        }
    }

    pub(super) fn load(conn: &Connection) -> Result<Self> {
        let names = |table: &str| -> Result<HashSet<String>> {
            Ok(hermes_state_schema::reconcile::live_columns(conn, table)?
                .into_iter()
                .map(|c| c.name)
                .collect())
        };
        Ok(TargetColumns {
            sessions: names("sessions")?,
            messages: names("messages")?,
        })
    }
}

/// One data line, validated and converted to SQL values.
pub(super) enum ImportLine {
    Session {
        id: String,
        values: Vec<(String, Cell)>,
    },
    Message {
        /// The exported id, kept when free.
        id: Option<i64>,
        /// Every other column.
        values: Vec<(String, Cell)>,
    },
}

/// One non-empty line (its number, object and size), as [`JsonLines`] gives it.
#[cfg(feature = "postgres")]
pub(super) type LineParts = (u64, Map<String, Value>, usize);

#[cfg(feature = "postgres")]
impl RawLine {
    pub(super) fn into_parts(self) -> LineParts {
        (self.number, self.object, self.size)
    }
}

/// Lines read but not written yet.
#[derive(Default)]
pub(super) struct Batch {
    lines: Vec<ImportLine>,
    sessions: usize,
    messages: usize,
    bytes: usize,
}

impl Batch {
    pub(super) fn is_full(&self) -> bool {
        self.sessions >= IMPORT_BATCH_SESSIONS
            || self.messages >= IMPORT_BATCH_MESSAGES
            || self.bytes >= IMPORT_BATCH_BYTES
    }
}

/// What the last written line decided for the session being imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Cursor {
    Idle,
    /// The session exists and is kept: its messages are skipped.
    Skipping,
    /// The session was written; its messages follow.
    Writing {
        id: String,
        /// Created by this import (not replaced).
        created: bool,
        /// Still inserting the exported ids.
        explicit_ids: bool,
        last_id: i64,
    },
}

/// What one committed batch did.
#[derive(Default)]
pub(super) struct BatchOutcome {
    imported: u64,
    replaced: Vec<String>,
    skipped: Vec<String>,
    messages: u64,
    renumbered: u64,
    orphaned: Vec<String>,
    title_conflicts: Vec<(String, String)>,
}

pub(super) struct Import<'a> {
    pub(super) db: &'a SessionDb,
    pub(super) overwrite: bool,
    /// The cursor after the last committed batch.
    pub(super) cursor: Cursor,
    pub(super) report: ImportReport,
    /// A session created by this import whose messages are partly committed.
    pub(super) partial: Option<String>,
    pub(super) dropped: BTreeSet<String>,
}

impl Import<'_> {
    pub(super) fn run<R: BufRead>(
        &mut self,
        lines: &mut JsonLines<R>,
        targets: &TargetColumns,
        progress: &mut impl FnMut(u64),
    ) -> Result<()> {
        let mut batch = Batch::default();
        let mut current: Option<String> = None;
        let (mut sessions_seen, mut messages_seen) = (0_u64, 0_u64);
        loop {
            let Some(RawLine {
                number,
                mut object,
                size,
            }) = lines.next()?
            else {
                return Err(Error::InvalidInput(
                    "truncated export: the end line is missing".to_owned(),
                ));
            };
            let kind = match object.remove("type") {
                Some(Value::String(kind)) => kind,
                _ => return Err(invalid(number, "no \"type\"")),
            };
            match kind.as_str() {
                "session" => {
                    let line = session_line(&mut self.dropped, number, object, targets)?;
                    if batch.is_full() {
                        self.commit(std::mem::take(&mut batch), true, progress)?;
                    }
                    if let ImportLine::Session { id, .. } = &line {
                        current = Some(id.clone());
                    }
                    batch.lines.push(line);
                    batch.sessions += 1;
                    batch.bytes += size;
                    sessions_seen += 1;
                }
                "message" => {
                    let line = message_line(
                        &mut self.dropped,
                        number,
                        object,
                        targets,
                        current.as_deref(),
                    )?;
                    batch.lines.push(line);
                    batch.messages += 1;
                    batch.bytes += size;
                    messages_seen += 1;
                    if batch.messages >= 2 * IMPORT_BATCH_MESSAGES
                        || batch.bytes >= 2 * IMPORT_BATCH_BYTES
                    {
                        // One very large session: commit it in parts.
                        self.commit(std::mem::take(&mut batch), false, progress)?;
                    }
                }
                "end" => {
                    check_end(lines, number, &object, sessions_seen, messages_seen)?;
                    return self.commit(batch, true, progress);
                }
                other => return Err(invalid(number, &format!("unknown line type {other:?}"))),
            }
        }
    }

    /// Writes a batch in one transaction; `at_boundary` when it ends with a
    /// session's last message (or the file's).
    pub(super) fn commit(
        &mut self,
        batch: Batch,
        at_boundary: bool,
        progress: &mut impl FnMut(u64),
    ) -> Result<()> {
        if batch.lines.is_empty() {
            return Ok(());
        }
        let overwrite = self.overwrite;
        let start = self.cursor.clone();
        let (cursor, outcome) = self.db.write("importing sessions", |conn| {
            let mut cursor = start.clone();
            let mut outcome = BatchOutcome::default();
            for line in &batch.lines {
                apply_line(conn, line, overwrite, &mut cursor, &mut outcome)?;
            }
            Ok((cursor, outcome))
        })?;
        self.partial = match &cursor {
            Cursor::Writing {
                id, created: true, ..
            } if !at_boundary => Some(id.clone()),
            _ => None,
        };
        self.cursor = cursor;
        let report = &mut self.report;
        report.imported += outcome.imported;
        report.replaced.extend(outcome.replaced);
        report.skipped_existing.extend(outcome.skipped);
        report.messages += outcome.messages;
        report.renumbered_messages += outcome.renumbered;
        report.orphaned.extend(outcome.orphaned);
        report.title_conflicts.extend(outcome.title_conflicts);
        progress(report.messages);
        Ok(())
    }

    /// After a failure: removes a session this import created but could not
    /// finish, so that no half-imported session stays. Best effort.
    pub(super) fn remove_partial_session(&self) {
        let Some(id) = &self.partial else { return };
        let _ = self.db.write("removing a partly imported session", |conn| {
            conn.execute(
                "UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?1",
                [id],
            )
            .context("removing a partly imported session")?;
            conn.execute("DELETE FROM messages WHERE session_id = ?1", [id])
                .context("removing a partly imported session")?;
            conn.execute("DELETE FROM sessions WHERE id = ?1", [id])
                .context("removing a partly imported session")?;
            Ok(())
        });
    }
}

/// A session line's columns that this store has (the others noted in
/// `dropped`), checked.
pub(super) fn session_line(
    dropped: &mut BTreeSet<String>,
    number: u64,
    object: Map<String, Value>,
    targets: &TargetColumns,
) -> Result<ImportLine> {
    let values = columns(dropped, number, object, "sessions", &targets.sessions)?;
    let id = match values.iter().find(|(column, _)| column == "id") {
        Some((_, Cell::Sql(SqlValue::Text(id)))) => id.clone(),
        _ => return Err(invalid(number, "a session line needs a text \"id\"")),
    };
    Ok(ImportLine::Session { id, values })
}

/// A message line of the session `current`, checked; its id apart.
pub(super) fn message_line(
    dropped: &mut BTreeSet<String>,
    number: u64,
    object: Map<String, Value>,
    targets: &TargetColumns,
    current: Option<&str>,
) -> Result<ImportLine> {
    let mut values = columns(dropped, number, object, "messages", &targets.messages)?;
    match values.iter().find(|(column, _)| column == "session_id") {
        Some((_, Cell::Sql(SqlValue::Text(session)))) if Some(session.as_str()) == current => {}
        _ => {
            return Err(invalid(
                number,
                "a message line must follow its session's line and name it in \"session_id\"",
            ));
        }
    }
    let id = match values.iter().position(|(column, _)| column == "id") {
        Some(index) => match values.remove(index).1 {
            Cell::Sql(SqlValue::Integer(id)) => Some(id),
            Cell::Sql(SqlValue::Null) => None,
            _ => return Err(invalid(number, "a message \"id\" must be an integer")),
        },
        None => None,
    };
    Ok(ImportLine::Message { id, values })
}

/// The line's columns that this store has, as SQL values.
pub(super) fn columns(
    dropped: &mut BTreeSet<String>,
    number: u64,
    object: Map<String, Value>,
    table: &str,
    known: &HashSet<String>,
) -> Result<Vec<(String, Cell)>> {
    let mut values = Vec::with_capacity(object.len());
    for (key, value) in object {
        let (column, plain) = match key.strip_prefix('$') {
            Some(column) => (column.to_owned(), true),
            None => (key, false),
        };
        let converted = if table == "messages" && column == "content" && !plain {
            content_to_sql(value)
        } else {
            json_to_sql(&value)
        }
        .map_err(|why| invalid(number, &format!("column {column:?}: {why}")))?;
        if known.contains(&column) {
            values.push((column, converted));
        } else {
            dropped.insert(format!("{table}.{column}"));
        }
    }
    Ok(values)
}

/// The end line's counts must match the lines read, and nothing may follow it.
pub(super) fn check_end<R: BufRead>(
    lines: &mut JsonLines<R>,
    number: u64,
    object: &Map<String, Value>,
    sessions_seen: u64,
    messages_seen: u64,
) -> Result<()> {
    let count = |key: &str| object.get(key).and_then(Value::as_u64);
    if count("sessions") != Some(sessions_seen) || count("messages") != Some(messages_seen) {
        return Err(invalid(
            number,
            &format!(
                "the end line counts do not match the file ({sessions_seen} sessions, {messages_seen} messages)"
            ),
        ));
    }
    if let Some(extra) = lines.next()? {
        return Err(invalid(extra.number, "data after the end line"));
    }
    Ok(())
}

/// A value to bind: an SQL value, or text that is not valid UTF-8 (bound as
/// TEXT byte for byte, as a damaged file held it).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cell {
    Sql(SqlValue),
    RawText(Vec<u8>),
}

impl From<ValueRef<'_>> for Cell {
    fn from(value: ValueRef<'_>) -> Self {
        match value {
            ValueRef::Null => Cell::Sql(SqlValue::Null),
            ValueRef::Integer(i) => Cell::Sql(SqlValue::Integer(i)),
            ValueRef::Real(f) => Cell::Sql(SqlValue::Real(f)),
            ValueRef::Text(bytes) => match std::str::from_utf8(bytes) {
                Ok(text) => Cell::Sql(SqlValue::Text(text.to_owned())),
                Err(_) => Cell::RawText(bytes.to_vec()),
            },
            ValueRef::Blob(bytes) => Cell::Sql(SqlValue::Blob(bytes.to_vec())),
        }
    }
}

impl ToSql for Cell {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Cell::Sql(value) => value.to_sql(),
            Cell::RawText(bytes) => Ok(ToSqlOutput::Borrowed(ValueRef::Text(bytes))),
        }
    }
}

/// A value in the plain SQL encoding back to SQL.
pub(super) fn json_to_sql(value: &Value) -> std::result::Result<Cell, String> {
    match value {
        Value::Null => Ok(Cell::Sql(SqlValue::Null)),
        Value::String(text) => Ok(Cell::Sql(SqlValue::Text(text.clone()))),
        Value::Number(number) => {
            if let Some(i) = number.as_i64() {
                Ok(Cell::Sql(SqlValue::Integer(i)))
            } else if number.is_f64() {
                number
                    .as_f64()
                    .map(|f| Cell::Sql(SqlValue::Real(f)))
                    .ok_or_else(|| "not a number".to_owned())
            } else {
                Err(format!("integer {number} out of range"))
            }
        }
        Value::Object(map) if map.len() == 1 => {
            let (tag, inner) = map.iter().next().ok_or("empty object")?;
            let text = inner.as_str().ok_or("a tagged value must be a string")?;
            match tag.as_str() {
                "blob" => unhex(text)
                    .map(|bytes| Cell::Sql(SqlValue::Blob(bytes)))
                    .ok_or_else(|| "bad hex".to_owned()),
                "text_hex" => unhex(text)
                    .map(Cell::RawText)
                    .ok_or_else(|| "bad hex".to_owned()),
                "real" => match text {
                    "Infinity" => Ok(Cell::Sql(SqlValue::Real(f64::INFINITY))),
                    "-Infinity" => Ok(Cell::Sql(SqlValue::Real(f64::NEG_INFINITY))),
                    _ => Err(format!("unknown real {text:?}")),
                },
                _ => Err(format!("unknown tag {tag:?}")),
            }
        }
        _ => Err("not a SQL value".to_owned()),
    }
}

/// Decoded content back to what the store holds ([`stored::content_from_json`]):
/// text as is, an array or an object as `"\x00json:"` + Python-compatible JSON.
pub(super) fn content_to_sql(value: Value) -> std::result::Result<Cell, String> {
    stored::content_from_json(value)
        .map(|value| Cell::Sql(values::sql_value(value)))
        .ok_or_else(|| "decoded content must be a string, an array, an object or null".to_owned())
}

pub(super) fn apply_line(
    conn: &Connection,
    line: &ImportLine,
    overwrite: bool,
    cursor: &mut Cursor,
    outcome: &mut BatchOutcome,
) -> Result<()> {
    match line {
        ImportLine::Session { id, values } => {
            let exists = session_exists(conn, &Cell::Sql(SqlValue::Text(id.clone())))?;
            if exists && !overwrite {
                outcome.skipped.push(id.clone());
                *cursor = Cursor::Skipping;
                return Ok(());
            }
            if exists {
                conn.execute("DELETE FROM messages WHERE session_id = ?1", [id])
                    .context("replacing a session's messages")?;
                outcome.replaced.push(id.clone());
            }
            let mut values = values.clone();
            for (column, value) in &mut values {
                match column.as_str() {
                    "parent_session_id"
                        if *value != Cell::Sql(SqlValue::Null)
                            && (!session_exists(conn, value)?
                                || closes_cycle(conn, id, value)?) =>
                    {
                        *value = Cell::Sql(SqlValue::Null);
                        outcome.orphaned.push(id.clone());
                    }
                    "title" => {
                        if let Cell::Sql(SqlValue::Text(title)) = value
                            && title_holder(conn, title, id)?.is_some()
                        {
                            outcome.title_conflicts.push((id.clone(), title.clone()));
                            *value = Cell::Sql(SqlValue::Null);
                        }
                    }
                    _ => {}
                }
            }
            upsert_session(conn, &values)?;
            outcome.imported += 1;
            *cursor = Cursor::Writing {
                id: id.clone(),
                created: !exists,
                explicit_ids: true,
                last_id: i64::MIN,
            };
            Ok(())
        }
        ImportLine::Message { id, values } => {
            let Cursor::Writing {
                explicit_ids,
                last_id,
                ..
            } = cursor
            else {
                return Ok(());
            };
            let keep = *explicit_ids
                && match id {
                    Some(id) => *id > *last_id && !message_exists(conn, *id)?,
                    None => false,
                };
            if !keep {
                *explicit_ids = false;
                if id.is_some() {
                    outcome.renumbered += 1;
                }
            }
            *last_id = insert_message(conn, keep.then_some(*id).flatten(), values)?;
            outcome.messages += 1;
            Ok(())
        }
    }
}

pub(super) fn session_exists(conn: &Connection, id: &Cell) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM sessions WHERE id = ?1)")
        .and_then(|mut stmt| stmt.query_row([id], |row| row.get(0)))
        .context("checking a session")
        .map_err(Into::into)
}

pub(super) fn message_exists(conn: &Connection, id: i64) -> Result<bool> {
    conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM messages WHERE id = ?1)")
        .and_then(|mut stmt| stmt.query_row([id], |row| row.get(0)))
        .context("checking a message id")
        .map_err(Into::into)
}

/// Whether linking `id` under `parent` would close a parent cycle: `id` is
/// `parent` or one of its ancestors in the store.
pub(super) fn closes_cycle(conn: &Connection, id: &str, parent: &Cell) -> Result<bool> {
    let mut seen: HashSet<String> = HashSet::new();
    let Cell::Sql(SqlValue::Text(start)) = parent.clone() else {
        return Ok(false);
    };
    let mut current = Some(start);
    while let Some(node) = current {
        if node == id {
            return Ok(true);
        }
        if !seen.insert(node.clone()) {
            return Ok(false);
        }
        current = hermes_state_query::sessions::parent_of(conn, &node)?;
    }
    Ok(false)
}

pub(super) fn title_holder(conn: &Connection, title: &str, id: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT id FROM sessions WHERE title = ?1 AND id <> ?2 LIMIT 1")
        .and_then(|mut stmt| {
            stmt.query_row([title, id], |row| row.get::<_, Option<String>>(0))
                .optional()
        })
        .map(Option::flatten)
        .context("checking a title")
        .map_err(Into::into)
}

/// `INSERT … ON CONFLICT(id) DO UPDATE` of every given column.
pub(super) fn upsert_session(conn: &Connection, values: &[(String, Cell)]) -> Result<()> {
    let columns: Vec<String> = values.iter().map(|(c, _)| quote_identifier(c)).collect();
    let placeholders: Vec<String> = (1..=values.len()).map(|i| format!("?{i}")).collect();
    let updates: Vec<String> = values
        .iter()
        .zip(&columns)
        .filter(|((column, _), _)| column != "id")
        .map(|(_, quoted)| format!("{quoted} = excluded.{quoted}"))
        .collect();
    let on_conflict = if updates.is_empty() {
        "DO NOTHING".to_owned()
    } else {
        format!("DO UPDATE SET {}", updates.join(", "))
    };
    let sql = format!(
        "INSERT INTO sessions ({}) VALUES ({}) ON CONFLICT(id) {on_conflict}",
        columns.join(", "),
        placeholders.join(", ")
    );
    conn.prepare_cached(&sql)
        .and_then(|mut stmt| stmt.execute(params_from_iter(values.iter().map(|(_, v)| v))))
        .context("importing a session")?;
    Ok(())
}

/// Inserts a message row (with `id` when given); returns its id.
pub(super) fn insert_message(
    conn: &Connection,
    id: Option<i64>,
    values: &[(String, Cell)],
) -> Result<i64> {
    let mut columns: Vec<String> = values.iter().map(|(c, _)| quote_identifier(c)).collect();
    let mut params: Vec<&Cell> = values.iter().map(|(_, v)| v).collect();
    let id_value = id.map(|id| Cell::Sql(SqlValue::Integer(id)));
    if let Some(id_value) = &id_value {
        columns.push("\"id\"".to_owned());
        params.push(id_value);
    }
    let placeholders: Vec<String> = (1..=params.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO messages ({}) VALUES ({})",
        columns.join(", "),
        placeholders.join(", ")
    );
    conn.prepare_cached(&sql)
        .and_then(|mut stmt| stmt.execute(params_from_iter(params)))
        .context("importing a message")?;
    Ok(conn.last_insert_rowid())
}
