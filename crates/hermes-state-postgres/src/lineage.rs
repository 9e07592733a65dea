//! Lineage reads (`api.md` §9.2) and the next title of a lineage (§6.4),
//! with the SQLite backend's results.

use std::collections::{HashMap, HashSet};

use hermes_state_core::lineage::LineageEntry;
use hermes_state_core::sessions::MAX_LINEAGE_STEPS;
use hermes_state_core::titles::{escape_like, next_numbered_title, split_numbered};
use postgres::{Row, Transaction};

use crate::PgStore;
use crate::error::{Context, Result};

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

impl PgStore {
    /// The session and its ancestors, walking up: the session first, its
    /// root last. Empty for an unknown id.
    pub fn ancestors(&self, session_id: &str) -> Result<Vec<LineageEntry>> {
        self.read(|tx| {
            Ok(tx
                .query(ANCESTORS, &[&session_id])
                .context("reading the lineage")?
                .iter()
                .map(entry)
                .collect())
        })
    }

    /// The session and its descendants, level by level: the session first;
    /// within a level, the children of earlier sessions first. Siblings come
    /// in `started_at` order, then by id (SQLite: in insertion order, which
    /// is the same for sessions created one after another). Empty for an
    /// unknown id.
    pub fn descendants(&self, session_id: &str) -> Result<Vec<LineageEntry>> {
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
    pub fn lineage_root(&self, session_id: &str) -> Result<String> {
        let chain = self.read(|tx| root_to_tip(tx, session_id))?;
        Ok(chain
            .into_iter()
            .next()
            .unwrap_or_else(|| session_id.to_owned()))
    }

    /// The next title of a lineage (`api.md` §6.4): `X` → `X #2` → `X #3`.
    /// Existing titles are `base` itself or start with `base #` in ASCII
    /// case-insensitive comparison (SQLite's `LIKE`).
    pub fn get_next_title_in_lineage(&self, base_title: &str) -> Result<String> {
        let base = split_numbered(base_title).map_or(base_title, |(base, _)| base);
        let pattern = format!("{} #%", escape_like(base));
        let candidates: Vec<String> = self.read(|tx| {
            Ok(tx
                .query(
                    "SELECT title FROM sessions WHERE title = $1 OR title ILIKE $2 ESCAPE '\\'",
                    &[&base, &pattern],
                )
                .context("reading titles")?
                .iter()
                .map(|row| row.get(0))
                .collect())
        })?;
        // ILIKE folds case in every script; SQLite's LIKE in ASCII only.
        let prefix = format!("{base} #");
        let existing: Vec<String> = candidates
            .into_iter()
            .filter(|title| {
                title == base
                    || title.len() >= prefix.len()
                        && title.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
            })
            .collect();
        Ok(next_numbered_title(base, &existing))
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
