//! Tests of the generator and the baseline on a tiny corpus (a few thousand
//! messages, built in a temporary folder: `cargo test --workspace` stays fast).

use hermes_state::prelude::*;
use hermes_state::{SessionDb, rusqlite};

use crate::baseline::{Baseline, RawMessage};
use crate::cases::{Hits, search_cases};
use crate::corpus::{self, CorpusStats, DEEP_CHAIN_LEN, Rng, markers};

const TINY: u64 = 1_500;

fn build_tiny(dir: &std::path::Path) -> (std::path::PathBuf, CorpusStats) {
    let path = dir.join("tiny.db");
    let stats = corpus::build(&path, TINY, &mut |_| {}).expect("corpus builds");
    (path, stats)
}

fn generate(n: u64) -> Vec<hermes_state::NewMessage> {
    let mut rng = Rng::new(corpus::SEED);
    let plans = corpus::plan_sessions(n, &mut rng);
    let mut generator = corpus::MessageGenerator::new(rng);
    plans
        .iter()
        .flat_map(|plan| generator.session_messages(plan))
        .collect()
}

#[test]
fn sizes_parse() {
    assert_eq!(corpus::parse_size("10k"), Some(10_000));
    assert_eq!(corpus::parse_size("1M"), Some(1_000_000));
    assert_eq!(corpus::parse_size("2500"), Some(2_500));
    assert_eq!(corpus::parse_size("x"), None);
    assert_eq!(corpus::size_label(100_000), "100k");
    assert_eq!(corpus::size_label(1_000_000), "1m");
}

#[test]
fn generation_is_deterministic_and_exact_in_size() {
    let a = generate(3_000);
    let b = generate(3_000);
    assert_eq!(a.len(), 3_000);
    assert_eq!(a, b);
    let mut rng = Rng::new(corpus::SEED);
    let plans = corpus::plan_sessions(3_000, &mut rng);
    assert_eq!(plans.iter().map(|p| p.messages).sum::<usize>(), 3_000);
    assert!(
        plans
            .iter()
            .skip(1)
            .take(DEEP_CHAIN_LEN - 1)
            .all(|p| p.parent == Some(p.index - 1))
    );
    assert!(
        plans
            .iter()
            .all(|p| p.parent.is_none_or(|parent| plans[parent].compressed))
    );
}

#[test]
fn the_corpus_has_the_planned_mix() {
    let messages = generate(20_000);
    let cjk = messages
        .iter()
        .filter(|m| {
            matches!(&m.content, Some(hermes_state::Content::Text(t)) if t.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)))
        })
        .count();
    let share = cjk as f64 / messages.len() as f64;
    assert!((0.07..0.14).contains(&share), "CJK share {share}");
    let tool_rows = messages.iter().filter(|m| m.role == "tool").count();
    assert!(tool_rows > 1_000, "{tool_rows} tool rows");
}

#[test]
fn markers_have_their_expected_counts_and_the_baseline_agrees_with_the_facade() {
    let dir = tempfile::tempdir().unwrap();
    let (path, stats) = build_tiny(dir.path());
    assert_eq!(stats.messages, TINY);
    for marker in markers::ALL {
        let n = if marker.cjk {
            stats.cjk_messages
        } else {
            stats.messages
        };
        assert_eq!(
            stats.markers.get(marker.text).copied().unwrap_or(0),
            marker.expected(n),
            "{}",
            marker.text
        );
    }

    // The cached-corpus marker is readable back.
    let db = SessionDb::open(&path).unwrap();
    let baseline = Baseline::open(&path).unwrap();
    let facade_sync: i64 = db
        .read(|c| Ok(c.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap()))
        .unwrap();
    assert_eq!(baseline.synchronous().unwrap(), facade_sync);

    for case in search_cases() {
        let facade = db.search_messages(&case.query, &case.options()).unwrap();
        let raw = baseline
            .search(case.table, &case.match_text, &case.filters(), 20)
            .unwrap();
        let facade_ids: Vec<i64> = facade.iter().map(|h| h.id).collect();
        let raw_ids: Vec<i64> = raw.iter().map(|h| h.id).collect();
        assert_eq!(facade_ids, raw_ids, "case {}", case.name);
        // The total matches of the final query are the markers' counts.
        let total: i64 = baseline
            .conn()
            .query_row(
                &format!("SELECT count(*) FROM {0} WHERE {0} MATCH ?1", case.table),
                [&case.match_text],
                |r| r.get(0),
            )
            .unwrap();
        if let Hits::NonTool(marker) = case.hits {
            let expected: i64 = baseline
                .conn()
                .query_row(
                    "SELECT count(*) FROM messages WHERE role <> 'tool' AND content LIKE ?1",
                    [format!("%{marker}%")],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(total, expected, "case {}", case.name);
        }
        if let Hits::Markers(names) = case.hits {
            let expected: u64 = names
                .iter()
                .map(|n| stats.markers.get(*n).copied().unwrap_or(0))
                .sum();
            assert_eq!(total as u64, expected, "case {}", case.name);
        }
        assert!(total > 0, "case {} finds nothing", case.name);
    }
    // The substring case is found by the trigram fallback only.
    let unicode: i64 = baseline
        .conn()
        .query_row(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?1",
            [markers::FRAGMENT_QUERY],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(unicode, 0);

    let ancestors = db.ancestors(&corpus::deep_chain_tip()).unwrap();
    assert_eq!(ancestors.len(), DEEP_CHAIN_LEN);
    assert_eq!(
        baseline.ancestors(&corpus::deep_chain_tip()).unwrap().len(),
        DEEP_CHAIN_LEN
    );
    assert_eq!(
        db.descendants(&corpus::deep_chain_root()).unwrap().len(),
        DEEP_CHAIN_LEN
    );
    assert_eq!(db.recent_sessions(&Default::default()).unwrap().len(), 20);
    assert_eq!(baseline.recent_sessions(None, 20).unwrap().len(), 20);
    assert_eq!(
        db.model_totals().unwrap().len(),
        baseline.model_totals().unwrap().len()
    );
    assert_eq!(
        db.top_sessions(10).unwrap().len(),
        baseline.top_sessions(10).unwrap().len()
    );

    let summary = db
        .export_jsonl(std::io::sink(), &Default::default(), |_| {})
        .unwrap();
    let counts = baseline.export_jsonl(std::io::sink()).unwrap();
    assert_eq!(summary.messages, TINY);
    assert_eq!(
        (counts.sessions, counts.messages),
        (summary.sessions, summary.messages)
    );
    assert!(counts.bytes > 0 && summary.bytes > 0);

    // Appends through both paths count the message on its session.
    let session = corpus::session_id(3);
    let pool = crate::message_pool(std::slice::from_ref(&session), 4);
    let before: i64 = count_of(&baseline, &session);
    db.append_message(&pool[0]).unwrap();
    baseline.append(&RawMessage::from_new(&pool[1])).unwrap();
    let raw: Vec<RawMessage> = pool[2..].iter().map(RawMessage::from_new).collect();
    baseline.append_batch(&raw).unwrap();
    assert_eq!(count_of(&baseline, &session), before + 4);
    db.close().unwrap();
}

fn count_of(baseline: &Baseline, session: &str) -> i64 {
    baseline
        .conn()
        .query_row(
            "SELECT message_count FROM sessions WHERE id = ?1",
            [session],
            |r| r.get(0),
        )
        .unwrap_or_else(|e: rusqlite::Error| panic!("{e}"))
}
