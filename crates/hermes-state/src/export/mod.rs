//! Export and import on SQLite.
//!
//! Two shapes, both written once in the contract crate
//! (`hermes_state_core::export`) over a backend's read snapshot and writer:
//! * the original's `export_session` / `export_all` (`api.md` §11.1–11.2): a
//!   session row with its active messages, decoded as `get_messages` does;
//! * a streaming, versioned JSONL format (`docs/EXPORT-FORMAT.md`) that holds
//!   every column of every selected session and message, is written from one
//!   read snapshot with bounded memory, and imports back losslessly:
//!   export → import into an empty store → export gives the same bytes (header
//!   time aside).
//!
//! Here are SQLite's halves: [`snapshot::Snapshot`], one read transaction
//! as an `ExportSource`, and [`import::SqliteSink`], the import written in
//! short transactions through the write path.

mod import;
mod snapshot;

use std::io::{BufRead, Write};
use std::ops::ControlFlow;

pub use hermes_state_core::cleanup::original_json_to_jsonl;
use hermes_state_core::export as codec;
pub use hermes_state_core::export::{
    EXPORT_FORMAT, EXPORT_FORMAT_VERSION, ExportFilter, ExportPart, ExportSummary,
    IMPORT_LINE_LIMIT, ImportOptions, ImportReport, LineageExport, OriginalJsonWriter,
    SessionExport,
};
use hermes_state_types::Message;
use rusqlite::Connection;

use crate::cleanup::import::write;
use crate::db::SessionDb;
use crate::error::{Result, WriteContext};
use hermes_state_core::cleanup::SessionsImport;
use hermes_state_core::cleanup::SessionsImportReport;
use hermes_state_core::cleanup::plan_sessions_import;
use hermes_state_core::store::Exchange;
use snapshot::Snapshot;

impl SessionDb {
    /// Calls `each` with what [`SessionDb::export_all`] would return, one
    /// session at a time, in the same order and from one read snapshot:
    /// memory is bounded by the largest session, not by the store (the
    /// CLI's default `export` writes the sessions out one by one).
    ///
    /// `each` returning [`ControlFlow::Break`] stops the walk (e.g. when the
    /// output failed). Returns the number of sessions handed to `each`.
    pub fn export_all_each(
        &self,
        source: Option<&str>,
        each: impl FnMut(SessionExport) -> ControlFlow<()>,
    ) -> Result<u64> {
        self.in_snapshot(|snapshot| codec::export_all_each(snapshot, source, each))
    }

