//! Deterministic `pow`, `exp2` and `log2`: the same bits on every machine.
//!
//! A replica in `commands` mode and an AOF load compute scores again, so
//! every function on a write path must give the same bits on the master and
//! on every replica, whatever their C library, CPU or platform. The
//! platform's `pow`/`exp`/`log` are not correctly rounded, and other libcs,
//! glibc versions or CPU paths (FMA or not) round some results differently.
//! These functions use integer arithmetic (exact everywhere), IEEE-754
//! `+` and `×` on doubles (correctly rounded everywhere; Rust never fuses
//! them into an FMA) and table lookups, nothing else: no libm call.
//!
//! # Method
//! - `log2(x)`: `x = 2^e · m`, `m` in `[1, 2)`; the top 8 bits of `m`'s
//!   fraction pick `c_i ≈ 1/m` (64 bits), so `r = m·c_i − 1` is exact (a
//!   117-bit integer product) and `|r| < 2^-8`; `log2(m) = −log2(c_i) +
//!   log2(1 + r)`, a table entry plus a series: terms 1 to 5 in 124-bit
//!   fixed point (Horner), the tail (terms 6 to 13, below `2^-48`) in
//!   doubles.
//! - `exp2(z)`: `z = k + j/256 + t` with `0 <= t < 2^-8`; `2^z = 2^k ·
//!   2^(j/256) · 2^t`, a table entry times a series (terms 0 to 4 in fixed
//!   point, the tail from 5 in doubles): the 124-bit method, which defines
//!   the results; a 64-bit evaluation gives the same bits faster where it
//!   can prove them (see "Fast path").
//! - `pow(x, y) = exp2(y · log2(x))`, with `log2(x)` kept in fixed point
//!   (116 fraction bits) and the product `y · log2(x)` exact before it is
//!   cut to 112 fraction bits.
//!
//! Each result is the round-to-nearest (ties to even) of a fixed-point
//! approximation: one rounding, also for subnormal results.
//!
//! # Error bound
//! Let `a` be the approximation before the final rounding and `v` the exact
//! value. Then `|a − v| <= ε·|v|` with
//! - `exp2`: `ε < 2^-101`;
//! - `pow`: `ε < 2^-101 + |y|·2^-102` (so `ε < 2^-98` for `|y| <= 10`, the
//!   formula's gamma range);
//! - `log2`: `|a − v| < 2^-101` absolute, and `|a − v| < 2^-60·|v|` for
//!   `x` in `[1 − 2^-9, 1 + 2^-8)` (near 1, where `log2 x` is small);
//!
//! and the result is `a` rounded to nearest. So each function is correctly
//! rounded unless `v` lies within `ε` of the midpoint between two doubles
//! (for `pow` with `|y| <= 10`, about one input in `2^45`), and then it is
//! the other neighbour: the error is below `0.5 + 2^-45` ulp. The bounds
//! come from the method (2^-124 per fixed-point step, 2^-53 relative on the
//! double tails) and are checked against mpmath at 200 bits on 11,000
//! inputs covering every table entry (`tests/data/detmath_reference.txt`,
//! made by `tests/detmath_gen.py`; the worst seen: `exp2` 2^-102.9, `log2`
//! 2^-103.5 absolute, `pow` 2^-103.0 for `|y| <= 10`), every one of them
//! correctly rounded.
//!
//! # Fast path of `exp2` (and so of `pow`)
//! Every `2^z` (`z` in Q112, exact for [`exp2`], `pow`'s product for
//! [`pow`]) is first evaluated in 64-bit fixed point: `z = k + f`, the
//! fraction `f` cut to 64 bits (`f'`, `0 <= f − f' < 2^-64`), `f' = j/256 +
//! ρ` with `ρ < 2^-8`, and `m = E_j · P(ρ)` (Q126), where `E_j` is
//! `2^(j/256)` in Q63 (the 124-bit table rounded to nearest) and `P` the
//! Taylor polynomial of `2^ρ` to degree 6 (coefficients rounded to nearest
//! in Q63), by Horner with each product cut to 63 fraction bits. Relative
//! to the exact `2^f`, in units of `2^-64`: the cut of `f` costs below
//! `ln 2 = 0.694`, `E_j` below 1.0001, the series' tail
//! (`ln(2)^7/7! · ρ^7 · 1.01 < 2^-72`) below 0.004, and Horner below
//! 2.012 (each step's cut `2^-63` plus half a unit of its coefficient,
//! the inner ones scaled by `ρ < 2^-8`): `|m − 2^f·2^126| < 3.72 · 2^63`
//! units of `2^-126` (`m` is below `2^127`). The rounding test (Ziv's):
//! with `E = 2^66`, above that bound plus the 124-bit method's own `2^-101`
//! (`2^26` units), if `m − E` and `m + E` round to the same 53-bit
//! significand, no midpoint between two doubles lies within `E` of
//! `2^f`, so both the correctly rounded result and the 124-bit method's
//! (within `2^-101`) are that significand, and it is returned. Otherwise,
//! and for results outside the normal range (`k < −1022`), the 124-bit
//! method runs: **the same bits as before for every input**, about one
//! input in 128 (`2·2^66 / 2^74`) paying both. Checked by the tests on 3.5
//! million inputs against the 124-bit method alone (uniform `z` in
//! `[−1100, 1100]`, random exponents, the trending weight's `rem / h` for
//! millisecond times and half-lives in whole seconds, `pow`'s Q112
//! exponents; worst error seen 2.9 · 2^63, 0.63 % slow) and on
//! every reference input (worst `2^-62.5` against mpmath's exact values).
//!
//! # Monotonicity
//! For `y` from [`MONOTONE_MIN_EXPONENT`] (`2^-40`) to 100, `pow(x, y)` is
//! non-decreasing in `x`: for doubles `0 < x1 < x2`, `x2/x1 >= 1 + 2^-53`,
//! so `v2/v1 >= (1 + 2^-53)^y >= 1 + y·2^-53.01`, more than
//! `(1 + ε)/(1 − ε) < 1 + 2.01·ε` since `ε < 2^-101 + y·2^-102 < y·2^-54`
//! for `y >= 2^-40`; hence `a1 < a2`, and rounding to nearest keeps the
//! order. For `y = 0` it is constant (1). HOT.TOP's pruning relies on this:
//! a stored score is an upper bound of the article's later scores.
//!
//! # Cost
//! Instructions per call (callgrind, inside redis-server, HOT.VIEW's
//! profile): `exp2` about 60 for `z` in `[2^-60, 1)` (the trending weight's
//! `rem / h`, its fraction taken from the double's bits) and about 70 plus
//! the argument's conversion to Q112 elsewhere; `pow` about 390 (`log2`'s
//! 124-bit series about 210 of it). Before the fast path: `exp2` about
//! 280, `pow` about 570. glibc's `pow` (`__ieee754_pow_fma` and its
//! wrapper) costs about 120, but not the same bits everywhere. The one
//! input in 128 that fails the rounding test pays the 124-bit method on
//! top (about 250).

