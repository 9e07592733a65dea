//! Search by conversation through the seam (`api.md` §8 hits collapsed by
//! the compression chains of §9.2), in and out of a scope.
//!
//! Declared differences, as for `search`: with `sort` unset SQLite ranks by
//! bm25 and PostgreSQL by `ts_rank_cd`, so those cases compare the
//! conversations as a set (root, title, hit count, segments, time span) and
//! not their order nor which hit is the best; snippet windows differ, so no
//! case compares snippets. With `sort = newest|oldest` everything but the
//! snippet is compared, order and best hit included.

use std::collections::{BTreeSet, HashSet};

use hermes_state_core::conversation_search::ConversationHit;
use hermes_state_core::conversation_search::ConversationScope;
use hermes_state_core::search::SearchOptions;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use serde_json::json;

use super::{Backend, TestStore};
use crate::build::{child, say_as};

fn options(sort: Option<&str>, limit: u32, offset: u32) -> SearchOptions {
    SearchOptions {
        sort: sort.map(str::to_owned),
        limit,
        offset,
        ..SearchOptions::default()
    }
}

/// What both backends return alike for a conversation, whatever the
/// ranking: no best hit, no snippet.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Shape {
    root: String,
    title: Option<String>,
    hits: usize,
    sessions: Vec<String>,
    first: String,
    last: String,
}

fn shape(c: &ConversationHit) -> Shape {
    Shape {
        root: c.root_session_id.clone(),
        title: c.title.clone(),
        hits: c.hits,
        sessions: c.session_ids.clone(),
        first: c.first_timestamp.to_string(),
        last: c.last_timestamp.to_string(),
    }
}

/// A conversation with its best hit, but for the snippet (time orders).
fn ordered(found: &[ConversationHit]) -> Vec<(Shape, i64, String)> {
    found
        .iter()
        .map(|c| (shape(c), c.best.id, c.best.session_id.clone()))
        .collect()
}

fn roots(found: &[ConversationHit]) -> Vec<&str> {
    found.iter().map(|c| c.root_session_id.as_str()).collect()
}

/// `root` → `mid` → `tip`, each ended by compression but the tip, each with
/// one message about bikes (at 10, 20, 30); titles on the root and the tip.
fn three_segments(b: &TestStore) {
    let s = &b.store;
    b.add(NewSession::new("root", "cli"), 1.0);
    b.add(child("mid", "root"), 15.0);
    b.add(child("tip", "mid"), 25.0);
    s.end_session("root", "compression").unwrap();
    s.end_session("mid", "compression").unwrap();
    say_as(&**b, "root", "user", "shall we bike to the coast", 10.0);
    say_as(
        &**b,
        "mid",
        "assistant",
        "the bike route follows the river",
        20.0,
    );
    say_as(&**b, "tip", "user", "bike rental opens at nine", 30.0);
    s.set_session_title("root", Some("Coast trip")).unwrap();
    s.set_session_title("tip", Some("Coast trip #3")).unwrap();
}

