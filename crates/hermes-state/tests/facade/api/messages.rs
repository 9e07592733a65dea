//! `append_message`, `get_messages`, `get_messages_page`, `message_count`
//! (`api.md` §4, §5.1).

use hermes_state::rusqlite::types::Value as Sql;
use hermes_state::serde_json::{Value, json};
use hermes_state::{Content, ErrorKind, MessagePage, NewMessage};

use crate::common::{NULL, Store, assert_kind, i, r, t};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;

const COUNTERS: &str = "SELECT message_count, tool_call_count FROM sessions WHERE id = ?1";

/// The measured sequence of §4.3: (message_count, tool_call_count) after each append.
#[test]
fn append_message_counter_sequence() {
    let store = Store::new();
    store.session("s");
    let two_calls = json!([
        {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
        {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}},
    ]);
    let steps: Vec<(&str, NewMessage, (i64, i64))> = vec![
        ("user", NewMessage::new("s", "user").content("hi"), (1, 0)),
        (
            "assistant with 2 calls",
            NewMessage::new("s", "assistant").tool_calls(two_calls),
            (2, 2),
        ),
        (
            "tool result",
            NewMessage::new("s", "tool")
                .content("out")
                .tool_result("terminal", "c1"),
            (3, 2),
        ),
        (
            "calls as a JSON string of 1 call",
            NewMessage::new("s", "assistant")
                .tool_calls(Value::String(r#"[{"id":"c9"}]"#.to_owned())),
            (4, 3),
        ),
        (
            "calls \"not json\"",
            NewMessage::new("s", "assistant").tool_calls(Value::String("not json".to_owned())),
            (5, 3),
        ),
        (
            "calls {\"id\":\"solo\"}",
            NewMessage::new("s", "assistant").tool_calls(json!({"id": "solo"})),
            (6, 4),
        ),
        (
            "calls []",
            NewMessage::new("s", "assistant").tool_calls(json!([])),
            (7, 4),
        ),
    ];
    for (n, (what, message, (messages, calls))) in steps.into_iter().enumerate() {
        let id = store.db.append_message(&message).expect(what);
        assert_eq!(id, n as i64 + 1, "{what}: ids are 1, 2, 3, …");
        assert_eq!(
            store.row(COUNTERS, ["s"]),
            vec![i(messages), i(calls)],
            "counters after: {what}"
        );
    }
    assert_eq!(store.db.message_count(Some("s")).expect("count"), 7);
    // tool_calls as stored for the four last appends.
    assert_eq!(
        store.rows(
            "SELECT tool_calls FROM messages WHERE id >= 4 ORDER BY id",
            []
        ),
        vec![
            vec![t(r#"[{"id": "c9"}]"#)],
            vec![NULL],
            vec![t(r#"{"id": "solo"}"#)],
            vec![NULL],
        ]
    );
}

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

    let calls: Vec<(&str, Value, Sql)> = vec![
        (
            "string is parsed and re-serialised",
            Value::String(r#"[{"id":"c9"}]"#.to_owned()),
            t(r#"[{"id": "c9"}]"#),
        ),
        (
            "invalid JSON string",
            Value::String("not json".to_owned()),
            NULL,
        ),
        ("empty list", json!([]), NULL),
        ("empty object", json!({}), NULL),
        ("object", json!({"id": "solo"}), t(r#"{"id": "solo"}"#)),
        (
            "numbers and non-ASCII normalised as Python",
            Value::String(
                r#"[{"n": 1e2, "m": 1.10, "big": 123456789012345678, "s": "é"}]"#.to_owned(),
            ),
            t(r#"[{"n": 100.0, "m": 1.1, "big": 123456789012345678, "s": "\u00e9"}]"#),
        ),
        ("JSON null string", Value::String("null".to_owned()), NULL),
    ];
    for (what, value, stored) in calls {
        let id = store
            .db
            .append_message(&NewMessage::new("s", "assistant").tool_calls(value))
            .expect(what);
        assert_eq!(
            store.row("SELECT tool_calls FROM messages WHERE id = ?1", [id]),
            vec![stored],
            "tool_calls: {what}"
        );
    }

    let json_columns: Vec<(&str, Option<Value>, Sql)> = vec![
        ("{}", Some(json!({})), NULL),
        ("[]", Some(json!([])), NULL),
        ("none", None, NULL),
        ("list", Some(json!([{"t": 1}])), t(r#"[{"t": 1}]"#)),
        (
            "object",
            Some(json!({"a": "é", "b": [1, 2.5]})),
            t(r#"{"a": "\u00e9", "b": [1, 2.5]}"#),
        ),
    ];
    for (what, value, stored) in json_columns {
        let message = NewMessage {
            reasoning_details: value.clone(),
            codex_reasoning_items: value.clone(),
            codex_message_items: value.clone(),
            display_metadata: value,
            ..NewMessage::new("s", "assistant")
        };
        let id = store.db.append_message(&message).expect(what);
        assert_eq!(
            store.row(
                "SELECT reasoning_details, codex_reasoning_items, codex_message_items, display_metadata FROM messages WHERE id = ?1",
                [id]
            ),
            vec![stored.clone(), stored.clone(), stored.clone(), stored],
            "JSON columns: {what}"
        );
    }
}

#[test]
fn append_message_stores_every_column() {
    let store = Store::new();
    store.session("s");
    let message = NewMessage {
        content: Some(Content::Text("body".to_owned())),
        tool_name: Some("terminal".to_owned()),
        tool_calls: Some(json!([{"id": "c1"}])),
        tool_call_id: Some("call_1".to_owned()),
        token_count: Some(7),
        finish_reason: Some("stop".to_owned()),
        reasoning: Some("thinking".to_owned()),
        reasoning_content: Some(String::new()),
        reasoning_details: Some(json!([{"t": 1}])),
        codex_reasoning_items: Some(json!([{"i": 1}])),
        codex_message_items: Some(json!([{"m": 1}])),
        platform_message_id: Some("pm-1".to_owned()),
        observed: true,
        effect_disposition: Some("applied".to_owned()),
        timestamp: Some(1_700_000_001.5),
        api_content: Some("  WIRE  ".to_owned()),
        display_kind: Some("steer".to_owned()),
        display_metadata: Some(json!({"a": 1})),
        ..NewMessage::new("s", "assistant")
    };
    let id = store.db.append_message(&message).expect("append");
    assert_eq!(id, 1);
    assert_eq!(
        store.row("SELECT id, session_id, role, content, tool_call_id, tool_calls, tool_name, effect_disposition, timestamp, typeof(timestamp), token_count, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, platform_message_id, observed, active, compacted, api_content, display_kind, display_metadata FROM messages", []),
        vec![
            i(1),
            t("s"),
            t("assistant"),
            t("body"),
            t("call_1"),
            t(r#"[{"id": "c1"}]"#),
            t("terminal"),
            t("applied"),
            r(1_700_000_001.5),
            t("real"),
            i(7),
            t("stop"),
            t("thinking"),
            t(""),
            t(r#"[{"t": 1}]"#),
            t(r#"[{"i": 1}]"#),
            t(r#"[{"m": 1}]"#),
            t("pm-1"),
            i(1),
            i(1),
            i(0),
            t("  WIRE  "),
            t("steer"),
            t(r#"{"a": 1}"#),
        ]
    );

    // Defaults: observed 0, active 1, compacted 0, timestamp now as REAL.
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64();
    let id = store
        .db
        .append_message(&NewMessage::new("s", "user").content("plain"))
        .expect("append");
    assert_eq!(id, 2);
    let row = store.row(
        "SELECT observed, active, compacted, typeof(timestamp), timestamp, tool_calls, reasoning_content FROM messages WHERE id = 2",
        [],
    );
    assert_eq!(
        row[..6],
        [i(0), i(1), i(0), t("real"), row[4].clone(), NULL]
    );
    assert_eq!(row[6], NULL, "reasoning_content None stays NULL");
    let Sql::Real(ts) = row[4] else {
        panic!("timestamp REAL")
    };
    assert!(
        ts >= before - 0.001 && ts < before + 60.0,
        "timestamp is now: {ts}"
    );
}

#[test]
fn append_to_missing_session_is_not_found_and_writes_nothing() {
    let store = Store::new();
    store.session("s");
    assert_kind(
        store
            .db
            .append_message(&NewMessage::new("nope", "user").content("lost word")),
        ErrorKind::NotFound,
    );
    assert_eq!(store.count("SELECT count(*) FROM messages", []), 0);
    assert_eq!(store.count("SELECT count(*) FROM sessions", []), 1);
    assert_eq!(store.fts_hits("lost"), 0);
    // The id sequence was not consumed.
    assert_eq!(
        store
            .db
            .append_message(&NewMessage::new("s", "user").content("x"))
            .expect("append"),
        1
    );
}

#[test]
fn append_to_ended_session_is_allowed_and_touches_only_the_counters() {
    let store = Store::new();
    store.session("s");
    store.db.end_session("s", "user_exit").expect("end");
    let before = store.row("SELECT * FROM sessions WHERE id = 's'", []);
    store
        .db
        .append_message(&NewMessage::new("s", "assistant").tool_calls(json!([{"id": "a"}])))
        .expect("append to an ended session");
    let after = store.row("SELECT * FROM sessions WHERE id = 's'", []);
    let columns: Vec<String> = store
        .rows(
            "SELECT name FROM pragma_table_info('sessions') ORDER BY cid",
            [],
        )
        .into_iter()
        .map(|row| match &row[0] {
            Sql::Text(name) => name.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    for ((name, b), a) in columns.iter().zip(&before).zip(&after) {
        match name.as_str() {
            "message_count" | "tool_call_count" => assert_eq!(a, &i(1), "{name}"),
            _ => assert_eq!(a, b, "{name} is not touched by append_message"),
        }
    }
}

#[test]
fn get_messages_decodes_content_and_tool_calls() {
    let store = Store::new();
    store.session("s");
    store
        .db
        .append_message(&NewMessage::new("s", "user").content("a\0b"))
        .expect("append");
    store
        .db
        .append_message(&NewMessage::new("s", "user").content(Content::Structured(
            json!([{"type": "text", "text": "look"}]),
        )))
        .expect("append");
    store
        .db
        .append_message(
            &NewMessage::new("s", "assistant")
                .tool_calls(Value::String(r#"[{"id":"c9","n":1e2}]"#.to_owned())),
        )
        .expect("append");
    store
        .db
        .append_message(&NewMessage::new("s", "user").content(Content::Integer(42)))
        .expect("append");
    store
        .db
        .append_message(&NewMessage::new("s", "user").content(Content::Bytes(vec![1, 2, 255])))
        .expect("append");
    // Rows a foreign or damaged writer left: invalid JSON after the prefix,
    // invalid tool_calls, an empty tool_calls string, a JSON string after the prefix.
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

    let messages = store.db.get_messages("s").expect("get_messages");
    let got: Vec<(i64, Option<Content>, Option<Value>)> = messages
        .iter()
        .map(|m| (m.id, m.content.clone(), m.tool_calls.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, Some(Content::Text("a\0b".to_owned())), None),
            (
                2,
                Some(Content::Structured(
                    json!([{"type": "text", "text": "look"}])
                )),
                None
            ),
            (3, None, Some(json!([{"id": "c9", "n": 100.0}]))),
            (4, Some(Content::Text("42".to_owned())), None),
            (5, Some(Content::Bytes(vec![1, 2, 255])), None),
            (6, Some(Content::Text("\0json:{not json".to_owned())), None),
            (7, Some(Content::Text("text".to_owned())), Some(json!([]))),
            (8, Some(Content::Text("text2".to_owned())), Some(json!(""))),
            (9, Some(Content::Structured(json!("inner"))), None),
        ]
    );
    let first = &messages[0];
    assert_eq!(first.session_id, "s");
    assert_eq!(first.role, "user");
    assert_eq!(first.active, 1);
    assert_eq!(first.compacted, 0);
    assert_eq!(first.observed, Some(0));
    assert!(first.extra.is_empty());
    assert_eq!(store.db.get_messages("unknown").expect("get"), vec![]);
}

#[test]
fn get_messages_returns_json_columns_raw_and_row_fields() {
    let store = Store::new();
    store.session("s");
    let message = NewMessage {
        reasoning_details: Some(json!([{"t": "é"}])),
        display_metadata: Some(json!({"a": 1})),
        platform_message_id: Some("pm".to_owned()),
        observed: true,
        token_count: Some(3),
        timestamp: Some(12.25),
        ..NewMessage::new("s", "assistant").content("x")
    };
    store.db.append_message(&message).expect("append");
    let got = store.db.get_messages("s").expect("get");
    assert_eq!(got.len(), 1);
    assert_eq!(
        got[0].reasoning_details.as_deref(),
        Some(r#"[{"t": "\u00e9"}]"#)
    );
    assert_eq!(got[0].display_metadata.as_deref(), Some(r#"{"a": 1}"#));
    assert_eq!(got[0].platform_message_id.as_deref(), Some("pm"));
    assert_eq!(got[0].observed, Some(1));
    assert_eq!(got[0].token_count, Some(3));
    assert_eq!(got[0].timestamp, 12.25);
}

#[test]
fn get_messages_hides_inactive_rows_and_pages_by_id() {
    let store = Store::new();
    store.session("s");
    store.session("other");
    // Timestamps deliberately out of order: the order is by id.
    for n in 1..=6 {
        store
            .db
            .append_message(
                &NewMessage::new("s", "user")
                    .content(format!("m{n}"))
                    .timestamp(100.0 - f64::from(n)),
            )
            .expect("append");
    }
    store
        .db
        .append_message(&NewMessage::new("other", "user").content("elsewhere"))
        .expect("append");
    store.exec("UPDATE messages SET active = 0 WHERE id IN (2, 4)", []);
    store.exec("UPDATE messages SET compacted = 1 WHERE id = 4", []);

    let texts = |page: MessagePage| -> Vec<String> {
        store
            .db
            .get_messages_page("s", page)
            .expect("page")
            .into_iter()
            .map(|m| match m.content {
                Some(Content::Text(text)) => text,
                other => panic!("{other:?}"),
            })
            .collect()
    };
    let page = |include_inactive, limit, offset| MessagePage {
        include_inactive,
        limit,
        offset,
    };
    let cases: Vec<(MessagePage, Vec<&str>)> = vec![
        (MessagePage::default(), vec!["m1", "m3", "m5", "m6"]),
        (
            page(true, None, 0),
            vec!["m1", "m2", "m3", "m4", "m5", "m6"],
        ),
        (page(false, Some(2), 0), vec!["m1", "m3"]),
        (page(false, Some(2), 1), vec!["m3", "m5"]),
        (page(false, None, 2), vec!["m5", "m6"]),
        (page(true, Some(3), 2), vec!["m3", "m4", "m5"]),
        (page(false, Some(0), 0), vec![]),
        (page(false, Some(10), 10), vec![]),
    ];
    for (p, expected) in cases {
        assert_eq!(texts(p), expected, "{p:?}");
    }
    let all = store.db.get_messages("s").expect("get");
    assert_eq!(
        all.iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![1, 3, 5, 6]
    );
    let inactive = store
        .db
        .get_messages_page("s", page(true, None, 0))
        .expect("get");
    assert_eq!(
        inactive
            .iter()
            .map(|m| (m.id, m.active, m.compacted))
            .collect::<Vec<_>>(),
        vec![
            (1, 1, 0),
            (2, 0, 0),
            (3, 1, 0),
            (4, 0, 1),
            (5, 1, 0),
            (6, 1, 0)
        ]
    );
    // message_count counts inactive rows; without an id, the whole store.
    assert_eq!(store.db.message_count(Some("s")).expect("count"), 6);
    assert_eq!(store.db.message_count(None).expect("count"), 7);
    assert_eq!(store.db.message_count(Some("nope")).expect("count"), 0);
}

/// Stored tool_calls text and the session's tool_call_count increment for
/// `tool_calls` given as a JSON string (§4.2: parsed with Python's
/// `json.loads`, re-serialised with `json.dumps`).
fn tool_calls_from_string(cases: &[(&str, Option<&str>, i64)]) {
    let store = Store::new();
    store.session("s");
    for &(given, stored, counted) in cases {
        let before = store.count("SELECT tool_call_count FROM sessions WHERE id = 's'", []);
        let id = store
            .db
            .append_message(
                &NewMessage::new("s", "assistant").tool_calls(Value::String(given.to_owned())),
            )
            .expect("append");
        assert_eq!(
            store.row("SELECT tool_calls FROM messages WHERE id = ?1", [id]),
            vec![stored.map_or(NULL, t)],
            "stored tool_calls for {given:?}"
        );
        let after = store.count("SELECT tool_call_count FROM sessions WHERE id = 's'", []);
        assert_eq!(after - before, counted, "tool calls counted for {given:?}");
    }
}

#[test]
fn tool_calls_strings_are_normalised_like_python() {
    // Expected values from CPython 3: json.dumps(json.loads(given)).
    tool_calls_from_string(&[
        ("[1E2, 1.10, -0.0]", Some("[100.0, 1.1, -0.0]"), 3),
        (
            "[18446744073709551615, -9223372036854775808]",
            Some("[18446744073709551615, -9223372036854775808]"),
            2,
        ),
        (r#"{"a":1,"b":3,"a":2}"#, Some(r#"{"a": 2, "b": 3}"#), 1),
        (" [1] ", Some("[1]"), 1),
        ("[1]\n", Some("[1]"), 1),
        (r#""abc""#, Some(r#""abc""#), 1),
        (r#""""#, None, 1),
        ("{}", None, 1),
        ("0", None, 1),
        ("null", None, 0),
        ("", None, 0),
        ("[1,]", None, 0),
        (
            r#"["\u00e9\ud83d\ude00", "\u0000"]"#,
            Some(r#"["\u00e9\ud83d\ude00", "\u0000"]"#),
            2,
        ),
    ]);
}

/// Python's `json.loads` keeps integers of any size exactly, and §4.2 says
/// re-serialising keeps "large integers exact".
#[test]
fn tool_calls_string_keeps_large_integers_exact() {
    tool_calls_from_string(&[
        (
            r#"[{"n": 123456789012345678901234567890}]"#,
            Some(r#"[{"n": 123456789012345678901234567890}]"#),
            1,
        ),
        ("[18446744073709551616]", Some("[18446744073709551616]"), 1),
    ]);
}

/// Python reads `-0` as the integer 0 (`json.dumps` → `0`), not as `-0.0`.
#[test]
fn tool_calls_string_minus_zero_integer() {
    tool_calls_from_string(&[("[-0]", Some("[0]"), 1)]);
}

/// Python's `json.loads` accepts `NaN`, `Infinity`, `-Infinity` and reads
/// `1e400` as `inf`; `json.dumps` writes them back literally (§0.3), and so
/// must the port (not treat the string as invalid JSON).
#[test]
fn tool_calls_string_non_finite_numbers() {
    tool_calls_from_string(&[
        (
            "[NaN, Infinity, -Infinity]",
            Some("[NaN, Infinity, -Infinity]"),
            3,
        ),
        ("[1e400]", Some("[Infinity]"), 1),
    ]);
}

/// Python's `json.loads` accepts escaped lone surrogates (`"\ud83d"`, e.g. a
/// truncated emoji in tool arguments) and `json.dumps` writes them back as the
/// same escapes; so must the port (serde_json alone would refuse them).
#[test]
fn tool_calls_string_lone_surrogate_escape() {
    tool_calls_from_string(&[(
        r#"["\ud83d", {"k": "a\udc00b"}]"#,
        Some(r#"["\ud83d", {"k": "a\udc00b"}]"#),
        2,
    )]);
}
