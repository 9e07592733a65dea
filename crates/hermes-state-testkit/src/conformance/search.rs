//! Search through the seam: the same hits for the same queries on every
//! backend, table-driven. Declared differences: without `sort`, SQLite ranks
//! by bm25 and PostgreSQL by `ts_rank_cd`, so those cases compare hit sets;
//! snippet windows differ, so cases check the marked term only.

use std::collections::BTreeSet;

use hermes_state_core::SessionStore;
use hermes_state_core::search::SearchOptions;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;

use super::Backend;

/// (session, source, role, content) in insertion order; message ids are 1…
const CORPUS: &[(&str, &str, &str, &str)] = &[
    ("s1", "cli", "user", "How do I fix the docker deployment?"),
    (
        "s1",
        "cli",
        "assistant",
        "Restart the docker daemon, then redeploy with docker-compose.",
    ),
    ("s1", "cli", "tool", "kubernetes pods: 3 running"),
    ("s2", "telegram", "user", "please concatenate these strings"),
    (
        "s2",
        "telegram",
        "assistant",
        "Python is nice, java is verbose",
    ),
    ("s2", "telegram", "user", "东京天气怎么样"),
    ("s3", "cli", "user", "修改youer服务端 deployment notes"),
    ("s3", "cli", "assistant", "deploying kubernetes clusters"),
];

fn fill(store: &dyn SessionStore) {
    for (i, (session, source, role, content)) in CORPUS.iter().enumerate() {
        store
            .create_session(&NewSession::new(*session, *source))
            .unwrap();
        let mut message = NewMessage::new(*session, *role)
            .content(*content)
            .timestamp(1000.0 + i as f64);
        if *role == "tool" {
            message.tool_name = Some("kubectl".into());
        }
        store.append_message(&message).unwrap();
    }
}

fn ids(store: &dyn SessionStore, query: &str, options: &SearchOptions) -> Vec<i64> {
    store
        .search_messages(query, options)
        .unwrap()
        .iter()
        .map(|h| h.id)
        .collect()
}

fn set(ids: &[i64]) -> BTreeSet<i64> {
    ids.iter().copied().collect()
}

pub fn the_same_queries_find_the_same_messages(backend: &dyn Backend) {
    let default = SearchOptions::default();
    let newest = SearchOptions {
        sort: Some("newest".into()),
        ..SearchOptions::default()
    };
    // (query, options, expected ids, order checked)
    let cases: Vec<(&str, &SearchOptions, Vec<i64>, bool)> = vec![
        ("docker", &newest, vec![2, 1], true),
        ("docker deployment", &default, vec![1], false),
        ("\"docker daemon\"", &default, vec![2], false),
        ("deploy*", &newest, vec![8, 7, 1], true),
        ("python OR kubernetes", &newest, vec![8, 5, 3], true),
        ("python NOT java", &default, vec![], false),
        ("kubernetes NOT pods", &default, vec![8], false),
        ("docker-compose", &default, vec![2], false),
        ("DOCKER", &default, vec![1, 2], false),
        // Zero word hits: the substring fallback (non-tool rows, >= 3 characters).
        ("cat", &default, vec![4], false),
        ("ca", &default, vec![], false),
        // CJK: a 2-character term takes the LIKE route; >= 3 characters the substring route.
        ("东京", &default, vec![6], false),
        ("东京天气", &default, vec![6], false),
        ("youer", &default, vec![7], false),
        // Nothing to search, or a query FTS5 cannot parse: no hits, no error.
        ("", &default, vec![], false),
        ("AND", &default, vec![], false),
        ("50%", &default, vec![], false),
    ];
    let b = backend.open();
    let store = b.store.as_ref();
    fill(store);
    for (query, options, expected, ordered) in &cases {
        let found = ids(store, query, options);
        if *ordered {
            assert_eq!(&found, expected, "{}: {query:?}", b.name());
        } else {
            assert_eq!(set(&found), set(expected), "{}: {query:?}", b.name());
        }
    }
}

pub fn filters_paging_snippets_and_context_agree(backend: &dyn Backend) {
    let b = backend.open();
    let store = b.store.as_ref();
    fill(store);
    let by_source = SearchOptions {
        source_filter: Some(vec!["telegram".into()]),
        ..SearchOptions::default()
    };
    assert_eq!(
        ids(store, "python OR docker", &by_source),
        [5],
        "{}",
        b.name()
    );
    let excluded = SearchOptions {
        exclude_sources: Some(vec!["cli".into()]),
        ..SearchOptions::default()
    };
    assert_eq!(
        ids(store, "python OR docker", &excluded),
        [5],
        "{}",
        b.name()
    );
    let tools = SearchOptions {
        role_filter: Some(vec!["tool".into()]),
        ..SearchOptions::default()
    };
    assert_eq!(ids(store, "kubernetes", &tools), [3], "{}", b.name());
    let paged = SearchOptions {
        sort: Some("oldest".into()),
        limit: 1,
        offset: 1,
        ..SearchOptions::default()
    };
    assert_eq!(ids(store, "docker", &paged), [2], "{}", b.name());

    let hit = &store
        .search_messages("daemon", &SearchOptions::default())
        .unwrap()[0];
    assert!(
        hit.snippet.contains(">>>daemon<<<"),
        "{}: {}",
        b.name(),
        hit.snippet
    );
    assert_eq!(
        (hit.source.as_deref(), hit.role.as_str()),
        (Some("cli"), "assistant")
    );
    let context: Vec<_> = hit
        .context
        .iter()
        .map(|c| (c.role.as_str(), c.is_hit))
        .collect();
    assert_eq!(
        context,
        [("user", false), ("assistant", true), ("tool", false)],
        "{}",
        b.name()
    );
    assert_eq!(
        hit.context[0].content,
        "How do I fix the docker deployment?"
    );
}
