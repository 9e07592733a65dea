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
//! facade's result contract asks, done by hand. The last two time both again
//! with `LIMIT`/`OFFSET` written into the SQL instead of bound
//! (`Baseline::with_literal_paging`), as the facade does: bound, SQLite
//! prepares the cached statement again on every run.
//!
//! `HERMES_OVERHEAD_ONLY=facade` (or `baseline`) times one side only, for a
//! profiler (`perf record -g …`); the other side's column is then 0.
//!
//! The last column is a **control**: the literal baseline + context again,
//! on a connection of its own (as the facade has one of its own, while the
//! two literal sides share one). It does exactly the work of the literal
//! baseline + context, so its ratio to it is what this harness reads with no
//! overhead at all (an A/A test); and the facade's ratio to the control
//! compares two sides set up alike. The sides run in a new shuffled order
//! every round (a fixed-seed xorshift), so no side always follows the side
//! that warms its caches: with a fixed order alternating forward and back,
//! the literal + context side always ran next to the literal side (the same
//! statement on the same connection), and the control, in the facade's
//! place, read 1.02–1.20× of it at 100k.
//!
//! The facade opens the corpus read-only (`SessionDb::open_read_only`), so
//! `HERMES_BENCH_CORPUS_DIR` may point at another worktree's corpora.

// A command-line tool: the timings go to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use hermes_state::prelude::*;
use std::time::{Duration, Instant};

use hermes_state::SessionDb;
use hermes_state_benches::baseline::{Baseline, RawOrder};
use hermes_state_benches::cases::search_cases;
use hermes_state_benches::corpus::{self, Corpus};
use hermes_state_benches::sides::Xorshift;

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
    let literal = Baseline::open_read_only(&corpus.path)
        .expect("baseline opens")
        .with_literal_paging();
    let control = Baseline::open_read_only(&corpus.path)
        .expect("baseline opens")
        .with_literal_paging();
    let label = corpus::size_label(size);
    println!(
        "| corpus | case | facade | baseline | ratio | baseline + context | ratio to it | literal baseline | ratio to it | literal baseline + context | ratio to it | control | control's ratio to literal + context | facade's ratio to control |"
    );
    println!(
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    let mut shuffle = Xorshift(0x9E37_79B9_7F4A_7C15);
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
        // Facade, baseline, baseline + context, the same two with literal
        // paging, and the control.
        let mut times: [Vec<Duration>; 6] = Default::default();
        for _ in 0..n {
            let mut order_of_sides = [0usize, 1, 2, 3, 4, 5];
            shuffle.shuffle(&mut order_of_sides);
            for side in order_of_sides {
                let skip = match side {
                    0 => only == "baseline",
                    _ => only == "facade",
                };
                if skip {
                    times[side].push(Duration::ZERO);
                    continue;
                }
                let raw = match side {
                    0..=2 => &baseline,
                    3 | 4 => &literal,
                    _ => &control,
                };
                let t = Instant::now();
                match side {
                    0 => {
                        std::hint::black_box(
                            db.search_messages(&case.query, &options).expect("search"),
                        );
                    }
                    1 | 3 => {
                        std::hint::black_box(
                            raw.search_ordered(case.table, &case.match_text, &filters, 20, order)
                                .expect("search"),
                        );
                    }
                    _ => {
                        std::hint::black_box(
                            raw.search_with_context(
                                case.table,
                                &case.match_text,
                                &filters,
                                20,
                                order,
                            )
                            .expect("search"),
                        );
                    }
                }
                times[side].push(t.elapsed());
            }
        }
        let [f, r, rc, l, lc, c] = times.map(|mut t| median(&mut t).as_secs_f64() * 1e6);
        let ratio = |a: f64, b: f64| a / b.max(1e-3);
        println!(
            "| {label} | `{name}` | {f:.0} µs | {r:.0} µs | {:.2}× | {rc:.0} µs | {:.2}× | {l:.0} µs | {:.2}× | {lc:.0} µs | {:.2}× | {c:.0} µs | {:.2}× | {:.2}× |",
            ratio(f, r),
            ratio(f, rc),
            ratio(f, l),
            ratio(f, lc),
            ratio(c, lc),
            ratio(f, c)
        );
    }
    db.close().expect("close");
}
