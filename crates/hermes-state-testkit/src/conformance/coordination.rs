//! The coordination tables through the seam (`api.md` §12): `state_meta`
//! writes, the gateway routing map (entries and whole scopes), compression
//! locks, and the gateway's sessions (peers recorded, sessions found by
//! origin or peer, the newest row per key).

use std::collections::BTreeMap;

use hermes_state_core::gateway::GatewayPeer;
use hermes_state_core::lookups::PeerLookup;
use hermes_state_types::NewSession;
use serde_json::json;

use super::Backend;
use crate::build::say;

pub fn state_meta_is_written_and_replaced_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    assert_eq!(s.get_meta("k").unwrap(), None, "{n}");
    s.set_meta("k", "one").unwrap();
    s.set_meta("k", "two").unwrap();
    s.set_meta("empty", "").unwrap();
    assert_eq!(s.get_meta("k").unwrap().as_deref(), Some("two"), "{n}");
    assert_eq!(s.get_meta("empty").unwrap().as_deref(), Some(""), "{n}");
}

pub fn gateway_routing_entries_are_saved_loaded_and_deleted_per_scope_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.save_gateway_routing_entry("b-key", r#"{"chat": 2}"#, "")
        .unwrap();
    s.save_gateway_routing_entry("a-key", r#"{"chat": 1}"#, "")
        .unwrap();
    s.save_gateway_routing_entry("a-key", r#"{"chat": 10}"#, "")
        .unwrap();
    s.save_gateway_routing_entry("a-key", r#"{"other": true}"#, "profile-x")
        .unwrap();
    // Empty keys or entries are ignored.
    s.save_gateway_routing_entry("", "{}", "").unwrap();
    s.save_gateway_routing_entry("c-key", "", "").unwrap();
    let default = s.load_gateway_routing_entries("").unwrap();
    assert_eq!(
        default,
        BTreeMap::from([
            ("a-key".to_owned(), r#"{"chat": 10}"#.to_owned()),
            ("b-key".to_owned(), r#"{"chat": 2}"#.to_owned()),
        ]),
        "{n}"
    );
    assert_eq!(
        s.load_gateway_routing_entries("profile-x").unwrap().len(),
        1,
        "{n}"
    );
    assert!(
        s.load_gateway_routing_entries("nobody").unwrap().is_empty(),
        "{n}"
    );
    s.delete_gateway_routing_entries(&["a-key", "missing"], "")
        .unwrap();
    s.delete_gateway_routing_entries(&[], "").unwrap();
    assert_eq!(
        s.load_gateway_routing_entries("")
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["b-key"],
        "{n}"
    );
    assert_eq!(
        s.load_gateway_routing_entries("profile-x").unwrap().len(),
        1,
        "{n}: other scopes untouched"
    );
}

pub fn compression_locks_are_held_refreshed_released_and_reclaimed_on_expiry_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    assert!(
        s.try_acquire_compression_lock("s", "host-a:pid=1", 300.0),
        "{n}"
    );
    assert!(
        s.try_acquire_compression_lock("s", "host-a:pid=1", 300.0),
        "{n}: re-acquire"
    );
    assert!(
        !s.try_acquire_compression_lock("s", "host-b:pid=1", 300.0),
        "{n}"
    );
    assert!(!s.try_acquire_compression_lock("", "host-a", 300.0), "{n}");
    assert_eq!(
        s.get_compression_lock_holder("s").unwrap().as_deref(),
        Some("host-a:pid=1"),
        "{n}"
    );
    assert!(
        s.refresh_compression_lock("s", "host-a:pid=1", 600.0),
        "{n}"
    );
    assert!(
        !s.refresh_compression_lock("s", "host-b:pid=1", 600.0),
        "{n}"
    );
    // Another holder's release leaves the lock alone.
    s.release_compression_lock("s", "host-b:pid=1");
    assert_eq!(
        s.get_compression_lock_holder("s").unwrap().as_deref(),
        Some("host-a:pid=1"),
        "{n}"
    );
    s.release_compression_lock("s", "host-a:pid=1");
    assert_eq!(s.get_compression_lock_holder("s").unwrap(), None, "{n}");
    assert!(
        s.try_acquire_compression_lock("s", "host-b:pid=1", 300.0),
        "{n}"
    );

    // An expired lease (a negative ttl expires at once) is taken over,
    // and cannot be refreshed by its old holder.
    assert!(s.try_acquire_compression_lock("e", "old", -1.0), "{n}");
    assert_eq!(
        s.get_compression_lock_holder("e").unwrap(),
        None,
        "{n}: expired"
    );
    assert!(!s.refresh_compression_lock("e", "old", 300.0), "{n}");
    assert!(s.try_acquire_compression_lock("e", "new", 300.0), "{n}");
    assert_eq!(
        s.get_compression_lock_holder("e").unwrap().as_deref(),
        Some("new"),
        "{n}"
    );
    assert_eq!(s.get_compression_lock_holder("").unwrap(), None, "{n}");

    // A live lease whose holder names a process that cannot exist
    // (above Linux's largest pid). SQLite reclaims it at once: the
    // process is provably gone on this machine. PostgreSQL does not:
    // a pid says nothing about a process on another host, so the lease
    // lasts until it expires (docs/POSTGRES.md).
    assert!(
        s.try_acquire_compression_lock("d", "pid=4194400:host-c", 300.0),
        "{n}"
    );
    let taken = s.try_acquire_compression_lock("d", "pid=1:host-d", 300.0);
    // Per backend: SQLite `true` (on Linux, where it can prove the
    // process gone), PostgreSQL `false`.
    let expected = n == "sqlite" && cfg!(target_os = "linux");
    assert_eq!(taken, expected, "{n}");
}

pub fn replacing_a_routing_scope_drops_empty_pairs_keeps_the_last_duplicate_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    s.save_gateway_routing_entry("old", "{}", "").unwrap();
    s.save_gateway_routing_entry("kept", r#"{"x": 1}"#, "other")
        .unwrap();
    s.replace_gateway_routing_entries(
        &[
            ("k1", r#"{"a": 1}"#),
            ("", "{}"),
            ("k2", ""),
            ("k3", "first"),
            ("k3", "last"),
        ],
        "",
    )
    .unwrap();
    assert_eq!(
        s.load_gateway_routing_entries("").unwrap(),
        BTreeMap::from([
            ("k1".to_owned(), r#"{"a": 1}"#.to_owned()),
            ("k3".to_owned(), "last".to_owned()),
        ]),
        "{n}"
    );
    assert_eq!(
        s.load_gateway_routing_entries("other").unwrap(),
        BTreeMap::from([("kept".to_owned(), r#"{"x": 1}"#.to_owned())]),
        "{n}"
    );
    s.replace_gateway_routing_entries(&[], "").unwrap();
    assert!(
        s.load_gateway_routing_entries("").unwrap().is_empty(),
        "{n}"
    );
    assert_eq!(
        s.load_gateway_routing_entries("other").unwrap().len(),
        1,
        "{n}"
    );
}

fn gateway(
    id: &str,
    source: &str,
    key: Option<&str>,
    chat: &str,
    user: Option<&str>,
) -> NewSession {
    let mut session = NewSession::new(id, source);
    session.session_key = key.map(String::from);
    session.chat_id = Some(chat.into());
    session.user_id = user.map(String::from);
    session
}

pub fn a_gateway_peer_is_recorded_overwriting_the_tuple_and_keeping_absent_extras_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("g", "cli"), 1.0);
    let mut peer = GatewayPeer {
        source: "telegram".into(),
        session_key: "agent:main:telegram:dm:42".into(),
        user_id: Some("42".into()),
        chat_id: Some("c42".into()),
        chat_type: Some("dm".into()),
        thread_id: Some("t1".into()),
        display_name: Some("Ann".into()),
        origin_json: Some(r#"{"platform": "telegram"}"#.into()),
    };
    s.record_gateway_session_peer("g", &peer).unwrap();
    let row = s.get_session("g").unwrap().unwrap();
    assert_eq!(
        (
            row.source.as_str(),
            row.session_key.as_deref(),
            row.user_id.as_deref(),
            row.chat_id.as_deref(),
            row.chat_type.as_deref(),
            row.thread_id.as_deref(),
            row.display_name.as_deref(),
            row.origin_json.as_deref(),
        ),
        (
            "telegram",
            Some("agent:main:telegram:dm:42"),
            Some("42"),
            Some("c42"),
            Some("dm"),
            Some("t1"),
            Some("Ann"),
            Some(r#"{"platform": "telegram"}"#)
        ),
        "{n}"
    );
    peer.thread_id = None;
    peer.user_id = None;
    peer.display_name = None;
    peer.origin_json = None;
    s.record_gateway_session_peer("g", &peer).unwrap();
    let row = s.get_session("g").unwrap().unwrap();
    assert_eq!((row.user_id, row.thread_id), (None, None), "{n}");
    assert_eq!(row.display_name.as_deref(), Some("Ann"), "{n}");
    assert!(row.origin_json.is_some(), "{n}");
    // Without a key or an id nothing is written.
    peer.session_key = String::new();
    peer.source = "discord".into();
    s.record_gateway_session_peer("g", &peer).unwrap();
    s.record_gateway_session_peer("", &peer).unwrap();
    let row = s.get_session("g").unwrap().unwrap();
    assert_eq!(row.source, "telegram", "{n}");
    // An unknown session is no error.
    peer.session_key = "k".into();
    s.record_gateway_session_peer("nobody", &peer).unwrap();
    assert_eq!(s.get_session("nobody").unwrap(), None, "{n}");
    // Every peer field given as None is cleared, the extras kept; an
    // existing `''` session is left alone.
    let bare = GatewayPeer {
        source: "discord".into(),
        session_key: "k2".into(),
        ..GatewayPeer::default()
    };
    b.add(NewSession::new("", "cli"), 2.0);
    for id in ["g", ""] {
        s.record_gateway_session_peer(id, &bare).unwrap();
    }
    let columns = [
        "session_key",
        "source",
        "user_id",
        "chat_id",
        "chat_type",
        "thread_id",
        "display_name",
        "origin_json",
    ];
    assert_eq!(
        b.columns("g", &columns),
        json!([
            "k2",
            "discord",
            null,
            null,
            null,
            null,
            "Ann",
            r#"{"platform": "telegram"}"#
        ])
        .as_array()
        .unwrap()
        .as_slice(),
        "{n}"
    );
    assert_eq!(
        b.columns("", &columns[..2]),
        [json!(null), json!("cli")],
        "{n}"
    );
}

pub fn a_session_is_found_by_origin_preferring_the_user_and_refusing_ambiguity_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(gateway("g1", "telegram", Some("k1"), "c1", Some("u1")), 1.0);
    b.add(gateway("g2", "Telegram", Some("k2"), "c1", Some("u2")), 2.0);
    let mut ended = gateway("g3", "telegram", Some("k3"), "c1", Some("u1"));
    ended.thread_id = Some("t1".into());
    b.add(ended, 3.0);
    s.end_session("g3", "user_exit").unwrap();
    b.add(gateway("keyless", "telegram", None, "c1", Some("u1")), 4.0);
    b.add(gateway("g4", "telegram", Some("k4"), "c2", Some("u3")), 5.0);
    let find = |platform: &str, chat: &str, thread: Option<&str>, user: Option<&str>| {
        s.find_session_by_origin(platform, chat, thread, user)
            .unwrap()
    };
    assert_eq!(
        find("TELEGRAM", "c1", None, Some("u1")).as_deref(),
        Some("g1"),
        "{n}"
    );
    assert_eq!(
        find("telegram", "c1", None, Some("u2")).as_deref(),
        Some("g2"),
        "{n}"
    );
    assert_eq!(find("telegram", "c1", None, Some("u9")), None, "{n}");
    assert_eq!(find("telegram", "c1", None, None), None, "{n}: two users");
    assert_eq!(
        find("telegram", "c2", None, None).as_deref(),
        Some("g4"),
        "{n}"
    );
    assert_eq!(
        find("telegram", "c2", None, Some("zz")).as_deref(),
        Some("g4"),
        "{n}"
    );
    assert_eq!(
        find("telegram", "c2", Some(""), None).as_deref(),
        Some("g4"),
        "{n}"
    );
    assert_eq!(find("telegram", "c2", Some("t"), None), None, "{n}");
    assert_eq!(
        find("telegram", "c1", Some("t1"), None),
        None,
        "{n}: g3 ended"
    );
    assert_eq!(find("", "c1", None, None), None, "{n}");
    assert_eq!(find("telegram", "", None, None), None, "{n}");
    assert_eq!(find("discord", "c1", None, None), None, "{n}");
    // Of one user's sessions the newest; an ended one does not make a
    // chat ambiguous; a given thread must match, `''` matches none.
    b.add(gateway("o1", "telegram", Some("k5"), "c3", Some("u5")), 6.0);
    let mut threaded = gateway("o2", "telegram", Some("k5"), "c3", Some("u5"));
    threaded.thread_id = Some("t1".into());
    b.add(threaded, 7.0);
    b.add(gateway("o3", "telegram", Some("k6"), "c3", Some("u6")), 8.0);
    s.end_session("o3", "session_reset").unwrap();
    for (thread, user, expected) in [
        (None, None, "o2"),
        (None, Some("u5"), "o2"),
        (Some("t1"), None, "o2"),
        (Some(""), None, "o1"),
    ] {
        let found = find("telegram", "c3", thread, user);
        assert_eq!(found.as_deref(), Some(expected), "{n}: {thread:?} {user:?}");
    }
}

pub fn the_latest_recoverable_session_of_a_peer_is_found_by_key_then_by_peer_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    let dm = |id: &str, key: &str| {
        let mut session = gateway(id, "discord", Some(key), "c", Some("u"));
        session.chat_type = Some("dm".into());
        session
    };
    b.add(dm("p1", "K"), 1.0);
    say(&*b, "p1", "hi", 1.5);
    b.add(dm("p2", "K"), 2.0);
    b.add(dm("p3", "K"), 3.0);
    say(&*b, "p3", "hi", 3.5);
    s.end_session("p3", "user_exit").unwrap();
    b.add(dm("p4", "K2"), 4.0);
    say(&*b, "p4", "hi", 4.5);
    s.end_session("p4", "agent_close").unwrap();
    let found = |peer: PeerLookup| {
        s.find_latest_gateway_session_for_peer(&peer)
            .unwrap()
            .map(|session| session.id)
    };
    let peer = |key: Option<&str>| PeerLookup {
        source: "discord".into(),
        session_key: key.map(String::from),
        user_id: Some("u".into()),
        chat_id: Some("c".into()),
        chat_type: Some("dm".into()),
        thread_id: None,
    };
    assert_eq!(found(peer(Some("K"))).as_deref(), Some("p1"), "{n}");
    assert_eq!(found(peer(Some("K2"))).as_deref(), Some("p4"), "{n}");
    assert_eq!(
        found(peer(Some("unknown"))).as_deref(),
        Some("p4"),
        "{n}: by the whole peer"
    );
    assert_eq!(
        found(PeerLookup {
            chat_type: None,
            ..peer(Some("unknown"))
        }),
        None,
        "{n}"
    );
    assert_eq!(
        found(PeerLookup {
            thread_id: Some("t".into()),
            ..peer(Some("unknown"))
        }),
        None,
        "{n}"
    );
    assert_eq!(found(peer(None)), None, "{n}");
    assert_eq!(found(peer(Some(""))), None, "{n}");
    assert_eq!(
        found(PeerLookup {
            source: "Discord".into(),
            ..peer(Some("K"))
        }),
        None,
        "{n}: the source matches exactly"
    );
    // Ended by an orphan reap: recoverable; by a reset: not.
    for (id, key, reason) in [
        ("p5", "K5", "ws_orphan_reap"),
        ("p6", "K6", "session_reset"),
    ] {
        b.add(gateway(id, "discord", Some(key), "c9", Some("u9")), 6.0);
        say(&*b, id, "hi", 6.5);
        s.end_session(id, reason).unwrap();
    }
    let by_key = |key: &str| PeerLookup {
        source: "discord".into(),
        session_key: Some(key.into()),
        ..PeerLookup::default()
    };
    assert_eq!(found(by_key("K5")).as_deref(), Some("p5"), "{n}");
    assert_eq!(found(by_key("K6")), None, "{n}");
}

pub fn gateway_sessions_list_the_newest_row_per_key_most_recent_first_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(gateway("a-old", "telegram", Some("A"), "c", None), 1.0);
    b.add(gateway("a-new", "telegram", Some("A"), "c", None), 2.0);
    s.end_session("a-new", "user_exit").unwrap();
    b.add(gateway("b", "Discord", Some("B"), "c", None), 3.0);
    say(&*b, "b", "hi", 10.0);
    b.add(gateway("c", "telegram", Some("C"), "c", None), 5.0);
    b.add(NewSession::new("cli", "cli"), 20.0);
    let listed = |platform: Option<&str>, active_only: bool| -> Vec<(String, f64)> {
        s.list_gateway_sessions(platform, active_only)
            .unwrap()
            .into_iter()
            .map(|row| (row.session.id, row.last_active))
            .collect()
    };
    let all = vec![
        ("b".to_owned(), 10.0),
        ("c".to_owned(), 5.0),
        ("a-new".to_owned(), 2.0),
    ];
    assert_eq!(listed(None, false), all, "{n}");
    assert_eq!(listed(Some(""), false), all, "{n}");
    assert_eq!(
        listed(Some("DISCORD"), false),
        vec![("b".to_owned(), 10.0)],
        "{n}"
    );
    assert_eq!(
        listed(Some("telegram"), true),
        vec![("c".to_owned(), 5.0)],
        "{n}"
    );
    assert_eq!(
        listed(None, true),
        vec![("b".to_owned(), 10.0), ("c".to_owned(), 5.0)],
        "{n}"
    );
}
