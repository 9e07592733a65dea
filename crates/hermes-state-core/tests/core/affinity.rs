//! `real_as_text` on floats whose SQLite text is worth stating: shortened
//! digits, 17 digits where fewer do not read back, the switch to exponent
//! form, zero's sign, infinities and NaN. Every float against the linked
//! SQLite itself is the query crate's test.

use hermes_state_core::affinity::real_as_text;

#[test]
fn sqlite_3_54_texts_of_chosen_floats() {
    let cases: [(f64, Option<&str>); 16] = [
        (0.0, Some("0.0")),
        (-0.0, Some("0.0")),
        (1.0, Some("1.0")),
        (-2.5, Some("-2.5")),
        (49.47, Some("49.47")),
        (0.30000000000000004, Some("0.30000000000000004")),
        // Not C's `%.17g` (…331): SQLite rounds its own 18-digit approximation.
        (1.0 / 3.0, Some("0.33333333333333332")),
        (0.0001, Some("0.0001")),
        (0.00001, Some("1.0e-05")),
        (1e16, Some("10000000000000000.0")),
        (1e17, Some("1.0e+17")),
        (1e100, Some("1.0e+100")),
        (5e-324, Some("4.9406564584124654e-324")),
        (f64::INFINITY, Some("Inf")),
        (f64::NEG_INFINITY, Some("-Inf")),
        (f64::NAN, None),
    ];
    for (value, text) in cases {
        assert_eq!(real_as_text(value).as_deref(), text, "{value:e}");
    }
}
