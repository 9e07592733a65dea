//! The read side on its own: `hermes_state_query` against files built with
//! `hermes_state_schema::open_writable` and raw SQL inserts, checked against
//! `api.md` §6 (titles), §9 (lineage), §10.1–10.2 (listing, preview) and §3.4
//! (statistics), on writable and read-only connections. The facade crate is
//! deliberately not used: the query crate must be usable and tested alone.
#![allow(missing_docs)]

// The crate root is `tests/reads.rs`, so modules are found in `tests/` unless told.

#[path = "reads/common.rs"]
mod common;

#[path = "reads/compat.rs"]
mod compat;
#[path = "reads/lineage.rs"]
mod lineage;
#[path = "reads/listing.rs"]
mod listing;
#[path = "reads/read_only.rs"]
mod read_only;
#[path = "reads/shapes.rs"]
mod shapes;
#[path = "reads/stats.rs"]
mod stats;
#[path = "reads/titles.rs"]
mod titles;
