//! The original's JSON export document: written part by part with the
//! bytes of serde_json's whole array, and read back by `import_sessions`'
//! rules as JSONL for the import.

use hermes_state_core::cleanup::{
    MESSAGE_COLUMNS, SESSION_COLUMNS, SessionsImport, original_json_to_jsonl, plan_sessions_import,
};
use hermes_state_core::export::{
    Cell, ExportPart, ImportOptions, ImportRow, OriginalJsonWriter, SessionExport, import_jsonl,
};
use hermes_state_types::stored::StoredValue;
use hermes_state_types::{Content, ErrorKind, Message, Session};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::export_codec::Recorder;

/// JSON of any shape; text of any characters, newlines and quotes often.
fn any_json() -> impl Strategy<Value = Value> {
    let text = prop_oneof![any::<String>(), "[a-z\n\"\\\\ é日😀]{0,12}"];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        text.prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z]{1,3}", inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

prop_compose! {
    /// A session with messages (content and tool calls of any shape); an
    /// extra column may be named `messages`, which puts that key out of last place.
    fn any_export()(
        id in "[a-z\n\"é]{0,8}",
        extra in prop::collection::vec(("[a-z_]{1,8}|messages", any_json()), 0..3),
        last_active in prop::option::of(-1e12f64..1e12),
        messages in prop::collection::vec((any_json(), any_json(), -1e12f64..1e12), 0..4),
    ) -> SessionExport {
        let session = Session { id, extra: extra.into_iter().collect(), ..Session::default() };
        let messages = messages.into_iter().map(|(content, calls, timestamp)| Message {
            content: Some(Content::from(content)), tool_calls: Some(calls), timestamp, ..Message::default()
        });
        SessionExport { session, last_active, messages: messages.collect() }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_document_written_in_parts_has_the_bytes_of_the_whole_array(
        exports in prop::collection::vec(any_export(), 0..4),
        pretty in any::<bool>(),
    ) {
        let mut out = Vec::new();
        let mut writer = OriginalJsonWriter::new(&mut out, pretty).unwrap();
        for export in &exports {
            let head = SessionExport { messages: Vec::new(), ..export.clone() };
            writer.part(ExportPart::Session(head)).unwrap();
            for message in &export.messages {
                writer.part(ExportPart::Message(message.clone())).unwrap();
            }
            writer.part(ExportPart::SessionEnd).unwrap();
        }
        let summary = writer.finish().unwrap();
        let mut whole = if pretty { serde_json::to_vec_pretty(&exports) } else { serde_json::to_vec(&exports) }.unwrap();
        whole.push(b'\n');
        prop_assert_eq!(String::from_utf8(out.clone()).unwrap(), String::from_utf8(whole).unwrap());
        prop_assert_eq!(summary.sessions, exports.len() as u64);
        prop_assert_eq!(summary.messages as usize, exports.iter().map(|e| e.messages.len()).sum::<usize>());
        prop_assert_eq!(summary.bytes, out.len() as u64);
    }
}

/// A row as the library's import reads it: a session's id (`None` for a
/// message, whose id must be left out) and its values.
type Row = (Option<String>, Vec<(String, Cell)>);

/// The rows of `document`'s JSONL.
fn imported(document: Value) -> Vec<Row> {
    let jsonl = original_json_to_jsonl(document, 1e9).unwrap();
    let sessions = [SESSION_COLUMNS.as_slice(), &["parent_session_id"]].concat();
    let mut sink = Recorder::with_columns(&sessions, &MESSAGE_COLUMNS);
    let options = ImportOptions::default();
    import_jsonl(&mut sink, &jsonl[..], &options, &mut |_| {}).unwrap();
    let rows = sink.rows().into_iter().map(|row| match row {
        ImportRow::Session { id, values, .. } => (Some(id), values),
        ImportRow::Message { id, values, .. } => (id.map(|id| id.to_string()), values),
    });
    rows.collect()
}

fn session_ids(document: Value) -> Vec<String> {
    imported(document)
        .into_iter()
        .filter_map(|row| row.0)
        .collect()
}

/// The JSONL holds the rows `import_sessions` writes for the same sessions
/// (its checks, coercions and columns: live state and message ids left
/// out), parents first, each with its parent.
#[test]
fn a_document_becomes_the_rows_import_sessions_writes() {
    let document = json!([
        {"id": " child ", "parent_session_id": "root", "title": "Child", "input_tokens": "12",
         "archived": true, "model_config": {"temperature": 0.5}, "messages": [
            {"id": 7, "role": "user", "content": "hi", "timestamp": 5.0},
            {"role": "assistant", "content": [{"type": "text", "text": "yo"}],
             "tool_calls": [{"id": "c1", "function": {"name": "weather"}}]}]},
        {"id": "root", "source": "", "last_active": 9.0, "pinned": 1, "session_key": "live"},
    ]);
    let SessionsImport::Write(prepared) = plan_sessions_import(&document, 1e9).unwrap() else {
        panic!("refused");
    };
    let cells = |names: &[&str], values: &[StoredValue]| -> Vec<(String, Cell)> {
        let cells = values.iter().cloned().map(Cell::Stored);
        names.iter().map(|n| (*n).to_owned()).zip(cells).collect()
    };
    let names = [SESSION_COLUMNS.as_slice(), &["parent_session_id"]].concat();
    let mut expected = Vec::new();
    for (session, parent) in [(&prepared[1], None), (&prepared[0], Some("root"))] {
        let mut values = session.session.values.clone();
        values.push(parent.map_or(StoredValue::Null, |p| StoredValue::Text(p.into())));
        expected.push((Some(session.id.clone()), cells(&names, &values)));
        for message in &session.messages {
            expected.push((None, cells(&MESSAGE_COLUMNS, &message.values)));
        }
    }
    assert_eq!(imported(document), expected);
}

#[test]
fn parents_come_first_and_cycles_end() {
    let s = |id: &str, parent: &str| json!({"id": id, "parent_session_id": parent});
    let list = json!([
        s("c", "b"),
        s("b", "a"),
        s("a", ""),
        s("x", "y"),
        s("y", "x")
    ]);
    assert_eq!(session_ids(list), ["a", "b", "c", "y", "x"]);
    // One session, as `export_session` returns it.
    assert_eq!(session_ids(s("one", "")), ["one"]);
}

/// A document is not one call: more than 500 sessions (which one call of
/// `import_sessions` refuses) are read. A session the original refuses (its
/// own limits included) is named, and nothing is converted.
#[test]
fn sessions_are_refused_by_the_originals_checks_but_not_by_one_calls_limits() {
    let many = Value::Array((0..501).map(|i| json!({"id": format!("s{i}")})).collect());
    let error = plan_sessions_import(&many, 1.0).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert_eq!(session_ids(many).len(), 501);
    let long = json!({"id": "b", "messages": vec![json!({"role": "user"}); 10_001]});
    let some = json!([{"id": "a", "title": 5}, long, 3, {"id": "c"}, {"id": "c"}]);
    let too_large = json!([{"id": "a", "input_tokens": u64::MAX}]);
    for (document, says) in [
        (
            some,
            "session 0 (\"a\"): title must be a string; session 1 (\"b\"): messages exceeds the per-session import limit; session 2: session must be an object; session 4 (\"c\"): duplicate session id",
        ),
        (too_large, "session \"a\": Python int too large"),
        (json!("sessions"), "sessions must be a list"),
    ] {
        let error = original_json_to_jsonl(document, 1.0).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput);
        assert!(error.to_string().contains(says), "{error}");
    }
}
