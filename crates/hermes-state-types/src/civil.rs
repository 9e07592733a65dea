//! Calendar dates of Unix time, UTC, in the proleptic Gregorian calendar
//! (Howard Hinnant's `days_from_civil` / `civil_from_days`): one place for
//! the date arithmetic the command line (dates in output, `--since`) and
//! the schema crate (backup file names) need, without a time crate.

/// The date `(year, month, day)` of a day count since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// The day count since 1970-01-01 of a calendar date, `None` when the date
/// does not exist (month outside 1–12, day outside the month).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> Option<i64> {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let month_days = [
        31,
        28 + i64::from(leap),
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month) || day < 1 || day > month_days[(month - 1) as usize] {
        return None;
    }
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates_both_ways() {
        for (days, date) in [
            (0, (1970, 1, 1)),
            (11_016, (2000, 2, 29)),
            (11_017, (2000, 3, 1)),
            (20_658, (2026, 7, 24)),
            (-1, (1969, 12, 31)),
        ] {
            assert_eq!(civil_from_days(days), date, "{days}");
            assert_eq!(
                days_from_civil(date.0, date.1, date.2),
                Some(days),
                "{date:?}"
            );
        }
    }

    #[test]
    fn impossible_dates_are_none() {
        assert_eq!(days_from_civil(2025, 2, 29), None);
        assert_eq!(days_from_civil(2024, 13, 1), None);
        assert_eq!(days_from_civil(2024, 4, 31), None);
        assert_eq!(days_from_civil(2024, 1, 0), None);
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        for days in -73_000..73_000 {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), Some(days));
        }
    }
}
