//! Running one step in its own short transaction.
//!
//! Every step of this module is written once, for a connection already inside
//! a write transaction ([`super::in_transaction`]). [`in_own_transaction`] is
//! the one place that wraps a step in `BEGIN IMMEDIATE … COMMIT` with the
//! write-retry policy, and the public functions below are nothing more than
//! that wrapping of a step, under the names callers without a transaction
//! of their own have always used.

use rusqlite::Connection;

use super::backfill::{self, BackfillStep};
use super::gate::{self, FtsIndex};
use super::trash::TeardownStep;
use super::{demote, settle as settling, trash};
use crate::error::SchemaError;
use hermes_state_sqlite::connection::has_cjk_tokenizer;
use hermes_state_sqlite::transaction;

/// Runs `step` in its own `BEGIN IMMEDIATE` transaction, retried on lock
/// errors with the write-retry policy (the step runs again from a rolled-back
/// state); a SQLite failure is prefixed with `what`, naming the step.
pub(super) fn in_own_transaction<T>(
    conn: &Connection,
    what: &str,
    step: impl FnMut(&Connection) -> Result<T, SchemaError>,
) -> Result<T, SchemaError> {
    transaction::immediate_with_retries(conn, step, SchemaError::kind).map_err(
        |error| match error {
            SchemaError::Sqlite(inner) => {
                SchemaError::sqlite(format!("{what}: {}", inner.context), inner.source)
            }
            other => other,
        },
    )
}

/// Demotes a legacy FTS layout in one transaction; returns the high-water
/// mark of the backfill it claimed, `None` when the layout is not legacy.
/// See [`super::in_transaction::demote_legacy`].
pub fn demote_legacy(conn: &Connection) -> Result<Option<i64>, SchemaError> {
    in_own_transaction(
        conn,
        "demoting the legacy FTS layout",
        demote::demote_legacy,
    )
}

/// Backfills one chunk of the pending base/trigram rebuild in one transaction
/// (`chunk` ids, [`super::CHUNK_IDS`] in the original). See
/// [`super::in_transaction::backfill_chunk`].
pub fn backfill_chunk(conn: &Connection, chunk: i64) -> Result<BackfillStep, SchemaError> {
    in_own_transaction(conn, "backfilling the FTS index", |conn| {
        backfill::backfill_chunk(conn, FtsIndex::Base, chunk)
    })
}

/// [`backfill_chunk`] for the CJK index (needs the tokenizer on `conn`).
pub fn cjk_backfill_chunk(conn: &Connection, chunk: i64) -> Result<BackfillStep, SchemaError> {
    in_own_transaction(conn, "backfilling the CJK index", |conn| {
        backfill::backfill_chunk(conn, FtsIndex::Cjk, chunk)
    })
}

/// Deletes up to `batch` rows of one trash table (dropping it once empty) in
/// one transaction; call until [`TeardownStep::done`]. See
/// [`super::in_transaction::teardown_trash`].
pub fn teardown_trash(conn: &Connection, batch: i64) -> Result<TeardownStep, SchemaError> {
    in_own_transaction(conn, "tearing down legacy FTS tables", |conn| {
        trash::teardown_trash(conn, batch)
    })
}

/// Final bookkeeping, in one transaction; `false` (nothing written) while the
/// conversion is unfinished. See [`super::in_transaction::settle`].
pub fn settle(conn: &Connection) -> Result<bool, SchemaError> {
    in_own_transaction(conn, "settling the FTS storage", settling::settle)
}

/// Empties the v23 indexes and claims a gated backfill of everything, in one
/// transaction; `None` when the layout is not v23. See
/// [`super::in_transaction::begin_rebuild`].
pub fn begin_background_rebuild(conn: &Connection) -> Result<Option<i64>, SchemaError> {
    // A stale CJK index stays as it is: resetting it would recreate its
    // triggers under writers that may lack the tokenizer.
    let tokenizer = has_cjk_tokenizer(conn) && crate::fts::cjk_index_live(conn)?;
    in_own_transaction(conn, "starting a background FTS rebuild", |conn| {
        gate::begin_rebuild(conn, tokenizer)
    })
}
