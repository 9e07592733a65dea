//! What `create_session`, `ensure_session`, `end_session` and
//! `reopen_session` store (`api.md` §2.1–2.4), through the seam: every
//! column and its default, the NULL columns a later create fills, what a
//! child inherits, the parent ids the original accepts, ends and reopens.

use hermes_state_types::{ErrorKind, NewSession};
use serde_json::{Value, json};

use super::raw::{int, real};
use super::{Backend, TestStore};

/// Columns of one session, raw, as one JSON array.
fn row(b: &TestStore, columns: &str, id: &str) -> Value {
    let sql = format!(
        "SELECT {columns} FROM sessions WHERE id = {}",
        super::text(id)
    );
    Value::from(b.query(&sql).remove(0))
}

fn sessions(b: &TestStore) -> i64 {
    int(&b.query("SELECT count(*) FROM sessions")[0][0])
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Every column of a created session (the given fields, the defaults:
/// counters 0, no cost until the first token update, `started_at` the
/// clock's time with its fraction, as a REAL), and the row `get_session`
/// reads (`model_config` as its stored text, no extra columns).
pub fn a_created_session_stores_every_field_and_default_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    b.create_session(&NewSession::new("p", "cli")).unwrap();
    let before = now();
    let returned = b
        .create_session(
            &NewSession::new("s1", "telegram")
                .model("gpt-x")
                .model_config(json!({"temperature": 0.5, "name": "é"}))
                .system_prompt("You are helpful.")
                .user_id("u1")
                .session_key("k1")
                .chat_id("c1")
                .chat_type("dm")
                .thread_id("t1")
                .parent_session_id("p")
                .cwd("/w")
                .profile_name("prof")
                .git_repo_root("/w"),
        )
        .unwrap();
    let after = now();
    assert_eq!(returned, "s1", "{n}: the id unchanged");
    let config = r#"{"temperature": 0.5, "name": "\u00e9"}"#;
    let all_but_started_at = "id, source, user_id, session_key, chat_id, chat_type, thread_id, \
        display_name, origin_json, expiry_finalized, model, model_config, system_prompt, \
        parent_session_id, ended_at, end_reason, message_count, tool_call_count, input_tokens, \
        output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cwd, git_branch, \
        git_repo_root, billing_provider, billing_base_url, billing_mode, estimated_cost_usd, \
        actual_cost_usd, cost_status, cost_source, pricing_version, title, api_call_count, \
        handoff_state, handoff_platform, handoff_error, compression_failure_cooldown_until, \
        compression_failure_error, compression_fallback_streak, compression_ineffective_count, \
        profile_name, rewind_count, archived, pinned";
    let expected = json!([
        "s1",
        "telegram",
        "u1",
        "k1",
        "c1",
        "dm",
        "t1",
        null,
        null,
        0,
        "gpt-x",
        config,
        "You are helpful.",
        "p",
        null,
        null,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        "/w",
        null,
        "/w",
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        null,
        0,
        null,
        null,
        null,
        null,
        null,
        0,
        0,
        "prof",
        0,
        0,
        0
    ]);
    assert_eq!(row(&b, all_but_started_at, "s1"), expected, "{n}");
    let started = real(&row(&b, "started_at", "s1")[0]);
    assert!(
        (before - 0.001..=after + 0.001).contains(&started),
        "{n}: started_at {started} is now ({before}..{after})"
    );
    assert!(started.fract() != 0.0, "{n}: {started} keeps its fraction");

    let session = b.get_session("s1").unwrap().unwrap();
    let read = (
        session.id.as_str(),
        session.source.as_str(),
        session.model_config.as_deref(),
        session.started_at,
        session.parent_session_id.as_deref(),
        session.estimated_cost_usd,
        session.message_count,
    );
    let want = (
        "s1",
        "telegram",
        Some(config),
        started,
        Some("p"),
        None,
        Some(0),
    );
    assert_eq!(read, want, "{n}");
    assert!(
        session.extra.is_empty(),
        "{n}: a fresh store has no extra columns"
    );
    assert_eq!(b.get_session("nope").unwrap(), None, "{n}");
}

/// Sets one of the fields a later create fills, by column name.
fn with_field(session: NewSession, column: &str, value: &str) -> NewSession {
    match column {
        "model" => session.model(value),
        "model_config" => session.model_config(json!({ "v": value })),
        "system_prompt" => session.system_prompt(value),
        "session_key" => session.session_key(value),
        "chat_id" => session.chat_id(value),
        "chat_type" => session.chat_type(value),
        "thread_id" => session.thread_id(value),
        "parent_session_id" => session.parent_session_id(value),
        "cwd" => session.cwd(value),
        "profile_name" => session.profile_name(value),
        "git_repo_root" => session.git_repo_root(value),
        other => panic!("unknown column {other}"),
    }
}

/// A second create of an id fills the row's NULL columns and keeps the
/// others; it never changes `source`, `user_id` (even a NULL one) or
/// `started_at`, and answers the id.
pub fn a_second_create_fills_only_null_columns_never_source_user_or_start_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let n = b.name();
    // Parents the parent_session_id column can point at.
    for id in ["first", "second"] {
        b.create_session(&NewSession::new(id, "cli")).unwrap();
    }
    for column in [
        "model",
        "model_config",
        "system_prompt",
        "session_key",
        "chat_id",
        "chat_type",
        "thread_id",
        "parent_session_id",
        "cwd",
        "profile_name",
        "git_repo_root",
    ] {
        let stored = |value: &str| match column {
            "model_config" => json!([format!(r#"{{"v": "{value}"}}"#)]),
            _ => json!([value]),
        };
        let create = |id: &str, value: Option<&str>| {
            let session = NewSession::new(id, "cli");
            let session = value.map_or(session.clone(), |v| with_field(session, column, v));
            b.create_session(&session).unwrap();
        };
        let (empty, full) = (format!("empty-{column}"), format!("full-{column}"));
        create(&empty, None);
        create(&empty, Some("second"));
        let got = row(&b, column, &empty);
        assert_eq!(got, stored("second"), "{n}: {column}: NULL is filled");
        create(&full, Some("first"));
        create(&full, Some("second"));
        let got = row(&b, column, &full);
        assert_eq!(got, stored("first"), "{n}: {column}: the first value stays");
    }

    b.create_session(&NewSession::new("a", "cli")).unwrap();
    b.create_session(&NewSession::new("b", "cli").user_id("u1"))
        .unwrap();
    let started = |id| real(&row(&b, "started_at", id)[0]);
    let (started_a, started_b) = (started("a"), started("b"));
    std::thread::sleep(std::time::Duration::from_millis(5));
    for id in ["a", "b"] {
        let again = NewSession::new(id, "telegram").user_id("u2").model("m");
        assert_eq!(b.create_session(&again).unwrap(), id, "{n}");
    }
    let columns = "source, user_id, model";
    assert_eq!(row(&b, columns, "a"), json!(["cli", null, "m"]), "{n}");
    assert_eq!(row(&b, columns, "b"), json!(["cli", "u1", "m"]), "{n}");
    assert_eq!((started("a"), started("b")), (started_a, started_b), "{n}");
}

/// `model_config` is stored as Python's `json.dumps` text (key order
/// kept, non-ASCII escaped, floats as Python writes them); a falsy config
/// is NULL.
pub fn model_config_is_pythons_json_text_and_a_falsy_one_null_alike(backend: &dyn Backend) {
    let b = backend.open();
    let cases: Vec<(Value, Option<&str>)> = vec![
        (
            json!({"temperature": 0.5, "name": "é"}),
            Some(r#"{"temperature": 0.5, "name": "\u00e9"}"#),
        ),
        (json!([1, 2]), Some("[1, 2]")),
        (json!({"a": [1, 2]}), Some(r#"{"a": [1, 2]}"#)),
        (json!("abc"), Some(r#""abc""#)),
        (json!({"b": 1, "a": 2}), Some(r#"{"b": 1, "a": 2}"#)),
        (
            json!({"x": 1e-5, "y": 100.0}),
            Some(r#"{"x": 1e-05, "y": 100.0}"#),
        ),
        (json!("😀/"), Some(r#""\ud83d\ude00/""#)),
        (json!(1), Some("1")),
        (json!(true), Some("true")),
        (json!({}), None),
        (json!([]), None),
        (json!(""), None),
        (json!(0), None),
        (json!(0.0), None),
        (json!(false), None),
        (Value::Null, None),
    ];
    for (i, (config, expected)) in cases.into_iter().enumerate() {
        let id = format!("s{i}");
        b.create_session(&NewSession::new(&id, "cli").model_config(config.clone()))
            .unwrap();
        let got = row(&b, "model_config", &id);
        assert_eq!(got, json!([expected]), "{}: {config}", b.name());
    }
}

/// `api.md` §2.1's measured example: a child takes the workspace fields of
/// its parent, and the gateway fields too (the two the contract cannot
/// set written raw) only from a parent ended by compression; a value the
/// child gives wins.
pub fn a_child_inherits_workspace_fields_and_gateway_ones_only_after_a_compression_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let n = b.name();
    let parent = NewSession::new("s1", "telegram")
        .cwd("/w")
        .git_repo_root("/w")
        .profile_name("prof")
        .user_id("u1")
        .session_key("k1")
        .chat_id("c1")
        .chat_type("dm")
        .thread_id("t1");
    b.create_session(&parent).unwrap();
    b.exec(
        "UPDATE sessions SET git_branch = 'main', display_name = 'Dee', \
         origin_json = '{\"o\": 1}' WHERE id = 's1'",
    );
    let fields = "parent_session_id, cwd, git_branch, git_repo_root, profile_name, user_id, \
        session_key, chat_id, chat_type, thread_id, display_name, origin_json, source";
    let child = |id: &str, parent: &str| NewSession::new(id, "cli").parent_session_id(parent);

    b.create_session(&child("c1", "s1")).unwrap();
    let live = json!([
        "s1", "/w", "main", "/w", "prof", null, null, null, null, null, null, null, "cli"
    ]);
    assert_eq!(row(&b, fields, "c1"), live, "{n}: a live parent");

    b.end_session("s1", "compression").unwrap();
    b.create_session(&child("c2", "s1").cwd("/other")).unwrap();
    let compressed = json!([
        "s1",
        "/other",
        "main",
        "/w",
        "prof",
        "u1",
        "k1",
        "c1",
        "dm",
        "t1",
        "Dee",
        r#"{"o": 1}"#,
        "cli"
    ]);
    assert_eq!(
        row(&b, fields, "c2"),
        compressed,
        "{n}: a compressed parent"
    );
    b.create_session(&child("c3", "s1").user_id("own").chat_id("own-chat"))
        .unwrap();
    let own = row(&b, "user_id, session_key, chat_id", "c3");
    assert_eq!(own, json!(["own", "k1", "own-chat"]), "{n}");

    // Another end reason is not a compression: workspace fields only.
    b.create_session(&NewSession::new("s2", "telegram").cwd("/x").user_id("u9"))
        .unwrap();
    b.end_session("s2", "user_exit").unwrap();
    b.create_session(&child("c4", "s2")).unwrap();
    assert_eq!(row(&b, "cwd, user_id", "c4"), json!(["/x", null]), "{n}");
}

/// A missing parent is refused (kind `NotFound`) and writes nothing; an
/// empty id is an id like any other; an empty parent id is falsy (no
/// inheritance) but still a foreign key; as the original, a second create
/// naming a missing parent keeps the row's parent, and a session may name
/// itself as parent.
pub fn parent_ids_and_empty_ids_are_taken_as_the_original_takes_them_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    let orphan = NewSession::new("orphan", "cli")
        .parent_session_id("nope")
        .cwd("/w");
    let error = b.create_session(&orphan).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{n}: {error}");
    let error = b
        .create_session(&NewSession::new("c", "cli").parent_session_id(""))
        .unwrap_err();
    assert_eq!(sessions(&b), 0, "{n}: nothing written ({error})");

    let returned = b
        .create_session(&NewSession::new("", "cli").model("m"))
        .unwrap();
    assert_eq!(returned, "", "{n}");
    assert_eq!(
        row(&b, "id, source, model", ""),
        json!(["", "cli", "m"]),
        "{n}"
    );
    let empty = b.get_session("").unwrap().unwrap();
    assert_eq!(empty.model.as_deref(), Some("m"), "{n}");
    b.create_session(&NewSession::new("child", "cli").parent_session_id(""))
        .unwrap();
    let link = row(&b, "parent_session_id", "child");
    assert_eq!(link, json!([""]), "{n}: the link is stored");

    b.create_session(&NewSession::new("p", "cli")).unwrap();
    b.create_session(&NewSession::new("c", "cli").parent_session_id("p"))
        .unwrap();
    let again = NewSession::new("c", "cli")
        .parent_session_id("gone")
        .model("m");
    b.create_session(&again).unwrap();
    let kept = row(&b, "parent_session_id, model", "c");
    assert_eq!(kept, json!(["p", "m"]), "{n}");
    b.create_session(&NewSession::new("x", "cli").parent_session_id("x"))
        .unwrap();
    assert_eq!(row(&b, "parent_session_id", "x"), json!(["x"]), "{n}");
    assert_eq!(sessions(&b), 5, "{n}");
}

/// `ensure_session` creates a session with its source and no model, and
/// later fills only a NULL model.
pub fn ensure_session_creates_with_its_source_and_fills_a_null_model_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    assert_eq!(b.ensure_session("e", "unknown", None).unwrap(), "e", "{n}");
    assert_eq!(
        row(&b, "source, model", "e"),
        json!(["unknown", null]),
        "{n}"
    );
    b.ensure_session("e", "cli", Some("m1")).unwrap();
    b.ensure_session("e", "cli", Some("m2")).unwrap();
    assert_eq!(
        row(&b, "source, model", "e"),
        json!(["unknown", "m1"]),
        "{n}"
    );
}

/// The first end wins (its time and reason stay); a reopen clears both,
/// so a later end applies; unknown ids are no error and create nothing.
pub fn the_first_end_wins_until_a_reopen_alike(backend: &dyn Backend) {
    let b = backend.open();
    let n = b.name();
    b.create_session(&NewSession::new("s", "cli")).unwrap();
    let end = || row(&b, "ended_at, end_reason", "s");
    b.end_session("s", "user_exit").unwrap();
    let first = end();
    let ended = real(&first[0]);
    assert_eq!(first[1], "user_exit", "{n}");
    std::thread::sleep(std::time::Duration::from_millis(5));
    b.end_session("s", "other").unwrap();
    assert_eq!(end(), first, "{n}: the first end wins");
    b.reopen_session("s").unwrap();
    assert_eq!(end(), json!([null, null]), "{n}");
    b.end_session("s", "other").unwrap();
    let again = end();
    assert_eq!(
        again[1], "other",
        "{n}: after a reopen the new reason applies"
    );
    assert!(real(&again[0]) > ended, "{n}");
    b.end_session("nope", "x").unwrap();
    b.reopen_session("nope").unwrap();
    assert_eq!(sessions(&b), 1, "{n}");
}
