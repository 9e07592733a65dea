//! Development tasks of the hermes-state workspace, as a library so other
//! crates' tests can call them in-process.
//!
//! * [`fixtures`]: historical `state.db` files of every version of the
//!   original store, seeded with a deterministic dataset (`docs/FIXTURES.md`).

pub mod fixtures;
