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

pub mod accounting;
pub mod affinity;
pub mod cancel;
pub mod cleanup;
pub mod clock;
mod code_point_ranges;
pub mod compat;
pub mod compression_lineage;
pub mod conversation;
pub mod conversation_repair;
pub mod conversation_search;
pub mod coordination;
mod error;
pub mod export;
pub mod fts5_syntax;
pub mod gateway;
pub mod health;
pub mod import_links;
pub mod lineage;
pub mod listing;
pub mod lookups;
pub mod message_reads;
pub mod messages;
mod original;
pub mod paging;
pub mod prune;
pub mod retry;
pub mod rich_listing;
pub mod sanitize;
pub mod search;
pub mod search_scope;
pub mod session_ref;
pub mod session_updates;
pub mod sessions;
pub mod stats;
pub mod store;
pub mod telegram_topics;
pub mod time_window;
pub mod titles;
pub mod usage_window;

pub use error::{Backend, BackendFailure, Error, Result};
pub use original::OriginalError;
pub use store::SessionStore;

/// The contract's traits, to call a store's operations: `use
/// hermes_state_core::prelude::*;`.
pub mod prelude {
    pub use crate::store::{
        Accounting, BackendName, Cleanup, Coordination, Exchange, Lineage, Listings, Messages,
        Search, SessionStore, Sessions, Titles,
    };
}
