//! The answers every backend must give alike, recorded once.
//!
//! Before the suite moved here, a case ran on both backends in one test
//! and compared their answers with each other. Each backend's tests now
//! run the suite in a binary of their own, so a case compares its answers
//! with the recorded ones instead (`agreed/<case>.txt`, their `{:#?}`
//! text): both backends equal the record, hence each other. The record is
//! SQLite's, the reference; after a deliberate change of an answer,
//! rerecord it by running the SQLite suite with `HERMES_STATE_AGREED=write`
//! (and that case alone, with `HERMES_STATE_CONFORMANCE`), review the
//! diff, and run the PostgreSQL suite against it.

use std::fmt::Debug;
use std::path::PathBuf;

/// The variable that makes [`check`] write the record instead of reading
/// it (`write`).
pub const RECORD_VAR: &str = "HERMES_STATE_AGREED";

/// The record's file for `key`.
fn path(key: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/conformance/agreed")
        .join(format!("{}.txt", key.replace("::", ".")))
}

/// Asserts that `value` is what every backend answered, as recorded under
/// `key` (the case's `module::function`, and a suffix when a case records
/// more than one answer); `backend` names the store in the message.
///
/// # Panics
/// When the answer differs from the record, or no record exists.
pub fn check(key: &str, backend: &str, value: &impl Debug) {
    let got = format!("{value:#?}\n");
    let file = path(key);
    if std::env::var(RECORD_VAR).as_deref() == Ok("write") {
        std::fs::create_dir_all(file.parent().expect("a folder")).expect("create the folder");
        std::fs::write(&file, &got).expect("write the record");
        return;
    }
    let recorded = std::fs::read_to_string(&file).unwrap_or_else(|error| {
        panic!(
            "{key}: no record at {} ({error}); write it from the SQLite suite with {RECORD_VAR}=write",
            file.display()
        )
    });
    assert!(
        recorded == got,
        "{key}: {backend} answers otherwise than the record {}:\n--- recorded\n{recorded}\n--- {backend}\n{got}",
        file.display()
    );
}
