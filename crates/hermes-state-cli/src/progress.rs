//! Progress bars for long work, drawn on stderr only when it is a terminal
//! and neither `--json` nor `-q` was given. Otherwise every call is a no-op.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::output::Output;

/// The byte bar's layout: binary sizes (KiB, MiB) and the rate, never raw counts.
const BYTES_TEMPLATE: &str = "{msg} [{bar:30.cyan/blue}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ({eta} left)";

/// A bar with a known length, a spinner, or nothing.
#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar counting `len` units of work.
    pub fn bar(out: &Output, len: u64, message: &str, unit: &str) -> Self {
        if !out.progress_allowed() {
            return Progress { bar: None };
        }
        let template =
            format!("{{msg}} [{{bar:30.cyan/blue}}] {{pos}}/{{len}} {unit} ({{eta}} left)");
        let style = ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr())
            .with_style(style)
            .with_message(message.to_owned());
        Progress { bar: Some(bar) }
    }

    /// A bar over `len` bytes, shown in human sizes with the rate:
    /// `importing [=====>    ] 12.5 MiB/40.0 MiB 8.1 MiB/s (3s left)`.
    pub fn bytes(out: &Output, len: u64, message: &str) -> Self {
        if !out.progress_allowed() {
            return Progress { bar: None };
        }
        let style = ProgressStyle::with_template(BYTES_TEMPLATE)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr())
            .with_style(style)
            .with_message(message.to_owned());
        Progress { bar: Some(bar) }
    }

    /// A spinner for work whose length is unknown (one library call).
    pub fn spinner(out: &Output, message: &str) -> Self {
        if !out.progress_allowed() {
            return Progress { bar: None };
        }
        let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
            .with_style(style)
            .with_message(message.to_owned());
        bar.enable_steady_tick(Duration::from_millis(100));
        Progress { bar: Some(bar) }
    }

    /// This many more units done.
    pub fn inc_by(&self, delta: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(delta);
        }
    }

    /// Units done so far.
    pub fn set_position(&self, done: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
        }
    }

    /// Changes the amount of work.
    pub fn set_length(&self, len: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(len);
        }
    }

    /// Changes the message.
    pub fn set_message(&self, message: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(message.to_owned());
        }
    }

    /// Removes the bar from the screen.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_byte_bar_shows_human_sizes_and_a_rate() {
        let style = ProgressStyle::with_template(BYTES_TEMPLATE);
        assert!(style.is_ok());
        assert!(BYTES_TEMPLATE.contains("{binary_bytes}"));
        assert!(BYTES_TEMPLATE.contains("_per_sec}"));
    }
}
