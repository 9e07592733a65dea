//! The exports and the JSONL import on a PostgreSQL store (feature
//! `postgres`), for the `SessionStore` seam.
//!
//! The PostgreSQL crate reads (one snapshot per export, sessions through a
//! server-side cursor, messages streamed: [`ExportSnapshot`]) and writes
//! (one transaction per import: [`PgStore::import_rows`]); the lines are
//! encoded and read here, by the same code as on SQLite ([`LineColumns`],
//! [`JsonLines`]), so both backends write the same bytes for the same store
//! and read a file alike. An import on PostgreSQL is all or nothing: the
//! whole file is read and checked first (a bad line is an error and
//! nothing is written), then written in one transaction, so memory holds
//! the file's rows while it is written.

use std::io::{BufRead, Write};
use std::ops::ControlFlow;

use hermes_state_postgres::PgStore;
use hermes_state_postgres::export::ExportSnapshot;
use hermes_state_postgres::import::ImportRow;
use hermes_state_postgres::rows::{MESSAGE_COLUMNS, SESSION_COLUMNS};
use hermes_state_types::stored::StoredValue;

use super::*;
use hermes_state_core::store::Lineage;

/// [`SessionDb::export_session`] on PostgreSQL.
pub(crate) fn export_session(store: &PgStore, session_id: &str) -> Result<Option<SessionExport>> {
    store.with_export_snapshot(|snapshot| {
        let Some(session) = snapshot.session(session_id)? else {
            return Ok(None);
        };
        let messages = active_messages(snapshot, session_id)?;
        Ok(Some(SessionExport {
            session,
            last_active: None,
            messages,
        }))
    })
}

/// [`SessionDb::export_session_lineage`] on PostgreSQL: the lineage read
/// first, then its segments from one snapshot.
pub(crate) fn export_session_lineage(
    store: &PgStore,
    session_id: &str,
) -> Result<Option<LineageExport>> {
    let lineage = store.get_compression_lineage(session_id)?;
    store.with_export_snapshot(|snapshot| {
        let mut segments = Vec::with_capacity(lineage.len());
        for id in &lineage {
            if let Some(session) = snapshot.session(id)? {
                let messages = active_messages(snapshot, id)?;
                segments.push(SessionExport {
                    session,
                    last_active: None,
                    messages,
                });
            }
        }
        Ok(LineageExport::of(segments))
    })
}

/// [`SessionDb::export_all`] on PostgreSQL.
pub(crate) fn export_all(store: &PgStore, source: Option<&str>) -> Result<Vec<SessionExport>> {
    let mut all = Vec::new();
    export_all_each(store, source, &mut |export| {
        all.push(export);
        ControlFlow::Continue(())
    })?;
    Ok(all)
}

/// [`SessionDb::export_all_each`] on PostgreSQL.
pub(crate) fn export_all_each(
    store: &PgStore,
    source: Option<&str>,
    each: &mut dyn FnMut(SessionExport) -> ControlFlow<()>,
) -> Result<u64> {
    let source = source.filter(|s| !s.is_empty());
    store.with_export_snapshot(|snapshot| {
        let mut handed = 0;
        snapshot.sessions_by_last_active(source, |snapshot, session, last_active| {
            let messages = active_messages(snapshot, &session.id)?;
            handed += 1;
            Ok::<_, Error>(each(SessionExport {
                session,
                last_active: Some(last_active),
                messages,
            }))
        })?;
        Ok(handed)
    })
}

/// [`SessionDb::export_all_parts`] on PostgreSQL.
pub(crate) fn export_all_parts(
    store: &PgStore,
    source: Option<&str>,
    each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
) -> Result<u64> {
    let source = source.filter(|s| !s.is_empty());
    store.with_export_snapshot(|snapshot| {
        let mut started = 0;
        snapshot.sessions_by_last_active(source, |snapshot, session, last_active| {
            started += 1;
            let export = SessionExport {
                session,
                last_active: Some(last_active),
                messages: Vec::new(),
            };
            walk_session(snapshot, export, each)
        })?;
        Ok(started)
    })
}

