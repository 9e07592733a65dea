//! Domain types of the Hermes Agent session store (`state.db`, schema version 23).
//!
//! This crate is the vocabulary shared by every layer: sessions, messages, message
//! content, token accounting, the [`ErrorKind`] that every error of every layer
//! maps to, and [`stored`]: how a message's fields are stored and read back, the
//! one codec every writer and reader calls. It deliberately knows nothing about
//! SQLite, so a dashboard, a protocol crate or a test harness can use the types
//! without linking a database.
//!
//! Field names follow the columns of the original Python store, so that the JSON
//! form of these types (through serde) has the same keys as the original's row
//! dicts and a caller's code ports one to one.

pub mod civil;
mod content;
mod delegation;
pub mod dynamic;
mod error_kind;
mod message;
pub mod pyjson;
pub mod pyrepr;
pub mod pyvalue;
mod session;
pub mod stored;
pub mod text;

pub use content::Content;
pub use delegation::NewDelegation;
pub use error_kind::ErrorKind;
pub use message::{ConversationMessage, Message, NewMessage};
pub use session::{AuxiliaryUsage, NewSession, Session, TokenUpdate};
pub use stored::{StoredValue, StoredValueRef};

/// The schema version this library writes and fully understands (`schema_version.version`).
pub const SCHEMA_VERSION: i64 = 23;

/// The FTS storage layout version written to `state_meta.fts_storage_version`.
pub const FTS_STORAGE_VERSION: i64 = 1;

/// Unknown columns of a row, kept in table order so nothing an other build wrote is lost.
pub type ExtraColumns = serde_json::Map<String, serde_json::Value>;
