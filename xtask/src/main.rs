//! Development tasks: `cargo xtask <task>`.
//!
//! * `cargo xtask tidy` — the workspace's tidy checks (layering, one SQLite,
//!   no `std::fs` on the live database). Its `#[test]`s run them, so
//!   `cargo test` is the whole gate.
//! * `cargo xtask fixtures --out DIR [--version N]` — writes the historical
//!   `state.db` fixtures (`docs/FIXTURES.md`) and `DIR/manifest.json`.

mod tidy;

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use xtask::fixtures;

const USAGE: &str = "usage: cargo xtask tidy\n       cargo xtask fixtures --out DIR [--version N]";

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
        Some("fixtures") => fixtures_command(&args[1..]),
        _ => bail!("{USAGE}"),
    }
}

fn fixtures_command(args: &[String]) -> Result<()> {
    let mut out: Option<PathBuf> = None;
    let mut version: Option<u32> = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--out" => out = Some(rest.next().context("--out needs a directory")?.into()),
            "--version" => {
                let value = rest.next().context("--version needs a number")?;
                version = Some(
                    value
                        .parse()
                        .with_context(|| format!("bad version {value}"))?,
                );
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    let Some(out) = out else {
        bail!("{USAGE}");
    };
    if let Some(v) = version
        && !fixtures::all_shapes()
            .iter()
            .any(|s| s.schema_version() == v)
    {
        bail!("no fixture is stamped {v}");
    }
    let manifests = fixtures::write_all(&out, version)
        .with_context(|| format!("writing fixtures into {}", out.display()))?;
    let json = serde_json::json!({
        "generator": "cargo xtask fixtures",
        "fixtures": manifests.iter().map(fixtures::FixtureManifest::to_json).collect::<Vec<_>>(),
    });
    let manifest_path = out.join("manifest.json");
    std::fs::write(&manifest_path, serde_json::to_string_pretty(&json)? + "\n")
        .with_context(|| format!("writing {}", manifest_path.display()))?;
    let mut stdout = std::io::stdout().lock();
    for manifest in &manifests {
        writeln!(
            stdout,
            "{}  schema_version={} fts={} sessions={} messages={}",
            out.join(&manifest.file_name).display(),
            manifest.schema_version,
            manifest.fts.name(),
            manifest.sessions.len(),
            manifest.messages.len()
        )?;
    }
    writeln!(stdout, "{}", manifest_path.display())?;
    Ok(())
}