mod tables;

use tables::{EXP_E, EXP_P, EXP_TAIL, LOG_C, LOG_P, LOG_T, LOG_TAIL};

/// The smallest positive exponent `y` for which [`pow`]`(·, y)` is proven
/// non-decreasing in `x` (see the module docs): `2^-40`.
pub const MONOTONE_MIN_EXPONENT: f64 = 1.0 / (1u64 << 40) as f64;

/// Fraction bits of the fixed-point values (`v` stands for `v / 2^124`).
const Q: u32 = 124;
/// Fraction bits of `log2(x)` as [`pow`] multiplies it (|log2 x| < 2^11).
const QL: u32 = 116;
/// Fraction bits of the exponent `z` of `2^z` (|z| < 2^11).
const QZ: u32 = 112;

/// The 192-bit product of `a` and `b`, as (high, low) 128-bit halves.
fn mul_u64(a: u64, b: u128) -> (u128, u128) {
    let (b1, b0) = (b >> 64, b & u128::from(u64::MAX));
    let (p0, p1) = (u128::from(a) * b0, u128::from(a) * b1);
    let mid = (p0 >> 64) + (p1 & u128::from(u64::MAX));
    (
        (p1 >> 64) + (mid >> 64),
        (p0 & u128::from(u64::MAX)) | (mid << 64),
    )
}

/// `a · b` in Q124 for `|a|, |b| < 2^125` (values below 2), within two
/// units of `2^-124` below the exact product: each operand is split at bit
/// 62 (`a = a1·2^62 + a0`, `0 <= a0 < 2^62`), so the three partial products
/// that matter are single 64×64 multiplications and `a0·b0 < 2^124` is
/// left out.
fn mulq(a: i128, b: i128) -> i128 {
    debug_assert!(a.unsigned_abs() < 1 << 125 && b.unsigned_abs() < 1 << 125);
    const LOW: i128 = (1 << 62) - 1;
    let (a1, a0) = (i128::from((a >> 62) as i64), i128::from((a & LOW) as i64));
    let (b1, b0) = (i128::from((b >> 62) as i64), i128::from((b & LOW) as i64));
    a1 * b1 + ((a1 * b0 + a0 * b1) >> 62)
}

