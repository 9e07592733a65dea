//! Fuzzes opening and reading damaged stores: the input chooses bit flips,
//! byte overwrites and a truncation of a small real store.
//!
//! The checks are those of `damaged_store_input.rs`, which the facade's test
//! binary also compiles to replay this target's corpus and to walk every
//! page deterministically (`hostile::`): typed errors with the kind SQLite's
//! code calls for, or answers; never a panic; reads never change the file.
#![no_main]

#[path = "../../crates/hermes-state/tests/facade/hostile/damaged_store_input.rs"]
// The test binary calls more of it than the target does.
#[allow(dead_code)]
mod damaged_store_input;

use libfuzzer_sys::fuzz_target;

thread_local! {
    /// The pristine store, built once per fuzzing thread.
    static STORE: damaged_store_input::DamagedStore = damaged_store_input::DamagedStore::new();
}

fuzz_target!(|data: &[u8]| {
    STORE.with(|store| store.run(data));
});
