//! The `hermes-state` command line (being written).
fn main() {}
