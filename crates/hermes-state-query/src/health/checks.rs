//! The checks: each one plain reads over a connection.

use std::collections::HashMap;

use hermes_state_sqlite::names;
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension};

use super::{
    CounterMismatch, DanglingParent, DoctorReport, DuplicateTitle, FtsNote, LineageCycle,
    LineageNode, OrphanedMessages, RowCounts, cycles_among, tool_calls_in_text,
};
use crate::error::{QueryContext, QueryError};

type Result<T, E = QueryError> = std::result::Result<T, E>;

/// Every check of this module, in one report; [`DoctorReport::fts`] stays
/// empty (the FTS5 `integrity-check` of each table is the facade's).
pub fn read_checks(conn: &Connection) -> Result<DoctorReport> {
    Ok(DoctorReport {
        integrity: integrity(conn)?,
        fts_missing: missing_fts_objects(conn)?,
        fts: Vec::new(),
        counters: counter_mismatches(conn)?,
        dangling_parents: dangling_parents(conn)?,
        orphaned_messages: orphaned_messages(conn)?,
        cycles: lineage_cycles(conn)?,
        duplicate_titles: duplicate_titles(conn)?,
        title_index_missing: title_index_missing(conn)?,
        notes: fts_notes(conn)?,
        awaited: awaited_objects(conn)?,
    })
}

/// `idx_sessions_title_unique` does not exist in a file whose version has
/// it (v4 on; an older file awaits it: [`awaited_objects`]).
pub fn title_index_missing(conn: &Connection) -> Result<bool> {
    Ok(checked_version(conn)? >= TITLE_INDEX_SINCE
        && !object_exists(conn, "index", "idx_sessions_title_unique")?)
}

/// Whether the main database has an object of this type and name.
fn object_exists(conn: &Connection, kind: &str, name: &str) -> Result<bool> {
    Ok(hermes_state_sqlite::catalog::object_exists(
        conn, kind, name,
    )?)
}

/// Whether `messages_fts` has a legacy layout (`schema-v23.md` §6.7): its
/// stored SQL does not mention `tool_name` (v1–v22 generations).
fn legacy_fts_layout(conn: &Connection) -> Result<bool> {
    let sql: Option<String> = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'messages_fts'",
            [],
            |row| row.get(0),
        )
        .optional()
        .context("reading the schema")?
        .flatten();
    Ok(sql.is_some_and(|sql| !sql.contains("tool_name")))
}

