//! `search_conversations`: search hits collapsed by compression lineage
//! (`api.md` §9.2 for what a compression child is, §8 for the search).

use hermes_state::rusqlite::types::Value as Sql;
use hermes_state::{ConversationHit, ConversationScope, SearchOptions};

use super::lookups::{add, end, message, set};
use crate::common::Store;
use hermes_state_core::store::Search;

fn t(text: &str) -> Sql {
    Sql::Text(text.to_owned())
}

fn options(sort: Option<&str>, limit: u32, offset: u32) -> SearchOptions {
    SearchOptions {
        sort: sort.map(str::to_owned),
        limit,
        offset,
        ..SearchOptions::default()
    }
}

fn search(store: &Store, query: &str, options: &SearchOptions) -> Vec<ConversationHit> {
    store
        .db
        .search_conversations(query, options)
        .expect("search_conversations")
}

fn roots(found: &[ConversationHit]) -> Vec<&str> {
    found.iter().map(|c| c.root_session_id.as_str()).collect()
}

/// `root` → `mid` → `tip`, each ended by compression but the tip, each with
/// one message about bikes (at 10, 20, 30).
fn three_segments(store: &Store) {
    add(store, "root", "cli", 1.0, None);
    add(store, "mid", "cli", 15.0, Some("root"));
    add(store, "tip", "cli", 25.0, Some("mid"));
    end(store, "root", "compression", 15.0);
    end(store, "mid", "compression", 25.0);
    message(store, "root", "user", "shall we bike to the coast", 10.0);
    message(
        store,
        "mid",
        "assistant",
        "the bike route follows the river",
        20.0,
    );
    message(store, "tip", "user", "bike rental opens at nine", 30.0);
}

#[test]
fn a_lineage_of_three_segments_collapses_to_one_conversation() {
    let store = Store::new();
    three_segments(&store);
    set(&store, "root", "title", t("Coast trip"));
    set(&store, "tip", "title", t("Coast trip #3"));
    let found = search(&store, "bike", &SearchOptions::default());
    assert_eq!(found.len(), 1, "{found:#?}");
    let c = &found[0];
    assert_eq!(c.root_session_id, "root");
    assert_eq!(c.hits, 3);
    assert_eq!(c.session_ids, ["root", "mid", "tip"]);
    assert_eq!((c.first_timestamp, c.last_timestamp), (10.0, 30.0));
    // The title a picker shows: the compression tip's.
    assert_eq!(c.title.as_deref(), Some("Coast trip #3"));
    // The best hit is the search's own first hit.
    let hits = store
        .db
        .search_messages("bike", &SearchOptions::default())
        .unwrap();
    assert_eq!(c.best, hits[0]);
}

#[test]
fn the_title_falls_back_to_the_roots_when_the_tip_has_none() {
    let store = Store::new();
    three_segments(&store);
    set(&store, "root", "title", t("Coast trip"));
    let found = search(&store, "bike", &SearchOptions::default());
    assert_eq!(found[0].title.as_deref(), Some("Coast trip"));
}

#[test]
fn hits_in_some_segments_only_name_those_segments() {
    let store = Store::new();
    three_segments(&store);
    let found = search(&store, "river", &SearchOptions::default());
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].root_session_id, "root");
    assert_eq!(found[0].session_ids, ["mid"]);
    assert_eq!(found[0].hits, 1);
    assert_eq!(
        (found[0].first_timestamp, found[0].last_timestamp),
        (20.0, 20.0)
    );
}

#[test]
fn two_separate_conversations_stay_two() {
    let store = Store::new();
    add(&store, "a", "cli", 1.0, None);
    add(&store, "b", "telegram", 2.0, None);
    message(&store, "a", "user", "a bike ride", 10.0);
    message(&store, "a", "user", "another bike ride", 11.0);
    message(&store, "b", "user", "bike shop hours", 12.0);
    let found = search(&store, "bike", &options(Some("newest"), 20, 0));
    assert_eq!(roots(&found), ["b", "a"]);
    assert_eq!(found[1].hits, 2);
    assert_eq!(found[0].hits, 1);
}

