//! The integration tests of the contract crate, in one binary: a module
//! per subject.

mod error;
mod export_codec;
