//! Health checks of a store (`doctor`) and the repair of what they find.
//!
//! The doctor only reads. The repair rebuilds derived data — the FTS indexes,
//! the session counters — and cuts links that cannot be right (parents that
//! do not exist, lineage cycles, duplicate titles); it never modifies a
//! message row. Damage SQLite itself reports (`PRAGMA integrity_check`) is
//! reported, never "repaired": that needs a backup, not a guess.

use std::collections::{HashMap, HashSet};
use std::fmt;

use hermes_state_schema::optimize::{self, FtsIndex};
use hermes_state_schema::{FtsLayout, connection, ddl, detect, fts, retry};
use hermes_state_sqlite::sqlite_error_kind;
use hermes_state_types::ErrorKind;
use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use crate::db::{FTS_TABLES, SessionDb};
use crate::error::{Result, WriteContext};

/// How one FTS table fared.
#[derive(Debug, Clone, PartialEq, Eq)]
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FtsTableCheck {
    /// `messages_fts`, `messages_fts_trigram` or `messages_fts_cjk`.
    pub table: String,
    /// The outcome.
    pub check: FtsCheck,
}

/// A session whose stored counters disagree with its message rows.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// A session naming a parent that does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DanglingParent {
    /// The child.
    pub session_id: String,
    /// The missing parent it names.
    pub missing_parent: String,
}

/// Messages of a session that does not exist (reported only: the repair never
/// touches message rows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrphanedMessages {
    /// The missing session named by the rows.
    pub session_id: String,
    /// How many rows.
    pub messages: i64,
}

/// Sessions whose parent links go round in a circle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineageCycle {
    /// Each session's parent is the next one; the last one's parent is the first.
    pub sessions: Vec<String>,
    /// The session whose parent link the repair cuts: the oldest of the
    /// cycle (smallest `started_at`, then first inserted), since a parent
    /// cannot be younger than its child.
    pub closing: String,
}

/// A non-NULL title held by several sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateTitle {
    /// The title.
    pub title: String,
    /// Its holders in insertion order; the repair leaves it to the last one.
    pub holders: Vec<String>,
}

/// Facts about the FTS storage that are not damage.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// What [`SessionDb::doctor`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DoctorReport {
    /// `PRAGMA integrity_check` output: `["ok"]` when SQLite found nothing.
    pub integrity: Vec<String>,
    /// FTS objects the layout needs that are missing (tables, view, triggers).
    pub fts_missing: Vec<String>,
    /// One entry per existing FTS table.
    pub fts: Vec<FtsTableCheck>,
    /// Sessions whose counters are wrong.
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
            + self.counters.len()
            + self.dangling_parents.len()
            + self.orphaned_messages.len()
            + self.cycles.len()
            + self.duplicate_titles.len()
            + usize::from(self.title_index_missing)
    }
}

/// Which way the repair rebuilt the FTS indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FtsRebuild {
    /// FTS5 `'rebuild'` in one transaction.
    OneShot,
    /// The gated chunked rebuild (`hermes_state_schema::optimize`).
    Background,
}

/// How [`SessionDb::repair_with`] works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairOptions {
    /// Above this many messages the FTS indexes are rebuilt in chunks that
    /// hold the write lock briefly, instead of in one transaction.
    pub background_rebuild_above: i64,
    /// Between chunks, sleep `optimize::pause_after(chunk)` so other
    /// processes' writes get through.
    pub pause_between_chunks: bool,
}

impl Default for RepairOptions {
    fn default() -> Self {
        RepairOptions {
            background_rebuild_above: 100_000,
            pause_between_chunks: true,
        }
    }
}

/// A parent link the repair cut to break a cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenLink {
    /// The session whose `parent_session_id` was set to NULL.
    pub session_id: String,
    /// The parent it named.
    pub former_parent: String,
}

/// A title the repair cleared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClearedTitle {
    /// The session that lost it.
    pub session_id: String,
    /// The title (kept by a newer holder).
    pub title: String,
}

