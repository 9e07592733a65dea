//! `--since` / `--until`: one parser for every command that takes a time
//! window, and the window itself.
//!
//! A bound is a date (`2026-07-24`, its midnight), a date and time
//! (`2026-07-24T09:30`, `2026-07-24 09:30:15`), both read in the zone the CLI
//! prints times in (local, UTC with `--utc`: [`crate::local_time`]), so a
//! time copied from a listing means what it showed; a trailing `Z`
//! (`2026-07-24T09:30Z`) reads UTC whatever the zone. Also a relative age
//! (`30m`, `3h`, `2d`, `1w`, `45s`: that long before now, [`crate::clock`]),
//! the same in words (`3 days ago`, `an hour ago`), `now`, `today` and
//! `yesterday` (midnights in the zone), or Unix seconds. `--since` is inclusive,
//! `--until` exclusive, so `--since D --until D+1` is exactly day D.

use clap::Args;

/// The `--since` / `--until` flags, flattened into a command's arguments.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct TimeWindow {
    /// Only from this time on: YYYY-MM-DD, YYYY-MM-DDTHH:MM (local time; UTC with --utc or a trailing Z), an age (30m, 3h, 2d, 1w, "3 days ago"), today, yesterday, now, or Unix seconds
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    pub since: Option<f64>,
    /// Only before this time: YYYY-MM-DD, YYYY-MM-DDTHH:MM (local time; UTC with --utc or a trailing Z), an age (30m, 3h, 2d, 1w, "3 days ago"), today, yesterday, now, or Unix seconds
    #[arg(long, value_name = "WHEN", value_parser = parse_when)]
    pub until: Option<f64>,
}

impl TimeWindow {
    /// The window as the library reads it.
    pub fn bounds(self) -> hermes_state::time_window::TimeWindow {
        hermes_state::time_window::TimeWindow {
            since: self.since,
            until: self.until,
        }
    }

    /// Whether a bound was given.
    pub fn is_set(&self) -> bool {
        self.bounds().is_set()
    }

    /// Whether the time lies in the window (`since <= t < until`).
    pub fn contains(&self, t: f64) -> bool {
        self.bounds().contains(t)
    }
}

