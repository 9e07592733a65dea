//! `append_message` and `get_messages` (`api.md` §4, §5.1) where the file
//! shows more than the contract: the storage classes and bytes SQLite
//! holds, the full-text index, rows a foreign writer left. The rest runs on
//! every backend in the conformance suite (`message_writes`,
//! `message_reads`).

use hermes_state::rusqlite::types::Value as Sql;
use hermes_state::serde_json::{Value, json};
use hermes_state::{Content, ErrorKind, NewMessage};

use crate::common::{NULL, Store, assert_kind, i, t};
use hermes_state_core::store::Messages;

/// How each value of §4.2 is stored: (what, message, content, typeof(content),
/// length(CAST(content AS BLOB)), tool_calls, reasoning_details).
#[test]
fn append_message_stored_encodings() {
    let store = Store::new();
    store.session("s");
    let nul_text = "a\0b\0c";
    let structured = json!([{"type": "text", "text": "look"}]);
    let prefix_json = "\0json:[{\"type\": \"text\", \"text\": \"look\"}]";
    let cases: Vec<(&str, NewMessage, Sql, &str, Sql)> = vec![
        (
            "embedded NUL",
            NewMessage::new("s", "user").content(nul_text),
            t(nul_text),
            "text",
            i(5),
        ),
        (
            "empty string stays empty",
            NewMessage::new("s", "user").content(""),
            t(""),
            "text",
            i(0),
        ),
        (
            "no content",
            NewMessage::new("s", "assistant"),
            NULL,
            "null",
            NULL,
        ),
        (
            "structured content",
            NewMessage::new("s", "user").content(Content::Structured(structured)),
            t(prefix_json),
            "text",
            i(prefix_json.len() as i64),
        ),
        (
            "integer",
            NewMessage::new("s", "user").content(Content::Integer(42)),
            t("42"),
            "text",
            i(2),
        ),
        (
            "bool",
            NewMessage::new("s", "user").content(Content::Bool(true)),
            t("1"),
            "text",
            i(1),
        ),
        (
            "real",
            NewMessage::new("s", "user").content(Content::Real(4.5)),
            t("4.5"),
            "text",
            i(3),
        ),
        (
            "bytes",
            NewMessage::new("s", "user").content(Content::Bytes(vec![0, 159, 146, 150])),
            Sql::Blob(vec![0, 159, 146, 150]),
            "blob",
            i(4),
        ),
        (
            "non-ASCII text is stored as UTF-8, unescaped",
            NewMessage::new("s", "user").content("é😀"),
            t("é😀"),
            "text",
            i(6),
        ),
    ];
    for (what, message, content, class, length) in cases {
        let id = store.db.append_message(&message).expect(what);
        assert_eq!(
            store.row(
                "SELECT content, typeof(content), length(CAST(content AS BLOB)) FROM messages WHERE id = ?1",
                [id]
            ),
            vec![content, t(class), length],
            "content: {what}"
        );
    }
}

/// A refused append leaves nothing in the full-text index either (the ids
/// it leaves untaken are the conformance suite's).
#[test]
fn append_to_missing_session_is_not_found_and_indexes_nothing() {
    let store = Store::new();
    store.session("s");
    assert_kind(
        store
            .db
            .append_message(&NewMessage::new("nope", "user").content("lost word")),
        ErrorKind::NotFound,
    );
    assert_eq!(store.count("SELECT count(*) FROM messages", []), 0);
    assert_eq!(store.fts_hits("lost"), 0);
}

/// A NUL inside text (which PostgreSQL refuses) and rows a foreign or
/// damaged writer left on the file decode as the original reads them. What
/// every backend stores and reads back is the conformance suite's
/// (`message_writes`).
#[test]
fn get_messages_decodes_nul_text_and_rows_a_foreign_writer_left() {
    let store = Store::new();
    store.session("s");
    store
        .db
        .append_message(&NewMessage::new("s", "user").content("a\0b"))
        .expect("append");
    // Invalid JSON after the prefix, invalid tool_calls, an empty tool_calls
    // string, a JSON string after the prefix.
    for (content, calls) in [
        ("\0json:{not json", None),
        ("text", Some("{broken")),
        ("text2", Some("")),
        ("\0json:\"inner\"", None),
    ] {
        store.exec(
            "INSERT INTO messages (session_id, role, content, tool_calls, timestamp) VALUES ('s', 'user', ?1, ?2, 5.0)",
            (content, calls),
        );
    }
    let got: Vec<(i64, Option<Content>, Option<Value>)> = (store.db.get_messages("s"))
        .expect("get_messages")
        .into_iter()
        .map(|m| (m.id, m.content, m.tool_calls))
        .collect();
    let text = |t: &str| Some(Content::Text(t.to_owned()));
    assert_eq!(
        got,
        vec![
            (1, text("a\0b"), None),
            (2, text("\0json:{not json"), None),
            (3, text("text"), Some(json!([]))),
            (4, text("text2"), Some(json!(""))),
            (5, Some(Content::Structured(json!("inner"))), None),
        ]
    );
}
