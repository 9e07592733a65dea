//! Keystroke-to-screen latency of `hermes-state search -i` on a bench corpus,
//! driven in tmux as a person types:
//!
//! ```text
//! cargo build --release -p hermes-state-cli
//! cargo run --release -p hermes-state-benches --example interactive_latency -- \
//!     target/release/hermes-state 100k kestrel harbor 数据库
//! ```
//!
//! For every key of every word (typed 7 times), the time from `tmux
//! send-keys` returning to the pane's first line showing the query with that
//! key: the UI draws only after that query's search ran, so this is the
//! search, the drawing and tmux's round trip. The corpus is opened
//! read-only, as every reading command opens a store. Needs tmux.

// A command-line tool: the table goes to the terminal.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use hermes_state_benches::corpus::{self, Corpus};

const SOCKET: &str = "hermes-state-interactive-latency";
const REPEATS: usize = 7;

fn tmux(args: &[&str]) -> String {
    let output = Command::new("tmux")
        .args(["-L", SOCKET, "-f", "/dev/null"])
        .args(args)
        .output()
        .expect("tmux runs");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Waits until the pane's first line is `prompt` (trailing spaces aside).
fn wait_for_prompt(prompt: &str) {
    let start = Instant::now();
    loop {
        let screen = tmux(&["capture-pane", "-p"]);
        if screen.lines().next().unwrap_or_default().trim_end() == prompt.trim_end() {
            return;
        }
        if start.elapsed() > Duration::from_secs(60) {
            eprintln!("error: waited 60 s for {prompt:?}; the screen:\n{screen}");
            std::process::exit(1);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(bin), Some(size)) = (
        args.first(),
        args.get(1).and_then(|s| corpus::parse_size(s)),
    ) else {
        eprintln!("usage: interactive_latency PATH-TO-hermes-state SIZE WORD...");
        std::process::exit(2);
    };
    let corpus = Corpus::ensure(size, &mut |line| eprintln!("{line}")).expect("corpus");
    let db = corpus.path.to_str().expect("utf-8 path");
    tmux(&["kill-server"]);
    tmux(&[
        "new-session",
        "-d",
        "-x",
        "120",
        "-y",
        "40",
        &format!("'{bin}' --db '{db}' search -i; exec cat"),
    ]);
    let socket_path = tmux(&["display-message", "-p", "#{socket_path}"]);
    wait_for_prompt("search ›");
    std::thread::sleep(Duration::from_secs(1));

    let mut samples: BTreeMap<(usize, usize), (String, Vec<f64>)> = BTreeMap::new();
    for (w, word) in args[2..].iter().enumerate() {
        for _ in 0..REPEATS {
            for (i, (at, c)) in word.char_indices().enumerate() {
                let query = &word[..at + c.len_utf8()];
                let start = Instant::now();
                tmux(&["send-keys", "-l", &c.to_string()]);
                wait_for_prompt(&format!("search › {query}"));
                let ms = start.elapsed().as_secs_f64() * 1e3;
                samples
                    .entry((w, i))
                    .or_insert_with(|| (query.to_owned(), Vec::new()))
                    .1
                    .push(ms);
            }
            tmux(&["send-keys", "C-u"]);
            wait_for_prompt("search ›");
        }
    }
    tmux(&["kill-server"]);
    // tmux leaves the socket's file behind.
    let _ = std::fs::remove_file(socket_path.trim());

    println!("| query so far | median | max |");
    println!("| --- | ---: | ---: |");
    for (query, mut ms) in samples.into_values() {
        ms.sort_by(f64::total_cmp);
        println!(
            "| `{query}` | {:.1} ms | {:.1} ms |",
            ms[ms.len() / 2],
            ms[ms.len() - 1]
        );
    }
}
