//! The read side of the Hermes Agent session store, over a plain
//! `&rusqlite::Connection`.
//!
//! Every function here only reads, and works on a read-only connection too, so
//! a dashboard or an indexer can depend on this crate without the facade and
//! its write path. Rows are mapped by column name, so files whose columns are
//! in another order (upgraded files) or that carry extra columns read the same.
//!
//! The statements are written against the v23 shape. A connection to a file
//! of another version is made v23-shaped by [`compat::adapt`] (temporary
//! views on that connection; nothing reaches the file) before the first
//! read, and again when its schema cookie moves; the facade's readers do so
//! in the one place they are handed out. Without it, a statement that names
//! a column or table the file lacks fails with SQLite's `no such column`.
//!
//! The types these reads give and the rules they share with the PostgreSQL
//! backend are the contract crate's (`hermes_state_core`); each module here
//! re-exports those of its own name, so they are found where they always were.

pub mod compat;
pub mod compression_lineage;
mod conditions;
pub mod conversation_search;
pub mod coordination;
mod error;
pub mod health;
pub mod import_links;
pub mod lineage;
pub mod listing;
pub mod lookups;
pub mod message_reads;
pub mod messages;
pub mod prune;
pub mod rebuild_status;
pub mod rich_listing;
pub mod rows;
pub mod search;
pub mod session_updates;
pub mod sessions;
pub mod stats;
pub mod telegram_topics;
pub mod titles;
pub mod values;

pub use compat::{Adaptation, adapt};
pub use error::QueryError;
/// The contract crate's pure modules, under the paths this crate always
/// had them at.
pub use hermes_state_core::{conversation, conversation_repair, fts5_syntax, sanitize};
/// What a reader needs besides this crate: `rusqlite`, a read-only open
/// (busy timeout and the CJK tokenizer, nothing written) and the SQLite
/// error inside [`QueryError`].
pub use hermes_state_sqlite::{SqliteError, open_read_only, rusqlite};
pub use messages::{MessagePage, get_messages, get_messages_as_conversation, message_count};
pub use search::{FtsCapabilities, FtsObjects, SearchHit, SearchOptions, search_messages};
pub use sessions::{get_meta, get_session, lineage_root_to_tip, session_exists};
pub use titles::{TitleError, sanitize_title};
