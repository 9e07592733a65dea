//! The contract of the Hermes Agent session store, linking no database.
//!
//! What a store *is* lives here, apart from how one is kept: the
//! operations of `api.md` as one trait per section (a blanket
//! `SessionStore` over all of them), the portable error both backends
//! report, the option, result and report types of those operations, and
//! the rules both backends must apply alike (the FTS5 query sanitizer and
//! grammar, conversation building and grouping, title numbering, the
//! origin markers, LIKE escaping, …). The SQLite store (`hermes-state`)
//! and the PostgreSQL store (`hermes-state-postgres`) implement it; code
//! written against it — the command line, the Python binding, a
//! downstream service — runs on either.
//!
//! Keeping it free of SQLite and PostgreSQL is what lets a PostgreSQL-only
//! deployment, a protocol crate or a dashboard use the contract without
//! linking a database it does not use (tidy test
//! `core_crate_links_no_database` in `xtask`).

pub mod cleanup;
mod error;
pub mod export;
pub mod gateway;
mod original;
pub mod titles;

pub use error::{Backend, BackendFailure, Error, Result};
pub use original::OriginalError;
