//! A library error as the trace names the original's exception
//! (the apidiff README, section 5.2).

use hermes_state::{Error, ErrorKind};

/// The trace's portable kind of a library error.
pub fn trace_kind(error: &Error) -> String {
    // INTERIM: replaced by the library's own classification.
    let text = error.to_string();
    let kind = match error {
        Error::TitleInUse { .. } => "conflict.title_in_use",
        Error::Title(_) => "invalid.title_too_long",
        Error::Closed => "closed",
        _ if text.contains("FOREIGN KEY") => "integrity.foreign_key",
        _ if text.contains("NOT NULL") => "integrity.not_null",
        _ if text.contains("UNIQUE") => "integrity.unique",
        _ if text.contains("not found in session") => "not_found.message",
        _ if text.contains("rewind target must") => "invalid.rewind_target_role",
        _ if error.kind() == ErrorKind::InvalidInput => "invalid.value",
        _ => return format!("rust.{:?}", error.kind()),
    };
    kind.to_owned()
}
