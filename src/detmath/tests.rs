//! Tests of [`super`]: against mpmath reference values (correctly rounded
//! results and the exact values, `tests/data/detmath_reference.txt`), the
//! error bounds of the module docs, monotonicity, exact cases and special
//! values.

use super::*;
use proptest::prelude::*;

const REFERENCE: &str = include_str!("../../tests/data/detmath_reference.txt");

fn hex64(s: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(s, 16).expect("hex"))
}

/// Reference lines of one function, split into words.
fn lines(kind: &str) -> Vec<Vec<&'static str>> {
    let v: Vec<Vec<&str>> = REFERENCE
        .lines()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|w| w[0] == kind)
        .collect();
    assert!(v.len() > 500, "{kind}: {} reference lines", v.len());
    v
}

/// `|a − v| / v` as a power of two (log2 of the relative error), where
/// `a = m · 2^e2` and `v = vm · 2^(k − 124)` with `vm` in `[2^124, 2^125)`.
fn rel_error_log2(m: u128, e2: i32, vm: u128, k: i32) -> f64 {
    // Bring a to the exponent of v: both below 2^126 after the shift.
    let shift = e2 - (k - 124);
    let a = if shift >= 0 { m << shift } else { m >> -shift };
    let d = a.abs_diff(vm);
    if d == 0 {
        return -200.0;
    }
    (d as f64 / vm as f64).log2()
}

#[test]
fn pow_is_correctly_rounded_on_the_reference_inputs() {
    let mut n = 0;
    for w in lines("pow") {
        let (x, y, want) = (hex64(w[1]), hex64(w[2]), hex64(w[3]));
        let got = pow(x, y);
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "pow({x:e}, {y:e}) = {got:e}, want {want:e}"
        );
        n += 1;
    }
    assert!(n >= 3500, "{n}");
}

#[test]
fn pow_approximation_is_within_its_error_bound() {
    let mut worst = f64::NEG_INFINITY;
    for w in lines("pow") {
        let (x, y) = (hex64(w[1]), hex64(w[2]));
        let k: i32 = w[4].parse().expect("k");
        let vm = u128::from_str_radix(w[5], 16).expect("M");
        let z = pow_exponent(x, y).expect("in range");
        let (m, e2) = exp2_approx(z).expect("in range");
        let err = rel_error_log2(m, e2, vm, k);
        // ε < 2^-101 + |y|·2^-102 (module docs).
        let bound = (2f64.powi(-101) + y.abs() * 2f64.powi(-102)).log2();
        assert!(
            err < bound,
            "pow({x:e}, {y:e}): error 2^{err:.1} > 2^{bound:.1}"
        );
        if y.abs() <= 10.0 {
            worst = worst.max(err);
        }
    }
    assert!(worst < -98.0, "worst error within |y| <= 10: 2^{worst:.1}");
    eprintln!("pow: worst error within |y| <= 10: 2^{worst:.1}");
}

#[test]
fn exp2_is_correctly_rounded_and_within_its_error_bound() {
    let mut worst = f64::NEG_INFINITY;
    for w in lines("exp2") {
        let (z, want) = (hex64(w[1]), hex64(w[2]));
        let got = exp2(z);
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "exp2({z:e}) = {got:e}, want {want:e}"
        );
        let k: i32 = w[3].parse().expect("k");
        let vm = u128::from_str_radix(w[4], 16).expect("M");
        let bits = z.to_bits();
        let ez = ((bits >> 52) & 0x7ff) as i32 - 1075;
        let mz = i128::from((bits & ((1 << 52) - 1)) | (1 << 52));
        let zq = mz << (ez + QZ as i32);
        let (m, e2) = exp2_approx(if z < 0.0 { -zq } else { zq }).expect("in range");
        let err = rel_error_log2(m, e2, vm, k);
        assert!(err < -101.0, "exp2({z:e}): error 2^{err:.1}");
        worst = worst.max(err);
    }
    eprintln!("exp2: worst error 2^{worst:.1}");
}

#[test]
fn log2_is_correctly_rounded_on_the_reference_inputs() {
    for w in lines("log2") {
        let (x, want) = (hex64(w[1]), hex64(w[2]));
        let got = log2(x);
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "log2({x:e}) = {got:e}, want {want:e}"
        );
    }
}

