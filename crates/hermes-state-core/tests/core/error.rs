//! The contract's error: kinds, the original's classes and messages, and a
//! backend's own error kept inside and taken back out.

use hermes_state_core::{BackendFailure, Error, OriginalError};
use hermes_state_types::ErrorKind;

/// A backend failure as a backend crate would define one.
#[derive(Debug, thiserror::Error)]
#[error("disk says no: {0}")]
struct DiskFailure(&'static str);

impl BackendFailure for DiskFailure {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Io
    }
    fn original_class(&self) -> Option<OriginalError> {
        Some(OriginalError::NotNull)
    }
    fn constraint_message(&self) -> Option<String> {
        Some(format!("NOT NULL constraint failed: {}", self.0))
    }
    fn next_step(&self) -> Option<&'static str> {
        Some("free some space")
    }
}

/// Another backend's failure, never inside the errors above.
#[derive(Debug, thiserror::Error)]
#[error("elsewhere")]
struct OtherFailure;

impl BackendFailure for OtherFailure {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Other
    }
}

#[test]
fn contract_variants_have_the_original_classes_and_texts() {
    let cases: Vec<(Error, ErrorKind, Option<OriginalError>, Option<&str>)> = vec![
        (
            Error::SessionNotFound("s".into()),
            ErrorKind::NotFound,
            Some(OriginalError::ForeignKey),
            Some("FOREIGN KEY constraint failed"),
        ),
        (
            Error::MessageNotFound {
                session_id: "s".into(),
                message_id: 7,
            },
            ErrorKind::NotFound,
            Some(OriginalError::MessageNotFound),
            Some("message 7 not found in session s"),
        ),
        (
            Error::RewindTargetRole {
                role: "tool".into(),
                message_id: 3,
            },
            ErrorKind::InvalidInput,
            Some(OriginalError::RewindTargetRole),
            Some("rewind target must be a 'user' message (got role='tool', id=3)"),
        ),
        (
            Error::TitleInUse {
                title: "T".into(),
                session_id: "s".into(),
            },
            ErrorKind::Constraint,
            Some(OriginalError::TitleInUse),
            Some("Title 'T' is already in use by session s"),
        ),
        (
            Error::TypeError("bad".into()),
            ErrorKind::InvalidInput,
            Some(OriginalError::InvalidArgument),
            None,
        ),
        (
            Error::Closed,
            ErrorKind::Other,
            Some(OriginalError::Closed),
            None,
        ),
        (
            Error::InvalidInput("x".into()),
            ErrorKind::InvalidInput,
            None,
            None,
        ),
    ];
    for (error, kind, class, message) in cases {
        assert_eq!(error.kind(), kind, "{error}");
        assert_eq!(error.original_class(), class, "{error}");
        assert_eq!(error.original_message().as_deref(), message, "{error}");
    }
}

#[test]
fn a_backend_failure_answers_through_the_contract_and_comes_back_out() {
    let error = Error::backend(DiskFailure("sessions.source"));
    assert_eq!(error.kind(), ErrorKind::Io);
    assert_eq!(error.to_string(), "disk says no: sessions.source");
    assert_eq!(error.next_step(), Some("free some space"));
    assert_eq!(error.original_class(), Some(OriginalError::NotNull));
    assert_eq!(
        error.original_message().as_deref(),
        Some("NOT NULL constraint failed: sessions.source")
    );
    assert!(error.downcast_backend::<DiskFailure>().is_some());
    assert!(error.downcast_backend::<OtherFailure>().is_none());
    let error = match error.into_backend::<OtherFailure>() {
        Err(error) => error,
        Ok(_) => panic!("an OtherFailure was never inside"),
    };
    match error.into_backend::<DiskFailure>() {
        Ok(DiskFailure(what)) => assert_eq!(what, "sessions.source"),
        Err(error) => panic!("the backend's error was lost: {error}"),
    }
    assert!(Error::Closed.into_backend::<DiskFailure>().is_err());
}

/// The trace kinds and Python classes of the original's errors: a rule of
/// the contract alone (it ran in the conformance suite before the suite
/// moved to the test kit, without a store).
#[test]
fn trace_kinds_and_python_classes_are_the_originals() {
    let cases = [
        (
            OriginalError::ForeignKey,
            "integrity.foreign_key",
            "IntegrityError",
        ),
        (
            OriginalError::NotNull,
            "integrity.not_null",
            "IntegrityError",
        ),
        (OriginalError::Unique, "integrity.unique", "IntegrityError"),
        (
            OriginalError::TitleTooLong,
            "invalid.title_too_long",
            "ValueError",
        ),
        (
            OriginalError::TitleInUse,
            "conflict.title_in_use",
            "ValueError",
        ),
        (
            OriginalError::MessageNotFound,
            "not_found.message",
            "ValueError",
        ),
        (
            OriginalError::RewindTargetRole,
            "invalid.rewind_target_role",
            "ValueError",
        ),
        (OriginalError::InvalidValue, "invalid.value", "ValueError"),
        (
            OriginalError::InvalidArgument,
            "invalid.argument",
            "TypeError",
        ),
        (OriginalError::Closed, "closed", "AttributeError"),
    ];
    for (class, kind, python) in cases {
        assert_eq!(class.trace_kind(), kind);
        assert_eq!(class.python_exception(), python);
    }
}
