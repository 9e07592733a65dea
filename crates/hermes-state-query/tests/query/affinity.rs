//! `hermes_state_core::affinity::real_as_text`, SQLite's TEXT-affinity
//! rendering of a REAL written in plain Rust, against the linked SQLite's
//! own `CAST(?1 AS TEXT)`: chosen cases, then random floats of every kind
//! (any bit pattern — subnormals, huge, tiny, NaN, infinities — whole
//! numbers, short decimals, neighbours of powers of ten).

use hermes_state_core::affinity::real_as_text;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rusqlite::Connection;

/// What SQLite stores for `value` in a TEXT column: `None` for NULL.
fn sqlite_text(conn: &Connection, value: f64) -> Option<String> {
    conn.query_row("SELECT CAST(?1 AS TEXT)", [value], |row| row.get(0))
        .expect("CAST runs")
}

/// Runs `cases` floats of `strategy` through both and fails on the first
/// difference, naming the float by its bits.
fn agree(strategy: impl Strategy<Value = f64>, cases: u32) {
    let conn = Connection::open_in_memory().expect("in-memory database");
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&strategy, |value| {
            prop_assert_eq!(
                real_as_text(value),
                sqlite_text(&conn, value),
                "{:e} (bits {:#018x})",
                value,
                value.to_bits()
            );
            Ok(())
        })
        .expect("the port renders every float as SQLite does");
}

#[test]
fn chosen_floats_render_as_sqlite_renders_them() {
    let conn = Connection::open_in_memory().expect("in-memory database");
    let cases = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.1,
        0.2,
        0.30000000000000004,
        1.0 / 3.0,
        2.0 / 3.0,
        49.47,
        100.0,
        123.456,
        1e-4,
        1.5e-4,
        1e-5,
        9.999e-5,
        1e15,
        1e16,
        1e17,
        123456789012345678.0,
        9007199254740993.0,
        99999999999999999.0,
        0.999999999999999,
        0.9999999999999999,
        9.5,
        0.5,
        1e20,
        1e21,
        1e22,
        1e100,
        1e-100,
        1e300,
        1e-300,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        f64::EPSILON,
        5e-324,
        2.225073858507201e-308,
        f64::from_bits(0x000f_ffff_ffff_ffff),
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
    ];
    let mut wrong = Vec::new();
    for value in cases {
        let (ours, sqlite) = (real_as_text(value), sqlite_text(&conn, value));
        if ours != sqlite {
            wrong.push(format!("{value:e}: ours {ours:?}, SQLite {sqlite:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_bit_pattern_renders_as_sqlite_renders_it() {
    agree(any::<u64>().prop_map(f64::from_bits), 200_000);
}

#[test]
fn subnormals_render_as_sqlite_renders_them() {
    agree(
        (1u64..(1 << 52), any::<bool>())
            .prop_map(|(bits, negative)| f64::from_bits(bits | (u64::from(negative) << 63))),
        50_000,
    );
}

#[test]
fn whole_numbers_render_as_sqlite_renders_them() {
    agree(
        prop_oneof![
            (-1_000_000i64..1_000_000).prop_map(|n| n as f64),
            any::<i64>().prop_map(|n| n as f64),
            (0u32..64, -4i64..4)
                .prop_map(|(shift, d)| ((1i64 << 62 >> (62 - shift.min(62))) + d) as f64),
        ],
        100_000,
    );
}

#[test]
fn short_decimals_render_as_sqlite_renders_them() {
    // Values a person or a program writes (`49.47`, `0.001`, `3.5e-7`):
    // the digits SQLite shortens to when they read back alike.
    agree(
        (any::<i64>(), 1u32..18, -30i32..30).prop_map(|(mantissa, digits, exponent)| {
            let mantissa = mantissa % 10i64.pow(digits);
            format!("{mantissa}e{exponent}").parse().expect("a float")
        }),
        200_000,
    );
}

#[test]
fn neighbours_of_powers_of_ten_render_as_sqlite_renders_them() {
    agree(
        (-330i32..310, -3i64..4).prop_map(|(exponent, step)| {
            let power: f64 = format!("1e{exponent}").parse().expect("a float");
            f64::from_bits(power.to_bits().wrapping_add_signed(step))
        }),
        50_000,
    );
}
