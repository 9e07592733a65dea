//! How a repair report reads to a human: one line per repair, then the
//! doctor's report after it.

use std::fmt;

use super::{FtsRebuild, RepairReport};

impl fmt::Display for RepairReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.fts_mode {
            FtsRebuild::OneShot => "one transaction",
            FtsRebuild::Background => "gated chunks",
        };
        writeln!(
            f,
            "rebuilt FTS ({mode}): {}",
            if self.fts_rebuilt.is_empty() {
                "none".to_owned()
            } else {
                self.fts_rebuilt.join(", ")
            }
        )?;
        for c in &self.counters_fixed {
            writeln!(f, "fixed counters: {c}")?;
        }
        for d in &self.parents_cleared {
            writeln!(
                f,
                "cleared dangling parent of {} (was {})",
                d.session_id, d.missing_parent
            )?;
        }
        for b in &self.cycles_broken {
            writeln!(
                f,
                "broke a lineage cycle: cleared parent of {} (was {})",
                b.session_id, b.former_parent
            )?;
        }
        for t in &self.titles_cleared {
            writeln!(
                f,
                "cleared duplicate title {:?} of {}",
                t.title, t.session_id
            )?;
        }
        if self.title_index_restored {
            writeln!(f, "recreated the unique title index")?;
        }
        write!(f, "after repair: {}", self.after)
    }
}