#[test]
fn branches_delegates_and_other_children_are_their_own_conversations() {
    let store = Store::new();
    add(&store, "root", "cli", 1.0, None);
    end(&store, "root", "compression", 5.0);
    // A compression continuation: part of root's conversation.
    add(&store, "cont", "cli", 5.0, Some("root"));
    // Children of a compression-ended parent that are not continuations.
    add(&store, "branch", "cli", 6.0, Some("root"));
    set(
        &store,
        "branch",
        "model_config",
        t(r#"{"_branched_from": "root"}"#),
    );
    add(&store, "delegate", "cli", 7.0, Some("root"));
    set(
        &store,
        "delegate",
        "model_config",
        t(r#"{"_delegate_from": "root"}"#),
    );
    add(&store, "tool", "tool", 8.0, Some("root"));
    // A branch by end reason: the parent ended `branched`.
    add(&store, "other", "cli", 20.0, None);
    end(&store, "other", "branched", 21.0);
    add(&store, "branch2", "cli", 22.0, Some("other"));
    // A child of a session that ended for another reason.
    add(&store, "closed", "cli", 30.0, None);
    end(&store, "closed", "user_exit", 31.0);
    add(&store, "after", "cli", 32.0, Some("closed"));
    for (i, id) in [
        "root", "cont", "branch", "delegate", "tool", "other", "branch2", "closed", "after",
    ]
    .iter()
    .enumerate()
    {
        message(&store, id, "user", "kayak plans", 100.0 + i as f64);
    }
    let found = search(&store, "kayak", &options(Some("oldest"), 20, 0));
    assert_eq!(
        roots(&found),
        [
            "root", "branch", "delegate", "tool", "other", "branch2", "closed", "after"
        ]
    );
    assert_eq!(found[0].session_ids, ["root", "cont"]);
    assert_eq!(found[0].hits, 2);
    assert!(found[1..].iter().all(|c| c.hits == 1));
    // A branch's own continuations belong to the branch.
    end(&store, "branch", "compression", 9.0);
    add(&store, "branch_cont", "cli", 9.0, Some("branch"));
    message(&store, "branch_cont", "user", "kayak rental", 200.0);
    let found = search(&store, "rental", &SearchOptions::default());
    assert_eq!(roots(&found), ["branch"]);
}

#[test]
fn conversations_come_in_the_order_of_their_best_hits() {
    let store = Store::new();
    three_segments(&store);
    add(&store, "x", "cli", 40.0, None);
    message(&store, "x", "user", "bike bike bike bike bike", 5.0);
    message(&store, "x", "user", "bike", 50.0);
    add(&store, "y", "cli", 41.0, None);
    message(&store, "y", "user", "a bike", 25.0);

    // Newest: x (50), then root's lineage (30), then y (25).
    let found = search(&store, "bike", &options(Some("newest"), 20, 0));
    assert_eq!(roots(&found), ["x", "root", "y"]);
    assert_eq!(found[0].best.timestamp, 50.0);
    assert_eq!(found[1].best.session_id, "tip");
    // Oldest: x (5), then root's lineage (10), then y (25).
    let found = search(&store, "bike", &options(Some("oldest"), 20, 0));
    assert_eq!(roots(&found), ["x", "root", "y"]);
    assert_eq!(found[0].best.timestamp, 5.0);
    assert_eq!(found[1].best.session_id, "root");

    // Relevance: the order in which the plain search first meets each
    // conversation.
    let hits = store
        .db
        .search_messages("bike", &SearchOptions::default())
        .unwrap();
    fn root_of(session: &str) -> &str {
        match session {
            "root" | "mid" | "tip" => "root",
            other => other,
        }
    }
    let mut expected: Vec<&str> = Vec::new();
    for hit in &hits {
        let root = root_of(&hit.session_id);
        if !expected.contains(&root) {
            expected.push(root);
        }
    }
    let found = search(&store, "bike", &SearchOptions::default());
    assert_eq!(roots(&found), expected);
    assert_eq!(found[0].best, hits[0]);
    assert_eq!(found[0].best.timestamp, 5.0, "five mentions rank first");
}

#[test]
fn limit_and_offset_count_conversations() {
    let store = Store::new();
    for n in 0..5 {
        let root = format!("r{n}");
        let child = format!("c{n}");
        let at = f64::from(n) * 100.0;
        add(&store, &root, "cli", at, None);
        end(&store, &root, "compression", at + 50.0);
        add(&store, &child, "cli", at + 50.0, Some(&root));
        message(&store, &root, "user", "ferry times", at + 10.0);
        message(&store, &child, "user", "ferry tickets", at + 60.0);
    }
    let all = search(&store, "ferry", &options(Some("newest"), 20, 0));
    assert_eq!(roots(&all), ["r4", "r3", "r2", "r1", "r0"]);
    assert!(all.iter().all(|c| c.hits == 2));
    let page = search(&store, "ferry", &options(Some("newest"), 2, 2));
    assert_eq!(roots(&page), ["r2", "r1"]);
    assert_eq!(page, all[2..4]);
    let last = search(&store, "ferry", &options(Some("newest"), 2, 4));
    assert_eq!(roots(&last), ["r0"]);
    assert!(search(&store, "ferry", &options(Some("newest"), 2, 5)).is_empty());
    assert!(search(&store, "ferry", &options(Some("newest"), 0, 0)).is_empty());
}

#[test]
fn hits_beyond_one_page_of_the_search_are_counted() {
    let store = Store::new();
    add(&store, "busy", "cli", 1.0, None);
    for n in 0..250 {
        message(
            &store,
            "busy",
            "user",
            "glacier hike",
            1000.0 + f64::from(n),
        );
    }
    add(&store, "quiet", "cli", 2.0, None);
    message(&store, "quiet", "user", "glacier photos", 10.0);
    let found = search(&store, "glacier", &options(Some("newest"), 20, 0));
    assert_eq!(roots(&found), ["busy", "quiet"]);
    assert_eq!(found[0].hits, 250);
    assert_eq!(
        (found[0].first_timestamp, found[0].last_timestamp),
        (1000.0, 1249.0)
    );
}

#[test]
fn a_query_without_hits_or_that_cannot_be_parsed_finds_no_conversation() {
    let store = Store::new();
    three_segments(&store);
    assert!(search(&store, "submarine", &SearchOptions::default()).is_empty());
    assert!(search(&store, "   ", &SearchOptions::default()).is_empty());
}

fn search_in(
    store: &Store,
    query: &str,
    options: &SearchOptions,
    scope: &ConversationScope,
) -> Vec<ConversationHit> {
    store
        .db
        .search_conversations_in(query, options, scope)
        .expect("search_conversations_in")
}

fn sessions(ids: &[&str]) -> Option<std::collections::HashSet<String>> {
    Some(ids.iter().map(|id| (*id).to_owned()).collect())
}

#[test]
fn a_scope_of_one_lineage_keeps_that_conversation_only() {
    let store = Store::new();
    three_segments(&store);
    add(&store, "other", "cli", 2.0, None);
    message(&store, "other", "user", "bike lights", 12.0);
    let everything = search(&store, "bike", &SearchOptions::default());
    assert_eq!(everything.len(), 2);

    let lineage = ConversationScope {
        sessions: sessions(&["root", "mid", "tip"]),
        ..ConversationScope::default()
    };
    let found = search_in(&store, "bike", &SearchOptions::default(), &lineage);
    assert_eq!(roots(&found), ["root"]);
    assert_eq!(found[0].hits, 3);
    assert_eq!(found[0].session_ids, ["root", "mid", "tip"]);

    // One segment of the lineage: the conversation is still named by its
    // root, but only that segment's hits count.
    let segment = ConversationScope {
        sessions: sessions(&["tip"]),
        ..ConversationScope::default()
    };
    let found = search_in(&store, "bike", &SearchOptions::default(), &segment);
    assert_eq!(roots(&found), ["root"]);
    assert_eq!(found[0].session_ids, ["tip"]);
    assert_eq!(found[0].hits, 1);
    assert_eq!(found[0].best.session_id, "tip");
    assert_eq!(
        (found[0].first_timestamp, found[0].last_timestamp),
        (30.0, 30.0)
    );
}

#[test]
fn a_time_window_counts_only_the_hits_inside_it() {
    let store = Store::new();
    three_segments(&store);
    // Hits at 10 (root), 20 (mid), 30 (tip); `until` is exclusive.
    let window = ConversationScope {
        since: Some(15.0),
        until: Some(30.0),
        ..ConversationScope::default()
    };
    for sort in [None, Some("newest"), Some("oldest")] {
        let found = search_in(&store, "bike", &options(sort, 20, 0), &window);
        assert_eq!(roots(&found), ["root"], "sort {sort:?}");
        assert_eq!(found[0].hits, 1, "sort {sort:?}");
        assert_eq!(found[0].session_ids, ["mid"], "sort {sort:?}");
        assert_eq!(
            (found[0].first_timestamp, found[0].last_timestamp),
            (20.0, 20.0)
        );
    }
    let since = ConversationScope {
        since: Some(20.0),
        ..ConversationScope::default()
    };
    let found = search_in(&store, "bike", &options(Some("newest"), 20, 0), &since);
    assert_eq!(found[0].session_ids, ["mid", "tip"]);
    assert_eq!(found[0].hits, 2);
    let nothing = ConversationScope {
        since: Some(31.0),
        ..ConversationScope::default()
    };
    assert!(search_in(&store, "bike", &SearchOptions::default(), &nothing).is_empty());
}

#[test]
fn a_window_read_in_time_order_finds_every_hit_inside_it() {
    // More hits than one page of the search, most of them outside the
    // window, in two conversations: newest first stops once past `since`,
    // oldest first once past `until`; both find exactly the hits inside.
    let store = Store::new();
    add(&store, "early", "cli", 1.0, None);
    add(&store, "late", "cli", 2.0, None);
    for n in 0..300 {
        let at = f64::from(n);
        let id = if n % 2 == 0 { "early" } else { "late" };
        message(&store, id, "user", "canyon trail", 1000.0 + at);
    }
    let window = ConversationScope {
        since: Some(1100.0),
        until: Some(1110.0),
        ..ConversationScope::default()
    };
    for sort in ["newest", "oldest"] {
        let found = search_in(&store, "canyon", &options(Some(sort), 20, 0), &window);
        let mut found_roots = roots(&found);
        found_roots.sort_unstable();
        assert_eq!(found_roots, ["early", "late"], "sort {sort}");
        assert!(found.iter().all(|c| c.hits == 5), "sort {sort}: {found:#?}");
        assert!(
            found
                .iter()
                .all(|c| c.first_timestamp >= 1100.0 && c.last_timestamp < 1110.0)
        );
    }
}

#[test]
fn the_default_scope_is_the_plain_conversation_search() {
    let store = Store::new();
    three_segments(&store);
    add(&store, "other", "cli", 2.0, None);
    message(&store, "other", "user", "bike lights", 12.0);
    for sort in [None, Some("newest"), Some("oldest")] {
        assert_eq!(
            search_in(
                &store,
                "bike",
                &options(sort, 20, 0),
                &ConversationScope::default()
            ),
            search(&store, "bike", &options(sort, 20, 0))
        );
    }
}
