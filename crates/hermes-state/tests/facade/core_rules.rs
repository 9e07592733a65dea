//! The rules `hermes-state-core` writes over the contract (which session an
//! argument names, search hits in a scope, the sessions and usage of a time
//! window), run on real stores: on SQLite always and on PostgreSQL when a
//! server is configured (the conformance suite's `backends`), since what
//! they compute hangs on what each store answers.

mod search_scope;
mod session_ref;
mod time_window;
