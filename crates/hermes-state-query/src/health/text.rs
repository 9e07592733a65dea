//! How a health report reads to a human: the text `hermes-state doctor`
//! prints, one line per finding.

use std::fmt;

use super::{CounterMismatch, DoctorReport, FtsCheck, FtsNote};

impl fmt::Display for FtsCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FtsCheck::Ok => f.write_str("ok"),
            FtsCheck::IndexOnly(why) => write!(f, "ok (index only: {why})"),
            FtsCheck::Failed(message) => write!(f, "FAILED: {message}"),
            FtsCheck::Skipped(why) => write!(f, "skipped: {why}"),
        }
    }
}

impl fmt::Display for FtsNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let progress = |p: &Option<i64>| p.map_or("?".to_owned(), |p| p.to_string());
        match self {
            FtsNote::LegacyLayout => {
                f.write_str("legacy FTS layout (the storage optimisation can convert it)")
            }
            FtsNote::RebuildPending {
                progress: p,
                high_water,
            } => write!(
                f,
                "FTS backfill pending: {} of {high_water} ids",
                progress(p)
            ),
            FtsNote::CjkRebuildPending {
                progress: p,
                high_water,
            } => write!(
                f,
                "CJK backfill pending: {} of {high_water} ids",
                progress(p)
            ),
            FtsNote::CjkStale => f.write_str("CJK index stale (not served until rebuilt)"),
            FtsNote::TrashTables(n) => write!(f, "{n} demoted legacy FTS table(s) await teardown"),
        }
    }
}

/// `<session>: message_count <stored> (real <n>), tool_call_count <stored> (real <n>)`.
impl fmt::Display for CounterMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: Option<i64>| v.map_or("NULL".to_owned(), |v| v.to_string());
        write!(
            f,
            "{}: message_count {} (real {}), tool_call_count {} (real {})",
            self.session_id,
            show(self.message_count),
            self.real_message_count,
            show(self.tool_call_count),
            self.real_tool_call_count
        )
    }
}

impl fmt::Display for DoctorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problem_count() {
            0 => writeln!(f, "healthy")?,
            n => writeln!(f, "{n} problem(s) found")?,
        }
        writeln!(f, "integrity_check: {}", self.integrity.join("; "))?;
        for missing in &self.fts_missing {
            writeln!(f, "missing FTS object: {missing}")?;
        }
        for check in &self.fts {
            writeln!(f, "{}: {}", check.table, check.check)?;
        }
        for c in &self.counters {
            writeln!(f, "wrong counters: {c}")?;
        }
        for d in &self.dangling_parents {
            writeln!(
                f,
                "dangling parent: {} names missing session {}",
                d.session_id, d.missing_parent
            )?;
        }
        for o in &self.orphaned_messages {
            writeln!(
                f,
                "orphaned messages: {} row(s) of missing session {} (not repaired)",
                o.messages, o.session_id
            )?;
        }
        for c in &self.cycles {
            writeln!(
                f,
                "lineage cycle: {} -> {} (cut at {})",
                c.sessions.join(" -> "),
                c.sessions.first().map_or("", String::as_str),
                c.closing
            )?;
        }
        for d in &self.duplicate_titles {
            writeln!(
                f,
                "duplicate title {:?}: held by {}",
                d.title,
                d.holders.join(", ")
            )?;
        }
        if self.title_index_missing {
            writeln!(f, "unique title index missing")?;
        }
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        Ok(())
    }
}
