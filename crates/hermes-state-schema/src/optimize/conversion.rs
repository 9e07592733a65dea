//! The explicit legacy → v23 FTS storage conversion (`migrations.md` §3.3):
//! the driver that runs demote, backfill, teardown and settle, each step in
//! its own short transaction, and says whether there is work for it.

use rusqlite::Connection;

use super::backfill::backfill_to_the_end;
use super::demote::{self, Claim};
use super::gate::{self, FtsIndex};
use super::meta::meta;
use super::own_transaction::{in_own_transaction, settle, teardown_trash};
use super::progress::OptimizeProgress;
use super::refusal::{Refusal, refusal, storage_too_new};
use super::trash::{TEARDOWN_BATCH, has_trash};
use crate::ddl;
use crate::detect::{self, FtsLayout};
use crate::error::SchemaError;
use crate::fts::{CJK_HIGH_WATER_KEY, CJK_STALE_KEY, REBUILD_HIGH_WATER_KEY};
use hermes_state_sqlite::connection::has_cjk_tokenizer;

/// What [`optimize_fts_storage`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptimizeReport {
    /// Set when nothing ran, with the reason.
    pub refused: Option<Refusal>,
    /// The legacy layout was demoted by this run.
    pub demoted: bool,
    /// Base/trigram backfill chunks committed by this run.
    pub base_chunks: u32,
    /// The CJK index was reset (recreated empty, then backfilled) by this run.
    pub cjk_reset: bool,
    /// CJK backfill chunks committed by this run.
    pub cjk_chunks: u32,
    /// Trash tables dropped by this run.
    pub trash_dropped: Vec<String>,
    /// `None`: not requested; `Some(false)`: `VACUUM` failed (not fatal).
    pub vacuumed: Option<bool>,
    /// `fts_storage_version` was stamped and `schema_version` raised to 23.
    pub settled: bool,
}

impl OptimizeReport {
    /// The run was not refused (the original's `"ok"`).
    pub fn ok(&self) -> bool {
        self.refused.is_none()
    }

    /// A run that did nothing, for this reason.
    pub fn refused(reason: Refusal) -> OptimizeReport {
        OptimizeReport {
            refused: Some(reason),
            ..OptimizeReport::default()
        }
    }
}

/// Serialised as the original's summary: `{"ok": true, "vacuumed": …}`
/// (`null` when no `VACUUM` was asked for), or `{"ok": false, "reason": …}`
/// for a refused run.
impl serde::Serialize for OptimizeReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("ok", &self.ok())?;
        match self.refused {
            Some(reason) => map.serialize_entry("reason", reason.reason())?,
            None => map.serialize_entry("vacuumed", &self.vacuumed)?,
        }
        map.end()
    }
}

/// Whether [`optimize_fts_storage`] has work (`migrations.md` §3.3 "work
/// available"): the connection can write, FTS5 is present, and
/// [`work_available`].
pub fn optimize_available(conn: &Connection) -> Result<bool, SchemaError> {
    if refusal(conn)?.is_some() {
        return Ok(false);
    }
    work_available(conn)
}

/// Whether the file holds work for [`optimize_fts_storage`], asked on any
/// connection to it (a read-only one included: whether *this* handle may
/// write is the caller's question): the FTS storage is not newer than ours,
/// and the layout is legacy, or a base backfill is pending, or (this
/// connection having the CJK tokenizer) a CJK backfill or a stale CJK index
/// is pending, or a `fts_v22_trash_*` table remains.
pub fn work_available(conn: &Connection) -> Result<bool, SchemaError> {
    if storage_too_new(conn)? {
        return Ok(false);
    }
    if detect::fts_layout(conn)?.is_legacy()
        || meta(conn, REBUILD_HIGH_WATER_KEY)?.is_some()
        || has_trash(conn)?
    {
        return Ok(true);
    }
    Ok(has_cjk_tokenizer(conn)
        && (meta(conn, CJK_HIGH_WATER_KEY)?.is_some() || meta(conn, CJK_STALE_KEY)?.is_some()))
}

/// The explicit legacy → v23 FTS conversion (`migrations.md` §3.3), resumable
/// from any interruption: demote the legacy layout (or re-claim a backfill
/// whose index went missing), backfill the base/trigram indexes, reset a
/// stale or missing CJK index and backfill it (when `conn` has the
/// tokenizer), tear down the `fts_v22_trash_*` tables, `VACUUM` if asked
/// (a failure is reported, not fatal), and settle.
///
/// Never started automatically. Each step is its own short transaction;
/// `progress` is called after each one.
pub fn optimize_fts_storage(
    conn: &Connection,
    vacuum: bool,
    mut progress: impl FnMut(OptimizeProgress),
) -> Result<OptimizeReport, SchemaError> {
    let mut report = OptimizeReport {
        refused: refusal(conn)?,
        ..OptimizeReport::default()
    };
    if report.refused.is_some() {
        return Ok(report);
    }
    match in_own_transaction(conn, "demoting the legacy FTS layout", demote::claim)? {
        Claim::Demoted(high_water) => {
            report.demoted = true;
            progress(OptimizeProgress::Demoted { high_water });
        }
        Claim::Recreated(high_water) => progress(OptimizeProgress::RebuildStarted {
            index: FtsIndex::Base,
            high_water,
        }),
        Claim::Nothing => {}
    }
    report.base_chunks = backfill_to_the_end(conn, FtsIndex::Base, &mut progress)?;
    if has_cjk_tokenizer(conn) && detect::fts_layout(conn)? == FtsLayout::External {
        if cjk_needs_reset(conn)? {
            let high_water = in_own_transaction(conn, "resetting the CJK index", gate::reset_cjk)?;
            report.cjk_reset = true;
            progress(OptimizeProgress::RebuildStarted {
                index: FtsIndex::Cjk,
                high_water: high_water.unwrap_or(0),
            });
        }
        report.cjk_chunks = backfill_to_the_end(conn, FtsIndex::Cjk, &mut progress)?;
    }
    loop {
        let step = teardown_trash(conn, TEARDOWN_BATCH)?;
        let done = step.done;
        if let (true, Some(table)) = (step.dropped, &step.table) {
            report.trash_dropped.push(table.clone());
        }
        if step.table.is_some() {
            progress(OptimizeProgress::TornDown(step));
        }
        if done {
            break;
        }
    }
    if vacuum {
        let ok = conn.execute_batch("VACUUM").is_ok();
        report.vacuumed = Some(ok);
        progress(OptimizeProgress::Vacuumed { ok });
    }
    report.settled = settle(conn)?;
    progress(OptimizeProgress::Settled {
        stamped: report.settled,
    });
    Ok(report)
}

/// Whether the CJK index must be recreated before it can be backfilled:
/// marked stale, or any of its objects missing.
fn cjk_needs_reset(conn: &Connection) -> Result<bool, SchemaError> {
    if meta(conn, CJK_STALE_KEY)?.is_some()
        || !detect::object_exists(conn, "table", "messages_fts_cjk")?
        || !detect::object_exists(conn, "view", "messages_fts_cjk_src")?
    {
        return Ok(true);
    }
    for name in ddl::CJK_TRIGGER_NAMES {
        if !detect::object_exists(conn, "trigger", name)? {
            return Ok(true);
        }
    }
    Ok(false)
}
