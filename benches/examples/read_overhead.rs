//! The facade/raw ratio of the read cases of `benches/benches/read.rs`,
//! facade and baseline interleaved (one call of each per round, the order
//! alternating), so a burst of load from other processes hits both sides
//! alike; the medians and their ratio are printed. Criterion runs one side
//! after the other, which on a shared machine can put a burst on one side
//! only.
//!
//! ```text
//! cargo run --release -p hermes-state-benches --example read_overhead -- 10k 100k [rounds]
//! ```
//!
//! Both sides open the corpus read-only, so `HERMES_BENCH_CORPUS_DIR` may
//! point at another worktree's corpora.

// A command-line tool: the timings go to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use hermes_state::prelude::*;
use std::time::{Duration, Instant};

use hermes_state::{ListFilter, SessionDb};
use hermes_state_benches::baseline::Baseline;
use hermes_state_benches::corpus::{self, Corpus};

fn main() {
    let mut sizes = Vec::new();
    let mut rounds = 2000usize;
    for arg in std::env::args().skip(1) {
        if let Some(size) = corpus::parse_size(&arg).filter(|_| arg.ends_with(['k', 'm', 'K', 'M']))
        {
            sizes.push(size);
        } else if let Ok(n) = arg.parse::<usize>() {
            rounds = n;
        }
    }
    if sizes.is_empty() {
        sizes.push(10_000);
    }
    println!("| corpus | case | facade | baseline | ratio |");
    println!("| --- | --- | ---: | ---: | ---: |");
    for size in sizes {
        run(size, rounds);
    }
}

fn median(times: &mut [Duration]) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e6
}

type Call<'a> = Box<dyn Fn() -> usize + 'a>;

fn run(size: u64, rounds: usize) {
    let corpus = Corpus::ensure(size, &mut |line| eprintln!("{line}")).expect("corpus");
    let db = SessionDb::open_read_only(&corpus.path).expect("facade opens");
    let baseline = Baseline::open_read_only(&corpus.path).expect("baseline opens");
    let label = corpus::size_label(size);
    let tip = corpus::deep_chain_tip();
    let root = corpus::deep_chain_root();
    let all = ListFilter::default();
    let telegram = ListFilter {
        source: Some("telegram".to_owned()),
        ..ListFilter::default()
    };
    let cases: Vec<(&str, Call<'_>, Call<'_>)> = vec![
        (
            "recent_sessions",
            Box::new(|| db.recent_sessions(&all).expect("list").len()),
            Box::new(|| baseline.recent_sessions(None, 20).expect("list").len()),
        ),
        (
            "recent_sessions_source",
            Box::new(|| db.recent_sessions(&telegram).expect("list").len()),
            Box::new(|| {
                baseline
                    .recent_sessions(Some("telegram"), 20)
                    .expect("list")
                    .len()
            }),
        ),
        (
            "ancestors_deep",
            Box::new(|| db.ancestors(&tip).expect("lineage").len()),
            Box::new(|| baseline.ancestors(&tip).expect("lineage").len()),
        ),
        (
            "descendants_deep",
            Box::new(|| db.descendants(&root).expect("lineage").len()),
            Box::new(|| baseline.descendants(&root).expect("lineage").len()),
        ),
        (
            "model_totals",
            Box::new(|| db.model_totals().expect("stats").len()),
            Box::new(|| baseline.model_totals().expect("stats").len()),
        ),
        (
            "top_sessions",
            Box::new(|| db.top_sessions(10).expect("stats").len()),
            Box::new(|| baseline.top_sessions(10).expect("stats").len()),
        ),
    ];
    for (name, facade, raw) in cases {
        assert_eq!(facade(), raw(), "{name}: facade and baseline disagree");
        // Fewer rounds for slow cases: about 3 s per side at most.
        let started = Instant::now();
        facade();
        let one = started.elapsed().max(Duration::from_micros(1));
        let n = rounds.min((Duration::from_secs(3).as_nanos() / one.as_nanos()).max(5) as usize);
        let mut times: [Vec<Duration>; 2] = Default::default();
        for round in 0..n {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for side in order {
                let call = if side == 0 { &facade } else { &raw };
                let t = Instant::now();
                std::hint::black_box(call());
                times[side].push(t.elapsed());
            }
        }
        let [f, r] = times.map(|mut t| median(&mut t));
        println!(
            "| {label} | `{name}` | {f:.1} µs | {r:.1} µs | {:.2}× |",
            f / r.max(1e-3)
        );
    }
    db.close().expect("close");
}
