//! Read benches: recent sessions (all, one source), lineage of the deep
//! chain (ancestors of its tip, descendants of its root), stats
//! (`model_totals`, `top_sessions`), and JSONL export throughput to
//! `io::sink` — facade against the hand-written baseline, on the cached
//! corpora of every size.

// Bench binaries report progress and sizes on stderr.
#![allow(clippy::print_stderr)]

mod common;

use hermes_state::prelude::*;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use hermes_state::{ExportFilter, ListFilter, SessionDb};
use hermes_state_benches::baseline::Baseline;
use hermes_state_benches::corpus;

fn main() {
    let mut c = common::criterion();
    for size in common::sizes() {
        read(&mut c, size);
    }
    c.final_summary();
}

fn read(c: &mut Criterion, size: u64) {
    let corpus = common::corpus(size);
    let db = SessionDb::open(&corpus.path).expect("facade opens");
    let baseline = Baseline::open(&corpus.path).expect("baseline opens");
    let label = common::label(size);
    let tip = corpus::deep_chain_tip();
    let root = corpus::deep_chain_root();

    let mut group = c.benchmark_group(format!("read_{label}"));
    let all = ListFilter::default();
    let telegram = ListFilter {
        source: Some("telegram".to_owned()),
        ..ListFilter::default()
    };
    group.bench_function("recent_sessions/facade", |b| {
        b.iter(|| db.recent_sessions(&all).expect("list"))
    });
    group.bench_function("recent_sessions/baseline", |b| {
        b.iter(|| baseline.recent_sessions(None, 20).expect("list"))
    });
    group.bench_function("recent_sessions_source/facade", |b| {
        b.iter(|| db.recent_sessions(&telegram).expect("list"))
    });
    group.bench_function("recent_sessions_source/baseline", |b| {
        b.iter(|| {
            baseline
                .recent_sessions(Some("telegram"), 20)
                .expect("list")
        })
    });
    assert_eq!(
        db.ancestors(&tip).expect("lineage").len(),
        corpus::DEEP_CHAIN_LEN
    );
    group.bench_function("ancestors_deep/facade", |b| {
        b.iter(|| db.ancestors(&tip).expect("lineage"))
    });
    group.bench_function("ancestors_deep/baseline", |b| {
        b.iter(|| baseline.ancestors(&tip).expect("lineage"))
    });
    group.bench_function("descendants_deep/facade", |b| {
        b.iter(|| db.descendants(&root).expect("lineage"))
    });
    group.bench_function("descendants_deep/baseline", |b| {
        b.iter(|| baseline.descendants(&root).expect("lineage"))
    });
    group.bench_function("model_totals/facade", |b| {
        b.iter(|| db.model_totals().expect("stats"))
    });
    group.bench_function("model_totals/baseline", |b| {
        b.iter(|| baseline.model_totals().expect("stats"))
    });
    group.bench_function("top_sessions/facade", |b| {
        b.iter(|| db.top_sessions(10).expect("stats"))
    });
    group.bench_function("top_sessions/baseline", |b| {
        b.iter(|| baseline.top_sessions(10).expect("stats"))
    });
    group.finish();

    let filter = ExportFilter::default();
    let summary = db
        .export_jsonl(std::io::sink(), &filter, |_| {})
        .expect("export");
    let counts = baseline.export_jsonl(std::io::sink()).expect("export");
    eprintln!(
        "export_{label}: facade {} sessions, {} messages, {} bytes; baseline {} bytes",
        summary.sessions, summary.messages, summary.bytes, counts.bytes
    );
    let mut group = c.benchmark_group(format!("export_{label}"));
    group.throughput(Throughput::Elements(summary.messages));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(if size >= 1_000_000 { 60 } else { 10 }));
    group.bench_function("export_jsonl/facade", |b| {
        b.iter(|| {
            db.export_jsonl(std::io::sink(), &filter, |_| {})
                .expect("export")
        })
    });
    group.bench_function("export_jsonl/baseline", |b| {
        b.iter(|| baseline.export_jsonl(std::io::sink()).expect("export"))
    });
    group.finish();
    db.close().expect("close");
}