/// A Q124 value below 2^-4 in magnitude as a double, within `2^-60`.
fn small_to_f64(v: i128) -> f64 {
    ((v >> 64) as i64) as f64 * (1.0 / (1u64 << 60) as f64)
}

/// A double `v` with `|v| < 2^(62 − s)` as Q124, within `2^-s`: scaled by
/// `2^s` and cut to an integer (one conversion to i64).
fn f64_to_q(v: f64, s: u32) -> i128 {
    let two_s = f64::from_bits(u64::from(1023 + s) << 52);
    i128::from((v * two_s) as i64) << (Q - s)
}

/// `m · 2^e2` rounded to the nearest double (ties to even), including
/// subnormal results, 0 and infinity.
fn round_to_f64(m: u128, e2: i32) -> f64 {
    // The usual case: m in [2^124, 2^125) and a normal result.
    if m >> 124 == 1 && (-1022 - 124..=1023 - 124).contains(&e2) {
        let (mant, rem) = ((m >> 72) as u64, m & ((1 << 72) - 1));
        let up = rem > 1 << 71 || (rem == 1 << 71 && mant & 1 == 1);
        // A carry out of the 53 bits moves into the exponent field.
        let bits = (((e2 + 124 + 1023) as u64) << 52) + (mant - (1 << 52)) + u64::from(up);
        return f64::from_bits(bits);
    }
    if m == 0 {
        return 0.0;
    }
    let top = 127 - m.leading_zeros() as i32; // m in [2^top, 2^(top+1))
    let exp = e2.saturating_add(top); // the value is in [2^exp, 2^(exp+1))
    if exp > 1023 {
        return f64::INFINITY;
    }
    // Significant bits kept: 53 for a normal result, fewer for a subnormal.
    let keep = if exp >= -1022 { 53 } else { exp + 1075 };
    if keep < 0 {
        return 0.0;
    }
    if top + 1 < keep {
        // Fewer bits than the double holds: exact.
        return round_to_f64(m << (keep - top - 1) as u32, e2 - (keep - top - 1));
    }
    let drop = (top + 1 - keep) as u32;
    let mut mant = m.checked_shr(drop).unwrap_or(0);
    if drop > 0 {
        let rem = m & ((1u128 << (drop - 1) << 1).wrapping_sub(1));
        let half = 1u128 << (drop - 1);
        if rem > half || (rem == half && mant & 1 == 1) {
            mant += 1;
        }
    }
    let mant = mant as u64;
    if exp >= -1022 {
        // mant in [2^52, 2^53]; 2^53 carries into the exponent.
        let bits = ((exp + 1023) as u64) << 52;
        let bits = bits + (mant - (1 << 52));
        f64::from_bits(bits.min(f64::INFINITY.to_bits()))
    } else {
        // A subnormal's bits are its multiple of 2^-1074 (2^52 is the
        // smallest normal).
        f64::from_bits(mant)
    }
}

/// `log2(x)` of a positive finite `x` as `(e, l)`: `log2(x) = e + l / 2^124`
/// with `|l| <= 2^124`, `|error| < 2^-101`.
fn log2_parts(x: f64) -> (i32, i128) {
    let bits = x.to_bits();
    let (mut e, mut m) = ((bits >> 52) as i32 - 1023, bits & ((1 << 52) - 1));
    if e == -1023 {
        // Subnormal: normalize so the leading bit is bit 52.
        let shift = m.leading_zeros() as i32 - 11;
        m <<= shift;
        e = -1022 - shift;
    } else {
        m |= 1 << 52;
    }
    let i = ((m >> 44) & 0xff) as usize;
    // m·c_i at scale 2^(52+63), exact; r = m·c_i − 1 in Q124, |r| < 2^-8.
    let prod = u128::from(m) * u128::from(LOG_C[i]);
    let r = (prod as i128 - (1i128 << 115)) << 9;
    (e, LOG_T[i] + log2_1p(r))
}

