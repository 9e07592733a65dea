//! A gateway under load: T threads append, each to its own session, while R
//! threads search, all through one shared handle; on this library and on the
//! same library behind one `Mutex` (every call serialised, the original's
//! model: one connection, one lock), on copies of the same cached corpus.
//!
//! ```text
//! cargo run --release -p hermes-state-benches --example gateway -- 10k 8 2 5 3
//! cargo run --release -p hermes-state-benches --example gateway -- 10k 8 2 5 processes 3
//! ```
//!
//! Arguments: the corpus size (default `10k`), writer threads T (default 8),
//! searching threads R (default 2), seconds per phase (default 5), rounds
//! (default 1: each round runs the library, then the one-mutex model); with
//! `processes` instead of the rounds, the multi-process variant: T writer
//! processes (each its own handle, one append at a time) and R searching
//! threads in this process, once with the writers taking turns (the writer
//! queue) and once without (its lock files made impossible to open: SQLite's
//! lock alone); a number after `processes` repeats that many rounds.
//!
//! Each model runs two phases on a fresh copy of the corpus: searches alone
//! (idle: the R threads, no writer), then the R threads searching while the T
//! writers append. Printed: appends/s, append p50/p99/max, the fewest and
//! most appends of one writer (starvation shows as a writer far below the
//! others), search p50/p99 idle and under load, and the library's write
//! batches (operations per commit).

// A command-line tool: the figures go to stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use hermes_state::prelude::*;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use hermes_state::{NewMessage, SearchOptions, SessionDb};
use hermes_state_benches::cases::search_cases;
use hermes_state_benches::corpus::{self, Corpus};
use hermes_state_benches::writers::{
    Latencies, collect_appends, run_writer, spawn_writers, unix_now, wait_until,
    without_writer_turns,
};

/// How the handle is shared between the threads.
#[derive(Clone)]
enum Model {
    /// This library: one `SessionDb` shared as it is.
    Library(Arc<SessionDb>),
    /// The original's model: every call through one `Mutex`.
    OneMutex(Arc<Mutex<SessionDb>>),
}

impl Model {
    fn name(&self) -> &'static str {
        match self {
            Model::Library(_) => "library",
            Model::OneMutex(_) => "one mutex",
        }
    }

    fn with<T>(&self, call: impl FnOnce(&SessionDb) -> T) -> T {
        match self {
            Model::Library(db) => call(db),
            Model::OneMutex(db) => call(&db.lock().unwrap_or_else(|p| p.into_inner())),
        }
    }
}

fn queries() -> Vec<(String, SearchOptions)> {
    search_cases()
        .into_iter()
        .filter(|case| case.word_query)
        .map(|case| (case.query.clone(), case.options()))
        .collect()
}

/// R threads searching until `stop`; their latencies.
fn searchers(
    model: &Model,
    readers: usize,
    stop: &Arc<AtomicBool>,
) -> Vec<thread::JoinHandle<Vec<f64>>> {
    (0..readers)
        .map(|r| {
            let model = model.clone();
            let stop = Arc::clone(stop);
            thread::spawn(move || {
                let queries = queries();
                let mut latencies = Vec::new();
                let mut i = r;
                while !stop.load(Ordering::Relaxed) {
                    let (query, options) = &queries[i % queries.len()];
                    i += 1;
                    let t = Instant::now();
                    model
                        .with(|db| db.search_messages(query, options))
                        .expect("search");
                    latencies.push(t.elapsed().as_secs_f64() * 1e6);
                }
                latencies
            })
        })
        .collect()
}

fn collect(handles: Vec<thread::JoinHandle<Vec<f64>>>) -> Vec<Vec<f64>> {
    handles
        .into_iter()
        .map(|h| h.join().expect("bench thread"))
        .collect()
}

fn writer_session(w: usize) -> String {
    corpus::session_id(60 + w)
}

fn message(w: usize, i: usize) -> NewMessage {
    NewMessage::new(writer_session(w), "user").content(format!(
        "gateway writer {w} message {i}: the deploy finished, docker logs attached"
    ))
}

fn run_model(model: Model, writers: usize, readers: usize, phase: Duration) -> (f64, f64) {
    // Searches alone.
    let stop = Arc::new(AtomicBool::new(false));
    let idle = searchers(&model, readers, &stop);
    thread::sleep(phase);
    stop.store(true, Ordering::Relaxed);
    let idle = Latencies(collect(idle).concat());

    // Searches while the writers append.
    let stop = Arc::new(AtomicBool::new(false));
    let busy = searchers(&model, readers, &stop);
    let started = Instant::now();
    let appenders: Vec<_> = (0..writers)
        .map(|w| {
            let model = model.clone();
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let mut latencies = Vec::new();
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    let m = message(w, i);
                    i += 1;
                    let t = Instant::now();
                    model.with(|db| db.append_message(&m)).expect("append");
                    latencies.push(t.elapsed().as_secs_f64() * 1e6);
                }
                latencies
            })
        })
        .collect();
    thread::sleep(phase);
    stop.store(true, Ordering::Relaxed);
    let per_writer = collect(appenders);
    let elapsed = started.elapsed().as_secs_f64();
    let busy = Latencies(collect(busy).concat());
    let appends: usize = per_writer.iter().map(Vec::len).sum();
    let fewest = per_writer.iter().map(Vec::len).min().unwrap_or(0);
    let most = per_writer.iter().map(Vec::len).max().unwrap_or(0);
    let append = Latencies(per_writer.concat());
    println!(
        "== {} ({writers} writers, {readers} searchers)",
        model.name()
    );
    println!(
        "appends/s {:.0}; append {}; per writer {fewest}..{most}",
        appends as f64 / elapsed,
        append.summary()
    );
    println!("search idle:       {}", idle.summary());
    println!("search under load: {}", busy.summary());
    println!(
        "search p99 under load / idle: {:.2}",
        busy.at(0.99) / idle.at(0.99)
    );
    let batches = model.with(SessionDb::write_batches);
    println!(
        "write batches: {} transactions, {} operations ({:.2} per commit, largest {})",
        batches.transactions,
        batches.operations,
        batches.operations as f64 / batches.transactions.max(1) as f64,
        batches.largest
    );
    (appends as f64 / elapsed, busy.at(0.99))
}

