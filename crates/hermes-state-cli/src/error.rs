//! The errors the command line reports: one line on stderr, and an exit code.

use std::fmt;
use std::path::Path;

use hermes_state::ErrorKind;

/// Exit code of a failed operation.
pub const EXIT_FAILED: u8 = 1;
/// Exit code of a command-line usage error (clap uses it too).
pub const EXIT_USAGE: u8 = 2;

/// A failure: what went wrong, what to do, and the exit code.
#[derive(Debug)]
pub struct CliError {
    /// The exit code.
    pub code: u8,
    /// What went wrong (and on which file).
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// The output pipe was closed (e.g. `| head`): not an error worth a message.
    pub broken_pipe: bool,
    /// The library's error kind, for errors of the store.
    pub kind: Option<ErrorKind>,
}

/// `Result` with a [`CliError`].
pub type CliResult<T = ()> = Result<T, CliError>;

impl CliError {
    /// A failed operation (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        CliError {
            code: EXIT_FAILED,
            message: message.into(),
            hint: None,
            broken_pipe: false,
            kind: None,
        }
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            code: EXIT_USAGE,
            message: message.into(),
            hint: None,
            broken_pipe: false,
            kind: None,
        }
    }

    /// Adds what to do.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// A library error while doing `what` on the store at `path`.
    pub fn store(what: &str, path: &Path, error: &hermes_state::Error) -> Self {
        let detail = error.to_string();
        let shown = path.display().to_string();
        let message = if detail.contains(&shown) || what.contains(&shown) {
            format!("{what}: {detail}")
        } else {
            format!("{what}: {detail} (in {shown})")
        };
        let hint = kind_hint(error.kind(), &detail);
        CliError {
            code: EXIT_FAILED,
            message,
            hint,
            broken_pipe: false,
            kind: Some(error.kind()),
        }
    }

    /// An I/O error on a file other than the store.
    pub fn io(what: &str, path: &Path, error: &std::io::Error) -> Self {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            return CliError::broken_pipe();
        }
        let hint = match error.kind() {
            std::io::ErrorKind::PermissionDenied => Some("check the file's permissions".to_owned()),
            std::io::ErrorKind::NotFound => Some("check the path".to_owned()),
            _ => None,
        };
        CliError {
            code: EXIT_FAILED,
            message: format!("{what} {}: {error}", path.display()),
            hint,
            broken_pipe: false,
            kind: None,
        }
    }

    /// Stdout was closed under us.
    pub fn broken_pipe() -> Self {
        CliError {
            code: 0,
            message: String::new(),
            hint: None,
            broken_pipe: true,
            kind: None,
        }
    }

    /// Writing the output failed.
    pub fn output(error: &std::io::Error) -> Self {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            return CliError::broken_pipe();
        }
        CliError::failed(format!("writing the output: {error}"))
    }
}

impl From<std::io::Error> for CliError {
    fn from(error: std::io::Error) -> Self {
        CliError::output(&error)
    }
}

impl fmt::Display for CliError {
    /// `error: <what>: <detail>; <hint>`, on one line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let one_line = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        write!(f, "error: {}", one_line(&self.message))?;
        if let Some(hint) = &self.hint {
            write!(f, "; {}", one_line(hint))?;
        }
        Ok(())
    }
}

fn kind_hint(kind: ErrorKind, detail: &str) -> Option<String> {
    let hint = match kind {
        ErrorKind::Busy => "another process holds the database; retry in a moment",
        ErrorKind::Corrupt => {
            "the file is damaged; run `hermes-state doctor`, and restore a backup if it cannot repair it"
        }
        ErrorKind::NotADatabase => {
            "is this the right file? --db must name a Hermes state.db (default ~/.hermes/state.db)"
        }
        ErrorKind::ReadOnly if detail.contains("opened read-only") => {
            "this command writes; drop --read-only"
        }
        ErrorKind::ReadOnly => "the file or its folder cannot be written; check the permissions",
        ErrorKind::SchemaTooNew => {
            "a newer Hermes wrote this store; use --read-only to read it, or upgrade hermes-state"
        }
        ErrorKind::NotFound => "list sessions with `hermes-state sessions list`",
        ErrorKind::Constraint if detail.contains("already in use") => {
            "choose another title (`hermes-state title next TITLE` suggests one)"
        }
        ErrorKind::Io => "check that the path exists and can be read and written",
        _ => return None,
    };
    Some(hint.to_owned())
}
