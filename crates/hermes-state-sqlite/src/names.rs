//! Names every layer shares: the FTS tables and their triggers, and the
//! `state_meta` keys the v23 store reads or writes (`schema-v23.md` §6, §8).

/// The unicode61 index.
pub const FTS_BASE: &str = "messages_fts";
/// The trigram index (CJK and substring search).
pub const FTS_TRIGRAM: &str = "messages_fts_trigram";
/// The optional CJK-bigram index.
pub const FTS_CJK: &str = "messages_fts_cjk";
/// The view the CJK index reads.
pub const FTS_CJK_SOURCE_VIEW: &str = "messages_fts_cjk_src";
/// Every FTS table the store may have, in creation order.
pub const FTS_TABLES: [&str; 3] = [FTS_BASE, FTS_TRIGRAM, FTS_CJK];

/// The six triggers that maintain the base and trigram indexes.
pub const FTS_TRIGGERS: [&str; 6] = [
    "messages_fts_insert",
    "messages_fts_delete",
    "messages_fts_update",
    "messages_fts_trigram_insert",
    "messages_fts_trigram_delete",
    "messages_fts_trigram_update",
];
/// The three triggers of the CJK index.
pub const CJK_TRIGGERS: [&str; 3] = [
    "messages_fts_cjk_insert",
    "messages_fts_cjk_delete",
    "messages_fts_cjk_update",
];

/// `'1'` once the file has the v23 external-content FTS layout, complete.
pub const FTS_STORAGE_VERSION_KEY: &str = "fts_storage_version";
/// High-water id of the deferred rebuild of the base and trigram indexes.
pub const REBUILD_HIGH_WATER_KEY: &str = "fts_rebuild_high_water";
/// Progress of that rebuild.
pub const REBUILD_PROGRESS_KEY: &str = "fts_rebuild_progress";
/// High-water id of the CJK index's deferred backfill.
pub const CJK_HIGH_WATER_KEY: &str = "fts_cjk_rebuild_high_water";
/// Progress of that backfill.
pub const CJK_PROGRESS_KEY: &str = "fts_cjk_rebuild_progress";
/// Set when a process without the CJK tokenizer disabled a live CJK index.
pub const CJK_STALE_KEY: &str = "fts_cjk_stale";
/// Set by newer releases (v26+) when they detached every FTS index.
pub const FTS_STALE_KEY: &str = "fts_stale";
/// Advertises that the legacy → v23 FTS conversion can run.
pub const FTS_OPTIMIZE_AVAILABLE_KEY: &str = "fts_optimize_available";
/// The Telegram topic opt-in's `state_meta` mark (`api.md` §12.4), shared
/// with the PostgreSQL backend through the contract crate.
pub use hermes_state_core::telegram_topics::{TOPIC_SCHEMA_VERSION, TOPIC_SCHEMA_VERSION_KEY};
