//! The resumable background rebuild of a v23-layout file: the gated
//! backfill of every row, claimed once and continued by any later run (see
//! "One-shot `'rebuild'` or background rebuild?" in the module documentation).

use rusqlite::Connection;

use super::backfill::backfill_to_the_end;
use super::gate::FtsIndex;
use super::meta::meta;
use super::own_transaction::begin_background_rebuild;
use super::progress::OptimizeProgress;
use super::refusal::{Refusal, refusal};
use crate::detect::{self, FtsLayout};
use crate::error::SchemaError;
use crate::fts::{CJK_HIGH_WATER_KEY, REBUILD_HIGH_WATER_KEY};
use hermes_state_sqlite::connection::has_cjk_tokenizer;

/// What [`rebuild_in_background`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RebuildReport {
    /// Set when nothing ran, with the reason.
    pub refused: Option<Refusal>,
    /// A new rebuild was started; `false`: a pending one was resumed.
    pub started: bool,
    /// Base/trigram backfill chunks committed.
    pub base_chunks: u32,
    /// CJK backfill chunks committed.
    pub cjk_chunks: u32,
    /// The CJK index exists but this connection cannot tokenize it, so it was left alone.
    pub cjk_skipped: bool,
}

/// Rebuilds the FTS indexes of a v23-layout file without holding the write
/// lock for long (see the module documentation for when to prefer it over a
/// one-shot `'rebuild'`): resumes a pending gated rebuild if there is one,
/// otherwise starts one ([`begin_background_rebuild`]), then backfills chunk
/// by chunk, the base/trigram family first, then the CJK index when `conn`
/// has its tokenizer. Killed at any point, a re-run continues.
pub fn rebuild_in_background(
    conn: &Connection,
    mut progress: impl FnMut(OptimizeProgress),
) -> Result<RebuildReport, SchemaError> {
    let mut report = RebuildReport {
        refused: refusal(conn)?.or(match detect::fts_layout(conn)? {
            FtsLayout::External => None,
            FtsLayout::Absent => Some(Refusal::NoFtsIndex),
            _ => Some(Refusal::LegacyLayout),
        }),
        ..RebuildReport::default()
    };
    if report.refused.is_some() {
        return Ok(report);
    }
    let tokenizer = has_cjk_tokenizer(conn);
    let pending = meta(conn, REBUILD_HIGH_WATER_KEY)?.is_some()
        || (tokenizer && meta(conn, CJK_HIGH_WATER_KEY)?.is_some());
    if !pending && let Some(high_water) = begin_background_rebuild(conn)? {
        report.started = true;
        progress(OptimizeProgress::RebuildStarted {
            index: FtsIndex::Base,
            high_water,
        });
    }
    report.base_chunks = backfill_to_the_end(conn, FtsIndex::Base, &mut progress)?;
    if tokenizer {
        report.cjk_chunks = backfill_to_the_end(conn, FtsIndex::Cjk, &mut progress)?;
    } else {
        report.cjk_skipped = detect::object_exists(conn, "table", "messages_fts_cjk")?;
    }
    Ok(report)
}
