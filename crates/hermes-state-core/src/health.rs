//! What a store's health checks report (the doctor, `hermes_state::SessionDb::doctor`
//! and the PostgreSQL backend's), and the rules both backends check rows
//! with: how many tool calls a stored value stands for, what a session's
//! rows count to, and which parent links go round in a circle.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

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

/// Number of tool calls a stored `tool_calls` text stands for: a JSON list
/// its length, JSON null none, anything else one (`api.md` §4.3). Shared
/// with the PostgreSQL backend's doctor, whose column is always text.
pub fn tool_calls_in_text(text: &str) -> i64 {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Array(calls)) => calls.len() as i64,
        Ok(serde_json::Value::Null) => 0,
        _ => 1,
    }
}

/// What one session's live rows (`compacted = 0`) count to: messages, tool
/// calls by today's rule, and tool calls by the rule Hermes used before
/// 2026-03-07 (one per message carrying calls, one per `tool` result).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowCounts {
    /// Message rows.
    pub messages: i64,
    /// Tool calls, today's rule.
    pub tool_calls: i64,
    /// Tool calls, the old rule.
    pub old_rule_tool_calls: i64,
}

impl RowCounts {
    /// Counts a row carrying `calls` tool calls (see [`tool_calls_in_text`]),
    /// `tool_result` when its role is `tool`. Messages are counted apart.
    pub fn add_tool_row(&mut self, calls: i64, tool_result: bool) {
        self.tool_calls += calls;
        self.old_rule_tool_calls += i64::from(tool_result || calls > 0);
    }

    /// The session's mismatch, if its stored counters differ from these
    /// counts; marked [`CounterMismatch::counted_by_old_rule`] when the
    /// message count is right and the tool-call count is the old rule's.
    pub fn mismatch(
        &self,
        session_id: String,
        message_count: Option<i64>,
        tool_call_count: Option<i64>,
    ) -> Option<CounterMismatch> {
        (message_count != Some(self.messages) || tool_call_count != Some(self.tool_calls)).then(
            || CounterMismatch {
                session_id,
                message_count,
                real_message_count: self.messages,
                tool_call_count,
                real_tool_call_count: self.tool_calls,
                counted_by_old_rule: message_count == Some(self.messages)
                    && tool_call_count == Some(self.old_rule_tool_calls),
            },
        )
    }
}

/// One session as the cycle search sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct LineageNode {
    /// The session.
    pub id: String,
    /// Its `parent_session_id`.
    pub parent: Option<String>,
    /// Its `started_at` (`f64::INFINITY` when unreadable).
    pub started_at: f64,
    /// Its insertion order (SQLite's rowid), the tie-break between equal starts.
    pub order: i64,
}

/// Every cycle of parent links among `nodes` (given in insertion order),
/// each closed at its oldest member. Shared with the PostgreSQL backend's
/// doctor; plain computation, no database.
pub fn cycles_among(nodes: &[LineageNode]) -> Vec<LineageCycle> {
    let by_id: HashMap<&str, &LineageNode> = nodes.iter().map(|n| (n.id.as_str(), n)).collect();
    let age = |id: &str| {
        let node = by_id[id];
        (node.started_at, node.order)
    };
    let mut finished: HashSet<&str> = HashSet::new();
    let mut cycles = Vec::new();
    for start in nodes {
        let mut path: Vec<&str> = Vec::new();
        let mut on_path: HashMap<&str, usize> = HashMap::new();
        let mut current = start.id.as_str();
        loop {
            if finished.contains(current) {
                break;
            }
            if let Some(&at) = on_path.get(current) {
                let members = &path[at..];
                let closing = members
                    .iter()
                    .min_by(|a, b| {
                        let (a, b) = (age(a), age(b));
                        a.0.total_cmp(&b.0).then(a.1.cmp(&b.1))
                    })
                    .copied()
                    .unwrap_or(current);
                cycles.push(LineageCycle {
                    sessions: members.iter().map(|s| (*s).to_owned()).collect(),
                    closing: closing.to_owned(),
                });
                break;
            }
            on_path.insert(current, path.len());
            path.push(current);
            match by_id[current].parent.as_deref() {
                Some(parent) if by_id.contains_key(parent) => current = parent,
                _ => break,
            }
        }
        finished.extend(path);
    }
    cycles
}