pub fn a_compression_chain_collapses_to_one_conversation_titled_by_its_tip_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    three_segments(&b);
    b.add(NewSession::new("other", "telegram"), 2.0);
    say_as(&*b, "other", "user", "bike lights", 12.0);
    b.add(NewSession::new("untitled", "cli"), 3.0);
    say_as(&*b, "untitled", "user", "no match here", 13.0);

    // Ranked: compared as a set.
    let found = s
        .search_conversations("bike", &SearchOptions::default())
        .unwrap();
    let set: BTreeSet<Shape> = found.iter().map(shape).collect();
    let expected = BTreeSet::from([
        Shape {
            root: "root".into(),
            title: Some("Coast trip #3".into()),
            hits: 3,
            sessions: vec!["root".into(), "mid".into(), "tip".into()],
            first: "10".into(),
            last: "30".into(),
        },
        Shape {
            root: "other".into(),
            title: None,
            hits: 1,
            sessions: vec!["other".into()],
            first: "12".into(),
            last: "12".into(),
        },
    ]);
    assert_eq!(set, expected, "{n}");
    // Whatever the ranking, a conversation's best hit is the search's
    // first hit of that conversation.
    let hits = s
        .search_messages("bike", &SearchOptions::default())
        .unwrap();
    for c in &found {
        let first = hits
            .iter()
            .find(|h| c.session_ids.contains(&h.session_id))
            .unwrap();
        assert_eq!(c.best, *first, "{n}");
    }
    // Hits in one segment only name that segment.
    let river = s
        .search_conversations("river", &SearchOptions::default())
        .unwrap();
    assert_eq!(
        river.iter().map(shape).collect::<Vec<_>>(),
        vec![Shape {
            root: "root".into(),
            title: Some("Coast trip #3".into()),
            hits: 1,
            sessions: vec!["mid".into()],
            first: "20".into(),
            last: "20".into(),
        }],
        "{n}"
    );
    // The title falls back to the root's when the tip has none.
    s.set_session_title("tip", None).unwrap();
    let found = s
        .search_conversations("rental", &SearchOptions::default())
        .unwrap();
    assert_eq!(found[0].title.as_deref(), Some("Coast trip"), "{n}");

    // Time orders: everything but the snippet is the same.
    let newest = s
        .search_conversations("bike", &options(Some("newest"), 20, 0))
        .unwrap();
    assert_eq!(roots(&newest), ["root", "other"], "{n}");
    assert_eq!(newest[0].best.session_id, "tip", "{n}");
    let oldest = s
        .search_conversations("bike", &options(Some("oldest"), 20, 0))
        .unwrap();
    assert_eq!(roots(&oldest), ["root", "other"], "{n}");
    assert_eq!(oldest[0].best.session_id, "root", "{n}");
    super::agreed::check(
        "conversation_search::a_compression_chain_collapses_to_one_conversation_titled_by_its_tip_alike",
        n,
        &(ordered(&newest), ordered(&oldest)),
    );
}

pub fn branches_delegates_tool_sessions_and_other_children_are_conversations_of_their_own_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("root", "cli"), 1.0);
    b.add(child("cont", "root"), 5.0);
    let mut branch = child("branch", "root");
    branch.model_config = Some(json!({"_branched_from": "root"}));
    b.add(branch, 6.0);
    let mut delegate = child("delegate", "root");
    delegate.model_config = Some(json!({"_delegate_from": "root"}));
    b.add(delegate, 7.0);
    let mut tool = child("tool", "root");
    tool.source = "tool".into();
    b.add(tool, 8.0);
    // A marker that is JSON null is no marker.
    let mut nulled = child("nulled", "root");
    nulled.model_config = Some(json!({"_branched_from": null}));
    b.add(nulled, 9.0);
    s.end_session("root", "compression").unwrap();
    b.add(NewSession::new("other", "cli"), 20.0);
    s.end_session("other", "branched").unwrap();
    b.add(child("branch2", "other"), 22.0);
    b.add(NewSession::new("closed", "cli"), 30.0);
    s.end_session("closed", "user_exit").unwrap();
    b.add(child("after", "closed"), 32.0);
    for (i, id) in [
        "root", "cont", "branch", "delegate", "tool", "nulled", "other", "branch2", "closed",
        "after",
    ]
    .iter()
    .enumerate()
    {
        say_as(&*b, id, "user", "kayak plans", 100.0 + i as f64);
    }
    let found = s
        .search_conversations("kayak", &options(Some("oldest"), 20, 0))
        .unwrap();
    assert_eq!(
        roots(&found),
        [
            "root", "branch", "delegate", "tool", "other", "branch2", "closed", "after"
        ],
        "{n}"
    );
    assert_eq!(found[0].session_ids, ["root", "cont", "nulled"], "{n}");
    assert_eq!(found[0].hits, 3, "{n}");
    assert!(found[1..].iter().all(|c| c.hits == 1), "{n}");
    // A branch's own continuations belong to the branch.
    s.end_session("branch", "compression").unwrap();
    b.add(child("branch_cont", "branch"), 40.0);
    say_as(&*b, "branch_cont", "user", "kayak rental", 200.0);
    let rental = s
        .search_conversations("rental", &SearchOptions::default())
        .unwrap();
    assert_eq!(roots(&rental), ["branch"], "{n}");
    assert_eq!(rental[0].session_ids, ["branch_cont"], "{n}");
    super::agreed::check(
        "conversation_search::branches_delegates_tool_sessions_and_other_children_are_conversations_of_their_own_alike",
        n,
        &(ordered(&found)),
    );
}

