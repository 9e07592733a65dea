//! How the doctor's and the repair's reports read to a person: the text
//! `hermes-state doctor` prints, one line per finding. The library's reports
//! are plain data (`Serialize`); rendering them is the command line's job.

use std::fmt::Write as _;

use hermes_state::{
    CounterMismatch, DanglingParent, DoctorReport, DuplicateTitle, FtsCheck, FtsNote, FtsRebuild,
    LineageCycle, OrphanedMessages, RepairReport,
};

/// One FTS table's check: `ok`, `ok (index only: …)`, `FAILED: …`, `skipped: …`.
pub fn check_text(check: &FtsCheck) -> String {
    match check {
        FtsCheck::Ok => "ok".to_owned(),
        FtsCheck::IndexOnly(why) => format!("ok (index only: {why})"),
        FtsCheck::Failed(message) => format!("FAILED: {message}"),
        FtsCheck::Skipped(why) => format!("skipped: {why}"),
    }
}

/// A note on the FTS storage.
pub fn note_text(note: &FtsNote) -> String {
    let progress = |p: &Option<i64>| p.map_or("?".to_owned(), |p| p.to_string());
    match note {
        FtsNote::LegacyLayout => {
            "legacy FTS layout (the storage optimisation can convert it)".to_owned()
        }
        FtsNote::RebuildPending {
            progress: p,
            high_water,
        } => format!("FTS backfill pending: {} of {high_water} ids", progress(p)),
        FtsNote::CjkRebuildPending {
            progress: p,
            high_water,
        } => format!("CJK backfill pending: {} of {high_water} ids", progress(p)),
        FtsNote::CjkStale => "CJK index stale (not served until rebuilt)".to_owned(),
        FtsNote::TrashTables(n) => format!("{n} demoted legacy FTS table(s) await teardown"),
    }
}

/// `<session>: message_count <stored> (real <n>), tool_call_count <stored> (real <n>)`.
pub fn counter_text(c: &CounterMismatch) -> String {
    let show = |v: Option<i64>| v.map_or("NULL".to_owned(), |v| v.to_string());
    format!(
        "{}: message_count {} (real {}), tool_call_count {} (real {})",
        c.session_id,
        show(c.message_count),
        c.real_message_count,
        show(c.tool_call_count),
        c.real_tool_call_count
    )
}

/// What the row checks found: the same on both backends.
pub struct RowFindings<'a> {
    /// Counters that differ from the rows.
    pub counters: &'a [CounterMismatch],
    /// Parents that do not exist.
    pub dangling_parents: &'a [DanglingParent],
    /// Messages of missing sessions.
    pub orphaned_messages: &'a [OrphanedMessages],
    /// Parent-link cycles.
    pub cycles: &'a [LineageCycle],
    /// Titles held by several sessions.
    pub duplicate_titles: &'a [DuplicateTitle],
}

/// One line per row finding, the lines both backends' doctors print.
pub fn row_findings(f: &mut String, found: &RowFindings<'_>) {
    for c in found.counters.iter().filter(|c| !c.counted_by_old_rule) {
        let _ = writeln!(f, "wrong counters: {}", counter_text(c));
    }
    for c in found.counters.iter().filter(|c| c.counted_by_old_rule) {
        let _ = writeln!(
            f,
            "note: counted by the old rule, not damage: {} (Hermes before 2026-03-07 counted one per message with tool calls and one per tool result; --repair recounts)",
            counter_text(c)
        );
    }
    for d in found.dangling_parents {
        let _ = writeln!(
            f,
            "dangling parent: {} names missing session {}",
            d.session_id, d.missing_parent
        );
    }
    for o in found.orphaned_messages {
        let _ = writeln!(
            f,
            "orphaned messages: {} row(s) of missing session {} (not repaired)",
            o.messages, o.session_id
        );
    }
    for c in found.cycles {
        let _ = writeln!(
            f,
            "lineage cycle: {} -> {} (cut at {})",
            c.sessions.join(" -> "),
            c.sessions.first().map_or("", String::as_str),
            c.closing
        );
    }
    for d in found.duplicate_titles {
        let _ = writeln!(
            f,
            "duplicate title {:?}: held by {}",
            d.title,
            d.holders.join(", ")
        );
    }
}

/// The doctor's report: `healthy` or `N problem(s) found`, then one line per finding.
pub fn doctor_text(report: &DoctorReport) -> String {
    let mut f = String::new();
    match report.problem_count() {
        0 => f.push_str("healthy\n"),
        n => {
            let _ = writeln!(f, "{n} problem(s) found");
        }
    }
    let _ = writeln!(f, "integrity_check: {}", report.integrity.join("; "));
    for missing in &report.fts_missing {
        let _ = writeln!(f, "missing FTS object: {missing}");
    }
    if !report.awaited.is_empty() {
        let _ = writeln!(
            f,
            "note: older schema, not damage: its upgrade to v23 (`hermes-state migrate`, or the first write) adds {}",
            report.awaited.join(", ")
        );
    }
    for check in &report.fts {
        let _ = writeln!(f, "{}: {}", check.table, check_text(&check.check));
    }
    row_findings(
        &mut f,
        &RowFindings {
            counters: &report.counters,
            dangling_parents: &report.dangling_parents,
            orphaned_messages: &report.orphaned_messages,
            cycles: &report.cycles,
            duplicate_titles: &report.duplicate_titles,
        },
    );
    if report.title_index_missing {
        f.push_str("unique title index missing\n");
    }
    for note in &report.notes {
        let _ = writeln!(f, "note: {}", note_text(note));
    }
    f
}