/// The later of two optional lower bounds.
pub fn later(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The earlier of two optional upper bounds.
pub fn earlier(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Parses a bound relative to the current time (clap's value parser).
pub fn parse_when(text: &str) -> Result<f64, String> {
    parse_when_at(text, crate::clock::now())
}

/// Parses a bound, ages counted back from `now` (Unix seconds).
pub fn parse_when_at(text: &str, now: f64) -> Result<f64, String> {
    let text = text.trim();
    let expected = || {
        format!(
            "{text:?}: expected YYYY-MM-DD, YYYY-MM-DDTHH:MM, an age such as 30m, 3h, 2d, 1w or \"3 days ago\", today, yesterday, now, or Unix seconds"
        )
    };
    if text.eq_ignore_ascii_case("now") {
        return Ok(now);
    }
    if let Some(age) = parse_age(text).or_else(|| parse_words_ago(text)) {
        return Ok(now - age);
    }
    if let Some(days_back) = named_day(text) {
        return Ok(midnight_before(now, days_back));
    }
    if let Ok(seconds) = text.parse::<f64>() {
        return if seconds.is_finite() {
            Ok(seconds)
        } else {
            Err(expected())
        };
    }
    if text.len() < 10 || !text.is_char_boundary(10) {
        return Err(expected());
    }
    let (date, rest) = text.split_at(10);
    let day = parse_date(date).ok_or_else(expected)??;
    let time = match rest.strip_prefix(['T', 't', ' ']) {
        None if rest.is_empty() => 0,
        None => return Err(expected()),
        Some(clock) => parse_clock(clock).ok_or_else(expected)??,
    };
    let wall = day * 86_400 + time;
    if rest.ends_with(['Z', 'z']) {
        Ok(wall as f64)
    } else {
        Ok(crate::local_time::wall_to_unix(wall))
    }
}

/// `30m`, `3h`, `2d`, `1w`, `45s` in seconds; `None` when it is not an age.
fn parse_age(text: &str) -> Option<f64> {
    let unit = text.chars().last()?;
    let seconds = match unit.to_ascii_lowercase() {
        's' => 1.0,
        'm' => 60.0,
        'h' => 3_600.0,
        'd' => 86_400.0,
        'w' => 604_800.0,
        _ => return None,
    };
    let number = &text[..text.len() - unit.len_utf8()];
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let value: f64 = number.parse().ok()?;
    value.is_finite().then_some(value * seconds)
}

/// `3 days ago`, `an hour ago`, `1 week ago`, `90 seconds ago` in seconds;
/// `None` when it is not such a phrase.
fn parse_words_ago(text: &str) -> Option<f64> {
    let lower = text.to_ascii_lowercase();
    let mut words = lower.split_whitespace();
    let (count, unit, ago) = (words.next()?, words.next()?, words.next()?);
    if ago != "ago" || words.next().is_some() {
        return None;
    }
    let count: f64 = match count {
        "a" | "an" | "one" => 1.0,
        number if number.bytes().all(|b| b.is_ascii_digit() || b == b'.') => number.parse().ok()?,
        _ => return None,
    };
    let seconds = match unit.trim_end_matches('s') {
        "second" | "sec" => 1.0,
        "minute" | "min" => 60.0,
        "hour" | "hr" => 3_600.0,
        "day" => 86_400.0,
        "week" | "wk" => 604_800.0,
        _ => return None,
    };
    (count.is_finite()).then_some(count * seconds)
}

/// `today` and `yesterday`: how many midnights back.
fn named_day(text: &str) -> Option<i64> {
    match text.to_ascii_lowercase().as_str() {
        "today" => Some(0),
        "yesterday" => Some(1),
        _ => None,
    }
}

/// The midnight, in the zone, `days_back` days before the day of `now`.
fn midnight_before(now: f64, days_back: i64) -> f64 {
    let (date, _) = crate::local_time::civil(now);
    let day = parse_date(&date).and_then(Result::ok).unwrap_or(0);
    crate::local_time::wall_to_unix((day - days_back) * 86_400)
}

fn digits(text: &str, n: usize) -> Option<i64> {
    (text.len() == n && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// Days since 1970-01-01 of `YYYY-MM-DD`: `None` when it is not shaped as
/// one, `Some(Err)` when it is but names no calendar day.
fn parse_date(text: &str) -> Option<Result<i64, String>> {
    let mut parts = text.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let (y, m, d) = (digits(y, 4)?, digits(m, 2)?, digits(d, 2)?);
    Some(
        hermes_state_types::civil::days_from_civil(y, m, d)
            .ok_or_else(|| format!("{text:?} is not a calendar date")),
    )
}

/// Seconds since midnight of `HH:MM` or `HH:MM:SS` (an optional trailing
/// `Z`); `Some(Err)` for an hour or minute out of range.
fn parse_clock(text: &str) -> Option<Result<i64, String>> {
    let text = text.strip_suffix(['Z', 'z']).unwrap_or(text);
    let mut parts = text.split(':');
    let h = digits(parts.next()?, 2)?;
    let m = digits(parts.next()?, 2)?;
    let s = match parts.next() {
        Some(s) => digits(s, 2)?,
        None => 0,
    };
    if parts.next().is_some() {
        return None;
    }
    if h > 23 || m > 59 || s > 59 {
        return Some(Err(format!("{text:?} is not a time of day")));
    }
    Some(Ok(h * 3_600 + m * 60 + s))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: f64 = 1_784_851_200.0; // 2026-07-24T00:00Z

    #[test]
    fn dates_are_utc_midnights() {
        assert_eq!(parse_when_at("1970-01-01", NOW), Ok(0.0));
        assert_eq!(parse_when_at("2000-03-01", NOW), Ok(951_868_800.0));
        assert_eq!(parse_when_at("2026-07-24", NOW), Ok(NOW));
        assert_eq!(parse_when_at("2024-02-29", NOW), Ok(1_709_164_800.0));
    }

    #[test]
    fn dates_with_a_time_of_day_are_utc() {
        assert_eq!(parse_when_at("2026-07-24T09:30", NOW), Ok(NOW + 34_200.0));
        assert_eq!(
            parse_when_at("2026-07-24 09:30:15", NOW),
            Ok(NOW + 34_215.0)
        );
        assert_eq!(parse_when_at("2026-07-24T23:59Z", NOW), Ok(NOW + 86_340.0));
    }

    #[test]
    fn ages_count_back_from_now() {
        assert_eq!(parse_when_at("30m", NOW), Ok(NOW - 1_800.0));
        assert_eq!(parse_when_at("3h", NOW), Ok(NOW - 10_800.0));
        assert_eq!(parse_when_at("2d", NOW), Ok(NOW - 172_800.0));
        assert_eq!(parse_when_at("1w", NOW), Ok(NOW - 604_800.0));
        assert_eq!(parse_when_at("45s", NOW), Ok(NOW - 45.0));
        assert_eq!(parse_when_at("1.5h", NOW), Ok(NOW - 5_400.0));
    }

    #[test]
    fn ages_in_words_and_named_days_are_read() {
        // In UTC (the zone tests run in unless they choose one).
        let cases = [
            ("3 days ago", NOW - 3.0 * 86_400.0),
            ("an hour ago", NOW - 3_600.0),
            ("1 Week Ago", NOW - 604_800.0),
            ("90 seconds ago", NOW - 90.0),
            ("2.5 hours ago", NOW - 9_000.0),
            ("now", NOW),
            ("today", NOW),
            ("yesterday", NOW - 86_400.0),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_when_at(text, NOW), Ok(expected), "{text}");
        }
        let later_today = NOW + 5.0 * 3_600.0;
        assert_eq!(
            parse_when_at("today", later_today),
            Ok(NOW),
            "today is its midnight"
        );
        assert_eq!(parse_when_at("yesterday", later_today), Ok(NOW - 86_400.0));
        for bad in [
            "3 days",
            "days ago",
            "3 fortnights ago",
            "3 days ago now",
            "tomorrow",
        ] {
            assert!(parse_when_at(bad, NOW).is_err(), "{bad}");
        }
    }

    #[test]
    fn unix_seconds_pass_through() {
        assert_eq!(parse_when_at("1700000000.5", NOW), Ok(1_700_000_000.5));
    }

    #[test]
    fn nonsense_is_refused_with_the_accepted_shapes() {
        for bad in [
            "tomorrow",
            "",
            "inf",
            "NaN",
            "2d3h",
            "-3h",
            "h",
            "2026-7-24",
            "2026-07-24T9:30",
            "2026-07-24T09",
            "2026-07-24X09:30",
            "2026-07-24T09:30:00:00",
            "2026/07/24",
            "3x",
        ] {
            let error = parse_when_at(bad, NOW).expect_err(bad);
            assert!(error.contains("expected YYYY-MM-DD"), "{bad}: {error}");
        }
    }

    #[test]
    fn impossible_dates_and_times_say_so() {
        assert!(
            parse_when_at("2025-02-29", NOW)
                .unwrap_err()
                .contains("calendar date")
        );
        assert!(
            parse_when_at("2026-13-01", NOW)
                .unwrap_err()
                .contains("calendar date")
        );
        assert!(
            parse_when_at("2026-07-24T24:00", NOW)
                .unwrap_err()
                .contains("time of day")
        );
        assert!(
            parse_when_at("2026-07-24T10:60", NOW)
                .unwrap_err()
                .contains("time of day")
        );
    }
}
