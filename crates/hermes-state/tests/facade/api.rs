//! The public API of `SessionDb` where only a file shows it, checked against
//! the measured examples of `api.md` (§2 sessions, §4 `append_message`, §5
//! readers, the full-text index after §11.5–11.6's clearing and deleting,
//! §13–14 contention and errors); what the contract does on every backend
//! is the conformance suite's.
//!
//! Every test looks at what is stored byte for byte through raw SQL on the
//! store's own connection (`db.read`), or on a second connection for setup
//! writes the API has no method for.
mod clock;
mod coexistence;
mod contention;
mod delete;
mod errors;
mod inspect;
mod malformed;
mod messages;
mod roundtrip;
mod session_updates;
