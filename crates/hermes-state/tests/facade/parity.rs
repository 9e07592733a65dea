//! Answers and files exactly as the original's (`hermes_state.py`) where
//! its recorded traces (`apidiff` §5) or a run of it showed this port
//! differing: each case is a class of input, with the original's answer
//! as the expected value.
mod telegram_schema;
