//! Fuzzes the JSONL importer (`SessionDb::import_jsonl`) with any bytes.
//!
//! The checks are those of `import_input.rs`, which the facade's test binary
//! also compiles to replay this target's corpus (`hostile::`): a refused
//! import changes no row of the store and blames the input; an accepted one
//! is faithful to the file.
#![no_main]

#[path = "../../crates/hermes-state/tests/facade/hostile/import_input.rs"]
// The test binary calls more of it than the target does.
#[allow(dead_code)]
mod import_input;

use libfuzzer_sys::fuzz_target;

thread_local! {
    /// The template store, built once per fuzzing thread.
    static TARGET: import_input::ImportTarget = import_input::ImportTarget::new();
}

fuzz_target!(|data: &[u8]| {
    TARGET.with(|target| target.run(data));
});
