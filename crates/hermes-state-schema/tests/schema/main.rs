//! The integration tests of the schema crate, in one binary: every test
//! binary is a link of its own.
//!
//! The v23 schema this crate writes, checked against the specification
//! (`schema-v23.md` §2–§9, `migrations.md` §1–§3): every expected value in
//! [`spec`] was transcribed from the specification text. One module per
//! subject, `common` for the helpers they share; `cjk` tests the tokenizer,
//! `optimize` the FTS storage conversion and background rebuild.
#![allow(missing_docs)]

mod common;
mod spec;

mod baseline;
mod cjk;
mod cjk_hostile;
mod cjk_rule;
mod existing_files;
mod fresh;
mod malformed;
mod newer_and_foreign_files;
mod optimize;
mod permissions;
mod reconciler;
