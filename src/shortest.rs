//! Shortest round-trip decimal digits of an `f64` (the Ryū algorithm, Ulf
//! Adams, PLDI 2018), in plain Rust with its multiplier tables computed once
//! (exactly, with a small big-integer routine) instead of shipped. The digits
//! are the ones Rust's own `{}`/`{:e}` print (shortest, then closest to the
//! exact value, up when exactly halfway), which tests check on random and
//! edge values; this is only
//! cheaper: no formatter machinery, about a third of the instructions.
//!
//! [`decompose`] gives `(digits, exponent)` with `value = digits × 10^exponent`;
//! [`write_display`] and [`write_exp`] spell them as `{}` and `{:e}` do.

use std::sync::OnceLock;

const MANTISSA_BITS: u32 = 52;
const BIAS: i32 = 1023;
const POW5_INV_BITCOUNT: i32 = 125;
const POW5_BITCOUNT: i32 = 125;
const POW5_INV_TABLE: usize = 342;
const POW5_TABLE: usize = 326;

/// `ceil(log2(5^e))` (1 for `e` = 0), for `e` in `0..=3528`.
fn pow5bits(e: i32) -> i32 {
    ((e as u32 * 1_217_359) >> 19) as i32 + 1
}

/// `floor(log10(2^e))`, for `e` in `0..=1650`.
fn log10_pow2(e: i32) -> i32 {
    ((e as u32 * 78_913) >> 18) as i32
}

/// `floor(log10(5^e))`, for `e` in `0..=2620`.
fn log10_pow5(e: i32) -> i32 {
    ((e as u32 * 732_923) >> 20) as i32
}

fn pow5_factor(mut v: u64) -> u32 {
    let mut n = 0;
    while v.is_multiple_of(5) {
        v /= 5;
        n += 1;
    }
    n
}

fn multiple_of_pow5(v: u64, p: i32) -> bool {
    pow5_factor(v) as i32 >= p
}

fn multiple_of_pow2(v: u64, p: i32) -> bool {
    v & ((1u64 << p) - 1) == 0
}

/// `floor(m × mul / 2^j)` for `j` ≥ 64 (the 192-bit product, shifted).
fn mul_shift(m: u64, mul: u128, j: i32) -> u64 {
    let lo = u128::from(m) * (mul & u128::from(u64::MAX));
    let hi = u128::from(m) * (mul >> 64);
    (((lo >> 64) + hi) >> (j - 64)) as u64
}

/// A little-endian big unsigned integer, for building the tables.
#[derive(Clone)]
struct Big(Vec<u32>);

impl Big {
    fn mul_small(&mut self, k: u32) {
        let mut carry = 0u64;
        for d in &mut self.0 {
            let v = u64::from(*d) * u64::from(k) + carry;
            *d = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    fn bits(&self) -> i32 {
        let top = self.0.iter().rposition(|&d| d != 0).unwrap_or(0);
        (top as i32) * 32 + (32 - self.0[top].leading_zeros() as i32)
    }

    fn bit(&self, i: i32) -> bool {
        let w = (i / 32) as usize;
        w < self.0.len() && self.0[w] >> (i % 32) & 1 == 1
    }

    /// `self >> s`, low 128 bits (`s` may be negative: a left shift).
    fn shifted(&self, s: i32) -> u128 {
        let mut out = 0u128;
        for b in 0..128 {
            let i = b + s;
            if i >= 0 && self.bit(i) {
                out |= 1u128 << b;
            }
        }
        out
    }

    fn ge(&self, o: &Big) -> bool {
        let n = self.0.len().max(o.0.len());
        for i in (0..n).rev() {
            let (a, b) = (
                self.0.get(i).copied().unwrap_or(0),
                o.0.get(i).copied().unwrap_or(0),
            );
            if a != b {
                return a > b;
            }
        }
        true
    }

    fn sub(&mut self, o: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let v = i64::from(self.0[i]) - i64::from(o.0.get(i).copied().unwrap_or(0)) - borrow;
            borrow = i64::from(v < 0);
            self.0[i] = v.rem_euclid(1 << 32) as u32;
        }
    }

    fn shl1_or(&mut self, bit: bool) {
        let mut carry = u32::from(bit);
        for d in &mut self.0 {
            let next = *d >> 31;
            *d = *d << 1 | carry;
            carry = next;
        }
        if carry != 0 {
            self.0.push(carry);
        }
    }
}

/// `floor(2^j / d)`, which must fit 128 bits.
fn pow2_div(j: i32, d: &Big) -> u128 {
    let mut rem = Big(vec![0]);
    let mut q = 0u128;
    for bit in (0..=j).rev() {
        rem.shl1_or(bit == j);
        q <<= 1;
        if rem.ge(d) {
            rem.sub(d);
            q |= 1;
        }
    }
    q
}

struct Tables {
    /// `5^i` scaled to 125 bits (truncated), `i` in `0..326`.
    pow5: Vec<u128>,
    /// `2^(pow5bits(i) - 1 + 125) / 5^i + 1`, `i` in `0..342`.
    pow5_inv: Vec<u128>,
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let mut p = Big(vec![1]);
        let mut pow5 = Vec::with_capacity(POW5_TABLE);
        let mut pow5_inv = Vec::with_capacity(POW5_INV_TABLE);
        for i in 0..POW5_INV_TABLE as i32 {
            let bits = p.bits();
            if (i as usize) < POW5_TABLE {
                pow5.push(p.shifted(bits - POW5_BITCOUNT));
            }
            let j = pow5bits(i) - 1 + POW5_INV_BITCOUNT;
            pow5_inv.push(pow2_div(j, &p) + 1);
            p.mul_small(5);
        }
        Tables { pow5, pow5_inv }
    })
}

