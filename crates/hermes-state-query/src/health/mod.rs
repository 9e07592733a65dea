//! Health checks of a store: plain reads over a `&Connection` that find
//! damage, filling the report of `hermes_state_core::health`.
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

pub use checks::{
    awaited_objects, counter_mismatches, dangling_parents, duplicate_titles, fts_notes, integrity,
    lineage_cycles, missing_fts_objects, orphaned_messages, read_checks, title_index_missing,
};
pub use hermes_state_core::health::{
    CounterMismatch, DanglingParent, DoctorReport, DuplicateTitle, FtsCheck, FtsNote,
    FtsTableCheck, LineageCycle, LineageNode, OrphanedMessages, RowCounts, cycles_among,
    tool_calls_in_text,
};

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
