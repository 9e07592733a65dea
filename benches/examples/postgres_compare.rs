//! The PostgreSQL backend next to SQLite on the same corpus: the time to
//! move the corpus to PostgreSQL (`migrate_to_postgres`, verified), then
//! single appends (median, 99th percentile, appends/s) and every search
//! case of the benches (median and 99th percentile) on both, through the
//! same `SessionStore` seam.
//!
//! ```text
//! eval "$(bash .ci/postgres.sh start)"
//! cargo run --release -p hermes-state-benches --example postgres_compare -- 10k 500 20
//! bash .ci/postgres.sh stop "$PGDIR"
//! ```
//!
//! Arguments: corpus size (default `10k`), appends (default 500), runs per
//! search case (default 20). The server is `HERMES_STATE_BENCH_PG_URL`, else
//! `HERMES_STATE_TEST_PG_URL`; the bench works in a schema of its own and
//! drops it at the end (kept with `HERMES_STATE_BENCH_KEEP=1`, for `EXPLAIN`).

// A command-line tool: the figures go to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]
use std::time::Instant;

use hermes_state::{NewMessage, NewSession, SessionDb, SessionStore, StoreLocation, open_store};
use hermes_state_benches::cases::search_cases;
use hermes_state_benches::corpus::{Corpus, parse_size, size_label};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn summary(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(|a, b| a.total_cmp(b));
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

fn appends(store: &dyn SessionStore, count: usize) -> (f64, f64, f64) {
    store
        .create_session(&NewSession::new("bench-append", "cli"))
        .unwrap();
    let started = Instant::now();
    let samples: Vec<f64> = (0..count)
        .map(|i| {
            let message = NewMessage::new(
                "bench-append",
                if i % 2 == 0 { "user" } else { "assistant" },
            )
            .content(format!(
                "bench append {i}: deploying the kubernetes cluster again, step {i}"
            ));
            let t = Instant::now();
            store.append_message(&message).unwrap();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let rate = count as f64 / started.elapsed().as_secs_f64();
    let (p50, p99) = summary(samples);
    (p50, p99, rate)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let size = args.next().and_then(|a| parse_size(&a)).unwrap_or(10_000);
    let count: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(500);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let admin = std::env::var("HERMES_STATE_BENCH_PG_URL")
        .or_else(|_| std::env::var("HERMES_STATE_TEST_PG_URL"))
        .expect(
            "set HERMES_STATE_BENCH_PG_URL (or HERMES_STATE_TEST_PG_URL) to a PostgreSQL server",
        );
    let corpus = Corpus::ensure(size, &mut |line| eprintln!("{line}")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = corpus.copy_to(dir.path()).unwrap();
    let schema = format!("bench_{}", std::process::id());
    let separator = if admin.contains('?') { '&' } else { '?' };
    let url = format!("{admin}{separator}schema={schema}");

    let started = Instant::now();
    let report = SessionDb::open(&path)
        .unwrap()
        .migrate_to_postgres(&url)
        .unwrap();
    let moved = started.elapsed().as_secs_f64();
    println!(
        "corpus {}: moved to PostgreSQL and verified in {moved:.1} s ({:?})\n",
        size_label(size),
        report.rows
    );

    let sqlite = open_store(&StoreLocation::Sqlite(path), false).unwrap();
    let postgres = open_store(&StoreLocation::parse(&url).unwrap(), false).unwrap();
    // Warm both (connections, caches) before measuring.
    for store in [&sqlite, &postgres] {
        store.search_messages("warm", &Default::default()).unwrap();
    }

    println!("| appends ({count}) | median ms | p99 ms | appends/s |");
    println!("| --- | --- | --- | --- |");
    for store in [&sqlite, &postgres] {
        let (p50, p99, rate) = appends(store.as_ref(), count);
        println!(
            "| {} | {p50:.2} | {p99:.2} | {rate:.0} |",
            store.backend_name()
        );
    }

    println!(
        "\n| search case ({runs} runs) | SQLite median / p99 ms | PostgreSQL median / p99 ms | hits (SQLite / PostgreSQL) |"
    );
    println!("| --- | --- | --- | --- |");
    for case in search_cases() {
        let options = case.options();
        let mut cells = Vec::new();
        let mut hits = Vec::new();
        for store in [&sqlite, &postgres] {
            let samples: Vec<f64> = (0..runs)
                .map(|_| {
                    let t = Instant::now();
                    let found = store.search_messages(&case.query, &options).unwrap();
                    let elapsed = t.elapsed().as_secs_f64() * 1e3;
                    hits.push(found.len());
                    elapsed
                })
                .collect();
            let (p50, p99) = summary(samples);
            cells.push(format!("{p50:.2} / {p99:.2}"));
        }
        println!(
            "| {} | {} | {} | {} / {} |",
            case.name, cells[0], cells[1], hits[0], hits[runs]
        );
    }

    drop(postgres);
    if std::env::var_os("HERMES_STATE_BENCH_KEEP").is_some() {
        println!("\nkept schema {schema}");
        return;
    }
    if let Ok(mut client) = postgres::Client::connect(&admin, postgres::NoTls) {
        let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"));
    }
}
