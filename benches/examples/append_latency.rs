//! The latency of every single append, facade and baseline interleaved, on
//! copies of a cached corpus: the median, the mean, the 99th percentile, the
//! worst, and the mean of the writes after which the facade runs its periodic
//! maintenance (a PASSIVE checkpoint every 50th write, FTS5 `'optimize'` of
//! every index every 1000th). Criterion's median hides these; this shows them.
//!
//! ```text
//! cargo run --release -p hermes-state-benches --example append_latency -- 1m 1000
//! ```
//!
//! Arguments: the corpus size (default `10k`) and the number of appends
//! (default 3000). The corpus file is copied twice into temporary folders
//! (`TMPDIR` chooses where: `TMPDIR=/dev/shm` puts both stores on tmpfs,
//! where an fsync costs nearly nothing, so the CPU side of the tail shows).
//!
//! Besides the summary line, a `tail` line per side gives the p99 and p99.9
//! of the writes that run no periodic maintenance, and where in the
//! 50-write checkpoint cycle the slowest 1 % of all writes fall (write
//! number modulo 50, in buckets of 10; bucket 40–49 holds the 50th, which
//! checkpoints). `HERMES_APPEND_DUMP=file.csv` writes every latency
//! (`write,facade_us,baseline_us`) for a closer look.

// A command-line tool: the figures go to stdout.
#![allow(clippy::print_stdout)]
use hermes_state::SessionDb;
use hermes_state::prelude::*;
use hermes_state_benches::baseline::{Baseline, RawMessage};
use hermes_state_benches::corpus::{self, Corpus};
use std::time::Instant;
fn stats(label: &str, d: &[f64]) {
    let mut s = d.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mean = d.iter().sum::<f64>() / d.len() as f64;
    let at = |every: usize| {
        let v: Vec<f64> = d
            .iter()
            .enumerate()
            .filter(|(i, _)| (i + 1) % every == 0)
            .map(|(_, x)| *x)
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    let other: Vec<f64> = d
        .iter()
        .enumerate()
        .filter(|(i, _)| (i + 1) % 50 != 0)
        .map(|(_, x)| *x)
        .collect();
    println!(
        "{label}: median {:.0} µs, mean {:.0} µs, p99 {:.0} µs, max {:.0} µs; every 50th write: {:.0} µs, every 1000th: {:.0} µs, the others: {:.0} µs (means)",
        s[s.len() / 2],
        mean,
        s[s.len() * 99 / 100],
        s[s.len() - 1],
        at(50),
        at(1000),
        other.iter().sum::<f64>() / other.len() as f64
    );
}
/// The tail of one side: percentiles of the writes that run no periodic
/// maintenance, and where the slowest 1 % fall in the checkpoint cycle.
fn tail(label: &str, d: &[f64]) {
    let mut plain: Vec<f64> = d
        .iter()
        .enumerate()
        .filter(|(i, _)| (i + 1) % 50 != 0)
        .map(|(_, x)| *x)
        .collect();
    plain.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let pct = |p: usize| plain[(plain.len() * p / 1000).min(plain.len() - 1)];
    let mut order: Vec<usize> = (0..d.len()).collect();
    order.sort_by(|&a, &b| d[b].partial_cmp(&d[a]).unwrap());
    let slowest = &order[..(d.len() / 100).max(1)];
    let mut buckets = [0usize; 5];
    for &i in slowest {
        buckets[((i + 1) % 50) / 10] += 1;
    }
    // Write number 50, 100, … is position 0 of the next cycle here: put it last.
    let fiftieth = slowest.iter().filter(|&&i| (i + 1) % 50 == 0).count();
    buckets[0] -= fiftieth;
    println!(
        "{label} tail: writes without maintenance p99 {:.0} µs, p99.9 {:.0} µs; slowest 1 % ({}) by position in the 50-write cycle: 1–9 {}, 10–19 {}, 20–29 {}, 30–39 {}, 40–49 {}, 50th {}",
        pct(990),
        pct(999),
        slowest.len(),
        buckets[0],
        buckets[1],
        buckets[2],
        buckets[3],
        buckets[4],
        fiftieth
    );
}

fn main() {
    let n = std::env::args()
        .nth(1)
        .and_then(|a| corpus::parse_size(&a))
        .unwrap_or(10_000);
    let count: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3000);
    let c = Corpus::ensure(n, &mut |_| {}).unwrap();
    let d1 = tempfile::tempdir().unwrap();
    let d2 = tempfile::tempdir().unwrap();
    let db = SessionDb::open(c.copy_to(d1.path()).unwrap()).unwrap();
    db.migrate().unwrap(); // the writable connection, outside the timings
    let b = Baseline::open(&c.copy_to(d2.path()).unwrap()).unwrap();
    let sessions: Vec<String> = (60..260).map(corpus::session_id).collect();
    let pool = hermes_state_benches::message_pool(&sessions, count);
    let raw: Vec<RawMessage> = pool.iter().map(RawMessage::from_new).collect();
    let mut f = Vec::new();
    let mut r = Vec::new();
    for (m, rm) in pool.iter().zip(&raw) {
        let t = Instant::now();
        db.append_message(m).unwrap();
        f.push(t.elapsed().as_secs_f64() * 1e6);
        let t = Instant::now();
        b.append(rm).unwrap();
        r.push(t.elapsed().as_secs_f64() * 1e6);
    }
    stats("facade  ", &f);
    stats("baseline", &r);
    tail("facade  ", &f);
    tail("baseline", &r);
    if let Some(path) = std::env::var_os("HERMES_APPEND_DUMP") {
        let mut csv = String::from("write,facade_us,baseline_us\n");
        for (i, (a, b)) in f.iter().zip(&r).enumerate() {
            csv.push_str(&format!("{},{a:.1},{b:.1}\n", i + 1));
        }
        std::fs::write(path, csv).unwrap();
    }
}
