//! PostgreSQL's failures as the contract reports them.
//!
//! The failures the contract defines (an unknown session or message, a
//! title in use or too long, the original's `ValueError`s and
//! `TypeError`s) become the contract's own variants, so a caller sees the
//! same error from either backend; everything else is a backend failure
//! ([`hermes_state_core::Error::Backend`]) that keeps this crate's
//! [`PgError`], its SQLSTATE and its advice. Constraint failures are told
//! apart by SQLSTATE, never by message text.

use hermes_state_core::{BackendFailure, Error, OriginalError};
use hermes_state_types::ErrorKind;

use super::PgError;

/// SQLSTATEs of the constraint failures.
const FOREIGN_KEY_VIOLATION: &str = "23503";
const NOT_NULL_VIOLATION: &str = "23502";
const UNIQUE_VIOLATION: &str = "23505";

impl BackendFailure for PgError {
    fn kind(&self) -> ErrorKind {
        PgError::kind(self)
    }

    fn original_class(&self) -> Option<OriginalError> {
        let PgError::Postgres { source, .. } = self else {
            return None;
        };
        match source.code()?.code() {
            FOREIGN_KEY_VIOLATION => Some(OriginalError::ForeignKey),
            NOT_NULL_VIOLATION => Some(OriginalError::NotNull),
            UNIQUE_VIOLATION => Some(OriginalError::Unique),
            _ => None,
        }
    }

    /// `NOT NULL constraint failed: <table>.<column>` from the server's
    /// report; `None` for a uniqueness failure (the server names the
    /// constraint, not its columns).
    fn constraint_message(&self) -> Option<String> {
        let PgError::Postgres { source, .. } = self else {
            return None;
        };
        let db = source.as_db_error()?;
        if db.code().code() != NOT_NULL_VIOLATION {
            return None;
        }
        Some(format!(
            "NOT NULL constraint failed: {}.{}",
            db.table()?,
            db.column()?
        ))
    }

    fn next_step(&self) -> Option<&'static str> {
        PgError::next_step(self)
    }
}

impl From<PgError> for Error {
    fn from(error: PgError) -> Self {
        match error {
            PgError::SessionNotFound(session_id) => Error::SessionNotFound(session_id),
            PgError::MessageNotFound {
                session_id,
                message_id,
            } => Error::MessageNotFound {
                session_id,
                message_id,
            },
            PgError::RewindTargetRole { role, message_id } => {
                Error::RewindTargetRole { role, message_id }
            }
            PgError::TitleInUse { title, holder } => Error::TitleInUse {
                title,
                session_id: holder,
            },
            PgError::Title(error) => Error::Title(error),
            PgError::InvalidValue(text) => Error::InvalidValue(text),
            PgError::TypeError(text) => Error::TypeError(text),
            other => Error::backend(other),
        }
    }
}
