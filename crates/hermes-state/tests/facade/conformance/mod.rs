//! The conformance suite: the contract's cases live in the test kit
//! (`hermes_state_testkit::conformance`), and this binary runs them on
//! SQLite (`sqlite`); the PostgreSQL crate's test binary runs them on
//! PostgreSQL, so neither links the other backend for them.
//!
//! What stays here needs both backends in one binary or the facade itself,
//! on SQLite always and on PostgreSQL whenever `HERMES_STATE_TEST_PG_URL`
//! names a server (`.ci/run` starts one; a local run without it prints
//! `skipped:`): moving a store between the backends (`moving`), the
//! original's methods beyond `api.md` called through the facade's
//! `by_name` and compared across the backends (`beyond_spec`), and the
//! facade's export and import (`export_import`, until the codec moves to
//! the contract crate).

// The tests print `skipped:` lines and their tallies on purpose.
#![allow(clippy::print_stdout)]

mod backends;
mod beyond_spec;
mod export_import;
mod moving;
mod sqlite;
