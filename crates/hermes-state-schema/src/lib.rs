//! The v23 `state.db` schema: its exact DDL, opening and migrating files of
//! every version to it, the declarative column reconciler, version detection
//! and connection setup.
//!
//! This is the only crate of the workspace that issues DDL. Everything it does
//! on a file goes through [`open_writable`]: classify the file without writing,
//! refuse what must not be touched, set the pragmas, then, under one
//! `BEGIN IMMEDIATE` transaction that doubles as the cross-process migration
//! lock, run the original's open algorithm and this project's refinery steps.

pub mod ddl;
pub mod detect;
mod error;
pub mod fts;
pub mod history;
pub mod legacy;
pub mod malformed;
pub mod open;
pub mod optimize;
pub mod permissions;
pub mod reconcile;
pub mod telegram_topics;
pub mod title_index;

pub use detect::{FileShape, FtsLayout, StoreShape};
pub use error::SchemaError;
/// The SQLite base this crate stands on (connection setup, the CJK
/// tokenizer, the retry policy), re-exported under its old paths for
/// callers of this crate's opening functions.
pub use hermes_state_sqlite::{JournalMode, cjk, connection, open_read_only, retry};
pub use open::{OpenReport, open_writable};
pub use rusqlite;