#[test]
fn log2_approximation_is_within_its_error_bound() {
    let mut worst = 0;
    for w in lines("log2") {
        let x = hex64(w[1]);
        let want = i128::from_str_radix(w[3], 16).expect("L");
        let (e, l) = log2_parts(x);
        // The exact value to 2^-116, and ours before its rounding to Q116.
        let ours = (i128::from(e) << Q) + l;
        let err = ours.abs_diff(want << (Q - QL));
        // |a − v| < 2^-101 (module docs): 2^23 in Q124, less the
        // reference's own rounding (2^-117).
        assert!(err < 1 << 23, "log2({x:e}): error {err} / 2^124");
        // Near 1 (the first and last table intervals): relative 2^-60.
        if (1.0 - 1.0 / 512.0..1.0 + 1.0 / 256.0).contains(&x) && x != 1.0 {
            assert!(
                (err as f64) < (want.unsigned_abs() << 8) as f64 * 2f64.powi(-60),
                "log2({x:e}): error {err} / 2^124"
            );
        }
        worst = worst.max(err);
    }
    eprintln!("log2: worst error 2^{:.1}", (worst as f64).log2() - 124.0);
}

#[test]
fn exact_results_are_exact() {
    assert_eq!(pow(4.0, 1.5), 8.0);
    assert_eq!(pow(9.0, 0.5), 3.0);
    assert_eq!(pow(2.0, 10.0), 1024.0);
    assert_eq!(pow(0.5, -3.0), 8.0);
    assert_eq!(pow(10.0, 2.0), 100.0);
    for k in -1074..1024 {
        // 2^k built from its bits (subnormal from -1075 down).
        let p = if k >= -1022 {
            f64::from_bits(((k + 1023) as u64) << 52)
        } else {
            f64::from_bits(1 << (k + 1074))
        };
        assert_eq!(exp2(f64::from(k)), p, "exp2({k})");
        assert_eq!(log2(p), f64::from(k), "log2(2^{k})");
        assert_eq!(pow(2.0, f64::from(k)), p, "pow(2, {k})");
    }
    assert_eq!(log2(1.0), 0.0);
    assert_eq!(exp2(0.0), 1.0);
    assert_eq!(exp2(-0.0), 1.0);
}

#[test]
fn special_values() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    assert_eq!(pow(nan, 0.0), 1.0);
    assert_eq!(pow(1.0, nan), 1.0);
    assert!(pow(nan, 1.0).is_nan() && pow(2.0, nan).is_nan());
    assert!(pow(-2.0, 2.0).is_nan() && pow(-0.0, -1.0).is_nan());
    assert_eq!(pow(0.0, 1.5), 0.0);
    assert_eq!(pow(-0.0, 1.5), 0.0);
    assert_eq!(pow(0.0, -1.5), inf);
    assert_eq!(pow(inf, 0.5), inf);
    assert_eq!(pow(inf, -0.5), 0.0);
    assert_eq!(pow(2.0, inf), inf);
    assert_eq!(pow(0.5, inf), 0.0);
    assert_eq!(pow(2.0, -inf), 0.0);
    assert_eq!(pow(0.5, -inf), inf);
    assert_eq!(pow(10.0, 400.0), inf);
    assert_eq!(pow(10.0, -400.0), 0.0);
    assert_eq!(pow(f64::MAX, 1.0), f64::MAX);
    assert_eq!(pow(f64::MIN_POSITIVE, 1.0), f64::MIN_POSITIVE);
    assert_eq!(pow(5e-324, 1.0), 5e-324);
    assert_eq!(pow(5e-324, 0.5), 2f64.powi(-537));
    assert_eq!(exp2(inf), inf);
    assert_eq!(exp2(-inf), 0.0);
    assert!(exp2(nan).is_nan());
    assert_eq!(exp2(1024.0), inf);
    let below = exp2(f64::from_bits(1024f64.to_bits() - 1));
    assert!(below.is_finite() && below > 1.79e308, "{below:e}");
    assert_eq!(exp2(-1075.0), 0.0, "a tie rounds to even, 0");
    assert_eq!(exp2(-1074.9), 5e-324);
    assert_eq!(exp2(-1100.0), 0.0);
    assert_eq!(exp2(1e-300), 1.0);
    assert_eq!(exp2(-1e-300), 1.0);
    assert_eq!(log2(0.0), -inf);
    assert_eq!(log2(-0.0), -inf);
    assert_eq!(log2(inf), inf);
    assert!(log2(-1.0).is_nan() && log2(nan).is_nan());
    assert_eq!(log2(5e-324), -1074.0);
    assert_eq!(log2(f64::MAX), 1024.0, "1024 − 2^-53·1.44 rounds to 1024");
}

/// The formula's base `hours + base`: from `BASE_RANGE`'s 0.001 to about
/// 2^43 hours.
fn formula_base() -> impl Strategy<Value = f64> {
    prop_oneof![0.001f64..10.0, 2.0f64..3000.0, 1.0f64..5.2e12]
}

