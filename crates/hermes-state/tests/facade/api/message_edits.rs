//! The related message writers and the other readers (`api.md` §4.5, §5.3):
//! `replace_messages`, `archive_and_compact`, `rewind_to_message`,
//! `restore_rewound`, `set_latest_user_api_content`,
//! `set_latest_matching_message_display_kind`, `get_messages_around`,
//! `list_recent_user_messages`, `has_platform_message_id`,
//! `has_archived_messages`: the stored message states, the session counters
//! and what search sees afterwards.

use std::sync::Arc;

use hermes_state::rusqlite::types::Value as Sql;
use hermes_state::serde_json::json;
use hermes_state::{
    Clock, Content, ErrorKind, FixedClock, MessagePage, NewMessage, OriginalError, SearchOptions,
    SessionDb, StoreOptions,
};

use crate::common::{NULL, Store, assert_kind, i, t};
use hermes_state_core::store::Messages;
use hermes_state_core::store::Search;
use hermes_state_testkit::build::{assistant, user};

const COUNTERS: &str =
    "SELECT message_count, tool_call_count, rewind_count FROM sessions WHERE id = ?1";
const STATES: &str = "SELECT id, active, compacted FROM messages WHERE session_id = ?1 ORDER BY id";

/// A store whose clock stands still at `now`.
fn store_at(now: f64) -> (Store, Arc<FixedClock>) {
    let store = Store::new();
    let clock = FixedClock::new(now);
    let options = StoreOptions {
        clock: Some(Arc::clone(&clock) as Arc<dyn Clock>),
        ..StoreOptions::default()
    };
    let db = SessionDb::open_with(&store.path, &options).expect("open with a fixed clock");
    (Store { db, ..store }, clock)
}

/// Appends the messages and returns their ids.
fn append(store: &Store, messages: &[NewMessage]) -> Vec<i64> {
    store.db.append_messages(messages).expect("append")
}

/// The ids of the messages a search finds (rewound rows hidden by default).
fn found(store: &Store, query: &str, include_inactive: bool) -> Vec<i64> {
    let options = SearchOptions {
        include_inactive,
        ..SearchOptions::default()
    };
    let mut ids: Vec<i64> = store
        .db
        .search_messages(query, &options)
        .expect("search")
        .into_iter()
        .map(|hit| hit.id)
        .collect();
    ids.sort_unstable();
    ids
}

fn states(store: &Store, session: &str) -> Vec<Vec<Sql>> {
    store.rows(STATES, [session])
}

fn state(id: i64, active: i64, compacted: i64) -> Vec<Sql> {
    vec![i(id), i(active), i(compacted)]
}

/// A read-only handle on the store's file.
fn read_only(store: &Store) -> SessionDb {
    SessionDb::open_read_only(&store.path).expect("read-only handle")
}

// --- replace_messages ---------------------------------------------------------

#[test]
fn replace_messages_deletes_every_row_inserts_the_list_and_sets_the_counters() {
    let (store, _clock) = store_at(1000.0);
    store.session("s");
    append(
        &store,
        &[
            user("s", "old alpha"),
            assistant("s", "old beta").tool_calls(json!([{"id": "c1"}])),
            user("s", "old gamma"),
        ],
    );
    store.exec("UPDATE messages SET active = 0 WHERE id = 3", []);
    let calls = json!([{"id": "a"}, {"id": "b"}]);
    store
        .db
        .replace_messages(
            "s",
            &[
                user("", "new delta"),
                NewMessage::new("s", "assistant").tool_calls(calls),
                NewMessage::new("s", "tool")
                    .content("out")
                    .tool_result("terminal", "a"),
                NewMessage::new("s", "assistant")
                    .tool_calls(json!({"id": "solo"}))
                    .timestamp(5.0),
            ],
            false,
        )
        .expect("replace");

    // Every old row is gone, the rewound one too; the new ones are live.
    assert_eq!(
        states(&store, "s"),
        vec![
            state(4, 1, 0),
            state(5, 1, 0),
            state(6, 1, 0),
            state(7, 1, 0)
        ]
    );
    // Counters: the inserted rows, calls counted as append_message counts them.
    assert_eq!(store.row(COUNTERS, ["s"]), vec![i(4), i(3), i(0)]);
    // The deleted rows left the FTS index; the new ones are in it.
    assert!(found(&store, "alpha", true).is_empty());
    assert!(found(&store, "gamma", true).is_empty());
    assert_eq!(found(&store, "delta", false), vec![4]);
    assert_eq!(store.fts_hits("old"), 0);
}

