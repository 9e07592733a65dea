//! A library error as the trace names the original's exception
//! (the apidiff README, section 5.2).

use hermes_state::Error;

/// The trace's portable kind of a library error: the original's class the
/// library gives it, else `rust.<kind>` (an error the original has no class
/// for, which no recorded call may produce).
pub fn trace_kind(error: &Error) -> String {
    match error.original_class() {
        Some(class) => class.trace_kind().to_owned(),
        None => format!("rust.{:?}", error.kind()),
    }
}
