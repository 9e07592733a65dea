//! `import_sessions` (`api.md` §11.2) call by call as the original: its
//! report (serialised, key for key), its errors, and the rows it leaves in
//! `sessions`, `messages` and the FTS indexes.
//!
//! `import_sessions.json` holds the cases, one a line: the traces' payloads
//! (`apidiff/traces`: a re-linked child, a detached session, a skipped id,
//! refused sessions, a payload that is not a list) and one case per class
//! of input the original accepts, coerces or refuses. Each case's
//! `outcome`, `sessions`, `messages` and `fts` are what the original
//! (`hermes_state.py`, the traces' blob, with `time.time()` fixed to the
//! case's `clock`) returned and left in its file, read with plain SQL: a
//! row lists the columns whose value is not the column's default, `fts`
//! the `messages_fts_docsize` rows as hex. The traces' outcomes were
//! checked to be the traces' own. (The trigram index is not compared: the
//! expectations were measured with Python's SQLite 3.40.1, whose trigram
//! tokenizer stops at a NUL, so structured content gives it no trigrams.)

use std::sync::Arc;

use hermes_state::prelude::Exchange;
use hermes_state::rusqlite::Connection;
use hermes_state::rusqlite::types::ValueRef;
use hermes_state::{
    Clock, ErrorKind, FixedClock, NewMessage, NewSession, SessionDb, SessionsImportReport,
    StoreOptions,
};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;
use hermes_state_core::store::Titles;
use serde_json::{Map, Value, json};

/// The cases of `import_sessions.json`.
pub(crate) fn cases() -> Vec<Value> {
    serde_json::from_str(include_str!("import_sessions.json")).expect("import_sessions.json")
}

/// A store whose clock reads `clock`.
struct Store {
    db: SessionDb,
    _dir: tempfile::TempDir,
}

impl Store {
    fn at(clock: f64) -> Store {
        let dir = tempfile::tempdir().expect("tempdir");
        let options = StoreOptions {
            clock: Some(FixedClock::new(clock) as Arc<dyn Clock>),
            ..StoreOptions::default()
        };
        let db = SessionDb::open_with(dir.path().join("state.db"), &options).expect("open");
        Store { db, _dir: dir }
    }

    fn exec(&self, sql: &str) {
        self.db
            .write_raw(|conn| {
                conn.execute_batch(sql)
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
                Ok(())
            })
            .expect("setup");
    }

    /// Every row of `table` ordered by `order`, as the fixture lists rows.
    fn rows(&self, table: &str, order: &str) -> Value {
        self.db
            .read(|conn| Ok(rows(conn, table, order)))
            .expect("read")
    }

    /// One column of every row.
    fn column(&self, sql: &str) -> Vec<Value> {
        self.db
            .read(|conn| {
                let mut stmt = conn.prepare(sql).expect("prepare");
                Ok(stmt
                    .query_map([], |row| Ok(json_value(row.get_ref(0)?)))
                    .expect("query")
                    .collect::<Result<_, _>>()
                    .expect("rows"))
            })
            .expect("read")
    }
}

/// The rows of a table, each as the columns whose value is not the
/// column's default (NULL, or the integer of `DEFAULT 0`/`DEFAULT 1`).
fn rows(conn: &Connection, table: &str, order: &str) -> Value {
    let defaults: Vec<Option<i64>> = conn
        .prepare(&format!(
            "SELECT dflt_value FROM pragma_table_info('{table}')"
        ))
        .expect("table_info")
        .query_map([], |row| row.get::<_, Option<String>>(0))
        .expect("table_info")
        .map(|d| {
            d.expect("default")
                .map(|d| d.parse().expect("an integer default"))
        })
        .collect();
    let mut stmt = conn
        .prepare(&format!("SELECT * FROM {table} ORDER BY {order}"))
        .expect("select");
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let rows: Vec<Value> = stmt
        .query_map([], |row| {
            let mut object = Map::new();
            for (at, name) in names.iter().enumerate() {
                let value = row.get_ref(at)?;
                let default = match (value, defaults[at]) {
                    (ValueRef::Null, None) => true,
                    (ValueRef::Integer(i), Some(d)) => i == d,
                    _ => false,
                };
                if !default {
                    object.insert(name.clone(), json_value(value));
                }
            }
            Ok(Value::Object(object))
        })
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("rows");
    Value::Array(rows)
}

/// A cell as the fixture writes it: non-finite floats as `{"$float": …}`.
fn json_value(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => json!(i),
        ValueRef::Real(f) if f.is_nan() => json!({"$float": "nan"}),
        ValueRef::Real(f) if f.is_infinite() => {
            json!({"$float": if f > 0.0 { "inf" } else { "-inf" }})
        }
        ValueRef::Real(f) => json!(f),
        ValueRef::Text(bytes) => json!(String::from_utf8_lossy(bytes)),
        ValueRef::Blob(bytes) => json!({"$bytes": bytes.len()}),
    }
}