/// `PRAGMA integrity_check` output: `["ok"]` when SQLite found nothing.
pub fn integrity(conn: &Connection) -> Result<Vec<String>> {
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

/// The schema version whose upgrade step added the trigram index and its
/// triggers (`migrations.md` §1.5, the v10 build).
const TRIGRAM_SINCE: i64 = 10;
/// The schema version that added `idx_sessions_title_unique` (§1.3).
const TITLE_INDEX_SINCE: i64 = 4;
/// The version this build writes; the objects of a file below it that its
/// upgrade adds are awaited, not missing.
const CURRENT: i64 = 23;

/// The objects a file at `version` with this FTS layout has by design, as
/// (`type`, `name`): the base FTS table and its triggers always, the trigram
/// table and its triggers from v10, the trigram view in the v23 layout, the
/// unique title index from v4 (the optional CJK index is never needed).
fn wanted_objects(legacy: bool, version: i64) -> Vec<(&'static str, &'static str)> {
    let trigram = |name: &&&str| name.starts_with("messages_fts_trigram");
    let mut wanted = vec![("table", "messages_fts")];
    let triggers = names::FTS_TRIGGERS.iter();
    wanted.extend(
        triggers
            .clone()
            .filter(|n| !trigram(n))
            .map(|n| ("trigger", *n)),
    );
    if version >= TRIGRAM_SINCE {
        wanted.push(("table", "messages_fts_trigram"));
        if !legacy {
            wanted.push(("view", "messages_fts_trigram_src"));
        }
        wanted.extend(triggers.filter(trigram).map(|n| ("trigger", *n)));
    }
    if version >= TITLE_INDEX_SINCE {
        wanted.push(("index", "idx_sessions_title_unique"));
    }
    wanted
}

/// The file's schema version for these checks: a file without a readable
/// number is held to the current layout.
fn checked_version(conn: &Connection) -> Result<i64> {
    Ok(crate::compat::schema_version(conn)?.map_or(CURRENT, |v| v.min(CURRENT)))
}

/// The wanted objects of `wanted` that the file lacks, as `"<type> <name>"`.
fn absent(conn: &Connection, wanted: &[(&str, &str)]) -> Result<Vec<String>> {
    let mut missing = Vec::new();
    for (kind, name) in wanted {
        if !object_exists(conn, kind, name)? {
            missing.push(format!("{kind} {name}"));
        }
    }
    Ok(missing)
}

/// The FTS objects the file's layout and schema version need that are
/// missing, as `"<type> <name>"` (the optional CJK index is not needed; the
/// objects a later version added are not needed by an older file:
/// [`awaited_objects`] lists them).
pub fn missing_fts_objects(conn: &Connection) -> Result<Vec<String>> {
    let wanted = wanted_objects(legacy_fts_layout(conn)?, checked_version(conn)?);
    let fts: Vec<_> = wanted
        .into_iter()
        .filter(|(kind, _)| *kind != "index")
        .collect();
    absent(conn, &fts)
}

/// The objects of the current layout that a file below the current version
/// lacks because its version predates them (its upgrade, `migrate` or the
/// first write, adds them): not damage. Empty at the current version.
pub fn awaited_objects(conn: &Connection) -> Result<Vec<String>> {
    let version = checked_version(conn)?;
    if version >= CURRENT {
        return Ok(Vec::new());
    }
    let legacy = legacy_fts_layout(conn)?;
    let has = wanted_objects(legacy, version);
    let later: Vec<_> = wanted_objects(legacy, CURRENT)
        .into_iter()
        .filter(|object| !has.contains(object))
        .collect();
    absent(conn, &later)
}

fn meta_int(conn: &Connection, key: &str) -> Result<Option<i64>> {
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

/// Facts about the FTS storage that are not damage: the legacy layout,
/// pending gated backfills, a stale CJK index, demoted tables awaiting
/// teardown.
pub fn fts_notes(conn: &Connection) -> Result<Vec<FtsNote>> {
    let mut notes = Vec::new();
    if legacy_fts_layout(conn)? {
        notes.push(FtsNote::LegacyLayout);
    }
    if let Some(high_water) = meta_int(conn, names::REBUILD_HIGH_WATER_KEY)? {
        notes.push(FtsNote::RebuildPending {
            progress: meta_int(conn, names::REBUILD_PROGRESS_KEY)?,
            high_water,
        });
    }
    if let Some(high_water) = meta_int(conn, names::CJK_HIGH_WATER_KEY)? {
        notes.push(FtsNote::CjkRebuildPending {
            progress: meta_int(conn, names::CJK_PROGRESS_KEY)?,
            high_water,
        });
    }
    if meta_int(conn, names::CJK_STALE_KEY)?.is_some() {
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

/// Number of tool calls a stored `tool_calls` value stands for, as the
/// writers count them (`api.md` §4.3): a JSON list its length, JSON null
/// none, anything else one.
fn tool_calls_in(value: &SqlValue) -> i64 {
    match value {
        SqlValue::Null => 0,
        SqlValue::Text(text) => tool_calls_in_text(text),
        _ => 1,
    }
}

/// Sessions whose stored counters differ from their rows. Rows archived by
/// compaction (`compacted = 1`) are not counted: `archive_and_compact` sets
/// the counters to the new rows only, while rewound rows (`active = 0,
/// compacted = 0`) stay counted (`rewind_to_message` leaves the counters alone).
///
/// A `tool_call_count` equal to what Hermes counted before its fix of
/// 2026-03-07 (upstream pull request #564, between schema v2 and v4: one per
/// assistant message carrying calls, however many, plus one per `tool`
/// result) is marked [`CounterMismatch::counted_by_old_rule`] when the
/// message count is right: the old rule's value, not damage. See
/// docs/DECISIONS.md ("doctor and the old tool-call counting rule").
pub fn counter_mismatches(conn: &Connection) -> Result<Vec<CounterMismatch>> {
    // Per session: messages, tool calls, tool calls under the old rule.
    let mut real: HashMap<String, RowCounts> = HashMap::new();
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
                .messages = row.get(1).context("counting messages")?;
        }
    }
    {
        let mut stmt = conn
            .prepare(
                "SELECT session_id, tool_calls, role = 'tool' FROM messages
                 WHERE (tool_calls IS NOT NULL OR role = 'tool') AND COALESCE(compacted, 0) = 0",
            )
            .context("counting tool calls")?;
        let mut rows = stmt.query([]).context("counting tool calls")?;
        while let Some(row) = rows.next().context("counting tool calls")? {
            let calls = tool_calls_in(&row.get::<_, SqlValue>(1).context("counting tool calls")?);
            let tool_result = row.get::<_, bool>(2).context("counting tool calls")?;
            real.entry(row.get(0).context("counting tool calls")?)
                .or_default()
                .add_tool_row(calls, tool_result);
        }
    }
    // `main.sessions`, not the compatibility view of an old file (which has
    // no rowid): both counters exist since v1.
    let mut stmt = conn
        .prepare("SELECT id, message_count, tool_call_count FROM main.sessions ORDER BY rowid")
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
            let counts = real.get(&session_id).copied().unwrap_or_default();
            counts.mismatch(session_id, message_count, tool_call_count)
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

/// Sessions naming a parent that does not exist, in insertion order.
///
/// The checks that order by insertion read `main.sessions` (every column they
/// need exists since v1), not the compatibility view an old file is read
/// through, which has no rowid.
pub fn dangling_parents(conn: &Connection) -> Result<Vec<DanglingParent>> {
    let mut stmt = conn
        .prepare(
            "SELECT s.id, s.parent_session_id FROM main.sessions s
             WHERE s.parent_session_id IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM main.sessions p WHERE p.id = s.parent_session_id)
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

/// Messages of sessions that do not exist, by session.
pub fn orphaned_messages(conn: &Connection) -> Result<Vec<OrphanedMessages>> {
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
pub fn lineage_cycles(conn: &Connection) -> Result<Vec<LineageCycle>> {
    let mut stmt = conn
        .prepare(
            "SELECT id, parent_session_id, started_at, rowid FROM main.sessions ORDER BY rowid",
        )
        .context("reading lineage")?;
    let nodes = stmt
        .query_map([], |r| {
            Ok(LineageNode {
                id: r.get(0)?,
                parent: r.get(1)?,
                started_at: match r.get::<_, SqlValue>(2)? {
                    SqlValue::Real(t) => t,
                    SqlValue::Integer(t) => t as f64,
                    _ => f64::INFINITY,
                },
                order: r.get(3)?,
            })
        })
        .context("reading lineage")?
        .collect::<Result<Vec<_>, _>>()
        .context("reading lineage")?;
    Ok(cycles_among(&nodes))
}

/// Non-NULL titles held by several sessions, holders in insertion order.
pub fn duplicate_titles(conn: &Connection) -> Result<Vec<DuplicateTitle>> {
    let mut stmt = conn
        .prepare(
            // The view for `title` (NULL before v4), the table for the rowid.
            "SELECT v.title, v.id FROM sessions v JOIN main.sessions m ON m.id = v.id
             WHERE v.title IN (SELECT title FROM sessions WHERE title IS NOT NULL GROUP BY title HAVING count(*) > 1)
             ORDER BY v.title, m.rowid",
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
