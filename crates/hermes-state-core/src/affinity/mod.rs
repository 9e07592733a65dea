//! What SQLite's TEXT affinity makes of a REAL: the text a `TEXT` column
//! (`messages.content`) stores when a writer binds a float, so another
//! backend holding the same value stores the same characters.
//!
//! SQLite renders it with its own printf (`%!.17g` in `vdbeMemRenderNum`),
//! whose digits are not C's or Rust's: 17 significant digits, cut to fewer
//! when those still read back as the same float (`49.47`, not
//! `49.469999999999999`), a `.0` kept on whole numbers, `Inf` for
//! infinities. This is that rendering written out in plain Rust, a port of
//! the bundled SQLite 3.54.1 (`sqlite3FpDecode` and the `etGENERIC` case of
//! `sqlite3_str_vappendf`; the decimal conversions in `digits`), so the
//! PostgreSQL backend does not link SQLite to ask it. SQLite has changed
//! this rendering between releases; the query crate's tests compare it with
//! the linked SQLite's `CAST(? AS TEXT)` on every kind of float, so an
//! upgrade that changes it fails there.

mod digits;

use digits::Decoded;

/// `SQLITE_FP_PRECISION` of `%!.17g`: the `nFpDigit` a connection renders
/// with unless told otherwise.
const PRECISION: i32 = 17;

/// The text SQLite stores for `value` in a column of TEXT affinity, as
/// `CAST(value AS TEXT)` gives it; `None` where SQLite stores NULL (a NaN
/// binds as NULL).
///
/// ```
/// use hermes_state_core::affinity::real_as_text;
///
/// assert_eq!(real_as_text(49.47).as_deref(), Some("49.47"));
/// assert_eq!(real_as_text(1.0).as_deref(), Some("1.0"));
/// assert_eq!(real_as_text(1e20).as_deref(), Some("1.0e+20"));
/// assert_eq!(real_as_text(f64::NEG_INFINITY).as_deref(), Some("-Inf"));
/// assert_eq!(real_as_text(f64::NAN), None);
/// ```
pub fn real_as_text(value: f64) -> Option<String> {
    if value.is_nan() {
        return None;
    }
    if value.is_infinite() {
        return Some(if value < 0.0 { "-Inf" } else { "Inf" }.to_owned());
    }
    Some(generic(&digits::decode(value, PRECISION)))
}

/// The `etGENERIC` case with the `!` flag and no other: fixed notation for
/// decimal exponents from -4 to `PRECISION - 1`, else `d.ddde±XX`; trailing
/// zeros dropped, but a `0` kept after a bare decimal point.
fn generic(decoded: &Decoded) -> String {
    let digits = decoded.digits.as_bytes();
    let n = digits.len() as i32;
    let exp = decoded.point - 1;
    let mut precision = PRECISION - 1;
    let exponential = exp < -4 || exp > precision;
    let mut e2 = if exponential {
        0
    } else {
        precision -= exp;
        exp
    };
    let mut out = String::with_capacity(26);
    if decoded.negative {
        out.push('-');
    }
    // Digits before the decimal point.
    let mut j = 0;
    if e2 < 0 {
        out.push('0');
    } else {
        j = (e2 + 1).min(n);
        push_digits(&mut out, &digits[..j as usize]);
        e2 -= j;
        if e2 >= 0 {
            out.extend(std::iter::repeat_n('0', (e2 + 1) as usize));
            e2 = -1;
        }
    }
    out.push('.');
    // Zeros after the point before the first significant digit.
    if e2 < -1 && precision > 0 {
        let zeros = (-1 - e2).min(precision);
        out.extend(std::iter::repeat_n('0', zeros as usize));
        precision -= zeros;
    }
    // Significant digits after the point (never more than are left).
    if precision > 0 {
        let rest = (n - j).min(precision).max(0);
        push_digits(&mut out, &digits[j as usize..(j + rest) as usize]);
    }
    while out.ends_with('0') {
        out.pop();
    }
    if out.ends_with('.') {
        out.push('0');
    }
    if exponential {
        let exp = decoded.point - 1;
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let exp = exp.unsigned_abs();
        if exp >= 100 {
            out.push(char::from(b'0' + (exp / 100) as u8));
        }
        out.push(char::from(b'0' + (exp % 100 / 10) as u8));
        out.push(char::from(b'0' + (exp % 10) as u8));
    }
    out
}

fn push_digits(out: &mut String, digits: &[u8]) {
    out.extend(digits.iter().map(|d| char::from(*d)));
}
