//! The handoff state machine (`api.md` §2.5) through the seam.

use hermes_state_core::session_updates::HANDOFF_ERROR_MAX_CHARS;
use hermes_state_core::session_updates::HandoffState;
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
