//! `clear_messages` and `delete_session` (`api.md` §11.5–11.6).

use hermes_state::serde_json::json;
use hermes_state::{AuxiliaryUsage, NewMessage, NewSession, TokenUpdate};

use crate::common::{NULL, Store, i, t};
use hermes_state_core::store::Accounting;
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;
use hermes_state_testkit::build::say_now;

fn usage(store: &Store, session: &str) {
    store
        .db
        .update_token_counts(
            session,
            &TokenUpdate {
                input_tokens: 5,
                model: Some("m".to_owned()),
                api_call_count: 1,
                ..TokenUpdate::default()
            },
        )
        .expect("usage");
    store
        .db
        .record_auxiliary_usage(
            session,
            &AuxiliaryUsage {
                task: "vision".to_owned(),
                input_tokens: 1,
                ..AuxiliaryUsage::default()
            },
        )
        .expect("aux usage");
}

#[test]
fn clear_messages_deletes_all_rows_and_zeroes_only_the_message_counters() {
    let store = Store::new();
    store.session("s");
    store.session("keep");
    say_now(&store.db, "s", "alpha zebra");
    store
        .db
        .append_message(
            &NewMessage::new("s", "assistant")
                .content("zebra reply")
                .tool_calls(json!([{"id": "a"}, {"id": "b"}])),
        )
        .expect("append");
    say_now(&store.db, "s", "rewound zebra");
    say_now(&store.db, "keep", "zebra elsewhere");
    usage(&store, "s");
    store.exec("UPDATE messages SET active = 0 WHERE id = 3", []);
    store.exec("UPDATE sessions SET title = 'T' WHERE id = 's'", []);
    const KEPT: &str = "SELECT title, started_at, input_tokens, api_call_count, estimated_cost_usd, source FROM sessions WHERE id = 's'";
    let kept_before = store.row(KEPT, []);
    assert_eq!(
        store.row(
            "SELECT message_count, tool_call_count FROM sessions WHERE id = 's'",
            []
        ),
        vec![i(3), i(2)]
    );
    assert_eq!(store.fts_hits("zebra"), 4);

    store.db.clear_messages("s").expect("clear");
    assert_eq!(
        store.count("SELECT count(*) FROM messages WHERE session_id = 's'", []),
        0,
        "inactive rows are deleted too"
    );
    assert_eq!(
        store.row(
            "SELECT message_count, tool_call_count FROM sessions WHERE id = 's'",
            []
        ),
        vec![i(0), i(0)]
    );
    assert_eq!(
        store.row(KEPT, []),
        kept_before,
        "token counters, title, times untouched"
    );
    assert_eq!(store.fts_hits("zebra"), 1, "FTS entries follow the rows");
    assert_eq!(
        store.count(
            "SELECT count(*) FROM session_model_usage WHERE session_id = 's'",
            []
        ),
        2,
        "usage rows are not messages"
    );
    assert_eq!(store.db.message_count(Some("keep")).expect("count"), 1);

    // Unknown id: no-op.
    store.db.clear_messages("nope").expect("unknown id");
    assert_eq!(store.count("SELECT count(*) FROM sessions", []), 2);
}

/// The measured delete example of §11.6.
#[test]
fn delete_session_removes_delegates_and_orphans_other_children() {
    let store = Store::new();
    store.session("par");
    store
        .db
        .create_session(
            &NewSession::new("branch", "cli")
                .parent_session_id("par")
                .model_config(json!({"_branched_from": "par"})),
        )
        .expect("branch child");
    store
        .db
        .create_session(&NewSession::new("plain", "cli").parent_session_id("par"))
        .expect("plain child");
    store
        .db
        .create_session(
            &NewSession::new("d_child", "subagent")
                .parent_session_id("par")
                .model_config(json!({"_delegate_from": "par"})),
        )
        .expect("delegate child");
    store
        .db
        .create_session(
            &NewSession::new("d_grand", "subagent")
                .parent_session_id("d_child")
                .model_config(json!({"_delegate_from": "d_child"})),
        )
        .expect("delegate grandchild");
    // A session whose model_config is not JSON must not break the delete.
    store.session("broken");
    store.exec(
        "UPDATE sessions SET model_config = '{not json' WHERE id = 'broken'",
        [],
    );
    for (session, word) in [
        ("par", "parentword"),
        ("branch", "keepword"),
        ("plain", "keepword"),
        ("d_child", "delegateword"),
        ("d_grand", "delegateword"),
        ("broken", "brokenword"),
    ] {
        say_now(&store.db, session, format!("{word} from {session}"));
        usage(&store, session);
    }
    assert_eq!(store.fts_hits("parentword"), 1);
    assert_eq!(store.fts_hits("delegateword"), 2);
    assert_eq!(store.fts_hits("keepword"), 2);

    assert!(store.db.delete_session("par").expect("delete"));

    assert_eq!(
        store.rows("SELECT id, parent_session_id FROM sessions ORDER BY id", []),
        vec![
            vec![t("branch"), NULL],
            vec![t("broken"), NULL],
            vec![t("plain"), NULL],
        ],
        "only the branch and plain children remain (orphaned), delegates are gone"
    );
    assert_eq!(
        store.rows(
            "SELECT DISTINCT session_id FROM messages ORDER BY session_id",
            []
        ),
        vec![vec![t("branch")], vec![t("broken")], vec![t("plain")]]
    );
    assert_eq!(
        store.rows(
            "SELECT DISTINCT session_id FROM session_model_usage ORDER BY session_id",
            []
        ),
        vec![vec![t("branch")], vec![t("broken")], vec![t("plain")]],
        "usage rows cascade with their sessions"
    );
    assert_eq!(store.fts_hits("parentword"), 0);
    assert_eq!(store.fts_hits("delegateword"), 0);
    assert_eq!(store.fts_hits("keepword"), 2);
    assert_eq!(store.fts_hits("brokenword"), 1);
    assert_eq!(
        store.row("SELECT model_config FROM sessions WHERE id = 'broken'", []),
        vec![t("{not json")]
    );

    // Unknown id (and a second delete): false.
    assert!(!store.db.delete_session("par").expect("second delete"));
    assert!(!store.db.delete_session("nope").expect("unknown"));
}

