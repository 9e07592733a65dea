//! The facade/raw ratio of every search case, measured quickly and robustly
//! on a shared machine: facade and baseline calls are interleaved (one of
//! each per round, the order alternating), so a burst of load from other
//! processes hits both sides alike; the medians and their ratio are printed.
//! Besides the relevance cases of `benches/src/cases.rs`, the word cases are
//! also run with `sort = newest` and `sort = oldest` against the baseline's
//! query with the same `ORDER BY m.timestamp …, rank`.
//!
//! ```text
//! cargo run --release -p hermes-state-benches --example search_overhead -- 10k 100k [rounds] [filter | =case]
//! ```
//!
//! A third column times the baseline plus the hits' `context` (two indexed
//! look-ups per hit, `Baseline::search_with_context`): the same work the
//! facade's result contract asks, done by hand.
//!
//! `HERMES_OVERHEAD_ONLY=facade` (or `baseline`) times one side only, for a
//! profiler (`perf record -g …`); the other side's column is then 0.
//!
//! The facade opens the corpus read-only (`SessionDb::open_read_only`), so
//! `HERMES_BENCH_CORPUS_DIR` may point at another worktree's corpora.

// A command-line tool: the timings go to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::{Duration, Instant};

use hermes_state::SessionDb;
use hermes_state_benches::baseline::{Baseline, RawOrder};
use hermes_state_benches::cases::search_cases;
use hermes_state_benches::corpus::{self, Corpus};

fn main() {
    let mut sizes = Vec::new();
    let mut rounds = 200usize;
    let mut filter: Option<String> = None;
    for arg in std::env::args().skip(1) {
        if let Some(size) = corpus::parse_size(&arg).filter(|_| arg.ends_with(['k', 'm', 'K', 'M']))
        {
            sizes.push(size);
        } else if let Ok(n) = arg.parse::<usize>() {
            rounds = n;
        } else {
            filter = Some(arg);
        }
    }
    if sizes.is_empty() {
        sizes.push(10_000);
    }
    for size in sizes {
        run(size, rounds, filter.as_deref());
    }
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn run(size: u64, rounds: usize, filter: Option<&str>) {
    let corpus = Corpus::ensure(size, &mut |line| eprintln!("{line}")).expect("corpus");
    let db = SessionDb::open_read_only(&corpus.path).expect("facade opens");
    let baseline = Baseline::open_read_only(&corpus.path).expect("baseline opens");
    let label = corpus::size_label(size);
    println!("| corpus | case | facade | baseline | ratio | baseline + context | ratio to it |");
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: |");
    let mut cases = Vec::new();
    for case in search_cases() {
        cases.push((case.name.to_owned(), case.clone(), RawOrder::Rank));
    }
    for case in search_cases().into_iter().filter(|c| c.word_query) {
        cases.push((
            format!("{}_newest", case.name),
            case.clone(),
            RawOrder::Newest,
        ));
        cases.push((format!("{}_oldest", case.name), case, RawOrder::Oldest));
    }
    for (name, case, order) in cases {
        // `=name` selects one case, anything else the cases containing it.
        if filter.is_some_and(|f| match f.strip_prefix('=') {
            Some(exact) => name != exact,
            None => !name.contains(f),
        }) {
            continue;
        }
        let mut options = case.options();
        options.sort = match order {
            RawOrder::Rank => None,
            RawOrder::Newest => Some("newest".to_owned()),
            RawOrder::Oldest => Some("oldest".to_owned()),
        };
        let filters = case.filters();
        let facade_ids: Vec<i64> = db
            .search_messages(&case.query, &options)
            .expect("facade search")
            .iter()
            .map(|h| h.id)
            .collect();
        let raw_ids: Vec<i64> = baseline
            .search_ordered(case.table, &case.match_text, &filters, 20, order)
            .expect("baseline search")
            .iter()
            .map(|h| h.id)
            .collect();
        assert_eq!(facade_ids, raw_ids, "{name}: facade and baseline disagree");
        // Fewer rounds for slow cases: about 3 s per side at most.
        let started = Instant::now();
        db.search_messages(&case.query, &options).expect("search");
        let one = started.elapsed().max(Duration::from_micros(1));
        let n = rounds.min((Duration::from_secs(3).as_nanos() / one.as_nanos()).max(5) as usize);
        let only = std::env::var("HERMES_OVERHEAD_ONLY").unwrap_or_default();
        let mut facade = Vec::with_capacity(n);
        let mut raw = Vec::with_capacity(n);
        let mut raw_context = Vec::with_capacity(n);
        for round in 0..n {
            let mut time_facade = || {
                if only == "baseline" {
                    facade.push(Duration::ZERO);
                    return;
                }
                let t = Instant::now();
                std::hint::black_box(db.search_messages(&case.query, &options).expect("search"));
                facade.push(t.elapsed());
            };
            let mut time_raw = || {
                if only == "facade" {
                    raw.push(Duration::ZERO);
                    return;
                }
                let t = Instant::now();
                std::hint::black_box(
                    baseline
                        .search_ordered(case.table, &case.match_text, &filters, 20, order)
                        .expect("search"),
                );
                raw.push(t.elapsed());
            };
            let mut time_raw_context = || {
                if only == "facade" {
                    raw_context.push(Duration::ZERO);
                    return;
                }
                let t = Instant::now();
                std::hint::black_box(
                    baseline
                        .search_with_context(case.table, &case.match_text, &filters, 20, order)
                        .expect("search"),
                );
                raw_context.push(t.elapsed());
            };
            if round % 2 == 0 {
                time_facade();
                time_raw();
                time_raw_context();
            } else {
                time_raw_context();
                time_raw();
                time_facade();
            }
        }
        let f = median(&mut facade);
        let r = median(&mut raw);
        let rc = median(&mut raw_context);
        println!(
            "| {label} | `{name}` | {:.0} µs | {:.0} µs | {:.2}× | {:.0} µs | {:.2}× |",
            f.as_secs_f64() * 1e6,
            r.as_secs_f64() * 1e6,
            f.as_secs_f64() / r.as_secs_f64().max(1e-9),
            rc.as_secs_f64() * 1e6,
            f.as_secs_f64() / rc.as_secs_f64().max(1e-9)
        );
    }
    db.close().expect("close");
}