/// `log2(1 + r)` for `|r| < 2^-8` (Q124 in and out).
fn log2_1p(r: i128) -> i128 {
    let rf = small_to_f64(r);
    let mut tail = 0.0;
    for &c in LOG_TAIL.iter().rev() {
        tail = c + rf * tail;
    }
    // |tail| < 0.25, so it is taken to 2^-63.
    let mut p = f64_to_q(tail, 63);
    for &c in LOG_P.iter().rev() {
        p = c + mulq(r, p);
    }
    mulq(r, p)
}

/// `2^z` of `z` in Q112 (any i128: beyond the double range it is 0 or
/// infinity), rounded to nearest: the fast path ([`exp2_fast`]) where its
/// rounding test proves the result, else [`exp2_slow`]. The same bits as
/// [`exp2_slow`] for every `z` (module docs, "Fast path").
fn exp2_fixed(z: i128) -> f64 {
    match exp2_fast(z) {
        Some(v) => v,
        None => exp2_slow(z),
    }
}

/// `2^z` of `z` in Q112, rounded to nearest, by the 124-bit method alone
/// (the definition of the results: [`exp2_fixed`] gives its bits faster).
fn exp2_slow(z: i128) -> f64 {
    match exp2_approx(z) {
        Ok((m, e2)) => round_to_f64(m, e2),
        Err(v) => v,
    }
}

/// `2^(j/256)` in Q63 (`[2^63, 2^64)`), [`EXP_E`] rounded to nearest.
const FAST_E: [u64; 256] = {
    let mut e = [0u64; 256];
    let mut j = 0;
    while j < 256 {
        e[j] = ((EXP_E[j] + (1 << 60)) >> 61) as u64;
        j += 1;
    }
    e
};

/// `ln(2)^n / n!` in Q63, rounded to nearest, `n` = 0..=6: the Taylor
/// series of `2^ρ` (each within half a unit of `2^-63`; checked against
/// [`EXP_P`] and [`EXP_TAIL`] by the tests).
const FAST_P: [u64; 7] = [
    0x8000_0000_0000_0000,
    0x58b9_0bfb_e8e7_bcd6,
    0x1ebf_bdff_82c5_8ea8,
    0x071a_c235_c128_2fe3,
    0x013b_2ab6_fba4_e773,
    0x002b_b0ff_cf14_ce62,
    0x0005_0c24_4be1_b1e2,
];

/// The fast path's error bound in units of `2^-126` of its product `m`
/// (Q126, in `[2^126, 2^127)`): `|m − 2^f·2^126| < 3.72·2^63` (module docs)
/// plus the slow path's `2^-101` (`2^26` units), doubled for margin.
const FAST_ERR: u128 = 1 << 66;

/// `2^z` of `z` in Q112, correctly rounded, when a 64-bit evaluation
/// proves it; `None` (about one `z` in 128, and every result outside the
/// normal range) when the rounding is not certain, for [`exp2_slow`].
///
/// `z = k + f`, `f` in `[0, 1)` cut to 64 bits (`f'`), `f' = j/256 + ρ`
/// with `ρ < 2^-8`; `m = E_j · P(ρ)` with `E_j` = `2^(j/256)` in Q63 and
/// `P` the degree-6 Taylor polynomial of `2^ρ` by Horner in Q63 (each
/// product cut to 63 fraction bits). `m` is within [`FAST_ERR`] of the
/// exact `2^f` (Q126); when both ends of `m ± FAST_ERR` round to one
/// 53-bit significand, no midpoint between two doubles lies within that
/// distance of `2^f`, so that significand is the correctly rounded result,
/// and also the one [`exp2_slow`] (within `2^-101` of `2^f`) rounds to.
fn exp2_fast(z: i128) -> Option<f64> {
    let (k, m) = exp2_fast_approx(z)?;
    fast_round(k, m)
}

/// The rounding test of the fast path: the double `m · 2^(k − 126)` (`m`
/// from [`fast_significand`], `k` in the normal range) when `m ± FAST_ERR`
/// round to one significand, else `None`.
fn fast_round(k: i128, m: u128) -> Option<f64> {
    // 2^f >= 1: the low end never goes below 2^126 (the binade of m).
    let lo = (m - FAST_ERR).max(1 << 126);
    let hi = m + FAST_ERR;
    const HALF: u128 = 1 << 73;
    let (a, b) = ((lo + HALF) >> 74, (hi + HALF) >> 74);
    if a != b || hi >> 127 != 0 {
        return None;
    }
    // a in [2^52, 2^53]: 2^53 carries into the exponent (2^1024: infinity).
    let bits = (((k + 1023) as u64) << 52) + (a as u64 - (1 << 52));
    Some(f64::from_bits(bits))
}