/// Builds the tables now (about a millisecond), so no command pays for it.
pub fn warm_up() {
    tables();
}

/// The shortest decimal `(digits, exponent)` with `digits × 10^exponent`
/// parsing back to `v`, the one closest to `v` when several are as short.
/// `v` must be finite and above zero.
pub fn decompose(v: f64) -> (u64, i32) {
    debug_assert!(v.is_finite() && v > 0.0);
    let bits = v.to_bits();
    let mantissa = bits & ((1u64 << MANTISSA_BITS) - 1);
    let exponent = (bits >> MANTISSA_BITS) as i32 & 0x7ff;
    let (e2, m2) = if exponent == 0 {
        (1 - BIAS - MANTISSA_BITS as i32 - 2, mantissa)
    } else {
        (
            exponent - BIAS - MANTISSA_BITS as i32 - 2,
            (1u64 << MANTISSA_BITS) | mantissa,
        )
    };
    let accept_bounds = m2 & 1 == 0;
    let mv = 4 * m2;
    let mm_shift = u64::from(mantissa != 0 || exponent <= 1);
    let t = tables();
    let (mut vr, mut vp, mut vm);
    let e10;
    let mut vm_trailing_zeros = false;
    let mut vr_trailing_zeros = false;
    if e2 >= 0 {
        let q = log10_pow2(e2) - i32::from(e2 > 3);
        e10 = q;
        let k = POW5_INV_BITCOUNT + pow5bits(q) - 1;
        let i = -e2 + q + k;
        let mul = t.pow5_inv[q as usize];
        vr = mul_shift(4 * m2, mul, i);
        vp = mul_shift(4 * m2 + 2, mul, i);
        vm = mul_shift(4 * m2 - 1 - mm_shift, mul, i);
        if q <= 21 {
            if mv % 5 == 0 {
                vr_trailing_zeros = multiple_of_pow5(mv, q);
            } else if accept_bounds {
                vm_trailing_zeros = multiple_of_pow5(mv - 1 - mm_shift, q);
            } else {
                vp -= u64::from(multiple_of_pow5(mv + 2, q));
            }
        }
    } else {
        let q = log10_pow5(-e2) - i32::from(-e2 > 1);
        e10 = q + e2;
        let i = -e2 - q;
        let k = pow5bits(i) - POW5_BITCOUNT;
        let j = q - k;
        let mul = t.pow5[i as usize];
        vr = mul_shift(4 * m2, mul, j);
        vp = mul_shift(4 * m2 + 2, mul, j);
        vm = mul_shift(4 * m2 - 1 - mm_shift, mul, j);
        if q <= 1 {
            vr_trailing_zeros = true;
            if accept_bounds {
                vm_trailing_zeros = mm_shift == 1;
            } else {
                vp -= 1;
            }
        } else if q < 63 {
            vr_trailing_zeros = multiple_of_pow2(mv, q);
        }
    }
    let mut removed = 0i32;
    let output = if vm_trailing_zeros || vr_trailing_zeros {
        // The general case (rare).
        let mut last = 0u64;
        while vp / 10 > vm / 10 {
            vm_trailing_zeros &= vm % 10 == 0;
            vr_trailing_zeros &= last == 0;
            last = vr % 10;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed += 1;
        }
        if vm_trailing_zeros {
            while vm % 10 == 0 {
                vr_trailing_zeros &= last == 0;
                last = vr % 10;
                vr /= 10;
                vm /= 10;
                removed += 1;
            }
        }
        // Exactly halfway between two shortest candidates, Ryū rounds to
        // even; Rust's formatter (and so every score text written before
        // this module) rounds up, which `last >= 5` does.
        let _ = vr_trailing_zeros;
        vr + u64::from((vr == vm && (!accept_bounds || !vm_trailing_zeros)) || last >= 5)
    } else {
        let mut round_up = false;
        if vp / 100 > vm / 100 {
            round_up = vr % 100 >= 50;
            vr /= 100;
            vp /= 100;
            vm /= 100;
            removed += 2;
        }
        while vp / 10 > vm / 10 {
            round_up = vr % 10 >= 5;
            vr /= 10;
            vp /= 10;
            vm /= 10;
            removed += 1;
        }
        vr + u64::from(vr == vm || round_up)
    };
    (output, e10 + removed)
}

