//! The `context` of the hits (`api.md` §8.5): the message before and after
//! each hit in its session, by `(timestamp, id)`, visibility ignored.
//!
//! The neighbours of up to [`CHUNK`] hits come from one statement (a `VALUES`
//! list of the hits, two correlated look-ups each on `idx_messages_session`),
//! whose text does not depend on the number of hits (missing hits are NULL
//! rows that match nothing), so it is prepared once per connection and taken
//! from rusqlite's statement cache. The hits' values are bound only inside
//! the `VALUES` list, so no parameter takes part in the plan and returning
//! the statement to the cache (`sqlite3_clear_bindings`) does not expire it
//! (the trap described at [`ContextStatements`]).
//!
//! Each look-up also says `p.timestamp <= h.ts` (resp. `>=`), which the
//! `OR` that follows implies (SQLite orders values totally, NULLs match
//! neither): without it the planner, which derives that range from the `OR`
//! for a bound parameter but not for a column of `h`, walked the whole
//! session's index entries for every look-up (1.5x the hand-written
//! look-ups at 100k messages for `word_filtered`).
//!
//! The one-statement path gives the neighbours the per-hit statements give:
//! the same comparisons against the same bound values, the same order, the
//! same `LIMIT 1`. When it fails for any reason other than the file or its
//! locks, the hits of that chunk are looked up one by one as before, so a
//! failure still costs only the context of the hit it concerns.

use rusqlite::{Connection, Statement};

use super::{ContextMessage, QueryError, Row, SearchHit, context_failure, stored_preview};
use crate::values::text;

/// Hits per statement.
const CHUNK: usize = 20;

/// The batched look-up: `VALUES (0, ?1, ?2, ?3), (1, ?4, ?5, ?6), …`.
fn batched_sql() -> String {
    let values = (0..CHUNK)
        .map(|n| format!("({n}, ?{}, ?{}, ?{})", 3 * n + 1, 3 * n + 2, 3 * n + 3))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "WITH h(n, sid, ts, id) AS (VALUES {values})
         SELECT h.n, b.id IS NOT NULL, b.role, b.content, a.id IS NOT NULL, a.role, a.content
         FROM h
         LEFT JOIN messages b ON b.id = (
             SELECT p.id FROM messages p
             WHERE p.session_id = h.sid AND p.timestamp <= h.ts AND (p.timestamp < h.ts OR (p.timestamp = h.ts AND p.id < h.id))
             ORDER BY p.timestamp DESC, p.id DESC LIMIT 1)
         LEFT JOIN messages a ON a.id = (
             SELECT q.id FROM messages q
             WHERE q.session_id = h.sid AND q.timestamp >= h.ts AND (q.timestamp > h.ts OR (q.timestamp = h.ts AND q.id > h.id))
             ORDER BY q.timestamp ASC, q.id ASC LIMIT 1)
         WHERE h.sid IS NOT NULL"
    )
}

/// The hits with their context attached.
pub(super) fn attach(conn: &Connection, rows: Vec<Row>) -> Result<Vec<SearchHit>, QueryError> {
    let mut hits = Vec::with_capacity(rows.len());
    let mut rows = rows.into_iter().peekable();
    let mut one_by_one: Option<Option<ContextStatements<'_>>> = None;
    let sql = batched_sql();
    while rows.peek().is_some() {
        let chunk: Vec<Row> = rows.by_ref().take(CHUNK).collect();
        match batched(conn, &sql, &chunk) {
            Ok(mut found) => {
                for (n, Row { mut hit, preview }) in chunk.into_iter().enumerate() {
                    let (before, after) =
                        found.get_mut(n).and_then(Option::take).unwrap_or_default();
                    let itself = ContextMessage {
                        role: hit.role.clone(),
                        content: preview,
                        is_hit: true,
                    };
                    hit.context = before
                        .into_iter()
                        .chain(std::iter::once(itself))
                        .chain(after)
                        .collect();
                    hits.push(hit);
                }
            }
            Err(error) => {
                // The file or its locks: the search's error, as one by one.
                context_failure(error)?;
                if one_by_one.is_none() {
                    one_by_one = Some(match ContextStatements::prepare(conn) {
                        Ok(statements) => Some(statements),
                        Err(error) => {
                            context_failure(error)?;
                            None
                        }
                    });
                }
                for Row { mut hit, preview } in chunk {
                    if let Some(Some(statements)) = one_by_one.as_mut() {
                        hit.context = match statements.context(&hit, preview) {
                            Ok(context) => context,
                            Err(error) => context_failure(error)?,
                        };
                    }
                    hits.push(hit);
                }
            }
        }
    }
    Ok(hits)
}