/// Exponents from `MONOTONE_MIN_EXPONENT` to 10 (`GAMMA_RANGE`).
fn monotone_exponent() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(MONOTONE_MIN_EXPONENT),
        Just(10.0),
        1.3f64..1.8,
        MONOTONE_MIN_EXPONENT..10.0,
        (-40.0f64..3.3).prop_map(|e| 2f64.powf(e)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// pow(·, y) is non-decreasing over a run of consecutive doubles and
    /// between any two bases: what HOT.TOP's pruning relies on.
    #[test]
    fn pow_is_non_decreasing_in_the_base(x in formula_base(), x2 in formula_base(), y in monotone_exponent()) {
        let mut a = x;
        let mut prev = pow(a, y);
        for _ in 0..64 {
            a = f64::from_bits(a.to_bits() + 1);
            let next = pow(a, y);
            prop_assert!(next >= prev, "pow({a:e}, {y:e}) = {next:e} < {prev:e}");
            prev = next;
        }
        let (lo, hi) = if x <= x2 { (x, x2) } else { (x2, x) };
        prop_assert!(pow(lo, y) <= pow(hi, y));
    }

    /// Within one ulp of the platform's pow (which is not correctly
    /// rounded): a loose cross-check over any positive base and |y| <= 50.
    #[test]
    fn pow_is_within_an_ulp_of_the_platform_pow(ex in -300.0f64..300.0, y in -50.0f64..50.0) {
        let x = 2f64.powf(ex / 7.3);
        let (a, b) = (pow(x, y), x.powf(y));
        if b.is_finite() && b > 1e-300 {
            prop_assert!(a.to_bits().abs_diff(b.to_bits()) <= 1, "pow({x:e}, {y:e}): {a:e} vs {b:e}");
        }
    }

    /// exp2(log2(x)) comes back near x.
    #[test]
    fn exp2_of_log2_is_within_an_ulp(x in 1e-300f64..1e300) {
        let back = exp2(log2(x));
        let d = back.to_bits().abs_diff(x.to_bits());
        // log2(x) is rounded: up to |log2 x|·2^-53 relative, i.e. at most
        // about 1024·ln2/2 ulps of x far from 1.
        prop_assert!(d <= 400, "exp2(log2({x:e})) = {back:e}, {d} ulps");
    }
}

#[test]
fn exponent_zero_and_tiny_exponents_are_constant_or_monotone() {
    for x in [0.001, 1.0, 2.0, 1e6, 5e12] {
        assert_eq!(pow(x, 0.0), 1.0);
    }
    // Below 2^-40 the bound is not claimed; pow(x, 1e-300) is still 1.
    assert_eq!(pow(5e12, 1e-300), 1.0);
}

// ---- the fast path of exp2 (module docs, "Fast path") ----------------------

/// A small deterministic generator (splitmix64) for the million-input
/// comparisons below (proptest's shrinking is not needed there: a failure
/// prints its input).
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    /// Uniform in `[0, n)` (n > 0; the bias of the modulo does not matter here).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// [`exp2`] by the 124-bit method alone: the bits every version before
/// the fast path gave, which [`exp2`] must keep.
fn exp2_reference(z: f64) -> f64 {
    match exp2_exponent(z) {
        Ok(zq) => exp2_slow(zq),
        Err(v) => v,
    }
}

/// The proven bound of the fast approximation, `3.72 · 2^63` units of
/// `2^-126` (module docs), before [`FAST_ERR`]'s margin.
const FAST_BOUND: f64 = 3.72 * 9_223_372_036_854_775_808.0;

/// How far the fast approximation of `2^zq` is from the 124-bit one, in
/// units of [`FAST_BOUND`] (the 124-bit one is within `2^-101` of the exact
/// value, far below the bound), or `None` where the fast path does not apply.
fn fast_error_in_bounds(zq: i128) -> Option<f64> {
    let (k, m) = exp2_fast_approx(zq)?;
    let (ms, e2) = exp2_approx(zq).expect("in range");
    // Both as multiples of 2^(k − 126): m directly, ms · 2^(e2 − k + 126).
    let shift = e2 - (k as i32 - 126);
    assert!((0..=3).contains(&shift), "{zq}: shift {shift}");
    let d = m.abs_diff(ms << shift);
    Some(d as f64 / FAST_BOUND)
}

