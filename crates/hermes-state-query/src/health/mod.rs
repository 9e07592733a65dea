//! Health checks of a store: plain reads over a `&Connection` that find
//! damage, and the report they fill.
//!
//! `PRAGMA integrity_check`, FTS objects the layout needs that are missing,
//! facts about the FTS storage, session counters that disagree with their
//! message rows, parents that do not exist, messages of missing sessions,
//! lineage cycles, duplicate titles and the unique title index. Nothing here
//! writes or repairs. Checking each FTS table against its content is an FTS5
//! `integrity-check` command, an `INSERT` that needs the write lock, so it is
//! the facade's (`hermes_state::SessionDb::doctor`), as is the repair.
//!
//! The human rendering of the report is in `text` (its `Display` impls).

mod checks;

use serde::Serialize;

pub use checks::{
    LineageNode, RowCounts, awaited_objects, counter_mismatches, cycles_among, dangling_parents,
    duplicate_titles, fts_notes, integrity, lineage_cycles, missing_fts_objects, orphaned_messages,
    read_checks, title_index_missing, tool_calls_in_text,
};

/// How one FTS table fared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum FtsCheck {
    /// The index agrees with its content (FTS5 `integrity-check` with `rank = 1`).
    Ok,
    /// The index is internally consistent; the comparison with its content
    /// was skipped, for the reason given (a pending backfill, a read-only handle).
    IndexOnly(String),
    /// The check failed with this message.
    Failed(String),
    /// Not checked, for the reason given.
    Skipped(String),
}

/// The FTS check of one table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FtsTableCheck {
    /// `messages_fts`, `messages_fts_trigram` or `messages_fts_cjk`.
    pub table: String,
    /// The outcome.
    pub check: FtsCheck,
}

/// A session whose stored counters disagree with its message rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CounterMismatch {
    /// The session.
    pub session_id: String,
    /// Stored `message_count`.
    pub message_count: Option<i64>,
    /// Message rows not archived by compaction (`compacted = 0`).
    pub real_message_count: i64,
    /// Stored `tool_call_count`.
    pub tool_call_count: Option<i64>,
    /// Tool calls of those rows (a JSON list counts its entries, any other value one).
    pub real_tool_call_count: i64,
    /// The message count is right and `tool_call_count` is what Hermes
    /// counted before 2026-03-07 (one per message carrying calls, one per
    /// `tool` result): written under the old rule, not damage, and not
    /// counted as a problem. The repair still recounts it by today's rule.
    pub counted_by_old_rule: bool,
}

/// A session naming a parent that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DanglingParent {
    /// The child.
    pub session_id: String,
    /// The missing parent it names.
    pub missing_parent: String,
}

/// Messages of a session that does not exist (reported only: the repair never
/// touches message rows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OrphanedMessages {
    /// The missing session named by the rows.
    pub session_id: String,
    /// How many rows.
    pub messages: i64,
}

/// Sessions whose parent links go round in a circle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineageCycle {
    /// Each session's parent is the next one; the last one's parent is the first.
    pub sessions: Vec<String>,
    /// The session whose parent link the repair cuts: the oldest of the
    /// cycle (smallest `started_at`, then first inserted), since a parent
    /// cannot be younger than its child.
    pub closing: String,
}

/// A non-NULL title held by several sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DuplicateTitle {
    /// The title.
    pub title: String,
    /// Its holders in insertion order; the repair leaves it to the last one.
    pub holders: Vec<String>,
}

/// Facts about the FTS storage that are not damage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum FtsNote {
    /// The legacy (v11–v22) layout: the storage optimisation can convert it.
    LegacyLayout,
    /// A gated backfill of the base indexes is pending.
    RebuildPending {
        /// Largest id backfilled.
        progress: Option<i64>,
        /// Largest id to backfill.
        high_water: i64,
    },
    /// A gated backfill of the CJK index is pending.
    CjkRebuildPending {
        /// Largest id backfilled.
        progress: Option<i64>,
        /// Largest id to backfill.
        high_water: i64,
    },
    /// A process without the CJK tokenizer disabled the CJK index.
    CjkStale,
    /// Demoted legacy tables still await teardown.
    TrashTables(usize),
}

/// What the health checks found: the report of `hermes_state::SessionDb::doctor`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DoctorReport {
    /// `PRAGMA integrity_check` output: `["ok"]` when SQLite found nothing.
    pub integrity: Vec<String>,
    /// FTS objects the layout needs that are missing (tables, view, triggers).
    pub fts_missing: Vec<String>,
    /// One entry per existing FTS table.
    pub fts: Vec<FtsTableCheck>,
    /// Sessions whose counters differ from their rows (those counted by the
    /// old rule included, marked; they are not problems).
    pub counters: Vec<CounterMismatch>,
    /// Sessions naming a missing parent.
    pub dangling_parents: Vec<DanglingParent>,
    /// Messages of missing sessions.
    pub orphaned_messages: Vec<OrphanedMessages>,
    /// Parent-link cycles.
    pub cycles: Vec<LineageCycle>,
    /// Titles held by several sessions.
    pub duplicate_titles: Vec<DuplicateTitle>,
    /// `idx_sessions_title_unique` does not exist.
    pub title_index_missing: bool,
    /// Informational facts (not counted as problems).
    pub notes: Vec<FtsNote>,
    /// Objects of the current layout that this file lacks because its
    /// schema version predates them, as `"<type> <name>"`: its upgrade
    /// (`migrate`, or the first write) adds them. Not problems.
    pub awaited: Vec<String>,
}

impl DoctorReport {
    /// No problem found (notes do not count).
    pub fn is_healthy(&self) -> bool {
        self.problem_count() == 0
    }

    /// How many problems were found.
    pub fn problem_count(&self) -> usize {
        usize::from(self.integrity != ["ok"])
            + self.fts_missing.len()
            + self
                .fts
                .iter()
                .filter(|c| matches!(c.check, FtsCheck::Failed(_)))
                .count()
            + self
                .counters
                .iter()
                .filter(|c| !c.counted_by_old_rule)
                .count()
            + self.dangling_parents.len()
            + self.orphaned_messages.len()
            + self.cycles.len()
            + self.duplicate_titles.len()
            + usize::from(self.title_index_missing)
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;
    use xtask::fixtures::{Shape, write_fixture};

    use super::read_checks;

    #[test]
    fn a_fresh_v23_store_reads_healthy_and_the_report_serialises() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let path = dir.path().join("state.db");
        write_fixture(&path, Shape::EraEnd(23)).expect("v23 fixture");
        let conn = Connection::open(&path).expect("open the fixture");
        let report = read_checks(&conn).expect("checks");
        assert!(report.is_healthy(), "{report:?}");
        assert!(report.fts.is_empty(), "the FTS5 command is the facade's");
        let json = serde_json::to_value(&report).expect("serialise");
        assert_eq!(json["integrity"], serde_json::json!(["ok"]));
        assert_eq!(json["title_index_missing"], false);
    }
}