/// What [`SessionDb::repair`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairReport {
    /// The FTS tables rebuilt.
    pub fts_rebuilt: Vec<String>,
    /// How.
    pub fts_mode: FtsRebuild,
    /// Counters set to the real values (as found before the repair).
    pub counters_fixed: Vec<CounterMismatch>,
    /// Dangling parent links set to NULL.
    pub parents_cleared: Vec<DanglingParent>,
    /// Parent links cut to break cycles.
    pub cycles_broken: Vec<BrokenLink>,
    /// Titles cleared so that each is held once.
    pub titles_cleared: Vec<ClearedTitle>,
    /// The unique title index was recreated.
    pub title_index_restored: bool,
    /// The doctor's report after the repair.
    pub after: DoctorReport,
}

impl SessionDb {
    /// Checks the store without changing it: `PRAGMA integrity_check`, FTS5
    /// `integrity-check` of every FTS table (against its content where the
    /// gate allows), the session counters against the message rows, parents
    /// that do not exist, messages of missing sessions, lineage cycles,
    /// duplicate titles, and notes on the FTS storage (legacy layout, pending
    /// backfills, stale CJK index, leftover tables).
    ///
    /// The FTS5 `integrity-check` is an `INSERT` command that writes
    /// nothing, but it needs the write lock: on a writable handle the whole
    /// check runs through the write path (which also upgrades the file, as
    /// any first write does); a read-only handle checks the indexes only
    /// (`PRAGMA integrity_check(<table>)`) and never writes.
    pub fn doctor(&self) -> Result<DoctorReport> {
        if self.is_read_only() {
            self.read(|conn| diagnose(conn, true))
        } else {
            self.write("checking the store", |conn| diagnose(conn, false))
        }
    }

    /// [`SessionDb::repair_with`] with the default options.
    pub fn repair(&self) -> Result<RepairReport> {
        self.repair_with(&RepairOptions::default())
    }

    /// Repairs what [`SessionDb::doctor`] can repair, then checks again:
    /// sets dangling parents to NULL, cuts each lineage cycle at its oldest
    /// session, clears duplicate titles except for the most recently inserted
    /// holder (as the open does) and recreates the unique title index, sets
    /// the counters to the real values, recreates missing FTS objects and
    /// rebuilds every FTS index (in chunks on large stores). Message rows are
    /// never modified; `PRAGMA integrity_check` failures and messages of
    /// missing sessions are left for a human (see [`RepairReport::after`]).
    pub fn repair_with(&self, options: &RepairOptions) -> Result<RepairReport> {
        let (parents_cleared, cycles_broken, titles_cleared, title_index_restored, counters_fixed) =
            self.write("repairing sessions", |conn| {
                let dangling = dangling_parents(conn)?;
                for d in &dangling {
                    clear_parent(conn, &d.session_id)?;
                }
                let mut broken = Vec::new();
                for cycle in lineage_cycles(conn)? {
                    let former_parent = parent_of(conn, &cycle.closing)?.unwrap_or_default();
                    clear_parent(conn, &cycle.closing)?;
                    broken.push(BrokenLink {
                        session_id: cycle.closing,
                        former_parent,
                    });
                }
                let mut cleared = Vec::new();
                for dup in duplicate_titles(conn)? {
                    let keep = dup.holders.len() - 1;
                    cleared.extend(dup.holders[..keep].iter().map(|id| ClearedTitle {
                        session_id: id.clone(),
                        title: dup.title.clone(),
                    }));
                }
                conn.execute_batch(ddl::CLEAR_DUPLICATE_TITLES)
                    .context("clearing duplicate titles")?;
                let restored = optimize::in_transaction::restore_title_index(conn)?;
                let counters = counter_mismatches(conn)?;
                for c in &counters {
                    conn.execute(
                        "UPDATE sessions SET message_count = ?1, tool_call_count = ?2 WHERE id = ?3",
                        rusqlite::params![c.real_message_count, c.real_tool_call_count, c.session_id],
                    )
                    .context("fixing session counters")?;
                }
                Ok((dangling, broken, cleared, restored, counters))
            })?;
        let (fts_rebuilt, fts_mode) = self.rebuild_all_fts(options)?;
        Ok(RepairReport {
            fts_rebuilt,
            fts_mode,
            counters_fixed,
            parents_cleared,
            cycles_broken,
            titles_cleared,
            title_index_restored,
            after: self.doctor()?,
        })
    }