/// The fast path's approximation: `2^z ≈ m · 2^(k − 126)` with `m` in
/// `[2^126, 2^127)` (Q126) within [`FAST_ERR`] `/ 2` of the exact value's
/// significand; `None` when `k = floor(z)` is outside the normal range.
fn exp2_fast_approx(z: i128) -> Option<(i128, u128)> {
    let k = z >> QZ; // floor
    if !(-1022..=1023).contains(&k) {
        return None;
    }
    // The fraction in Q64, cut (0 <= f − f' < 2^-64).
    Some((k, fast_significand(((z - (k << QZ)) >> (QZ - 64)) as u64)))
}

/// `2^f'` for a fraction `f'` in Q64 (`[0, 1)`), as `m` in Q126: `E_j ·
/// P(ρ)` (module docs, "Fast path").
fn fast_significand(f: u64) -> u128 {
    let (j, r) = ((f >> 56) as usize, f & ((1 << 56) - 1));
    let mul = |a: u64, b: u64| ((u128::from(a) * u128::from(b)) >> 64) as u64;
    let mut p = FAST_P[6];
    for &c in FAST_P[..6].iter().rev() {
        p = c + mul(r, p);
    }
    u128::from(FAST_E[j]) * u128::from(p)
}

/// `2^z` for `z` in `[2^-60, 1)` (the trending weight's and decay's
/// `rem / h`) by the fast path, its fraction taken from the double's bits
/// in 64-bit arithmetic (the same cut to Q64 as [`exp2_fast_approx`]'s);
/// `None` outside that range or when the rounding test fails.
fn exp2_fast_fraction(z: f64) -> Option<f64> {
    if !(1.0 / (1u64 << 60) as f64..1.0).contains(&z) {
        return None;
    }
    // z = m · 2^(e − 52), e in [-60, -1]: in Q64, m · 2^(e + 12), cut.
    let bits = z.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1023;
    let m = (bits & ((1 << 52) - 1)) | (1 << 52);
    let s = e + 12;
    let f = if s >= 0 { m << s } else { m >> -s };
    fast_round(0, fast_significand(f))
}

/// The approximation `m · 2^e2` of `2^z` (`z` in Q112), `m` in
/// `[2^124, 2^125]`, or `Err` of a result beyond the double range.
fn exp2_approx(z: i128) -> Result<(u128, i32), f64> {
    let k = z >> QZ; // floor
    if k > 1024 {
        return Err(f64::INFINITY);
    }
    if k < -1100 {
        return Err(0.0);
    }
    let f = z - (k << QZ); // [0, 1) in Q112
    let j = (f >> (QZ - 8)) as usize;
    let t = (f & ((1 << (QZ - 8)) - 1)) << (Q - QZ); // [0, 2^-8) in Q124
    let tf = small_to_f64(t);
    let mut tail = 0.0;
    for &c in EXP_TAIL.iter().rev() {
        tail = c + tf * tail;
    }
    // |tail| < 0.0014, so it is taken to 2^-70.
    let mut p = f64_to_q(tail, 70);
    for &c in EXP_P.iter().rev() {
        p = c + mulq(t, p);
    }
    let m = mulq(EXP_E[j], p); // in [1, 2] (Q124)
    Ok((m as u128, k as i32 - Q as i32))
}

/// `2^z`, within the error bound of the module docs. `exp2(NaN)` is NaN,
/// `exp2(-inf) = 0`, `exp2(inf) = inf`; results below `2^-1074` round to 0
/// (subnormal results are rounded once, correctly) and from `2^1024` on are
/// infinite.
pub fn exp2(z: f64) -> f64 {
    if let Some(v) = exp2_fast_fraction(z) {
        return v;
    }
    match exp2_exponent(z) {
        Ok(zq) => exp2_fixed(zq),
        Err(v) => v,
    }
}