/// Why `result` is not the original's `outcome` (`None` when it is): the
/// same report, serialised; or an error of the kind the original's
/// exception maps to (`ValueError` and `OverflowError` → `InvalidInput`
/// with the original's text, `IntegrityError` → `Constraint`).
pub(crate) fn outcome_mismatch(
    result: &hermes_state::Result<SessionsImportReport>,
    outcome: &Value,
) -> Option<String> {
    match (result, outcome["ok"].as_bool()) {
        (Ok(report), Some(true)) => {
            let got = serde_json::to_value(report).expect("serialise");
            (got != outcome["value"]).then(|| format!("report {got}, want {}", outcome["value"]))
        }
        (Err(error), Some(false)) => {
            let (kind, text) = match outcome["error"]["type"].as_str() {
                Some("IntegrityError") => (ErrorKind::Constraint, None),
                Some("ValueError" | "OverflowError") => (
                    ErrorKind::InvalidInput,
                    outcome["error"]["message"].as_str(),
                ),
                other => panic!("an exception the table does not map: {other:?}"),
            };
            let text_ok = text.is_none_or(|text| error.to_string().ends_with(text));
            (error.kind() != kind || !text_ok)
                .then(|| format!("error {:?} {error}, want {outcome}", error.kind()))
        }
        (result, _) => Some(format!("{result:?}, want {outcome}")),
    }
}

