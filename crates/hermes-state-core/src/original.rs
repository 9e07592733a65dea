//! Which exception the original (`hermes_state.py`) raises for a failure,
//! so a replay of its traces or a Python binding can answer as it does
//! without reading message texts.
//!
//! The classes are the portable `kind`s of the original's recorded traces
//! (`integrity.foreign_key`, `not_found.message`, …). Each backend tells its
//! constraint failures apart by its own codes (SQLite's extended result
//! code, PostgreSQL's SQLSTATE) through
//! [`BackendFailure::original_class`](crate::BackendFailure::original_class);
//! every other class follows from the contract's error variant.

/// An exception of the original, as [`Error::original_class`](crate::Error::original_class) names it.
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
