//! The integration tests of the types crate, in one binary, as in every crate
//! of the workspace: one module per subject.
#![allow(missing_docs)]

mod pyjson;