    /// What [`SessionDb::export_all`] returns, in parts: for each session in
    /// the same order, [`ExportPart::Session`], its messages one
    /// [`ExportPart::Message`] at a time, [`ExportPart::SessionEnd`]. One read
    /// snapshot; sessions and messages are read as the walk goes, so memory
    /// holds one session row and one message (a writer of the JSON document
    /// needs no more, even for a session of 100 000 messages). `each`
    /// returning [`ControlFlow::Break`] stops the walk. Returns the number of
    /// sessions started.
    pub fn export_all_parts(
        &self,
        source: Option<&str>,
        each: impl FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<u64> {
        self.in_snapshot(|snapshot| codec::export_all_parts(snapshot, source, each))
    }

    /// What [`SessionDb::export_session`] returns, in parts (see
    /// [`SessionDb::export_all_parts`]); `false`, and no part, for an unknown
    /// session.
    pub fn export_session_parts(
        &self,
        session_id: &str,
        each: impl FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<bool> {
        self.in_snapshot(|snapshot| codec::export_session_parts(snapshot, session_id, each))
    }

    /// Calls `count` with the number of messages of the session
    /// [`SessionDb::get_messages_page`](hermes_state_core::store::Messages::get_messages_page) would return (all pages; inactive ones
    /// with `include_inactive`), then `each` with those messages in id order,
    /// one at a time, all from one read snapshot: the count and the messages
    /// agree, and memory holds one message at a time (what a writer of a
    /// single conversation, the CLI's Markdown export, needs). `count` or
    /// `each` returning [`ControlFlow::Break`] stops the walk. Returns the
    /// number of messages handed to `each`. An unknown session has no messages.
    pub fn walk_messages(
        &self,
        session_id: &str,
        include_inactive: bool,
        count: impl FnOnce(u64) -> ControlFlow<()>,
        each: impl FnMut(Message) -> ControlFlow<()>,
    ) -> Result<u64> {
        self.in_snapshot(|snapshot| {
            codec::walk_messages(snapshot, session_id, include_inactive, count, each)
        })
    }

    /// Writes the selected sessions with all their messages (inactive ones
    /// included) as JSONL, in the format of `docs/EXPORT-FORMAT.md`.
    ///
    /// Everything is read from one snapshot (one read transaction on a
    /// dedicated read-only connection, so the handle stays free for writes
    /// meanwhile) and streamed row by row: memory does not grow with the size
    /// of the store. Parents come before their children. `progress` is called
    /// with the number of messages written so far, every 1000 messages and
    /// once at the end. The writer is buffered internally.
    ///
    /// In a store in rollback-journal (DELETE) mode the snapshot holds a
    /// shared lock: writers wait until the export ends.
    pub fn export_jsonl<W: Write>(
        &self,
        writer: W,
        filter: &ExportFilter,
        mut progress: impl FnMut(u64),
    ) -> Result<ExportSummary> {
        self.read(|_| Ok(()))?;
        let conn = hermes_state_schema::open_read_only(self.path())?;
        // Files of older versions are exported as they are, in the v23 shape.
        hermes_state_query::compat::adapt(&conn)?;
        in_read_transaction(&conn, |conn| {
            codec::export_jsonl(
                &mut Snapshot(conn),
                writer,
                filter,
                self.now(),
                &mut progress,
            )
        })
    }

    /// Imports a JSONL export (`docs/EXPORT-FORMAT.md`) into this store.
    ///
    /// The header is checked first: another format or version fails with
    /// [`crate::ErrorKind::InvalidInput`] and nothing is written. Sessions are
    /// written in file order (parents first), in transactions of at most 500
    /// sessions or about 10 000 messages, so a huge import never holds the
    /// write lock for long; the FTS indexes follow through the triggers.
    ///
    /// * Existing sessions are reported in `skipped_existing` and left alone,
    ///   or, with `overwrite_existing`, replaced (row updated in place, its
    ///   messages deleted and re-imported; usage rows kept).
    /// * Rows keep every exported column, counters included. Message ids are
    ///   kept when free in this store (always, into an empty store); from the
    ///   first taken id on, a session's further messages get new ids, so its
    ///   order is kept.
    /// * A parent that is missing → `parent_session_id` NULL, reported in
    ///   `orphaned`. A title held by another session → imported untitled,
    ///   reported in `title_conflicts`.
    ///
    /// A malformed line, a truncated file (no end line, or counts that do not
    /// match it) or a failed write stops the import with an error. Batches
    /// committed before stay; a new session whose messages spanned committed
    /// batches is removed again, so every session left is complete. `progress`
    /// gets the number of messages written after each transaction.
    pub fn import_jsonl<R: BufRead>(
        &self,
        reader: R,
        options: &ImportOptions,
        mut progress: impl FnMut(u64),
    ) -> Result<ImportReport> {
        codec::import_jsonl(
            &mut import::SqliteSink::new(self),
            reader,
            options,
            &mut progress,
        )
    }

    /// Runs `read` on one read snapshot of a pooled connection.
    fn in_snapshot<T>(&self, read: impl FnOnce(&mut Snapshot<'_>) -> Result<T>) -> Result<T> {
        self.read(|conn| in_read_transaction(conn, |conn| read(&mut Snapshot(conn))))
    }
}

/// Runs `read` inside `BEGIN DEFERRED … COMMIT`, so its statements share one snapshot.
fn in_read_transaction<T>(
    conn: &Connection,
    read: impl FnOnce(&Connection) -> Result<T>,
) -> Result<T> {
    conn.execute_batch("BEGIN DEFERRED")
        .context("starting a read transaction")?;
    let result = read(conn);
    let _ = conn.execute_batch(if result.is_ok() { "COMMIT" } else { "ROLLBACK" });
    result
}

impl Exchange for SessionDb {
    /// `api.md` §11.1 in parts: see the generic inherent method.
    fn export_session_parts(
        &self,
        session_id: &str,
        each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<bool> {
        SessionDb::export_session_parts(self, session_id, each)
    }

    /// `api.md` §11.2, one session at a time: see the generic inherent method.
    fn export_all_each(
        &self,
        source: Option<&str>,
        each: &mut dyn FnMut(SessionExport) -> ControlFlow<()>,
    ) -> Result<u64> {
        SessionDb::export_all_each(self, source, each)
    }

    /// `api.md` §11.2 in parts: see the generic inherent method.
    fn export_all_parts(
        &self,
        source: Option<&str>,
        each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<u64> {
        SessionDb::export_all_parts(self, source, each)
    }

    /// The streaming JSONL export: see the generic inherent method.
    fn export_jsonl(
        &self,
        writer: &mut dyn Write,
        filter: &ExportFilter,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ExportSummary> {
        SessionDb::export_jsonl(self, writer, filter, progress)
    }

    /// One session's messages, counted first: see the generic inherent method.
    fn walk_messages(
        &self,
        session_id: &str,
        include_inactive: bool,
        count: &mut dyn FnMut(u64) -> ControlFlow<()>,
        each: &mut dyn FnMut(Message) -> ControlFlow<()>,
    ) -> Result<u64> {
        SessionDb::walk_messages(self, session_id, include_inactive, count, each)
    }

    /// The JSONL import: see the generic inherent method.
    fn import_jsonl(
        &self,
        reader: &mut dyn BufRead,
        options: &ImportOptions,
        progress: &mut dyn FnMut(u64),
    ) -> Result<ImportReport> {
        SessionDb::import_jsonl(self, reader, options, progress)
    }

    /// Restores sessions from the original's export shape (`api.md` §11.2):
    /// a JSON list of session objects with their `messages`, as
    /// `export_session` / `export_all` give them, as the original does.
    ///
    /// First every session is checked; any refused session gives a report
    /// with `ok` false listing each one (`{index, session_id, error}`, the
    /// original's texts) and nothing is written. A session is refused when
    /// it is not an object; its id is missing or falsy (`session id is
    /// required`) or repeats an accepted one; `messages` is truthy but not a
    /// list of objects; it exceeds 10 000 messages or 5 MiB of compact JSON,
    /// or the import 50 000 messages or 25 MiB; `model_config` is neither
    /// null, an object, nor JSON text of an object; `parent_session_id` or
    /// a text column (`source`, `title`, ...) is neither text nor null; a
    /// message's `role` is not non-empty text, another text field neither
    /// text nor null, or `token_count` not an integer (`int()`: `"3"` and
    /// `3.7` are).
    ///
    /// Then, in one write transaction, in payload order: an id the store
    /// has is skipped; a new session is written with the original's columns
    /// and coercions — the id as `str(id).strip()`, `source` `import` when
    /// empty, `started_at` now when absent or not a number (`float()`:
    /// numeric text counts), counters by `int()` (0 when not integers),
    /// `archived` by truth, `message_count`/`tool_call_count` from its
    /// messages; every other column (gateway, handoff, compression state,
    /// pinned, ...) keeps its default. Its messages get new ids in list
    /// order, as fresh active rows (a message without a usable time gets
    /// the clock, each next one a microsecond later). Parents are linked
    /// last, when the parent exists and the link closes no cycle
    /// (`hermes_state_query::import_links`); otherwise the session counts
    /// as `detached`.
    ///
    /// Errors (nothing written): a payload that is not a list (`sessions
    /// must be a list`) or holds more than 500 sessions (`sessions must
    /// contain at most 500 entries`), [`crate::ErrorKind::InvalidInput`]; a
    /// written session whose title another session holds, or whose
    /// `started_at` or a message time is NaN, [`crate::ErrorKind::Constraint`]
    /// (the original's `IntegrityError`); a written session with an integer
    /// beyond 64 bits (`Python int too large to convert to SQLite INTEGER`),
    /// `InvalidInput`; a read-only handle; a failed write.
    fn import_sessions(&self, sessions: &serde_json::Value) -> Result<SessionsImportReport> {
        let prepared = match plan_sessions_import(sessions, self.now())? {
            SessionsImport::Write(prepared) => prepared,
            SessionsImport::Refused(report) => return Ok(report),
        };
        self.write("importing sessions", |conn| write(conn, &prepared))
    }

    /// One session with its active messages (`api.md` §11.1), `None` for an
    /// unknown id. Read in one transaction.
    fn export_session(&self, session_id: &str) -> Result<Option<SessionExport>> {
        self.in_snapshot(|snapshot| codec::export_session(snapshot, session_id))
    }

    /// A compression lineage as one logical session
    /// (`export_session_lineage`): every session of
    /// [`SessionDb::get_compression_lineage`](hermes_state_core::store::Lineage::get_compression_lineage) exported as by
    /// [`SessionDb::export_session`]; `None` for an unknown id. Read in one
    /// transaction.
    fn export_session_lineage(&self, session_id: &str) -> Result<Option<LineageExport>> {
        self.in_snapshot(|snapshot| {
            let lineage =
                hermes_state_query::lookups::get_compression_lineage(snapshot.0, session_id)?;
            codec::export_session_lineage(snapshot, &lineage)
        })
    }

    /// Every session (at most 100 000, of `source` when given and non-empty)
    /// with its last activity and active messages, newest activity first
    /// (`api.md` §11.2, the order of `search_sessions`). Read in one
    /// transaction; everything is held in memory, as in the original: use
    /// [`SessionDb::export_all_each`] for the same sessions one at a time, or
    /// [`SessionDb::export_jsonl`] for the lossless format.
    fn export_all(&self, source: Option<&str>) -> Result<Vec<SessionExport>> {
        self.in_snapshot(|snapshot| codec::export_all(snapshot, source))
    }
}
