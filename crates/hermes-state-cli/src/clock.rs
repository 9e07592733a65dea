//! "Now" for the command line: the system clock, unless `HERMES_STATE_NOW`
//! (Unix seconds) fixes it.
//!
//! The variable exists for tests and reproducible examples (docs/CLI.md,
//! "Fixing the clock"): relative ages in listings (`3h ago`), relative
//! bounds (`--since 2d`) and the times `demo` writes are all counted from
//! this one instant, so a test can pin them. A value that is not a finite
//! number is ignored (the system clock is used).

use std::time::{SystemTime, UNIX_EPOCH};

/// The variable that fixes "now".
pub const NOW_VARIABLE: &str = "HERMES_STATE_NOW";

/// The current time in Unix seconds.
pub fn now() -> f64 {
    fixed().unwrap_or_else(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0)
    })
}

/// `HERMES_STATE_NOW`, when it holds a finite number.
fn fixed() -> Option<f64> {
    std::env::var(NOW_VARIABLE)
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|t| t.is_finite())
}