/// "00" to "99", two digits per entry.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The decimal digits of `n` into `buf`; returns how many. Writes from the
/// right, two digits per division.
fn digits(mut n: u64, buf: &mut [u8; 20]) -> usize {
    let len = n.checked_ilog10().map_or(1, |l| l as usize + 1);
    let mut i = len;
    while n >= 100 {
        let r = (n % 100) as usize * 2;
        n /= 100;
        buf[i - 2..i].copy_from_slice(&PAIRS[r..r + 2]);
        i -= 2;
    }
    if n >= 10 {
        let r = n as usize * 2;
        buf[i - 2..i].copy_from_slice(&PAIRS[r..r + 2]);
    } else {
        buf[i - 1] = b'0' + n as u8;
    }
    len
}

/// A byte sink of fixed capacity: `None` once it would overflow.
struct Sink<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Sink<'_> {
    fn put(&mut self, bytes: &[u8]) -> Option<()> {
        let end = self.len + bytes.len();
        self.buf.get_mut(self.len..end)?.copy_from_slice(bytes);
        self.len = end;
        Some(())
    }

    fn zeros(&mut self, n: usize) -> Option<()> {
        for _ in 0..n {
            self.put(b"0")?;
        }
        Some(())
    }
}

/// `v` as `format!("{v}")` spells it (finite, non-zero), into `out`;
/// the length, or `None` when it does not fit.
pub fn write_display(v: f64, out: &mut [u8]) -> Option<usize> {
    let (d, e) = decompose(v.abs());
    let mut ds = [0u8; 20];
    let n = digits(d, &mut ds) as i32;
    let ds = &ds[..n as usize];
    let mut s = Sink { buf: out, len: 0 };
    if v < 0.0 {
        s.put(b"-")?;
    }
    let point = n + e; // digits before the decimal point
    if point <= 0 {
        s.put(b"0.")?;
        s.zeros((-point) as usize)?;
        s.put(ds)?;
    } else if point < n {
        s.put(&ds[..point as usize])?;
        s.put(b".")?;
        s.put(&ds[point as usize..])?;
    } else {
        s.put(ds)?;
        s.zeros((point - n) as usize)?;
    }
    Some(s.len)
}