    /// Recreates missing FTS objects, then rebuilds every index this handle
    /// can tokenize, in one transaction or in gated chunks.
    fn rebuild_all_fts(&self, options: &RepairOptions) -> Result<(Vec<String>, FtsRebuild)> {
        let (tokenizer, messages, layout) = self.read(|conn| {
            let messages: i64 = conn
                .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
                .context("counting messages")?;
            Ok((
                connection::has_cjk_tokenizer(conn),
                messages,
                detect::fts_layout(conn)?,
            ))
        })?;
        let background =
            messages > options.background_rebuild_above && layout == FtsLayout::External;
        let rebuilt = self.write("rebuilding the FTS indexes", |conn| {
            if !missing_fts_objects(conn)?.is_empty() {
                fts::set_up(conn, fts::count_fts_triggers(conn)?, tokenizer, false)?;
            }
            if background {
                optimize::in_transaction::begin_rebuild(
                    conn,
                    tokenizer && fts::cjk_index_live(conn)?,
                )?;
            } else {
                for table in ["messages_fts", "messages_fts_trigram"] {
                    if detect::object_exists(conn, "table", table)? {
                        fts::rebuild(conn, table)?;
                    }
                }
                conn.execute(
                    "DELETE FROM state_meta WHERE key IN (?1, ?2)",
                    [fts::REBUILD_HIGH_WATER_KEY, fts::REBUILD_PROGRESS_KEY],
                )
                .context("clearing the rebuild markers")?;
                // Only a live CJK index is rebuilt: a stale one keeps its
                // triggers dropped (other writers may lack the tokenizer)
                // until the explicit CJK rebuild.
                if tokenizer && fts::cjk_index_live(conn)? {
                    fts::reset_cjk_index(conn)?;
                }
            }
            let mut tables = Vec::new();
            for table in FTS_TABLES {
                let usable = table != "messages_fts_cjk" || tokenizer;
                if usable && detect::object_exists(conn, "table", table)? {
                    tables.push(table.to_owned());
                }
            }
            Ok(tables)
        })?;
        if !background {
            return Ok((rebuilt, FtsRebuild::OneShot));
        }
        let families: &[FtsIndex] = if tokenizer {
            &[FtsIndex::Base, FtsIndex::Cjk]
        } else {
            &[FtsIndex::Base]
        };
        for &index in families {
            loop {
                let step = self.write("backfilling an FTS index", |conn| {
                    Ok(optimize::in_transaction::backfill_chunk(
                        conn,
                        index,
                        optimize::CHUNK_IDS,
                    )?)
                })?;
                if step.done {
                    break;
                }
                if options.pause_between_chunks {
                    std::thread::sleep(optimize::pause_after(step.elapsed));
                }
            }
        }
        Ok((rebuilt, FtsRebuild::Background))
    }
}

fn diagnose(conn: &Connection, read_only: bool) -> Result<DoctorReport> {
    let mut report = DoctorReport {
        integrity: pragma_integrity(conn)?,
        fts_missing: missing_fts_objects(conn)?,
        notes: fts_notes(conn)?,
        ..DoctorReport::default()
    };
    let tokenizer = connection::has_cjk_tokenizer(conn);
    for table in FTS_TABLES {
        if detect::object_exists(conn, "table", table)? {
            report.fts.push(FtsTableCheck {
                table: table.to_owned(),
                check: check_fts(conn, table, &report.notes, tokenizer, read_only)?,
            });
        }
    }
    report.counters = counter_mismatches(conn)?;
    report.dangling_parents = dangling_parents(conn)?;
    report.orphaned_messages = orphaned_messages(conn)?;
    report.cycles = lineage_cycles(conn)?;
    report.duplicate_titles = duplicate_titles(conn)?;
    report.title_index_missing =
        !detect::object_exists(conn, "index", "idx_sessions_title_unique")?;
    Ok(report)
}

fn pragma_integrity(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt = conn
        .prepare("PRAGMA integrity_check")
        .context("checking integrity")?;
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .context("checking integrity")?;
    rows.collect::<Result<_, _>>()
        .context("checking integrity")
        .map_err(Into::into)
}

