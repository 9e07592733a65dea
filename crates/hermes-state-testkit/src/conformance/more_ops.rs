//! More of the `SessionDb` API through the seam (issue #13): replacing a
//! gateway routing scope (`api.md` §12.2), the compression chain (§9.2),
//! the working directories and finding sessions by id (§10.4), stamping
//! the newest matching message (§4.5), archiving idle sessions (§11.4).

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use hermes_state_core::gateway::GatewayPeer;
use hermes_state_core::lookups::PeerLookup;
use hermes_state_types::Content;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use serde_json::json;

use super::Backend;
use crate::build::say;

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

/// `api.md` §9.2, as the original answers (checked against it): the chain
/// through a session on it; `[id]` for a branch child, a later sibling of
/// the chain and a session outside any chain; `[]` for an unknown id.
pub fn compression_lineage_follows_the_original_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    let child = |id: &str, parent: &str| {
        let mut session = NewSession::new(id, "cli");
        session.parent_session_id = Some(parent.into());
        session
    };
    let branch_of = |id: &str, parent: &str| {
        let mut session = child(id, parent);
        session.model_config = Some(json!({"_branched_from": parent}));
        session
    };
    b.add(NewSession::new("root", "cli"), 1.0);
    s.end_session("root", "compression").unwrap();
    // An earlier branch of the root is not part of the chain.
    b.add(branch_of("branch", "root"), 2.0);
    b.add(child("mid", "root"), 3.0);
    b.add(child("later", "root"), 4.0);
    s.end_session("mid", "compression").unwrap();
    b.add(child("tip", "mid"), 5.0);
    say(&*b, "tip", "hello", 6.0);
    // A parent that did not end with compression starts no chain.
    b.add(NewSession::new("plain", "cli"), 7.0);
    b.add(child("plain-child", "plain"), 8.0);
    // A compacted branch starts a chain of its own: walking up stops
    // at the branch child.
    s.end_session("branch", "compression").unwrap();
    b.add(child("branch-tip", "branch"), 9.0);
    // A null marker is no marker.
    let mut unmarked = child("unmarked", "branch-tip");
    unmarked.model_config = Some(json!({"_branched_from": null}));
    s.end_session("branch-tip", "compression").unwrap();
    b.add(unmarked, 10.0);

    let chain = ["root", "mid", "tip"];
    let cases: &[(&str, &[&str])] = &[
        ("root", &chain),
        ("mid", &chain),
        ("tip", &chain),
        ("branch", &["branch"]),
        ("branch-tip", &["branch", "branch-tip", "unmarked"]),
        ("unmarked", &["branch", "branch-tip", "unmarked"]),
        ("later", &["later"]),
        ("plain", &["plain"]),
        ("plain-child", &["plain-child"]),
        ("nobody", &[]),
        ("", &[]),
    ];
    for (id, want) in cases {
        assert_eq!(
            s.get_compression_lineage(id).unwrap(),
            want.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
            "{n}: {id:?}"
        );
    }
}

pub fn working_directories_are_counted_with_their_last_activity_in_byte_order_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    for (i, cwd) in [
        Some("/b"),
        Some("/a"),
        Some("/a"),
        Some(""),
        None,
        Some("/B"),
        Some("  "),
    ]
    .into_iter()
    .enumerate()
    {
        let mut session = NewSession::new(format!("s{i}"), "cli");
        session.cwd = cwd.map(String::from);
        b.add(session, i as f64);
    }
    let mut archived = NewSession::new("old", "cli");
    archived.cwd = Some("/z".into());
    b.add(archived, 10.0);
    assert!(s.set_session_archived("old", true).unwrap(), "{n}");
    // The original's rows: each cwd that is not NULL and not only
    // spaces, its session count and newest `COALESCE(ended_at,
    // started_at, 0)`, in byte order.
    let cwds = |archived| {
        s.distinct_session_cwds(archived)
            .unwrap()
            .into_iter()
            .map(|c| (c.cwd, c.sessions, c.last_active))
            .collect::<Vec<_>>()
    };
    let live = vec![
        ("/B".to_owned(), 1, 5.0),
        ("/a".to_owned(), 2, 2.0),
        ("/b".to_owned(), 1, 0.0),
    ];
    assert_eq!(cwds(false), live, "{n}");
    assert_eq!(
        serde_json::to_value(s.distinct_session_cwds(false).unwrap()).unwrap()[0],
        json!({"cwd": "/B", "sessions": 1, "last_active": 5.0}),
        "{n}"
    );
    let mut all = live;
    all.push(("/z".to_owned(), 1, 10.0));
    assert_eq!(cwds(true), all, "{n}");
}

