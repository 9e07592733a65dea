//! The time zone of human output: local time by default (`TZ`, else the
//! system's zone), UTC with `--utc`.
//!
//! Every time printed for people (tables, `sessions show`, search headers,
//! Markdown exports, notes) and every calendar date read from them
//! (`--since 2026-07-24`, `--started-before`) go through this zone, so what
//! a listing shows is what a filter takes. Machine output (JSON, JSONL, CSV)
//! keeps the stored Unix seconds: see docs/DECISIONS.md.
//!
//! The zone is chosen once, before the arguments are parsed (a date in
//! `--since` is read in it), and kept for the process. Until chosen it is
//! UTC, so unit tests are independent of the machine's zone. An unknown
//! `TZ` or a system without a zone database falls back to UTC.

use std::sync::OnceLock;

use jiff::Timestamp;
use jiff::civil::DateTime;
use jiff::tz::TimeZone;

static ZONE: OnceLock<TimeZone> = OnceLock::new();

/// Chooses the zone: UTC with `utc`, else the local one.
pub fn choose(utc: bool) {
    let zone = if utc {
        TimeZone::UTC
    } else {
        TimeZone::try_system().unwrap_or(TimeZone::UTC)
    };
    let _ = ZONE.set(zone);
}

/// Whether `--utc` was given: the flag is read before clap parses the
/// command line, because clap's value parsers (`--since DATE`) need the zone.
/// Arguments after `--` are values, not flags.
pub fn utc_flag_in(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    args.into_iter()
        .skip(1)
        .take_while(|arg| arg != "--")
        .any(|arg| arg == "--utc")
}

fn zone() -> &'static TimeZone {
    ZONE.get_or_init(|| TimeZone::UTC)
}

fn timestamp(unix: f64) -> Option<Timestamp> {
    let seconds = if unix.is_finite() { unix.floor() } else { 0.0 };
    Timestamp::from_second(seconds as i64).ok()
}

/// The wall-clock date and time of `unix` in the zone:
/// (`YYYY-MM-DD`, `HH:MM:SS`). A time outside jiff's range (years beyond
/// ±9999) is shown in UTC by plain day arithmetic.
pub fn civil(unix: f64) -> (String, String) {
    match timestamp(unix) {
        Some(ts) => {
            let dt = zone().to_datetime(ts);
            (
                format!("{:04}-{:02}-{:02}", dt.year(), dt.month(), dt.day()),
                format!("{:02}:{:02}:{:02}", dt.hour(), dt.minute(), dt.second()),
            )
        }
        None => utc_civil(unix),
    }
}

/// (`YYYY-MM-DD`, `HH:MM:SS`) in UTC.
pub fn utc_civil(unix: f64) -> (String, String) {
    let secs = if unix.is_finite() {
        unix.floor() as i64
    } else {
        0
    };
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = hermes_state_types::civil::civil_from_days(days);
    (
        format!("{year:04}-{month:02}-{day:02}"),
        format!("{:02}:{:02}:{:02}", rem / 3600, (rem % 3600) / 60, rem % 60),
    )
}

/// The zone's name at `unix`, as printed beside times: `UTC`, `JST`, `CEST`
/// (the tz database's abbreviation, which may be a numeric one like `+09`).
pub fn label(unix: f64) -> String {
    match timestamp(unix) {
        Some(ts) => zone().to_offset_info(ts).abbreviation().to_owned(),
        None => "UTC".to_owned(),
    }
}

/// Reads a wall-clock time given as seconds since 1970-01-01 00:00 of the
/// same calendar (`day * 86400 + seconds of the day`) in the zone: the Unix
/// time it names. A time skipped by a DST change reads as the time after
/// the gap, a repeated one as its first occurrence (jiff's "compatible").
pub fn wall_to_unix(wall: i64) -> f64 {
    let read = || -> Option<f64> {
        let dt: DateTime = TimeZone::UTC.to_datetime(Timestamp::from_second(wall).ok()?);
        let ts = zone().to_ambiguous_timestamp(dt).compatible().ok()?;
        Some(ts.as_second() as f64)
    };
    read().unwrap_or(wall as f64)
}

/// How long ago `then` was, as of `now`, in one short unit: `now`, `5m ago`,
/// `3h ago`, `2d ago`, `3w ago`, `4mo ago`, `2y ago`; a time in the future
/// reads `in 3h`.
pub fn age(then: f64, now: f64) -> String {
    let delta = now - then;
    if !delta.is_finite() {
        return "-".to_owned();
    }
    let seconds = delta.abs().floor() as u64;
    let short = match seconds {
        0..60 => return "now".to_owned(),
        60..3_600 => format!("{}m", seconds / 60),
        3_600..86_400 => format!("{}h", seconds / 3_600),
        86_400..1_209_600 => format!("{}d", seconds / 86_400),
        1_209_600..5_184_000 => format!("{}w", seconds / 604_800),
        5_184_000..31_536_000 => format!("{}mo", seconds / 2_592_000),
        _ => format!("{}y", seconds / 31_536_000),
    };
    if delta < 0.0 {
        format!("in {short}")
    } else {
        format!("{short} ago")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_take_the_largest_whole_unit() {
        let now = 1_000_000_000.0;
        assert_eq!(age(now - 30.0, now), "now");
        assert_eq!(age(now - 300.0, now), "5m ago");
        assert_eq!(age(now - 3.5 * 3_600.0, now), "3h ago");
        assert_eq!(age(now - 2.0 * 86_400.0, now), "2d ago");
        assert_eq!(age(now - 20.0 * 86_400.0, now), "2w ago");
        assert_eq!(age(now - 200.0 * 86_400.0, now), "6mo ago");
        assert_eq!(age(now - 800.0 * 86_400.0, now), "2y ago");
        assert_eq!(age(now + 7_200.0, now), "in 2h");
        assert_eq!(age(f64::NAN, now), "-");
    }

    #[test]
    fn the_utc_flag_is_found_before_a_double_dash_only() {
        let args = |list: &[&str]| list.iter().map(Into::into).collect::<Vec<_>>();
        assert!(utc_flag_in(args(&["hs", "sessions", "list", "--utc"])));
        assert!(utc_flag_in(args(&["hs", "--utc", "search", "x"])));
        assert!(!utc_flag_in(args(&["hs", "search", "--", "--utc"])));
        assert!(!utc_flag_in(args(&["hs", "search", "utc"])));
    }

    #[test]
    fn until_chosen_the_zone_is_utc() {
        assert_eq!(civil(0.0), ("1970-01-01".to_owned(), "00:00:00".to_owned()));
        assert_eq!(label(0.0), "UTC");
        assert_eq!(wall_to_unix(86_400), 86_400.0);
    }
}
