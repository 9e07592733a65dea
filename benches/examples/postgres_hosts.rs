//! Several hosts on one store: T writer processes (each its own handle — on
//! PostgreSQL its own connection pool, standing for a host) append to T
//! sessions for a phase while R threads of the parent search, on the same
//! corpus in a SQLite file and in a PostgreSQL schema, through the same
//! `SessionStore` seam. Reports appends/s, append p50/p99, the fewest and
//! most appends of one process, and search p99 idle and under the writers.
//!
//! ```text
//! eval "$(bash .ci/postgres.sh start)"
//! cargo run --release -p hermes-state-benches --example postgres_hosts -- 10k 1,2,4,8 2 5
//! bash .ci/postgres.sh stop "$PGDIR"
//! ```
//!
//! Arguments: corpus size (default `10k`), writer counts (default `1,2,4,8`),
//! searching threads (default 2), seconds per phase (default 5). The server
//! is `HERMES_STATE_BENCH_PG_URL`, else `HERMES_STATE_TEST_PG_URL`; the bench
//! works in a schema of its own and drops it at the end. Every write of every
//! process goes through the backend's one write path (on PostgreSQL: one
//! transaction per append under the store's writer lock taken shared and
//! its session's key, so appends of different processes commit side by side).

// A command-line tool: the figures go to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use hermes_state::{
    NewMessage, NewSession, SearchOptions, SessionDb, SessionStore, StoreLocation, open_store,
};
use hermes_state_benches::corpus::{Corpus, parse_size, size_label};
use hermes_state_benches::writers::{
    Latencies, collect_appends, run_writer, spawn_writers, unix_now, wait_until,
};

/// A store named on the command line of a child: a file path or a URL.
fn location(text: &str) -> StoreLocation {
    if text.starts_with("postgres") {
        StoreLocation::parse(text).expect("a PostgreSQL URL")
    } else {
        StoreLocation::Sqlite(PathBuf::from(text))
    }
}

fn writer_session(w: usize) -> String {
    format!("bench-host-{w}")
}

/// The child: opens its own handle, then appends as writer `w` from the
/// common start (Unix seconds) for `secs` seconds.
fn child(store: &str, w: usize, start: f64, secs: f64) {
    let store = open_store(&location(store), false).expect("child open");
    run_writer(start, secs, |i| {
        let message = NewMessage::new(writer_session(w), "user").content(format!(
            "host {w} message {i}: deploying the kubernetes cluster again"
        ));
        store.append_message(&message).expect("append");
    });
}

/// R threads searching in a loop until `stop`; each returns its latencies.
fn searchers(
    store: &Arc<Box<dyn SessionStore>>,
    readers: usize,
    stop: &Arc<AtomicBool>,
) -> Vec<thread::JoinHandle<Vec<f64>>> {
    let queries = [
        "kubernetes",
        "docker build",
        "deploy*",
        "database OR migration",
    ];
    (0..readers)
        .map(|r| {
            let store = Arc::clone(store);
            let stop = Arc::clone(stop);
            thread::spawn(move || {
                let mut latencies = Vec::new();
                let mut i = r;
                while !stop.load(Ordering::Relaxed) {
                    let options = SearchOptions {
                        limit: 20,
                        ..SearchOptions::default()
                    };
                    let t = Instant::now();
                    store
                        .search_messages(queries[i % queries.len()], &options)
                        .expect("search");
                    latencies.push(t.elapsed().as_secs_f64() * 1e6);
                    i += 1;
                }
                latencies
            })
        })
        .collect()
}

fn searched(handles: Vec<thread::JoinHandle<Vec<f64>>>) -> Latencies {
    Latencies(
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a searching thread"))
            .collect(),
    )
}

/// One phase: search idle, then `writers` processes appending while the
/// searchers run again. Prints one table row.
fn phase(name: &str, store_arg: &str, writers: usize, readers: usize, secs: f64) {
    let store: Arc<Box<dyn SessionStore>> =
        Arc::new(open_store(&location(store_arg), false).expect("open"));
    for w in 0..writers {
        // Sessions made ahead, outside the timings (an existing one is kept).
        let _ = store.create_session(&NewSession::new(writer_session(w), "bench"));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let idle = searchers(&store, readers, &stop);
    thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let idle = searched(idle);

    let start = unix_now() + 3.0;
    let children = spawn_writers(store_arg, writers, start, secs);
    wait_until(start);
    let stop = Arc::new(AtomicBool::new(false));
    let busy = searchers(&store, readers, &stop);
    let per_writer = collect_appends(children);
    stop.store(true, Ordering::Relaxed);
    let busy = searched(busy);
    let appends: usize = per_writer.iter().map(Vec::len).sum();
    let fewest = per_writer.iter().map(Vec::len).min().unwrap_or(0);
    let most = per_writer.iter().map(Vec::len).max().unwrap_or(0);
    let append = Latencies(per_writer.concat());
    println!(
        "| {name} | {writers} | {:.0} | {:.2} / {:.2} | {fewest}..{most} | {:.2} → {:.2} ({:.2}×) |",
        appends as f64 / secs,
        append.at(0.5) / 1e3,
        append.at(0.99) / 1e3,
        idle.at(0.99) / 1e3,
        busy.at(0.99) / 1e3,
        busy.at(0.99) / idle.at(0.99)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("child") {
        let w = args[2].parse().expect("writer");
        let start = args[3].parse().expect("start");
        let secs = args[4].parse().expect("seconds");
        child(&args[1], w, start, secs);
        return;
    }
    let size = args.first().and_then(|a| parse_size(a)).unwrap_or(10_000);
    let counts: Vec<usize> = args
        .get(1)
        .map(|a| a.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 2, 4, 8]);
    let readers: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2);
    let secs: f64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(5.0);
    let admin = std::env::var("HERMES_STATE_BENCH_PG_URL")
        .or_else(|_| std::env::var("HERMES_STATE_TEST_PG_URL"))
        .expect(
            "set HERMES_STATE_BENCH_PG_URL (or HERMES_STATE_TEST_PG_URL) to a PostgreSQL server",
        );
    let corpus = Corpus::ensure(size, &mut |line| eprintln!("{line}")).expect("corpus");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus.copy_to(dir.path()).expect("copy");
    let schema = format!("bench_hosts_{}", std::process::id());
    let separator = if admin.contains('?') { '&' } else { '?' };
    let url = format!("{admin}{separator}schema={schema}");
    SessionDb::open(&path)
        .expect("open the copy")
        .migrate_to_postgres(&url)
        .expect("move the corpus to PostgreSQL");
    println!(
        "corpus {} ({size} messages), {readers} searching threads, {secs} s per phase\n",
        size_label(size)
    );
    println!(
        "| store | writer processes | appends/s | append p50 / p99 ms | appends per process | search p99 idle → under load ms |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    let file = path.to_str().expect("utf-8 path").to_owned();
    for &writers in &counts {
        // The two stores alternate, so that a slow spell of the disk does
        // not land on one of them only.
        phase("SQLite", &file, writers, readers, secs);
        phase("PostgreSQL", &url, writers, readers, secs);
    }
    if let Ok(mut client) = postgres::Client::connect(&admin, postgres::NoTls) {
        let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"));
    }
}
