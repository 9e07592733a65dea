//! The decimal digits of a float as SQLite 3.54.1 finds them
//! (`sqlite3FpDecode`), with the two conversions it is built on
//! (`sqlite3Fp2Convert10`: binary to about 18 decimal digits;
//! `sqlite3Fp10Convert2`: decimal back to the nearest float, to test
//! whether fewer digits still read back the same) and their table of powers
//! of ten. Ported statement for statement, with the 128-bit products of the
//! x86-64 and AArch64 builds; shifts wrap their count as those CPUs do.

/// A finite float's sign, significant digits and decimal point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Decoded {
    /// The sign was negative (never for zero, `-0.0` included).
    pub(super) negative: bool,
    /// The significant digits, ASCII, without trailing zeros (`"0"` for zero).
    pub(super) digits: String,
    /// Where the decimal point goes: the value is `0.<digits> × 10^point`.
    pub(super) point: i32,
}

/// `sqlite3FpDecode(p, r, round, 20)` for a finite `r` and `round > 0`:
/// at most `round` significant digits, cut to fewer when `round` is 17 and
/// the shorter digits read back as `r`.
pub(super) fn decode(r: f64, round: i32) -> Decoded {
    const MAX_ROUND: i32 = 20;
    let negative = r < 0.0;
    let r = if negative { -r } else { r };
    if r == 0.0 {
        return Decoded {
            negative: false,
            digits: "0".to_owned(),
            point: 1,
        };
    }
    let bits = r.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i32;
    let mut v = bits & 0x000f_ffff_ffff_ffff;
    if e == 0 {
        let nn = v.leading_zeros() as i32;
        v <<= nn;
        e = -1074 - nn;
    } else {
        v = (v << 11) | (1 << 63);
        e -= 1086;
    }
    let wanted = if round >= 18 { 18 } else { round + 1 };
    let (v, exp) = fp2_convert10(v, e, wanted);
    let mut z: Vec<u8> = v.to_string().into_bytes();
    let mut n = z.len() as i32;
    let mut point = n + exp;
    let mut round = round;
    if round < n || n > MAX_ROUND {
        round = round.min(MAX_ROUND);
        if round == 17 {
            round = shortest_round_trip(r, &z, exp, point).unwrap_or(round);
        }
        n = round;
        z.truncate(n as usize + 1);
        if z.get(n as usize).is_some_and(|d| *d >= b'5') {
            let mut j = n as usize - 1;
            loop {
                z[j] += 1;
                if z[j] <= b'9' {
                    break;
                }
                z[j] = b'0';
                if j == 0 {
                    z.insert(0, b'1');
                    n += 1;
                    point += 1;
                    break;
                }
                j -= 1;
            }
        }
        z.truncate(n as usize);
    }
    while z.len() > 1 && z.last() == Some(&b'0') {
        z.pop();
    }
    Decoded {
        negative,
        digits: String::from_utf8_lossy(&z).into_owned(),
        point,
    }
}

/// The precision-17 shortening of `sqlite3FpDecode`: when the 18 digits
/// `z` (of `z × 10^exp`) end a 15-digit prefix in `99` or `000`, or have no
/// fraction, the rounding `round` that keeps the prefix up to its last
/// non-9 (rounded up) or non-0 digit, if that reads back as `r`.
fn shortest_round_trip(r: f64, z: &[u8], exp: i32, point: i32) -> Option<i32> {
    let n = z.len() as i32;
    let digit = |i: usize| u64::from(z[i] - b'0');
    if z[15] == b'9' && z[14] == b'9' {
        let mut jj = 14;
        while jj > 0 && z[jj - 1] == b'9' {
            jj -= 1;
        }
        let v2 = if jj == 0 {
            1
        } else {
            (1..jj).fold(digit(0), |v, k| v * 10 + digit(k)) + 1
        };
        (r == fp10_convert2(v2, exp + n - jj as i32)).then_some(jj as i32 + 1)
    } else if point >= n || (z[15] == b'0' && z[14] == b'0' && z[13] == b'0') {
        let mut jj = 13;
        while z[jj - 1] == b'0' {
            jj -= 1;
        }
        let v2 = (1..jj).fold(digit(0), |v, k| v * 10 + digit(k));
        (r == fp10_convert2(v2, exp + n - jj as i32)).then_some(jj as i32 + 1)
    } else {
        None
    }
}

