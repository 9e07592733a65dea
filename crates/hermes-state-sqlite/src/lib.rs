//! The SQLite base of the Hermes Agent session store, shared by the schema
//! crate (which writes the shape), the query crate (which reads it) and the
//! facade (which writes data):
//!
//! * [`connection`]: opening a connection and setting it up as the original
//!   does (busy timeout, journal-mode rule, foreign keys), read-only opens;
//! * [`cjk`]: the built-in `cjk_unicode61` FTS5 tokenizer, registered on
//!   every connection opened here;
//! * [`retry`] and [`transaction`]: the write-contention policy (the
//!   contract crate's, so both backends wait and give up alike) and the one
//!   `BEGIN IMMEDIATE` runner;
//! * [`error`]: the one SQLite error type, its context trait and the
//!   classification of SQLite codes into portable error kinds;
//! * [`names`]: FTS tables and triggers, `state_meta` keys;
//! * [`catalog`]: looking up schema objects;
//! * [`writer_queue`]: fair turns at the write lock between the processes
//!   sharing a store.
//!
//! It issues no DDL on the database and knows nothing of migrations.

pub mod catalog;
pub mod cjk;
pub mod connection;
pub mod contract_error;
pub mod error;
pub mod names;
pub mod transaction;
pub mod writer_queue;

pub use connection::{JournalMode, open_read_only, open_read_write};
pub use error::{Context, SqliteError, is_fts_corruption, sqlite_error_kind};
pub use hermes_state_core::retry;
pub use rusqlite;
