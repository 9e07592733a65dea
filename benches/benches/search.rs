//! Search benches: word (four frequencies), word with source and role
//! filters, phrase, prefix, OR/NOT, a substring only the trigram fallback
//! finds, CJK two- and three-character words — the facade's
//! `search_messages` (limit 20) against the one SQL query the facade ends up
//! running, on the cached corpora of every size.

// Bench binaries report progress and hit counts on stderr.
#![allow(clippy::print_stderr)]

mod common;

use criterion::Criterion;
use hermes_state::SessionDb;
use hermes_state::prelude::*;
use hermes_state_benches::baseline::Baseline;
use hermes_state_benches::cases::search_cases;

fn main() {
    let mut c = common::criterion();
    for size in common::sizes() {
        search(&mut c, size);
    }
    c.final_summary();
}

fn search(c: &mut Criterion, size: u64) {
    let corpus = common::corpus(size);
    let db = SessionDb::open(&corpus.path).expect("facade opens");
    let baseline = Baseline::open(&corpus.path).expect("baseline opens");
    let label = common::label(size);
    let mut group = c.benchmark_group(format!("search_{label}"));
    if size >= 1_000_000 {
        group.sample_size(40);
    }
    for case in search_cases() {
        let options = case.options();
        let filters = case.filters();
        // Both sides must give the same answer, or the ratio means nothing.
        let facade_ids: Vec<i64> = db
            .search_messages(&case.query, &options)
            .expect("facade search")
            .iter()
            .map(|h| h.id)
            .collect();
        let raw_ids: Vec<i64> = baseline
            .search(case.table, &case.match_text, &filters, 20)
            .expect("baseline search")
            .iter()
            .map(|h| h.id)
            .collect();
        assert_eq!(
            facade_ids, raw_ids,
            "{}: facade and baseline disagree",
            case.name
        );
        let total: i64 = baseline
            .conn()
            .query_row(
                &format!("SELECT count(*) FROM {0} WHERE {0} MATCH ?1", case.table),
                [&case.match_text],
                |r| r.get(0),
            )
            .expect("count");
        eprintln!(
            "search_{label}/{}: {total} matches in {}, {} returned",
            case.name,
            case.table,
            facade_ids.len()
        );
        group.bench_function(format!("{}/facade", case.name), |b| {
            b.iter(|| db.search_messages(&case.query, &options).expect("search"))
        });
        group.bench_function(format!("{}/baseline", case.name), |b| {
            b.iter(|| {
                baseline
                    .search(case.table, &case.match_text, &filters, 20)
                    .expect("search")
            })
        });
    }
    group.finish();
    db.close().expect("close");
}
