//! The integration tests of the facade, in one binary: every test binary is
//! a link of its own. Each module is one subject; `common` holds the fixtures
//! several of them use.
//!
//! Tests that re-run this binary as a child process select the child by its
//! full test name, built with `common::child_test(module_path!(), …)`.
#![allow(missing_docs)]

mod common;

mod api;
mod beyond_spec;
mod by_name;
mod cancel;
mod conformance;
mod contention;
mod coordination;
mod default_path;
mod doctor;
mod export;
mod group_commit;
mod hostile;
mod interop;
mod maintenance;
mod open_store;
mod parity;
mod redaction;
mod reliability;
mod replay;
mod search;
mod search_shapes;
mod titles;
mod upgrade;
mod upgrade_processes;
