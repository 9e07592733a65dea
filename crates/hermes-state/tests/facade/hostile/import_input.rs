//! One input of the JSONL importer under hostile bytes: shared, as source, by
//! the fuzz target `fuzz/fuzz_targets/import_jsonl.rs` and the corpus replay
//! in `hostile::the_import_corpus_*`, so both check exactly the same thing.
//!
//! Every input is imported twice into a fresh copy of a small store that
//! already holds sessions (once keeping existing sessions, once replacing
//! them). Then:
//!
//! * a failed import left every row of every table (FTS shadow tables and
//!   `sqlite_sequence` included) exactly as before, and its error is of kind
//!   `InvalidInput` or `Constraint` (the input's fault, said so);
//! * a successful import is faithful: every session line the store kept
//!   (the first of its id, or the last one when replacing) is stored with
//!   every value of the line that names a column of the store (compared by
//!   SQLite itself with the column's affinity, as the insert applied it),
//!   apart from the two documented adjustments (an orphaned parent and a
//!   title held elsewhere are cleared, and reported); its messages are the
//!   file's message lines in order, with their ids when none was renumbered;
//!   the report's counts add up; and sessions the import did not write are
//!   exactly as before.
//!
//! A violation panics, which is what a fuzzer records. The store is small
//! and the fuzzer's inputs are far below one import batch (500 sessions), so
//! an import is one transaction: all or nothing.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use hermes_state::rusqlite::types::{Value as SqlValue, ValueRef};
use hermes_state::rusqlite::{Connection, ToSql, params};
use hermes_state::{
    Content, ErrorKind, FixedClock, ImportOptions, ImportReport, NewMessage, NewSession, SessionDb,
    StoreOptions,
};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;
use hermes_state_types::stored::{self, StoredValue};
use serde_json::{Map, Value, json};

/// Every row of every ordinary table of `main`, each row as one canonical
/// line, sorted: two snapshots are equal exactly when the stored rows are.
pub type Snapshot = BTreeMap<String, Vec<String>>;

/// The store every input is imported into, built once.
pub struct ImportTarget {
    folder: tempfile::TempDir,
    template: Vec<u8>,
}

impl Default for ImportTarget {
    fn default() -> Self {
        ImportTarget::new()
    }
}