type Neighbours = (Option<ContextMessage>, Option<ContextMessage>);

/// The neighbours of `chunk`'s hits, by position.
fn batched(
    conn: &Connection,
    sql: &str,
    chunk: &[Row],
) -> rusqlite::Result<Vec<Option<Neighbours>>> {
    let mut stmt = conn.prepare_cached(sql)?;
    for (n, row) in chunk.iter().enumerate() {
        stmt.raw_bind_parameter(3 * n + 1, &row.hit.session_id)?;
        stmt.raw_bind_parameter(3 * n + 2, row.hit.timestamp)?;
        stmt.raw_bind_parameter(3 * n + 3, row.hit.id)?;
    }
    for n in chunk.len()..CHUNK {
        for i in 1..=3 {
            stmt.raw_bind_parameter(3 * n + i, rusqlite::types::Null)?;
        }
    }
    let mut found: Vec<Option<Neighbours>> = vec![None; chunk.len()];
    let mut rows = stmt.raw_query();
    while let Some(row) = rows.next()? {
        let n: i64 = row.get(0)?;
        let neighbour = |exists: usize, role: usize, content: usize| -> rusqlite::Result<_> {
            Ok(if row.get::<_, bool>(exists)? {
                Some(ContextMessage {
                    role: text(row.get_ref(role)?).unwrap_or_default(),
                    content: stored_preview(row.get_ref(content)?),
                    is_hit: false,
                })
            } else {
                None
            })
        };
        let pair = (neighbour(1, 2, 3)?, neighbour(4, 5, 6)?);
        if let Some(slot) = usize::try_from(n).ok().and_then(|n| found.get_mut(n)) {
            *slot = Some(pair);
        }
    }
    Ok(found)
}

/// The two neighbour look-ups of a hit's context, prepared once per search:
/// the path of a chunk whose batched look-up failed.
///
/// Prepared statements are reused across the hits on purpose: a statement
/// taken from rusqlite's cache has its bindings cleared on return, which in
/// SQLite 3.54 expires statements whose plan depends on a parameter, so a
/// cached look-up is re-planned every time (measured: 13–18 µs against 2 µs).
pub(super) struct ContextStatements<'c> {
    before: Statement<'c>,
    after: Statement<'c>,
}

impl<'c> ContextStatements<'c> {
    fn prepare(conn: &'c Connection) -> rusqlite::Result<Self> {
        Ok(ContextStatements {
            before: conn.prepare(
                "SELECT role, content FROM messages WHERE session_id = ?1 AND (timestamp < ?2 OR (timestamp = ?2 AND id < ?3)) ORDER BY timestamp DESC, id DESC LIMIT 1",
            )?,
            after: conn.prepare(
                "SELECT role, content FROM messages WHERE session_id = ?1 AND (timestamp > ?2 OR (timestamp = ?2 AND id > ?3)) ORDER BY timestamp ASC, id ASC LIMIT 1",
            )?,
        })
    }

    /// The hit's context. The caller turns a failure into an empty context,
    /// never a failed search.
    fn context(
        &mut self,
        hit: &SearchHit,
        preview: String,
    ) -> rusqlite::Result<Vec<ContextMessage>> {
        let params = rusqlite::params![hit.session_id, hit.timestamp, hit.id];
        let before = neighbour(&mut self.before, params)?;
        let after = neighbour(&mut self.after, params)?;
        let itself = ContextMessage {
            role: hit.role.clone(),
            content: preview,
            is_hit: true,
        };
        Ok(before
            .into_iter()
            .chain(std::iter::once(itself))
            .chain(after)
            .collect())
    }
}

fn neighbour(
    stmt: &mut Statement<'_>,
    params: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<Option<ContextMessage>> {
    let mut rows = stmt.query(params)?;
    match rows.next()? {
        Some(row) => Ok(Some(ContextMessage {
            role: text(row.get_ref(0)?).unwrap_or_default(),
            content: stored_preview(row.get_ref(1)?),
            is_hit: false,
        })),
        None => Ok(None),
    }
}