pub fn limit_and_offset_count_conversations_and_hits_past_one_search_page_count_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    for i in 0..5 {
        let root = format!("r{i}");
        let next = format!("c{i}");
        let at = f64::from(i) * 100.0;
        b.add(NewSession::new(&root, "cli"), at);
        b.add(child(&next, &root), at + 50.0);
        s.end_session(&root, "compression").unwrap();
        say_as(&*b, &root, "user", "ferry times", at + 10.0);
        say_as(&*b, &next, "user", "ferry tickets", at + 60.0);
    }
    let all = s
        .search_conversations("ferry", &options(Some("newest"), 20, 0))
        .unwrap();
    assert_eq!(roots(&all), ["r4", "r3", "r2", "r1", "r0"], "{n}");
    assert!(all.iter().all(|c| c.hits == 2), "{n}");
    let page = s
        .search_conversations("ferry", &options(Some("newest"), 2, 2))
        .unwrap();
    assert_eq!(page, all[2..4], "{n}");
    let last = s
        .search_conversations("ferry", &options(Some("newest"), 2, 4))
        .unwrap();
    assert_eq!(roots(&last), ["r0"], "{n}");
    for (limit, offset) in [(2, 5), (0, 0)] {
        assert!(
            s.search_conversations("ferry", &options(Some("newest"), limit, offset))
                .unwrap()
                .is_empty(),
            "{n}: limit {limit} offset {offset}"
        );
    }

    // 250 hits in one session: more than one page (200) of the search.
    b.add(NewSession::new("busy", "cli"), 1000.0);
    let many: Vec<NewMessage> = (0..250)
        .map(|i| {
            NewMessage::new("busy", "user")
                .content("glacier hike")
                .timestamp(1000.0 + f64::from(i))
        })
        .collect();
    s.append_messages(&many).unwrap();
    b.add(NewSession::new("quiet", "cli"), 1001.0);
    say_as(&*b, "quiet", "user", "glacier photos", 10.0);
    let glacier = s
        .search_conversations("glacier", &options(Some("newest"), 20, 0))
        .unwrap();
    assert_eq!(roots(&glacier), ["busy", "quiet"], "{n}");
    assert_eq!(glacier[0].hits, 250, "{n}");
    assert_eq!(
        (glacier[0].first_timestamp, glacier[0].last_timestamp),
        (1000.0, 1249.0),
        "{n}"
    );
    super::agreed::check(
        "conversation_search::limit_and_offset_count_conversations_and_hits_past_one_search_page_count_alike",
        n,
        &(ordered(&all), ordered(&glacier)),
    );
}

pub fn queries_without_hits_or_that_cannot_be_parsed_find_no_conversation_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    three_segments(&b);
    for query in ["submarine", "", "   ", "\"", "AND", "NOT", "bike NOT bike"] {
        let found = s
            .search_conversations(query, &SearchOptions::default())
            .unwrap();
        assert!(found.is_empty(), "{n}: {query:?} gave {found:#?}");
        let scoped = s
            .search_conversations_in(
                query,
                &SearchOptions::default(),
                &ConversationScope::default(),
            )
            .unwrap();
        assert!(scoped.is_empty(), "{n}: {query:?} in the default scope");
    }
    // Queries the sanitizer repairs find what both backends find.
    let mut repaired = Vec::new();
    for query in ["bike AND", "(bike", "bike\"", "bike*"] {
        let found = s
            .search_conversations(query, &SearchOptions::default())
            .unwrap();
        repaired.push((query, found.iter().map(shape).collect::<BTreeSet<_>>()));
    }
    // A source filter of no source matches nothing, an excluded one is
    // left out, as in the plain search.
    let none = SearchOptions {
        source_filter: Some(vec![]),
        ..SearchOptions::default()
    };
    assert!(
        s.search_conversations("bike", &none).unwrap().is_empty(),
        "{n}"
    );
    let not_cli = SearchOptions {
        exclude_sources: Some(vec!["cli".into()]),
        ..SearchOptions::default()
    };
    assert!(
        s.search_conversations("bike", &not_cli).unwrap().is_empty(),
        "{n}"
    );
    super::agreed::check(
        "conversation_search::queries_without_hits_or_that_cannot_be_parsed_find_no_conversation_alike",
        n,
        &(repaired),
    );
}

