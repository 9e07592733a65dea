//! What only a file shows of clearing, deleting and replacing messages
//! (`api.md` §4.5, §11.5–11.6): the full-text index follows the rows. What
//! the calls do is the conformance suite's, on both backends
//! (`message_reads::clearing_messages_…`, `deletes::…`,
//! `message_edits::replace_and_compact_alike`).

use hermes_state::NewSession;
use hermes_state::serde_json::json;

use crate::common::Store;
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Messages;
use hermes_state_core::store::Sessions;
use hermes_state_testkit::build::{child, say_now, user};

#[test]
fn the_fts_index_follows_cleared_deleted_and_replaced_rows() {
    let store = Store::new();
    let db = &store.db;
    // Clearing: an inactive row goes too, another session's row stays.
    store.session("s");
    store.session("keep");
    for text in ["alpha zebra", "zebra reply", "rewound zebra"] {
        say_now(db, "s", text);
    }
    say_now(db, "keep", "zebra elsewhere");
    store.exec("UPDATE messages SET active = 0 WHERE id = 3", []);
    assert_eq!(store.fts_hits("zebra"), 4);
    db.clear_messages("s").expect("clear");
    assert_eq!(store.fts_hits("zebra"), 1);

    // Deleting: the delegates' rows go, the orphaned children's and an
    // unrelated session's (whose config is not JSON) stay.
    store.session("par");
    let marked =
        |id: &str, parent: &str, key: &str| child(id, parent).model_config(json!({ key: parent }));
    for session in [
        marked("branch", "par", "_branched_from"),
        child("plain", "par"),
        marked("d_child", "par", "_delegate_from"),
        marked("d_grand", "d_child", "_delegate_from"),
        NewSession::new("broken", "cli"),
    ] {
        db.create_session(&session).expect("create");
    }
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
        say_now(db, session, format!("{word} from {session}"));
    }
    let hits =
        || ["parentword", "delegateword", "keepword", "brokenword"].map(|w| store.fts_hits(w));
    assert_eq!(hits(), [1, 2, 2, 1]);
    assert!(db.delete_session("par").expect("delete"));
    assert_eq!(hits(), [0, 0, 2, 1]);

    // An empty id, a batch, a replaced transcript.
    store.session("");
    say_now(db, "", "emptyidword");
    assert!(db.delete_session("").expect("delete ''"));
    assert_eq!(store.fts_hits("emptyidword"), 0);
    assert_eq!(
        db.delete_sessions(["branch", "plain"], None)
            .expect("batch"),
        2
    );
    assert_eq!(store.fts_hits("keepword"), 0);
    db.replace_messages("broken", &[user("broken", "newword")], false)
        .expect("replace");
    assert_eq!(
        [store.fts_hits("brokenword"), store.fts_hits("newword")],
        [0, 1]
    );
}
