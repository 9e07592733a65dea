//! Async delegations.

use super::*;
use hermes_state_core::store::Cleanup;
use hermes_state_core::store::Coordination;
use hermes_state_core::store::Sessions;

#[test]
fn delegation_record_update_finish() {
    let (_dir, db) = temp_db();
    let mut new = NewDelegation::new("d1", "origin", "running");
    new.parent_session_id = Some("parent".to_owned());
    new.task_json = Some(r#"{"goal":"g"}"#.to_owned());
    new.event_json = Some(r#"{"type":"started"}"#.to_owned());
    new.owner_pid = Some(4242);
    new.owner_started_at = Some(1_700_000_000);
    let before = unix_now();
    db.record_delegation(&new).expect("record");

    let row = db.get_delegation("d1").expect("get").expect("exists");
    assert_eq!(
        row,
        Delegation {
            dispatched_at: row.dispatched_at,
            updated_at: row.dispatched_at,
            delegation_id: "d1".into(),
            origin_session: "origin".into(),
            origin_ui_session_id: String::new(),
            parent_session_id: Some("parent".into()),
            state: "running".into(),
            completed_at: None,
            event_json: Some(r#"{"type":"started"}"#.into()),
            result_json: None,
            delivery_state: "pending".into(),
            delivery_attempts: 0,
            delivered_at: None,
            owner_pid: Some(4242),
            owner_started_at: Some(1_700_000_000),
            task_json: Some(r#"{"goal":"g"}"#.into()),
            delivery_claim: None,
            delivery_claimed_at: None,
        }
    );
    assert!(row.dispatched_at >= before - 1.0 && row.dispatched_at <= unix_now() + 1.0);

    std::thread::sleep(Duration::from_millis(20));
    assert!(
        db.update_delegation_state("d1", "progress", Some(r#"{"type":"progress"}"#))
            .expect("update")
    );
    let updated = db.get_delegation("d1").expect("get").expect("exists");
    assert_eq!(updated.state, "progress");
    assert_eq!(
        updated.event_json.as_deref(),
        Some(r#"{"type":"progress"}"#)
    );
    assert!(updated.updated_at > row.updated_at);
    assert_eq!(updated.dispatched_at, row.dispatched_at);
    assert!(
        db.update_delegation_state("d1", "running", None)
            .expect("update")
    );
    assert_eq!(
        db.get_delegation("d1")
            .expect("get")
            .expect("exists")
            .event_json
            .as_deref(),
        Some(r#"{"type":"progress"}"#),
        "no event keeps the stored one"
    );

    std::thread::sleep(Duration::from_millis(20));
    assert!(
        db.finish_delegation("d1", "completed", Some(r#"{"summary":"done"}"#))
            .expect("finish")
    );
    let done = db.get_delegation("d1").expect("get").expect("exists");
    assert_eq!(done.state, "completed");
    assert_eq!(done.result_json.as_deref(), Some(r#"{"summary":"done"}"#));
    let completed_at = done.completed_at.expect("completed_at");
    assert_eq!(completed_at, done.updated_at);
    assert!(completed_at > updated.updated_at);
    assert_eq!(done.delivery_state, "pending", "delivery is not touched");

    assert!(
        !db.update_delegation_state("nope", "x", None)
            .expect("update")
    );
    assert!(!db.finish_delegation("nope", "x", None).expect("finish"));
    assert!(db.get_delegation("nope").expect("get").is_none());
}

#[test]
fn delegation_ids_are_required_and_unique() {
    let (_dir, db) = temp_db();
    db.record_delegation(&NewDelegation::new("d", "o", "queued"))
        .expect("record");
    let duplicate = db
        .record_delegation(&NewDelegation::new("d", "o2", "queued"))
        .expect_err("duplicate");
    assert_eq!(duplicate.kind(), ErrorKind::Constraint, "{duplicate}");
    assert_eq!(
        db.get_delegation("d")
            .expect("get")
            .expect("exists")
            .origin_session,
        "o",
        "the first record stays"
    );
    let empty = db
        .record_delegation(&NewDelegation::new("", "o", "queued"))
        .expect_err("empty id");
    assert_eq!(empty.kind(), ErrorKind::InvalidInput);
}

#[test]
fn delegation_list_filters_and_order() {
    let (_dir, db) = temp_db();
    for (id, origin, state) in [
        ("c", "s1", "running"),
        ("a", "s2", "running"),
        ("b", "s1", "queued"),
    ] {
        db.record_delegation(&NewDelegation::new(id, origin, state))
            .expect("record");
        std::thread::sleep(Duration::from_millis(5));
    }
    db.finish_delegation("a", "completed", Some("{}"))
        .expect("finish");
    // The delivery side marks one delivered, on its own connection.
    let other = hermes_state::rusqlite::Connection::open(db.path()).expect("other connection");
    other
        .execute(
            "UPDATE async_delegations SET delivery_state = 'delivered', delivery_attempts = 1, delivered_at = 5.0 WHERE delegation_id = 'c'",
            [],
        )
        .expect("deliver");

    let ids = |filter: &DelegationFilter| -> Vec<String> {
        db.list_delegations(filter)
            .expect("list")
            .into_iter()
            .map(|d| d.delegation_id)
            .collect()
    };
    assert_eq!(
        ids(&DelegationFilter::default()),
        ["c", "a", "b"],
        "dispatch order"
    );
    assert_eq!(
        ids(&DelegationFilter {
            origin_session: Some("s1".into()),
            ..DelegationFilter::default()
        }),
        ["c", "b"]
    );
    assert_eq!(
        ids(&DelegationFilter {
            state: Some("running".into()),
            ..DelegationFilter::default()
        }),
        ["c"]
    );
    assert_eq!(
        ids(&DelegationFilter {
            delivery_state: Some("pending".into()),
            ..DelegationFilter::default()
        }),
        ["a", "b"]
    );
    assert_eq!(
        ids(&DelegationFilter {
            state: Some("completed".into()),
            delivery_state: Some("pending".into()),
            origin_session: Some("s2".into()),
        }),
        ["a"]
    );
    assert!(
        ids(&DelegationFilter {
            state: Some("completed".into()),
            origin_session: Some("s1".into()),
            ..DelegationFilter::default()
        })
        .is_empty()
    );
    let delivered = db.get_delegation("c").expect("get").expect("exists");
    assert_eq!(delivered.delivery_attempts, 1);
    assert_eq!(delivered.delivered_at, Some(5.0));

    // Ties on dispatched_at are ordered by id.
    other
        .execute("UPDATE async_delegations SET dispatched_at = 1.0", [])
        .expect("tie");
    assert_eq!(ids(&DelegationFilter::default()), ["a", "b", "c"]);
}

#[test]
fn delegations_survive_deleting_their_sessions() {
    let (_dir, db) = temp_db();
    db.create_session(&NewSession::new("origin", "cli"))
        .expect("create");
    let mut new = NewDelegation::new("d", "origin", "running");
    new.parent_session_id = Some("origin".into());
    db.record_delegation(&new).expect("record");
    assert!(db.delete_session("origin").expect("delete"));
    let row = db.get_delegation("d").expect("get").expect("kept");
    assert_eq!(row.origin_session, "origin");
    assert_eq!(row.parent_session_id.as_deref(), Some("origin"));
}