fn open_copy(corpus: &Corpus, dir: &Path) -> SessionDb {
    let path = corpus.copy_to(dir).expect("copy");
    // Write the fresh copy back now: on ext4 (data=ordered) the first fsyncs
    // of the timed phase would otherwise wait for the copy's dirty pages
    // (measured: commits 2-3x slower for a whole phase at 100k).
    let _ = Command::new("sync").status();
    let db = SessionDb::open(path).expect("open");
    db.migrate()
        .expect("writable connection, outside the timings");
    db
}

/// The child of the multi-process variant: opens the store, then appends as
/// writer `w` from the common start (Unix seconds) for `secs` seconds.
fn child(path: &str, w: usize, start: f64, secs: f64) {
    let db = SessionDb::open(path).expect("child open");
    db.migrate().expect("writable");
    run_writer(start, secs, |i| {
        db.append_message(&message(w, i)).expect("append");
    });
}

fn processes(corpus: &Corpus, writers: usize, readers: usize, phase: Duration, turns: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Arc::new(open_copy(corpus, dir.path()));
    let path = db.path().to_owned();
    if !turns {
        without_writer_turns(&path).expect("disable the writer turns");
    }
    let model = Model::Library(Arc::clone(&db));
    let stop = Arc::new(AtomicBool::new(false));
    let idle = searchers(&model, readers, &stop);
    thread::sleep(phase);
    stop.store(true, Ordering::Relaxed);
    let idle = Latencies(collect(idle).concat());

    let stop = Arc::new(AtomicBool::new(false));
    // Every writer starts appending at the same moment, after its open.
    let start = unix_now() + 3.0;
    let store = path.to_str().expect("utf-8 path");
    let children = spawn_writers(store, writers, start, phase.as_secs_f64());
    wait_until(start);
    let busy = searchers(&model, readers, &stop);
    let per_writer = collect_appends(children);
    let elapsed = phase.as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let busy = Latencies(collect(busy).concat());
    let appends: usize = per_writer.iter().map(Vec::len).sum();
    let fewest = per_writer.iter().map(Vec::len).min().unwrap_or(0);
    let most = per_writer.iter().map(Vec::len).max().unwrap_or(0);
    let append = Latencies(per_writer.concat());
    println!(
        "== {writers} writer processes (one handle each), {readers} searching threads, {}",
        if turns {
            "taking turns (the writer queue)"
        } else {
            "without turns (SQLite's lock alone)"
        }
    );
    println!(
        "appends/s {:.0}; append {}; per process {fewest}..{most}",
        appends as f64 / elapsed,
        append.summary()
    );
    println!("search idle:       {}", idle.summary());
    println!("search under load: {}", busy.summary());
    println!(
        "search p99 under load / idle: {:.2}",
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
    let size = args
        .first()
        .and_then(|a| corpus::parse_size(a))
        .unwrap_or(10_000);
    let writers: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(8);
    let readers: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2);
    let phase = Duration::from_secs_f64(args.get(3).and_then(|a| a.parse().ok()).unwrap_or(5.0));
    let corpus = Corpus::ensure(size, &mut |line| eprintln!("{line}")).expect("corpus");
    println!(
        "corpus {} ({} messages), {} s per phase",
        corpus::size_label(size),
        size,
        phase.as_secs_f64()
    );
    if args.get(4).map(String::as_str) == Some("processes") {
        // Rounds alternate turns and no turns, as the rounds below do.
        let rounds: usize = args.get(5).and_then(|a| a.parse().ok()).unwrap_or(1);
        for round in 1..=rounds {
            println!("-- round {round} of {rounds}");
            for turns in [true, false] {
                processes(&corpus, writers, readers, phase, turns);
            }
        }
        return;
    }
    // Rounds alternate the models, so that a slow spell of the disk (its
    // fsync time varies several-fold on a shared machine) does not land on
    // one model only.
    let rounds: usize = args.get(4).and_then(|a| a.parse().ok()).unwrap_or(1);
    let (mut library, mut one_mutex) = ((0.0, 0.0), (0.0, 0.0));
    for round in 1..=rounds {
        println!("-- round {round} of {rounds}");
        let mut figures = Vec::new();
        for serialised in [false, true] {
            let dir = tempfile::tempdir().expect("tempdir");
            let db = open_copy(&corpus, dir.path());
            let model = if serialised {
                Model::OneMutex(Arc::new(Mutex::new(db)))
            } else {
                Model::Library(Arc::new(db))
            };
            figures.push(run_model(model, writers, readers, phase));
        }
        if let [(lib, lib_p99), (one, one_p99)] = figures[..] {
            println!(
                "library / one mutex: appends/s {:.2}x, search p99 under load {:.2}x",
                lib / one,
                lib_p99 / one_p99
            );
            library = (library.0 + lib, library.1 + lib_p99);
            one_mutex = (one_mutex.0 + one, one_mutex.1 + one_p99);
        }
    }
    if rounds > 1 {
        println!(
            "over {rounds} rounds: library {:.0} appends/s, one mutex {:.0}: {:.2}x",
            library.0 / rounds as f64,
            one_mutex.0 / rounds as f64,
            library.0 / one_mutex.0
        );
    }
}
