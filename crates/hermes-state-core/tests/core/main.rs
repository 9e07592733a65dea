//! The integration tests of the contract crate, in one binary: a module
//! per subject.

mod affinity;
mod conversation;
mod error;
mod export_codec;
mod fts5_syntax;
mod import_links;
mod origin_session;
mod original_json;
mod paging;
mod sanitize;
mod search;
mod time_window;
mod titles;
mod usage_window;