/// The repair's report: one line per repair, then the doctor's report after it.
pub fn repair_text(report: &RepairReport) -> String {
    let mut f = String::new();
    let mode = match report.fts_mode {
        FtsRebuild::OneShot => "one transaction",
        FtsRebuild::Background => "gated chunks",
    };
    let _ = writeln!(
        f,
        "rebuilt FTS ({mode}): {}",
        if report.fts_rebuilt.is_empty() {
            "none".to_owned()
        } else {
            report.fts_rebuilt.join(", ")
        }
    );
    for c in &report.counters_fixed {
        let _ = writeln!(f, "fixed counters: {}", counter_text(c));
    }
    for d in &report.parents_cleared {
        let _ = writeln!(
            f,
            "cleared dangling parent of {} (was {})",
            d.session_id, d.missing_parent
        );
    }
    for b in &report.cycles_broken {
        let _ = writeln!(
            f,
            "broke a lineage cycle: cleared parent of {} (was {})",
            b.session_id, b.former_parent
        );
    }
    for t in &report.titles_cleared {
        let _ = writeln!(
            f,
            "cleared duplicate title {:?} of {}",
            t.title, t.session_id
        );
    }
    if report.title_index_restored {
        f.push_str("recreated the unique title index\n");
    }
    let _ = write!(f, "after repair: {}", doctor_text(&report.after));
    f
}

#[cfg(test)]
mod tests {
    use hermes_state::{
        BrokenLink, ClearedTitle, DanglingParent, DuplicateTitle, FtsTableCheck, LineageCycle,
    };

    use super::*;

    fn counters() -> CounterMismatch {
        CounterMismatch {
            session_id: "root".to_owned(),
            message_count: Some(99),
            real_message_count: 3,
            tool_call_count: None,
            real_tool_call_count: 0,
            counted_by_old_rule: false,
        }
    }

    #[test]
    fn a_healthy_report_says_so_first() {
        let report = DoctorReport {
            integrity: vec!["ok".to_owned()],
            fts: vec![FtsTableCheck {
                table: "messages_fts".to_owned(),
                check: FtsCheck::Ok,
            }],
            ..DoctorReport::default()
        };
        assert_eq!(
            doctor_text(&report),
            "healthy\nintegrity_check: ok\nmessages_fts: ok\n"
        );
    }

    #[test]
    fn every_finding_gets_its_line() {
        let report = DoctorReport {
            integrity: vec!["ok".to_owned()],
            counters: vec![counters()],
            cycles: vec![LineageCycle {
                sessions: vec!["root".to_owned(), "child".to_owned()],
                closing: "root".to_owned(),
            }],
            dangling_parents: vec![DanglingParent {
                session_id: "c".to_owned(),
                missing_parent: "gone".to_owned(),
            }],
            duplicate_titles: vec![DuplicateTitle {
                title: "T".to_owned(),
                holders: vec!["a".to_owned(), "b".to_owned()],
            }],
            notes: vec![FtsNote::RebuildPending {
                progress: Some(0),
                high_water: 7,
            }],
            ..DoctorReport::default()
        };
        let text = doctor_text(&report);
        for line in [
            "4 problem(s) found",
            "wrong counters: root: message_count 99 (real 3), tool_call_count NULL (real 0)",
            "lineage cycle: root -> child -> root (cut at root)",
            "dangling parent: c names missing session gone",
            "duplicate title \"T\": held by a, b",
            "note: FTS backfill pending: 0 of 7 ids",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line:?} missing from:\n{text}"
            );
        }
    }

    #[test]
    fn a_repair_names_every_repair_then_the_report_after_it() {
        let repair = RepairReport {
            fts_rebuilt: vec!["messages_fts".to_owned()],
            fts_mode: FtsRebuild::OneShot,
            counters_fixed: vec![counters()],
            parents_cleared: vec![DanglingParent {
                session_id: "c".to_owned(),
                missing_parent: "gone".to_owned(),
            }],
            cycles_broken: vec![BrokenLink {
                session_id: "x".to_owned(),
                former_parent: "y".to_owned(),
            }],
            titles_cleared: vec![ClearedTitle {
                session_id: "child".to_owned(),
                title: "T".to_owned(),
            }],
            title_index_restored: true,
            after: DoctorReport {
                integrity: vec!["ok".to_owned()],
                ..DoctorReport::default()
            },
        };
        let text = repair_text(&repair);
        for expected in [
            "rebuilt FTS (one transaction): messages_fts",
            "fixed counters: root:",
            "cleared dangling parent of c (was gone)",
            "broke a lineage cycle: cleared parent of x (was y)",
            "cleared duplicate title \"T\" of child",
            "recreated the unique title index",
            "after repair: healthy",
        ] {
            assert!(text.contains(expected), "{expected} missing from:\n{text}");
        }
    }

    #[test]
    fn checks_and_notes_read_as_words() {
        assert_eq!(
            check_text(&FtsCheck::IndexOnly("why".to_owned())),
            "ok (index only: why)"
        );
        assert_eq!(
            check_text(&FtsCheck::Failed("bad".to_owned())),
            "FAILED: bad"
        );
        assert_eq!(
            note_text(&FtsNote::CjkRebuildPending {
                progress: None,
                high_water: 9
            }),
            "CJK backfill pending: ? of 9 ids"
        );
        assert_eq!(
            note_text(&FtsNote::TrashTables(2)),
            "2 demoted legacy FTS table(s) await teardown"
        );
    }
}
