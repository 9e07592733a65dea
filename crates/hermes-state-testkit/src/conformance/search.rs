//! Search through the seam: the same hits for the same queries on every
//! backend, table-driven. Declared differences: without `sort`, SQLite ranks
//! by bm25 and PostgreSQL by `ts_rank_cd`, so those cases compare hit sets;
//! snippet windows differ, so cases check the marked term only.

use std::collections::BTreeSet;

use hermes_state_core::SessionStore;
use hermes_state_core::search::SearchOptions;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;
use serde_json::json;

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

/// `api.md` §8.6's store: two sessions with models, a tool call and its
/// result, CJK text and structured content; message ids are 1…8.
fn measured_store(store: &dyn SessionStore) {
    store
        .create_session(&NewSession::new("a", "cli").model("gpt"))
        .unwrap();
    store
        .create_session(&NewSession::new("b", "telegram").model("claude"))
        .unwrap();
    let call = json!([{"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": "{\"q\": \"kubernetes ingress\"}"}}]);
    let rows: Vec<NewMessage> = vec![
        NewMessage::new("a", "user").content("How do I fix the docker build? It fails on step 3."),
        NewMessage::new("a", "assistant")
            .content("The docker build fails because the base image is missing. Try docker pull first."),
        NewMessage::new("a", "assistant").tool_calls(call),
        NewMessage::new("a", "tool").content("search results about kubernetes").tool_result("web_search", "c1"),
        NewMessage::new("b", "user").content("chat-send is broken in P2.2 release"),
        NewMessage::new("b", "assistant").content("我们在大别山项目中使用docker部署。修改youer服务端"),
        NewMessage::new("b", "user").content("广西 桂林 漓江 旅游"),
        NewMessage::new("b", "user").content(json!([{"type": "text", "text": "multimodal docker picture"}, {"type": "image_url", "image_url": {"url": "x"}}])),
    ];
    for (i, row) in rows.into_iter().enumerate() {
        store
            .append_message(&row.timestamp(1001.0 + i as f64))
            .unwrap();
    }
}

/// A hit carries its fields in the original's order, and the context of
/// its neighbours in the session (a call without content as `""`, a
/// structured content as its text); a tool result names its tool, the
/// session's source and model.
pub fn hits_carry_their_fields_and_neighbours_as_context_alike(backend: &dyn Backend) {
    let b = backend.open();
    let store = b.store.as_ref();
    let n = b.name();
    measured_store(store);
    let hits = store
        .search_messages("docker", &SearchOptions::default())
        .unwrap();
    let hit = |id: i64| {
        let found = hits.iter().find(|h| h.id == id).unwrap();
        serde_json::to_value(found).unwrap()
    };
    let second = hit(2);
    assert_eq!(
        second["context"],
        json!([
            {"role": "user", "content": "How do I fix the docker build? It fails on step 3."},
            {"role": "assistant", "content": "The docker build fails because the base image is missing. Try docker pull first."},
            {"role": "assistant", "content": ""}
        ]),
        "{n}"
    );
    let keys: Vec<&str> = second
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let order = [
        "id",
        "session_id",
        "role",
        "snippet",
        "timestamp",
        "tool_name",
        "source",
        "model",
        "session_started",
        "context",
    ];
    assert_eq!(keys, order, "{n}");
    assert_eq!(
        hit(8)["context"],
        json!([
            {"role": "user", "content": "广西 桂林 漓江 旅游"},
            {"role": "user", "content": "multimodal docker picture"}
        ]),
        "{n}"
    );
    let tool = store
        .search_messages("kubernetes", &SearchOptions::default())
        .unwrap();
    let tool = tool.iter().find(|h| h.id == 4).unwrap();
    let fields = (
        tool.tool_name.as_deref(),
        tool.source.as_deref(),
        tool.model.as_deref(),
        tool.timestamp,
    );
    assert_eq!(
        fields,
        (Some("web_search"), Some("cli"), Some("gpt"), 1004.0),
        "{n}"
    );
}

/// A deterministic mixed corpus: English, code, hyphenated terms and CJK.
fn corpus_text(i: usize) -> String {
    let n = i * 7919 % 1000;
    match i % 10 {
        0 => format!("我们需要优化数据库的性能 第{n}次"),
        1 => format!("部署到生产环境 kubernetes cluster {n}"),
        2 => format!("fn main() {{ let value_{n} = compute(); println!(\"{{}}\", value_{n}); }}"),
        3 => format!("The base image for deployment {n} is missing"),
        4 => format!("chat-send failed with error E{n}"),
        5 => format!("deploying the kubernetes ingress controller v{n}"),
        6 => format!("docker-compose up failed at step {n}"),
        7 => format!("東京の天気は晴れです {n}"),
        8 => format!("please concatenate these strings {n}"),
        _ => format!("deployment pipeline finished in {n} seconds"),
    }
}

