//! The errors the command line reports: one line on stderr, and an exit code.

use std::fmt;
use std::path::Path;

use hermes_state::ErrorKind;

/// Exit code of a failed operation.
pub const EXIT_FAILED: u8 = 1;
/// Exit code of a command-line usage error (clap uses it too).
pub const EXIT_USAGE: u8 = 2;
/// Exit code of a command the user interrupted (Ctrl-C in `search -i`):
/// 128 + SIGINT, what a shell reports for a program SIGINT stopped.
pub const EXIT_INTERRUPTED: u8 = 130;

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
        }
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            code: EXIT_USAGE,
            message: message.into(),
            hint: None,
            broken_pipe: false,
        }
    }

    /// Adds what to do.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// A library error while doing `what` on the store at `path`.
    ///
    /// The message names the file once, and says what to do once: the
    /// library's own advice (part of some errors' text, e.g. "Open it
    /// read-only") is not repeated by a hint of ours.
    pub fn store(what: &str, path: &Path, error: &hermes_state::Error) -> Self {
        if error.kind() == ErrorKind::SchemaTooNew {
            return CliError::schema_too_new(what, path, error);
        }
        let detail = error.to_string();
        let shown = path.display().to_string();
        let message = if what.contains(&shown) {
            // "cannot open X" + "X: …" would name the file twice.
            let detail = detail
                .strip_prefix(&format!("{shown}: "))
                .unwrap_or(&detail);
            format!("{what}: {detail}")
        } else if detail.contains(&shown) {
            format!("{what}: {detail}")
        } else {
            format!("{what}: {detail} (in {shown})")
        };
        let hint = match error.next_step() {
            Some(step) => Some(step.to_owned()),
            None => kind_hint(error.kind(), &detail),
        };
        CliError {
            code: EXIT_FAILED,
            message,
            hint,
            broken_pipe: false,
        }
    }

    /// A store written by a newer Hermes release, met by a writing command.
    ///
    /// The library's text of this error carries its own advice ("Open it
    /// read-only, or upgrade hermes-state"), and the kind hint used to add
    /// the same advice again; this builds the one line from the error's
    /// fields instead, and names what still works: every reading command,
    /// which opens the store read-only anyway.
    fn schema_too_new(what: &str, path: &Path, error: &hermes_state::Error) -> Self {
        use hermes_state::SchemaError;
        let shown = path.display().to_string();
        let found = match error.downcast_backend::<SchemaError>() {
            Some(SchemaError::SchemaTooNew {
                what: found,
                supported,
                ..
            }) => format!(" ({found}; this hermes-state writes schema version {supported})"),
            _ => String::new(),
        };
        CliError {
            code: EXIT_FAILED,
            message: format!(
                "{what}: {shown} was written by a newer Hermes release{found}, so this hermes-state cannot write to it"
            ),
            hint: Some(
                "reading commands (sessions list/show, search, stats, export, backup, doctor, schema) still work on it; upgrade hermes-state to write".to_owned(),
            ),
            broken_pipe: false,
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
        }
    }

    /// The user interrupted the command (Ctrl-C in `search -i`, which reads
    /// it as a key): exit 130 and no message, as a program SIGINT stopped.
    pub fn interrupted() -> Self {
        CliError {
            code: EXIT_INTERRUPTED,
            message: String::new(),
            hint: None,
            broken_pipe: false,
        }
    }

    /// Stdout was closed under us.
    pub fn broken_pipe() -> Self {
        CliError {
            code: 0,
            message: String::new(),
            hint: None,
            broken_pipe: true,
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
        // The library's text often says "damaged" already: not twice.
        ErrorKind::Corrupt if detail.contains("damaged") => {
            "run `hermes-state doctor` to see what is wrong (`doctor --repair` fixes the indexes, counters and links; restore a backup for the rest)"
        }
        ErrorKind::Corrupt => {
            "the file is damaged; run `hermes-state doctor` to see what is wrong (`doctor --repair` fixes the indexes, counters and links; restore a backup for the rest)"
        }
        ErrorKind::NotADatabase => {
            "is this the right file? --db must name a Hermes state.db (default ~/.hermes/state.db)"
        }
        ErrorKind::ReadOnly if detail.contains("opened read-only") => {
            "this command writes; drop --read-only"
        }
        ErrorKind::ReadOnly => "the file or its folder cannot be written; check the permissions",
        ErrorKind::NotFound => "list sessions with `hermes-state sessions list`",
        ErrorKind::Constraint if detail.contains("already in use") => {
            "choose another title (`hermes-state title next TITLE` suggests one)"
        }
        ErrorKind::Io => "check that the path exists and can be read and written",
        _ => return None,
    };
    Some(hint.to_owned())
}
