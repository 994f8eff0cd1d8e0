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
