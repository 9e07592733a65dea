//! Append benches: `append_message` into one session and across many
//! sessions, and `append_messages` of 100 at once, facade against the
//! hand-written baseline, each on its own copy of the 10k corpus.
//!
//! Every append is one durable transaction (WAL, SQLite's default
//! `synchronous`), so these figures include one WAL fsync per append.

// Bench binaries report progress and hit counts on stderr.
#![allow(clippy::print_stderr)]

mod common;

use criterion::{Criterion, Throughput};
use hermes_state::prelude::*;
use hermes_state::{NewMessage, SessionDb};
use hermes_state_benches::baseline::{Baseline, RawMessage};
use hermes_state_benches::{corpus, message_pool};

const POOL: usize = 4_000;
const BATCH: usize = 100;

fn main() {
    let mut c = common::criterion();
    append(&mut c);
    c.final_summary();
}

struct Stores {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    db: SessionDb,
    baseline: Baseline,
}

fn stores() -> Stores {
    // Appends always start from the 10k corpus: the cost of an append hardly
    // depends on the store's size, and copying a 1m store per run would not pay.
    let corpus = common::corpus(10_000);
    let facade_dir = tempfile::tempdir().expect("temp dir");
    let baseline_dir = tempfile::tempdir().expect("temp dir");
    let db =
        SessionDb::open(corpus.copy_to(facade_dir.path()).expect("copy")).expect("facade opens");
    // Open the writable connection now, so no measured append pays for it.
    db.migrate().expect("writable connection");
    let baseline = Baseline::open(&corpus.copy_to(baseline_dir.path()).expect("copy"))
        .expect("baseline opens");
    let facade_sync: i64 = db
        .read(|conn| {
            Ok(conn
                .query_row("PRAGMA synchronous", [], |r| r.get(0))
                .unwrap_or(-1))
        })
        .expect("pragma");
    assert_eq!(baseline.synchronous().expect("pragma"), facade_sync);
    eprintln!(
        "append benches on copies of {}, synchronous={facade_sync}",
        corpus.path.display()
    );
    Stores {
        _dirs: (facade_dir, baseline_dir),
        db,
        baseline,
    }
}

fn pools(sessions: &[String]) -> (Vec<NewMessage>, Vec<RawMessage>) {
    let facade = message_pool(sessions, POOL);
    let raw = facade.iter().map(RawMessage::from_new).collect();
    (facade, raw)
}

fn append(c: &mut Criterion) {
    let stores = stores();
    let one = vec![corpus::session_id(120)];
    let many: Vec<String> = (60..260).map(corpus::session_id).collect();

    let mut group = c.benchmark_group("append");
    group.throughput(Throughput::Elements(1));
    for (name, sessions) in [("one_session", &one), ("many_sessions", &many)] {
        let (facade, raw) = pools(sessions);
        let mut i = 0;
        group.bench_function(format!("{name}/facade"), |b| {
            b.iter(|| {
                i += 1;
                stores.db.append_message(&facade[i % POOL]).expect("append")
            })
        });
        let mut i = 0;
        group.bench_function(format!("{name}/baseline"), |b| {
            b.iter(|| {
                i += 1;
                stores.baseline.append(&raw[i % POOL]).expect("append")
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("append_batch");
    group.throughput(Throughput::Elements(BATCH as u64));
    let (facade, raw) = pools(&many);
    let chunks = POOL / BATCH;
    let mut i = 0;
    group.bench_function("batch_100/facade", |b| {
        b.iter(|| {
            i += 1;
            let at = (i % chunks) * BATCH;
            stores
                .db
                .append_messages(&facade[at..at + BATCH])
                .expect("append")
        })
    });
    let mut i = 0;
    group.bench_function("batch_100/baseline", |b| {
        b.iter(|| {
            i += 1;
            let at = (i % chunks) * BATCH;
            stores
                .baseline
                .append_batch(&raw[at..at + BATCH])
                .expect("append")
        })
    });
    group.finish();
    stores.db.close().expect("close");
}
