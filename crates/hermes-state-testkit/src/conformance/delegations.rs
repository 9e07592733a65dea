//! Async delegations through the seam (`api.md` §12.3, `schema-v23.md`
//! §4.8): recording, moving the state, finishing, reading and listing, with
//! the same rows, orders and error kinds on both backends.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hermes_state_core::coordination::Delegation;
use hermes_state_core::coordination::DelegationFilter;
use hermes_state_types::ErrorKind;
use hermes_state_types::NewDelegation;
use hermes_state_types::NewSession;

use super::Backend;

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A delegation without its times, which come from each store's clock.
fn timeless(d: &Delegation) -> Delegation {
    Delegation {
        dispatched_at: 0.0,
        updated_at: 0.0,
        completed_at: d.completed_at.map(|_| 0.0),
        ..d.clone()
    }
}

pub fn a_delegation_is_recorded_moved_and_finished_keeping_absent_json_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    let mut new = NewDelegation::new("d1", "origin", "running");
    new.origin_ui_session_id = "ui-7".into();
    new.parent_session_id = Some("parent".into());
    new.task_json = Some(r#"{"goal": "g"}"#.into());
    new.event_json = Some(r#"{"type": "started"}"#.into());
    new.owner_pid = Some(4242);
    new.owner_started_at = Some(1_700_000_000);
    let before = now();
    s.record_delegation(&new).unwrap();
    let row = s.get_delegation("d1").unwrap().unwrap();
    assert_eq!(
        row,
        Delegation {
            delegation_id: "d1".into(),
            origin_session: "origin".into(),
            origin_ui_session_id: "ui-7".into(),
            parent_session_id: Some("parent".into()),
            state: "running".into(),
            dispatched_at: row.dispatched_at,
            completed_at: None,
            updated_at: row.dispatched_at,
            event_json: Some(r#"{"type": "started"}"#.into()),
            result_json: None,
            delivery_state: "pending".into(),
            delivery_attempts: 0,
            delivered_at: None,
            owner_pid: Some(4242),
            owner_started_at: Some(1_700_000_000),
            task_json: Some(r#"{"goal": "g"}"#.into()),
            delivery_claim: None,
            delivery_claimed_at: None,
        },
        "{n}"
    );
    assert!(
        row.dispatched_at >= before - 1.0 && row.dispatched_at <= now() + 1.0,
        "{n}: dispatched now"
    );
    // The defaults of a minimal record.
    s.record_delegation(&NewDelegation::new("d2", "origin", "queued"))
        .unwrap();
    let minimal = s.get_delegation("d2").unwrap().unwrap();
    assert_eq!(
        (
            minimal.origin_ui_session_id.as_str(),
            minimal.parent_session_id.as_deref(),
            minimal.event_json.as_deref(),
            minimal.task_json.as_deref(),
            minimal.owner_pid,
            minimal.owner_started_at,
        ),
        ("", None, None, None, None, None),
        "{n}"
    );

    std::thread::sleep(Duration::from_millis(20));
    assert!(
        s.update_delegation_state("d1", "progress", Some(r#"{"type": "progress"}"#))
            .unwrap(),
        "{n}"
    );
    let moved = s.get_delegation("d1").unwrap().unwrap();
    assert_eq!(moved.state, "progress", "{n}");
    assert_eq!(
        moved.event_json.as_deref(),
        Some(r#"{"type": "progress"}"#),
        "{n}"
    );
    assert!(moved.updated_at > row.updated_at, "{n}");
    assert_eq!(moved.dispatched_at, row.dispatched_at, "{n}");
    assert!(s.update_delegation_state("d1", "running", None).unwrap());
    assert_eq!(
        s.get_delegation("d1")
            .unwrap()
            .unwrap()
            .event_json
            .as_deref(),
        Some(r#"{"type": "progress"}"#),
        "{n}: no event keeps the stored one"
    );

    std::thread::sleep(Duration::from_millis(20));
    assert!(
        s.finish_delegation("d1", "completed", Some(r#"{"summary": "done"}"#))
            .unwrap(),
        "{n}"
    );
    let done = s.get_delegation("d1").unwrap().unwrap();
    assert_eq!(done.state, "completed", "{n}");
    assert_eq!(
        done.result_json.as_deref(),
        Some(r#"{"summary": "done"}"#),
        "{n}"
    );
    let completed_at = done.completed_at.unwrap();
    assert_eq!(completed_at, done.updated_at, "{n}");
    assert!(completed_at > moved.updated_at, "{n}");
    assert_eq!(done.delivery_state, "pending", "{n}: delivery untouched");
    // Finishing again overwrites the state and the time, keeps the
    // result when none is given.
    std::thread::sleep(Duration::from_millis(20));
    assert!(s.finish_delegation("d1", "error", None).unwrap(), "{n}");
    let again = s.get_delegation("d1").unwrap().unwrap();
    assert_eq!(again.state, "error", "{n}");
    assert_eq!(again.result_json, done.result_json, "{n}");
    assert!(again.completed_at.unwrap() > completed_at, "{n}");

    // Unknown ids: no row, no error.
    assert!(
        !s.update_delegation_state("nope", "x", None).unwrap(),
        "{n}"
    );
    assert!(
        !s.finish_delegation("nope", "x", Some("{}")).unwrap(),
        "{n}"
    );
    assert_eq!(s.get_delegation("nope").unwrap(), None, "{n}");
    assert_eq!(s.get_delegation("").unwrap(), None, "{n}");

    let all = s.list_delegations(&DelegationFilter::default()).unwrap();
    // Every backend holds the same rows, but for the clock's times.
    let rows: Vec<_> = all.iter().map(timeless).collect();
    super::agreed::check(
        "delegations::a_delegation_is_recorded_moved_and_finished_keeping_absent_json_alike",
        n,
        &rows,
    );
}

pub fn delegation_ids_are_required_and_unique_with_the_same_error_kinds_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.record_delegation(&NewDelegation::new("d", "o", "queued"))
        .unwrap();
    let duplicate = s
        .record_delegation(&NewDelegation::new("d", "o2", "running"))
        .unwrap_err();
    assert_eq!(duplicate.kind(), ErrorKind::Constraint, "{n}: {duplicate}");
    let kept = s.get_delegation("d").unwrap().unwrap();
    assert_eq!(
        (kept.origin_session.as_str(), kept.state.as_str()),
        ("o", "queued"),
        "{n}: the first record stays"
    );
    let empty = s
        .record_delegation(&NewDelegation::new("", "o", "queued"))
        .unwrap_err();
    assert_eq!(empty.kind(), ErrorKind::InvalidInput, "{n}: {empty}");
    assert_eq!(
        s.list_delegations(&DelegationFilter::default())
            .unwrap()
            .len(),
        1,
        "{n}: nothing else written"
    );
}

pub fn delegations_are_listed_by_every_filter_in_dispatch_order_ties_by_byte_order_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    for (id, origin, state) in [
        ("c", "s1", "running"),
        ("a", "s2", "running"),
        ("b", "s1", "queued"),
    ] {
        s.record_delegation(&NewDelegation::new(id, origin, state))
            .unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    s.finish_delegation("a", "completed", Some("{}")).unwrap();
    // The delivery side marks one delivered on its own connection.
    b.exec(
        "UPDATE async_delegations SET delivery_state = 'delivered', \
         delivery_attempts = 1, delivered_at = 5.0, delivery_claim = 'w1', \
         delivery_claimed_at = 4.5 WHERE delegation_id = 'c'",
    );
    let ids = |filter: &DelegationFilter| -> Vec<String> {
        s.list_delegations(filter)
            .unwrap()
            .into_iter()
            .map(|d| d.delegation_id)
            .collect()
    };
    let filter =
        |state: Option<&str>, delivery: Option<&str>, origin: Option<&str>| DelegationFilter {
            state: state.map(String::from),
            delivery_state: delivery.map(String::from),
            origin_session: origin.map(String::from),
        };
    let mut lists = Vec::new();
    let mut check = |filter: DelegationFilter, expected: &[&str], why: &str| {
        let got = ids(&filter);
        assert_eq!(got, expected, "{n}: {why}");
        lists.push(got);
    };
    check(filter(None, None, None), &["c", "a", "b"], "dispatch order");
    check(filter(None, None, Some("s1")), &["c", "b"], "by origin");
    check(filter(Some("running"), None, None), &["c"], "by state");
    check(
        filter(None, Some("pending"), None),
        &["a", "b"],
        "by delivery",
    );
    check(
        filter(Some("completed"), Some("pending"), Some("s2")),
        &["a"],
        "every filter",
    );
    check(filter(Some("completed"), None, Some("s1")), &[], "none");
    check(filter(Some("RUNNING"), None, None), &[], "exact match");
    let delivered = s.get_delegation("c").unwrap().unwrap();
    assert_eq!(
        (
            delivered.delivery_state.as_str(),
            delivered.delivery_attempts,
            delivered.delivered_at,
            delivered.delivery_claim.as_deref(),
            delivered.delivery_claimed_at,
        ),
        ("delivered", 1, Some(5.0), Some("w1"), Some(4.5)),
        "{n}"
    );

    // Ties on dispatched_at are ordered by id, bytes compared: upper
    // case before `_` before lower case (no locale order).
    for id in ["_x", "B"] {
        s.record_delegation(&NewDelegation::new(id, "s3", "queued"))
            .unwrap();
    }
    b.exec("UPDATE async_delegations SET dispatched_at = 1.0");
    check(
        filter(None, None, None),
        &["B", "_x", "a", "b", "c"],
        "ties by byte order",
    );
    super::agreed::check(
        "delegations::delegations_are_listed_by_every_filter_in_dispatch_order_ties_by_byte_order_alike",
        n,
        &(lists),
    );
}

pub fn delegations_outlive_their_sessions_through_delete_and_prune_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.create_session(&NewSession::new("origin", "cli")).unwrap();
    s.create_session(&NewSession::new("old", "cli")).unwrap();
    s.end_session("old", "user_exit").unwrap();
    let mut new = NewDelegation::new("d", "origin", "running");
    new.parent_session_id = Some("old".into());
    s.record_delegation(&new).unwrap();
    assert!(s.delete_session("origin").unwrap(), "{n}");
    let pruned = s
        .prune_sessions(&hermes_state_core::prune::PruneOptions {
            older_than_days: None,
            ..hermes_state_core::prune::PruneOptions::default()
        })
        .unwrap();
    assert_eq!(pruned.ids, ["old"], "{n}: the ended session is pruned");
    let row = s.get_delegation("d").unwrap().unwrap();
    assert_eq!(
        (
            row.origin_session.as_str(),
            row.parent_session_id.as_deref()
        ),
        ("origin", Some("old")),
        "{n}"
    );
}
