//! Fuzzes the `cjk_unicode61` FTS5 tokenizer with any text, UTF-8 or not,
//! through SQLite's tokenizer API and through an FTS5 table.
//!
//! The checks are those of `tokenizer_input.rs`, which the schema crate's
//! test binary also compiles to replay this target's corpus
//! (`cjk_hostile::`).
#![no_main]

#[path = "../../crates/hermes-state-schema/tests/schema/cjk_hostile/tokenizer_input.rs"]
// The test binary calls more of it than the target does.
#[allow(dead_code)]
mod tokenizer_input;

use libfuzzer_sys::fuzz_target;

thread_local! {
    /// One connection with the tokenizer registered, per fuzzing thread.
    static TARGET: tokenizer_input::TokenizerTarget = tokenizer_input::TokenizerTarget::new();
}

fuzz_target!(|data: &[u8]| {
    TARGET.with(|target| target.run(data));
});