#[test]
fn every_case_gives_the_originals_outcome_and_rows() {
    let mut mismatches = Vec::new();
    for case in cases() {
        let name = case["name"].as_str().expect("name");
        let store = Store::at(case["clock"].as_f64().expect("clock"));
        if let Some(sql) = case["setup"].as_str().filter(|s| !s.is_empty()) {
            store.exec(sql);
        }
        let result = store.db.import_sessions(&case["payload"]);
        if let Some(why) = outcome_mismatch(&result, &case["outcome"]) {
            mismatches.push(format!("{name}: {why}"));
        }
        let docsize = |table: &str| {
            Value::Array(
                store
                    .column(&format!("SELECT id FROM {table} ORDER BY id"))
                    .into_iter()
                    .zip(store.column(&format!("SELECT hex(sz) FROM {table} ORDER BY id")))
                    .map(|(id, sz)| json!([id, sz]))
                    .collect(),
            )
        };
        let found = [
            ("sessions", store.rows("sessions", "id")),
            ("messages", store.rows("messages", "id")),
            ("fts", docsize("messages_fts_docsize")),
        ];
        for (what, got) in found {
            if got != case[what] {
                mismatches.push(format!(
                    "{name}: {what}\n  got  {got}\n  want {}",
                    case[what]
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Every message the payload gives, as the original's `messages` key.
fn messages(n: usize) -> Value {
    Value::Array(vec![
        json!({"role": "user", "content": "m", "timestamp": 1.0});
        n
    ])
}

#[test]
fn limits_are_the_originals_with_their_texts() {
    let store = Store::at(1.0);
    let session = |id: String| json!({"id": id});
    let error = store
        .db
        .import_sessions(&Value::Array(
            (0..501).map(|n| session(format!("s{n}"))).collect(),
        ))
        .expect_err("501 sessions");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(
        error
            .to_string()
            .ends_with("sessions must contain at most 500 entries"),
        "{error}"
    );

    let refused = |payload: Value| {
        let report = store.db.import_sessions(&payload).expect("a report");
        assert!(!report.ok);
        serde_json::to_value(report.errors).expect("json")
    };
    assert_eq!(
        refused(json!([{"id": "big", "messages": messages(10_001)}, {"id": "fine"}])),
        json!([{"index": 0, "session_id": "big",
                "error": "messages exceeds the per-session import limit"}])
    );
    // Counted before the check: once over 50 000, every later session is refused.
    let mut six: Vec<Value> = (0..6)
        .map(|n| json!({"id": format!("m{n}"), "messages": messages(9_000)}))
        .collect();
    six.push(json!({"id": "after"}));
    assert_eq!(
        refused(Value::Array(six)),
        json!([
            {"index": 5, "session_id": "m5", "error": "messages exceeds the total import limit"},
            {"index": 6, "session_id": "after", "error": "messages exceeds the total import limit"}
        ])
    );

    // Size: Python's compact JSON with characters as UTF-8 (`é` two bytes,
    // `\n` written `\n`, `1e16` written `1e+16`).
    let sized = |bytes: usize| {
        let base = r#"{"id":"h","n":1e+16,"system_prompt":""}"#.len();
        let fill = bytes - base;
        let text = format!("{}{}", "é\n".repeat(fill / 4), "x".repeat(fill % 4));
        json!([{"id": "h", "n": 1e16, "system_prompt": text}])
    };
    assert!(
        store
            .db
            .import_sessions(&sized(5 << 20))
            .expect("at the limit")
            .ok
    );
    store.exec("DELETE FROM sessions");
    assert_eq!(
        refused(sized((5 << 20) + 1)),
        json!([{"index": 0, "session_id": "h", "error": "session exceeds the import size limit"}])
    );
    let four_mib = "x".repeat(4 << 20);
    let mut seven: Vec<Value> = (0..7)
        .map(|n| json!({"id": format!("h{n}"), "system_prompt": four_mib}))
        .collect();
    seven.push(json!({"id": "z"}));
    assert_eq!(
        refused(Value::Array(seven)),
        json!([
            {"index": 6, "session_id": "h6", "error": "import exceeds the total size limit"},
            {"index": 7, "session_id": "z", "error": "import exceeds the total size limit"}
        ])
    );
    assert_eq!(store.column("SELECT count(*) FROM sessions"), [json!(0)]);
}

#[test]
fn export_all_imports_into_an_empty_store_with_the_same_history() {
    let src = Store::at(1_795_980_826.5);
    let mut kid = NewSession::new("kid", "telegram");
    kid.parent_session_id = Some("root".into());
    src.db
        .create_session(&NewSession::new("root", "cli").model("gpt"))
        .expect("create");
    src.db.create_session(&kid).expect("create");
    src.db
        .set_session_title("root", Some("Root title"))
        .expect("title");
    src.db
        .append_messages(&[
            NewMessage::new("root", "user")
                .content("hello zebra")
                .timestamp(10.0),
            NewMessage::new("root", "assistant")
                .content(json!([{"type": "text", "text": "multi"}]))
                .tool_calls(json!([{"id": "c1"}, {"id": "c2"}]))
                .timestamp(11.0),
            NewMessage::new("kid", "user")
                .content("child words")
                .timestamp(12.0),
        ])
        .expect("append");
    src.exec(
        "UPDATE sessions SET handoff_state = 'pending', compression_fallback_streak = 3,
             pinned = 1, chat_id = 'c' WHERE id = 'root'",
    );
    let exported: Vec<Value> = src
        .db
        .export_all(None)
        .expect("export")
        .iter()
        .map(|e| e.to_value())
        .collect();
    let ids: Vec<Value> = exported.iter().map(|e| e["id"].clone()).collect();

    let dst = Store::at(1_795_990_000.0);
    let report = dst
        .db
        .import_sessions(&Value::Array(exported.clone()))
        .expect("import");
    assert_eq!(
        serde_json::to_value(&report).expect("json"),
        json!({"ok": true, "imported": 2, "skipped": 0, "detached": 0,
               "imported_ids": ids, "skipped_ids": [], "errors": []})
    );
    assert_eq!(
        dst.column("SELECT parent_session_id FROM sessions WHERE id = 'kid'"),
        [json!("root")]
    );
    assert_eq!(
        dst.column(
            "SELECT title || model || message_count || tool_call_count FROM sessions WHERE id = 'root'"
        ),
        [json!("Root titlegpt22")]
    );
    assert_eq!(
        dst.column(
            "SELECT coalesce(handoff_state, chat_id, '') || compression_fallback_streak || pinned
             FROM sessions WHERE id = 'root'"
        ),
        [json!("00")],
        "live state, gateway fields and pinned keep their defaults"
    );
    assert_eq!(
        dst.column("SELECT content FROM messages WHERE session_id = 'root' ORDER BY id"),
        [
            json!("hello zebra"),
            json!("\u{0}json:[{\"type\": \"text\", \"text\": \"multi\"}]")
        ]
    );
    assert_eq!(
        dst.column("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'zebra'"),
        [json!(1)]
    );
    let again: Vec<Value> = dst
        .db
        .export_all(None)
        .expect("export")
        .iter()
        .map(|e| e.to_value())
        .collect();
    for (a, b) in exported.iter().zip(&again) {
        for key in ["id", "source", "started_at", "ended_at", "title", "model"] {
            assert_eq!(a[key], b[key], "{key}");
        }
        // The same messages, under new ids.
        let without_ids = |session: &Value| {
            let mut messages = session["messages"].clone();
            for message in messages.as_array_mut().expect("messages") {
                message.as_object_mut().expect("message").remove("id");
            }
            messages
        };
        assert_eq!(without_ids(a), without_ids(b));
    }

    // Again: every id is skipped and nothing is written.
    let report = dst
        .db
        .import_sessions(&Value::Array(exported))
        .expect("again");
    assert_eq!(
        (
            report.ok,
            report.imported,
            report.skipped_ids.map(|s| s.len())
        ),
        (true, 0, Some(2))
    );
    assert_eq!(dst.column("SELECT count(*) FROM messages"), [json!(3)]);
}

#[test]
fn a_read_only_handle_refuses_and_an_empty_list_is_fine() {
    let store = Store::at(1.0);
    let report = store.db.import_sessions(&json!([])).expect("empty");
    assert_eq!((report.ok, report.imported), (true, 0));
    let path = store._dir.path().join("state.db");
    let read_only = SessionDb::open_read_only(&path).expect("read-only open");
    let error = read_only
        .import_sessions(&json!([{"id": "a"}]))
        .expect_err("read-only");
    assert_eq!(error.kind(), ErrorKind::ReadOnly);
}
