//! Keystroke-to-screen latency of `hermes-state search -i` on a bench corpus,
//! driven in tmux as a person types:
//!
//! ```text
//! cargo build --release -p hermes-state-cli
//! cargo run --release -p hermes-state-benches --example interactive_latency -- \
//!     target/release/hermes-state 100k kestrel harbor 数据库
//! ```
//!
//! The corpus is a size (`100k`: the bench corpus, made when missing) or the
//! path of an existing store, used as it is. Either way only `search -i`
//! opens it, read-only, as every reading command opens a store.
//!
//! For every key of every word (each word typed `REPEATS` times, default 7,
//! `$HERMES_BENCH_REPEATS`), two times from `tmux send-keys` returning:
//!
//! - *first screen*: the pane shows the query with that key **and results
//!   for it**: its status line gives a final answer, or a partial answer
//!   with at least one hit (`N results so far (partial — still
//!   searching)`, N > 0). A screen showing the query while the status line
//!   says `searching…` (the hits of the previous key, dimmed) does not count;
//! - *final screen*: the status line gives the final answer (not partial,
//!   not searching).
//!
//! The next key is sent once the final screen shows, so every key is timed
//! alone (no cancellation). Needs tmux.

// A command-line tool: the table goes to the terminal.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use hermes_state_benches::corpus::{self, Corpus};

const SOCKET: &str = "hermes-state-interactive-latency";
const HEIGHT: usize = 40;

fn tmux(args: &[&str]) -> String {
    let output = Command::new("tmux")
        .args(["-L", SOCKET, "-f", "/dev/null"])
        .args(args)
        .output()
        .expect("tmux runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What the pane shows for a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Shown {
    /// Another query, or this one without results for it yet.
    Nothing,
    /// A partial answer with hits.
    Partial,
    /// The final answer.
    Final,
}

/// What the screen shows for `prompt` (its first line).
fn shown(screen: &str, prompt: &str) -> Shown {
    let lines: Vec<&str> = screen.lines().collect();
    if lines.first().map(|l| l.trim_end()) != Some(prompt.trim_end()) {
        return Shown::Nothing;
    }
    // The status line: the second-to-last row of the pane.
    let status = lines.get(HEIGHT - 2).copied().unwrap_or_default();
    if status.starts_with("searching…") || status.is_empty() {
        Shown::Nothing
    } else if status.contains("(partial — still searching)") {
        let count: usize = status
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if count > 0 {
            Shown::Partial
        } else {
            Shown::Nothing
        }
    } else {
        Shown::Final
    }
}

/// Waits until the pane shows at least `wanted` for `prompt`; the time it
/// took from `start`.
fn wait_for(prompt: &str, wanted: Shown, start: Instant) -> f64 {
    loop {
        let screen = tmux(&["capture-pane", "-p"]);
        if shown(&screen, prompt) >= wanted {
            return start.elapsed().as_secs_f64() * 1e3;
        }
        if start.elapsed() > Duration::from_secs(120) {
            eprintln!("error: waited 120 s for {prompt:?}; the screen:\n{screen}");
            std::process::exit(1);
        }
    }
}

/// The value at quantile `q` of sorted `ms` (nearest rank).
fn quantile(ms: &[f64], q: f64) -> f64 {
    let rank = ((q * ms.len() as f64).ceil() as usize).clamp(1, ms.len());
    ms[rank - 1]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(bin), Some(store)) = (args.first(), args.get(1)) else {
        eprintln!("usage: interactive_latency PATH-TO-hermes-state SIZE|STORE WORD...");
        std::process::exit(2);
    };
    let path = if let Some(size) = corpus::parse_size(store) {
        Corpus::ensure(size, &mut |line| eprintln!("{line}"))
            .expect("corpus")
            .path
    } else {
        let path = PathBuf::from(store);
        assert!(path.is_file(), "{store}: no such store");
        path
    };
    let repeats: usize = std::env::var("HERMES_BENCH_REPEATS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(7);
    let db = path.to_str().expect("utf-8 path");
    tmux(&["kill-server"]);
    tmux(&[
        "new-session",
        "-d",
        "-x",
        "120",
        "-y",
        &HEIGHT.to_string(),
        &format!("'{bin}' --db '{db}' search -i; exec cat"),
    ]);
    let socket_path = tmux(&["display-message", "-p", "#{socket_path}"]);
    wait_for("search ›", Shown::Final, Instant::now());
    std::thread::sleep(Duration::from_secs(1));

    type Samples = (String, Vec<f64>, Vec<f64>);
    let mut samples: BTreeMap<(usize, usize), Samples> = BTreeMap::new();
    for (w, word) in args[2..].iter().enumerate() {
        for _ in 0..repeats {
            for (i, (at, c)) in word.char_indices().enumerate() {
                let query = &word[..at + c.len_utf8()];
                let prompt = format!("search › {query}");
                let start = Instant::now();
                tmux(&["send-keys", "-l", &c.to_string()]);
                let first = wait_for(&prompt, Shown::Partial, start);
                let last = wait_for(&prompt, Shown::Final, start);
                let entry = samples
                    .entry((w, i))
                    .or_insert_with(|| (query.to_owned(), Vec::new(), Vec::new()));
                entry.1.push(first);
                entry.2.push(last);
            }
            tmux(&["send-keys", "C-u"]);
            wait_for("search ›", Shown::Final, Instant::now());
        }
    }
    tmux(&["kill-server"]);
    // tmux leaves the socket's file behind.
    let _ = std::fs::remove_file(socket_path.trim());

    println!(
        "| query so far | first screen p50 | p95 | max | final screen p50 | p95 | max | keys |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (query, mut first, mut last) in samples.into_values() {
        first.sort_by(f64::total_cmp);
        last.sort_by(f64::total_cmp);
        println!(
            "| `{query}` | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {:.1} ms | {} |",
            quantile(&first, 0.5),
            quantile(&first, 0.95),
            first[first.len() - 1],
            quantile(&last, 0.5),
            quantile(&last, 0.95),
            last[last.len() - 1],
            first.len()
        );
    }
}
