//! `create_session`, `ensure_session`, `end_session`, `reopen_session`,
//! `get_session` (`api.md` §2.1–2.4).

use hermes_state::rusqlite::types::Value as Sql;
use hermes_state::serde_json::{Value, json};
use hermes_state::{ErrorKind, NewSession};

use crate::common::{NULL, Store, assert_kind, i, t, unix_now};
use hermes_state_core::store::Sessions;

/// Every column of `sessions` except `started_at`, in table order.
const ALL_BUT_STARTED_AT: &str = "SELECT id, source, user_id, session_key, chat_id, chat_type, thread_id, display_name, origin_json, expiry_finalized, model, model_config, system_prompt, parent_session_id, ended_at, end_reason, message_count, tool_call_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cwd, git_branch, git_repo_root, billing_provider, billing_base_url, billing_mode, estimated_cost_usd, actual_cost_usd, cost_status, cost_source, pricing_version, title, api_call_count, handoff_state, handoff_platform, handoff_error, compression_failure_cooldown_until, compression_failure_error, compression_fallback_streak, compression_ineffective_count, profile_name, rewind_count, archived, pinned FROM sessions WHERE id = ?1";

fn started_at(store: &Store, id: &str) -> f64 {
    match store
        .row("SELECT started_at FROM sessions WHERE id = ?1", [id])
        .as_slice()
    {
        [Sql::Real(f)] => *f,
        other => panic!("started_at of {id:?} is not a REAL: {other:?}"),
    }
}

