//! How the PostgreSQL doctor's report reads: the file doctor's shape
//! (`healthy` or `N problem(s) found`, then one line per finding, the row
//! findings in the very same words), with the server's own lines where the
//! file has SQLite's (migration steps instead of `integrity_check`, schema
//! objects instead of FTS tables).

use std::fmt::Write as _;

use hermes_state::CounterMismatch;
use hermes_state::postgres::health::{PgDoctorReport, TrigramIndex};

use super::doctor::{RowFindings, counter_text, row_findings};
use crate::output::datetime;

/// The report: the headline, the steps, then one line per finding and note.
pub fn doctor_text(report: &PgDoctorReport) -> String {
    let mut f = String::new();
    match report.problem_count() {
        0 => f.push_str("healthy\n"),
        n => {
            let _ = writeln!(f, "{n} problem(s) found");
        }
    }
    let steps = &report.steps;
    let applied = steps
        .applied
        .map_or("none".to_owned(), |step| step.to_string());
    let data_model = steps
        .data_model
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        f,
        "schema {}: PostgreSQL step {applied} (this build knows {}), data model v{data_model}",
        report.schema, steps.known
    );
    let _ = writeln!(f, "connection: {}", report.connection.describe());
    if steps.too_new() {
        let _ = writeln!(
            f,
            "note: written by a newer release (step {applied}); the objects are checked against what this build knows"
        );
    }
    for step in &steps.missing {
        let _ = writeln!(f, "missing migration step: {step}");
    }
    for step in &steps.divergent {
        let _ = writeln!(
            f,
            "divergent migration step: {step} (name or checksum differ)"
        );
    }
    if steps.data_model != [hermes_state::SCHEMA_VERSION] {
        let _ = writeln!(
            f,
            "schema_version holds [{data_model}], not [{}]",
            hermes_state::SCHEMA_VERSION
        );
    }
    for missing in &report.missing {
        let _ = writeln!(f, "missing: {missing}");
    }
    for wrong in &report.wrong {
        let _ = writeln!(f, "wrong: {wrong}");
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
    if let Some(why) = &report.rows_skipped {
        let _ = writeln!(f, "row checks skipped: {why}");
    }
    if let TrigramIndex::Absent(why) = &report.trigram {
        let _ = writeln!(f, "note: no trigram index: {why}");
    }
    if let Some(moved) = &report.superseded {
        let when = moved
            .at
            .map(|at| format!(" on {}", datetime(at)))
            .unwrap_or_default();
        let _ = writeln!(
            f,
            "note: this store was moved to {}{when}; it holds the store as it was then",
            hermes_state::StoreLocation::redact_text(&moved.by)
        );
    }
    f
}

/// The counter repair's report: one line per session fixed, then the
/// doctor's report after it.
pub fn repair_text(fixed: &[CounterMismatch], after: &PgDoctorReport) -> String {
    let mut f = String::new();
    if fixed.is_empty() {
        f.push_str("fixed counters: none\n");
    }
    for c in fixed {
        let _ = writeln!(f, "fixed counters: {}", counter_text(c));
    }
    let _ = write!(f, "after repair: {}", doctor_text(after));
    f
}
