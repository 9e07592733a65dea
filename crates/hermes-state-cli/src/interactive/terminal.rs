//! The terminal while the interactive search runs: raw mode and the
//! alternate screen, always given back, and the clipboard escape.
//!
//! [`TerminalGuard`] restores the terminal when it is dropped, which covers
//! a normal end, an error returned with `?` and a panic that unwinds; a
//! panic hook restores it before the panic's message is printed, so that
//! message lands on the normal screen, in cooked mode, where it can be read.

use std::io::{self, IsTerminal, Write};
use std::sync::Once;

use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

use crate::error::{CliError, CliResult};

/// The controlling terminal, for drawing when stdout is captured
/// (`id=$(hermes-state search -i)`), as fzf and atuin draw there.
fn controlling_terminal() -> io::Result<std::fs::File> {
    // tidy: not the live database (the controlling terminal)
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")?;
    if tty.is_terminal() {
        Ok(tty)
    } else {
        Err(io::Error::other("/dev/tty is not a terminal"))
    }
}

/// While it lives, stdout (fd 1) is the controlling terminal when it was
/// not a terminal itself: the search (and everything the terminal library
/// writes to stdout, its cursor queries included) is drawn on the screen,
/// and dropping it puts the captured stdout back for the choice.
pub struct StdoutOnTerminal {
    saved: Option<std::os::fd::OwnedFd>,
}

impl StdoutOnTerminal {
    /// Moves stdout onto the controlling terminal if it is not one.
    pub fn redirect() -> CliResult<StdoutOnTerminal> {
        use std::os::fd::AsFd;
        if io::stdout().is_terminal() {
            return Ok(StdoutOnTerminal { saved: None });
        }
        let fail = |what: &str, error: io::Error| terminal_error(what, &error);
        let tty = controlling_terminal().map_err(|e| fail("opening /dev/tty", e))?;
        io::stdout()
            .flush()
            .map_err(|e| fail("flushing stdout", e))?;
        let saved =
            rustix::io::dup(io::stdout().as_fd()).map_err(|e| fail("keeping stdout", e.into()))?;
        rustix::stdio::dup2_stdout(tty.as_fd())
            .map_err(|e| fail("drawing on the terminal", e.into()))?;
        Ok(StdoutOnTerminal { saved: Some(saved) })
    }
}

impl Drop for StdoutOnTerminal {
    fn drop(&mut self) {
        if let Some(saved) = self.saved.take() {
            let _ = io::stdout().flush();
            let _ = rustix::stdio::dup2_stdout(&saved);
        }
    }
}

/// Refuses to start unless keys come from a terminal (stdin) and there is
/// one to draw on: stdout, or the controlling terminal when stdout is
/// captured (`$(…)`).
pub fn require_terminal() -> CliResult {
    let stdin = io::stdin().is_terminal();
    let stdout = io::stdout().is_terminal() || controlling_terminal().is_ok();
    if stdin && stdout {
        return Ok(());
    }
    let which = match (stdin, stdout) {
        (false, false) => "stdin is not a terminal and there is none to draw on",
        (false, true) => "stdin is not a terminal",
        _ => "there is no terminal to draw on (stdout is not one, and /dev/tty cannot be opened)",
    };
    Err(
        CliError::usage(format!("search -i is interactive, but {which}")).hint(
            "run it in a terminal; to search from a script or a pipe, drop -i \
             (`hermes-state search QUERY`, with --format json for machines)",
        ),
    )
}

/// Raw mode and the alternate screen, for as long as it lives.
#[derive(Debug)]
pub struct TerminalGuard(());

impl TerminalGuard {
    /// Switches the terminal to raw mode and the alternate screen.
    pub fn enter() -> CliResult<Self> {
        install_panic_hook();
        enable_raw_mode().map_err(|e| terminal_error("entering raw mode", &e))?;
        // From here on, dropping the guard undoes what was done.
        let guard = TerminalGuard(());
        execute!(io::stdout(), EnterAlternateScreen)
            .map_err(|e| terminal_error("switching to the alternate screen", &e))?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Gives the terminal back: the normal screen, the cursor shown, cooked
/// mode. Harmless when done twice (the hook, then the guard).
fn restore() {
    let _ = execute!(io::stdout(), LeaveAlternateScreen, Show);
    let _ = disable_raw_mode();
}

/// Chains a hook that restores the terminal before the one `main` set
/// (which prints the one-line internal error).
fn install_panic_hook() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
    });
}

/// A terminal operation that failed.
pub fn terminal_error(what: &str, error: &io::Error) -> CliError {
    CliError::failed(format!("search -i: {what}: {error}"))
}

/// Asks the terminal to put `text` on the system clipboard with the OSC 52
/// escape (`ESC ] 52 ; c ; BASE64 BEL`). Terminals that support it (and
/// tmux with `set-clipboard on`) set the clipboard; others ignore it.
pub fn copy_to_clipboard(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    write!(out, "{}", osc52(text))?;
    out.flush()
}

/// The OSC 52 escape that sets the clipboard to `text`.
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

/// Standard base64 (RFC 4648, padded): OSC 52's encoding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut encoded = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                encoded.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                encoded.push('=');
            }
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_test_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain:?}");
        }
    }

    #[test]
    fn the_clipboard_escape_carries_the_id_in_base64() {
        assert_eq!(
            osc52("20261130_232649_28d76c"),
            "\x1b]52;c;MjAyNjExMzBfMjMyNjQ5XzI4ZDc2Yw==\x07"
        );
    }
}
