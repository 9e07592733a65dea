//! Export and import on PostgreSQL: the contract's codecs
//! (`hermes_state_core::export`) over this crate's read snapshot
//! ([`ExportSnapshot`], the `ExportSource`) and its import transaction
//! ([`PgStore::import_rows`], the `ImportSink`), with the same signatures as
//! the SQLite store's methods of the same names.
//!
//! The lines and shapes are the contract crate's, so both backends write
//! the same bytes for the same store and read a file alike. An import on
//! PostgreSQL is all or nothing: the whole file is read and checked first
//! (a bad line is an error and nothing is written), then written in one
//! transaction, so memory holds the file's rows while it is written.

use std::io::{BufRead, Write};
use std::ops::ControlFlow;

use hermes_state_core::cleanup::SessionsImportReport;
use hermes_state_core::export::{
    self as codec, BatchLimits, ExportFilter, ExportPart, ExportSummary, ImportOptions,
    ImportOutcome, ImportReport, ImportRow, ImportSink, LineageExport, SessionExport,
    TargetColumns,
};
use hermes_state_core::store::Lineage;
use hermes_state_core::{Error, Result};
use hermes_state_types::Message;

use crate::PgStore;
use crate::export::ExportSnapshot;
use hermes_state_core::store::Exchange;

/// The import's writer: every row in one transaction.
struct PgSink<'a>(&'a PgStore);

impl ImportSink for PgSink<'_> {
    fn begin(&mut self) -> Result<TargetColumns> {
        if self.0.is_read_only() {
            return Err(Error::ReadOnly("importing sessions".to_owned()));
        }
        let names = |table| Ok::<_, Error>(self.0.table_columns(table)?.into_iter().collect());
        Ok(TargetColumns {
            sessions: names("sessions")?,
            messages: names("messages")?,
        })
    }

    fn batch_limits(&self) -> Option<BatchLimits> {
        None
    }

    fn write(
        &mut self,
        rows: &[ImportRow],
        options: &ImportOptions,
        _at_boundary: bool,
    ) -> Result<ImportOutcome> {
        Ok(self.0.import_rows(rows, options.overwrite_existing)?)
    }
}

impl Exchange for PgStore {
    /// `api.md` §11.1: one session with its active messages, from one
    /// snapshot; `None` for an unknown id.
    fn export_session(&self, session_id: &str) -> Result<Option<SessionExport>> {
        self.with_export_snapshot(|snapshot| codec::export_session(snapshot, session_id))
    }

    /// `export_session_lineage`: the lineage read first, then its segments
    /// from one snapshot.
    fn export_session_lineage(&self, session_id: &str) -> Result<Option<LineageExport>> {
        let lineage = self.get_compression_lineage(session_id)?;
        self.with_export_snapshot(|snapshot| codec::export_session_lineage(snapshot, &lineage))
    }

    /// `api.md` §11.1 in parts, from one snapshot; whether the session exists.
    fn export_session_parts(
        &self,
        session_id: &str,
        each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<bool> {
        self.with_export_snapshot(|snapshot| {
            codec::export_session_parts(snapshot, session_id, each)
        })
    }

    /// `api.md` §11.2: every session with its active messages, in memory.
    fn export_all(&self, source: Option<&str>) -> Result<Vec<SessionExport>> {
        self.with_export_snapshot(|snapshot| codec::export_all(snapshot, source))
    }

    /// `api.md` §11.2, one session at a time from one snapshot.
    fn export_all_each(
        &self,
        source: Option<&str>,
        each: &mut dyn FnMut(SessionExport) -> ControlFlow<()>,
    ) -> Result<u64> {
        self.with_export_snapshot(|snapshot| codec::export_all_each(snapshot, source, each))
    }

    /// `api.md` §11.2 in parts: a session, its messages one at a time, its end.
    fn export_all_parts(
        &self,
        source: Option<&str>,
        each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<u64> {
        self.with_export_snapshot(|snapshot| codec::export_all_parts(snapshot, source, each))
    }

    /// The streaming JSONL export (`docs/EXPORT-FORMAT.md`) from one snapshot.
    fn export_jsonl(
        &self,
        writer: &mut dyn Write,
        filter: &ExportFilter,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ExportSummary> {
        self.with_export_snapshot(|snapshot: &mut ExportSnapshot<'_, '_>| {
            codec::export_jsonl(snapshot, writer, filter, self.now(), progress)
        })
    }

    /// One session's messages in id order, counted first, from one snapshot.
    fn walk_messages(
        &self,
        session_id: &str,
        include_inactive: bool,
        count: &mut dyn FnMut(u64) -> ControlFlow<()>,
        each: &mut dyn FnMut(Message) -> ControlFlow<()>,
    ) -> Result<u64> {
        self.with_export_snapshot(|snapshot| {
            codec::walk_messages(snapshot, session_id, include_inactive, count, each)
        })
    }

    /// The JSONL import: the whole file read and checked, then written in
    /// one transaction (all or nothing).
    fn import_jsonl(
        &self,
        reader: &mut dyn BufRead,
        options: &ImportOptions,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportReport> {
        codec::import_jsonl(&mut PgSink(self), reader, options, progress)
    }

    /// `import_sessions` (`api.md` §11.2), as `SessionDb::import_sessions`.
    fn import_sessions(&self, sessions: &serde_json::Value) -> Result<SessionsImportReport> {
        PgStore::import_sessions(self, sessions)
    }
}
