//! Which exception the original (`hermes_state.py`) raises for a failure,
//! so a replay of its traces or a Python binding can answer as it does
//! without reading message texts.
//!
//! The classes are the portable `kind`s of the original's recorded traces
//! (`integrity.foreign_key`, `not_found.message`, …). SQLite constraint
//! failures are told apart by their extended result code, PostgreSQL ones
//! by SQLSTATE, every other class by the error's variant.

use hermes_state_query::TitleError;
use rusqlite::ffi;

use super::Error;

/// An exception of the original, as [`Error::original_class`] names it.
///
/// New classes may be added (a failure the original raises that this
/// library does not produce yet).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OriginalError {
    /// `IntegrityError: FOREIGN KEY constraint failed`: a message for an
    /// unknown session, a session with a missing parent.
    ForeignKey,
    /// `IntegrityError: NOT NULL constraint failed: <table>.<column>`.
    NotNull,
    /// `IntegrityError: UNIQUE constraint failed: …` (a primary key too).
    Unique,
    /// `ValueError: Title too long (<n> chars, max 100)`.
    TitleTooLong,
    /// `ValueError: Title '<title>' is already in use by session <id>`.
    TitleInUse,
    /// `ValueError: message <id> not found in session <sid>`
    /// (`rewind_to_message`).
    MessageNotFound,
    /// `ValueError: rewind target must be a 'user' message (…)`.
    RewindTargetRole,
    /// Another `ValueError` of the original (e.g. `sessions must be a
    /// list`).
    InvalidValue,
    /// `TypeError`: an argument of the wrong type or name (a binding
    /// reports these itself; typed Rust calls cannot make them).
    InvalidArgument,
    /// A call on a closed store (`AttributeError` in the original).
    Closed,
}

impl OriginalError {
    /// The class as the original's traces name it (`integrity.foreign_key`,
    /// `invalid.title_too_long`, …: the error kinds of its `apidiff` traces).
    pub fn trace_kind(self) -> &'static str {
        match self {
            OriginalError::ForeignKey => "integrity.foreign_key",
            OriginalError::NotNull => "integrity.not_null",
            OriginalError::Unique => "integrity.unique",
            OriginalError::TitleTooLong => "invalid.title_too_long",
            OriginalError::TitleInUse => "conflict.title_in_use",
            OriginalError::MessageNotFound => "not_found.message",
            OriginalError::RewindTargetRole => "invalid.rewind_target_role",
            OriginalError::InvalidValue => "invalid.value",
            OriginalError::InvalidArgument => "invalid.argument",
            OriginalError::Closed => "closed",
        }
    }

    /// The Python exception class the original raises: `IntegrityError`
    /// (of `sqlite3`), `ValueError`, `TypeError` or `AttributeError`.
    pub fn python_exception(self) -> &'static str {
        match self {
            OriginalError::ForeignKey | OriginalError::NotNull | OriginalError::Unique => {
                "IntegrityError"
            }
            OriginalError::TitleTooLong
            | OriginalError::TitleInUse
            | OriginalError::MessageNotFound
            | OriginalError::RewindTargetRole
            | OriginalError::InvalidValue => "ValueError",
            OriginalError::InvalidArgument => "TypeError",
            OriginalError::Closed => "AttributeError",
        }
    }
}

impl Error {
    /// Which exception the original raises for this failure, `None` for a
    /// failure it has no class for here (a lock, an I/O error, a refusal of
    /// this library's own).
    ///
    /// Stable across backends: on PostgreSQL the same failures give the
    /// same classes (constraints by SQLSTATE).
    pub fn original_class(&self) -> Option<OriginalError> {
        match self {
            Error::SessionNotFound(_) => Some(OriginalError::ForeignKey),
            Error::MessageNotFound { .. } => Some(OriginalError::MessageNotFound),
            Error::RewindTargetRole { .. } => Some(OriginalError::RewindTargetRole),
            Error::InvalidValue(_) => Some(OriginalError::InvalidValue),
            Error::TitleInUse { .. } => Some(OriginalError::TitleInUse),
            Error::Title(error) => title_class(error),
            Error::Closed => Some(OriginalError::Closed),
            Error::Query(hermes_state_query::QueryError::TypeError(_)) => {
                Some(OriginalError::InvalidArgument)
            }
            Error::Query(hermes_state_query::QueryError::ValueError(_)) => {
                Some(OriginalError::InvalidValue)
            }
            #[cfg(feature = "postgres")]
            Error::Postgres(error) => postgres::class(error),
            _ => self.sqlite_source().and_then(sqlite_constraint),
        }
    }

