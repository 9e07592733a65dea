//! The one error every store reports through the contract.
//!
//! The failures the contract itself defines (an unknown session, a title in
//! use, a refused argument, …) are variants both backends produce alike, so
//! a caller matches them once. What only a backend can say (a SQLite code, a
//! PostgreSQL SQLSTATE, a file that is not a store) arrives as
//! [`Error::Backend`]: the backend's own typed error, boxed, which still
//! answers the portable questions — its [`ErrorKind`], the exception the
//! original would have raised, what an operator does next — through
//! [`BackendFailure`], and can be downcast to its type with
//! [`Error::backend`].

use hermes_state_types::ErrorKind;
use hermes_state_types::pyrepr::str_repr;

use crate::original::OriginalError;

/// Every error of the session store, on either backend.
///
/// Match on [`Error::kind`] rather than on variants or messages: kinds are
/// portable and stable, variants may grow. Which exception the original
/// would have raised is [`Error::original_class`].
///
/// ```
/// use hermes_state_core::{Error, OriginalError};
/// use hermes_state_types::ErrorKind;
///
/// let refused = Error::TitleInUse { title: "Paris".into(), session_id: "s1".into() };
/// assert_eq!(refused.kind(), ErrorKind::Constraint);
/// assert_eq!(refused.original_class(), Some(OriginalError::TitleInUse));
/// // A retry makes sense only for some kinds, whatever the backend:
/// let worth_retrying = matches!(refused.kind(), ErrorKind::Busy | ErrorKind::Unavailable);
/// assert!(!worth_retrying);
/// ```
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The session named does not exist: a write that needs it was refused
    /// (the original's `IntegrityError: FOREIGN KEY constraint failed`, see
    /// [`Error::original_message`]).
    #[error("session {0:?} does not exist")]
    SessionNotFound(String),
    /// The message is not one of the session's (an unknown or empty session
    /// included); the original's text.
    #[error("message {message_id} not found in session {session_id}")]
    MessageNotFound {
        /// The session named.
        session_id: String,
        /// The message named.
        message_id: i64,
    },
    /// A rewind target that is not a `user` message; the original's text
    /// (the role as Python's `repr` writes it).
    #[error(
        "rewind target must be a 'user' message (got role={}, id={message_id})",
        str_repr(role)
    )]
    RewindTargetRole {
        /// The target's role.
        role: String,
        /// The target message.
        message_id: i64,
    },
    /// A value the original refuses with a `ValueError` of its own (e.g.
    /// `sessions must be a list`); the text is the original's.
    #[error("{0}")]
    InvalidValue(String),
    /// A value of the wrong type where the original's code raises
    /// `TypeError`, with its text.
    #[error("{0}")]
    TypeError(String),
    /// An argument was refused before anything was written.
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The store was opened read-only.
    #[error("{0}: the store was opened read-only")]
    ReadOnly(String),
    /// The title is held by another session that is not a compression ancestor.
    #[error("Title '{title}' is already in use by session {session_id}")]
    TitleInUse {
        /// The normalised title.
        title: String,
        /// The session holding it.
        session_id: String,
    },
    /// The title was refused by normalisation (too long).
    #[error(transparent)]
    Title(#[from] crate::titles::TitleError),
    /// The store was closed.
    #[error("the store is closed")]
    Closed,
    /// The caller raised the [`Cancel`](crate::cancel::Cancel) it gave the
    /// read: the read stopped and has no answer.
    #[error("the read was cancelled")]
    Cancelled,
    /// A failure only the backend can describe: its database, its file, its
    /// server. The backend's own error, boxed.
    #[error(transparent)]
    Backend(Backend),
}

/// A backend's own error, boxed: [`Error::Backend`].
///
/// Its text and its sources are the backend error's, unchanged.
#[derive(Debug)]
pub struct Backend(Box<dyn BackendFailure>);

