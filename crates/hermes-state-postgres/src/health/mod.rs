//! `PgStore::doctor`: the health check of a PostgreSQL store, and the one
//! repair it offers (`PgStore::repair_counters`).
//!
//! What SQLite's doctor checks that makes sense on a server: the store's
//! migration ledger against the steps this build knows (a newer store is
//! said to be newer), every v23 table, column, key and index (the generated
//! `tsvector` and its GIN index included; the optional trigram index
//! present or why not), the per-session counters against the rows (with the
//! SQLite doctor's "counted by the old rule" distinction, since a store
//! moved from a file keeps the file's counters), messages of missing
//! sessions, parents that do not exist, lineage cycles, duplicate titles,
//! and the `superseded_by` marker of a store that was moved away. What
//! PostgreSQL guards itself (page checksums, `PRAGMA integrity_check`'s
//! role) and what it has no counterpart for (FTS5 tables) is not checked.
//!
//! The doctor only reads: everything runs in one read-only
//! `REPEATABLE READ` transaction, so the counters and the rows are compared
//! in one snapshot even while other hosts write, and the server refuses any
//! write that could slip in.

mod catalog;
mod rows;

use hermes_state_core::health::{
    CounterMismatch, DanglingParent, DuplicateTitle, LineageCycle, OrphanedMessages,
};
use postgres::IsolationLevel;
use serde::Serialize;

use crate::PgStore;
use crate::error::{Context, Result};
use crate::tls::ConnectionSecurity;

/// The `state_meta` key naming where a moved store went (the facade's
/// `SUPERSEDED_BY`; written by `migrate-to` in either direction).
const SUPERSEDED_BY: &str = "superseded_by";
/// The `state_meta` key saying when it moved (Unix seconds).
const SUPERSEDED_AT: &str = "superseded_at";

/// The store's migration steps against this build's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SchemaSteps {
    /// The newest step recorded in `refinery_schema_history`.
    pub applied: Option<i64>,
    /// The newest step this build has.
    pub known: i64,
    /// Steps this build has, at or below [`SchemaSteps::applied`], that the
    /// ledger does not record.
    pub missing: Vec<i64>,
    /// Recorded steps whose name or checksum differ from this build's, as
    /// `"<version> <name>"`.
    pub divergent: Vec<String>,
    /// The rows of `schema_version` (the SQLite version the data model
    /// matches): exactly `[23]` in a healthy store.
    pub data_model: Vec<i64>,
}

impl SchemaSteps {
    /// The store was written by a newer release: its ledger records steps
    /// this build does not know (a fact, not damage; the checks of objects
    /// compare against what this build knows).
    pub fn too_new(&self) -> bool {
        self.applied.is_some_and(|applied| applied > self.known)
    }

    fn problem_count(&self) -> usize {
        self.missing.len()
            + self.divergent.len()
            + usize::from(self.data_model != [hermes_state_types::SCHEMA_VERSION])
    }
}

/// The optional trigram index (substring and CJK search).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum TrigramIndex {
    /// `idx_messages_content_trgm` exists.
    Present,
    /// It does not, for the reason given (substring search scans meanwhile).
    Absent(String),
}

/// Where and when the store was moved (`migrate-to`): what it holds is the
/// state at the move.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Superseded {
    /// The target, as the marker names it (never with a password).
    pub by: String,
    /// When, in Unix seconds, if the marker says.
    pub at: Option<f64>,
}

/// What the doctor found in a PostgreSQL store.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PgDoctorReport {
    /// The store's PostgreSQL schema.
    pub schema: String,
    /// Migration steps and the data model's version.
    pub steps: SchemaSteps,
    /// v23 objects that are missing: `"table <t>"`, `"column <t>.<c>"`,
    /// `"index <name>"`, `"primary key <t> (<cols>)"`,
    /// `"foreign key <t> (<col>) -> <t>"`.
    pub missing: Vec<String>,
    /// Objects that exist but are not what the store needs (an index of the
    /// wrong kind or left invalid, `search_vector` not a generated tsvector).
    pub wrong: Vec<String>,
    /// The optional trigram index.
    pub trigram: TrigramIndex,
    /// Sessions whose counters differ from their rows (those counted by the
    /// old rule included, marked; they are not problems).
    pub counters: Vec<CounterMismatch>,
    /// Sessions naming a missing parent.
    pub dangling_parents: Vec<DanglingParent>,
    /// Messages of missing sessions.
    pub orphaned_messages: Vec<OrphanedMessages>,
    /// Parent-link cycles (each closed at its oldest member).
    pub cycles: Vec<LineageCycle>,
    /// Titles held by several sessions (holders by `started_at`, then id).
    pub duplicate_titles: Vec<DuplicateTitle>,
    /// Why the row checks were not run (the tables they read are damaged).
    pub rows_skipped: Option<String>,
    /// The marker of a store that was moved away.
    pub superseded: Option<Superseded>,
    /// How the doctor's connection was secured (TLS, what was verified):
    /// a fact about the way to the server, never a problem of the store.
    pub connection: ConnectionSecurity,
}

