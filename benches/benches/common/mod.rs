//! What the three bench binaries share: corpus loading and criterion settings.

// Each bench binary uses only some of these helpers.
#![allow(dead_code)]

use std::time::Duration;

use criterion::Criterion;
use hermes_state_benches::corpus::{self, Corpus};

/// Criterion as configured from the command line (`cargo bench -- …`), with
/// shorter defaults than criterion's (2 s warm-up, 5 s measurement).
pub fn criterion() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args()
}

/// The cached corpus of `size` messages, built first when needed (progress
/// on stderr).
pub fn corpus(size: u64) -> Corpus {
    Corpus::ensure(size, &mut |line| eprintln!("{line}"))
        .unwrap_or_else(|e| panic!("corpus of {size} messages: {e}"))
}

/// The sizes to run (see [`corpus::bench_sizes`]).
pub fn sizes() -> Vec<u64> {
    corpus::bench_sizes()
}

/// `10k`, `1m`, …
pub fn label(size: u64) -> String {
    corpus::size_label(size)
}
