//! One conformance suite for every backend: each case runs through
//! `dyn SessionStore` on SQLite always, and on PostgreSQL whenever
//! `HERMES_STATE_TEST_PG_URL` names a server (`.ci/run` starts one, so CI
//! never skips it; a local run without it prints `skipped:`). Where the
//! backends may differ (ranking, snippet windows), the case says so and
//! compares what both guarantee.

// The tests print `skipped:` lines and their tallies on purpose.
#![allow(clippy::print_stdout)]

mod accounting;
mod backends;
mod beyond_spec;
mod conversation_search;
mod coordination;
mod cron_and_repo_roots;
mod delegations;
mod deletes;
mod export_import;
mod handoff;
mod lineage;
mod lookups;
mod message_edits;
mod message_reads;
mod more_ops;
mod moving;
mod original_errors;
mod prune;
mod read_only;
mod rich_listing;
mod search;
mod session_count;
mod session_updates;
mod sessions;
mod stats;
mod sweeps;
mod telegram_topics;
mod turns;

pub use backends::backends;
