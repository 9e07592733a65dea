//! Printing: human text or JSON on stdout, notes on stderr.
//!
//! Nothing here panics on a closed pipe (`hermes-state export | head`): every
//! write returns an error that `main` turns into a quiet exit.

use std::io::{self, IsTerminal, Write};

use serde_json::Value;

use crate::error::{CliError, CliResult};
use crate::local_time;

/// Where and how results are printed.
#[derive(Debug, Clone, Copy)]
pub struct Output {
    /// `--json`.
    pub json: bool,
    /// `-q`.
    pub quiet: bool,
    /// `-v` count.
    pub verbose: u8,
    /// Stdout is a terminal.
    pub stdout_tty: bool,
    /// Stderr is a terminal.
    pub stderr_tty: bool,
    /// ANSI styles on stdout (a terminal, and `NO_COLOR` unset).
    pub color: bool,
}

impl Output {
    /// Detects the terminals.
    pub fn new(json: bool, quiet: bool, verbose: u8) -> Self {
        let stdout_tty = io::stdout().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Output {
            json,
            quiet,
            verbose,
            stdout_tty,
            stderr_tty: io::stderr().is_terminal(),
            color: stdout_tty && !no_color,
        }
    }

    /// Whether progress bars may be drawn: stderr is a terminal, no `--json`, no `-q`.
    pub fn progress_allowed(&self) -> bool {
        self.stderr_tty && !self.json && !self.quiet
    }

    /// Prints one JSON document: pretty on a terminal, one line when piped.
    pub fn json(&self, value: &Value) -> CliResult {
        let mut out = io::stdout().lock();
        let written = if self.stdout_tty {
            serde_json::to_writer_pretty(&mut out, value)
        } else {
            serde_json::to_writer(&mut out, value)
        };
        written.map_err(json_error)?;
        writeln!(out)?;
        out.flush()?;
        Ok(())
    }

    /// Prints human text (a trailing newline is added).
    pub fn line(&self, text: impl AsRef<str>) -> CliResult {
        let mut out = io::stdout().lock();
        writeln!(out, "{}", text.as_ref())?;
        Ok(())
    }

    /// Prints a block of human text as is.
    pub fn text(&self, text: impl AsRef<str>) -> CliResult {
        let mut out = io::stdout().lock();
        out.write_all(text.as_ref().as_bytes())?;
        out.flush()?;
        Ok(())
    }

    /// A confirmation or note on stderr, unless `-q` or `--json`.
    pub fn note(&self, text: impl AsRef<str>) {
        if !self.quiet && !self.json {
            let _ = writeln!(io::stderr().lock(), "{}", text.as_ref());
        }
    }

    /// A message on stderr with `-v` only.
    pub fn verbose(&self, text: impl AsRef<str>) {
        if self.verbose > 0 {
            let _ = writeln!(io::stderr().lock(), "{}", text.as_ref());
        }
    }

    /// Text in bold, when styles are on.
    pub fn bold(&self, text: &str) -> String {
        self.style("1", text)
    }

    /// Dimmed text, when styles are on.
    pub fn dim(&self, text: &str) -> String {
        self.style("2", text)
    }

    /// Text in a colour (an ANSI SGR code), when styles are on.
    pub fn style(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// A search snippet: on a terminal, the `>>>`…`<<<` markers become bold
    /// yellow; piped, the markers stay as the library returns them.
    pub fn snippet(&self, snippet: &str) -> String {
        let flat = one_line(snippet);
        if self.color {
            flat.replace(">>>", "\x1b[1;33m").replace("<<<", "\x1b[0m")
        } else {
            flat
        }
    }
}

pub fn json_error(error: serde_json::Error) -> CliError {
    if error.io_error_kind() == Some(io::ErrorKind::BrokenPipe) {
        CliError::broken_pipe()
    } else {
        CliError::failed(format!("writing JSON: {error}"))
    }
}

/// Writes one JSON value as a line (JSON Lines).
pub fn write_json_line<W: Write>(out: &mut W, value: &Value) -> CliResult {
    serde_json::to_writer(&mut *out, value).map_err(json_error)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Text on one line: runs of whitespace (newlines included) become one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` characters, with `…` when cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Pads (or cuts) to `width` characters.
pub fn pad(text: &str, width: usize) -> String {
    let short = shorten(text, width);
    let count = short.chars().count();
    format!("{short}{}", " ".repeat(width.saturating_sub(count)))
}

/// Unix seconds as `YYYY-MM-DD HH:MM` in the zone of human output
/// (local, or UTC with `--utc`: [`crate::local_time`]).
pub fn datetime(timestamp: f64) -> String {
    let (date, time) = local_time::civil(timestamp);
    format!("{date} {}", &time[..5])
}

/// Unix seconds as `YYYY-MM-DD HH:MM:SS` in the zone of human output.
pub fn datetime_seconds(timestamp: f64) -> String {
    let (date, time) = local_time::civil(timestamp);
    format!("{date} {time}")
}

/// [`datetime`] followed by the zone's name: `2026-07-24 19:00 JST`.
pub fn when(timestamp: f64) -> String {
    format!("{} {}", datetime(timestamp), local_time::label(timestamp))
}

/// [`datetime_seconds`] followed by the zone's name.
pub fn when_seconds(timestamp: f64) -> String {
    format!(
        "{} {}",
        datetime_seconds(timestamp),
        local_time::label(timestamp)
    )
}

/// A compact `YYYYMMDD_HHMMSS` stamp (UTC, whatever the display zone) for
/// new session ids.
pub fn id_stamp(timestamp: f64) -> String {
    let (date, time) = local_time::utc_civil(timestamp);
    format!("{}_{}", date.replace('-', ""), time.replace(':', ""))
}

/// A count with thousands separators.
pub fn count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// A cost in dollars, or `-`.
pub fn cost(value: Option<f64>) -> String {
    match value {
        Some(v) if v != 0.0 => format!("${v:.4}"),
        Some(_) => "$0".to_owned(),
        None => "-".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_civil_dates() {
        assert_eq!(datetime_seconds(0.0), "1970-01-01 00:00:00");
        assert_eq!(datetime_seconds(951_782_400.0), "2000-02-29 00:00:00");
        assert_eq!(datetime(1_784_894_400.5), "2026-07-24 12:00");
        assert_eq!(id_stamp(1_784_894_400.0), "20260724_120000");
    }

    #[test]
    fn counts_and_cuts() {
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(count(12), "12");
        assert_eq!(shorten("abcdef", 4), "abc…");
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(one_line(" a\n b\t c "), "a b c");
    }
}
