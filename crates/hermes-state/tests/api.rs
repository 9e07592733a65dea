//! The public API of `SessionDb`, checked against the measured examples of
//! `api.md` (§2 sessions, §3 token accounting, §4 `append_message`, §5
//! readers, §11.5–11.6 clearing and deleting, §13–14 contention and errors).
//!
//! Every test looks at what is stored byte for byte through raw SQL on the
//! store's own connection (`db.read`), or on a second connection for setup
//! writes the API has no method for.
#![allow(missing_docs)]

// The crate root is `tests/api.rs`, so modules are found in `tests/` unless told.

#[path = "api/common.rs"]
mod common;

#[path = "api/accounting.rs"]
mod accounting;
#[path = "api/coexistence.rs"]
mod coexistence;
#[path = "api/contention.rs"]
mod contention;
#[path = "api/conversation.rs"]
mod conversation;
#[path = "api/delete.rs"]
mod delete;
#[path = "api/errors.rs"]
mod errors;
#[path = "api/messages.rs"]
mod messages;
#[path = "api/roundtrip.rs"]
mod roundtrip;
#[path = "api/sessions.rs"]
mod sessions;
