//! The original's step-by-step FTS maintenance calls, on the same
//! `state_meta` marks this library's maintenance uses (`schema-v23.md`
//! §6.2): the status of a gated backfill, one backfill chunk at a time,
//! whether the storage optimisation has work, and that optimisation with
//! the original's summary and progress reports. SQLite only: a PostgreSQL
//! store has no FTS5 indexes (docs/POSTGRES.md).
//!
//! Each answers what the original answers on the same file state
//! (docs/DECISIONS.md, "The original's FTS maintenance calls").

use hermes_state_query::rebuild_status::{self, Backfill, RebuildStatus};
use hermes_state_schema::optimize::{
    self, CHUNK_IDS, FtsIndex, OptimizeProgress, OptimizeReport, Refusal,
};
use hermes_state_sqlite::connection::has_cjk_tokenizer;
use hermes_state_types::ErrorKind;
use serde::Serialize;

use crate::db::SessionDb;
use crate::error::Result;

/// One progress report of [`SessionDb::optimize_fts_storage_in_phases`],
/// serialised as the original's `progress_cb` dict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StoragePhase {
    /// `backfill`, `teardown`, `vacuum` or `done`.
    pub phase: &'static str,
    /// The pending backfill's percentage (base first, else CJK), else 100.
    pub percent: i64,
    /// Its progress mark, else 0.
    pub indexed: i64,
    /// Its high-water mark, else 0.
    pub total: i64,
}

impl SessionDb {
    /// The base/trigram backfill's progress (`fts_rebuild_status`): `None`
    /// when none is pending. A read.
    pub fn fts_rebuild_status(&self) -> Result<Option<RebuildStatus>> {
        self.read(|conn| Ok(rebuild_status::rebuild_status(conn, Backfill::Base)?))
    }

    /// The CJK index's backfill progress (`fts_cjk_rebuild_status`): `None`
    /// when none is pending. A read.
    pub fn fts_cjk_rebuild_status(&self) -> Result<Option<RebuildStatus>> {
        self.read(|conn| Ok(rebuild_status::rebuild_status(conn, Backfill::Cjk)?))
    }

    /// Backfills one chunk (500 ids) of a pending base/trigram backfill in
    /// one write (`fts_rebuild_step`); `true` while work remains. `false`
    /// when none is pending (nothing written), on a read-only handle, and
    /// when the last chunk finished it (the boundary sweep done and the
    /// marks deleted in the same write). A lock that outlasts the retries
    /// is `true` (try again), as the original's.
    pub fn fts_rebuild_step(&self) -> Result<bool> {
        self.backfill_step(Backfill::Base)
    }

    /// [`SessionDb::fts_rebuild_step`] for the CJK index
    /// (`fts_cjk_rebuild_step`); also `false` when this handle has no
    /// `cjk_unicode61` tokenizer (`HERMES_CJK_FTS` switched off).
    pub fn fts_cjk_rebuild_step(&self) -> Result<bool> {
        self.backfill_step(Backfill::Cjk)
    }

    fn backfill_step(&self, backfill: Backfill) -> Result<bool> {
        if self.is_read_only() {
            return Ok(false);
        }
        // Read first: a step with nothing to do writes nothing, not even
        // the upgrade a first write makes.
        let pending = self.read(|conn| {
            let tokenizer = backfill == Backfill::Base || has_cjk_tokenizer(conn);
            let (high_key, _) = backfill.keys();
            Ok(tokenizer && rebuild_status::mark(conn, high_key, false)?.is_some())
        })?;
        if !pending {
            return Ok(false);
        }
        let index = match backfill {
            Backfill::Base => FtsIndex::Base,
            Backfill::Cjk => FtsIndex::Cjk,
        };
        let step = self.write("backfilling an FTS index", |conn| {
            let (high_key, progress_key) = backfill.keys();
            let high_water = rebuild_status::mark(conn, high_key, false)?;
            let progress = rebuild_status::mark(conn, progress_key, false)?;
            // The original claims a chunk only while both marks are there,
            // and ends a backfill only at a positive high-water mark.
            let (Some(high_water), Some(progress)) = (high_water, progress) else {
                return Ok(false);
            };
            if high_water <= 0 {
                return Ok(false);
            }
            let step = optimize::in_transaction::backfill_chunk(conn, index, CHUNK_IDS)?;
            Ok(step.was_pending && !step.done && progress < high_water)
        });
        match step {
            Err(error) if error.kind() == ErrorKind::Busy => Ok(true),
            other => other,
        }
    }