/// [`SessionDb::export_session_parts`] on PostgreSQL.
pub(crate) fn export_session_parts(
    store: &PgStore,
    session_id: &str,
    each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
) -> Result<bool> {
    store.with_export_snapshot(|snapshot| {
        let Some(session) = snapshot.session(session_id)? else {
            return Ok(false);
        };
        let export = SessionExport {
            session,
            last_active: None,
            messages: Vec::new(),
        };
        // A Break only ends this one session early.
        let _ = walk_session(snapshot, export, each)?;
        Ok(true)
    })
}

/// [`SessionDb::walk_messages`] on PostgreSQL.
pub(crate) fn walk_messages(
    store: &PgStore,
    session_id: &str,
    include_inactive: bool,
    count: &mut dyn FnMut(u64) -> ControlFlow<()>,
    each: &mut dyn FnMut(Message) -> ControlFlow<()>,
) -> Result<u64> {
    store.with_export_snapshot(|snapshot| {
        let total = snapshot.count_messages(session_id, include_inactive)?;
        if count(total).is_break() {
            return Ok(0);
        }
        snapshot.messages(session_id, include_inactive, |message| {
            Ok::<_, Error>(each(message))
        })
    })
}

/// [`SessionDb::export_jsonl`] on PostgreSQL: the same lines, from one
/// snapshot, streamed.
pub(crate) fn export_jsonl(
    store: &PgStore,
    writer: &mut dyn Write,
    filter: &ExportFilter,
    progress: &mut dyn FnMut(u64),
) -> Result<ExportSummary> {
    let session_columns = LineColumns::new(SESSION_COLUMNS, None);
    let message_columns = LineColumns::new(MESSAGE_COLUMNS, Some("content"));
    let source = filter.source.as_deref().filter(|s| !s.is_empty());
    let mut progress = progress;
    store.with_export_snapshot(|snapshot| {
        let mut out = LineWriter::new(writer);
        out.line(&header_line(snapshot.schema_version()?, store.now()))?;
        let mut summary = ExportSummary::default();
        snapshot.sessions_in_lineage_order(
            source,
            filter.session_ids.as_deref(),
            |snapshot, row| {
                out.line(&session_columns.line_of("session", row.iter().map(StoredValue::as_ref)))?;
                summary.sessions += 1;
                let Some(StoredValue::Text(id)) = row.first() else {
                    return Err(Error::InvalidInput(
                        "a session without a text id".to_owned(),
                    ));
                };
                snapshot.message_rows(id, |message| {
                    out.line(
                        &message_columns
                            .line_of("message", message.iter().map(StoredValue::as_ref)),
                    )?;
                    summary.messages += 1;
                    if summary.messages.is_multiple_of(PROGRESS_EVERY) {
                        progress(summary.messages);
                    }
                    Ok::<_, Error>(())
                })
            },
        )?;
        out.finish(summary, &mut progress)
    })
}

