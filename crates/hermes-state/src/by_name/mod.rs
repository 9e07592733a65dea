//! The store called by the original's method names with loose values.
//!
//! The original is a Python class: its callers pass keyword arguments of
//! any Python type and get dicts, lists, numbers and `None` back. This
//! module is that surface over the typed API, for a Python binding and for
//! the replay of the original's recorded traces (which proves it equal to
//! the original call by call): [`call`] reads each keyword as the original
//! reads it (its defaults, its coercions, its `TypeError`s), calls the
//! method of the same name on a [`SessionStore`], and gives the answer as
//! the original's value in JSON. [`SIGNATURES`] lists the original's
//! parameters, so a binding can offer the same positions and defaults.

mod accounting;
mod cleanup;
mod coordination;
mod kwargs;
mod listings;
mod messages;
mod search;
mod sessions;
mod shared;
mod signatures;
mod titles;

use serde_json::{Map, Value};

pub use kwargs::{Call, CallError};
pub use shared::FILE_ONLY;
pub use signatures::{SIGNATURES, Signature};

use crate::SessionStore;

/// A section of the API: makes the calls it knows, answers
/// [`CallError::UnknownOperation`] for the others.
type Section = fn(&dyn SessionStore, &str, &kwargs::Args<'_>) -> Call<Value>;

/// The sections in `api.md`'s order.
const SECTIONS: [Section; 8] = [
    sessions::call,
    accounting::call,
    messages::call,
    titles::call,
    search::call,
    listings::call,
    cleanup::call,
    coordination::call,
];

/// Calls the original's method `op` with the keyword arguments `kwargs`
/// (absent keys take the original's defaults) and answers with the
/// original's value: `null` for `None`, objects for its dicts.
///
/// The operations of the SQLite file itself (`vacuum`, `close`, …) answer
/// a [`CallError::Boundary`] of kind [`FILE_ONLY`] on another backend.
pub fn call(store: &dyn SessionStore, op: &str, kwargs: &Map<String, Value>) -> Call<Value> {
    let args = kwargs::Args::new(op, kwargs);
    for section in SECTIONS {
        match section(store, op, &args) {
            Err(CallError::UnknownOperation(_)) => continue,
            answer => return answer,
        }
    }
    Err(CallError::UnknownOperation(op.to_owned()))
}

/// The original's signature of `method`, `None` for a name it does not have.
pub fn signature(method: &str) -> Option<&'static Signature> {
    SIGNATURES.iter().find(|signature| signature.name == method)
}