#[test]
fn delete_session_keeps_compression_continuations_and_foreign_delegates() {
    let store = Store::new();
    store.session("root");
    store.session("unrelated");
    store.db.end_session("root", "compression").expect("end");
    store
        .db
        .create_session(&NewSession::new("cont", "cli").parent_session_id("root"))
        .expect("continuation");
    // A child of root that carries any `_delegate_from` marker is a delegate
    // of root, whatever the marker names: it goes.
    store
        .db
        .create_session(
            &NewSession::new("marked", "subagent")
                .parent_session_id("root")
                .model_config(json!({"_delegate_from": "unrelated"})),
        )
        .expect("marked child");
    // A delegate marker naming root on a session without a parent link goes too.
    store
        .db
        .create_session(
            &NewSession::new("unlinked", "subagent")
                .model_config(json!({"_delegate_from": "root"})),
        )
        .expect("unlinked delegate");
    // A delegate of `unrelated` (no link to root) stays.
    store
        .db
        .create_session(
            &NewSession::new("theirs", "subagent")
                .parent_session_id("unrelated")
                .model_config(json!({"_delegate_from": "unrelated"})),
        )
        .expect("foreign delegate");
    assert!(store.db.delete_session("root").expect("delete"));
    assert_eq!(
        store.rows("SELECT id, parent_session_id FROM sessions ORDER BY id", []),
        vec![
            vec![t("cont"), NULL],
            vec![t("theirs"), t("unrelated")],
            vec![t("unrelated"), NULL],
        ]
    );
}

#[test]
fn empty_id_session_can_be_deleted() {
    let store = Store::new();
    store.session("");
    say_now(&store.db, "", "emptyidword");
    assert!(store.db.delete_session("").expect("delete"));
    assert_eq!(store.count("SELECT count(*) FROM sessions", []), 0);
    assert_eq!(store.fts_hits("emptyidword"), 0);
}

#[test]
fn delete_session_with_a_sessions_dir_removes_the_transcripts_of_the_session_and_its_delegates() {
    let store = Store::new();
    store.session("d_par");
    store
        .db
        .create_session(
            &NewSession::new("d_sub", "subagent")
                .parent_session_id("d_par")
                .model_config(json!({"_delegate_from": "d_par"})),
        )
        .expect("delegate child");
    store.session("other");
    let dir = tempfile::tempdir().expect("tempdir");
    let names = [
        "d_par.json",
        "request_dump_d_par_1.json",
        "d_sub.jsonl",
        "other.json",
        "request_dump_d_parx_1.json",
    ];
    for name in names {
        std::fs::write(dir.path().join(name), b"{}").expect("write transcript");
    }
    let left = || {
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("read dir")
            .map(|e| e.expect("entry").file_name().into_string().expect("utf-8"))
            .collect();
        names.sort();
        names
    };

    assert!(
        !store
            .db
            .delete_session_with("nope", Some(dir.path()))
            .expect("unknown")
    );
    assert_eq!(left().len(), names.len(), "an unknown id touches no file");
    assert!(
        store
            .db
            .delete_session_with("d_par", Some(dir.path()))
            .expect("delete")
    );
    assert_eq!(left(), ["other.json", "request_dump_d_parx_1.json"]);
    assert_eq!(
        store.rows("SELECT id FROM sessions", []),
        vec![vec![t("other")]]
    );
    // Without a folder, as `delete_session`: no file is touched.
    assert!(store.db.delete_session_with("other", None).expect("delete"));
    assert_eq!(left(), ["other.json", "request_dump_d_parx_1.json"]);
}
