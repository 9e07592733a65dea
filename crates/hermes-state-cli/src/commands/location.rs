//! `where` (alias `path`): where the store is, for scripts and for people
//! who want to open it with another tool (`sqlite3 "$(hermes-state where)"`),
//! as `llm logs path` and `atuin info` do. Opens nothing.

use std::path::Path;

use serde_json::json;

use crate::error::{CliError, CliResult};
use crate::output::Output;
use crate::store::Context;

/// `where`
pub fn show(ctx: &Context) -> CliResult {
    match &ctx.server {
        Some(url) => server(&ctx.out, url),
        None => file(&ctx.out, &ctx.path),
    }
}

/// A file store: its absolute path (whether the file exists yet is said in
/// JSON and, when it does not, in a note).
fn file(out: &Output, path: &Path) -> CliResult {
    let absolute = std::path::absolute(path)
        .map_err(|error| CliError::failed(format!("{}: {error}", path.display())))?;
    // tidy: not the live database (whether the path exists; nothing is opened)
    let exists = absolute.exists();
    if out.json {
        return out.json(&json!({
            "backend": "sqlite",
            "location": absolute.display().to_string(),
            "exists": exists,
        }));
    }
    if !exists {
        out.note("note: no store there yet; the agent (or `hermes-state demo`) creates it");
    }
    out.line(absolute.display().to_string())
}

/// A PostgreSQL store: its URL as every output shows it (no password, in
/// whatever form it was given).
fn server(out: &Output, url: &hermes_state::PostgresUrl) -> CliResult {
    let shown = url.redacted();
    if out.json {
        return out.json(&json!({"backend": "postgres", "location": shown}));
    }
    out.line(shown)
}