/// `v` as `format!("{v:e}")` spells it (finite, non-zero), into `out`;
/// the length, or `None` when it does not fit (25 bytes always do).
pub fn write_exp(v: f64, out: &mut [u8]) -> Option<usize> {
    let (d, e) = decompose(v.abs());
    let mut ds = [0u8; 20];
    let n = digits(d, &mut ds);
    let mut s = Sink { buf: out, len: 0 };
    if v < 0.0 {
        s.put(b"-")?;
    }
    s.put(&ds[..1])?;
    if n > 1 {
        s.put(b".")?;
        s.put(&ds[1..n])?;
    }
    s.put(b"e")?;
    let x = e + n as i32 - 1;
    if x < 0 {
        s.put(b"-")?;
    }
    let mut xs = [0u8; 20];
    let xn = digits(u64::from(x.unsigned_abs()), &mut xs);
    s.put(&xs[..xn])?;
    Some(s.len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn display(v: f64) -> String {
        let mut b = [0u8; 400];
        let n = write_display(v, &mut b).unwrap();
        String::from_utf8(b[..n].to_vec()).unwrap()
    }

    fn exp(v: f64) -> String {
        let mut b = [0u8; 32];
        let n = write_exp(v, &mut b).unwrap();
        String::from_utf8(b[..n].to_vec()).unwrap()
    }

    #[test]
    fn digits_spell_any_u64() {
        for n in [
            0,
            1,
            9,
            10,
            99,
            100,
            101,
            12_345,
            u64::MAX,
            10u64.pow(19),
            10u64.pow(19) - 1,
        ] {
            let mut b = [0u8; 20];
            let len = digits(n, &mut b);
            assert_eq!(&b[..len], n.to_string().as_bytes());
        }
    }

    #[test]
    fn tables_match_the_published_ones() {
        let t = tables();
        let w = |hi: u64, lo: u64| u128::from(hi) << 64 | u128::from(lo);
        assert_eq!(t.pow5_inv[0], w(2_305_843_009_213_693_952, 1));
        assert_eq!(
            t.pow5_inv[1],
            w(1_844_674_407_370_955_161, 11_068_046_444_225_730_970)
        );
        assert_eq!(t.pow5[0], w(1_152_921_504_606_846_976, 0));
        assert_eq!(t.pow5[1], w(1_441_151_880_758_558_720, 0));
        assert_eq!(t.pow5[2], w(1_801_439_850_948_198_400, 0));
        assert_eq!(t.pow5.len(), POW5_TABLE);
        assert_eq!(t.pow5_inv.len(), POW5_INV_TABLE);
    }

    #[test]
    fn edge_values_spell_as_rust_does() {
        for v in [
            1.0,
            0.1,
            0.3,
            2.0 / 3.0,
            1e-5,
            123.456,
            1e23,
            9007199254740993.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::from_bits(0x000F_FFFF_FFFF_FFFF), // the largest subnormal
            1.7976931348623157e308,
            4.0,
            3.9999999999999996,
            2.9833306743649074e-154,
            1e21,
            1e22,
            123456789012345680.0,
            // Exactly halfway between ...309.2 and ...309.3: Rust rounds up.
            f64::from_bits(4_828_709_139_954_211_690),
        ] {
            for x in [v, -v] {
                assert_eq!(display(x), format!("{x}"), "{x:e}");
                assert_eq!(exp(x), format!("{x:e}"), "{x:e}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn any_finite_double_spells_as_rust_does(bits in any::<u64>()) {
            let v = f64::from_bits(bits);
            prop_assume!(v.is_finite() && v != 0.0);
            prop_assert_eq!(exp(v), format!("{v:e}"));
            prop_assert_eq!(display(v), format!("{v}"));
        }

        #[test]
        fn score_text_equals_the_core_fmt_one(bits in any::<u64>()) {
            let v = f64::from_bits(bits);
            let (a, b) = (crate::parse::ScoreText::new(v), crate::parse::ScoreText::new_fmt(v));
            prop_assert_eq!(a.as_bytes(), b.as_bytes());
        }

        #[test]
        fn packed_rank_scores_spell_as_rust_does(bits in 0x0010_0000_0000_0000u64..0x4010_0000_0000_0000) {
            let v = f64::from_bits(bits);
            prop_assert_eq!(exp(v), format!("{v:e}"));
        }

        #[test]
        fn halfway_values_spell_as_rust_does(n in (1u64 << 50)..(1u64 << 53), d in prop_oneof![Just(2.0), Just(4.0), Just(8.0)]) {
            let v = n as f64 / d;
            prop_assert_eq!(exp(v), format!("{v:e}"));
            prop_assert_eq!(display(v), format!("{v}"));
        }

        #[test]
        fn short_decimals_spell_as_rust_does(n in any::<i32>(), scale in 0i32..12) {
            let v = f64::from(n) / 10f64.powi(scale);
            prop_assume!(v != 0.0);
            prop_assert_eq!(display(v), format!("{v}"));
            prop_assert_eq!(exp(v), format!("{v:e}"));
        }
    }
}
