//! The small builders the workspace's tests write sessions and messages
//! with, defined once: before this module each test file had its own
//! `child`, `say`, `user`, … (issue 25), and they drifted (one `child`
//! took a source, another a start time, a third a config).
//!
//! The pure ones return the contract's input types; the ones that write
//! take any store as `&dyn SessionStore` (a `SessionDb`, a `PgStore`, a
//! conformance case's store) and unwrap: a test cannot go on when its
//! set-up fails.

use hermes_state_core::SessionStore;
use hermes_state_types::{Content, NewMessage, NewSession};

/// A session from the command line (`source` `cli`), every other field
/// NULL.
pub fn session(id: &str) -> NewSession {
    NewSession::new(id, "cli")
}

/// A `cli` session whose parent is `parent` (a compression continuation,
/// a branch, a delegate: what the parent link means is the test's).
pub fn child(id: &str, parent: &str) -> NewSession {
    child_from(id, "cli", parent)
}

/// [`child`] with its own source.
pub fn child_from(id: &str, source: &str, parent: &str) -> NewSession {
    let mut session = NewSession::new(id, source);
    session.parent_session_id = Some(parent.into());
    session
}

/// A user message of `session` with this content, no timestamp (the
/// store's clock gives it one).
pub fn user(session: &str, content: impl Into<Content>) -> NewMessage {
    NewMessage::new(session, "user").content(content)
}

/// An assistant message of `session` with this content, no timestamp.
pub fn assistant(session: &str, content: impl Into<Content>) -> NewMessage {
    NewMessage::new(session, "assistant").content(content)
}

/// A message of `session` in `role`, with this content at `at`.
pub fn message(session: &str, role: &str, content: impl Into<Content>, at: f64) -> NewMessage {
    NewMessage::new(session, role)
        .content(content)
        .timestamp(at)
}

/// Appends a user message to `session` at `at`; its id.
///
/// # Panics
/// When the store refuses it.
pub fn say(store: &dyn SessionStore, session: &str, content: impl Into<Content>, at: f64) -> i64 {
    say_as(store, session, "user", content, at)
}

/// Appends a message in `role` to `session` at `at`; its id.
///
/// # Panics
/// When the store refuses it.
pub fn say_as(
    store: &dyn SessionStore,
    session: &str,
    role: &str,
    content: impl Into<Content>,
    at: f64,
) -> i64 {
    store
        .append_message(&message(session, role, content, at))
        .expect("append a message")
}

/// Appends a user message to `session` at the store's own clock; its id.
///
/// # Panics
/// When the store refuses it.
pub fn say_now(store: &dyn SessionStore, session: &str, content: impl Into<Content>) -> i64 {
    store
        .append_message(&user(session, content))
        .expect("append a message")
}

/// Creates a [`child`] session of `parent`.
///
/// # Panics
/// When the store refuses it.
pub fn add_child(store: &dyn SessionStore, id: &str, parent: &str) {
    store
        .create_session(&child(id, parent))
        .expect("create a child session");
}
