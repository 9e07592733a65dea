//! The handoff state machine of `api.md` §2.5: request, claim, complete,
//! fail, and the two reads.

use hermes_state::{ErrorKind, HANDOFF_ERROR_MAX_CHARS, HandoffState, SessionDb};

use crate::common::{NULL, Store, assert_kind, t};
use hermes_state_core::store::Sessions;

const ROW: &str =
    "SELECT handoff_state, handoff_platform, handoff_error FROM sessions WHERE id = 's'";

fn state(store: &Store, id: &str) -> Option<HandoffState> {
    store.db.get_handoff_state(id).expect("get_handoff_state")
}

#[test]
fn a_handoff_runs_from_request_to_completion() {
    let store = Store::new();
    store.session("s");
    assert_eq!(
        state(&store, "s"),
        Some(HandoffState {
            state: None,
            platform: None,
            error: None
        }),
        "a session never handed off has a record with no state"
    );

    assert!(store.db.request_handoff("s", "telegram").expect("request"));
    assert_eq!(store.row(ROW, []), vec![t("pending"), t("telegram"), NULL]);
    assert!(
        !store
            .db
            .request_handoff("s", "discord")
            .expect("request again"),
        "a pending handoff is not requested again"
    );
    assert_eq!(store.row(ROW, [])[1], t("telegram"));

    assert!(store.db.claim_handoff("s").expect("claim"));
    assert!(
        !store.db.claim_handoff("s").expect("claim again"),
        "claimed once"
    );
    assert_eq!(store.row(ROW, [])[0], t("running"));
    assert!(
        !store
            .db
            .request_handoff("s", "discord")
            .expect("request while running"),
        "nor is a running one"
    );

    store.db.complete_handoff("s").expect("complete");
    assert_eq!(
        state(&store, "s"),
        Some(HandoffState {
            state: Some("completed".to_owned()),
            platform: Some("telegram".to_owned()),
            error: None
        })
    );
    assert!(
        store
            .db
            .request_handoff("s", "discord")
            .expect("request after completion")
    );
    assert_eq!(store.row(ROW, []), vec![t("pending"), t("discord"), NULL]);
}

#[test]
fn a_failed_handoff_keeps_500_characters_of_its_error_and_can_be_requested_again() {
    let store = Store::new();
    store.session("s");
    assert!(store.db.request_handoff("s", "telegram").expect("request"));
    assert!(store.db.claim_handoff("s").expect("claim"));

    // 600 characters, multi-byte ones included: cut by characters, not bytes.
    let error = "é".repeat(300) + &"x".repeat(300);
    store.db.fail_handoff("s", &error).expect("fail");
    let stored = state(&store, "s").expect("row").error.expect("error");
    assert_eq!(stored.chars().count(), HANDOFF_ERROR_MAX_CHARS);
    assert_eq!(stored, "é".repeat(300) + &"x".repeat(200));
    assert_eq!(store.row(ROW, [])[0], t("failed"));

    store.db.fail_handoff("s", "short").expect("fail again");
    assert_eq!(store.row(ROW, [])[2], t("short"));

    assert!(
        store
            .db
            .request_handoff("s", "slack")
            .expect("request after failure")
    );
    assert_eq!(
        store.row(ROW, []),
        vec![t("pending"), t("slack"), NULL],
        "a request clears the last error"
    );

    // Fail and complete apply whatever the state (here: pending).
    store
        .db
        .complete_handoff("s")
        .expect("complete a pending one");
    assert_eq!(store.row(ROW, [])[0], t("completed"));
}

#[test]
fn list_pending_handoffs_gives_pending_sessions_oldest_first() {
    let store = Store::new();
    for (id, started) in [
        ("late", 300.0),
        ("early", 100.0),
        ("mid", 200.0),
        ("idle", 50.0),
    ] {
        store.session(id);
        store.exec(
            "UPDATE sessions SET started_at = ?1 WHERE id = ?2",
            hermes_state::rusqlite::params![started, id],
        );
    }
    assert!(store.db.list_pending_handoffs().expect("list").is_empty());
    for id in ["late", "early", "mid"] {
        assert!(store.db.request_handoff(id, "telegram").expect("request"));
    }
    assert!(store.db.claim_handoff("mid").expect("claim"));
    let pending = store.db.list_pending_handoffs().expect("list");
    let ids: Vec<&str> = pending.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["early", "late"]);
    assert_eq!(pending[0].handoff_platform.as_deref(), Some("telegram"));
    assert_eq!(pending[0].started_at, 100.0);
}

#[test]
fn unknown_and_empty_ids() {
    let store = Store::new();
    assert!(
        !store
            .db
            .request_handoff("nope", "telegram")
            .expect("request")
    );
    assert!(!store.db.claim_handoff("nope").expect("claim"));
    store.db.complete_handoff("nope").expect("complete");
    store.db.fail_handoff("nope", "e").expect("fail");
    assert_eq!(state(&store, "nope"), None);
    assert_eq!(store.count("SELECT count(*) FROM sessions", []), 0);

    // '' is an ordinary id.
    store.session("");
    assert!(store.db.request_handoff("", "telegram").expect("request"));
    assert_eq!(
        state(&store, "").expect("row").state.as_deref(),
        Some("pending")
    );
}

#[test]
fn a_read_only_handle_refuses_the_transitions_and_serves_the_reads() {
    let store = Store::new();
    store.session("s");
    assert!(store.db.request_handoff("s", "telegram").expect("request"));
    store.db.close().expect("close");
    let db = SessionDb::open_read_only(&store.path).expect("read-only");

    assert_kind(db.request_handoff("s", "discord"), ErrorKind::ReadOnly);
    assert_kind(db.claim_handoff("s"), ErrorKind::ReadOnly);
    assert_kind(db.complete_handoff("s"), ErrorKind::ReadOnly);
    assert_kind(db.fail_handoff("s", "e"), ErrorKind::ReadOnly);
    assert_eq!(
        db.get_handoff_state("s")
            .expect("read")
            .expect("row")
            .state
            .as_deref(),
        Some("pending")
    );
    assert_eq!(db.list_pending_handoffs().expect("read").len(), 1);
}
