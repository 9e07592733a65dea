use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::*;

/// Text of any characters, NUL bytes frequent.
fn any_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![1 => Just('\0'), 4 => any::<char>()], 0..40)
        .prop_map(String::from_iter)
}

/// JSON leaves Python's `json.loads(json.dumps(x))` gives back unchanged.
fn any_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any_text().prop_map(Value::String),
    ]
}

fn any_json() -> impl Strategy<Value = Value> {
    any_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((any_text(), inner), 0..4)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Structured content: an array or an object.
fn any_structured() -> impl Strategy<Value = Value> {
    any_json().prop_filter("an array or an object", |v| v.is_array() || v.is_object())
}

/// Stored values of every storage class, content written by other builds included.
fn any_stored() -> impl Strategy<Value = StoredValue> {
    prop_oneof![
        Just(StoredValue::Null),
        any::<i64>().prop_map(StoredValue::Integer),
        any::<f64>().prop_map(StoredValue::Real),
        any_text().prop_map(StoredValue::Text),
        any_structured().prop_map(|v| StoredValue::Text(structured_content_text(&v))),
        any_text().prop_map(|t| StoredValue::Text(format!("{CONTENT_JSON_PREFIX}{t}"))),
        prop::collection::vec(any::<u8>(), 0..16).prop_map(StoredValue::Blob),
    ]
}

fn round_trip(content: &Content) -> Option<Content> {
    decode_content(encode_content(content).as_ref())
}

proptest! {
    #[test]
    fn text_round_trips_nul_bytes_included(text in any_text()) {
        prop_assume!(!text.starts_with(CONTENT_JSON_PREFIX));
        let content = Content::Text(text.clone());
        prop_assert_eq!(encode_content(&content), StoredValue::Text(text));
        prop_assert_eq!(round_trip(&content), Some(content));
    }

    #[test]
    fn text_holding_the_prefix_after_its_start_round_trips(
        head in any_text(),
        json in any_structured(),
        tail in any_text(),
    ) {
        prop_assume!(!head.is_empty() && !head.starts_with(CONTENT_JSON_PREFIX));
        let content = Content::Text(format!("{head}{}{tail}", structured_content_text(&json)));
        prop_assert_eq!(round_trip(&content), Some(content));
    }

    #[test]
    fn text_starting_with_the_prefix_round_trips_unless_json_follows(text in any_text()) {
        prop_assume!(serde_json::from_str::<Value>(&text).is_err());
        let content = Content::Text(format!("{CONTENT_JSON_PREFIX}{text}"));
        prop_assert_eq!(round_trip(&content), Some(content));
    }

    #[test]
    fn structured_content_round_trips(json in any_structured()) {
        let stored = encode_content(&Content::Structured(json.clone()));
        let StoredValue::Text(text) = &stored else {
            return Err(TestCaseError::fail("structured content is stored as text"));
        };
        let dumped = pyjson::to_string(&json);
        prop_assert_eq!(text.strip_prefix(CONTENT_JSON_PREFIX), Some(dumped.as_str()));
        prop_assert_eq!(decode_content(stored.as_ref()), Some(Content::Structured(json)));
    }

    #[test]
    fn bytes_round_trip(bytes in prop::collection::vec(any::<u8>(), 0..32)) {
        let content = Content::Bytes(bytes);
        prop_assert_eq!(round_trip(&content), Some(content));
    }

    #[test]
    fn owned_encoding_is_the_borrowed_one(
        content in prop_oneof![
            any_text().prop_map(Content::Text),
            any_structured().prop_map(Content::Structured),
            any::<i64>().prop_map(Content::Integer),
            any::<f64>().prop_map(Content::Real),
            any::<bool>().prop_map(Content::Bool),
            prop::collection::vec(any::<u8>(), 0..8).prop_map(Content::Bytes),
        ]
    ) {
        prop_assert_eq!(StoredValue::from(content.clone()), encode_content(&content));
    }

    /// What the export writes decoded imports back to the same stored value.
    #[test]
    fn export_json_gives_back_the_stored_value(stored in any_stored()) {
        if let Some(json) = content_to_json(stored.as_ref()) {
            prop_assert_eq!(content_from_json(json), Some(stored));
        }
    }

    #[test]
    fn structured_content_exports_decoded(json in any_structured()) {
        let stored = StoredValue::Text(structured_content_text(&json));
        prop_assert_eq!(content_to_json(stored.as_ref()), Some(json));
    }

    #[test]
    fn tool_calls_round_trip(calls in prop::collection::vec(any_json(), 1..4)) {
        let calls = Value::Array(calls);
        let stored = encode_tool_calls(Some(&calls));
        prop_assert_eq!(stored.count, calls.as_array().map_or(0, Vec::len) as i64);
        let text = stored.text.expect("a non-empty list is truthy");
        prop_assert_eq!(&text, &pyjson::to_string(&calls));
        prop_assert_eq!(decode_tool_calls(StoredValueRef::Text(text.as_bytes())), Some(calls));
    }

    /// Calls given as their JSON text are stored as if given as the value
    /// (a string given as the value is itself parsed as JSON text).
    #[test]
    fn tool_calls_given_as_text_are_stored_as_the_value(
        calls in any_json().prop_filter("not a string", |v| !v.is_string())
    ) {
        let as_text = Value::String(pyjson::to_string(&calls));
        prop_assert_eq!(encode_tool_calls(Some(&as_text)), encode_tool_calls(Some(&calls)));
    }
}

#[test]
fn content_encodings_of_the_spec() {
    // api.md §4.2.
    assert_eq!(
        encode_content(&Content::Structured(
            json!([{"type": "text", "text": "look"}])
        )),
        StoredValue::Text("\u{0}json:[{\"type\": \"text\", \"text\": \"look\"}]".to_owned())
    );
    assert_eq!(
        encode_content(&Content::Text(String::new())),
        StoredValue::Text(String::new())
    );
    assert_eq!(
        encode_content(&Content::Integer(42)),
        StoredValue::Integer(42)
    );
    assert_eq!(encode_content(&Content::Real(4.5)), StoredValue::Real(4.5));
    assert_eq!(
        encode_content(&Content::Bool(true)),
        StoredValue::Integer(1)
    );
    assert_eq!(
        encode_content(&Content::Bool(false)),
        StoredValue::Integer(0)
    );
    assert_eq!(
        encode_content(&Content::Bytes(vec![0, 255])),
        StoredValue::Blob(vec![0, 255])
    );
    assert_eq!(Content::JSON_PREFIX, CONTENT_JSON_PREFIX);
}

#[test]
fn readers_decode_leniently() {
    let text = |t: &'static str| decode_content(StoredValueRef::Text(t.as_bytes()));
    assert_eq!(decode_content(StoredValueRef::Null), None);
    // Invalid legacy JSON after the prefix: the raw text.
    assert_eq!(
        text("\u{0}json:[{\"a\": "),
        Some(Content::Text("\u{0}json:[{\"a\": ".to_owned()))
    );
    // Compact JSON (other writers) and JSON that is not a list or an object.
    assert_eq!(
        text("\u{0}json:[1,2]"),
        Some(Content::Structured(json!([1, 2])))
    );
    assert_eq!(
        text("\u{0}json:\"s\""),
        Some(Content::Structured(json!("s")))
    );
    // Other storage classes: numbers as their text, BLOBs as bytes.
    assert_eq!(
        decode_content(StoredValueRef::Integer(42)),
        Some(Content::Text("42".to_owned()))
    );
    assert_eq!(
        decode_content(StoredValueRef::Real(4.5)),
        Some(Content::Text("4.5".to_owned()))
    );
    assert_eq!(
        decode_content(StoredValueRef::Blob(b"\0json:[]")),
        Some(Content::Bytes(b"\0json:[]".to_vec()))
    );
    // Invalid UTF-8 is replaced, never refused.
    assert_eq!(
        decode_content(StoredValueRef::Text(b"a\xffb")),
        Some(Content::Text("a\u{fffd}b".to_owned()))
    );
}

#[test]
fn export_decodes_only_what_imports_back_exactly() {
    let text = |t: &'static str| content_to_json(StoredValueRef::Text(t.as_bytes()));
    assert_eq!(content_to_json(StoredValueRef::Null), Some(Value::Null));
    assert_eq!(text("plain"), Some(json!("plain")));
    assert_eq!(text("\u{0}json:[1, 2]"), Some(json!([1, 2])));
    // Compact JSON would be re-encoded with spaces; a JSON string is not
    // structured content: both stay text.
    assert_eq!(text("\u{0}json:[1,2]"), Some(json!("\u{0}json:[1,2]")));
    assert_eq!(text("\u{0}json:\"s\""), Some(json!("\u{0}json:\"s\"")));
    assert_eq!(text("\u{0}json:["), Some(json!("\u{0}json:[")));
    for plain in [
        StoredValueRef::Integer(1),
        StoredValueRef::Real(1.5),
        StoredValueRef::Blob(b"x"),
        StoredValueRef::Text(b"\xff"),
    ] {
        assert_eq!(content_to_json(plain), None, "{plain:?}");
    }
    assert_eq!(content_from_json(json!(1)), None);
    assert_eq!(content_from_json(json!(true)), None);
}

#[test]
fn tool_call_encodings_of_the_spec() {
    // api.md §4.2 and §4.3.
    let encode = |v: Value| encode_tool_calls(Some(&v));
    let stored = |text: Option<&str>, count| StoredToolCalls {
        text: text.map(str::to_owned),
        count,
    };
    assert_eq!(
        encode(json!("[{\"id\":\"c9\"}]")),
        stored(Some("[{\"id\": \"c9\"}]"), 1)
    );
    assert_eq!(encode(json!("not json")), stored(None, 0));
    assert_eq!(encode(json!("null")), stored(None, 0));
    assert_eq!(encode(json!([])), stored(None, 0));
    assert_eq!(encode(json!({})), stored(None, 1));
    assert_eq!(encode(json!("{}")), stored(None, 1));
    assert_eq!(
        encode(json!({"id": "solo"})),
        stored(Some("{\"id\": \"solo\"}"), 1)
    );
    assert_eq!(encode(Value::Null), stored(None, 0));
    assert_eq!(encode_tool_calls(None), stored(None, 0));
    // Text is re-serialised from text: large integers stay exact.
    assert_eq!(
        encode(json!("[123456789012345678901234567890]")),
        stored(Some("[123456789012345678901234567890]"), 1)
    );
}

#[test]
fn tool_calls_decode_leniently() {
    assert_eq!(decode_tool_calls(StoredValueRef::Null), None);
    assert_eq!(
        decode_tool_calls(StoredValueRef::Text(b"")),
        Some(json!(""))
    );
    assert_eq!(
        decode_tool_calls(StoredValueRef::Text(b"not json")),
        Some(json!([]))
    );
    assert_eq!(
        decode_tool_calls(StoredValueRef::Text(b"[{\"id\": \"c9\"}]")),
        Some(json!([{"id": "c9"}]))
    );
    assert_eq!(
        decode_tool_calls(StoredValueRef::Integer(3)),
        Some(json!(3))
    );
}

#[test]
fn json_fields_are_stored_when_truthy() {
    assert_eq!(encode_json_field(None), None);
    for falsy in [
        json!(null),
        json!({}),
        json!([]),
        json!(""),
        json!(0),
        json!(false),
    ] {
        assert_eq!(encode_json_field(Some(&falsy)), None, "{falsy}");
    }
    assert_eq!(
        encode_json_field(Some(&json!({"summary": "é"}))),
        Some("{\"summary\": \"\\u00e9\"}".to_owned())
    );
}
