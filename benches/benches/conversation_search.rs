//! Search by conversation benches: for the search cases of
//! `benches/src/cases.rs` (relevance order, limit 20), the facade's
//! `search_conversations` (20 conversations) next to its plain
//! `search_messages` for the same query, on the cached corpora of every
//! size. The goal (issue 27): conversations p50 ≤ 1.5× plain at 100k and 1M.
//! `examples/conversation_search.rs` measures the same pairs interleaved,
//! with the page-by-page reading and the load average.

// Bench binaries report progress and hit counts on stderr.
#![allow(clippy::print_stderr)]

mod common;

use criterion::Criterion;
use hermes_state::SessionDb;
use hermes_state::prelude::*;
use hermes_state_benches::cases::search_cases;

fn main() {
    let mut c = common::criterion();
    for size in common::sizes() {
        conversations(&mut c, size);
    }
    c.final_summary();
}

fn conversations(c: &mut Criterion, size: u64) {
    let corpus = common::corpus(size);
    let db = SessionDb::open_read_only(&corpus.path).expect("facade opens");
    let label = common::label(size);
    let mut group = c.benchmark_group(format!("conversation_search_{label}"));
    if size >= 1_000_000 {
        group.sample_size(20);
    }
    for case in search_cases() {
        let options = case.options();
        let found = db
            .search_conversations(&case.query, &options)
            .expect("search by conversation");
        let hits: usize = found.iter().map(|c| c.hits).sum();
        eprintln!(
            "conversation_search_{label}/{}: {} conversations, {hits} hits in them",
            case.name,
            found.len()
        );
        group.bench_function(format!("{}/plain", case.name), |b| {
            b.iter(|| db.search_messages(&case.query, &options).expect("search"))
        });
        group.bench_function(format!("{}/conversations", case.name), |b| {
            b.iter(|| {
                db.search_conversations(&case.query, &options)
                    .expect("search by conversation")
            })
        });
    }
    group.finish();
    db.close().expect("close");
}
