//! The original's export shapes in parts: a session, then its messages one
//! at a time, then the end of the session. A writer of the JSON document
//! (the CLI's `export --format json`) holds one message at a time, not a
//! session, so even a session of 100 000 messages needs little memory.

use std::ops::ControlFlow;

use hermes_state_query::messages::for_each_message;
use hermes_state_query::rows::session_from_row;
use hermes_state_query::values::real;
use rusqlite::Connection;

use super::{ExportPart, SESSIONS_BY_LAST_ACTIVE, SessionExport, in_read_transaction};
use crate::db::SessionDb;
use crate::error::{Result, WriteContext};

impl SessionDb {
    /// What [`SessionDb::export_all`] returns, in parts: for each session in
    /// the same order, [`ExportPart::Session`], its messages one
    /// [`ExportPart::Message`] at a time, [`ExportPart::SessionEnd`]. One read
    /// snapshot; sessions and messages are read as the walk goes, so memory
    /// holds one session row and one message. `each` returning
    /// [`ControlFlow::Break`] stops the walk. Returns the number of sessions
    /// started.
    pub fn export_all_parts(
        &self,
        source: Option<&str>,
        mut each: impl FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<u64> {
        const WHAT: &str = "listing sessions";
        let source = source.filter(|s| !s.is_empty());
        self.read(|conn| {
            in_read_transaction(conn, |conn| {
                let mut stmt = conn.prepare(SESSIONS_BY_LAST_ACTIVE).context(WHAT)?;
                let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
                let session_columns = columns.len() - 1;
                let mut rows = stmt.query([source]).context(WHAT)?;
                let mut started = 0;
                while let Some(row) = rows.next().context(WHAT)? {
                    let session =
                        session_from_row(row, &columns[..session_columns]).context(WHAT)?;
                    let last_active = real(row.get_ref(session_columns).context(WHAT)?);
                    started += 1;
                    let export = SessionExport {
                        session,
                        last_active: Some(last_active.unwrap_or_default()),
                        messages: Vec::new(),
                    };
                    if walk_session(conn, export, &mut each)?.is_break() {
                        break;
                    }
                }
                Ok(started)
            })
        })
    }

    /// What [`SessionDb::export_session`] returns, in parts (see
    /// [`SessionDb::export_all_parts`]); `false`, and no part, for an unknown
    /// session.
    pub fn export_session_parts(
        &self,
        session_id: &str,
        mut each: impl FnMut(ExportPart) -> ControlFlow<()>,
    ) -> Result<bool> {
        self.read(|conn| {
            in_read_transaction(conn, |conn| {
                let Some(session) = hermes_state_query::get_session(conn, session_id)? else {
                    return Ok(false);
                };
                let export = SessionExport {
                    session,
                    last_active: None,
                    messages: Vec::new(),
                };
                // A Break only ends this one session early.
                let _ = walk_session(conn, export, &mut each)?;
                Ok(true)
            })
        })
    }
}

/// Hands over one session, its messages and its end; `Break` when `each`
/// stopped the walk.
fn walk_session(
    conn: &Connection,
    export: SessionExport,
    each: &mut impl FnMut(ExportPart) -> ControlFlow<()>,
) -> Result<ControlFlow<()>> {
    let id = export.session.id.clone();
    if each(ExportPart::Session(export)).is_break() {
        return Ok(ControlFlow::Break(()));
    }
    let mut stopped = false;
    for_each_message(conn, &id, false, |message| {
        let flow = each(ExportPart::Message(message));
        stopped = flow.is_break();
        flow
    })?;
    if stopped {
        return Ok(ControlFlow::Break(()));
    }
    Ok(each(ExportPart::SessionEnd))
}
