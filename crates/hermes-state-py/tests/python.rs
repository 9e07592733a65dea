//! The binding's tests, all through Python: `cargo test -p hermes-state-py`
//! builds the wheel into a virtual environment and runs
//!
//! - the binding's own pytest suite (`tests/pytest/`), and
//! - the original's own store tests from the `hermes-agent` 0.19.0 source
//!   distribution, downloaded at test time (`tests/original/`), and
//! - that release itself as the live agent on one file beside this package
//!   (`tests/coexistence/`).
//!
//! They skip, printing why, only where `python3` or its `venv` module is
//! missing (CI installs them), and the original's suite also when
//! `HERMES_STATE_OFFLINE=1` says there is no network. Anything else that
//! goes wrong (no network otherwise, a failed build, a failing test) fails.

// The skip lines and the suites' summaries are printed on purpose: `cargo
// test` shows them with the test's output.
#![allow(clippy::print_stdout)]

mod python {
    pub mod environment;
    pub mod live_original;
    pub mod original_suite;
    pub mod own_suite;
    pub mod process;
}
