//! How far a gated FTS backfill has come (`schema-v23.md` §6.2): the
//! original's `fts_rebuild_status` / `fts_cjk_rebuild_status`, read from the
//! high-water and progress keys of `state_meta` as the original reads them
//! (Python's `int()` of the stored value).

use hermes_state_sqlite::names::{
    CJK_HIGH_WATER_KEY, CJK_PROGRESS_KEY, REBUILD_HIGH_WATER_KEY, REBUILD_PROGRESS_KEY,
};
use hermes_state_types::pyrepr::str_repr;
use hermes_state_types::pyvalue::{self, Int};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;
use serde_json::Value;

use crate::error::{QueryContext, QueryError};
use crate::values::text;

/// Which gated backfill: the base and trigram indexes, or the CJK index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backfill {
    /// `fts_rebuild_high_water` / `fts_rebuild_progress`.
    Base,
    /// `fts_cjk_rebuild_high_water` / `fts_cjk_rebuild_progress`.
    Cjk,
}

impl Backfill {
    /// Its high-water and progress keys.
    pub fn keys(self) -> (&'static str, &'static str) {
        match self {
            Backfill::Base => (REBUILD_HIGH_WATER_KEY, REBUILD_PROGRESS_KEY),
            Backfill::Cjk => (CJK_HIGH_WATER_KEY, CJK_PROGRESS_KEY),
        }
    }
}

/// A pending backfill's progress, serialised as the original's dict
/// `{"pending": true, "total", "indexed", "percent"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RebuildStatus {
    /// Always `true` (the original's key).
    pub pending: bool,
    /// The high-water mark: the largest message id the backfill covers.
    pub total: i64,
    /// The progress mark: the largest id backfilled so far.
    pub indexed: i64,
    /// `100 × indexed / total`, truncated toward zero, at most 100.
    pub percent: i64,
}

impl RebuildStatus {
    /// The status of marks `high_water` and `progress`: `None` when
    /// `high_water` is not positive (the original reports no backfill then).
    pub fn of(high_water: i64, progress: i64) -> Option<RebuildStatus> {
        if high_water <= 0 {
            return None;
        }
        // Python's true division, then int(): truncation toward zero.
        let ratio = (100 * i128::from(progress)) as f64 / high_water as f64;
        Some(RebuildStatus {
            pending: true,
            total: high_water,
            indexed: progress,
            percent: (ratio.trunc() as i64).min(100),
        })
    }
}

/// The status of a backfill: `None` when its high-water key is absent (or
/// the store has no `state_meta`) or not positive. A missing or empty
/// progress counts as 0. A stored value Python's `int()` refuses is the
/// original's `ValueError` ([`QueryError::ValueError`]).
pub fn rebuild_status(
    conn: &Connection,
    backfill: Backfill,
) -> Result<Option<RebuildStatus>, QueryError> {
    let (high_key, progress_key) = backfill.keys();
    let Some(high_water) = mark(conn, high_key, false)? else {
        return Ok(None);
    };
    let progress = mark(conn, progress_key, true)?.unwrap_or(0);
    Ok(RebuildStatus::of(high_water, progress))
}

/// A backfill mark as the original reads it: `None` when absent or NULL
/// (and, with `empty_is_absent`, an empty text: the progress key's `or 0`),
/// else Python's `int()` of the value.
pub fn mark(
    conn: &Connection,
    key: &str,
    empty_is_absent: bool,
) -> Result<Option<i64>, QueryError> {
    const WHAT: &str = "reading the FTS backfill marks";
    if !hermes_state_sqlite::catalog::object_exists(conn, "table", "state_meta")? {
        return Ok(None);
    }
    let value = conn
        .prepare_cached("SELECT value FROM state_meta WHERE key = ?1")
        .context(WHAT)?
        .query_row([key], |row| {
            Ok(match row.get_ref(0)? {
                ValueRef::Null => None,
                ValueRef::Integer(i) => Some(Value::from(i)),
                ValueRef::Real(f) => Some(Value::from(f)),
                other => Some(Value::String(text(other).unwrap_or_default())),
            })
        })
        .optional()
        .context(WHAT)?
        .flatten();
    let Some(value) = value else {
        return Ok(None);
    };
    if empty_is_absent && value.as_str() == Some("") {
        return Ok(None);
    }
    match pyvalue::to_int(&value) {
        Int::Value(i) => Ok(Some(i)),
        _ => Err(QueryError::ValueError(format!(
            "invalid literal for int() with base 10: {}",
            str_repr(&pyvalue::to_str(&value))
        ))),
    }
}