impl ImportTarget {
    /// Builds the template store: a titled root with messages (CJK, tool
    /// calls, structured content), a child continuing it, and an unrelated
    /// session. The clock is fixed, so the bytes are the same in every run.
    pub fn new() -> ImportTarget {
        let folder = tempfile::tempdir().expect("a temporary folder");
        let path = folder.path().join("template.db");
        let options = StoreOptions {
            read_only: false,
            clock: Some(FixedClock::new(1_764_000_000.5)),
        };
        let db = SessionDb::open_with(&path, &options).expect("the template store opens");
        db.create_session(&NewSession::new("kept", "cli").model("gpt-5"))
            .expect("session kept");
        db.append_message(&NewMessage::new("kept", "user").content("数据库优化 docker"))
            .expect("message");
        db.append_message(&NewMessage::new("kept", "assistant").tool_calls(
            json!([{"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}]),
        ))
        .expect("message");
        db.append_message(
            &NewMessage::new("kept", "user").content(Content::Structured(
                json!([{"type": "text", "text": "look"}]),
            )),
        )
        .expect("message");
        db.set_session_title("kept", Some("Kept")).expect("title");
        db.create_session(&NewSession::new("child", "cli").parent_session_id("kept"))
            .expect("session child");
        db.append_message(&NewMessage::new("child", "user").content("continue"))
            .expect("message");
        db.create_session(&NewSession::new("other", "telegram"))
            .expect("session other");
        db.close().expect("close the template");
        drop(db);
        let template = std::fs::read(&path).expect("read the template");
        ImportTarget { folder, template }
    }

    /// Imports `data` twice (keeping, then replacing existing sessions) and
    /// panics on any violation of the properties in the module docs.
    pub fn run(&self, data: &[u8]) {
        for overwrite in [false, true] {
            self.import_once(data, overwrite);
        }
    }

    fn fresh_store(&self) -> PathBuf {
        let path = self.folder.path().join("store.db");
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        std::fs::write(&path, &self.template).expect("write a fresh copy of the template");
        path
    }

    fn import_once(&self, data: &[u8], overwrite: bool) {
        let path = self.fresh_store();
        let db = SessionDb::open(&path).expect("the template copy opens");
        // The first write brings the handle's writable connection; open it
        // now so the snapshot is taken on the connection the import uses.
        db.migrate().expect("the template copy migrates");
        let before = snapshot(&db);
        let before_sessions = session_rows(&db);
        let options = ImportOptions {
            overwrite_existing: overwrite,
        };
        let result = db.import_jsonl(data, &options, |_| {});
        let after = snapshot(&db);
        match result {
            Err(error) => {
                assert!(
                    matches!(
                        error.kind(),
                        ErrorKind::InvalidInput | ErrorKind::Constraint
                    ),
                    "a refused import must blame the input, got kind {:?}: {error}",
                    error.kind()
                );
                assert_changed_nothing(&before, &after, &error.to_string());
            }
            Ok(report) => check_faithful(
                &db,
                data,
                overwrite,
                &before_sessions,
                &session_rows(&db),
                &report,
            ),
        }
        db.close().expect("close the store");
        drop(db);
        assert_eq!(
            std::fs::metadata(&path).map(|m| m.len() > 0).ok(),
            Some(true),
            "the store file is still there"
        );
    }
}

fn assert_changed_nothing(before: &Snapshot, after: &Snapshot, error: &str) {
    if before == after {
        return;
    }
    let changed: Vec<&String> = before
        .keys()
        .chain(after.keys())
        .filter(|table| before.get(*table) != after.get(*table))
        .collect();
    panic!("a failed import ({error}) changed the rows of {changed:?}");
}

/// Every row of every ordinary table of `main` (virtual tables are skipped:
/// their shadow tables hold what they store).
pub fn snapshot(db: &SessionDb) -> Snapshot {
    db.read(|conn| Ok(snapshot_of(conn)))
        .expect("reading every row")
}

/// [`snapshot`] over a plain connection.
pub fn snapshot_of(conn: &Connection) -> Snapshot {
    let tables: Vec<String> = conn
        .prepare(
            "SELECT name FROM main.sqlite_master
             WHERE type = 'table' AND coalesce(sql, '') NOT LIKE 'CREATE VIRTUAL%'
             ORDER BY name",
        )
        .and_then(|mut stmt| {
            stmt.query_map([], |row| row.get(0))?
                .collect::<Result<_, _>>()
        })
        .expect("listing the tables");
    tables
        .into_iter()
        .map(|table| {
            let sql = format!("SELECT * FROM main.\"{}\"", table.replace('"', "\"\""));
            let mut stmt = conn.prepare(&sql).expect("reading a table");
            let width = stmt.column_count();
            let mut rows: Vec<String> = stmt
                .query_map([], |row| {
                    let mut line = String::new();
                    for i in 0..width {
                        line.push_str(&canonical(row.get_ref(i)?));
                        line.push('|');
                    }
                    Ok(line)
                })
                .and_then(|rows| rows.collect::<Result<_, _>>())
                .expect("reading a table");
            rows.sort();
            (table, rows)
        })
        .collect()
}

fn canonical(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Null => "N".to_owned(),
        ValueRef::Integer(i) => format!("I{i}"),
        ValueRef::Real(f) => format!("R{:?}", f.to_bits()),
        ValueRef::Text(bytes) => format!("T{bytes:?}"),
        ValueRef::Blob(bytes) => format!("B{bytes:?}"),
    }
}

/// One session line of the file and the message lines after it.
struct Group {
    id: String,
    line: Map<String, Value>,
    messages: Vec<Map<String, Value>>,
}

/// The file's session groups, in order (the import accepted it, so every
/// line parses and every message follows its session).
fn groups(data: &[u8]) -> Vec<Group> {
    let text = std::str::from_utf8(data).expect("an accepted file is UTF-8");
    let mut groups: Vec<Group> = Vec::new();
    for line in text.split('\n').map(str::trim).filter(|l| !l.is_empty()) {
        let mut object: Map<String, Value> =
            serde_json::from_str(line).expect("an accepted line is a JSON object");
        match object.remove("type") {
            Some(Value::String(kind)) if kind == "session" => {
                let id = column_value(&object, "id")
                    .and_then(Value::as_str)
                    .expect("an accepted session line has a text id")
                    .to_owned();
                groups.push(Group {
                    id,
                    line: object,
                    messages: Vec::new(),
                });
            }
            Some(Value::String(kind)) if kind == "message" => groups
                .last_mut()
                .expect("an accepted message follows a session")
                .messages
                .push(object),
            _ => {}
        }
    }
    groups
}

/// The value the line gives column `column` (under `column` or `$column`;
/// the last key wins when both are there, as the import binds them).
fn column_value<'a>(line: &'a Map<String, Value>, column: &str) -> Option<&'a Value> {
    line.iter()
        .filter(|(key, _)| key.strip_prefix('$').unwrap_or(key) == column)
        .map(|(_, value)| value)
        .next_back()
}

