//! The operator's settings a store URL may carry besides the connection:
//! `pool_size` and `statement_timeout` (`application_name` goes to the
//! client as it is). Each value is checked here, and a value refused is a
//! [`PgError::InvalidSetting`] naming the option and what it accepts —
//! never repeating the value.

use std::time::Duration;

use crate::error::{PgError, Result};

/// The most connections `pool_size` may ask for (PostgreSQL's own default
/// `max_connections` is 100; a server may allow more).
pub const MAX_POOL_SIZE: u32 = 1000;

/// The largest `statement_timeout` PostgreSQL takes: `INT_MAX` milliseconds.
const MAX_TIMEOUT_MS: u64 = i32::MAX as u64;

/// What `pool_size` accepts.
const POOL_SIZE_RULE: &str = "use a whole number of connections from 1 to 1000";

/// What `statement_timeout` accepts.
const TIMEOUT_RULE: &str = "use a whole number of milliseconds, or one with a unit \
     (ms, s, min, h, d), up to 2147483647 ms; 0 means no limit";

/// The operator's settings of one store URL; `None` where the URL says
/// nothing (then the pool's defaults and the server's apply).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OperatorSettings {
    /// `pool_size`: the most connections one handle keeps open at once.
    pub pool_size: Option<u32>,
    /// `statement_timeout`: how long one statement may run (a lock wait
    /// included) before the server cancels it; zero means no limit.
    pub statement_timeout: Option<Duration>,
}

impl OperatorSettings {
    /// Reads one setting; `false` when `key` is not one of them.
    pub(crate) fn read(&mut self, key: &str, value: &str) -> Result<bool> {
        match key {
            "pool_size" => self.pool_size = Some(pool_size(value)?),
            "statement_timeout" => self.statement_timeout = Some(statement_timeout(value)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The settings given, as URL parameters (`&pool_size=4…`), for the
    /// redacted form; neither can hold a secret.
    pub(crate) fn as_parameters(&self) -> String {
        let mut text = String::new();
        if let Some(size) = self.pool_size {
            text.push_str(&format!("&pool_size={size}"));
        }
        if let Some(timeout) = self.statement_timeout {
            text.push_str(&format!("&statement_timeout={}ms", timeout.as_millis()));
        }
        text
    }
}

fn invalid(option: &'static str, expected: &'static str) -> PgError {
    PgError::InvalidSetting { option, expected }
}

fn pool_size(value: &str) -> Result<u32> {
    value
        .parse::<u32>()
        .ok()
        .filter(|size| (1..=MAX_POOL_SIZE).contains(size) && is_plain_number(value))
        .ok_or_else(|| invalid("pool_size", POOL_SIZE_RULE))
}

/// PostgreSQL's own notation for `statement_timeout`: digits, then an
/// optional unit (milliseconds without one), spaces allowed between.
fn statement_timeout(value: &str) -> Result<Duration> {
    let refused = || invalid("statement_timeout", TIMEOUT_RULE);
    let value = value.trim();
    let digits_end = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (digits, unit) = value.split_at(digits_end);
    if !is_plain_number(digits) {
        return Err(refused());
    }
    let number: u64 = digits.parse().map_err(|_| refused())?;
    let per_unit_ms: u64 = match unit.trim_start() {
        "" | "ms" => 1,
        "s" => 1_000,
        "min" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return Err(refused()),
    };
    let ms = number
        .checked_mul(per_unit_ms)
        .filter(|ms| *ms <= MAX_TIMEOUT_MS)
        .ok_or_else(refused)?;
    Ok(Duration::from_millis(ms))
}

/// ASCII digits only, at least one (no sign, no spaces).
fn is_plain_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_sizes_are_whole_numbers_from_one_to_the_maximum() {
        assert_eq!(pool_size("1").unwrap(), 1);
        assert_eq!(pool_size("16").unwrap(), 16);
        assert_eq!(pool_size("1000").unwrap(), 1000);
        for bad in [
            "0",
            "1001",
            "-1",
            "+4",
            " 4",
            "4.0",
            "four",
            "",
            "99999999999",
        ] {
            let error = pool_size(bad).unwrap_err();
            assert!(
                matches!(
                    error,
                    PgError::InvalidSetting {
                        option: "pool_size",
                        ..
                    }
                ),
                "{bad:?}: {error}"
            );
            assert_eq!(error.kind(), hermes_state_types::ErrorKind::InvalidInput);
        }
    }

    #[test]
    fn statement_timeouts_take_postgresqls_units() {
        let ms = |text| statement_timeout(text).unwrap().as_millis();
        assert_eq!(ms("0"), 0);
        assert_eq!(ms("250"), 250);
        assert_eq!(ms("250ms"), 250);
        assert_eq!(ms("30s"), 30_000);
        assert_eq!(ms("30 s"), 30_000);
        assert_eq!(ms("2min"), 120_000);
        assert_eq!(ms("1h"), 3_600_000);
        assert_eq!(ms("1d"), 86_400_000);
        assert_eq!(ms("2147483647"), 2_147_483_647);
        for bad in [
            "",
            "s",
            "-1",
            "+5s",
            "1.5s",
            "5 sec",
            "5m",
            "5S",
            "2147483648",
            "25d",
            "5s5",
            "99999999999999999999",
        ] {
            let error = statement_timeout(bad).unwrap_err();
            assert!(
                error.to_string().contains("`statement_timeout`"),
                "{bad:?}: {error}"
            );
        }
    }

    #[test]
    fn the_redacted_form_carries_the_settings_given() {
        let mut settings = OperatorSettings::default();
        assert_eq!(settings.as_parameters(), "");
        assert!(settings.read("pool_size", "8").unwrap());
        assert!(settings.read("statement_timeout", "30s").unwrap());
        assert!(!settings.read("schema", "x").unwrap());
        assert_eq!(
            settings.as_parameters(),
            "&pool_size=8&statement_timeout=30000ms"
        );
    }
}