/// The high 64 bits of `a × b`, and the low 64.
fn multiply128(a: u64, b: u64) -> (u64, u64) {
    let r = u128::from(a) * u128::from(b);
    ((r >> 64) as u64, r as u64)
}

/// The upper 96 bits of the 160-bit product of the 96-bit `(a << 32) + a_lo`
/// and `b`: the high 64 bits, and the 32 below them.
fn multiply160(a: u64, a_lo: u32, b: u64) -> (u64, u32) {
    let mut r = u128::from(a) * u128::from(b);
    r += (u128::from(a_lo) * u128::from(b)) >> 32;
    ((r >> 64) as u64, (r >> 32) as u32)
}

/// `floor(log2(10^p))`, approximately (accurate to 5 digits).
fn pwr10to2(p: i32) -> i32 {
    (p * 108_853) >> 15
}

/// `floor(log10(2^p))`, approximately.
fn pwr2to10(p: i32) -> i32 {
    (p * 78_913) >> 18
}

/// `m × 2^e` (with `m`'s top bit set) as `d × 10^p` with at least `n`
/// significant digits in `d`: `(d, p)`.
fn fp2_convert10(m: u64, e: i32, n: i32) -> (u64, i32) {
    let p = n - 1 - pwr2to10(e + 63);
    let (h, _) = multiply128(m, power_of_ten(p).0);
    let d = if n == 18 {
        let h = h.wrapping_shr((-(e + pwr10to2(p) + 2)) as u32);
        h.wrapping_add(h.wrapping_shl(1) & 2) >> 1
    } else {
        h.wrapping_shr((-(e + pwr10to2(p) + 1)) as u32)
    };
    (d, -p)
}

/// The float nearest `d × 10^p` (Russ Cox's fpfmt algorithm, as SQLite has it).
fn fp10_convert2(d: u64, p: i32) -> f64 {
    if p < POWERS_OF_TEN_FIRST {
        return 0.0;
    }
    if p > POWERS_OF_TEN_LAST {
        return f64::INFINITY;
    }
    let b = 64 - d.leading_zeros() as i32;
    let lp = pwr10to2(p);
    let mut e = 53 - b - lp;
    if e > 1074 {
        if e >= 1130 {
            return 0.0;
        }
        e = 1074;
    }
    let s = -(e - (64 - b) + lp + 3);
    let (mut pwr10h, mut pwr10l) = power_of_ten(p);
    if pwr10l != 0 {
        pwr10h = pwr10h.wrapping_add(1);
        pwr10l = !pwr10l;
    }
    let x = d.wrapping_shl((64 - b) as u32);
    let (mut hi, lo) = multiply128(x, pwr10h);
    let mid1 = (lo >> 32) as u32;
    let mut sticky = 1;
    if hi & (1u64.wrapping_shl(s as u32).wrapping_sub(1)) == 0 {
        let mid2 = (multiply128(x, u64::from(pwr10l) << 32).0 >> 32) as u32;
        sticky = u64::from(mid1.wrapping_sub(mid2) > 1);
        hi = hi.wrapping_sub(u64::from(mid1 < mid2));
    }
    let mut u = hi.wrapping_shr(s as u32) | sticky;
    if u >= (1 << 55) - 2 {
        u = (u >> 1) | (u & 1);
        e -= 1;
    }
    let mut m = (u + 1 + ((u >> 2) & 1)) >> 2;
    if e <= -972 {
        return f64::INFINITY;
    }
    if m & (1 << 52) != 0 {
        m = (m & !(1 << 52)) | (((1075 - e) as u64) << 52);
    }
    f64::from_bits(m)
}

/// The range of powers of ten the conversions meet.
const POWERS_OF_TEN_FIRST: i32 = -348;
/// See [`POWERS_OF_TEN_FIRST`].
const POWERS_OF_TEN_LAST: i32 = 347;