fn columns_of(conn: &Connection, table: &str) -> HashSet<String> {
    conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
        .and_then(|mut stmt| {
            stmt.query_map([], |row| row.get(0))?
                .collect::<Result<_, _>>()
        })
        .expect("listing columns")
}

/// A JSON value of the plain SQL encoding (`docs/EXPORT-FORMAT.md`), decoded
/// independently of the importer.
fn plain(value: &Value) -> Option<Bound> {
    Some(match value {
        Value::Null => Bound::Sql(SqlValue::Null),
        Value::String(text) => Bound::Sql(SqlValue::Text(text.clone())),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Bound::Sql(SqlValue::Integer(i)),
            None => Bound::Sql(SqlValue::Real(n.as_f64()?)),
        },
        Value::Object(map) if map.len() == 1 => {
            let (tag, inner) = map.iter().next()?;
            let inner = inner.as_str()?;
            match tag.as_str() {
                "blob" => Bound::Sql(SqlValue::Blob(hex(inner)?)),
                "text_hex" => Bound::RawText(hex(inner)?),
                "real" if inner == "Infinity" => Bound::Sql(SqlValue::Real(f64::INFINITY)),
                "real" if inner == "-Infinity" => Bound::Sql(SqlValue::Real(f64::NEG_INFINITY)),
                _ => return None,
            }
        }
        _ => return None,
    })
}

fn hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The stored value of a message line's decoded `content`.
fn decoded_content(value: &Value) -> Option<Bound> {
    Some(Bound::Sql(
        match stored::content_from_json(value.clone())? {
            StoredValue::Null => SqlValue::Null,
            StoredValue::Integer(i) => SqlValue::Integer(i),
            StoredValue::Real(f) => SqlValue::Real(f),
            StoredValue::Text(text) => SqlValue::Text(text),
            StoredValue::Blob(bytes) => SqlValue::Blob(bytes),
        },
    ))
}

/// A value to compare a column with: SQL, or text that is not UTF-8.
enum Bound {
    Sql(SqlValue),
    RawText(Vec<u8>),
}

impl ToSql for Bound {
    fn to_sql(
        &self,
    ) -> hermes_state::rusqlite::Result<hermes_state::rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Bound::Sql(value) => value.to_sql(),
            Bound::RawText(bytes) => Ok(hermes_state::rusqlite::types::ToSqlOutput::Borrowed(
                ValueRef::Text(bytes),
            )),
        }
    }
}

/// Whether `table.column` of the row `key = key_value` holds `expected`,
/// compared with the column's affinity (`IS`, so NULL equals NULL).
fn holds(conn: &Connection, table: &str, column: &str, key: &dyn ToSql, expected: &Bound) -> bool {
    let sql = format!(
        "SELECT \"{}\" IS ?1 FROM main.{table} WHERE id = ?2",
        column.replace('"', "\"\"")
    );
    conn.query_row(&sql, params![expected, key], |row| row.get::<_, bool>(0))
        .unwrap_or_else(|e| panic!("reading {table}.{column}: {e}"))
}