impl PgDoctorReport {
    /// No problem found (notes — a newer store, no trigram index, counters
    /// of the old rule, a moved store — do not count).
    pub fn is_healthy(&self) -> bool {
        self.problem_count() == 0
    }

    /// How many problems were found.
    pub fn problem_count(&self) -> usize {
        self.steps.problem_count()
            + self.missing.len()
            + self.wrong.len()
            + self
                .counters
                .iter()
                .filter(|c| !c.counted_by_old_rule)
                .count()
            + self.dangling_parents.len()
            + self.orphaned_messages.len()
            + self.cycles.len()
            + self.duplicate_titles.len()
            + usize::from(self.rows_skipped.is_some())
    }
}

impl PgStore {
    /// Checks the store without changing it (see the module documentation):
    /// one read-only `REPEATABLE READ` transaction, on a read-only or a
    /// writable handle alike.
    pub fn doctor(&self) -> Result<PgDoctorReport> {
        let schema = self.url().schema().to_owned();
        let plan = self.url().tls_plan()?;
        let mut client = self.pool.get()?;
        let mut tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .context("starting the doctor's snapshot")?;
        let connection = crate::tls::connection_security(&mut tx, &plan)?;
        let catalog = catalog::check(&mut tx, &schema)?;
        let mut report = PgDoctorReport {
            schema,
            steps: catalog.steps,
            missing: catalog.missing,
            wrong: catalog.wrong,
            trigram: catalog.trigram,
            counters: Vec::new(),
            dangling_parents: Vec::new(),
            orphaned_messages: Vec::new(),
            cycles: Vec::new(),
            duplicate_titles: Vec::new(),
            rows_skipped: catalog.rows_skipped,
            superseded: None,
            connection,
        };
        if report.rows_skipped.is_none() {
            report.counters = rows::counter_mismatches(&mut tx)?;
            report.dangling_parents = rows::dangling_parents(&mut tx)?;
            report.orphaned_messages = rows::orphaned_messages(&mut tx)?;
            report.cycles = rows::lineage_cycles(&mut tx)?;
            report.duplicate_titles = rows::duplicate_titles(&mut tx)?;
        }
        if catalog.state_meta {
            report.superseded = superseded(&mut tx)?;
        }
        tx.commit().context("ending the doctor's snapshot")?;
        Ok(report)
    }

    /// The repair PostgreSQL gets: every session whose counters differ from
    /// its rows is recounted (by today's rule, those counted by the old
    /// rule included), in one write transaction under the store's writer
    /// lock; returns the sessions fixed, as they were. The other problems
    /// the doctor reports are left for a person (docs/DECISIONS.md,
    /// "doctor --repair on PostgreSQL").
    pub fn repair_counters(&self) -> Result<Vec<CounterMismatch>> {
        self.write("recounting session counters", |tx| {
            let wrong = rows::counter_mismatches(tx)?;
            for c in &wrong {
                tx.execute(
                    "UPDATE sessions SET message_count = $2, tool_call_count = $3 WHERE id = $1",
                    &[
                        &c.session_id,
                        &c.real_message_count,
                        &c.real_tool_call_count,
                    ],
                )
                .context("recounting session counters")?;
            }
            Ok(wrong)
        })
    }
}

fn superseded(tx: &mut postgres::Transaction<'_>) -> Result<Option<Superseded>> {
    let rows = tx
        .query(
            "SELECT key, value FROM state_meta WHERE key IN ($1, $2)",
            &[&SUPERSEDED_BY, &SUPERSEDED_AT],
        )
        .context("reading the move marker")?;
    let value = |key: &str| {
        rows.iter()
            .find(|row| row.get::<_, String>(0) == key)
            .and_then(|row| row.get::<_, Option<String>>(1))
    };
    Ok(value(SUPERSEDED_BY).map(|by| Superseded {
        by,
        at: value(SUPERSEDED_AT)
            .and_then(|at| at.trim().parse::<f64>().ok())
            .filter(|at| at.is_finite()),
    }))
}
