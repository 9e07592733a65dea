//! The read side on its own: `hermes_state_query` against files built with
//! `hermes_state_schema::open_writable` and raw SQL inserts, checked against
//! `api.md` §6 (titles), §9 (lineage), §10.1–10.2 (listing, preview) and §3.4
//! (statistics), on writable and read-only connections. The facade crate is
//! deliberately not used: the query crate must be usable and tested alone.

mod compat;
mod lineage;
mod listing;
mod read_only;
mod shapes;
mod stats;
mod titles;