/// The most significant 64 bits of `10^p` (shifted so the top bit is set),
/// and the 32 after them, for `p` in `-348..=347`: exact from a table for
/// `0..=26`, else a scale from the second table refined by one
/// multiplication with the first (`powerOfTen`).
fn power_of_ten(p: i32) -> (u64, u32) {
    if p < 0 {
        if p == -1 {
            return (SCALE[13], SCALE_LO[13]);
        }
    } else if p < 27 {
        return (BASE[p as usize], 0);
    }
    let (mut g, mut n) = (p / 27, p % 27);
    if p < 0 && n != 0 {
        g -= 1;
        n += 27;
    }
    let at = (g + 13) as usize;
    let s = SCALE[at];
    if n == 0 {
        return (s, SCALE_LO[at]);
    }
    let (mut x, mut lo) = multiply160(s, SCALE_LO[at], BASE[n as usize]);
    if x & (1 << 63) == 0 {
        x = (x << 1) | u64::from((lo >> 31) & 1);
        lo = (lo << 1) | 1;
    }
    (x, lo)
}

/// `10^p` for `p` in `0..=26`, shifted to set the top bit (`aBase`).
const BASE: [u64; 27] = [
    0x8000000000000000,
    0xa000000000000000,
    0xc800000000000000,
    0xfa00000000000000,
    0x9c40000000000000,
    0xc350000000000000,
    0xf424000000000000,
    0x9896800000000000,
    0xbebc200000000000,
    0xee6b280000000000,
    0x9502f90000000000,
    0xba43b74000000000,
    0xe8d4a51000000000,
    0x9184e72a00000000,
    0xb5e620f480000000,
    0xe35fa931a0000000,
    0x8e1bc9bf04000000,
    0xb1a2bc2ec5000000,
    0xde0b6b3a76400000,
    0x8ac7230489e80000,
    0xad78ebc5ac620000,
    0xd8d726b7177a8000,
    0x878678326eac9000,
    0xa968163f0a57b400,
    0xd3c21bcecceda100,
    0x84595161401484a0,
    0xa56fa5b99019a5c8,
];

/// `10^(27 (g - 13))` for `g` in `0..=25` (`10^-1` at 13), top 64 bits
/// (`aScale`).
const SCALE: [u64; 26] = [
    0x8049a4ac0c5811ae,
    0xcf42894a5dce35ea,
    0xa76c582338ed2621,
    0x873e4f75e2224e68,
    0xda7f5bf590966848,
    0xb080392cc4349dec,
    0x8e938662882af53e,
    0xe65829b3046b0afa,
    0xba121a4650e4ddeb,
    0x964e858c91ba2655,
    0xf2d56790ab41c2a2,
    0xc428d05aa4751e4c,
    0x9e74d1b791e07e48,
    0xcccccccccccccccc,
    0xcecb8f27f4200f3a,
    0xa70c3c40a64e6c51,
    0x86f0ac99b4e8dafd,
    0xda01ee641a708de9,
    0xb01ae745b101e9e4,
    0x8e41ade9fbebc27d,
    0xe5d3ef282a242e81,
    0xb9a74a0637ce2ee1,
    0x95f83d0a1fb69cd9,
    0xf24a01a73cf2dccf,
    0xc3b8358109e84f07,
    0x9e19db92b4e31ba9,
];

/// The 32 bits after [`SCALE`]'s 64 (`aScaleLo`).
const SCALE_LO: [u32; 26] = [
    0x205b896d, 0x52064cad, 0xaf2af2b8, 0x5a7744a7, 0xaf39a475, 0xbd8d794e, 0x547eb47b, 0x0cb4a5a3,
    0x92f34d62, 0x3a6a07f9, 0xfae27299, 0xaa97e14c, 0x775ea265, 0xcccccccc, 0x00000000, 0x999090b6,
    0x69a028bb, 0xe80e6f48, 0x5ec05dd0, 0x14588f14, 0x8f1668c9, 0x6d953e2c, 0x4abdaf10, 0xbc633b39,
    0x0a862f81, 0x6c07a2c2,
];
