//! Development tasks: `cargo xtask <task>`.
//!
//! Its `#[test]`s are the workspace's tidy checks (layering, one SQLite, no
//! `std::fs` on the live database), so `cargo test` is the whole gate.

mod tidy;

use anyhow::{Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("tidy") => {
            let problems = tidy::check_all()?;
            if problems.is_empty() {
                return Ok(());
            }
            bail!("tidy found problems:\n{}", problems.join("\n"))
        }
        _ => bail!("usage: cargo xtask tidy"),
    }
}
