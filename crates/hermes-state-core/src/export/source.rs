//! Every export, written once over [`ExportSource`]: the JSONL format
//! (`docs/EXPORT-FORMAT.md`) and the original's shapes (`api.md`
//! §11.1–11.2, whole or in parts). A backend reads one snapshot of its
//! store; what is written, in which order and shape, is decided here, so
//! both backends write the same bytes and hand out the same values.

use std::io::Write;
use std::ops::ControlFlow;

use hermes_state_types::stored::StoredValueRef;
use hermes_state_types::{Message, Session};

use super::lines::{LineColumns, LineWriter, header_line};
use super::{ExportFilter, ExportPart, ExportSummary, LineageExport, SessionExport};
use crate::error::{Error, Result};

/// `progress` of the JSONL export is called every this many messages.
pub const PROGRESS_EVERY: u64 = 1000;

/// One read snapshot of a store, as the exports read it: every method sees
/// the same store, whoever writes meanwhile.
///
/// Rows are handed over one at a time (`each`), so an export's memory does
/// not grow with the store. A method that hands over sessions gives the
/// snapshot back to `each`, to read the session's messages before the next.
pub trait ExportSource {
    /// The store's `schema_version` (the original's number).
    fn schema_version(&mut self) -> Result<i64>;
    /// The column names of the rows [`ExportSource::session_rows`] and
    /// [`ExportSource::message_rows`] hand over, in their order: every
    /// column of the tables.
    fn row_columns(&mut self) -> Result<(Vec<String>, Vec<String>)>;
    /// The selected sessions' rows (of `source` and among `ids`, when
    /// `Some`), values in column order, in the JSONL order: by depth in the
    /// lineage forest (roots, and sessions whose parent is missing, first),
    /// then `started_at`, then id; sessions on a parent cycle last.
    fn session_rows(
        &mut self,
        source: Option<&str>,
        ids: Option<&[String]>,
        each: &mut dyn FnMut(&mut Self, &[StoredValueRef<'_>]) -> Result<()>,
    ) -> Result<()>;
    /// Every message row of the session (inactive ones too) in id order,
    /// values in column order. `session_id` is the session row's `id` as
    /// stored.
    fn message_rows(
        &mut self,
        session_id: StoredValueRef<'_>,
        each: &mut dyn FnMut(&[StoredValueRef<'_>]) -> Result<()>,
    ) -> Result<()>;
    /// One session, `None` when unknown.
    fn session(&mut self, session_id: &str) -> Result<Option<Session>>;
    /// The sessions `export_all` returns (`api.md` §11.2: of `source` when
    /// `Some`, newest activity first, at most 100 000), each with its
    /// `last_active` and no messages yet; `each` returning `Break` stops.
    fn sessions_by_last_active(
        &mut self,
        source: Option<&str>,
        each: &mut dyn FnMut(&mut Self, SessionExport) -> Result<ControlFlow<()>>,
    ) -> Result<()>;
    /// The number of messages [`ExportSource::messages`] hands over.
    fn count_messages(&mut self, session_id: &str, include_inactive: bool) -> Result<u64>;
    /// A session's messages (the active ones, all with `include_inactive`)
    /// in id order, decoded as `get_messages` returns them; `each`
    /// returning `Break` stops. Returns how many were handed over.
    fn messages(
        &mut self,
        session_id: &str,
        include_inactive: bool,
        each: &mut dyn FnMut(Message) -> ControlFlow<()>,
    ) -> Result<u64>;
}

/// Writes the selected sessions with all their messages as JSONL
/// (`docs/EXPORT-FORMAT.md`), streamed: memory holds one row at a time.
/// `progress` gets the number of messages written, every
/// [`PROGRESS_EVERY`] and once at the end.
pub fn export_jsonl<S: ExportSource + ?Sized, W: Write>(
    snapshot: &mut S,
    writer: W,
    filter: &ExportFilter,
    exported_at: f64,
    progress: &mut dyn FnMut(u64),
) -> Result<ExportSummary> {
    let mut out = LineWriter::new(writer);
    out.line(&header_line(snapshot.schema_version()?, exported_at))?;
    let (session_names, message_names) = snapshot.row_columns()?;
    let session_columns = LineColumns::new(session_names.iter().map(String::as_str), None);
    let message_columns =
        LineColumns::new(message_names.iter().map(String::as_str), Some("content"));
    let id_at = session_names
        .iter()
        .position(|name| name == "id")
        .ok_or_else(|| Error::InvalidInput("the sessions table has no id column".to_owned()))?;
    let source = filter.source.as_deref().filter(|s| !s.is_empty());
    let mut summary = ExportSummary::default();
    snapshot.session_rows(
        source,
        filter.session_ids.as_deref(),
        &mut |snapshot, row| {
            out.line(&session_columns.line("session", row.iter().copied()))?;
            summary.sessions += 1;
            snapshot.message_rows(row[id_at], &mut |message| {
                out.line(&message_columns.line("message", message.iter().copied()))?;
                summary.messages += 1;
                if summary.messages.is_multiple_of(PROGRESS_EVERY) {
                    progress(summary.messages);
                }
                Ok(())
            })
        },
    )?;
    out.finish(summary, progress)
}

/// `api.md` §11.1: one session with its active messages, `None` for an
/// unknown id.
pub fn export_session<S: ExportSource + ?Sized>(
    snapshot: &mut S,
    session_id: &str,
) -> Result<Option<SessionExport>> {
    let Some(session) = snapshot.session(session_id)? else {
        return Ok(None);
    };
    let messages = active_messages(snapshot, session_id)?;
    Ok(Some(SessionExport {
        session,
        last_active: None,
        messages,
    }))
}

/// `export_session_lineage`: each session of `lineage` (the compression
/// lineage, root first, as read by the caller) exported as by
/// [`export_session`]; `None` when none exists.
pub fn export_session_lineage<S: ExportSource + ?Sized>(
    snapshot: &mut S,
    lineage: &[String],
) -> Result<Option<LineageExport>> {
    let mut segments = Vec::with_capacity(lineage.len());
    for id in lineage {
        segments.extend(export_session(snapshot, id)?);
    }
    Ok(LineageExport::of(segments))
}

/// `api.md` §11.2: every session (of `source` when given and non-empty)
/// with its last activity and active messages, one at a time: `each`
/// returning `Break` stops. Returns the number of sessions handed over.
pub fn export_all_each<S: ExportSource + ?Sized>(
    snapshot: &mut S,
    source: Option<&str>,
    mut each: impl FnMut(SessionExport) -> ControlFlow<()>,
) -> Result<u64> {
    let mut handed = 0;
    snapshot.sessions_by_last_active(
        source.filter(|s| !s.is_empty()),
        &mut |snapshot, mut export| {
            export.messages = active_messages(snapshot, &export.session.id)?;
            handed += 1;
            Ok(each(export))
        },
    )?;
    Ok(handed)
}

/// `api.md` §11.2 whole: what [`export_all_each`] hands over, in one `Vec`
/// (as the original holds it).
pub fn export_all<S: ExportSource + ?Sized>(
    snapshot: &mut S,
    source: Option<&str>,
) -> Result<Vec<SessionExport>> {
    let mut all = Vec::new();
    export_all_each(snapshot, source, |export| {
        all.push(export);
        ControlFlow::Continue(())
    })?;
    Ok(all)
}

/// What [`export_all_each`] hands over, in parts: for each session
/// [`ExportPart::Session`], its messages one [`ExportPart::Message`] at a
/// time, [`ExportPart::SessionEnd`]; memory holds one session row and one
/// message. Returns the number of sessions started.
pub fn export_all_parts<S: ExportSource + ?Sized>(
    snapshot: &mut S,
    source: Option<&str>,
    mut each: impl FnMut(ExportPart) -> ControlFlow<()>,
) -> Result<u64> {
    let mut started = 0;
    snapshot.sessions_by_last_active(
        source.filter(|s| !s.is_empty()),
        &mut |snapshot, export| {
            started += 1;
            walk_session(snapshot, export, &mut each)
        },
    )?;
    Ok(started)
}

/// What [`export_session`] returns, in parts (see [`export_all_parts`]);
/// `false`, and no part, for an unknown session.
pub fn export_session_parts<S: ExportSource + ?Sized>(
    snapshot: &mut S,
    session_id: &str,
    mut each: impl FnMut(ExportPart) -> ControlFlow<()>,
) -> Result<bool> {
    let Some(session) = snapshot.session(session_id)? else {
        return Ok(false);
    };
    let export = SessionExport {
        session,
        last_active: None,
        messages: Vec::new(),
    };
    // A Break only ends this one session early.
    let _ = walk_session(snapshot, export, &mut each)?;
    Ok(true)
}

/// `count` gets the number of the session's messages (inactive ones with
/// `include_inactive`), then `each` those messages in id order, one at a
/// time: the count and the messages agree. Either returning `Break` stops.
/// Returns the number of messages handed to `each`.
pub fn walk_messages<S: ExportSource + ?Sized>(
    snapshot: &mut S,
    session_id: &str,
    include_inactive: bool,
    count: impl FnOnce(u64) -> ControlFlow<()>,
    mut each: impl FnMut(Message) -> ControlFlow<()>,
) -> Result<u64> {
    let total = snapshot.count_messages(session_id, include_inactive)?;
    if count(total).is_break() {
        return Ok(0);
    }
    snapshot.messages(session_id, include_inactive, &mut each)
}

/// A session's active messages, decoded.
fn active_messages<S: ExportSource + ?Sized>(
    snapshot: &mut S,
    session_id: &str,
) -> Result<Vec<Message>> {
    let mut messages = Vec::new();
    snapshot.messages(session_id, false, &mut |message| {
        messages.push(message);
        ControlFlow::Continue(())
    })?;
    Ok(messages)
}

/// Hands over one session, its messages and its end; `Break` when `each`
/// stopped the walk.
fn walk_session<S: ExportSource + ?Sized>(
    snapshot: &mut S,
    export: SessionExport,
    each: &mut impl FnMut(ExportPart) -> ControlFlow<()>,
) -> Result<ControlFlow<()>> {
    let id = export.session.id.clone();
    if each(ExportPart::Session(export)).is_break() {
        return Ok(ControlFlow::Break(()));
    }
    let mut stopped = false;
    snapshot.messages(&id, false, &mut |message| {
        let flow = each(ExportPart::Message(message));
        stopped = flow.is_break();
        flow
    })?;
    if stopped {
        return Ok(ControlFlow::Break(()));
    }
    Ok(each(ExportPart::SessionEnd))
}
