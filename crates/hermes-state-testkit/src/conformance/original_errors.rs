//! Which exception of the original a failure corresponds to
//! (`Error::original_class`, `api.md` §14), and the original's text of it
//! (`Error::original_message`), alike on both backends. The expected
//! classes and texts are the original's answers to the same calls.

use hermes_state_core::OriginalError;
use hermes_state_core::Result;
use hermes_state_core::SessionStore;
use hermes_state_types::NewDelegation;
use hermes_state_types::NewMessage;
use hermes_state_types::NewSession;

use super::Backend;

type Call = Box<dyn Fn(&dyn SessionStore, i64) -> Result<()>>;

fn call(f: impl Fn(&dyn SessionStore, i64) -> Result<()> + 'static) -> Call {
    Box::new(f)
}

pub fn failures_are_classed_as_the_originals_exceptions_alike(backend: &dyn Backend) {
    let b = backend.open();
    let s = b.store.as_ref();
    let n = b.name();
    s.create_session(&NewSession::new("a", "cli")).unwrap();
    s.create_session(&NewSession::new("b", "cli")).unwrap();
    s.set_session_title("a", Some("  Taken  ")).unwrap();
    let odd_role = s
        .append_message(&NewMessage::new("a", "it's").content("hi"))
        .unwrap();
    s.record_delegation(&NewDelegation::new("d1", "a", "queued"))
        .unwrap();

    let long = "x".repeat(101);
    // (what, call, class, the original's text)
    let cases: Vec<(&str, Call, OriginalError, Option<String>)> = vec![
        (
            "append to an unknown session",
            call(|s, _| {
                s.append_message(&NewMessage::new("ghost", "user").content("x"))
                    .map(drop)
            }),
            OriginalError::ForeignKey,
            Some("FOREIGN KEY constraint failed".into()),
        ),
        (
            "append to the empty id",
            call(|s, _| {
                s.append_message(&NewMessage::new("", "user").content("x"))
                    .map(drop)
            }),
            OriginalError::ForeignKey,
            Some("FOREIGN KEY constraint failed".into()),
        ),
        (
            "create with a missing parent",
            call(|s, _| {
                let mut session = NewSession::new("c", "cli");
                session.parent_session_id = Some("missing".into());
                s.create_session(&session).map(drop)
            }),
            OriginalError::ForeignKey,
            Some("FOREIGN KEY constraint failed".into()),
        ),
        (
            "replace the messages of an unknown session",
            call(|s, _| {
                s.replace_messages("ghost", &[NewMessage::new("", "user").content("x")], false)
            }),
            OriginalError::ForeignKey,
            Some("FOREIGN KEY constraint failed".into()),
        ),
        (
            "compact an unknown session",
            call(|s, _| {
                s.archive_and_compact("ghost", &[NewMessage::new("", "user").content("x")])
                    .map(drop)
            }),
            OriginalError::ForeignKey,
            Some("FOREIGN KEY constraint failed".into()),
        ),
        (
            "a title too long",
            call(move |s, _| s.set_session_title("a", Some(&"x".repeat(101))).map(drop)),
            OriginalError::TitleTooLong,
            Some(format!("Title too long ({} chars, max 100)", long.len())),
        ),
        (
            "an automatic title too long",
            call(|s, _| s.set_auto_title_if_empty("b", &"x".repeat(101)).map(drop)),
            OriginalError::TitleTooLong,
            Some("Title too long (101 chars, max 100)".into()),
        ),
        (
            "a title in use",
            call(|s, _| s.set_session_title("b", Some("Taken")).map(drop)),
            OriginalError::TitleInUse,
            Some("Title 'Taken' is already in use by session a".into()),
        ),
        (
            "rewind to a message of another session",
            call(|s, m| s.rewind_to_message("b", m).map(drop)),
            OriginalError::MessageNotFound,
            Some(format!("message {odd_role} not found in session b")),
        ),
        (
            "rewind an unknown session",
            call(|s, m| s.rewind_to_message("nope", m).map(drop)),
            OriginalError::MessageNotFound,
            Some(format!("message {odd_role} not found in session nope")),
        ),
        (
            "rewind to a message that is not a user's",
            call(|s, m| s.rewind_to_message("a", m).map(drop)),
            OriginalError::RewindTargetRole,
            Some(format!(
                "rewind target must be a 'user' message (got role=\"it's\", id={odd_role})"
            )),
        ),
        (
            "a delegation recorded twice",
            call(|s, _| s.record_delegation(&NewDelegation::new("d1", "a", "queued"))),
            OriginalError::Unique,
            None,
        ),
    ];
    for (what, call, class, message) in cases {
        let error = call(s, odd_role).expect_err(what);
        assert_eq!(error.original_class(), Some(class), "{n}: {what}: {error}");
        if message.is_some() {
            assert_eq!(error.original_message(), message, "{n}: {what}");
        }
    }
    // Nothing was written by the failed calls.
    assert_eq!(s.get_session("c").unwrap(), None, "{n}");
    assert_eq!(s.get_session_title("b").unwrap(), None, "{n}");
    assert_eq!(s.get_session("a").unwrap().unwrap().rewind_count, 0, "{n}");
}
