//! Search by conversation against plain search for the same query, measured
//! on a shared machine: the sides are interleaved (one call of each per
//! round, in a new shuffled order every round), so a burst of load from other
//! processes hits them alike; medians, p90s and the ratio conversations /
//! plain are printed, with the load average before and after each corpus.
//!
//! ```text
//! cargo run --release -p hermes-state-benches --example conversation_search -- 10k 100k 1m [rounds] [filter | =case] [pages]
//! ```
//!
//! Sides: `plain` is the facade's `search_messages` (limit 20, relevance
//! order, or the case's sort); `conversations` its `search_conversations`
//! (limit 20 conversations, same options); with the word `pages`, also
//! `by pages`: the query crate's `search_conversations_by_pages` on a
//! read-only connection of its own (the reading before issue 27: every page
//! of 200 hits searched again, every hit read in full), which takes seconds
//! per call at 1M, so it runs a few rounds only.
//!
//! The facade opens the corpus read-only, so `HERMES_BENCH_CORPUS_DIR` may
//! point at another worktree's corpora.

// A command-line tool: the timings go to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use hermes_state::prelude::*;
use std::time::{Duration, Instant};

use hermes_state::query::conversation_search::{ConversationScope, search_conversations_by_pages};
use hermes_state::query::search::FtsCapabilities;
use hermes_state::{SearchOptions, SessionDb};
use hermes_state_benches::cases::search_cases;
use hermes_state_benches::corpus::{self, Corpus};
use hermes_state_benches::sides::Xorshift;

fn main() {
    let mut sizes = Vec::new();
    let mut rounds = 40usize;
    let mut filter: Option<String> = None;
    let mut pages = false;
    for arg in std::env::args().skip(1) {
        if let Some(size) = corpus::parse_size(&arg).filter(|_| arg.ends_with(['k', 'm', 'K', 'M']))
        {
            sizes.push(size);
        } else if let Ok(n) = arg.parse::<usize>() {
            rounds = n;
        } else if arg == "pages" {
            pages = true;
        } else {
            filter = Some(arg);
        }
    }
    if sizes.is_empty() {
        sizes.push(10_000);
    }
    println!(
        "| corpus | case | matches | plain p50 | conversations p50 | ratio | plain p90 | conversations p90 | by pages p50 | rounds |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for size in sizes {
        run(size, rounds, filter.as_deref(), pages);
    }
}

/// The load averages of `/proc/loadavg` (1, 5, 15 minutes).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "?".to_owned())
}

fn quantile(times: &mut [Duration], q: f64) -> f64 {
    times.sort();
    let at = ((times.len() as f64 - 1.0) * q).round() as usize;
    times.get(at).map_or(0.0, |t| t.as_secs_f64() * 1e3)
}

fn run(size: u64, rounds: usize, filter: Option<&str>, pages: bool) {
    let corpus = Corpus::ensure(size, &mut |line| eprintln!("{line}")).expect("corpus");
    let db = SessionDb::open_read_only(&corpus.path).expect("facade opens");
    let conn = hermes_state::query::open_read_only(&corpus.path).expect("read-only connection");
    let caps = FtsCapabilities::detect(&conn).expect("capabilities");
    let label = corpus::size_label(size);
    let before = load();
    let mut shuffle = Xorshift(0x9E37_79B9_7F4A_7C15);
    let mut cases: Vec<(String, SearchOptions, String, &'static str)> = Vec::new();
    for case in search_cases() {
        cases.push((
            case.name.to_owned(),
            case.options(),
            case.query.clone(),
            case.table,
        ));
        if case.word_query && case.name != "word_filtered" {
            let mut newest = case.options();
            newest.sort = Some("newest".to_owned());
            cases.push((
                format!("{}_newest", case.name),
                newest,
                case.query.clone(),
                case.table,
            ));
        }
    }
    for (name, options, query, table) in cases {
        if filter.is_some_and(|f| match f.strip_prefix('=') {
            Some(exact) => name != exact,
            None => !name.contains(f),
        }) {
            continue;
        }
        let matches: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1"),
                [&query],
                |r| r.get(0),
            )
            .unwrap_or(-1);
        let scope = ConversationScope::default();
        let conversations = || {
            db.search_conversations(&query, &options)
                .expect("conversations")
        };
        if pages {
            let by_pages = search_conversations_by_pages(&conn, &query, &options, &scope, caps)
                .expect("by pages");
            assert_eq!(
                conversations(),
                by_pages,
                "{name}: the two readings disagree"
            );
        }
        // About 4 s per side at most, at least 5 rounds.
        let started = Instant::now();
        conversations();
        let one = started.elapsed().max(Duration::from_micros(1));
        let n = rounds.min((Duration::from_secs(4).as_nanos() / one.as_nanos()).max(5) as usize);
        let mut times: [Vec<Duration>; 3] = Default::default();
        for round in 0..n {
            let mut sides = [0usize, 1, 2];
            shuffle.shuffle(&mut sides);
            for side in sides {
                // The old reading: a few rounds only, it is slow.
                if side == 2 && (!pages || round >= 5) {
                    continue;
                }
                let t = Instant::now();
                match side {
                    0 => {
                        std::hint::black_box(db.search_messages(&query, &options).expect("search"));
                    }
                    1 => {
                        std::hint::black_box(conversations());
                    }
                    _ => {
                        std::hint::black_box(
                            search_conversations_by_pages(&conn, &query, &options, &scope, caps)
                                .expect("by pages"),
                        );
                    }
                }
                times[side].push(t.elapsed());
            }
        }
        let [mut p, mut c, mut o] = times;
        let (p50, c50, o50) = (
            quantile(&mut p, 0.5),
            quantile(&mut c, 0.5),
            quantile(&mut o, 0.5),
        );
        let (p90, c90) = (quantile(&mut p, 0.9), quantile(&mut c, 0.9));
        let old = if o.is_empty() {
            "–".to_owned()
        } else {
            format!("{o50:.1} ms")
        };
        println!(
            "| {label} | `{name}` | {matches} | {p50:.2} ms | {c50:.2} ms | {:.2}× | {p90:.2} ms | {c90:.2} ms | {old} | {n} |",
            c50 / p50.max(1e-6)
        );
    }
    println!(
        "| {label} | load average before / after: {before} / {} | | | | | | | | |",
        load()
    );
    db.close().expect("close");
}