#[test]
fn fast_coefficients_match_the_124_bit_tables() {
    for (n, &c) in FAST_P.iter().enumerate() {
        if n < EXP_P.len() {
            let want = ((EXP_P[n] + (1 << 60)) >> 61) as u64;
            assert_eq!(c, want, "n = {n}");
        } else {
            let want = EXP_TAIL[n - EXP_P.len()] * 2f64.powi(63);
            assert!((c as f64 - want).abs() <= 2.0, "n = {n}: {c} vs {want}");
        }
    }
    for (j, &e) in FAST_E.iter().enumerate() {
        let back = i128::from(e) << 61;
        assert!((back - EXP_E[j]).abs() <= 1 << 60, "j = {j}");
        assert!(e >> 63 == 1, "j = {j}");
    }
}

/// On every reference input (exact values from mpmath at 200 bits) the
/// fast approximation is within its proven bound, and the rounding test
/// lets the fast path answer only with the correctly rounded result.
#[test]
fn fast_path_is_within_its_bound_on_the_reference_inputs() {
    let (mut worst, mut fast, mut slow) = (f64::NEG_INFINITY, 0, 0);
    for w in lines("exp2") {
        let (z, want) = (hex64(w[1]), hex64(w[2]));
        let k: i32 = w[3].parse().expect("k");
        let vm = u128::from_str_radix(w[4], 16).expect("M");
        let Ok(zq) = exp2_exponent(z) else { continue };
        let Some((kf, m)) = exp2_fast_approx(zq) else {
            continue;
        };
        let err = rel_error_log2(m, kf as i32 - 126, vm, k);
        assert!(err < -62.1, "exp2({z:e}): fast error 2^{err:.1}");
        worst = worst.max(err);
        match exp2_fast(zq) {
            Some(v) => {
                assert_eq!(v.to_bits(), want.to_bits(), "exp2({z:e})");
                fast += 1;
            }
            None => slow += 1,
        }
    }
    assert!(fast > 3000, "{fast} fast, {slow} slow");
    eprintln!("exp2 fast path: worst error 2^{worst:.1}; {fast} fast, {slow} to the slow path");
}

/// The same bits as the 124-bit method for millions of inputs: `z` in the
/// trending range `[-1100, 1100]` (uniform, and with random exponents), the
/// weight's and the decay's `rem / h` for millisecond times and half-lives
/// in whole seconds, and `z` in Q112 as `pow` makes it. Each fast
/// approximation is also within its proven bound, and the slow path is
/// taken for under 2% of the inputs.
#[test]
fn fast_exp2_gives_the_slow_bits() {
    let mut g = Mix(0x5eed_0032);
    let (mut n, mut fallbacks, mut worst) = (0u64, 0u64, 0.0f64);
    let mut check = |z: f64, n: &mut u64| {
        let (got, want) = (exp2(z), exp2_reference(z));
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "exp2({z:e}) = {got:e} vs {want:e}"
        );
        *n += 1;
        if let Ok(zq) = exp2_exponent(z) {
            if let Some(e) = fast_error_in_bounds(zq) {
                assert!(e < 1.0, "exp2({z:e}): {e} of the bound");
                worst = worst.max(e);
                fallbacks += u64::from(exp2_fast(zq).is_none());
            }
        }
    };
    for _ in 0..1_000_000 {
        // Uniform in [-1100, 1100).
        let u = (g.next() >> 11) as f64 / (1u64 << 53) as f64;
        check(u * 2200.0 - 1100.0, &mut n);
    }
    for _ in 0..500_000 {
        // Random sign, exponent (2^-62 to 2^10) and significand.
        let e = 1023 - 62 + g.below(73);
        let bits = (g.below(2) << 63) | (e << 52) | (g.next() >> 12);
        check(f64::from_bits(bits), &mut n);
    }
    for _ in 0..1_500_000 {
        // The trending weight's and decay's exponent: rem / h, with h a
        // half-life in whole seconds and rem in [0, h) milliseconds
        // (times up to about 16 years apart: within MAX_EXPONENT
        // half-lives and far beyond).
        let h = match g.below(4) {
            0 => 21_600_000,
            1 => 60_000,
            _ => (60 + g.below(315_360_000 - 60)) * 1000,
        };
        let d = g.below(500_000_000_000);
        let rem = d % h;
        check(rem as f64 / h as f64, &mut n);
    }
    // pow's exponents (Q112, not from a double) straight to exp2_fixed.
    for _ in 0..500_000 {
        let zq = (g.next() as i128 | (i128::from(g.next()) << 64)) >> 13;
        let got = exp2_fixed(zq);
        let want = exp2_slow(zq);
        assert_eq!(got.to_bits(), want.to_bits(), "exp2_fixed({zq})");
        n += 1;
    }
    assert!(n >= 3_500_000);
    let rate = fallbacks as f64 / n as f64;
    assert!(rate < 0.02, "{fallbacks} of {n} to the slow path");
    eprintln!(
        "fast exp2: {n} inputs, {fallbacks} to the slow path, worst error {worst:.3} of the bound"
    );
}