/// Ten thousand messages in fifty sessions of three sources: a word, a
/// phrase, a prefix, a hyphenated compound, a substring no word holds,
/// CJK terms of two and three characters, filters combined, each finds
/// exactly its messages; time-ordered pages follow each other.
pub fn ten_thousand_messages_are_found_by_every_kind_of_query_alike(backend: &dyn Backend) {
    let b = backend.open();
    let store = b.store.as_ref();
    let n = b.name();
    let sources = ["cli", "telegram", "discord"];
    for s in 0..50 {
        store
            .create_session(&NewSession::new(format!("s{s}"), sources[s % 3]))
            .unwrap();
    }
    let total: usize = 10_000;
    let batch: Vec<NewMessage> = (0..total)
        .map(|i| {
            let role = if i.is_multiple_of(3) {
                "user"
            } else {
                "assistant"
            };
            NewMessage::new(format!("s{}", i % 50), role)
                .content(corpus_text(i))
                .timestamp(1_700_000_000.0 + i as f64)
        })
        .collect();
    for chunk in batch.chunks(1000) {
        store.append_messages(chunk).unwrap();
    }
    // Message ids are 1..=total in corpus order.
    let expected = |pred: &dyn Fn(usize) -> bool| -> Vec<i64> {
        (0..total)
            .filter(|i| pred(*i))
            .map(|i| i as i64 + 1)
            .collect()
    };
    let found = |query: &str, options: SearchOptions| -> Vec<i64> {
        let mut ids = ids(store, query, &options);
        ids.sort_unstable();
        ids
    };
    let everything = || SearchOptions {
        limit: total as u32,
        ..SearchOptions::default()
    };
    let telegram_users = || SearchOptions {
        source_filter: Some(vec!["telegram".into()]),
        role_filter: Some(vec!["user".into()]),
        ..everything()
    };
    let kubernetes = |i: usize| i % 10 == 1 || i % 10 == 5;
    let telegram_user = |i: usize| i.is_multiple_of(3) && (i % 50) % 3 == 1;
    let cases: [(&str, SearchOptions, Vec<i64>); 10] = [
        ("kubernetes", everything(), expected(&kubernetes)),
        ("\"base image\"", everything(), expected(&|i| i % 10 == 3)),
        (
            "deploy*",
            everything(),
            expected(&|i| matches!(i % 10, 3 | 5 | 9)),
        ),
        ("chat-send", everything(), expected(&|i| i % 10 == 4)),
        ("catenat", everything(), expected(&|i| i % 10 == 8)),
        ("数据", everything(), expected(&|i| i.is_multiple_of(10))),
        ("東京", everything(), expected(&|i| i % 10 == 7)),
        ("数据库", everything(), expected(&|i| i.is_multiple_of(10))),
        (
            "kubernetes",
            telegram_users(),
            expected(&|i| kubernetes(i) && telegram_user(i)),
        ),
        (
            "数据",
            telegram_users(),
            expected(&|i| i.is_multiple_of(10) && telegram_user(i)),
        ),
    ];
    for (query, options, want) in cases {
        assert_eq!(found(query, options), want, "{n}: {query:?}");
    }
    let page = |offset| {
        let options = SearchOptions {
            limit: 25,
            offset,
            sort: Some("newest".into()),
            ..SearchOptions::default()
        };
        ids(store, "kubernetes", &options)
    };
    let (first, second) = (page(0), page(25));
    assert_eq!(first.len(), 25, "{n}");
    assert!(
        first.last() > second.first(),
        "{n}: newest first across pages"
    );
}

/// `search_messages_cancellable` with a flag nobody raises answers what
/// `search_messages` answers, hit for hit (scoped too, through
/// `search_messages_in_cancellable`); with a flag raised before the call,
/// `Cancelled` and no answer — never an empty list. (A flag raised while a
/// long statement runs is each backend's own test: it needs a store large
/// enough to take a while.)
pub fn a_cancellable_search_answers_as_the_search_or_cancelled_alike(backend: &dyn Backend) {
    use hermes_state_core::cancel::Cancel;
    use hermes_state_core::conversation_search::ConversationScope;
    use hermes_state_core::search_scope::{search_messages_in, search_messages_in_cancellable};
    use hermes_state_types::ErrorKind;

    let b = backend.open();
    let store = b.store.as_ref();
    fill(store);
    let options = SearchOptions::default();
    let newest = SearchOptions {
        sort: Some("newest".into()),
        limit: 2,
        ..SearchOptions::default()
    };
    let scope = ConversationScope {
        sessions: Some(["s1".to_owned(), "s3".to_owned()].into()),
        ..ConversationScope::default()
    };
    for query in ["docker", "deploy*", "东京", "cat", "50%", ""] {
        for options in [&options, &newest] {
            let plain = store.search_messages(query, options).unwrap();
            let cancellable = store
                .search_messages_cancellable(query, options, &Cancel::new())
                .unwrap();
            assert_eq!(cancellable, plain, "{}: {query:?}", b.name());
            let scoped = search_messages_in(store, query, options, &scope).unwrap();
            let scoped_cancellable =
                search_messages_in_cancellable(store, query, options, &scope, &Cancel::new())
                    .unwrap();
            assert_eq!(scoped_cancellable, scoped, "{}: {query:?} scoped", b.name());
        }
    }
    let raised = Cancel::new();
    raised.cancel();
    for query in ["docker", "东京"] {
        let error = store
            .search_messages_cancellable(query, &options, &raised)
            .expect_err("cancelled");
        assert_eq!(
            error.kind(),
            ErrorKind::Cancelled,
            "{}: {query:?}",
            b.name()
        );
        let error = search_messages_in_cancellable(store, query, &options, &scope, &raised)
            .expect_err("cancelled");
        assert_eq!(
            error.kind(),
            ErrorKind::Cancelled,
            "{}: {query:?}",
            b.name()
        );
    }
}
