//! Lineage reads (`api.md` §9.2) and the next title of a lineage (§6.4),
//! with the SQLite backend's results.

use std::collections::{HashMap, HashSet};

use hermes_state_core::lineage::LineageEntry;
use hermes_state_core::sessions::MAX_LINEAGE_STEPS;
use postgres::{Row, Transaction};

use crate::PgStore;
use crate::error::{Context, Result};
use crate::lookups::RESUME_CHILDREN;
use crate::lookups::compression_tip;
use crate::lookups::first_unmarked_child;
use crate::lookups::has_messages;
use crate::more_ops::PgLineage;
use hermes_state_core::Result as CoreResult;
use hermes_state_core::compression_lineage::compression_lineage;
use hermes_state_core::lookups::MAX_RESUME_STEPS;
use hermes_state_core::store::Lineage;

/// The session and its ancestors, one row per distinct session, walking up
/// (a revisited id ends the walk, as SQLite's `UNION` does).
const ANCESTORS: &str = "WITH RECURSIVE lineage(id, title, started_at, parent_session_id, depth, path) AS (
    SELECT id, title, started_at, parent_session_id, 0, ARRAY[id COLLATE \"C\"] FROM sessions WHERE id = $1
    UNION ALL
    SELECT s.id, s.title, s.started_at, s.parent_session_id, l.depth + 1, l.path || (s.id COLLATE \"C\")
    FROM sessions s JOIN lineage l ON s.id = l.parent_session_id
    WHERE NOT (s.id COLLATE \"C\") = ANY(l.path)
)
SELECT id, title, started_at, parent_session_id FROM lineage ORDER BY depth";

/// The session and its descendants, each once (the walk stops at an id
/// already on its path), with its depth.
const DESCENDANTS: &str = "WITH RECURSIVE descendants(id, title, started_at, parent_session_id, depth, path) AS (
    SELECT id, title, started_at, parent_session_id, 0, ARRAY[id COLLATE \"C\"] FROM sessions WHERE id = $1
    UNION ALL
    SELECT s.id, s.title, s.started_at, s.parent_session_id, d.depth + 1, d.path || (s.id COLLATE \"C\")
    FROM sessions s JOIN descendants d ON s.parent_session_id = d.id
    WHERE NOT (s.id COLLATE \"C\") = ANY(d.path)
)
SELECT id, title, started_at, parent_session_id, depth FROM descendants";

fn entry(row: &Row) -> LineageEntry {
    LineageEntry {
        id: row.get(0),
        title: row.get(1),
        started_at: row.get::<_, Option<f64>>(2).unwrap_or_default(),
        parent_session_id: row.get(3),
    }
}

/// The lineage from its root down to `session_id` (`api.md` §9.2): parent
/// links walked upwards at most `MAX_LINEAGE_STEPS` steps, stopping at a
/// missing row or a repeated id, then reversed. An unknown id gives `[id]`.
pub(crate) fn root_to_tip(tx: &mut Transaction<'_>, session_id: &str) -> Result<Vec<String>> {
    let mut chain = vec![session_id.to_owned()];
    let mut seen = HashSet::from([session_id.to_owned()]);
    let mut current = session_id.to_owned();
    for _ in 0..MAX_LINEAGE_STEPS {
        let parent: Option<String> = tx
            .query_opt(
                "SELECT p.id FROM sessions c JOIN sessions p ON p.id = c.parent_session_id \
                 WHERE c.id = $1",
                &[&current],
            )
            .context("reading a parent link")?
            .map(|row| row.get(0));
        match parent {
            Some(parent) if seen.insert(parent.clone()) => {
                chain.push(parent.clone());
                current = parent;
            }
            _ => break,
        }
    }
    chain.reverse();
    Ok(chain)
}

/// Orders a descendant set as SQLite's queue does: level by level, each
/// level's sessions grouped by the position of their parent in the level
/// above, siblings by `started_at`, then id.
fn level_order(rows: Vec<(LineageEntry, i32)>) -> Vec<LineageEntry> {
    let mut children: HashMap<String, Vec<LineageEntry>> = HashMap::new();
    let mut ordered = Vec::with_capacity(rows.len());
    for (entry, depth) in rows {
        if depth == 0 {
            ordered.push(entry);
        } else if let Some(parent) = entry.parent_session_id.clone() {
            children.entry(parent).or_default().push(entry);
        }
    }
    for siblings in children.values_mut() {
        siblings.sort_by(|a, b| {
            a.started_at
                .total_cmp(&b.started_at)
                .then_with(|| a.id.as_bytes().cmp(b.id.as_bytes()))
        });
    }
    let mut next = 0;
    while next < ordered.len() {
        let parent = ordered[next].id.clone();
        if let Some(siblings) = children.remove(&parent) {
            ordered.extend(siblings);
        }
        next += 1;
    }
    ordered
}

impl Lineage for PgStore {
    /// The session and its ancestors, walking up: the session first, its
    /// root last. Empty for an unknown id.
    fn ancestors(&self, session_id: &str) -> CoreResult<Vec<LineageEntry>> {
        Ok(self.read(|tx| {
            Ok(tx
                .query(ANCESTORS, &[&session_id])
                .context("reading the lineage")?
                .iter()
                .map(entry)
                .collect())
        })?)
    }

    /// The session and its descendants, level by level: the session first;
    /// within a level, the children of earlier sessions first. Siblings come
    /// in `started_at` order, then by id (SQLite: in insertion order, which
    /// is the same for sessions created one after another). Empty for an
    /// unknown id.
    fn descendants(&self, session_id: &str) -> CoreResult<Vec<LineageEntry>> {
        let rows = self.read(|tx| {
            Ok(tx
                .query(DESCENDANTS, &[&session_id])
                .context("reading the lineage")?
                .iter()
                .map(|row| (entry(row), row.get::<_, i32>(4)))
                .collect::<Vec<_>>())
        })?;
        Ok(level_order(rows))
    }

    /// The root of the session's lineage: the last distinct ancestor reached
    /// by walking parent links (at most `MAX_LINEAGE_STEPS`, stopping at a
    /// missing row or a repeated id); the session itself when it has no parent
    /// or is unknown.
    fn lineage_root(&self, session_id: &str) -> CoreResult<String> {
        let chain = self.read(|tx| root_to_tip(tx, session_id))?;
        Ok(chain
            .into_iter()
            .next()
            .unwrap_or_else(|| session_id.to_owned()))
    }

    /// `api.md` §9.2: the newest continuation of a compressed conversation,
    /// following the best child of each compression-ended session; the id
    /// itself when there is none (an unknown id included).
    fn get_compression_tip(&self, session_id: &str) -> CoreResult<String> {
        Ok(self.read(|tx| compression_tip(tx, session_id))?)
    }

    /// `api.md` §9.2: the session to resume for `session_id`: its
    /// compression tip, then down the newest non-branch, non-delegate,
    /// non-tool children (at most 32 steps); the deepest of them with
    /// messages, else `session_id` itself (an unknown id included).
    fn resolve_resume_session_id(&self, session_id: &str) -> CoreResult<String> {
        Ok(self.read(|tx| {
            let tip = compression_tip(tx, session_id)?;
            let mut best = has_messages(tx, &tip)?.then(|| tip.clone());
            let mut seen = HashSet::from([session_id.to_owned(), tip.clone()]);
            let mut current = tip;
            for _ in 0..MAX_RESUME_STEPS {
                let Some(child) = first_unmarked_child(tx, RESUME_CHILDREN, &current)? else {
                    break;
                };
                if !seen.insert(child.clone()) {
                    break;
                }
                if has_messages(tx, &child)? {
                    best = Some(child.clone());
                }
                current = child;
            }
            Ok(best.unwrap_or_else(|| session_id.to_owned()))
        })?)
    }

    /// `api.md` §9.2: the first session of the lineage root-to-tip (parent
    /// links walked up, stopping at a missing row or a repeat); the id
    /// itself for a root or an unknown id.
    fn get_conversation_root(&self, session_id: &str) -> CoreResult<String> {
        let chain = self.read(|tx| root_to_tip(tx, session_id))?;
        Ok(chain
            .into_iter()
            .next()
            .unwrap_or_else(|| session_id.to_owned()))
    }

    /// `api.md` §9.2: the compression chain through `session_id`, root
    /// first, by the query crate's rule
    /// ([`hermes_state_core::compression_lineage`]); `[]` for an unknown id.
    fn get_compression_lineage(&self, session_id: &str) -> CoreResult<Vec<String>> {
        Ok(self.read(|tx| compression_lineage(&mut PgLineage { tx }, session_id))?)
    }
}
