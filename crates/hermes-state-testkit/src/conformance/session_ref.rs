//! The core crate's `session_ref::resolve` on a store: an exact id,
//! `latest` (of a source), a title (the newest numbered continuation
//! first), a unique id prefix, in that order.

use hermes_state_core::session_ref::{MAX_CANDIDATES, SessionRef, resolve};
use hermes_state_types::NewSession;

use super::Backend;

fn found(id: &str) -> SessionRef {
    SessionRef::Found(id.into())
}

pub fn ids_latest_titles_and_prefixes_name_sessions_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    // (id, source, started_at, title)
    let sessions = [
        ("20260101_aaa111", "cli", 100.0, Some("Paris")),
        ("20260101_aab222", "cli", 200.0, Some("Paris #2")),
        ("20260102_bbb333", "telegram", 300.0, None),
        ("x9", "cli", 50.0, Some("2026")),
        ("20260101", "cli", 40.0, None),
        ("y7", "cli", 30.0, Some("20260102_b")),
    ];
    for (id, source, started, title) in sessions {
        b.add(NewSession::new(id, source), started);
        if let Some(title) = title {
            s.set_session_title(id, Some(title)).unwrap();
        }
    }
    let shared = SessionRef::Ambiguous(vec!["20260101_aab222".into(), "20260101_aaa111".into()]);
    let cases: &[(&str, Option<&str>, SessionRef)] = &[
        // An exact id, even one that is also a prefix of others.
        ("20260101_aaa111", None, found("20260101_aaa111")),
        ("20260101", None, found("20260101")),
        // `latest`: the newest start, of the source when given.
        ("latest", None, found("20260102_bbb333")),
        ("latest", Some("cli"), found("20260101_aab222")),
        ("latest", Some("discord"), SessionRef::NoSessions),
        // A title; a base title names its newest numbered continuation.
        ("Paris", None, found("20260101_aab222")),
        ("Paris #2", None, found("20260101_aab222")),
        // A title comes before an id prefix, a unique one too.
        ("2026", None, found("x9")),
        ("20260102_b", None, found("y7")),
        // A unique prefix, ASCII case-insensitive.
        ("20260102", None, found("20260102_bbb333")),
        ("20260102_BBB", None, found("20260102_bbb333")),
        // A shared prefix lists its ids, the most recently active first.
        ("20260101_aa", None, shared),
        ("Rome", None, SessionRef::Unknown),
        ("", None, SessionRef::Unknown),
    ];
    for (arg, source, expected) in cases {
        assert_eq!(
            &resolve(s, arg, *source).unwrap(),
            expected,
            "{n}: {arg:?} of {source:?}"
        );
    }
}

pub fn an_ambiguous_prefix_lists_one_more_candidate_than_it_shows_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    for i in 0..MAX_CANDIDATES + 3 {
        s.create_session(&NewSession::new(format!("many-{i:02}"), "cli"))
            .unwrap();
    }
    let SessionRef::Ambiguous(candidates) = resolve(s, "many-", None).unwrap() else {
        panic!("{n}: a shared prefix is ambiguous")
    };
    assert_eq!(candidates.len(), MAX_CANDIDATES + 1, "{n}");
    assert!(candidates.iter().all(|id| id.starts_with("many-")), "{n}");
}

pub fn latest_in_an_empty_store_names_no_session_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    assert_eq!(
        resolve(s, "latest", None).unwrap(),
        SessionRef::NoSessions,
        "{n}"
    );
    assert_eq!(
        resolve(s, "anything", None).unwrap(),
        SessionRef::Unknown,
        "{n}"
    );
}