/// The FTS objects the file's layout needs that are missing (the optional
/// CJK index is not needed).
fn missing_fts_objects(conn: &Connection) -> Result<Vec<String>> {
    let layout = detect::fts_layout(conn)?;
    let mut wanted: Vec<(&str, &str)> =
        vec![("table", "messages_fts"), ("table", "messages_fts_trigram")];
    if !layout.is_legacy() {
        wanted.push(("view", "messages_fts_trigram_src"));
    }
    wanted.extend(ddl::FTS_TRIGGER_NAMES.iter().map(|name| ("trigger", *name)));
    let mut missing = Vec::new();
    for (kind, name) in wanted {
        if !detect::object_exists(conn, kind, name)? {
            missing.push(format!("{kind} {name}"));
        }
    }
    Ok(missing)
}

fn meta_int(conn: &Connection, key: &str) -> Result<Option<i64>> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .query_row(
            "SELECT CAST(value AS INTEGER) FROM state_meta WHERE key = ?1",
            [key],
            |r| r.get::<_, Option<i64>>(0),
        )
        .optional()
        .context("reading state_meta")?
        .map(Option::unwrap_or_default))
}

fn fts_notes(conn: &Connection) -> Result<Vec<FtsNote>> {
    let mut notes = Vec::new();
    if detect::fts_layout(conn)?.is_legacy() {
        notes.push(FtsNote::LegacyLayout);
    }
    if let Some(high_water) = meta_int(conn, fts::REBUILD_HIGH_WATER_KEY)? {
        notes.push(FtsNote::RebuildPending {
            progress: meta_int(conn, fts::REBUILD_PROGRESS_KEY)?,
            high_water,
        });
    }
    if let Some(high_water) = meta_int(conn, fts::CJK_HIGH_WATER_KEY)? {
        notes.push(FtsNote::CjkRebuildPending {
            progress: meta_int(conn, fts::CJK_PROGRESS_KEY)?,
            high_water,
        });
    }
    if meta_int(conn, fts::CJK_STALE_KEY)?.is_some() {
        notes.push(FtsNote::CjkStale);
    }
    let trash: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'fts\\_v22\\_trash\\_%' ESCAPE '\\'",
            [],
            |r| r.get(0),
        )
        .context("reading the schema")?;
    if trash > 0 {
        notes.push(FtsNote::TrashTables(trash as usize));
    }
    Ok(notes)
}

fn check_fts(
    conn: &Connection,
    table: &str,
    notes: &[FtsNote],
    tokenizer: bool,
    read_only: bool,
) -> Result<FtsCheck> {
    let cjk = table == "messages_fts_cjk";
    if cjk && !tokenizer {
        return Ok(FtsCheck::Skipped(
            "this connection lacks the cjk_unicode61 tokenizer".to_owned(),
        ));
    }
    if cjk && notes.contains(&FtsNote::CjkStale) {
        return Ok(FtsCheck::Skipped(
            "stale: disabled by a process without the tokenizer; not served until rebuilt"
                .to_owned(),
        ));
    }
    let pending = notes.iter().any(|n| match n {
        FtsNote::RebuildPending { .. } => !cjk,
        FtsNote::CjkRebuildPending { .. } => cjk,
        _ => false,
    });
    let outcome = if read_only {
        // The FTS5 command is an INSERT, refused on a read-only handle;
        // PRAGMA integrity_check(<table>) checks the index only.
        let mut stmt = conn
            .prepare(&format!("PRAGMA integrity_check({table})"))
            .context("checking an FTS index")?;
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .context("checking an FTS index")?
            .collect::<Result<Vec<_>, _>>()
            .context("checking an FTS index")?;
        if rows == ["ok"] {
            Ok(())
        } else {
            Err(rows.join("; "))
        }
    } else {
        let sql = format!(
            "INSERT INTO {table}({table}, rank) VALUES('integrity-check', {})",
            i32::from(!pending)
        );
        match retry::with_retries(|| conn.execute_batch(&sql), sqlite_error_kind) {
            Ok(()) => Ok(()),
            Err(error) if sqlite_error_kind(&error) == ErrorKind::Busy => {
                return Err(crate::Error::sqlite("checking an FTS index", error));
            }
            Err(error) => Err(error.to_string()),
        }
    };
    Ok(match outcome {
        Err(message) => FtsCheck::Failed(message),
        Ok(()) if read_only => FtsCheck::IndexOnly("read-only handle".to_owned()),
        Ok(()) if pending => FtsCheck::IndexOnly(
            "a gated backfill is pending: not-yet-backfilled rows are not indexed".to_owned(),
        ),
        Ok(()) => FtsCheck::Ok,
    })
}

