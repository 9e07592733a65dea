//! Calls by the original's method names (`hermes_state::by_name`): the
//! surface a Python binding and the replay of the original's traces share.
//! The replay proves the answers equal to the original's; these tests pin
//! the surface's own rules.

use hermes_state::by_name::{self, CallError, SIGNATURES};
use serde_json::{Map, Value, json};

use crate::common::Store;

fn kwargs(value: Value) -> Map<String, Value> {
    value
        .as_object()
        .expect("keyword arguments are an object")
        .clone()
}

#[test]
fn a_call_answers_with_the_originals_values() {
    let store = Store::new();
    let created = by_name::call(
        &store.db,
        "create_session",
        &kwargs(json!({"session_id": "s1", "source": "cli", "model": "m"})),
    )
    .expect("create_session");
    assert_eq!(created, json!("s1"));
    let appended = by_name::call(
        &store.db,
        "append_message",
        &kwargs(json!({"session_id": "s1", "role": "user", "content": "hello"})),
    )
    .expect("append_message");
    assert!(appended.is_i64(), "a message id is an int: {appended}");
    let session = by_name::call(
        &store.db,
        "get_session",
        &kwargs(json!({"session_id": "s1"})),
    )
    .expect("get_session");
    assert_eq!(session["message_count"], json!(1));
    assert_eq!(session["model"], json!("m"));
    let missing = by_name::call(
        &store.db,
        "get_session",
        &kwargs(json!({"session_id": "no"})),
    )
    .expect("get_session of an unknown id");
    assert_eq!(missing, Value::Null, "the original answers None");
}

#[test]
fn arguments_the_original_refuses_are_its_type_errors() {
    let store = Store::new();
    let cases = [
        (
            "get_session",
            json!({"session_id": "s", "extra": 1}),
            "unexpected keyword argument 'extra'",
        ),
        (
            "get_session",
            json!({}),
            "missing required argument: 'session_id'",
        ),
        ("get_session", json!({"session_id": 5}), "got 'int'"),
    ];
    for (op, args, text) in cases {
        match by_name::call(&store.db, op, &kwargs(args.clone())) {
            Err(error @ CallError::Boundary { .. }) => {
                assert_eq!(error.trace_kind(), Some("invalid.argument"), "{op} {args}");
                assert!(error.to_string().contains(text), "{op} {args}: {error}");
            }
            other => panic!("{op} {args}: expected a TypeError, got {other:?}"),
        }
    }
}

#[test]
fn an_unknown_method_is_named_in_the_error_and_nothing_is_written() {
    let store = Store::new();
    let before = store.count("SELECT COUNT(*) FROM sessions", []);
    match by_name::call(&store.db, "drop_everything", &Map::new()) {
        Err(error @ CallError::UnknownOperation(_)) => {
            assert!(error.to_string().contains("'drop_everything'"), "{error}");
        }
        other => panic!("expected UnknownOperation, got {other:?}"),
    }
    assert_eq!(store.count("SELECT COUNT(*) FROM sessions", []), before);
}

#[test]
fn a_library_failure_keeps_the_originals_class() {
    let store = Store::new();
    let error = by_name::call(
        &store.db,
        "append_message",
        &kwargs(json!({"session_id": "nobody", "role": "user", "content": "x"})),
    )
    .expect_err("a message for an unknown session");
    assert_eq!(error.trace_kind(), Some("integrity.foreign_key"));
}

#[test]
fn the_signature_table_names_each_method_once_with_self_left_out() {
    let mut names: Vec<&str> = SIGNATURES.iter().map(|signature| signature.name).collect();
    let total = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), total, "a method listed twice");
    assert_eq!(
        total, 119,
        "the original's SessionDB has 119 public methods at schema 23"
    );
    for signature in SIGNATURES {
        assert!(
            !signature.parameters.starts_with("self"),
            "{}",
            signature.name
        );
    }
    let create = by_name::signature("create_session").expect("create_session");
    assert!(
        create
            .parameters
            .starts_with("session_id, source, **kwargs"),
        "{}",
        create.parameters
    );
    assert!(by_name::signature("sanitize_title").is_some_and(|s| s.is_static));
}

/// Every public method of the original's `SessionDB` is callable by name:
/// called with no arguments on a fresh store, each answers (a value, its
/// `TypeError` for a missing argument, or a failure of its own), never
/// "no such method" and never a panic.
#[test]
fn every_method_of_the_original_is_known_by_name() {
    for signature in SIGNATURES {
        let store = Store::new();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            by_name::call(&store.db, signature.name, &Map::new())
        }))
        .unwrap_or_else(|_| panic!("{} panicked", signature.name));
        assert!(
            !matches!(outcome, Err(CallError::UnknownOperation(_))),
            "{} is not known by name",
            signature.name
        );
    }
}

/// `create_session` binds its keywords straight into TEXT columns, as the
/// original's `sqlite3` does: a number is stored as SQLite's TEXT affinity
/// writes it; a list cannot be bound.
#[test]
fn create_sessions_keywords_take_numbers_as_text_columns_do() {
    let store = Store::new();
    let cases = [
        (json!(9), "9"),
        (json!(true), "1"),
        (json!(2.5), "2.5"),
        (json!(9.0), "9.0"),
        (json!(0.1), "0.1"),
        (json!(1.0 / 3.0), "0.333333333333333"),
        (json!(1e20), "1.0e+20"),
    ];
    for (i, (value, stored)) in cases.iter().enumerate() {
        let id = format!("s{i}");
        by_name::call(
            &store.db,
            "create_session",
            &kwargs(json!({"session_id": id, "source": "cli", "user_id": value})),
        )
        .unwrap_or_else(|error| panic!("{value}: {error}"));
        let row = store.row(
            "SELECT user_id, typeof(user_id) FROM sessions WHERE id = ?1",
            [&id],
        );
        assert_eq!(
            format!("{:?}", row),
            format!("{:?}", [crate::common::t(stored), crate::common::t("text")]),
            "{value}"
        );
    }
    let refused = by_name::call(
        &store.db,
        "create_session",
        &kwargs(json!({"session_id": "bad", "source": "cli", "user_id": [1]})),
    );
    assert!(refused.is_err(), "a list cannot be bound");
    assert_eq!(
        store.count("SELECT COUNT(*) FROM sessions WHERE id = 'bad'", []),
        0
    );
}