/// [`SessionDb::import_jsonl`] on PostgreSQL: the file is read and checked
/// whole, then written in one transaction (all or nothing).
pub(crate) fn import_jsonl(
    store: &PgStore,
    reader: &mut dyn BufRead,
    options: &ImportOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<ImportReport> {
    let mut lines = JsonLines::new(reader);
    check_header(lines.next()?)?;
    if store.is_read_only() {
        return Err(Error::ReadOnly("importing sessions".to_owned()));
    }
    let targets = TargetColumns::from_names(
        store.table_columns("sessions")?,
        store.table_columns("messages")?,
    );
    let mut dropped = BTreeSet::new();
    let mut rows = Vec::new();
    let mut current: Option<String> = None;
    let (mut sessions_seen, mut messages_seen) = (0_u64, 0_u64);
    loop {
        let Some(line) = lines.next()? else {
            return Err(Error::InvalidInput(
                "truncated export: the end line is missing".to_owned(),
            ));
        };
        let (number, mut object, _) = line.into_parts();
        let kind = match object.remove("type") {
            Some(Value::String(kind)) => kind,
            _ => return Err(invalid(number, "no \"type\"")),
        };
        match kind.as_str() {
            "session" => {
                let ImportLine::Session { id, values } =
                    session_line(&mut dropped, number, object, &targets)?
                else {
                    return Err(invalid(number, "not a session line"));
                };
                current = Some(id.clone());
                rows.push(ImportRow::Session {
                    id,
                    values: stored_values(number, values)?,
                });
                sessions_seen += 1;
            }
            "message" => {
                let ImportLine::Message { id, values } =
                    message_line(&mut dropped, number, object, &targets, current.as_deref())?
                else {
                    return Err(invalid(number, "not a message line"));
                };
                rows.push(ImportRow::Message {
                    id,
                    values: stored_values(number, values)?,
                });
                messages_seen += 1;
            }
            "end" => {
                check_end(&mut lines, number, &object, sessions_seen, messages_seen)?;
                break;
            }
            other => return Err(invalid(number, &format!("unknown line type {other:?}"))),
        }
    }
    let outcome = store.import_rows(&rows, options.overwrite_existing)?;
    progress(outcome.messages);
    Ok(ImportReport {
        imported: outcome.imported,
        replaced: outcome.replaced,
        skipped_existing: outcome.skipped,
        messages: outcome.messages,
        renumbered_messages: outcome.renumbered,
        orphaned: outcome.orphaned,
        title_conflicts: outcome.title_conflicts,
        dropped_columns: dropped.into_iter().collect(),
    })
}

/// A line's values in SQLite's storage classes; text that is not UTF-8
/// (which a damaged SQLite file may hold) has no PostgreSQL form.
fn stored_values(number: u64, values: Vec<(String, Cell)>) -> Result<Vec<(String, StoredValue)>> {
    values
        .into_iter()
        .map(|(column, cell)| {
            let value = match cell {
                Cell::Sql(SqlValue::Null) => StoredValue::Null,
                Cell::Sql(SqlValue::Integer(i)) => StoredValue::Integer(i),
                Cell::Sql(SqlValue::Real(f)) => StoredValue::Real(f),
                Cell::Sql(SqlValue::Text(text)) => StoredValue::Text(text),
                Cell::Sql(SqlValue::Blob(bytes)) => StoredValue::Blob(bytes),
                Cell::RawText(_) => {
                    return Err(invalid(
                        number,
                        &format!(
                            "column {column:?}: text that is not UTF-8 cannot be stored on PostgreSQL"
                        ),
                    ));
                }
            };
            Ok((column, value))
        })
        .collect()
}

/// A session's active messages, decoded.
fn active_messages(
    snapshot: &mut ExportSnapshot<'_, '_>,
    session_id: &str,
) -> Result<Vec<Message>> {
    let mut messages = Vec::new();
    snapshot.messages(session_id, false, |message| {
        messages.push(message);
        Ok::<_, Error>(ControlFlow::Continue(()))
    })?;
    Ok(messages)
}

/// Hands over one session, its messages and its end; `Break` when `each`
/// stopped the walk.
fn walk_session(
    snapshot: &mut ExportSnapshot<'_, '_>,
    export: SessionExport,
    each: &mut dyn FnMut(ExportPart) -> ControlFlow<()>,
) -> Result<ControlFlow<()>> {
    let id = export.session.id.clone();
    if each(ExportPart::Session(export)).is_break() {
        return Ok(ControlFlow::Break(()));
    }
    let mut stopped = false;
    snapshot.messages(&id, false, |message| {
        let flow = each(ExportPart::Message(message));
        stopped = flow.is_break();
        Ok::<_, Error>(flow)
    })?;
    if stopped {
        return Ok(ControlFlow::Break(()));
    }
    Ok(each(ExportPart::SessionEnd))
}
