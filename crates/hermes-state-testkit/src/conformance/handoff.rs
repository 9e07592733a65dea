//! The handoff state machine (`api.md` §2.5) through the seam.

use hermes_state_core::session_updates::HANDOFF_ERROR_MAX_CHARS;
use hermes_state_core::session_updates::HandoffState;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewSession;

use super::Backend;

fn state(s: Option<&str>, platform: Option<&str>, error: Option<&str>) -> Option<HandoffState> {
    Some(HandoffState {
        state: s.map(str::to_owned),
        platform: platform.map(str::to_owned),
        error: error.map(str::to_owned),
    })
}

pub fn handoffs_move_through_the_same_states_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("a", "cli")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    s.create_session(&NewSession::new("b", "cli")).unwrap();
    assert_eq!(
        s.get_handoff_state("a").unwrap(),
        state(None, None, None),
        "{n}"
    );
    assert_eq!(s.get_handoff_state("nope").unwrap(), None, "{n}");

    assert!(s.request_handoff("b", "telegram").unwrap(), "{n}");
    assert!(s.request_handoff("a", "discord").unwrap(), "{n}");
    // In flight: no second request.
    assert!(!s.request_handoff("a", "slack").unwrap(), "{n}");
    assert!(!s.request_handoff("nope", "slack").unwrap(), "{n}");
    let pending: Vec<String> = s
        .list_pending_handoffs()
        .unwrap()
        .into_iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(pending, ["a", "b"], "{n}: oldest start first");

    assert!(s.claim_handoff("a").unwrap(), "{n}");
    assert!(!s.claim_handoff("a").unwrap(), "{n}: claimed once");
    assert!(!s.request_handoff("a", "slack").unwrap(), "{n}: running");
    assert_eq!(
        s.get_handoff_state("a").unwrap(),
        state(Some("running"), Some("discord"), None),
        "{n}"
    );
    let long = "é".repeat(HANDOFF_ERROR_MAX_CHARS + 20);
    s.fail_handoff("a", &long).unwrap();
    let failed = s.get_handoff_state("a").unwrap().unwrap();
    assert_eq!(failed.state.as_deref(), Some("failed"), "{n}");
    assert_eq!(
        failed.error.unwrap().chars().count(),
        HANDOFF_ERROR_MAX_CHARS,
        "{n}"
    );
    // A failed handoff may be requested again; the error is cleared.
    assert!(s.request_handoff("a", "slack").unwrap(), "{n}");
    assert_eq!(
        s.get_handoff_state("a").unwrap(),
        state(Some("pending"), Some("slack"), None),
        "{n}"
    );
    s.complete_handoff("a").unwrap();
    assert_eq!(
        s.get_handoff_state("a").unwrap(),
        state(Some("completed"), Some("slack"), None),
        "{n}"
    );
    let pending: Vec<String> = s
        .list_pending_handoffs()
        .unwrap()
        .into_iter()
        .map(|x| x.id)
        .collect();
    assert_eq!(pending, ["b"], "{n}");
    // Unknown sessions: no error, nothing created.
    s.complete_handoff("nope").unwrap();
    s.fail_handoff("nope", "x").unwrap();
    assert!(!s.claim_handoff("nope").unwrap(), "{n}");
    assert_eq!(s.get_session("nope").unwrap(), None, "{n}");
}

/// A request while one is pending keeps the first platform; a completed
/// handoff may be requested again; a failure keeps the first 500
/// characters (not bytes) and a later failure replaces it; pending ones
/// are listed oldest start first, claimed ones left out; `''` is an id
/// like any other; a read-only handle reads and refuses every transition.
pub fn handoff_platforms_errors_and_order_and_a_reader_refusing_them_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    for (id, started) in [
        ("late", 300.0),
        ("early", 100.0),
        ("mid", 200.0),
        ("idle", 50.0),
    ] {
        b.add(NewSession::new(id, "cli"), started);
    }
    assert!(s.list_pending_handoffs().unwrap().is_empty(), "{n}");
    for id in ["late", "early", "mid"] {
        assert!(s.request_handoff(id, "telegram").unwrap(), "{n}");
    }
    assert!(!s.request_handoff("late", "discord").unwrap(), "{n}");
    let late = s.get_handoff_state("late").unwrap();
    assert_eq!(late, state(Some("pending"), Some("telegram"), None), "{n}");
    assert!(s.claim_handoff("mid").unwrap(), "{n}");
    let pending = s.list_pending_handoffs().unwrap();
    let ids: Vec<&str> = pending.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["early", "late"], "{n}");
    let first = &pending[0];
    let first = (first.handoff_platform.as_deref(), first.started_at);
    assert_eq!(first, (Some("telegram"), 100.0), "{n}");

    s.complete_handoff("mid").unwrap();
    assert!(
        s.request_handoff("mid", "discord").unwrap(),
        "{n}: after completion"
    );
    let mid = s.get_handoff_state("mid").unwrap();
    assert_eq!(mid, state(Some("pending"), Some("discord"), None), "{n}");
    assert!(s.claim_handoff("mid").unwrap(), "{n}");
    let error = "é".repeat(300) + &"x".repeat(300);
    s.fail_handoff("mid", &error).unwrap();
    let failed = s.get_handoff_state("mid").unwrap().unwrap().error;
    assert_eq!(failed, Some("é".repeat(300) + &"x".repeat(200)), "{n}");
    s.fail_handoff("mid", "short").unwrap();
    let failed = s.get_handoff_state("mid").unwrap();
    assert_eq!(
        failed,
        state(Some("failed"), Some("discord"), Some("short")),
        "{n}"
    );

    b.add(NewSession::new("", "cli"), 10.0);
    assert!(s.request_handoff("", "telegram").unwrap(), "{n}");
    let empty = s.get_handoff_state("").unwrap().unwrap();
    assert_eq!(empty.state.as_deref(), Some("pending"), "{n}");

    let reader = b.read_only();
    let refused = [
        reader.request_handoff("idle", "discord").map(|_| ()),
        reader.claim_handoff("late").map(|_| ()),
        reader.complete_handoff("late"),
        reader.fail_handoff("late", "e"),
    ];
    for result in refused {
        assert_eq!(result.unwrap_err().kind(), ErrorKind::ReadOnly, "{n}");
    }
    let late = reader.get_handoff_state("late").unwrap().unwrap();
    assert_eq!(late.state.as_deref(), Some("pending"), "{n}");
    assert_eq!(reader.list_pending_handoffs().unwrap().len(), 3, "{n}");
}
