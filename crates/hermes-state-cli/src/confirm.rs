//! Consent for commands that delete (`prune`, `sessions delete`,
//! `sessions clear`, `import --overwrite`).
//!
//! On a terminal the command asks (on stderr, answered on stdin); anywhere
//! else it needs `--yes`. A script that forgot `--yes` stops with a usage
//! error (exit 2) *before the store is opened*, whatever the store holds, so
//! the mistake shows on the first run and never depends on how many sessions
//! happened to match.

use std::io::{self, BufRead, IsTerminal, Write};

use crate::error::{CliError, CliResult};
use crate::store::Context;

/// How many ids a summary names before it only counts the rest.
const SHOWN_IDS: usize = 10;

/// Whether, and how, a destructive command may go ahead.
#[derive(Debug, Clone, Copy)]
pub struct Consent {
    /// `--yes`: go ahead without asking.
    yes: bool,
    /// Stdin is a terminal, so the user can be asked.
    interactive: bool,
}

impl Consent {
    /// The consent `--yes` gives, asking on a terminal when it was not given.
    pub fn new(yes: bool) -> Self {
        Consent {
            yes,
            interactive: io::stdin().is_terminal(),
        }
    }

    /// Whether the user has to be asked (no `--yes`, stdin a terminal).
    pub fn must_ask(&self) -> bool {
        !self.yes
    }

    /// Fails (exit 2) when nobody can be asked and `--yes` is missing.
    /// Call it before opening the store: nothing is touched on failure.
    /// Under `--read-only` it lets the open refuse the command instead, the
    /// more fundamental mistake.
    pub fn require(&self, ctx: &Context) -> CliResult {
        if ctx.read_only {
            return Ok(());
        }
        self.require_for(&ctx.command)
    }

    fn require_for(&self, command: &str) -> CliResult {
        if self.yes || self.interactive {
            return Ok(());
        }
        Err(CliError::usage(format!(
            "{command} deletes data and stdin is not a terminal to confirm it; pass --yes to go ahead"
        )))
    }

    /// Asks `question` (`[y/N]`) unless `--yes` was given; declining is a
    /// failure (exit 1) that says nothing was deleted.
    pub fn ask(&self, ctx: &Context, question: &str) -> CliResult {
        self.ask_for(&ctx.command, question)
    }

    fn ask_for(&self, command: &str, question: &str) -> CliResult {
        if self.yes {
            return Ok(());
        }
        self.require_for(command)?;
        let mut err = io::stderr().lock();
        write!(err, "{question} [y/N] ")?;
        err.flush()?;
        drop(err);
        let mut answer = String::new();
        io::stdin()
            .lock()
            .read_line(&mut answer)
            .map_err(|e| CliError::failed(format!("{command}: cannot read the answer: {e}")))?;
        if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            Ok(())
        } else {
            Err(CliError::failed(format!(
                "{command}: not confirmed; nothing was deleted"
            )))
        }
    }
}

/// "1 session (a)", "3 sessions (a, b, c)", and past ten ids
/// "25 sessions (first 10 ids a, …, j; 15 more)": a line stays readable
/// however many sessions a prune takes.
pub fn sessions_summary<S: AsRef<str>>(ids: &[S]) -> String {
    let noun = if ids.len() == 1 {
        "session"
    } else {
        "sessions"
    };
    format!("{} {noun} ({})", ids.len(), id_list(ids))
}

/// "a, b, c", and past ten ids "first 10 ids a, …, j; 15 more".
pub fn id_list<S: AsRef<str>>(ids: &[S]) -> String {
    let shown: Vec<&str> = ids.iter().take(SHOWN_IDS).map(AsRef::as_ref).collect();
    if ids.len() <= SHOWN_IDS {
        shown.join(", ")
    } else {
        format!(
            "first {SHOWN_IDS} ids {}; {} more",
            shown.join(", "),
            ids.len() - SHOWN_IDS
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_names_at_most_ten_ids() {
        assert_eq!(sessions_summary(&["a"]), "1 session (a)");
        assert_eq!(sessions_summary(&["a", "b"]), "2 sessions (a, b)");
        let ids: Vec<String> = (0..25).map(|i| format!("s{i}")).collect();
        let summary = sessions_summary(&ids);
        assert!(summary.starts_with("25 sessions (first 10 ids s0, s1,"));
        assert!(summary.ends_with("s9; 15 more)"));
        assert!(!summary.contains("s10"));
    }

    #[test]
    fn yes_needs_no_terminal() {
        let consent = Consent {
            yes: true,
            interactive: false,
        };
        assert!(consent.require_for("prune").is_ok());
        assert!(consent.ask_for("prune", "prune?").is_ok());
        let refused = Consent {
            yes: false,
            interactive: false,
        }
        .require_for("prune")
        .unwrap_err();
        assert_eq!(refused.code, 2);
        assert!(refused.to_string().contains("--yes"));
    }
}
