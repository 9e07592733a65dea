//! Answers and files exactly as the original's (`hermes_state.py`) where
//! its recorded `apidiff` traces or a run of it showed this port
//! differing: each case is a class of input, with the original's answer
//! as the expected value.
mod errors;
mod serialisation;
mod telegram_schema;
