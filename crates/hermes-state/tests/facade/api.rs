//! The public API of `SessionDb`, checked against the measured examples of
//! `api.md` (§2 sessions, §3 token accounting, §4 `append_message`, §5
//! readers, §11.5–11.6 clearing and deleting, §13–14 contention and errors).
//!
//! Every test looks at what is stored byte for byte through raw SQL on the
//! store's own connection (`db.read`), or on a second connection for setup
//! writes the API has no method for.
mod accounting;
mod cleanup;
mod clock;
mod coexistence;
mod contention;
mod delete;
mod errors;
mod inspect;
mod lookups;
mod malformed;
mod message_edits;
mod messages;
mod rich_listing;
mod roundtrip;
mod session_updates;