    /// The original's text of this failure, where the specification gives
    /// it (`api.md` §14): the constraint texts of SQLite (`FOREIGN KEY
    /// constraint failed`, `NOT NULL constraint failed: messages.role`, …),
    /// which this error's own text (`Display`) wraps with what was being
    /// done, and the original's `ValueError` texts, which are this error's
    /// own. `None` for other failures and for a PostgreSQL uniqueness
    /// failure, whose columns the server does not name.
    pub fn original_message(&self) -> Option<String> {
        match self.original_class()? {
            OriginalError::ForeignKey => Some("FOREIGN KEY constraint failed".to_owned()),
            OriginalError::NotNull | OriginalError::Unique => self.constraint_message(),
            OriginalError::TitleTooLong
            | OriginalError::TitleInUse
            | OriginalError::MessageNotFound
            | OriginalError::RewindTargetRole
            | OriginalError::InvalidValue => Some(self.to_string()),
            OriginalError::InvalidArgument | OriginalError::Closed => None,
        }
    }

    /// SQLite's own text of a constraint failure (or PostgreSQL's, spelled
    /// as SQLite's where the server names the column).
    fn constraint_message(&self) -> Option<String> {
        #[cfg(feature = "postgres")]
        if let Error::Postgres(error) = self {
            return postgres::constraint_message(error);
        }
        match self.sqlite_source()? {
            rusqlite::Error::SqliteFailure(_, Some(message)) => Some(message.clone()),
            _ => None,
        }
    }
}

fn title_class(error: &TitleError) -> Option<OriginalError> {
    match error {
        TitleError::TooLong { .. } => Some(OriginalError::TitleTooLong),
        #[allow(unreachable_patterns)] // `TitleError` may grow.
        _ => None,
    }
}

/// The constraint class of a SQLite failure, by extended result code.
fn sqlite_constraint(error: &rusqlite::Error) -> Option<OriginalError> {
    let rusqlite::Error::SqliteFailure(failure, _) = error else {
        return None;
    };
    match failure.extended_code {
        ffi::SQLITE_CONSTRAINT_FOREIGNKEY => Some(OriginalError::ForeignKey),
        ffi::SQLITE_CONSTRAINT_NOTNULL => Some(OriginalError::NotNull),
        ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
            Some(OriginalError::Unique)
        }
        _ => None,
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use hermes_state_postgres::PgError;

    use super::{OriginalError, title_class};

    /// SQLSTATEs of the constraint failures.
    const FOREIGN_KEY_VIOLATION: &str = "23503";
    const NOT_NULL_VIOLATION: &str = "23502";
    const UNIQUE_VIOLATION: &str = "23505";

    /// The class of a PostgreSQL backend error: its own variants, and
    /// constraint failures by SQLSTATE.
    pub(super) fn class(error: &PgError) -> Option<OriginalError> {
        match error {
            PgError::SessionNotFound(_) => Some(OriginalError::ForeignKey),
            PgError::MessageNotFound { .. } => Some(OriginalError::MessageNotFound),
            PgError::RewindTargetRole { .. } => Some(OriginalError::RewindTargetRole),
            PgError::TitleInUse { .. } => Some(OriginalError::TitleInUse),
            PgError::InvalidValue(_) => Some(OriginalError::InvalidValue),
            PgError::TypeError(_) => Some(OriginalError::InvalidArgument),
            PgError::Title(error) => title_class(error),
            PgError::Postgres { source, .. } => match source.code()?.code() {
                FOREIGN_KEY_VIOLATION => Some(OriginalError::ForeignKey),
                NOT_NULL_VIOLATION => Some(OriginalError::NotNull),
                UNIQUE_VIOLATION => Some(OriginalError::Unique),
                _ => None,
            },
            _ => None,
        }
    }

    /// `NOT NULL constraint failed: <table>.<column>` from the server's
    /// report; `None` for a uniqueness failure (the server names the
    /// constraint, not its columns).
    pub(super) fn constraint_message(error: &PgError) -> Option<String> {
        let PgError::Postgres { source, .. } = error else {
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
}