/// The fraction lane (`z` in `[2^-60, 1)` cut to Q64 from the double's
/// bits) makes the very approximation of the Q112 path: the same answer,
/// including where both leave the input to the slow path, and nothing
/// outside its range.
#[test]
fn fraction_lane_is_the_q112_fast_path() {
    let mut g = Mix(0x0f_0032);
    for i in 0..1_000_000u64 {
        let z = match i % 3 {
            0 => (g.next() >> 11) as f64 / (1u64 << 53) as f64,
            1 => f64::from_bits(((1023 - 61 + g.below(62)) << 52) | (g.next() >> 12)),
            _ => {
                let h = (60 + g.below(315_360_000 - 60)) * 1000;
                (g.next() % h) as f64 / h as f64
            }
        };
        let want = exp2_exponent(z).ok().and_then(exp2_fast);
        let got = exp2_fast_fraction(z);
        if (1.0 / (1u64 << 60) as f64..1.0).contains(&z) {
            assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{z:e}");
        } else {
            assert_eq!(got, None, "{z:e}");
        }
    }
    for z in [
        0.0,
        -0.0,
        1.0,
        -1e-300,
        1e-300,
        f64::NAN,
        2f64.powi(-60),
        1.0 - f64::EPSILON / 2.0,
    ] {
        if let Some(v) = exp2_fast_fraction(z) {
            assert_eq!(v.to_bits(), exp2_reference(z).to_bits(), "{z:e}");
        }
        assert_eq!(exp2(z).to_bits(), exp2_reference(z).to_bits(), "{z:e}");
    }
}

/// Edge inputs of the fast path against the 124-bit method alone (review
/// of issue 32): every table entry `j` with `ρ` at both ends of its range
/// and the fraction's cut bits all set (the largest `f − f'`), integers and
/// their neighbours one Q112 unit away, the edges of the normal range
/// (`k` = −1023, −1022, 1023: subnormal results, the carry into the
/// exponent, the overflow to infinity), and the doubles around them.
#[test]
fn fast_exp2_edges_give_the_slow_bits() {
    let one = 1i128 << QZ;
    let mut zs: Vec<i128> = Vec::new();
    for k in [
        -1080i128, -1024, -1023, -1022, -1021, -2, -1, 0, 1, 2, 1022, 1023,
    ] {
        for j in 0..256i128 {
            let base = (k << QZ) + (j << (QZ - 8));
            for rho in [
                0i128,
                1,
                (1 << 48) - 1,
                1 << 48,
                (1 << (QZ - 8)) - 1,
                (1 << (QZ - 8)) - (1 << 48),
                (1 << (QZ - 9)) + (1 << 47) - 1,
            ] {
                zs.push(base + rho);
            }
        }
        for d in [-3i128, -2, -1, 0, 1, 2, 3, -(1 << 48), 1 << 48] {
            zs.push((k << QZ) + d);
        }
    }
    zs.push(1024 * one - 1);
    zs.push(1024 * one);
    let mut fast = 0;
    for &zq in &zs {
        let (got, want) = (exp2_fixed(zq), exp2_slow(zq));
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "exp2_fixed({zq}): {got:e} vs {want:e}"
        );
        if let Some(e) = fast_error_in_bounds(zq) {
            assert!(e < 1.0, "{zq}: {e} of the bound");
        }
        fast += usize::from(exp2_fast(zq).is_some());
    }
    assert!(fast > zs.len() / 2, "{fast} of {}", zs.len());
    // Doubles: specials, the lane's edges, integers and their neighbours.
    let mut ds = vec![
        0.0,
        -0.0,
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        5e-324,
        -5e-324,
        f64::MAX,
        f64::MIN,
        -1080.0,
        -1074.0,
        -1075.0,
        -1074.5,
    ];
    let lane = 2f64.powi(-60);
    for x in [lane, 1.0, 0.5, 0.25, -lane, -1.0] {
        ds.extend([
            x,
            f64::from_bits(x.to_bits() - 1),
            f64::from_bits(x.to_bits() + 1),
        ]);
    }
    for i in -1081i32..=1025 {
        let x = f64::from(i);
        ds.extend([x, x.next_down(), x.next_up(), x + 0.5, x - 0.5]);
    }
    for z in ds {
        let (got, want) = (exp2(z), exp2_reference(z));
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "exp2({z:e}): {got:e} vs {want:e}"
        );
    }
}
