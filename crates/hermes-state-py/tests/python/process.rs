//! Running the tools of the virtual environment, with their output kept
//! for the failure message.

use std::path::Path;
use std::process::{Command, Output};

/// Runs `command`; its output when it succeeded, else a panic showing what
/// ran and everything it printed.
pub fn run(command: &mut Command, what: &str) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{what}: could not start {command:?}: {error}"));
    if !output.status.success() {
        panic!(
            "{what} failed ({}): {command:?}\n--- stdout\n{}\n--- stderr\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    output
}

/// The variables cargo sets for a test binary: a nested cargo (maturin's
/// build) must not take them for its own package.
pub fn without_cargo_test_variables(command: &mut Command) -> &mut Command {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        let belongs_to_this_test = name == "CARGO"
            || name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_")
            || name.starts_with("CARGO_CRATE_")
            || name.starts_with("CARGO_MANIFEST_")
            || name.starts_with("CARGO_PRIMARY_")
            || name == "CARGO_TARGET_TMPDIR"
            || name == "RUST_TEST_THREADS";
        if belongs_to_this_test {
            command.env_remove(name.as_ref());
        }
    }
    command
}

/// A Python interpreter's `bin` directory inside a virtual environment.
pub fn venv_bin(venv: &Path, tool: &str) -> std::path::PathBuf {
    venv.join("bin").join(tool)
}