fn sessions(ids: &[&str]) -> Option<HashSet<String>> {
    Some(ids.iter().map(|id| (*id).to_owned()).collect())
}

pub fn a_scope_keeps_only_its_sessions_and_time_window_in_every_count_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    three_segments(&b);
    b.add(NewSession::new("other", "cli"), 2.0);
    say_as(&*b, "other", "user", "bike lights", 12.0);
    let mut results = Vec::new();
    let mut run = |sort: Option<&str>, scope: ConversationScope| {
        let found = s
            .search_conversations_in("bike", &options(sort, 20, 0), &scope)
            .unwrap();
        results.push(ordered(&found));
        found
    };

    // One lineage: that conversation only.
    let found = run(
        Some("newest"),
        ConversationScope {
            sessions: sessions(&["root", "mid", "tip"]),
            ..ConversationScope::default()
        },
    );
    assert_eq!(roots(&found), ["root"], "{n}");
    assert_eq!(found[0].hits, 3, "{n}");
    assert_eq!(found[0].session_ids, ["root", "mid", "tip"], "{n}");

    // One segment: named by its root, counting that segment's hits.
    let found = run(
        None,
        ConversationScope {
            sessions: sessions(&["tip"]),
            ..ConversationScope::default()
        },
    );
    assert_eq!(
        found.iter().map(shape).collect::<Vec<_>>(),
        vec![Shape {
            root: "root".into(),
            title: Some("Coast trip #3".into()),
            hits: 1,
            sessions: vec!["tip".into()],
            first: "30".into(),
            last: "30".into(),
        }],
        "{n}"
    );
    assert_eq!(found[0].best.session_id, "tip", "{n}");

    // A window (`until` exclusive) in every order.
    for sort in [None, Some("newest"), Some("oldest")] {
        let found = run(
            sort,
            ConversationScope {
                since: Some(15.0),
                until: Some(30.0),
                ..ConversationScope::default()
            },
        );
        assert_eq!(
            found.iter().map(shape).collect::<Vec<_>>(),
            vec![Shape {
                root: "root".into(),
                title: Some("Coast trip #3".into()),
                hits: 1,
                sessions: vec!["mid".into()],
                first: "20".into(),
                last: "20".into(),
            }],
            "{n}: sort {sort:?}"
        );
    }
    let found = run(
        Some("oldest"),
        ConversationScope {
            since: Some(12.0),
            ..ConversationScope::default()
        },
    );
    assert_eq!(roots(&found), ["other", "root"], "{n}");
    assert_eq!(found[1].session_ids, ["mid", "tip"], "{n}");
    let found = run(
        None,
        ConversationScope {
            since: Some(31.0),
            ..ConversationScope::default()
        },
    );
    assert!(found.is_empty(), "{n}");
    // The default scope is the plain search by conversation.
    for sort in [Some("newest"), Some("oldest")] {
        let scoped = run(sort, ConversationScope::default());
        let plain = s
            .search_conversations("bike", &options(sort, 20, 0))
            .unwrap();
        assert_eq!(scoped, plain, "{n}: sort {sort:?}");
    }
    // Every result but the ranked ones compared whole with the record;
    // the ranked ones (sort unset) hold one conversation each here, so
    // they compare too.
    super::agreed::check(
        "conversation_search::a_scope_keeps_only_its_sessions_and_time_window_in_every_count_alike",
        n,
        &(results),
    );
    // Ranked too, the default scope is the plain search, and a lineage
    // scope keeps that conversation alone.
    let ranked = SearchOptions::default();
    let scoped = |scope: &ConversationScope| s.search_conversations_in("bike", &ranked, scope);
    let plain = s.search_conversations("bike", &ranked).unwrap();
    assert_eq!(scoped(&ConversationScope::default()).unwrap(), plain, "{n}");
    let lineage = ConversationScope {
        sessions: sessions(&["root", "mid", "tip"]),
        ..ConversationScope::default()
    };
    let found = scoped(&lineage).unwrap();
    assert_eq!(roots(&found), ["root"], "{n}");
    assert_eq!(found[0].hits, 3, "{n}");
    assert_eq!(found[0].session_ids, ["root", "mid", "tip"], "{n}");
}

