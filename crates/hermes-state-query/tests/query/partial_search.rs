//! `search_partial`: every hit of a partial answer is a hit of the query,
//! newest first; the LIKE route's steps walk the ids down to the oldest and
//! together find what the search finds.

use std::collections::HashSet;

use hermes_state_query::search::{FtsCapabilities, SearchOptions, search_messages, search_partial};

use crate::common::Db;

/// 300 messages in 3 sessions: every third mentions `harbor`, every fifth
/// `数据库`, every seventh a lone `数` in `数字`; timestamps grow with ids.
fn store() -> Db {
    let db = Db::new();
    for s in 0..3 {
        db.session_from(
            &format!("s{s}"),
            if s == 2 { "telegram" } else { "cli" },
            1000.0,
        );
    }
    for i in 0..300_i64 {
        let mut text = format!("message {i} about the weather");
        if i % 3 == 0 {
            text.push_str(" near the harbor");
        }
        if i % 5 == 0 {
            text.push_str(" 数据库 配置");
        }
        if i % 7 == 0 {
            text.push_str(" 数字");
        }
        db.message(
            &format!("s{}", i % 3),
            "user",
            Some(&text),
            2000.0 + i as f64,
        );
    }
    db
}

/// Every hit of `query` under `options` (the search with a limit past them all).
fn all_hits(db: &Db, query: &str, options: &SearchOptions) -> HashSet<i64> {
    let conn = db.read_only();
    let caps = FtsCapabilities::detect(&conn).expect("capabilities");
    let every = SearchOptions {
        limit: 10_000,
        ..options.clone()
    };
    search_messages(&conn, query, &every, caps)
        .expect("search")
        .into_iter()
        .map(|h| h.id)
        .collect()
}

fn newest_first(ids: &[(f64, i64)]) -> bool {
    ids.windows(2).all(|w| (w[0].0, w[0].1) >= (w[1].0, w[1].1))
}

#[test]
fn an_index_route_gives_the_newest_matches_in_one_step() {
    let db = store();
    let conn = db.read_only();
    let caps = FtsCapabilities::detect(&conn).expect("capabilities");
    for (query, options) in [
        ("harbor", SearchOptions::default()),
        ("数据库", SearchOptions::default()),
        // Part of a word: the zero-hit fallback's index.
        ("arbo", SearchOptions::default()),
        (
            "harbor",
            SearchOptions {
                source_filter: Some(vec!["telegram".to_owned()]),
                limit: 7,
                ..SearchOptions::default()
            },
        ),
    ] {
        let every = all_hits(&db, query, &options);
        let step = search_partial(&conn, query, &options, caps, None, 50)
            .expect("partial")
            .expect("an index route has a partial answer");
        assert_eq!(step.next, None, "{query}: one step");
        assert_eq!(
            step.hits.len(),
            (options.limit as usize).min(every.len()),
            "{query}"
        );
        let ids: Vec<(f64, i64)> = step.hits.iter().map(|h| (h.timestamp, h.id)).collect();
        assert!(newest_first(&ids), "{query}: {ids:?}");
        // The newest of all the matches: here ids grow with time.
        let mut newest: Vec<i64> = every.iter().copied().collect();
        newest.sort_unstable_by(|a, b| b.cmp(a));
        newest.truncate(options.limit as usize);
        assert_eq!(
            ids.iter().map(|p| p.1).collect::<Vec<_>>(),
            newest,
            "{query}"
        );
        assert!(
            step.hits.iter().all(|h| !h.context.is_empty()),
            "{query}: context attached"
        );
    }
}

#[test]
fn the_like_route_walks_the_ids_down_in_steps_and_finds_what_the_search_finds() {
    let db = store();
    let conn = db.read_only();
    let caps = FtsCapabilities::detect(&conn).expect("capabilities");
    // A lone CJK character: the LIKE route.
    let options = SearchOptions {
        limit: 100,
        ..SearchOptions::default()
    };
    let every = all_hits(&db, "数", &options);
    assert!(!every.is_empty());
    let (mut found, mut below, mut steps) = (HashSet::new(), None, 0);
    loop {
        let step = search_partial(&conn, "数", &options, caps, below, 40)
            .expect("partial")
            .expect("the LIKE route has a partial answer");
        steps += 1;
        let ids: Vec<(f64, i64)> = step.hits.iter().map(|h| (h.timestamp, h.id)).collect();
        assert!(newest_first(&ids), "{ids:?}");
        for hit in &step.hits {
            // Only ids of this step's range, and only hits of the search.
            assert!(
                below.is_none_or(|b| hit.id < b),
                "{} below {below:?}",
                hit.id
            );
            assert!(
                every.contains(&hit.id),
                "{} is no hit of the search",
                hit.id
            );
            assert!(found.insert(hit.id), "{} found twice", hit.id);
        }
        match step.next {
            Some(next) => below = Some(next),
            None => break,
        }
    }
    assert_eq!(steps, 8, "300 ids in steps of 40");
    assert_eq!(found, every);
}

#[test]
fn no_partial_answer_for_an_empty_query_or_one_the_index_refuses() {
    let db = store();
    let conn = db.read_only();
    let caps = FtsCapabilities::detect(&conn).expect("capabilities");
    let options = SearchOptions::default();
    for query in ["", "   ", "50%"] {
        let step = search_partial(&conn, query, &options, caps, None, 50).expect("partial");
        assert_eq!(step, None, "{query:?}");
    }
}