/// The original's `search_sessions_by_id`: the picker's rows by last
/// activity whose chain holds the (trimmed, lower-cased) fragment, ranked
/// exact id, then prefix, then the rest; a projected chain matches by its
/// root too. Expected rows measured on the original.
pub fn sessions_are_found_by_id_fragment_ranked_as_the_original_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    for (id, at) in [
        ("abc-1", 1.0),
        ("xABC-2", 2.0),
        ("x%y", 3.0),
        ("abd", 4.0),
        ("abc-3", 5.0),
        ("abc-10", 6.0),
        ("zabc-1", 20.0),
        ("old-root", 30.0),
        ("zab_x", 0.5),
    ] {
        b.add(NewSession::new(id, "cli"), at);
    }
    say(&*b, "abc-1", "late", 9.0);
    assert!(s.set_session_archived("abc-3", true).unwrap(), "{n}");
    s.end_session("old-root", "compression").unwrap();
    let mut tip = NewSession::new("new-tip", "cli");
    tip.parent_session_id = Some("old-root".into());
    b.add(tip, 32.0);
    say(&*b, "new-tip", "tip words", 40.0);
    type Found = Vec<(String, f64, Option<String>, String)>;
    let found = |query: &str, limit: u32, archived: bool| -> Found {
        s.search_sessions_by_id(query, limit, archived)
            .unwrap()
            .into_iter()
            .map(|row| {
                (
                    row.session.id,
                    row.last_active,
                    row.lineage_root_id,
                    row.preview,
                )
            })
            .collect()
    };
    let row = |id: &str, at: f64| (id.to_owned(), at, None, String::new());
    let abc_1 = ("abc-1".to_owned(), 9.0, None, "late".to_owned());
    let tip_row = (
        "new-tip".to_owned(),
        40.0,
        Some("old-root".to_owned()),
        "tip words".to_owned(),
    );
    let cases: [(&str, u32, bool, Found); 11] = [
        ("ab_", 10, true, vec![row("zab_x", 0.5)]),
        (
            "abc",
            10,
            false,
            vec![
                abc_1.clone(),
                row("abc-10", 6.0),
                row("zabc-1", 20.0),
                row("xABC-2", 2.0),
            ],
        ),
        ("ABC", 2, true, vec![abc_1.clone(), row("abc-10", 6.0)]),
        ("%", 10, true, vec![row("x%y", 3.0)]),
        ("", 10, true, vec![]),
        ("abc", 0, true, vec![]),
        (
            "abc-1",
            10,
            true,
            vec![abc_1.clone(), row("abc-10", 6.0), row("zabc-1", 20.0)],
        ),
        (" ABC-1 ", 2, true, vec![abc_1.clone(), row("abc-10", 6.0)]),
        ("old-root", 10, true, vec![tip_row.clone()]),
        ("tip", 10, true, vec![tip_row.clone()]),
        ("root", 10, true, vec![tip_row.clone()]),
    ];
    for (query, limit, archived, expected) in cases {
        assert_eq!(
            found(query, limit, archived),
            expected,
            "{n}: {query:?} {limit} {archived}"
        );
    }
}

