//! The `Exchange` part of the contract: export and import: the original's
//! export shapes and the streaming JSONL format (`api.md` §11.1–11.2,
//! `docs/EXPORT-FORMAT.md`).

use crate::cleanup::SessionsImportReport;
use crate::error::Result;
use crate::export::{
    ExportFilter, ExportPart, ExportSummary, ImportOptions, ImportReport, LineageExport,
    SessionExport,
};
use hermes_state_types::Message;
use serde_json::Value;
use std::io::{BufRead, Write};
use std::ops::ControlFlow;

/// Export and import: the original's export shapes and the streaming JSONL
/// format (`api.md` §11.1–11.2, `docs/EXPORT-FORMAT.md`).
///
/// Every method has the SQLite store's meaning (`api.md`); a backend that
/// cannot offer one says so with an error, never with an empty answer.
pub trait Exchange {
    /// `api.md` §11.1: one session with its active messages, from one snapshot.
    fn export_session(&self, session_id: &str) -> Result<Option<SessionExport>>;
    /// The original's `export_session_lineage`: the session's compression
    /// lineage as one logical session; `None` for an unknown id.
    fn export_session_lineage(&self, session_id: &str) -> Result<Option<LineageExport>>;
    /// `api.md` §11.1 in parts (`SessionDb::export_session_parts`).
    fn export_session_parts(
        &self,
        session_id: &str,
        each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<bool>;
    /// `api.md` §11.2: every session with its active messages.
    fn export_all(&self, source: Option<&str>) -> Result<Vec<SessionExport>>;
    /// `api.md` §11.2, one session at a time (`SessionDb::export_all_each`).
    fn export_all_each(
        &self,
        source: Option<&str>,
        each: &mut dyn FnMut(SessionExport) -> ControlFlow<()>,
    ) -> Result<u64>;
    /// `api.md` §11.2 in parts (`SessionDb::export_all_parts`).
    fn export_all_parts(
        &self,
        source: Option<&str>,
        each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<u64>;
    /// The lossless JSONL export (`docs/EXPORT-FORMAT.md`), streamed from
    /// one snapshot; the same bytes on every backend for the same store.
    fn export_jsonl(
        &self,
        writer: &mut dyn Write,
        filter: &ExportFilter,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ExportSummary>;
    /// A session's messages one at a time (`SessionDb::walk_messages`).
    fn walk_messages(
        &self,
        session_id: &str,
        include_inactive: bool,
        count: &mut dyn FnMut(u64) -> ControlFlow<()>,
        each: &mut dyn FnMut(Message) -> ControlFlow<()>,
    ) -> Result<u64>;
    /// Imports a JSONL export (`SessionDb::import_jsonl`); on PostgreSQL
    /// in one transaction.
    fn import_jsonl(
        &self,
        reader: &mut dyn BufRead,
        options: &ImportOptions,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportReport>;
    /// `api.md` §11.2: restores the original's export shape.
    fn import_sessions(&self, sessions: &Value) -> Result<SessionsImportReport>;
}
