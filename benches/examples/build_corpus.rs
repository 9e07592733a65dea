//! Builds (or finds cached) bench corpora ahead of a bench run:
//!
//! ```text
//! cargo run --release -p hermes-state-benches --example build_corpus -- 10k 100k 1m
//! ```
//!
//! With no argument, the sizes of `$HERMES_BENCH_SIZES` (default `10k,100k`).

// A command-line tool: progress and the summary go to the terminal.
#![allow(clippy::print_stderr, clippy::print_stdout)]

use hermes_state_benches::corpus::{self, Corpus};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<u64> = if args.is_empty() {
        std::env::var("HERMES_BENCH_SIZES")
            .unwrap_or_else(|_| "10k,100k".to_owned())
            .split(',')
            .filter_map(corpus::parse_size)
            .collect()
    } else {
        args.iter().filter_map(|a| corpus::parse_size(a)).collect()
    };
    for size in sizes {
        match Corpus::ensure(size, &mut |line| eprintln!("{line}")) {
            Ok(corpus) => {
                let bytes = std::fs::metadata(&corpus.path)
                    .map(|m| m.len())
                    .unwrap_or(0);
                println!(
                    "{}: {} ({:.1} MB) {}",
                    corpus::size_label(size),
                    corpus.path.display(),
                    bytes as f64 / 1e6,
                    corpus.stats.to_json()
                );
            }
            Err(error) => {
                eprintln!("error: {error}");
                std::process::exit(1);
            }
        }
    }
}