/// `z` in Q112 (exact), or `Err` of [`exp2`]'s result where it needs no
/// evaluation (NaN, beyond the double range, `|z| < 2^-60`).
fn exp2_exponent(z: f64) -> Result<i128, f64> {
    if z.is_nan() {
        return Err(z);
    }
    if z >= 1024.0 {
        return Err(f64::INFINITY);
    }
    if z < -1080.0 {
        return Err(0.0);
    }
    // |z| < 2^-60: 2^z is within 2^-60 of 1, so it rounds to 1.
    if z.abs() < 1.0 / (1u64 << 60) as f64 {
        return Err(1.0);
    }
    // z = mz · 2^ez exactly, and ez >= -112 here, so z is exact in Q112.
    let bits = z.to_bits();
    let ez = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let mz = i128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    let zq = mz << (ez + QZ as i32);
    Ok(if z < 0.0 { -zq } else { zq })
}

/// `log2(x)`, within the error bound of the module docs. `log2(1) = 0`,
/// `log2(0) = -inf`, `log2(inf) = inf`, NaN for `x < 0` or NaN.
pub fn log2(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x == f64::INFINITY {
        return x;
    }
    let (e, l) = log2_parts(x);
    // Near 1 (e = 0, or e = -1 with l near 1) keep all 124 fraction bits,
    // so the result has its full relative accuracy.
    let (v, scale) = if e.abs() <= 4 {
        ((i128::from(e) << Q) + l, Q)
    } else {
        ((i128::from(e) << QL) + (l >> (Q - QL)), QL)
    };
    let r = round_to_f64(v.unsigned_abs(), -(scale as i32));
    if v < 0 {
        -r
    } else {
        r
    }
}

/// `x^y`, within the error bound of the module docs, for `x >= 0`.
///
/// Special values as C's `pow` where `x >= 0`: `pow(x, 0) = pow(1, y) = 1`
/// (even for NaN), NaN for a NaN otherwise; `pow(0, y)` is 0 for `y > 0`
/// and infinity for `y < 0`; `pow(inf, y)` is infinity for `y > 0` and 0
/// for `y < 0`; an infinite `y` gives infinity or 0 by whether `x > 1`.
/// Unlike C's `pow`, a negative `x` (also `-0.0` with a negative `y`)
/// gives NaN (scores never raise a negative base); `-0.0` with a positive
/// `y` gives 0. Results beyond the double range are infinity or 0.
pub fn pow(x: f64, y: f64) -> f64 {
    if y == 0.0 || x == 1.0 {
        return 1.0;
    }
    if x.is_nan() || y.is_nan() || x < 0.0 || (x == 0.0 && x.is_sign_negative() && y < 0.0) {
        return f64::NAN;
    }
    if x == 0.0 || x == f64::INFINITY || y.is_infinite() {
        // 0 or inf raised to a finite y, or anything positive raised to ±inf.
        let big = if x == 0.0 {
            false
        } else if x == f64::INFINITY {
            true
        } else {
            x > 1.0
        };
        return if big == (y > 0.0) { f64::INFINITY } else { 0.0 };
    }
    match pow_exponent(x, y) {
        Ok(z) => exp2_fixed(z),
        Err(v) => v,
    }
}

/// `y · log2(x)` in Q112 for a positive finite `x` and a finite `y`, or
/// `Err` of a result beyond the double range.
fn pow_exponent(x: f64, y: f64) -> Result<i128, f64> {
    let (e, l) = log2_parts(x);
    // An estimate of z = y·log2(x) decides overflow and underflow.
    let zf = y * (f64::from(e) + small_to_f64(l >> 4) * 16.0);
    if zf > 1100.0 {
        return Err(f64::INFINITY);
    }
    if zf < -1100.0 {
        return Err(0.0);
    }
    // log2(x) in Q116, times y = my · 2^ey (exact), to Q112.
    let lq = (i128::from(e) << QL) + (l >> (Q - QL));
    let bits = y.to_bits();
    let ey = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let raw = bits & ((1 << 52) - 1);
    let my = if ey == -1075 { raw } else { raw | (1 << 52) };
    let ey = ey.max(-1074);
    let (hi, lo) = mul_u64(my, lq.unsigned_abs());
    // z = (my·|lq|) · 2^(ey − QL + QZ): shift right by QL − QZ − ey.
    let shift = (QL - QZ) as i32 - ey;
    let mag: u128 = if shift >= 256 {
        0
    } else if shift >= 128 {
        hi >> (shift - 128)
    } else if shift > 0 {
        (hi << (128 - shift)) | (lo >> shift)
    } else {
        // |z| < 1101 was checked, so the product is below 2^123 here.
        lo << (-shift)
    };
    let z = mag as i128;
    Ok(if (lq < 0) != (y < 0.0) { -z } else { z })
}

#[cfg(test)]
mod tests;
