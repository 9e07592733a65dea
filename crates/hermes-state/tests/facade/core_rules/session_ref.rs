//! `session_ref::resolve`: an exact id, `latest` (of a source), a title (the
//! newest numbered continuation first), a unique id prefix, in that order.

use hermes_state::NewSession;
use hermes_state::session_ref::{MAX_CANDIDATES, SessionRef, resolve};

use crate::conformance::backends;

fn found(id: &str) -> SessionRef {
    SessionRef::Found(id.into())
}

fn ambiguous(ids: &[&str]) -> SessionRef {
    SessionRef::Ambiguous(ids.iter().map(|id| (*id).to_owned()).collect())
}

#[test]
fn ids_latest_titles_and_prefixes_resolve_alike() {
    for b in backends("session_ref") {
        let s = &*b.store;
        let n = b.name();
        // (id, source, started_at, title)
        let sessions = [
            ("20260101_aaa111", "cli", 100, Some("Paris")),
            ("20260101_aab222", "cli", 200, Some("Paris #2")),
            ("20260102_bbb333", "telegram", 300, None),
            ("x9", "cli", 50, Some("2026")),
            ("20260101", "cli", 40, None),
            ("y7", "cli", 30, Some("20260102_b")),
        ];
        for (id, source, started, title) in sessions {
            s.create_session(&NewSession::new(id, source)).unwrap();
            b.exec(&format!(
                "UPDATE sessions SET started_at = {started} WHERE id = '{id}'"
            ));
            if let Some(title) = title {
                s.set_session_title(id, Some(title)).unwrap();
            }
        }
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
            // A title comes before an id prefix.
            ("2026", None, found("x9")),
            ("20260102_b", None, found("y7")),
            // A unique prefix, ASCII case-insensitive.
            ("20260102", None, found("20260102_bbb333")),
            ("20260102_BBB", None, found("20260102_bbb333")),
            // A shared prefix lists its ids, the most recently active first.
            (
                "20260101_aa",
                None,
                ambiguous(&["20260101_aab222", "20260101_aaa111"]),
            ),
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
}

#[test]
fn an_ambiguous_prefix_lists_one_more_than_it_shows() {
    for b in backends("session_ref: many candidates") {
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
}

#[test]
fn latest_in_an_empty_store_names_no_session() {
    for b in backends("session_ref: empty") {
        let s = &*b.store;
        assert_eq!(resolve(s, "latest", None).unwrap(), SessionRef::NoSessions);
        assert_eq!(resolve(s, "anything", None).unwrap(), SessionRef::Unknown);
    }
}
