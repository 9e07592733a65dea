//! The integration tests of the CLI, in one binary: every test binary is a
//! link of its own.
//!
//! The real `hermes-state` binary against temporary stores: every command in
//! human and `--json` form, and the bad inputs a user meets (unknown session,
//! a file that is not a database, a malformed FTS query, a duplicate title,
//! an unreadable path, bad usage). `read_only`: reading commands never change
//! the store, errors are never empty answers, `export --output` is atomic.
//! One module per command group; `common` is the harness.
#![allow(missing_docs)]

mod common;

mod bad_input;
mod both_backends;
mod cjk;
mod curation;
mod demo;
mod doctor_old_counters;
mod empty_file;
mod everyday;
mod export_and_maintenance;
mod export_streamed;
mod human_times;
mod import_input;
mod interactive;
mod messages_and_titles;
mod named_commands;
mod navigation;
mod no_color;
mod postgres;
mod read_only;
mod read_only_folder;
mod reading;
mod refused_writes;
mod report_formats;
mod row_formats;
mod schema_and_migrate;
mod search_and_stats;
mod search_by_conversation;
mod search_conversation_scope;
mod search_query_problem;
mod sessions;
mod table_width;
