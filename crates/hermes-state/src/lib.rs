#![doc = include_str!("../README.md")]

mod coordination;
mod db;
mod doctor;
mod error;
mod export;
mod fts;
mod maintenance;
mod messages;
pub mod paths;
mod reads;
mod repair;
mod search;
mod sessions;
mod titles;

pub use coordination::{Delegation, DelegationFilter, NewDelegation};
pub use db::{CHECKPOINT_EVERY, FTS_MERGE_EVERY, SessionDb};
pub use doctor::{
    CounterMismatch, DanglingParent, DoctorReport, DuplicateTitle, FtsCheck, FtsNote,
    FtsTableCheck, LineageCycle, OrphanedMessages,
};
pub use error::{Error, Result};
pub use export::{
    EXPORT_FORMAT, EXPORT_FORMAT_VERSION, ExportFilter, ExportSummary, ImportOptions, ImportReport,
    SessionExport,
};
pub use hermes_state_query::lineage::LineageEntry;
pub use hermes_state_query::listing::{ListFilter, SessionListing};
pub use hermes_state_query::search::{ContextMessage, FtsCapabilities, SearchHit, SearchOptions};
pub use hermes_state_query::stats::{ModelTotals, TopSession, UsageAttribution};
pub use hermes_state_query::{self as query, MessagePage, TitleError};
pub use hermes_state_schema::{self as schema, JournalMode, OpenReport};
pub use hermes_state_types::{
    self as types, AuxiliaryUsage, Content, ConversationMessage, ErrorKind, Message, NewMessage,
    NewSession, SCHEMA_VERSION, Session, TokenUpdate,
};
pub use maintenance::{PruneOptions, PruneReport};
pub use repair::{BrokenLink, ClearedTitle, FtsRebuild, RepairOptions, RepairReport};
pub use rusqlite;
pub use serde_json;
