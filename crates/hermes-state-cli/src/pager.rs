//! Long human output through a pager when stdout is a terminal: `$PAGER`
//! (split on whitespace, no shell), else `less -FRX` (quit when the text
//! fits one screen, keep the colours, leave the text on the screen).
//! Piped output is never paged, and a pager that cannot start is no error:
//! the text is printed as it would have been without one.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::error::CliResult;
use crate::output::Output;

/// The pager used when `$PAGER` is unset.
const DEFAULT_PAGER: &[&str] = &["less", "-FRX"];

/// The pager's command line: `$PAGER`, else the default; `None` when `$PAGER`
/// is set but blank (the user's way of saying "no pager").
fn pager_command(pager: Option<&str>) -> Option<Vec<String>> {
    match pager {
        None => Some(DEFAULT_PAGER.iter().map(|s| (*s).to_owned()).collect()),
        Some(text) => {
            let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
            (!words.is_empty()).then_some(words)
        }
    }
}

/// Prints `text`, through the pager when stdout is a terminal and `paging`.
pub fn page(out: &Output, text: &str, paging: bool) -> CliResult {
    if !paging || !out.stdout_tty {
        return out.text(text);
    }
    let pager = std::env::var("PAGER").ok();
    let Some(words) = pager_command(pager.as_deref()) else {
        return out.text(text);
    };
    let spawned = Command::new(&words[0])
        .args(&words[1..])
        .stdin(Stdio::piped())
        .spawn();
    let Ok(mut child) = spawned else {
        return out.text(text);
    };
    if let Some(mut stdin) = child.stdin.take() {
        // The user may quit the pager before reading everything: a closed
        // pipe here is the normal end, not an error.
        let _ = stdin.write_all(text.as_bytes());
    }
    let _ = child.wait();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::pager_command;

    #[test]
    fn the_pager_is_pager_split_on_whitespace_else_less() {
        assert_eq!(
            pager_command(None),
            Some(vec!["less".to_owned(), "-FRX".to_owned()])
        );
        assert_eq!(
            pager_command(Some("most -s")),
            Some(vec!["most".to_owned(), "-s".to_owned()])
        );
        assert_eq!(pager_command(Some("  ")), None);
        assert_eq!(pager_command(Some("")), None);
    }
}
