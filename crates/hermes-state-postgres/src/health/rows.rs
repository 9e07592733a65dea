//! The row checks: counters against rows, missing parents and sessions,
//! lineage cycles, duplicate titles. The rules (what counts as a message, a
//! tool call, the old rule, where a cycle is cut) are the SQLite doctor's,
//! from `hermes_state_core::health`; PostgreSQL has no rowid, so
//! "insertion order" is `started_at`, then id.

use std::collections::HashMap;

use hermes_state_core::health::{
    CounterMismatch, DanglingParent, DuplicateTitle, LineageCycle, LineageNode, OrphanedMessages,
    RowCounts, cycles_among, tool_calls_in_text,
};
use postgres::Transaction;

use crate::error::{Context, Result};

const LIVE_MESSAGE_COUNTS: &str = "SELECT session_id, count(*) FROM messages \
     WHERE COALESCE(compacted, 0) = 0 AND session_id IS NOT NULL GROUP BY session_id";
const LIVE_TOOL_ROWS: &str = "SELECT session_id, tool_calls, role = 'tool' FROM messages \
     WHERE (tool_calls IS NOT NULL OR role = 'tool') AND COALESCE(compacted, 0) = 0 \
       AND session_id IS NOT NULL";
const STORED_COUNTERS: &str =
    "SELECT id, message_count, tool_call_count FROM sessions ORDER BY started_at, id";
const DANGLING_PARENTS: &str = "SELECT s.id, s.parent_session_id FROM sessions s \
     WHERE s.parent_session_id IS NOT NULL \
       AND NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id) \
     ORDER BY s.started_at, s.id";
const ORPHANED_MESSAGES: &str = "SELECT m.session_id, count(*) FROM messages m \
     WHERE m.session_id IS NOT NULL \
       AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = m.session_id) \
     GROUP BY m.session_id ORDER BY m.session_id";
const LINEAGE: &str =
    "SELECT id, parent_session_id, started_at FROM sessions ORDER BY started_at, id";
const DUPLICATE_TITLES: &str = "SELECT title, id FROM sessions WHERE title IN \
     (SELECT title FROM sessions WHERE title IS NOT NULL GROUP BY title HAVING count(*) > 1) \
     ORDER BY title, started_at, id";

/// Sessions whose stored counters differ from their live rows (rows
/// archived by compaction not counted, rewound rows counted, as on SQLite).
pub(super) fn counter_mismatches(tx: &mut Transaction<'_>) -> Result<Vec<CounterMismatch>> {
    let mut real: HashMap<String, RowCounts> = HashMap::new();
    for row in tx
        .query(LIVE_MESSAGE_COUNTS, &[])
        .context("counting messages")?
    {
        real.entry(row.get(0)).or_default().messages = row.get(1);
    }
    for row in tx
        .query(LIVE_TOOL_ROWS, &[])
        .context("counting tool calls")?
    {
        let calls = row
            .get::<_, Option<String>>(1)
            .map_or(0, |text| tool_calls_in_text(&text));
        real.entry(row.get(0))
            .or_default()
            .add_tool_row(calls, row.get::<_, Option<bool>>(2).unwrap_or(false));
    }
    Ok(tx
        .query(STORED_COUNTERS, &[])
        .context("reading session counters")?
        .iter()
        .filter_map(|row| {
            let session_id: String = row.get(0);
            let counts = real.get(&session_id).copied().unwrap_or_default();
            counts.mismatch(session_id, row.get(1), row.get(2))
        })
        .collect())
}

/// Sessions naming a parent that does not exist.
pub(super) fn dangling_parents(tx: &mut Transaction<'_>) -> Result<Vec<DanglingParent>> {
    Ok(tx
        .query(DANGLING_PARENTS, &[])
        .context("finding dangling parents")?
        .iter()
        .map(|row| DanglingParent {
            session_id: row.get(0),
            missing_parent: row.get(1),
        })
        .collect())
}

/// Messages of sessions that do not exist, by session.
pub(super) fn orphaned_messages(tx: &mut Transaction<'_>) -> Result<Vec<OrphanedMessages>> {
    Ok(tx
        .query(ORPHANED_MESSAGES, &[])
        .context("finding orphaned messages")?
        .iter()
        .map(|row| OrphanedMessages {
            session_id: row.get(0),
            messages: row.get(1),
        })
        .collect())
}

/// Every cycle of parent links.
pub(super) fn lineage_cycles(tx: &mut Transaction<'_>) -> Result<Vec<LineageCycle>> {
    let nodes: Vec<LineageNode> = tx
        .query(LINEAGE, &[])
        .context("reading lineage")?
        .iter()
        .enumerate()
        .map(|(order, row)| LineageNode {
            id: row.get(0),
            parent: row.get(1),
            started_at: row.get::<_, Option<f64>>(2).unwrap_or(f64::INFINITY),
            order: order as i64,
        })
        .collect();
    Ok(cycles_among(&nodes))
}

/// Non-NULL titles held by several sessions.
pub(super) fn duplicate_titles(tx: &mut Transaction<'_>) -> Result<Vec<DuplicateTitle>> {
    let mut duplicates: Vec<DuplicateTitle> = Vec::new();
    for row in tx
        .query(DUPLICATE_TITLES, &[])
        .context("finding duplicate titles")?
    {
        let (title, id): (String, String) = (row.get(0), row.get(1));
        match duplicates.last_mut() {
            Some(last) if last.title == title => last.holders.push(id),
            _ => duplicates.push(DuplicateTitle {
                title,
                holders: vec![id],
            }),
        }
    }
    Ok(duplicates)
}
