//! A whole document of the original's export shape, read by
//! `import_sessions`' rules and handed to the JSONL import.

use std::collections::HashMap;

use hermes_state_types::stored::StoredValue;
use serde_json::Value;

use super::import_payload::{self, Checked, Limits};
use super::import_rows::{MESSAGE_COLUMNS, Prepared, SESSION_COLUMNS, prepare};
use crate::error::{Error, Result};
use crate::export::{ExportSummary, LineColumns, LineWriter, header_line};

/// The original's export document (`export_all`'s list, or one session)
/// as the JSONL format, for [`import_jsonl`](crate::store::Exchange::import_jsonl)
/// with its options and batches. Each session is read by `import_sessions`'
/// rules ([`plan_sessions_import`](super::plan_sessions_import)), but not
/// the limits of one call (500 sessions, 50 000 messages, 25 MiB); parents
/// come first with their `parent_session_id`. `now` is `import_sessions`'
/// clock reading. A document neither a list nor an object, a refused session
/// (each named) or an integer beyond 64 bits is
/// [`ErrorKind::InvalidInput`](hermes_state_types::ErrorKind::InvalidInput).
pub fn original_json_to_jsonl(document: Value, now: f64) -> Result<Vec<u8>> {
    let sessions = match document {
        object @ Value::Object(_) => Value::Array(vec![object]),
        other => other,
    };
    let accepted = match import_payload::check(&sessions, Limits::PerSession)? {
        Checked::Accepted(accepted) => accepted,
        Checked::Refused(errors) => {
            let each = errors.iter().map(|e| match &e.session_id {
                Some(id) => format!("session {} ({id:?}): {}", e.index, e.error),
                None => format!("session {}: {}", e.index, e.error),
            });
            let each = each.collect::<Vec<_>>().join("; ");
            let text = format!("refused by the import's checks: {each}");
            return Err(Error::InvalidInput(text));
        }
    };
    let prepared: Vec<Prepared> = accepted.iter().map(|a| prepare(a, now)).collect();
    let columns = SESSION_COLUMNS.into_iter().chain(["parent_session_id"]);
    let session_line = LineColumns::new(columns, None);
    let message_line = LineColumns::new(MESSAGE_COLUMNS, Some("content"));
    let mut out = Vec::new();
    let mut lines = LineWriter::new(&mut out);
    // The rows' columns are v23's.
    lines.line(&header_line(23, now))?;
    let mut summary = ExportSummary::default();
    for session in parents_first(&prepared).into_iter().map(|i| &prepared[i]) {
        let rows = std::iter::once(&session.session).chain(&session.messages);
        if let Some(refusal) = rows.filter_map(|row| row.refusal).next() {
            let text = format!("session {:?}: {refusal}", session.id);
            return Err(Error::InvalidInput(text));
        }
        let parent = session.parent.clone();
        let parent = parent.map_or(StoredValue::Null, StoredValue::Text);
        let values = session.session.values.iter().chain([&parent]);
        lines.line(&session_line.line("session", values.map(StoredValue::as_ref)))?;
        for message in &session.messages {
            let values = message.values.iter().map(StoredValue::as_ref);
            lines.line(&message_line.line("message", values))?;
        }
        summary.sessions += 1;
        summary.messages += session.messages.len() as u64;
    }
    lines.finish(summary, &mut |_| {})?;
    Ok(out)
}

/// Indexes of the sessions with every parent (in the list) before its
/// children, in list order otherwise; a cycle is cut where it closes.
fn parents_first(sessions: &[Prepared]) -> Vec<usize> {
    let index: HashMap<&str, usize> = (sessions.iter().enumerate())
        .map(|(i, s)| (s.id.as_str(), i))
        .collect();
    let parent = |s: &Prepared| index.get(s.parent.as_deref()?).copied();
    let mut placed = vec![false; sessions.len()];
    let mut order = Vec::with_capacity(sessions.len());
    for start in 0..sessions.len() {
        // Up to the oldest ancestor not placed yet, then placed down from it.
        let (mut chain, mut at) = (Vec::new(), Some(start));
        while let Some(i) = at.filter(|&i| !placed[i]) {
            placed[i] = true;
            chain.push(i);
            at = parent(&sessions[i]);
        }
        order.extend(chain.into_iter().rev());
    }
    order
}
