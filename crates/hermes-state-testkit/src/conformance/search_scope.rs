//! The core crate's `search_scope` on a store: single search hits
//! restricted to a compression lineage and a time window, `offset` and
//! `limit` counting the hits in scope.

use std::collections::HashSet;

use hermes_state_core::SessionStore;
use hermes_state_core::conversation_search::ConversationScope;
use hermes_state_core::search::SearchOptions;
use hermes_state_core::search_scope::{lineage_scope, search_messages_in};
use hermes_state_types::NewSession;

use super::Backend;
use crate::build::{child, say};

/// `root` → `mid` → `tip`, ended by compression, with one hit each (at 10,
/// 20, 30), and `other`, outside the chain, with one at 12.
fn chain_and_other(s: &dyn SessionStore) {
    s.create_session(&NewSession::new("root", "cli")).unwrap();
    s.create_session(&child("mid", "root")).unwrap();
    s.create_session(&child("tip", "mid")).unwrap();
    s.create_session(&NewSession::new("other", "cli")).unwrap();
    s.end_session("root", "compression").unwrap();
    s.end_session("mid", "compression").unwrap();
    for (id, at) in [
        ("root", 10.0),
        ("other", 12.0),
        ("mid", 20.0),
        ("tip", 30.0),
    ] {
        say(s, id, format!("bike talk in {id}"), at);
    }
}

fn sessions(ids: &[&str]) -> Option<HashSet<String>> {
    Some(ids.iter().map(|id| (*id).to_owned()).collect())
}

fn sorted(sort: &str, limit: u32, offset: u32) -> SearchOptions {
    SearchOptions {
        sort: Some(sort.into()),
        limit,
        offset,
        ..SearchOptions::default()
    }
}

pub fn a_lineage_scope_is_the_whole_chain_or_one_segment_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    chain_and_other(s);
    let scope = |id, segment_only| Some(lineage_scope(s, id, segment_only).unwrap());
    assert_eq!(
        scope("mid", false),
        sessions(&["root", "mid", "tip"]),
        "{n}"
    );
    assert_eq!(scope("mid", true), sessions(&["mid"]), "{n}");
    assert_eq!(scope("other", false), sessions(&["other"]), "{n}");
}

pub fn scoped_hits_are_counted_by_offset_and_limit_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &*b.store;
    let n = b.name();
    chain_and_other(s);
    let lineage = ConversationScope {
        sessions: sessions(&["root", "mid", "tip"]),
        ..ConversationScope::default()
    };
    let in_window = ConversationScope {
        since: Some(12.0),
        until: Some(30.0),
        ..ConversationScope::default()
    };
    let both = ConversationScope {
        sessions: lineage.sessions.clone(),
        ..in_window.clone()
    };
    let cases: &[(&ConversationScope, SearchOptions, &[&str])] = &[
        (&lineage, sorted("newest", 10, 0), &["tip", "mid", "root"]),
        (&lineage, sorted("oldest", 10, 0), &["root", "mid", "tip"]),
        (&lineage, sorted("newest", 1, 1), &["mid"]),
        (&in_window, sorted("newest", 10, 0), &["mid", "other"]),
        (&in_window, sorted("oldest", 10, 0), &["other", "mid"]),
        (&both, sorted("oldest", 10, 0), &["mid"]),
        (&both, sorted("oldest", 10, 1), &[]),
    ];
    for (scope, options, expected) in cases {
        let hits = search_messages_in(s, "bike", options, scope).unwrap();
        let got: Vec<_> = hits.iter().map(|h| h.session_id.as_str()).collect();
        assert_eq!(&got, expected, "{n}: {scope:?} {options:?}");
    }
    // Ranked hits are filtered alike (compared as a set: ranks differ).
    let ranked = search_messages_in(s, "bike", &SearchOptions::default(), &in_window).unwrap();
    let got: HashSet<_> = ranked.iter().map(|h| h.session_id.as_str()).collect();
    assert_eq!(got, HashSet::from(["mid", "other"]), "{n}");
    // The default scope is the search itself.
    let options = sorted("oldest", 2, 1);
    assert_eq!(
        search_messages_in(s, "bike", &options, &ConversationScope::default()).unwrap(),
        s.search_messages("bike", &options).unwrap(),
        "{n}"
    );
}