/// Number of tool calls a stored `tool_calls` value stands for, as the
/// writers count them (`api.md` §4.3): a JSON list its length, JSON null
/// none, anything else one.
fn tool_calls_in(value: &SqlValue) -> i64 {
    match value {
        SqlValue::Null => 0,
        SqlValue::Text(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Array(calls)) => calls.len() as i64,
            Ok(serde_json::Value::Null) => 0,
            _ => 1,
        },
        _ => 1,
    }
}

/// Sessions whose counters differ from their rows. Rows archived by
/// compaction (`compacted = 1`) are not counted: `archive_and_compact` sets
/// the counters to the new rows only, while rewound rows (`active = 0,
/// compacted = 0`) stay counted (`rewind_to_message` leaves the counters alone).
fn counter_mismatches(conn: &Connection) -> Result<Vec<CounterMismatch>> {
    let mut real: HashMap<String, (i64, i64)> = HashMap::new();
    {
        let mut stmt = conn
            .prepare(
                "SELECT session_id, count(*) FROM messages WHERE COALESCE(compacted, 0) = 0 GROUP BY session_id",
            )
            .context("counting messages")?;
        let mut rows = stmt.query([]).context("counting messages")?;
        while let Some(row) = rows.next().context("counting messages")? {
            real.entry(row.get(0).context("counting messages")?)
                .or_default()
                .0 = row.get(1).context("counting messages")?;
        }
    }
    {
        let mut stmt = conn
            .prepare(
                "SELECT session_id, tool_calls FROM messages WHERE tool_calls IS NOT NULL AND COALESCE(compacted, 0) = 0",
            )
            .context("counting tool calls")?;
        let mut rows = stmt.query([]).context("counting tool calls")?;
        while let Some(row) = rows.next().context("counting tool calls")? {
            let calls = tool_calls_in(&row.get::<_, SqlValue>(1).context("counting tool calls")?);
            real.entry(row.get(0).context("counting tool calls")?)
                .or_default()
                .1 += calls;
        }
    }
    let mut stmt = conn
        .prepare("SELECT id, message_count, tool_call_count FROM sessions ORDER BY rowid")
        .context("reading sessions")?;
    let sessions = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                integer(r.get(1)?),
                integer(r.get(2)?),
            ))
        })
        .context("reading sessions")?
        .collect::<Result<Vec<_>, _>>()
        .context("reading sessions")?;
    Ok(sessions
        .into_iter()
        .filter_map(|(session_id, message_count, tool_call_count)| {
            let (messages, calls) = real.get(&session_id).copied().unwrap_or_default();
            (message_count != Some(messages) || tool_call_count != Some(calls)).then_some(
                CounterMismatch {
                    session_id,
                    message_count,
                    real_message_count: messages,
                    tool_call_count,
                    real_tool_call_count: calls,
                },
            )
        })
        .collect())
}

/// A stored counter as an integer; a value of another type (which no writer
/// stores) reads as `None`, so that it is reported and repaired.
fn integer(value: SqlValue) -> Option<i64> {
    match value {
        SqlValue::Integer(n) => Some(n),
        SqlValue::Real(r) if r.fract() == 0.0 => Some(r as i64),
        _ => None,
    }
}

fn dangling_parents(conn: &Connection) -> Result<Vec<DanglingParent>> {
    let mut stmt = conn
        .prepare(
            "SELECT s.id, s.parent_session_id FROM sessions s
             WHERE s.parent_session_id IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id)
             ORDER BY s.rowid",
        )
        .context("finding dangling parents")?;
    let rows = stmt
        .query_map([], |r| {
            Ok(DanglingParent {
                session_id: r.get(0)?,
                missing_parent: r.get(1)?,
            })
        })
        .context("finding dangling parents")?;
    rows.collect::<Result<_, _>>()
        .context("finding dangling parents")
        .map_err(Into::into)
}