pub fn the_newest_live_user_row_gets_api_content_only_when_its_content_matches_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("s", "cli"), 1.0);
    say(&*b, "s", "one", 2.0);
    say(&*b, "s", "two", 3.0);
    s.append_message(&NewMessage::new("s", "assistant").content("reply"))
        .unwrap();
    let text = |t: &str| Content::Text(t.into());
    let api = |id: &str| -> Vec<Option<String>> {
        s.get_messages(id)
            .unwrap()
            .into_iter()
            .map(|m| m.api_content)
            .collect()
    };
    assert_eq!(
        s.set_latest_user_api_content("s", Some(&text("one")), "w1")
            .unwrap(),
        0,
        "{n}: not the newest user row"
    );
    assert_eq!(
        s.set_latest_user_api_content("s", Some(&text("two")), "w2")
            .unwrap(),
        1,
        "{n}"
    );
    assert_eq!(api("s"), vec![None, Some("w2".into()), None], "{n}");
    assert_eq!(
        s.set_latest_user_api_content("s", None, "w3").unwrap(),
        0,
        "{n}: the content is not NULL"
    );
    let structured = Content::Structured(json!([{"type": "text", "text": "look"}]));
    let structured_id = s
        .append_message(&NewMessage::new("s", "user").content(structured.clone()))
        .unwrap();
    assert_eq!(
        s.set_latest_user_api_content("s", Some(&structured), "w4")
            .unwrap(),
        1,
        "{n}"
    );
    s.append_message(&NewMessage::new("s", "user")).unwrap();
    assert_eq!(
        s.set_latest_user_api_content("s", None, "w5").unwrap(),
        1,
        "{n}: None matches a NULL content"
    );
    assert_eq!(
        api("s"),
        vec![
            None,
            Some("w2".into()),
            None,
            Some("w4".into()),
            Some("w5".into())
        ],
        "{n}"
    );
    // Rewound rows are skipped: the newest live user row is `two` then.
    s.rewind_to_message("s", structured_id).unwrap();
    assert_eq!(
        s.set_latest_user_api_content("s", Some(&text("two")), "w6")
            .unwrap(),
        1,
        "{n}"
    );
    assert_eq!(api("s"), vec![None, Some("w6".into()), None], "{n}");
    for nobody in ["nobody", ""] {
        assert_eq!(
            s.set_latest_user_api_content(nobody, None, "x").unwrap(),
            0,
            "{n}"
        );
    }
}