impl Backend {
    /// The backend's error.
    pub fn failure(&self) -> &dyn BackendFailure {
        &*self.0
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for Backend {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// What a backend's own error tells the contract about itself.
///
/// Each backend crate implements it for its error type and converts that
/// type into [`Error::Backend`]; the defaults say "nothing to add".
pub trait BackendFailure: std::error::Error + Send + Sync + 'static {
    /// The portable kind of this failure.
    fn kind(&self) -> ErrorKind;
    /// The exception the original raises for this failure, where it raises
    /// one of the classes it is known for (a constraint failure, …).
    fn original_class(&self) -> Option<OriginalError> {
        None
    }
    /// The text of a constraint failure as the original's SQLite words it
    /// (`NOT NULL constraint failed: sessions.source`).
    fn constraint_message(&self) -> Option<String> {
        None
    }
    /// What an operator does next, where the failure is fixed outside this
    /// library and the backend can tell which (a server's refusal:
    /// credentials, rights, a missing database, no answer).
    fn next_step(&self) -> Option<&'static str> {
        None
    }
}

impl Error {
    /// The portable kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::SessionNotFound(_) | Error::MessageNotFound { .. } => ErrorKind::NotFound,
            Error::RewindTargetRole { .. }
            | Error::InvalidValue(_)
            | Error::TypeError(_)
            | Error::InvalidInput(_)
            | Error::Title(_) => ErrorKind::InvalidInput,
            Error::ReadOnly(_) => ErrorKind::ReadOnly,
            Error::TitleInUse { .. } => ErrorKind::Constraint,
            Error::Closed => ErrorKind::Other,
            Error::Cancelled => ErrorKind::Cancelled,
            Error::Backend(Backend(failure)) => failure.kind(),
        }
    }

    /// What an operator does next, where the backend can tell (see
    /// [`BackendFailure::next_step`]).
    pub fn next_step(&self) -> Option<&'static str> {
        match self {
            Error::Backend(Backend(failure)) => failure.next_step(),
            _ => None,
        }
    }

    /// A backend failure: the backend's own error, boxed.
    pub fn backend(failure: impl BackendFailure) -> Error {
        Error::Backend(Backend(Box::new(failure)))
    }

    /// The backend's own error inside, if it is a `T`.
    pub fn downcast_backend<T: BackendFailure>(&self) -> Option<&T> {
        match self {
            Error::Backend(Backend(failure)) => {
                let failure: &(dyn std::error::Error + 'static) = &**failure;
                failure.downcast_ref::<T>()
            }
            _ => None,
        }
    }

    /// The backend's own error inside, taken out, if it is a `T`; `self`
    /// unchanged otherwise. For a backend that rebuilds its own error (adds
    /// context to it, or turns a spent lock wait into a busy error).
    pub fn into_backend<T: BackendFailure>(self) -> std::result::Result<T, Error> {
        let Error::Backend(Backend(failure)) = self else {
            return Err(self);
        };
        if !(&*failure as &(dyn std::error::Error + 'static)).is::<T>() {
            return Err(Error::Backend(Backend(failure)));
        }
        let failure: Box<dyn std::error::Error + Send + Sync> = failure;
        failure
            .downcast::<T>()
            .map(|failure| *failure)
            .map_err(|failure| Error::backend(Unrecognised(failure)))
    }

    /// Which exception the original raises for this failure, where it is
    /// one of the classes its callers (and its recorded traces) tell apart;
    /// `None` for failures the original has no equivalent of (a busy store
    /// after retries, a damaged file, …).
    pub fn original_class(&self) -> Option<OriginalError> {
        match self {
            Error::SessionNotFound(_) => Some(OriginalError::ForeignKey),
            Error::MessageNotFound { .. } => Some(OriginalError::MessageNotFound),
            Error::RewindTargetRole { .. } => Some(OriginalError::RewindTargetRole),
            Error::InvalidValue(_) => Some(OriginalError::InvalidValue),
            Error::TypeError(_) => Some(OriginalError::InvalidArgument),
            Error::TitleInUse { .. } => Some(OriginalError::TitleInUse),
            Error::Title(error) => error.original_class(),
            Error::Closed => Some(OriginalError::Closed),
            Error::InvalidInput(_) | Error::ReadOnly(_) | Error::Cancelled => None,
            Error::Backend(Backend(failure)) => failure.original_class(),
        }
    }

    /// The message the original's exception carries, where this library can
    /// give it exactly: `FOREIGN KEY constraint failed`, SQLite's text of a
    /// `NOT NULL` or `UNIQUE` failure, the original's own `ValueError`
    /// texts. `None` where it cannot (a `TypeError`'s text is Python's).
    pub fn original_message(&self) -> Option<String> {
        match self.original_class()? {
            OriginalError::ForeignKey => Some("FOREIGN KEY constraint failed".to_owned()),
            OriginalError::NotNull | OriginalError::Unique => match self {
                Error::Backend(Backend(failure)) => failure.constraint_message(),
                _ => None,
            },
            OriginalError::TitleTooLong
            | OriginalError::TitleInUse
            | OriginalError::MessageNotFound
            | OriginalError::RewindTargetRole
            | OriginalError::InvalidValue => Some(self.to_string()),
            OriginalError::InvalidArgument | OriginalError::Closed => None,
        }
    }
}

/// A boxed error that is not a [`BackendFailure`] any more: only where
/// [`Error::into_backend`] checked the type and the downcast still failed,
/// which cannot happen; kept so that it loses nothing instead of panicking.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct Unrecognised(Box<dyn std::error::Error + Send + Sync>);

impl BackendFailure for Unrecognised {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Other
    }
}

/// `Result` with the contract's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
