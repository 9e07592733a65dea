//! `import_sessions` on a PostgreSQL store (feature `postgres`): the same
//! checks and the same rows as on SQLite, written in one transaction on
//! the server ([`PgStore::import_session_list`]).

use hermes_state_postgres::PgStore;
use hermes_state_postgres::import::{ListedRow, ListedSession};

use super::*;

/// [`SessionDb::import_sessions`] on PostgreSQL.
pub(crate) fn import_sessions(
    store: &PgStore,
    sessions: &serde_json::Value,
) -> Result<SessionsImportReport> {
    let accepted = match payload::check(sessions)? {
        Checked::Accepted(accepted) => accepted,
        Checked::Refused(errors) => return Ok(SessionsImportReport::refused(errors)),
    };
    let now = store.now();
    let listed: Vec<ListedSession> = accepted
        .iter()
        .map(|item| listed(rows::prepare(item, now)))
        .collect();
    let outcome = store.import_session_list(&listed)?;
    Ok(SessionsImportReport::written(
        outcome.imported_ids,
        outcome.skipped_ids,
        outcome.detached,
    ))
}

fn listed(session: Prepared) -> ListedSession {
    ListedSession {
        row: listed_row(&SESSION_COLUMNS, session.session),
        messages: session
            .messages
            .into_iter()
            .map(|message| listed_row(&MESSAGE_COLUMNS, message))
            .collect(),
        id: session.id,
        parent: session.parent,
    }
}

fn listed_row(columns: &[&str], row: Row) -> ListedRow {
    ListedRow {
        values: columns
            .iter()
            .map(|c| (*c).to_owned())
            .zip(row.values)
            .collect(),
        refusal: row.refusal.map(str::to_owned),
    }
}
