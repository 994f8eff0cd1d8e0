//! The seeded generators shared by the randomized tests (deterministic for a
//! seed, so a failure replays).
//!
//! Two algorithms, because tests depend on the sequence their seed gives:
//! - [`Rng`]: xorshift64*. [`Rng::new`] scrambles the seed (the hot-board and
//!   hostile tests); `Rng(state)` starts from the raw state (cluster, crash, fuzz).
//! - [`SplitMix`]: splitmix64, seeded with `SplitMix(seed)` (rank, hll_diff,
//!   replication, and the data sets of examples/bench, which includes this
//!   file with `#[path]`).
//!
//! Both have the same helpers on top of `next`.
#![allow(dead_code)]

/// xorshift64*.
pub struct Rng(pub u64);

/// splitmix64.
pub struct SplitMix(pub u64);

/// The helpers, built on `self.next()`; the same formulas for both generators.
macro_rules! helpers {
    () => {
        /// Uniform in `0..n` (`n` must not be 0).
        pub fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        /// Uniform in `0..n` from the high bits of `next() * n` (multiply-shift,
        /// no modulo; 0 when `n` is 0): how examples/bench draws its data sets.
        pub fn below_scaled(&mut self, n: u64) -> u64 {
            ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
        }
        /// Uniform in `0..n`, and 0 when `n` is 0.
        pub fn below_any(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
        /// True once in `n` draws (always when `n` is 0 or 1).
        pub fn one_in(&mut self, n: u64) -> bool {
            self.below_any(n) == 0
        }
        /// True with probability `p` percent.
        pub fn pct(&mut self, p: u64) -> bool {
            self.below(100) < p
        }
        /// Uniform in `lo..=hi`.
        pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
            lo + (self.next() % ((hi - lo) as u64 + 1)) as i64
        }
        /// Uniform in `[0, 1)`.
        pub fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
        pub fn chance(&mut self, p: f64) -> bool {
            self.unit() < p
        }
        pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
            &v[self.range(0, v.len() as i64 - 1) as usize]
        }
        /// Skewed towards small indexes, so a few articles get most views.
        pub fn skewed(&mut self, n: usize) -> usize {
            let u = self.unit();
            ((u * u * n as f64) as usize).min(n - 1)
        }
        /// Fisher–Yates, from the end.
        pub fn shuffle<T>(&mut self, v: &mut [T]) {
            for i in (1..v.len()).rev() {
                let j = self.range(0, i as i64) as usize;
                v.swap(i, j);
            }
        }
    };
}

impl Rng {
    /// A generator whose state is the scrambled seed (never 0).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    helpers!();
}

impl SplitMix {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    helpers!();
}