/// Conversations come in the order of their best hits: by time, a
/// conversation's newest (or oldest) hit places it; ranked, the order in
/// which the plain search first meets each, its first hit the best.
pub fn conversations_come_in_the_order_of_their_best_hits_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    three_segments(&b);
    b.add(NewSession::new("x", "cli"), 40.0);
    say_as(&*b, "x", "user", "bike bike bike bike bike", 5.0);
    say_as(&*b, "x", "user", "bike", 50.0);
    b.add(NewSession::new("y", "cli"), 41.0);
    say_as(&*b, "y", "user", "a bike", 25.0);
    let search = |sort| {
        s.search_conversations("bike", &options(sort, 20, 0))
            .unwrap()
    };
    // Newest: x (50), the chain (30), y (25); oldest: x (5), the chain
    // (10), y (25).
    for (sort, best, chain_best) in [("newest", 50.0, "tip"), ("oldest", 5.0, "root")] {
        let found = search(Some(sort));
        assert_eq!(roots(&found), ["x", "root", "y"], "{n}: {sort}");
        assert_eq!(found[0].best.timestamp, best, "{n}: {sort}");
        assert_eq!(found[1].best.session_id, chain_best, "{n}: {sort}");
        assert_eq!((found[0].hits, found[2].hits), (2, 1), "{n}: {sort}");
    }
    let hits = s
        .search_messages("bike", &SearchOptions::default())
        .unwrap();
    let mut first_met: Vec<&str> = Vec::new();
    for hit in &hits {
        let root = match hit.session_id.as_str() {
            "root" | "mid" | "tip" => "root",
            other => other,
        };
        if !first_met.contains(&root) {
            first_met.push(root);
        }
    }
    let found = search(None);
    assert_eq!(roots(&found), first_met, "{n}");
    assert_eq!(found[0].best, hits[0], "{n}");
    // bm25 and `ts_rank_cd` alike rank five mentions first.
    assert_eq!(found[0].best.timestamp, 5.0, "{n}");
}

pub fn a_window_read_in_time_order_past_one_search_page_finds_every_hit_inside_alike(
    backend: &dyn Backend,
) {
    let b = backend.open();
    let s = &b.store;
    let n = b.name();
    b.add(NewSession::new("early", "cli"), 1.0);
    b.add(NewSession::new("late", "cli"), 2.0);
    let many: Vec<NewMessage> = (0..300)
        .map(|i| {
            let id = if i % 2 == 0 { "early" } else { "late" };
            NewMessage::new(id, "user")
                .content("canyon trail")
                .timestamp(1000.0 + f64::from(i))
        })
        .collect();
    s.append_messages(&many).unwrap();
    let window = ConversationScope {
        since: Some(1100.0),
        until: Some(1110.0),
        ..ConversationScope::default()
    };
    let mut results = Vec::new();
    for sort in ["newest", "oldest"] {
        let found = s
            .search_conversations_in("canyon", &options(Some(sort), 20, 0), &window)
            .unwrap();
        let mut found_roots = roots(&found);
        found_roots.sort_unstable();
        assert_eq!(found_roots, ["early", "late"], "{n}: sort {sort}");
        assert!(found.iter().all(|c| c.hits == 5), "{n}: sort {sort}");
        assert!(
            found
                .iter()
                .all(|c| c.first_timestamp >= 1100.0 && c.last_timestamp < 1110.0),
            "{n}: sort {sort}"
        );
        results.push(ordered(&found));
    }
    super::agreed::check(
        "conversation_search::a_window_read_in_time_order_past_one_search_page_finds_every_hit_inside_alike",
        n,
        &(results),
    );
}