pub fn the_newest_live_matching_message_gets_the_display_kind_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("s", "cli"), 1.0);
    say(&*b, "s", "hi", 2.0);
    s.append_message(&NewMessage::new("s", "assistant").content("hi"))
        .unwrap();
    let last = say(&*b, "s", "hi", 3.0);
    let shown = || -> Vec<(Option<String>, Option<String>)> {
        s.get_messages("s")
            .unwrap()
            .into_iter()
            .map(|m| (m.display_kind, m.display_metadata))
            .collect()
    };
    assert!(
        s.set_latest_matching_message_display_kind(
            "s",
            "user",
            "hi",
            "note",
            Some(&json!({"from": "cron"}))
        )
        .unwrap(),
        "{n}"
    );
    assert_eq!(
        shown(),
        vec![
            (None, None),
            (None, None),
            (Some("note".into()), Some(r#"{"from": "cron"}"#.into()))
        ],
        "{n}"
    );
    // Falsy metadata replaces what was there with NULL.
    assert!(
        s.set_latest_matching_message_display_kind("s", "user", "hi", "plain", Some(&json!({})))
            .unwrap(),
        "{n}"
    );
    assert_eq!(shown()[2], (Some("plain".into()), None), "{n}");
    assert!(
        s.set_latest_matching_message_display_kind("s", "assistant", "hi", "k", None)
            .unwrap(),
        "{n}"
    );
    assert_eq!(shown()[1], (Some("k".into()), None), "{n}");
    for (session, role, content, kind) in [
        ("s", "user", "absent", "k"),
        ("s", "tool", "hi", "k"),
        ("", "user", "hi", "k"),
        ("s", "user", "", "k"),
        ("s", "user", "hi", ""),
    ] {
        assert!(
            !s.set_latest_matching_message_display_kind(session, role, content, kind, None)
                .unwrap(),
            "{n}: {session:?} {role:?} {content:?} {kind:?}"
        );
    }
    assert_eq!(shown()[2], (Some("plain".into()), None), "{n}");
    assert!(
        !s.set_latest_matching_message_display_kind("nope", "user", "hi", "k", None)
            .unwrap(),
        "{n}"
    );
    // Metadata is stored as the original's JSON text; other rows' stays;
    // rewound rows do not match, the older live one does; the
    // model-facing columns are untouched.
    b.exec("UPDATE messages SET display_metadata = '{\"x\": 1}' WHERE role = 'assistant'");
    s.rewind_to_message("s", last).unwrap();
    let metadata = json!({"source": "cron", "n": 1.5, "name": "é"});
    assert!(
        s.set_latest_matching_message_display_kind("s", "user", "hi", "steer", Some(&metadata))
            .unwrap(),
        "{n}"
    );
    let stamped = (
        Some("steer".to_owned()),
        Some(r#"{"source": "cron", "n": 1.5, "name": "\u00e9"}"#.to_owned()),
    );
    let assistant = (Some("k".to_owned()), Some(r#"{"x": 1}"#.to_owned()));
    assert_eq!(shown(), [stamped, assistant], "{n}");
    // Without metadata the stamp clears what was there.
    assert!(
        s.set_latest_matching_message_display_kind("s", "assistant", "hi", "k2", None)
            .unwrap(),
        "{n}"
    );
    assert_eq!(shown()[1], (Some("k2".into()), None), "{n}");
    let first = &s.get_messages("s").unwrap()[0];
    assert_eq!(
        (first.role.as_str(), &first.content),
        ("user", &Some(Content::Text("hi".into()))),
        "{n}"
    );
}

pub fn idle_sessions_are_archived_pinned_ones_only_when_asked_alike(backend: &dyn Backend) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let days_ago = |days: f64| now - days * 86_400.0;
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("idle", "cli"), days_ago(10.0));
    b.add(NewSession::new("idle-pinned", "cli"), days_ago(10.0));
    assert!(s.set_session_pinned("idle-pinned", true).unwrap(), "{n}");
    b.add(NewSession::new("talked", "cli"), days_ago(10.0));
    say(&*b, "talked", "recent", days_ago(1.0));
    b.add(NewSession::new("fresh", "cli"), days_ago(2.0));
    b.add(NewSession::new("gone", "cli"), days_ago(20.0));
    assert!(s.set_session_archived("gone", true).unwrap(), "{n}");
    let archived = || -> Vec<String> {
        ["idle", "idle-pinned", "talked", "fresh", "gone"]
            .into_iter()
            .filter(|id| s.get_session(id).unwrap().unwrap().archived == 1)
            .map(String::from)
            .collect()
    };
    assert_eq!(s.archive_stale_sessions(7.0, true).unwrap(), 1, "{n}");
    assert_eq!(archived(), vec!["idle", "gone"], "{n}");
    assert_eq!(s.archive_stale_sessions(7.0, false).unwrap(), 1, "{n}");
    assert_eq!(archived(), vec!["idle", "idle-pinned", "gone"], "{n}");
    assert_eq!(s.archive_stale_sessions(7.0, false).unwrap(), 0, "{n}");
    // The original never fails on the age: NaN, negative and infinite
    // ages archive nothing.
    assert!(s.set_session_archived("idle", false).unwrap(), "{n}");
    for odd in [f64::NAN, -1.0, f64::INFINITY] {
        assert_eq!(s.archive_stale_sessions(odd, true).unwrap(), 0, "{n}");
    }
    assert_eq!(s.archive_stale_sessions(0.0, true).unwrap(), 3, "{n}");
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
