//! The PostgreSQL backend against a real server: `HERMES_STATE_TEST_PG_URL`
//! names it (`.ci/run` starts one, so CI never skips); without it each test
//! prints `skipped: …` and returns. Every test works in a fresh schema,
//! dropped afterwards.

// The tests print `skipped:` lines and their tallies on purpose.
#![allow(clippy::print_stdout)]

mod cancel;
mod cjk_search;
mod common;
mod conformance;
mod doctor;
mod hosts;
mod open_and_migrate;
mod server_errors;
mod settings;
mod sweeps;
mod tls;
mod writes;