    /// Whether [`SessionDb::optimize_fts_storage`] has work
    /// (`fts_optimize_available`): a legacy FTS layout, a pending base
    /// backfill, `fts_v22_trash_*` tables left, or (this handle having the
    /// CJK tokenizer) a pending CJK backfill or a stale CJK index. `false`
    /// on a read-only handle and on FTS storage newer than ours. A read.
    pub fn fts_optimize_available(&self) -> Result<bool> {
        if self.is_read_only() {
            return Ok(false);
        }
        self.read(|conn| Ok(optimize::work_available(conn)?))
    }

    /// [`SessionDb::optimize_fts_storage`] as the original's call
    /// (`optimize_fts_storage(progress_cb, vacuum)`): a read-only handle
    /// is a refused run (`{"ok": false, "reason": "read_only"}`), not an
    /// error; `on_phase` gets the original's progress reports (the phase
    /// and the pending backfill's numbers: `backfill` before and after the
    /// base backfill and after each chunk that leaves work, `teardown`
    /// before the teardown and after each of its steps, `vacuum`, `done`).
    /// The report serialises as the original's summary.
    pub fn optimize_fts_storage_in_phases(
        &self,
        vacuum: bool,
        mut on_phase: impl FnMut(StoragePhase),
    ) -> Result<OptimizeReport> {
        if self.is_read_only() {
            return Ok(OptimizeReport::refused(Refusal::ReadOnly));
        }
        let mut phases = self.read(|conn| {
            Ok(Phases {
                base: rebuild_status::rebuild_status(conn, Backfill::Base).unwrap_or(None),
                cjk: rebuild_status::rebuild_status(conn, Backfill::Cjk).unwrap_or(None),
                ..Phases::default()
            })
        })?;
        self.optimize_fts_storage(vacuum, |event| phases.follow(&event, &mut on_phase))
    }
}

/// Turns the conversion's events into the original's progress reports.
#[derive(Debug, Default)]
struct Phases {
    base: Option<RebuildStatus>,
    cjk: Option<RebuildStatus>,
    backfill_started: bool,
    base_finished: bool,
    teardown_started: bool,
}

impl Phases {
    fn report(&self, phase: &'static str) -> StoragePhase {
        match self.base.or(self.cjk) {
            Some(status) => StoragePhase {
                phase,
                percent: status.percent,
                indexed: status.indexed,
                total: status.total,
            },
            None => StoragePhase {
                phase,
                percent: 100,
                indexed: 0,
                total: 0,
            },
        }
    }

    /// The reports the original makes before the phase `upto` names, not
    /// made yet: the backfill's start, its end, the teardown's start.
    fn catch_up(&mut self, upto: &'static str, emit: &mut impl FnMut(StoragePhase)) {
        if !self.backfill_started {
            self.backfill_started = true;
            emit(self.report("backfill"));
        }
        if upto == "backfill" {
            return;
        }
        if !self.base_finished {
            self.base_finished = true;
            emit(self.report("backfill"));
        }
        if upto == "cjk" {
            return;
        }
        if !self.teardown_started {
            self.teardown_started = true;
            emit(self.report("teardown"));
        }
    }

    fn follow(&mut self, event: &OptimizeProgress, emit: &mut impl FnMut(StoragePhase)) {
        match event {
            OptimizeProgress::Demoted { high_water }
            | OptimizeProgress::RebuildStarted {
                index: FtsIndex::Base,
                high_water,
            } => self.base = RebuildStatus::of(*high_water, 0),
            OptimizeProgress::RebuildStarted { high_water, .. } => {
                self.cjk = RebuildStatus::of(*high_water, 0);
            }
            OptimizeProgress::Backfilled(step) => {
                let status = (!step.done)
                    .then(|| RebuildStatus::of(step.high_water, step.progress))
                    .flatten();
                if step.index == FtsIndex::Base {
                    self.catch_up("backfill", emit);
                    self.base = status;
                } else {
                    self.catch_up("cjk", emit);
                    self.cjk = status;
                }
                if !step.done {
                    emit(self.report("backfill"));
                }
            }
            OptimizeProgress::TornDown(step) => {
                self.catch_up("teardown", emit);
                // The original deletes a chunk in one step and drops the
                // emptied table in the next; this step may have done both.
                let steps = usize::from(step.rows_deleted > 0) + usize::from(step.dropped);
                for _ in 0..steps {
                    emit(self.report("teardown"));
                }
            }
            OptimizeProgress::Vacuumed { .. } => {
                self.catch_up("teardown", emit);
                emit(self.report("vacuum"));
            }
            OptimizeProgress::Settled { .. } => {
                self.catch_up("teardown", emit);
                emit(self.report("done"));
            }
            _ => {}
        }
    }
}
