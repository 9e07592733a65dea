//! The integration tests of the query crate, in one binary: every test binary
//! is a link of its own. One module per subject; `common` holds the store
//! builder the read tests share.
#![allow(missing_docs)]

mod common;

mod affinity;
mod conversation_search;
mod fts5_syntax;
mod partial_search;
mod reads;
mod sanitize;
