#![doc = include_str!("../README.md")]

mod accounting;
mod ad_hoc_query;
mod backend;
pub mod by_name;
mod cleanup;
mod conversation_search;
mod coordination;
mod db;
mod doctor;
mod error;
mod export;
mod fts;
mod fts_steps;
mod group_commit;
mod handoff;
mod inspect;
mod lineage;
mod listings;
mod lookups;
mod maintenance;
pub mod malformed_repair;
mod message_edits;
mod messages;
#[cfg(feature = "postgres")]
mod migrate_to;
pub mod paths;
mod read_pool;
mod reads;
mod repair;
mod rich_listing;
mod search;
mod session_updates;
mod sessions;
mod telegram_topics;
mod titles;

pub use ad_hoc_query::QueryRows;
/// The contract's traits, to call a store's operations, and [`AsSqlite`]:
/// `use hermes_state::prelude::*;`.
pub mod prelude {
    pub use crate::backend::AsSqlite;
    pub use hermes_state_core::prelude::*;
}

pub use backend::{
    AsSqlite, DATABASE_URL_VAR, PostgresUrl, SUPERSEDED_AT, SUPERSEDED_BY, SessionStore,
    StoreLocation, open_store, open_store_with,
};
pub use cleanup::{
    AutoArchiveOptions, AutoArchiveReport, AutoPruneOptions, AutoPruneReport, RefusedSession,
    SessionsImportReport,
};
pub use coordination::{Delegation, DelegationFilter, NewDelegation};
pub use db::{CHECKPOINT_EVERY, FTS_MERGE_EVERY, FTS_MERGE_PAGES, SessionDb, StoreOptions};
pub use doctor::{
    CounterMismatch, DanglingParent, DoctorReport, DuplicateTitle, FtsCheck, FtsNote,
    FtsTableCheck, LineageCycle, OrphanedMessages,
};
pub use error::{BusyError, Error, OriginalError, Result};
pub use export::{
    EXPORT_FORMAT, EXPORT_FORMAT_VERSION, ExportFilter, ExportPart, ExportSummary,
    IMPORT_LINE_LIMIT, ImportOptions, ImportReport, LineageExport, OriginalJsonWriter,
    SessionExport, original_json_to_jsonl,
};
pub use fts_steps::StoragePhase;
pub use group_commit::{MAX_BATCH_OPS, MAX_BATCH_TIME, WriteBatches};
pub use handoff::{HANDOFF_ERROR_MAX_CHARS, HandoffState};
pub use hermes_state_core::clock::{Clock, FixedClock, SystemClock};
pub use hermes_state_core::{Backend, BackendFailure};
/// Rules written once over the contract, for every client of either backend:
/// which session an argument names, search hits in a lineage or a time
/// window, the sessions and the usage statistics of a time window.
pub use hermes_state_core::{cancel, paging, search_scope, session_ref, time_window, usage_window};
/// The PostgreSQL backend (feature `postgres`).
#[cfg(feature = "postgres")]
pub use hermes_state_postgres as postgres;
/// The read side, for raw-SQL tests and tools (feature `raw-sql`).
#[cfg(feature = "raw-sql")]
pub use hermes_state_query as query;
pub use hermes_state_query::conversation_repair::ConversationDict;
pub use hermes_state_query::conversation_search::{ConversationHit, ConversationScope};
pub use hermes_state_query::lineage::LineageEntry;
pub use hermes_state_query::listing::{ListFilter, SessionListing};
pub use hermes_state_query::lookups::{PeerLookup, SessionActivity};
pub use hermes_state_query::message_reads::{AnchoredView, MessagesAround, RecentUserMessage};
pub use hermes_state_query::messages::ResumeConversations;
pub use hermes_state_query::rebuild_status::RebuildStatus;
pub use hermes_state_query::rich_listing::{RichListOptions, RichSession, SessionCwd};
pub use hermes_state_query::search::{
    ContextMessage, FtsCapabilities, QueryProblem, SearchHit, SearchOptions, query_problem,
};
pub use hermes_state_query::sessions::SessionCountOptions;
pub use hermes_state_query::stats::{ModelTotals, TopSession, UsageAttribution};
pub use hermes_state_query::telegram_topics::{ALREADY_LINKED, TopicBinding, TopicBindingRequest};
pub use hermes_state_query::{MessagePage, QueryError, TitleError};
/// The schema crate, for raw-SQL tests and tools (feature `raw-sql`).
#[cfg(feature = "raw-sql")]
pub use hermes_state_schema as schema;
pub use hermes_state_schema::optimize::{
    FtsIndex, OptimizeProgress, OptimizeReport, RebuildReport, Refusal,
};
pub use hermes_state_schema::{
    FileShape, FtsLayout, JournalMode, OpenReport, SchemaError, StoreShape,
};
pub use hermes_state_types::{
    AuxiliaryUsage, Content, ConversationMessage, ErrorKind, Message, NewMessage, NewSession,
    SCHEMA_VERSION, Session, StoredValue, TokenUpdate,
};
pub use inspect::{FtsInfo, MigrationPlan, SchemaInfo, TableInfo};
pub use maintenance::{
    ArchiveSelection, PruneCandidate, PruneFilters, PruneOptions, PruneReport, PruneSelection,
};
pub use message_edits::RewindResult;
#[cfg(feature = "postgres")]
pub use migrate_to::{MoveReport, migrate_postgres_location_to_sqlite, migrate_postgres_to_sqlite};
pub use read_pool::MAX_READERS;
pub use repair::{BrokenLink, ClearedTitle, FtsRebuild, RepairOptions, RepairReport};
/// `rusqlite`, for raw-SQL tests and tools (feature `raw-sql`).
#[cfg(feature = "raw-sql")]
pub use rusqlite;
pub use serde_json;
pub use session_updates::{CompressionCooldown, GatewayPeer, SESSION_RESET};