#[test]
fn create_session_stores_every_field_and_defaults() {
    let store = Store::new();
    store.session("p");
    let before = unix_now();
    let returned = store
        .db
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
        .expect("create_session");
    let after = unix_now();
    assert_eq!(returned, "s1", "create_session returns the id unchanged");

    let expected = vec![
        t("s1"),
        t("telegram"),
        t("u1"),
        t("k1"),
        t("c1"),
        t("dm"),
        t("t1"),
        NULL, // display_name
        NULL, // origin_json
        i(0), // expiry_finalized
        t("gpt-x"),
        t(r#"{"temperature": 0.5, "name": "\u00e9"}"#),
        t("You are helpful."),
        t("p"),
        NULL, // ended_at
        NULL, // end_reason
        i(0),
        i(0),
        i(0),
        i(0),
        i(0),
        i(0),
        i(0),
        t("/w"),
        NULL, // git_branch
        t("/w"),
        NULL,
        NULL,
        NULL,
        NULL, // estimated_cost_usd: NULL until the first token update
        NULL,
        NULL,
        NULL,
        NULL,
        NULL, // title
        i(0), // api_call_count
        NULL,
        NULL,
        NULL,
        NULL,
        NULL,
        i(0),
        i(0),
        t("prof"),
        i(0),
        i(0),
        i(0),
    ];
    assert_eq!(store.row(ALL_BUT_STARTED_AT, ["s1"]), expected);
    let started = started_at(&store, "s1");
    assert!(
        (before - 0.001..=after + 0.001).contains(&started),
        "started_at {started} is now ({before}..{after})"
    );
    assert!(
        started.fract() != 0.0,
        "started_at keeps sub-second precision: {started}"
    );

    let session = store.db.get_session("s1").expect("get").expect("exists");
    assert_eq!(session.id, "s1");
    assert_eq!(session.source, "telegram");
    assert_eq!(
        session.model_config.as_deref(),
        Some(r#"{"temperature": 0.5, "name": "\u00e9"}"#),
        "get_session returns model_config as the raw JSON text"
    );
    assert_eq!(session.started_at, started);
    assert_eq!(session.parent_session_id.as_deref(), Some("p"));
    assert_eq!(session.estimated_cost_usd, None);
    assert_eq!(session.message_count, Some(0));
    assert!(
        session.extra.is_empty(),
        "a fresh v23 file has no extra columns"
    );
    assert_eq!(store.db.get_session("nope").expect("get"), None);
}

/// Sets one of the COALESCE-filled fields of `create_session` by column name.
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

fn stored_text(value: &str, column: &str) -> Sql {
    if column == "model_config" {
        t(&format!(r#"{{"v": "{value}"}}"#))
    } else {
        t(value)
    }
}

#[test]
fn second_create_fills_only_null_columns() {
    const FILLABLE: [&str; 11] = [
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
    ];
    let store = Store::new();
    // Parents the parent_session_id case can point at.
    store.session("first");
    store.session("second");
    for column in FILLABLE {
        let sql = format!("SELECT {column} FROM sessions WHERE id = ?1");
        // A NULL column is filled by a later create.
        let empty = format!("empty-{column}");
        store
            .db
            .create_session(&NewSession::new(&empty, "cli"))
            .expect("create");
        store
            .db
            .create_session(&with_field(
                NewSession::new(&empty, "cli"),
                column,
                "second",
            ))
            .expect("second create");
        assert_eq!(
            store.row(&sql, [&empty]),
            vec![stored_text("second", column)],
            "{column}: a NULL column is filled by the second create"
        );
        // A non-NULL column is never overwritten.
        let full = format!("full-{column}");
        store
            .db
            .create_session(&with_field(NewSession::new(&full, "cli"), column, "first"))
            .expect("create");
        store
            .db
            .create_session(&with_field(NewSession::new(&full, "cli"), column, "second"))
            .expect("second create");
        assert_eq!(
            store.row(&sql, [&full]),
            vec![stored_text("first", column)],
            "{column}: a non-NULL column keeps its first value"
        );
    }
}

#[test]
fn second_create_never_changes_source_user_id_or_started_at() {
    let store = Store::new();
    // user_id NULL at first: even then a later create does not fill it.
    store
        .db
        .create_session(&NewSession::new("a", "cli"))
        .expect("create");
    store
        .db
        .create_session(&NewSession::new("b", "cli").user_id("u1"))
        .expect("create");
    let started_a = started_at(&store, "a");
    let started_b = started_at(&store, "b");
    std::thread::sleep(std::time::Duration::from_millis(5));
    for id in ["a", "b"] {
        let returned = store
            .db
            .create_session(&NewSession::new(id, "telegram").user_id("u2").model("m"))
            .expect("second create");
        assert_eq!(returned, id);
    }
    assert_eq!(
        store.row(
            "SELECT source, user_id, model FROM sessions WHERE id = 'a'",
            []
        ),
        vec![t("cli"), NULL, t("m")]
    );
    assert_eq!(
        store.row(
            "SELECT source, user_id, model FROM sessions WHERE id = 'b'",
            []
        ),
        vec![t("cli"), t("u1"), t("m")]
    );
    assert_eq!(started_at(&store, "a"), started_a);
    assert_eq!(started_at(&store, "b"), started_b);
    assert_eq!(store.count("SELECT count(*) FROM sessions", []), 2);
}

#[test]
fn model_config_is_python_json_text_and_falsy_configs_are_null() {
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
    let store = Store::new();
    for (n, (config, expected)) in cases.into_iter().enumerate() {
        let id = format!("s{n}");
        store
            .db
            .create_session(&NewSession::new(&id, "cli").model_config(config.clone()))
            .expect("create");
        assert_eq!(
            store.row("SELECT model_config FROM sessions WHERE id = ?1", [&id]),
            vec![expected.map_or(NULL, t)],
            "model_config {config}"
        );
    }
}

/// Parent inheritance, the measured example of §2.1, plus the two gateway
/// fields the API cannot set (display_name, origin_json), written raw.
#[test]
fn child_inherits_workspace_fields_and_gateway_fields_only_from_compression_parent() {
    let store = Store::new();
    store
        .db
        .create_session(
            &NewSession::new("s1", "telegram")
                .cwd("/w")
                .git_repo_root("/w")
                .profile_name("prof")
                .user_id("u1")
                .session_key("k1")
                .chat_id("c1")
                .chat_type("dm")
                .thread_id("t1"),
        )
        .expect("parent");
    store.exec(
        "UPDATE sessions SET git_branch = 'main', display_name = 'Dee', origin_json = '{\"o\": 1}' WHERE id = 's1'",
        [],
    );
    const FIELDS: &str = "SELECT parent_session_id, cwd, git_branch, git_repo_root, profile_name, user_id, session_key, chat_id, chat_type, thread_id, display_name, origin_json, source FROM sessions WHERE id = ?1";

    // Live parent: workspace fields only.
    store
        .db
        .create_session(&NewSession::new("c1", "cli").parent_session_id("s1"))
        .expect("child of a live parent");
    assert_eq!(
        store.row(FIELDS, ["c1"]),
        vec![
            t("s1"),
            t("/w"),
            t("main"),
            t("/w"),
            t("prof"),
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
            t("cli"),
        ]
    );

    // Compression-ended parent: gateway fields too; an explicit child value wins.
    store.db.end_session("s1", "compression").expect("end");
    store
        .db
        .create_session(
            &NewSession::new("c2", "cli")
                .parent_session_id("s1")
                .cwd("/other"),
        )
        .expect("child of a compression parent");
    assert_eq!(
        store.row(FIELDS, ["c2"]),
        vec![
            t("s1"),
            t("/other"),
            t("main"),
            t("/w"),
            t("prof"),
            t("u1"),
            t("k1"),
            t("c1"),
            t("dm"),
            t("t1"),
            t("Dee"),
            t(r#"{"o": 1}"#),
            t("cli"),
        ]
    );
    store
        .db
        .create_session(
            &NewSession::new("c3", "cli")
                .parent_session_id("s1")
                .user_id("own")
                .chat_id("own-chat"),
        )
        .expect("child with explicit gateway values");
    assert_eq!(
        store.row(
            "SELECT user_id, session_key, chat_id FROM sessions WHERE id = 'c3'",
            []
        ),
        vec![t("own"), t("k1"), t("own-chat")]
    );

    // Another end reason is not a compression: workspace fields only.
    store
        .db
        .create_session(&NewSession::new("s2", "telegram").cwd("/x").user_id("u9"))
        .expect("parent 2");
    store.db.end_session("s2", "user_exit").expect("end");
    store
        .db
        .create_session(&NewSession::new("c4", "cli").parent_session_id("s2"))
        .expect("child of an ended parent");
    assert_eq!(
        store.row("SELECT cwd, user_id FROM sessions WHERE id = 'c4'", []),
        vec![t("/x"), NULL]
    );
}

#[test]
fn missing_parent_is_not_found_and_writes_nothing() {
    let store = Store::new();
    store.session("other");
    let result = store.db.create_session(
        &NewSession::new("orphan", "cli")
            .parent_session_id("nope")
            .cwd("/w"),
    );
    assert_kind(result, ErrorKind::NotFound);
    assert_eq!(store.count("SELECT count(*) FROM sessions", []), 1);
    assert_eq!(
        store.count("SELECT count(*) FROM sessions WHERE id = 'orphan'", []),
        0
    );
    assert_eq!(store.db.get_session("orphan").expect("get"), None);
}

#[test]
fn empty_id_is_a_valid_session_id() {
    let store = Store::new();
    let returned = store
        .db
        .create_session(&NewSession::new("", "cli").model("m"))
        .expect("create with an empty id");
    assert_eq!(returned, "");
    assert_eq!(
        store.row("SELECT id, source, model FROM sessions", []),
        vec![t(""), t("cli"), t("m")]
    );
    let session = store.db.get_session("").expect("get").expect("exists");
    assert_eq!(session.model.as_deref(), Some("m"));
    // `''` as a parent id is falsy: no inheritance, but the link is stored.
    store
        .db
        .create_session(&NewSession::new("child", "cli").parent_session_id(""))
        .expect("child of ''");
    assert_eq!(
        store.row(
            "SELECT parent_session_id FROM sessions WHERE id = 'child'",
            []
        ),
        vec![t("")]
    );
}

#[test]
fn ensure_session_creates_with_source_and_fills_null_model() {
    let store = Store::new();
    assert_eq!(
        store
            .db
            .ensure_session("e", "unknown", None)
            .expect("ensure"),
        "e"
    );
    assert_eq!(
        store.row("SELECT source, model FROM sessions WHERE id = 'e'", []),
        vec![t("unknown"), NULL]
    );
    store
        .db
        .ensure_session("e", "cli", Some("m1"))
        .expect("ensure");
    store
        .db
        .ensure_session("e", "cli", Some("m2"))
        .expect("ensure");
    assert_eq!(
        store.row("SELECT source, model FROM sessions WHERE id = 'e'", []),
        vec![t("unknown"), t("m1")]
    );
}

#[test]
fn end_session_first_wins_and_reopen_lets_a_new_end_apply() {
    let store = Store::new();
    store.session("s");
    const END: &str = "SELECT ended_at, end_reason FROM sessions WHERE id = 's'";

    store.db.end_session("s", "user_exit").expect("end");
    let first = store.row(END, []);
    let [Sql::Real(ended), reason] = first.as_slice() else {
        panic!("ended_at is a REAL: {first:?}");
    };
    assert_eq!(reason, &t("user_exit"));
    let ended = *ended;

    std::thread::sleep(std::time::Duration::from_millis(5));
    store.db.end_session("s", "other").expect("second end");
    assert_eq!(
        store.row(END, []),
        vec![Sql::Real(ended), t("user_exit")],
        "the first end wins: reason and ended_at stay"
    );

    store.db.reopen_session("s").expect("reopen");
    assert_eq!(store.row(END, []), vec![NULL, NULL]);

    store
        .db
        .end_session("s", "other")
        .expect("end after reopen");
    let again = store.row(END, []);
    let [Sql::Real(ended_again), reason] = again.as_slice() else {
        panic!("ended_at is a REAL: {again:?}");
    };
    assert_eq!(reason, &t("other"), "after a reopen the new reason applies");
    assert!(*ended_again > ended);

    // Unknown ids: no error, nothing created.
    store.db.end_session("nope", "x").expect("unknown end");
    store.db.reopen_session("nope").expect("unknown reopen");
    assert_eq!(store.count("SELECT count(*) FROM sessions", []), 1);
}

/// An empty parent id is falsy (no inheritance) but still a foreign key: with
/// no session `''` the insert fails on the constraint and nothing is written.
#[test]
fn empty_parent_id_without_an_empty_session_fails_and_writes_nothing() {
    let store = Store::new();
    let result = store
        .db
        .create_session(&NewSession::new("c", "cli").parent_session_id(""));
    assert!(
        result.is_err(),
        "FOREIGN KEY constraint failed in the original"
    );
    assert_eq!(store.count("SELECT count(*) FROM sessions", []), 0);
}

/// §2.1 step 1 is an upsert whose `parent_session_id = COALESCE(existing,
/// new)`: when the row already has a parent, the new (missing) parent id is
/// never written, so SQLite's foreign key check passes and the original's
/// create succeeds (filling the other NULL columns). Checked with CPython's
/// sqlite3 on the same SQL. The port checks the parent before the upsert and
/// refuses with NotFound.
#[test]
fn second_create_with_a_missing_parent_keeps_the_existing_parent() {
    let store = Store::new();
    store.session("p");
    store
        .db
        .create_session(&NewSession::new("c", "cli").parent_session_id("p"))
        .expect("child");
    store
        .db
        .create_session(
            &NewSession::new("c", "cli")
                .parent_session_id("gone")
                .model("m"),
        )
        .expect("the original succeeds: the existing parent is kept");
    assert_eq!(
        store.row(
            "SELECT parent_session_id, model FROM sessions WHERE id = 'c'",
            []
        ),
        vec![t("p"), t("m")]
    );
}

/// A new session naming itself as parent satisfies the foreign key at the end
/// of the INSERT statement (the row is its own parent), so the original
/// creates it. The port looks the parent up before inserting and refuses.
#[test]
fn new_session_naming_itself_as_parent() {
    let store = Store::new();
    store
        .db
        .create_session(&NewSession::new("x", "cli").parent_session_id("x"))
        .expect("the original creates a self-parented row");
    assert_eq!(
        store.row("SELECT parent_session_id FROM sessions WHERE id = 'x'", []),
        vec![t("x")]
    );
}