fn check_faithful(
    db: &SessionDb,
    data: &[u8],
    overwrite: bool,
    before: &SessionRows,
    after: &SessionRows,
    report: &ImportReport,
) {
    let groups = groups(data);
    let skipped: HashSet<&String> = report.skipped_existing.iter().collect();
    assert_eq!(
        report.imported as usize + report.skipped_existing.len(),
        groups.len(),
        "every session line is imported or skipped: {report:?}"
    );
    // Which line of each id the store must hold now.
    let mut checked: BTreeMap<&str, &Group> = BTreeMap::new();
    for group in &groups {
        let first = !checked.contains_key(group.id.as_str());
        if overwrite || first {
            checked.insert(&group.id, group);
        }
    }
    let pre_existing: HashSet<&String> = before.keys().collect();
    if !overwrite {
        // Sessions already in the store are kept, line and messages ignored.
        checked.retain(|id, _| !before.contains_key(*id));
        for id in &pre_existing {
            if groups.iter().any(|g| &g.id == *id) {
                assert!(skipped.contains(id), "{id} existed and was not skipped");
            }
        }
    }
    let orphaned: HashSet<&String> = report.orphaned.iter().collect();
    let title_conflicts: HashSet<&String> =
        report.title_conflicts.iter().map(|(id, _)| id).collect();
    let mut messages_expected = 0_u64;
    db.read(|conn| {
        let session_columns = columns_of(conn, "sessions");
        let message_columns = columns_of(conn, "messages");
        for (id, group) in &checked {
            assert!(
                after.contains_key(*id),
                "imported session {id} is in the store"
            );
            for (key, value) in &group.line {
                let column = key.strip_prefix('$').unwrap_or(key);
                if !session_columns.contains(column)
                    || column_value(&group.line, column) != Some(value)
                    || (column == "parent_session_id" && orphaned.contains(&group.id))
                    || (column == "title" && title_conflicts.contains(&group.id))
                {
                    continue;
                }
                let expected = plain(value).expect("an accepted value decodes");
                assert!(
                    holds(conn, "sessions", column, id, &expected),
                    "session {id}: column {column} does not hold {value}"
                );
            }
            let ids: Vec<i64> = conn
                .prepare("SELECT id FROM main.messages WHERE session_id = ?1 ORDER BY id")
                .and_then(|mut stmt| {
                    stmt.query_map([id], |row| row.get(0))?
                        .collect::<Result<_, _>>()
                })
                .expect("listing messages");
            assert_eq!(
                ids.len(),
                group.messages.len(),
                "session {id}: the file's messages are its messages"
            );
            messages_expected += ids.len() as u64;
            for (stored_id, line) in ids.iter().zip(&group.messages) {
                for (key, value) in line {
                    let column = key.strip_prefix('$').unwrap_or(key);
                    if !message_columns.contains(column)
                        || column_value(line, column) != Some(value)
                    {
                        continue;
                    }
                    if column == "id" {
                        if report.renumbered_messages == 0 && !value.is_null() {
                            assert_eq!(
                                value.as_i64(),
                                Some(*stored_id),
                                "session {id}: message id kept"
                            );
                        }
                        continue;
                    }
                    let expected = if key == "content" {
                        decoded_content(value)
                    } else {
                        plain(value)
                    }
                    .expect("an accepted value decodes");
                    assert!(
                        holds(conn, "messages", column, stored_id, &expected),
                        "session {id}, message {stored_id}: column {column} does not hold {value}"
                    );
                }
            }
        }
        Ok(())
    })
    .expect("reading the imported rows");
    // Messages of lines written then replaced by a later line of the same
    // id are counted by the import but deleted again.
    assert!(
        report.messages >= messages_expected,
        "report counts {} messages, the store holds {messages_expected} of the file",
        report.messages
    );
    // Sessions the import did not write keep their row and their messages.
    for (id, rows) in before {
        if !checked.contains_key(id.as_str()) {
            assert_eq!(
                after.get(id),
                Some(rows),
                "session {id}, which the import did not write, is unchanged"
            );
        }
    }
}

/// Each session's row and message rows, in [`canonical`] form.
pub type SessionRows = BTreeMap<String, (String, Vec<String>)>;

fn session_rows(db: &SessionDb) -> SessionRows {
    db.read(|conn| {
        let ids: Vec<String> = conn
            .prepare("SELECT id FROM main.sessions")
            .and_then(|mut stmt| {
                stmt.query_map([], |row| row.get(0))?
                    .collect::<Result<_, _>>()
            })
            .expect("listing sessions");
        Ok(ids
            .into_iter()
            .map(|id| {
                let session = rows_of(conn, "SELECT * FROM main.sessions WHERE id = ?1", &id);
                let messages = rows_of(
                    conn,
                    "SELECT * FROM main.messages WHERE session_id = ?1 ORDER BY id",
                    &id,
                );
                (id, (session.concat(), messages))
            })
            .collect())
    })
    .expect("reading sessions")
}

fn rows_of(conn: &Connection, sql: &str, id: &str) -> Vec<String> {
    let mut stmt = conn.prepare(sql).expect("a read");
    let width = stmt.column_count();
    stmt.query_map([id], |row| {
        let mut line = String::new();
        for i in 0..width {
            line.push_str(&canonical(row.get_ref(i)?));
            line.push('|');
        }
        Ok(line)
    })
    .and_then(|rows| rows.collect::<Result<_, _>>())
    .expect("a read")
}
