//! Where the store lives by default (`schema-v23.md` §1).

use std::path::PathBuf;

use crate::error::{Error, Result};

/// The file name of the store inside the Hermes home.
pub const DB_FILE_NAME: &str = "state.db";

/// The Hermes home: `$HERMES_HOME` when it is non-empty after trimming (used
/// verbatim: no `~` expansion, a relative value is relative to the working
/// directory), else `~/.hermes` (on Windows `%LOCALAPPDATA%\hermes`).
pub fn hermes_home() -> Result<PathBuf> {
    if let Some(value) = std::env::var_os("HERMES_HOME") {
        let text = value.to_string_lossy();
        let trimmed = text.trim();
        if !trimmed.is_empty() {
            return Ok(PathBuf::from(trimmed));
        }
    }
    platform_home()
}

#[cfg(not(windows))]
fn platform_home() -> Result<PathBuf> {
    home::home_dir()
        .map(|home| home.join(".hermes"))
        .ok_or_else(|| Error::InvalidInput("no home directory found; set HERMES_HOME".to_owned()))
}

#[cfg(windows)]
fn platform_home() -> Result<PathBuf> {
    if let Some(local) = std::env::var_os("LOCALAPPDATA").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(local).join("hermes"));
    }
    home::home_dir()
        .map(|home| home.join("AppData").join("Local").join("hermes"))
        .ok_or_else(|| Error::InvalidInput("no home directory found; set HERMES_HOME".to_owned()))
}

/// The default store path: `<hermes home>/state.db`.
pub fn default_db_path() -> Result<PathBuf> {
    Ok(hermes_home()?.join(DB_FILE_NAME))
}