#[test]
fn replace_messages_gives_strictly_increasing_default_timestamps() {
    let (store, _clock) = store_at(1000.0);
    store.session("s");
    store
        .db
        .replace_messages(
            "s",
            &[
                user("s", "a"),
                user("s", "b"),
                user("s", "c").timestamp(2000.0),
                user("s", "d"),
                user("s", "e").timestamp(10.0),
                user("s", "f"),
            ],
            false,
        )
        .expect("replace");
    let stamps: Vec<f64> = store
        .rows("SELECT timestamp FROM messages ORDER BY id", [])
        .into_iter()
        .map(|row| match row.as_slice() {
            [Sql::Real(f)] => *f,
            other => panic!("timestamp stored as {other:?}"),
        })
        .collect();
    let step = |x: f64| x + 1e-6;
    let after_a = step(1000.0);
    let after_c = step(2000.0);
    let after_d = step(after_c);
    let after_e = step(after_d);
    assert_eq!(
        stamps,
        vec![1000.0, after_a, 2000.0, after_c, 10.0, after_e],
        "the running default is max(default, row timestamp) + 1e-6"
    );
}

#[test]
fn replace_messages_keeps_reasoning_for_assistant_rows_only() {
    let store = Store::new();
    store.session("s");
    let reasoned = |role: &str| {
        let mut message = NewMessage::new("s", role).content("x").reasoning("why");
        message.reasoning_content = Some(String::new());
        message.reasoning_details = Some(json!([{"t": 1}]));
        message.codex_reasoning_items = Some(json!([{"i": 1}]));
        message.codex_message_items = Some(json!([{"m": 1}]));
        message.platform_message_id = Some("pm-1".to_owned());
        message.observed = true;
        message.api_content = Some("WIRE".to_owned());
        message.display_kind = Some("steer".to_owned());
        message.display_metadata = Some(json!({"a": "é"}));
        message.finish_reason = Some("stop".to_owned());
        message.token_count = Some(7);
        message
    };
    store
        .db
        .replace_messages("s", &[reasoned("assistant"), reasoned("user")], false)
        .expect("replace");
    let sql = "SELECT reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items, platform_message_id, observed, api_content, display_kind, display_metadata, finish_reason, token_count FROM messages ORDER BY id";
    let rows = store.rows(sql, []);
    assert_eq!(
        rows[0],
        vec![
            t("why"),
            t(""),
            t(r#"[{"t": 1}]"#),
            t(r#"[{"i": 1}]"#),
            t(r#"[{"m": 1}]"#),
            t("pm-1"),
            i(1),
            t("WIRE"),
            t("steer"),
            t(r#"{"a": "\u00e9"}"#),
            t("stop"),
            i(7),
        ]
    );
    assert_eq!(
        rows[1],
        vec![
            NULL,
            NULL,
            NULL,
            NULL,
            NULL,
            t("pm-1"),
            i(1),
            t("WIRE"),
            t("steer"),
            t(r#"{"a": "\u00e9"}"#),
            t("stop"),
            i(7),
        ]
    );
}

#[test]
fn replace_messages_active_only_keeps_rewound_and_compacted_rows() {
    let store = Store::new();
    store.session("s");
    append(
        &store,
        &[user("s", "one"), user("s", "two"), user("s", "three")],
    );
    store.exec("UPDATE messages SET active = 0 WHERE id = 1", []);
    store.exec(
        "UPDATE messages SET active = 0, compacted = 1 WHERE id = 2",
        [],
    );
    store
        .db
        .replace_messages("s", &[user("s", "four")], true)
        .expect("replace live rows");
    assert_eq!(
        states(&store, "s"),
        vec![state(1, 0, 0), state(2, 0, 1), state(4, 1, 0)]
    );
    assert_eq!(store.row(COUNTERS, ["s"]), vec![i(1), i(0), i(0)]);
    // The compacted row stays searchable, the rewound one hidden.
    assert_eq!(found(&store, "two", false), vec![2]);
    assert!(found(&store, "one", false).is_empty());
    assert_eq!(found(&store, "one", true), vec![1]);
}

#[test]
fn replace_messages_on_an_unknown_session_or_a_foreign_message_changes_nothing() {
    let store = Store::new();
    store.session("s");
    append(&store, &[user("s", "kept")]);
    assert_kind(
        store.db.replace_messages("nope", &[user("", "x")], false),
        ErrorKind::NotFound,
    );
    assert_kind(
        store.db.replace_messages("", &[user("", "x")], false),
        ErrorKind::NotFound,
    );
    // An empty list on an unknown session is a no-op, as in the original.
    store
        .db
        .replace_messages("nope", &[], false)
        .expect("empty list");
    // A message that names another session is refused before anything is written.
    assert_kind(
        store.db.replace_messages("s", &[user("t", "x")], false),
        ErrorKind::InvalidInput,
    );
    assert_eq!(states(&store, "s"), vec![state(1, 1, 0)]);
    assert_eq!(store.count("SELECT count(*) FROM messages", []), 1);
}

#[test]
fn replace_messages_with_an_empty_list_clears_the_session() {
    let store = Store::new();
    store.session("s");
    append(
        &store,
        &[user("s", "gone").tool_calls(json!([{"id": "c"}]))],
    );
    store.db.replace_messages("s", &[], false).expect("replace");
    assert!(states(&store, "s").is_empty());
    assert_eq!(store.row(COUNTERS, ["s"]), vec![i(0), i(0), i(0)]);
}

// --- archive_and_compact ------------------------------------------------------

#[test]
fn archive_and_compact_archives_live_rows_which_stay_searchable() {
    let store = Store::new();
    store.session("s");
    append(
        &store,
        &[
            user("s", "rewound zulu"),
            user("s", "live yankee"),
            assistant("s", "live xray").tool_calls(json!([{"id": "c1"}])),
        ],
    );
    store.exec("UPDATE messages SET active = 0 WHERE id = 1", []);
    let inserted = store
        .db
        .archive_and_compact(
            "s",
            &[
                user("s", "summary whiskey"),
                assistant("s", "ack").tool_calls(json!([{"id": "a"}, {"id": "b"}])),
            ],
        )
        .expect("compact");
    assert_eq!(inserted, 2);
    assert_eq!(
        states(&store, "s"),
        vec![
            state(1, 0, 0),
            state(2, 0, 1),
            state(3, 0, 1),
            state(4, 1, 0),
            state(5, 1, 0)
        ]
    );
    assert_eq!(store.row(COUNTERS, ["s"]), vec![i(2), i(2), i(0)]);
    // The live view is the compacted set.
    let live: Vec<i64> = store
        .db
        .get_messages("s")
        .expect("messages")
        .iter()
        .map(|m| m.id)
        .collect();
    assert_eq!(live, vec![4, 5]);
    // Compacted rows are still found; the rewound one only with include_inactive.
    assert_eq!(found(&store, "yankee", false), vec![2]);
    assert_eq!(found(&store, "xray", false), vec![3]);
    assert_eq!(found(&store, "whiskey", false), vec![4]);
    assert!(found(&store, "zulu", false).is_empty());
    assert_eq!(found(&store, "zulu", true), vec![1]);
    assert!(store.db.has_archived_messages("s").expect("probe"));
}

#[test]
fn archive_and_compact_errors() {
    let store = Store::new();
    store.session("s");
    append(&store, &[user("s", "kept")]);
    assert_kind(
        store.db.archive_and_compact("nope", &[user("", "x")]),
        ErrorKind::NotFound,
    );
    assert_kind(
        store.db.archive_and_compact("", &[user("", "x")]),
        ErrorKind::NotFound,
    );
    assert_eq!(store.db.archive_and_compact("nope", &[]).expect("no-op"), 0);
    assert_eq!(states(&store, "s"), vec![state(1, 1, 0)]);
    // An empty list archives every live row and zeroes the counters.
    assert_eq!(store.db.archive_and_compact("s", &[]).expect("compact"), 0);
    assert_eq!(states(&store, "s"), vec![state(1, 0, 1)]);
    assert_eq!(store.row(COUNTERS, ["s"]), vec![i(0), i(0), i(0)]);
}

// --- rewind_to_message and restore_rewound ------------------------------------

/// user 1, assistant 2, user 3, assistant 4, tool 5.
fn conversation(store: &Store) {
    store.session("s");
    append(
        store,
        &[
            user("s", "first question"),
            assistant("s", "first answer").tool_calls(json!([{"id": "c"}])),
            NewMessage::new("s", "user").content(Content::Structured(
                json!([{"type": "text", "text": "second question"}]),
            )),
            assistant("s", "second answer"),
            NewMessage::new("s", "tool")
                .content("tool output")
                .tool_result("terminal", "c"),
        ],
    );
}

#[test]
fn rewind_to_message_rewinds_the_target_and_later_live_rows() {
    let store = Store::new();
    conversation(&store);
    let result = store.db.rewind_to_message("s", 3).expect("rewind");
    assert_eq!(result.rewound_count, 3);
    assert_eq!(result.new_head_id, Some(2));
    assert_eq!(result.target_message.id, 3);
    assert_eq!(result.target_message.active, 1, "the row as it was");
    assert_eq!(
        result.target_message.content,
        Some(Content::Structured(
            json!([{"type": "text", "text": "second question"}])
        )),
        "content decoded"
    );
    assert_eq!(
        states(&store, "s"),
        vec![
            state(1, 1, 0),
            state(2, 1, 0),
            state(3, 0, 0),
            state(4, 0, 0),
            state(5, 0, 0)
        ]
    );
    // rewind_count + 1; message_count and tool_call_count unchanged.
    assert_eq!(store.row(COUNTERS, ["s"]), vec![i(5), i(1), i(1)]);
    // Rewound rows are hidden from search and from the live view.
    assert!(found(&store, "second", false).is_empty());
    assert_eq!(found(&store, "second", true), vec![3, 4]);
    assert_eq!(store.db.get_messages("s").expect("messages").len(), 2);
    assert!(store.db.has_archived_messages("s").expect("probe"));

    // A second rewind to the first message counts the still-live rows only.
    let again = store.db.rewind_to_message("s", 1).expect("rewind again");
    assert_eq!(again.rewound_count, 2);
    assert_eq!(again.new_head_id, None);
    assert_eq!(store.row(COUNTERS, ["s"]), vec![i(5), i(1), i(2)]);
    // Rewinding to an already rewound user row is allowed and rewinds nothing.
    let none = store.db.rewind_to_message("s", 3).expect("rewind rewound");
    assert_eq!(none.rewound_count, 0);
    assert_eq!(none.target_message.active, 0);
    assert_eq!(store.row(COUNTERS, ["s"]), vec![i(5), i(1), i(3)]);
}

#[test]
fn rewind_to_message_refuses_missing_and_non_user_targets_with_the_originals_texts() {
    let store = Store::new();
    conversation(&store);
    store.session("other");
    append(&store, &[user("other", "elsewhere")]);

    let error = store.db.rewind_to_message("s", 2).expect_err("assistant");
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert_eq!(
        error.original_class(),
        Some(OriginalError::RewindTargetRole)
    );
    assert_eq!(
        error.to_string(),
        "rewind target must be a 'user' message (got role='assistant', id=2)"
    );
    // A missing message, a message of another session, an unknown or
    // empty session: the same error, as in the original.
    for (session, message) in [("s", 99), ("s", 6), ("nope", 1), ("", 1)] {
        let error = store
            .db
            .rewind_to_message(session, message)
            .expect_err("missing");
        assert_eq!(error.kind(), ErrorKind::NotFound, "{session:?} {message}");
        assert_eq!(
            error.original_class(),
            Some(OriginalError::MessageNotFound),
            "{session:?} {message}"
        );
        assert_eq!(
            error.to_string(),
            format!("message {message} not found in session {session}")
        );
    }
    // Nothing changed.
    assert_eq!(store.row(COUNTERS, ["s"]), vec![i(5), i(1), i(0)]);
    assert_eq!(
        store.count("SELECT count(*) FROM messages WHERE active = 0", []),
        0
    );
}

#[test]
fn restore_rewound_makes_every_inactive_row_live_again_compacted_ones_included() {
    let store = Store::new();
    conversation(&store);
    store.db.rewind_to_message("s", 3).expect("rewind");
    assert_eq!(store.db.restore_rewound("s", 4).expect("restore"), 2);
    assert_eq!(
        states(&store, "s"),
        vec![
            state(1, 1, 0),
            state(2, 1, 0),
            state(3, 0, 0),
            state(4, 1, 0),
            state(5, 1, 0)
        ]
    );
    assert_eq!(found(&store, "answer", false), vec![2, 4]);
    assert_eq!(store.db.restore_rewound("s", 1).expect("restore"), 1);
    assert_eq!(found(&store, "second", false), vec![3, 4]);
    assert!(!store.db.has_archived_messages("s").expect("probe"));
    // Counters are what the rewind left.
    assert_eq!(store.row(COUNTERS, ["s"]), vec![i(5), i(1), i(1)]);

    // As the original (`active = 0`, nothing else): compacted rows come
    // back too, still marked compacted.
    store
        .db
        .archive_and_compact("s", &[user("s", "summary")])
        .expect("compact");
    store
        .db
        .rewind_to_message("s", 6)
        .expect("rewind the summary");
    assert_eq!(store.db.restore_rewound("s", 1).expect("restore"), 6);
    assert_eq!(
        store.count(
            "SELECT count(*) FROM messages WHERE active = 1 AND compacted = 1",
            []
        ),
        5
    );
    assert_eq!(
        states(&store, "s")[5],
        state(6, 1, 0),
        "the summary is live again"
    );
    assert_eq!(store.db.restore_rewound("nope", 1).expect("unknown"), 0);
    assert_eq!(store.db.restore_rewound("", 1).expect("empty"), 0);
}

// --- set_latest_user_api_content -----------------------------------------------

#[test]
fn set_latest_user_api_content_stamps_the_newest_live_user_row_when_its_content_matches() {
    let store = Store::new();
    store.session("s");
    append(
        &store,
        &[user("s", "ok"), assistant("s", "reply"), user("s", "ok")],
    );
    let ok = Content::from("ok");
    // Only the newest user row (id 3) is a candidate.
    assert_eq!(
        store
            .db
            .set_latest_user_api_content("s", Some(&ok), "WIRE-3")
            .expect("stamp"),
        1
    );
    assert_eq!(
        store.rows("SELECT api_content FROM messages ORDER BY id", []),
        vec![vec![NULL], vec![NULL], vec![t("WIRE-3")]]
    );
    // A content that differs is a guard: nothing is written.
    assert_eq!(
        store
            .db
            .set_latest_user_api_content("s", Some(&Content::from("other")), "X")
            .expect("guarded"),
        0
    );
    // Rewound rows are skipped: the newest live user row is id 1 then.
    store.db.rewind_to_message("s", 3).expect("rewind");
    assert_eq!(
        store
            .db
            .set_latest_user_api_content("s", Some(&ok), "WIRE-1")
            .expect("stamp"),
        1
    );
    assert_eq!(
        store.rows("SELECT api_content FROM messages ORDER BY id", []),
        vec![vec![t("WIRE-1")], vec![NULL], vec![t("WIRE-3")]]
    );
    assert_eq!(
        store
            .db
            .set_latest_user_api_content("nope", Some(&ok), "X")
            .expect("unknown session"),
        0
    );
    assert_eq!(
        store
            .db
            .set_latest_user_api_content("", Some(&ok), "X")
            .expect("empty id"),
        0
    );
}

#[test]
fn set_latest_user_api_content_matches_structured_and_null_content() {
    let store = Store::new();
    store.session("s");
    let parts = Content::Structured(json!([{"type": "text", "text": "look"}]));
    append(
        &store,
        &[NewMessage::new("s", "user").content(parts.clone())],
    );
    assert_eq!(
        store
            .db
            .set_latest_user_api_content("s", Some(&parts), "wire")
            .expect("stamp"),
        1
    );
    append(&store, &[NewMessage::new("s", "user")]);
    assert_eq!(
        store
            .db
            .set_latest_user_api_content("s", None, "null")
            .expect("stamp"),
        1
    );
    assert_eq!(
        store.rows("SELECT api_content FROM messages ORDER BY id", []),
        vec![vec![t("wire")], vec![t("null")]]
    );
}

// --- set_latest_matching_message_display_kind ---------------------------------

#[test]
fn set_latest_matching_message_display_kind_stamps_the_newest_live_match() {
    let store = Store::new();
    store.session("s");
    append(
        &store,
        &[
            user("s", "note"),
            assistant("s", "note"),
            user("s", "note"),
            user("s", "other"),
        ],
    );
    store.exec("UPDATE messages SET display_metadata = '{\"x\": 1}'", []);
    let metadata = json!({"source": "cron", "n": 1.5, "name": "é"});
    assert!(
        store
            .db
            .set_latest_matching_message_display_kind(
                "s",
                "user",
                "note",
                "auto_continue",
                Some(&metadata)
            )
            .expect("stamp")
    );
    let sql = "SELECT display_kind, display_metadata FROM messages ORDER BY id";
    let expected_meta = t(r#"{"source": "cron", "n": 1.5, "name": "\u00e9"}"#);
    assert_eq!(
        store.rows(sql, []),
        vec![
            vec![NULL, t(r#"{"x": 1}"#)],
            vec![NULL, t(r#"{"x": 1}"#)],
            vec![t("auto_continue"), expected_meta],
            vec![NULL, t(r#"{"x": 1}"#)],
        ]
    );
    // Without metadata the stamp clears it (NULL), as the original.
    assert!(
        store
            .db
            .set_latest_matching_message_display_kind("s", "assistant", "note", "hidden", None)
            .expect("stamp")
    );
    assert_eq!(store.rows(sql, [])[1], vec![t("hidden"), NULL]);
    // Rewound rows do not match; the older live one does.
    store.db.rewind_to_message("s", 3).expect("rewind");
    assert!(
        store
            .db
            .set_latest_matching_message_display_kind("s", "user", "note", "steer", None)
            .expect("stamp")
    );
    assert_eq!(store.rows(sql, [])[0], vec![t("steer"), NULL]);
    // The model-facing columns are untouched.
    assert_eq!(
        store.rows("SELECT role, content FROM messages WHERE id = 1", []),
        vec![vec![t("user"), t("note")]]
    );
}

#[test]
fn set_latest_matching_message_display_kind_without_a_match_or_with_empty_arguments_is_false() {
    let store = Store::new();
    store.session("s");
    append(&store, &[user("s", "note")]);
    let db = &store.db;
    let no = |session: &str, role: &str, content: &str, kind: &str| {
        assert!(
            !db.set_latest_matching_message_display_kind(session, role, content, kind, None)
                .expect("no match"),
            "{session:?} {role:?} {content:?} {kind:?}"
        );
    };
    no("s", "user", "other", "k");
    no("s", "assistant", "note", "k");
    no("nope", "user", "note", "k");
    no("", "user", "note", "k");
    no("s", "user", "", "k");
    no("s", "user", "note", "");
    assert_eq!(
        store.rows("SELECT display_kind FROM messages", []),
        vec![vec![NULL]]
    );
}

// --- get_messages_around --------------------------------------------------------

#[test]
fn get_messages_around_returns_a_window_with_inactive_rows_and_its_counts() {
    let store = Store::new();
    store.session("s");
    store.session("t");
    let texts: Vec<NewMessage> = (1..=9).map(|n| user("s", format!("m{n}"))).collect();
    append(&store, &texts);
    append(&store, &[user("t", "elsewhere")]);
    store.exec("UPDATE messages SET active = 0 WHERE id = 4", []);
    store.exec(
        "UPDATE messages SET active = 0, compacted = 1 WHERE id = 6",
        [],
    );

    let ids = |around: &hermes_state::MessagesAround| -> Vec<i64> {
        around.window.iter().map(|m| m.id).collect()
    };
    let middle = store.db.get_messages_around("s", 5, 2).expect("around");
    assert_eq!(ids(&middle), vec![3, 4, 5, 6, 7]);
    assert_eq!((middle.messages_before, middle.messages_after), (2, 2));
    assert_eq!(middle.window[1].active, 0, "rewound rows included");
    assert_eq!(middle.window[3].compacted, 1, "compacted rows included");
    assert_eq!(
        middle.window[2].content,
        Some(Content::from("m5")),
        "decoded"
    );

    let start = store.db.get_messages_around("s", 1, 5).expect("around");
    assert_eq!(ids(&start), vec![1, 2, 3, 4, 5, 6]);
    assert_eq!((start.messages_before, start.messages_after), (0, 5));
    let end = store.db.get_messages_around("s", 9, 5).expect("around");
    assert_eq!(ids(&end), vec![4, 5, 6, 7, 8, 9]);
    assert_eq!((end.messages_before, end.messages_after), (5, 0));
    let alone = store.db.get_messages_around("s", 5, 0).expect("around");
    assert_eq!(ids(&alone), vec![5]);
    assert_eq!((alone.messages_before, alone.messages_after), (0, 0));

    // An anchor outside the session (another session's, missing) → empty.
    for (session, anchor) in [("s", 10), ("s", 99), ("nope", 5), ("", 5), ("t", 5)] {
        let none = store
            .db
            .get_messages_around(session, anchor, 5)
            .expect("around");
        assert!(none.window.is_empty(), "{session:?} {anchor}");
        assert_eq!((none.messages_before, none.messages_after), (0, 0));
    }
}

// --- list_recent_user_messages ------------------------------------------------

#[test]
fn list_recent_user_messages_previews_newest_first() {
    let (store, _clock) = store_at(1000.0);
    store.session("s");
    let long = "word ".repeat(30);
    append(
        &store,
        &[
            user("s", "  hello \n\t world  ").timestamp(1.0),
            assistant("s", "not a user row"),
            NewMessage::new("s", "user")
                .content(Content::Structured(json!([
                    {"type": "text", "text": "look\nat"},
                    {"type": "image_url", "image_url": {"url": "x"}},
                    {"type": "text", "text": "this"},
                    {"type": "text", "text": ""}
                ])))
                .timestamp(2.0),
            NewMessage::new("s", "user")
                .content(Content::Structured(
                    json!([{"type": "image_url", "image_url": {"url": "x"}}]),
                ))
                .timestamp(3.0),
            user("s", long.as_str()).timestamp(4.0),
            user("s", "x".repeat(80)).timestamp(5.0),
            NewMessage::new("s", "user").timestamp(6.0),
            NewMessage::new("s", "user")
                .content(Content::Structured(json!({"type": "text", "text": "obj"})))
                .timestamp(7.0),
        ],
    );
    let listed = store
        .db
        .list_recent_user_messages("s", 20, false)
        .expect("list");
    let got: Vec<(i64, f64, String)> = listed
        .iter()
        .map(|m| (m.id, m.timestamp, m.preview.clone()))
        .collect();
    let cut = format!("{}...", &"word ".repeat(16)[..77]);
    assert_eq!(
        got,
        vec![
            (8, 7.0, String::new()),
            (7, 6.0, String::new()),
            (6, 5.0, "x".repeat(80)),
            (5, 4.0, cut),
            (4, 3.0, "[multimodal content]".to_owned()),
            (3, 2.0, "look at this".to_owned()),
            (1, 1.0, "hello world".to_owned()),
        ]
    );
    assert_eq!(
        store
            .db
            .list_recent_user_messages("s", 2, false)
            .expect("limit")
            .iter()
            .map(|m| m.id)
            .collect::<Vec<_>>(),
        vec![8, 7]
    );
    assert!(
        store
            .db
            .list_recent_user_messages("s", 0, false)
            .expect("zero")
            .is_empty()
    );
    assert!(
        store
            .db
            .list_recent_user_messages("nope", 20, false)
            .expect("unknown")
            .is_empty()
    );
    assert!(
        store
            .db
            .list_recent_user_messages("", 20, false)
            .expect("empty id")
            .is_empty()
    );
}

#[test]
fn list_recent_user_messages_leaves_inactive_rows_out_unless_asked() {
    let store = Store::new();
    conversation(&store);
    store.db.rewind_to_message("s", 3).expect("rewind");
    let ids = |include_inactive| -> Vec<i64> {
        store
            .db
            .list_recent_user_messages("s", 20, include_inactive)
            .expect("list")
            .iter()
            .map(|m| m.id)
            .collect()
    };
    assert_eq!(ids(false), vec![1]);
    assert_eq!(ids(true), vec![3, 1]);
}

// --- has_platform_message_id, has_archived_messages ----------------------------

#[test]
fn has_platform_message_id_sees_rows_in_any_state_of_that_session() {
    let store = Store::new();
    store.session("s");
    store.session("t");
    let mut with_id = user("s", "hi");
    with_id.platform_message_id = Some("pm-1".to_owned());
    let mut rewound = user("s", "gone");
    rewound.platform_message_id = Some("pm-2".to_owned());
    append(&store, &[with_id, rewound]);
    store.exec("UPDATE messages SET active = 0 WHERE id = 2", []);
    let db = &store.db;
    assert!(db.has_platform_message_id("s", "pm-1").expect("probe"));
    assert!(db.has_platform_message_id("s", "pm-2").expect("probe"));
    assert!(!db.has_platform_message_id("t", "pm-1").expect("probe"));
    assert!(!db.has_platform_message_id("s", "pm-3").expect("probe"));
    assert!(!db.has_platform_message_id("nope", "pm-1").expect("probe"));
    assert!(!db.has_platform_message_id("", "pm-1").expect("probe"));
    assert!(!db.has_platform_message_id("s", "").expect("probe"));
}

#[test]
fn has_archived_messages_is_true_for_rewound_or_compacted_rows() {
    let store = Store::new();
    store.session("s");
    let db = &store.db;
    assert!(!db.has_archived_messages("s").expect("empty session"));
    append(&store, &[user("s", "a"), user("s", "b")]);
    assert!(!db.has_archived_messages("s").expect("live rows"));
    store.exec(
        "UPDATE messages SET active = 0, compacted = 1 WHERE id = 2",
        [],
    );
    assert!(db.has_archived_messages("s").expect("compacted"));
    store.exec(
        "UPDATE messages SET active = 0, compacted = 0 WHERE id = 2",
        [],
    );
    assert!(db.has_archived_messages("s").expect("rewound"));
    assert!(!db.has_archived_messages("nope").expect("unknown"));
    assert!(!db.has_archived_messages("").expect("empty id"));
}

// --- read-only handles ----------------------------------------------------------

#[test]
fn a_read_only_handle_reads_but_refuses_every_writer() {
    let store = Store::new();
    conversation(&store);
    store.db.rewind_to_message("s", 3).expect("rewind");
    store.db.close().expect("close");
    let db = read_only(&store);

    let ok = Content::from("first question");
    assert_kind(
        db.replace_messages("s", &[user("s", "x")], false),
        ErrorKind::ReadOnly,
    );
    assert_kind(db.replace_messages("s", &[], true), ErrorKind::ReadOnly);
    assert_kind(db.archive_and_compact("s", &[]), ErrorKind::ReadOnly);
    assert_kind(db.rewind_to_message("s", 1), ErrorKind::ReadOnly);
    assert_kind(db.restore_rewound("s", 1), ErrorKind::ReadOnly);
    assert_kind(
        db.set_latest_user_api_content("s", Some(&ok), "x"),
        ErrorKind::ReadOnly,
    );
    assert_kind(
        db.set_latest_matching_message_display_kind("s", "user", "first question", "k", None),
        ErrorKind::ReadOnly,
    );

    let around = db.get_messages_around("s", 3, 1).expect("around");
    assert_eq!(around.window.len(), 3);
    assert_eq!(
        db.list_recent_user_messages("s", 20, true)
            .expect("list")
            .len(),
        2
    );
    assert!(db.has_archived_messages("s").expect("probe"));
    assert!(!db.has_platform_message_id("s", "pm").expect("probe"));
    // Nothing was written.
    let all = db
        .get_messages_page(
            "s",
            MessagePage {
                include_inactive: true,
                ..MessagePage::default()
            },
        )
        .expect("messages");
    assert_eq!(all.len(), 5);
}