fn orphaned_messages(conn: &Connection) -> Result<Vec<OrphanedMessages>> {
    let mut stmt = conn
        .prepare(
            "SELECT m.session_id, count(*) FROM messages m
             WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = m.session_id)
             GROUP BY m.session_id ORDER BY m.session_id",
        )
        .context("finding orphaned messages")?;
    let rows = stmt
        .query_map([], |r| {
            Ok(OrphanedMessages {
                session_id: r.get(0)?,
                messages: r.get(1)?,
            })
        })
        .context("finding orphaned messages")?;
    rows.collect::<Result<_, _>>()
        .context("finding orphaned messages")
        .map_err(Into::into)
}

/// Every cycle of parent links, found by walking each session's parents
/// with a visited set (each session is walked once).
fn lineage_cycles(conn: &Connection) -> Result<Vec<LineageCycle>> {
    struct Node {
        parent: Option<String>,
        age: (f64, i64),
    }
    let mut stmt = conn
        .prepare("SELECT id, parent_session_id, started_at, rowid FROM sessions ORDER BY rowid")
        .context("reading lineage")?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                match r.get::<_, SqlValue>(2)? {
                    SqlValue::Real(t) => t,
                    SqlValue::Integer(t) => t as f64,
                    _ => f64::INFINITY,
                },
                r.get::<_, i64>(3)?,
            ))
        })
        .context("reading lineage")?
        .collect::<Result<Vec<_>, _>>()
        .context("reading lineage")?;
    let order: Vec<String> = rows.iter().map(|(id, ..)| id.clone()).collect();
    let nodes: HashMap<String, Node> = rows
        .into_iter()
        .map(|(id, parent, started, rowid)| {
            (
                id,
                Node {
                    parent,
                    age: (started, rowid),
                },
            )
        })
        .collect();
    let mut finished: HashSet<&str> = HashSet::new();
    let mut cycles = Vec::new();
    for start in &order {
        let mut path: Vec<&str> = Vec::new();
        let mut on_path: HashMap<&str, usize> = HashMap::new();
        let mut current = start.as_str();
        loop {
            if finished.contains(current) {
                break;
            }
            if let Some(&at) = on_path.get(current) {
                let members = &path[at..];
                let closing = members
                    .iter()
                    .min_by(|a, b| {
                        nodes[**a]
                            .age
                            .0
                            .total_cmp(&nodes[**b].age.0)
                            .then(nodes[**a].age.1.cmp(&nodes[**b].age.1))
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
            match nodes[current].parent.as_deref() {
                Some(parent) if nodes.contains_key(parent) => current = parent,
                _ => break,
            }
        }
        finished.extend(path);
    }
    Ok(cycles)
}

fn parent_of(conn: &Connection, session_id: &str) -> Result<Option<String>> {
    conn.query_row(
        "SELECT parent_session_id FROM sessions WHERE id = ?1",
        [session_id],
        |r| r.get(0),
    )
    .context("reading a parent link")
    .map_err(Into::into)
}

fn clear_parent(conn: &Connection, session_id: &str) -> Result<()> {
    conn.execute(
        "UPDATE sessions SET parent_session_id = NULL WHERE id = ?1",
        [session_id],
    )
    .context("clearing a parent link")?;
    Ok(())
}

fn duplicate_titles(conn: &Connection) -> Result<Vec<DuplicateTitle>> {
    let mut stmt = conn
        .prepare(
            "SELECT title, id FROM sessions
             WHERE title IN (SELECT title FROM sessions WHERE title IS NOT NULL GROUP BY title HAVING count(*) > 1)
             ORDER BY title, rowid",
        )
        .context("finding duplicate titles")?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .context("finding duplicate titles")?
        .collect::<Result<Vec<_>, _>>()
        .context("finding duplicate titles")?;
    let mut duplicates: Vec<DuplicateTitle> = Vec::new();
    for (title, id) in rows {
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

fn counter_line(c: &CounterMismatch) -> String {
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
            writeln!(f, "wrong counters: {}", counter_line(c))?;
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
            writeln!(f, "fixed counters: {}", counter_line(c))?;
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
