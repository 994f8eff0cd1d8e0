//! Hot-article core: the decay formula, the dedup decision and top-N
//! selection with a pruning bound. Pure Rust, no Redis; times are
//! milliseconds since the unix epoch.

pub mod dedup;
pub mod hll;
pub mod record;
pub mod settings;
pub mod trending;
pub mod view;

use crate::detmath;
use std::cmp::Ordering;

/// Milliseconds in an hour.
pub const HOUR_MS: f64 = 3_600_000.0;

/// Parameters of the gravity formula
/// `score = (alpha·pv + beta·uv) / (hours_since_publish + base)^gamma`
/// (the Hacker News ranking family: Amir Salihefendic, "How Hacker News
/// ranking algorithm works", 2010; gamma 1.3–1.8 is the usual range).
///
/// Defaults: [`Formula::DEFAULT`]; valid ranges: [`ALPHA_RANGE`],
/// [`BETA_RANGE`], [`BASE_RANGE`], [`GAMMA_RANGE`] (the module configs
/// `hotrank.*` are declared from these).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Formula {
    /// Weight of a page view (PV).
    pub alpha: f64,
    /// Weight of a unique visitor (UV).
    pub beta: f64,
    /// Hours added to the age, so a new article's score is finite.
    pub base: f64,
    /// Gravity exponent.
    pub gamma: f64,
}

/// Valid `alpha` (inclusive).
pub const ALPHA_RANGE: (f64, f64) = (0.0, 1e6);
/// Valid `beta` (inclusive).
pub const BETA_RANGE: (f64, f64) = (0.0, 1e6);
/// Valid `base` in hours (inclusive). Its lower end keeps every score finite
/// and >= 0 for every allowed alpha, beta, gamma and any pv, uv in
/// `0..=i64::MAX` and any two i64 millisecond times:
/// - the numerator is at most `2·1e6·9.2e18 ≈ 1.8e25`, finite, and >= 0;
/// - the denominator `(hours + base)^gamma` is at least `0.001^10 = 1e-30`
///   (hours >= 0, base >= 0.001; for a base below 1 the worst gamma is 10),
///   so it is never 0 and the score is at most `1.8e25 / 1e-30 = 1.8e55`;
/// - hours are at most `2^64 ms ≈ 5.1e12 h`, so the denominator is at most
///   `(5.1e12 + 1e6)^10 ≈ 1.2e127`, finite (a score may round to 0, never NaN).
///
/// A base of 0 gives 0/0 for an article without views at age 0, and a tiny
/// base such as 1e-300 gives `x / 0` once raised to a gamma above 1.
pub const BASE_RANGE: (f64, f64) = (0.001, 1e6);
/// Valid `gamma` (inclusive).
pub const GAMMA_RANGE: (f64, f64) = (0.0, 10.0);

impl Default for Formula {
    fn default() -> Self {
        Formula::DEFAULT
    }
}

impl Formula {
    /// The default parameters: alpha 1, beta 1.2, base 2 hours, gamma 1.5.
    pub const DEFAULT: Formula = Formula {
        alpha: 1.0,
        beta: 1.2,
        base: 2.0,
        gamma: 1.5,
    };

    /// Whether every parameter is within its config range, which makes every
    /// score finite and non-negative (see [`BASE_RANGE`]).
    pub fn is_valid(&self) -> bool {
        let within = |v: f64, (lo, hi): (f64, f64)| (lo..=hi).contains(&v);
        within(self.alpha, ALPHA_RANGE)
            && within(self.beta, BETA_RANGE)
            && within(self.base, BASE_RANGE)
            && within(self.gamma, GAMMA_RANGE)
    }

    /// The time-independent numerator `alpha·pv + beta·uv`.
    pub fn numerator(&self, pv: i64, uv: i64) -> f64 {
        self.alpha * pv as f64 + self.beta * uv as f64
    }

    /// The decayed score at `at_ms` of an article published at `published_ms`.
    /// Age in hours is clamped at 0 (a view before publication counts as age 0).
    ///
    /// The same bits on every machine: IEEE-754 `+`, `×`, `÷` and
    /// [`detmath::pow`], never the platform's `pow` (docs/determinism.md),
    /// so a replica or an AOF load computes the master's score. Non-increasing
    /// in `at_ms` when [`Formula::decays_monotonically`].
    pub fn score(&self, pv: i64, uv: i64, published_ms: i64, at_ms: i64) -> f64 {
        let hours = (at_ms.saturating_sub(published_ms) as f64 / HOUR_MS).max(0.0);
        self.numerator(pv, uv) / detmath::pow(hours + self.base, self.gamma)
    }

    /// Whether [`Formula::score`] is proven non-increasing in time for fixed
    /// counts, so a stored score bounds the article's later scores (what
    /// HOT.TOP's pruning needs): true for a gamma of 0 or from
    /// [`detmath::MONOTONE_MIN_EXPONENT`] (`2^-40`) on, where
    /// [`detmath::pow`] is non-decreasing in its base. Every step before the
    /// `pow` (`÷`, `max`, `+`) and after it (`÷` of a non-negative
    /// numerator) is a correctly rounded, monotone operation.
    pub fn decays_monotonically(&self) -> bool {
        self.gamma == 0.0 || self.gamma >= detmath::MONOTONE_MIN_EXPONENT
    }

    /// A fingerprint of the parameters (16 hex digits of a 64-bit FNV-1a
    /// over their bit patterns): equal fingerprints give equal scores.
    pub fn fingerprint(&self) -> [u8; 16] {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in [self.alpha, self.beta, self.base, self.gamma] {
            for b in v.to_bits().to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
        let mut hex = [0u8; 16];
        for (i, d) in hex.iter_mut().enumerate() {
            *d = b"0123456789abcdef"[(h >> (60 - 4 * i)) as usize & 0xf];
        }
        hex
    }
}

/// Whether a view at `at_ms` repeats a counted view at `last_counted_ms`:
/// true when they are strictly less than `window_ms` apart, the counted view
/// before or after it (`|at_ms - last_counted_ms| < window_ms`). The window
/// lies around each counted view (duplicates do not extend it), so views
/// replayed out of order (`AT` times going backwards) are deduplicated the
/// same as views in order. A window of 0 turns dedup off.
pub fn is_duplicate(last_counted_ms: Option<i64>, at_ms: i64, window_ms: i64) -> bool {
    match last_counted_ms {
        Some(last) => at_ms.abs_diff(last) < window_ms.max(0) as u64,
        None => false,
    }
}

/// Hot-list order: higher score first, equal scores by article id ascending.
pub fn hot_order(a: (&[u8], f64), b: (&[u8], f64)) -> Ordering {
    b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0))
}

/// The best `n` articles seen so far, in [`hot_order`].
#[derive(Debug)]
pub struct TopN {
    n: usize,
    best: Vec<(Vec<u8>, f64)>,
}

impl TopN {
    /// An empty selection of at most `n` entries.
    pub fn new(n: usize) -> Self {
        TopN {
            n,
            best: Vec::with_capacity(n.min(1024) + 1),
        }
    }

    /// Offers a candidate with its exact score at query time.
    pub fn offer(&mut self, article: &[u8], score: f64) {
        if self.n == 0 {
            return;
        }
        if self.best.len() == self.n {
            let worst = &self.best[self.n - 1];
            if hot_order((article, score), (&worst.0, worst.1)) != Ordering::Less {
                return;
            }
            self.best.pop();
        }
        let pos = self
            .best
            .partition_point(|(a, s)| hot_order((a, *s), (article, score)) == Ordering::Less);
        self.best.insert(pos, (article.to_vec(), score));
    }

    /// True when no candidate whose score is at most `upper_bound` can enter:
    /// the selection is full and its worst score is strictly greater.
    /// (An equal score could still enter by a smaller article id.)
    pub fn is_closed_below(&self, upper_bound: f64) -> bool {
        self.n == 0 || (self.best.len() == self.n && self.best[self.n - 1].1 > upper_bound)
    }

    /// The selection, best first.
    pub fn into_sorted(self) -> Vec<(Vec<u8>, f64)> {
        self.best
    }
}

/// One article as the reference model sees it.
#[derive(Clone, Debug)]
pub struct Article {
    pub id: Vec<u8>,
    pub pv: i64,
    pub uv: i64,
    pub published_ms: i64,
}

/// Brute-force hot list: scores every article at `at_ms`, keeps those
/// published in `[at_ms - window_ms, at_ms]` when a window is given, sorts in
/// [`hot_order`] and keeps `n`. The reference for tests of the pruned path.
pub fn brute_force_top(
    f: &Formula,
    articles: &[Article],
    at_ms: i64,
    window_ms: Option<i64>,
    n: usize,
) -> Vec<(Vec<u8>, f64)> {
    let mut all: Vec<(Vec<u8>, f64)> = articles
        .iter()
        .filter(|a| in_window(a.published_ms, at_ms, window_ms))
        .map(|a| (a.id.clone(), f.score(a.pv, a.uv, a.published_ms, at_ms)))
        .collect();
    all.sort_by(|a, b| hot_order((&a.0, a.1), (&b.0, b.1)));
    all.truncate(n);
    all
}

/// Whether an article published at `published_ms` is inside a `WINDOW` of
/// `window_ms` ending at `at_ms` (both ends included). No window: always.
pub fn in_window(published_ms: i64, at_ms: i64, window_ms: Option<i64>) -> bool {
    match window_ms {
        Some(w) => published_ms <= at_ms && published_ms >= at_ms.saturating_sub(w),
        None => true,
    }
}

/// How many articles a HOT board may hold above `max` (its `MAX-ARTICLES`)
/// before a counted view trims it back to exactly `max`: twice `max`, at
/// least 16. A trim scores about `max + slack` articles, and one happens per
/// `slack` new articles, so the cost per new article is about
/// `(max + slack) / slack` = 1.5 article scorings; the board ZSET holds at
/// most 3 × `max` articles.
///
/// Chosen from `make profile` (long tail, 100,000 articles and visitors,
/// `max` 1000): with half of `max` (the previous slack) the trim's selection
/// cost 31,400 instructions per view, about 3 scorings per new article;
/// twice `max` halves the scorings. The memory it costs is the ZSET entries
/// between 1.5 × and 3 × `max`: about 1,500 entries of roughly 100 bytes,
/// 150 KB per board at the default 1000 (the trimmed articles' counters are
/// kept until retention either way).
pub fn trim_slack(max: i64) -> i64 {
    max.saturating_mul(2).max(16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_slack_is_twice_max_and_at_least_16() {
        assert_eq!(trim_slack(1000), 2000);
        assert_eq!(trim_slack(50), 100);
        assert_eq!(trim_slack(8), 16);
        assert_eq!(trim_slack(1), 16);
        assert_eq!(trim_slack(i64::MAX), i64::MAX);
    }

    #[test]
    fn hll_cache_is_read_only_from_valid_headers() {
        let mut sparse = b"HYLL\x01\0\0\0".to_vec();
        sparse.extend(42u64.to_le_bytes());
        sparse.extend([0x7f, 0xff]); // XZERO covering all registers
        assert_eq!(crate::hot::hll::cached_count(&sparse), Some(42));
        let mut stale = sparse.clone();
        stale[15] |= 0x80;
        assert_eq!(crate::hot::hll::cached_count(&stale), None);
        let mut dense = b"HYLL\x00\0\0\0".to_vec();
        dense.extend(7u64.to_le_bytes());
        dense.resize(16 + 12_288, 0);
        assert_eq!(crate::hot::hll::cached_count(&dense), Some(7));
        assert_eq!(
            crate::hot::hll::cached_count(&dense[..100]),
            None,
            "a short dense HLL"
        );
        assert_eq!(
            crate::hot::hll::cached_count(b"HYLX\x01\0\0\0\0\0\0\0\0\0\0\0"),
            None
        );
        assert_eq!(crate::hot::hll::cached_count(b"12"), None);
    }
    use proptest::prelude::*;

    #[test]
    fn score_matches_hand_computed_values() {
        let f = Formula::default();
        // 10 PV, 5 UV, viewed at publication: (10 + 6) / 2^1.5 = 16 / 2.828427… = 5.656854…
        let s = f.score(10, 5, 0, 0);
        assert!((s - 5.656_854_249_492_381).abs() < 1e-12, "{s}");
        // 2 hours later: 16 / 4^1.5 = 16 / 8 = 2
        assert_eq!(f.score(10, 5, 0, 2 * 3_600_000), 2.0);
        // 7 hours later: 16 / 9^1.5 = 16 / 27
        assert!((f.score(10, 5, 0, 7 * 3_600_000) - 16.0 / 27.0).abs() < 1e-15);
        // A view before publication counts as age 0.
        assert_eq!(f.score(10, 5, 3_600_000, 0), f.score(10, 5, 0, 0));
    }

    #[test]
    fn fingerprint_changes_with_any_parameter() {
        let a = Formula::default();
        let b = Formula { gamma: 1.8, ..a };
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.fingerprint(), Formula::default().fingerprint());
        let h = a.fingerprint();
        assert!(h
            .iter()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn repeat_view_within_window_is_duplicate() {
        let w = 900_000;
        assert!(!is_duplicate(None, 5, w));
        assert!(is_duplicate(Some(0), 0, w));
        assert!(is_duplicate(Some(0), 899_999, w));
        assert!(!is_duplicate(Some(0), 900_000, w));
        // An out-of-order view within the window before a counted one is a duplicate.
        assert!(is_duplicate(Some(1_000_000), 999_999, w));
        assert!(is_duplicate(Some(1_000_000), 100_001, w));
        assert!(!is_duplicate(Some(1_000_000), 100_000, w));
        // A window of 0 turns dedup off.
        assert!(!is_duplicate(Some(0), 0, 0));
    }

    #[test]
    fn top_n_breaks_ties_by_article_ascending() {
        let mut t = TopN::new(2);
        t.offer(b"c", 1.0);
        t.offer(b"b", 1.0);
        t.offer(b"a", 1.0);
        t.offer(b"z", 0.5);
        let got: Vec<_> = t.into_sorted().into_iter().map(|(a, _)| a).collect();
        assert_eq!(got, vec![b"a".to_vec(), b"b".to_vec()]);
    }

    #[test]
    fn top_n_closes_only_below_strictly_smaller_bounds() {
        let mut t = TopN::new(1);
        assert!(!t.is_closed_below(0.0));
        t.offer(b"b", 2.0);
        assert!(t.is_closed_below(1.9));
        assert!(!t.is_closed_below(2.0));
    }

    fn articles() -> impl Strategy<Value = Vec<Article>> {
        prop::collection::vec((0i64..50, 0i64..50, 0i64..1_000_000_000), 0..60).prop_map(|v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (pv, uv, p))| Article {
                    id: format!("a{}", i % 37).into_bytes(),
                    pv,
                    uv,
                    published_ms: p,
                })
                .collect()
        })
    }

    /// A parameter anywhere in `range`, with extra weight on both ends.
    fn in_range((lo, hi): (f64, f64)) -> impl Strategy<Value = f64> {
        prop_oneof![Just(lo), Just(hi), lo..=hi, Just(lo + (hi - lo) * 1e-9)]
    }

    fn formulas() -> impl Strategy<Value = Formula> {
        (
            in_range(ALPHA_RANGE),
            in_range(BETA_RANGE),
            in_range(BASE_RANGE),
            in_range(GAMMA_RANGE),
        )
            .prop_map(|(alpha, beta, base, gamma)| Formula {
                alpha,
                beta,
                base,
                gamma,
            })
    }

    fn any_count() -> impl Strategy<Value = i64> {
        prop_oneof![Just(0), Just(i64::MAX), 0..=i64::MAX]
    }

    fn any_time() -> impl Strategy<Value = i64> {
        prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(0), any::<i64>()]
    }

    #[test]
    fn score_is_finite_at_the_corners_of_the_ranges() {
        let ends = |(lo, hi): (f64, f64)| [lo, hi];
        for alpha in ends(ALPHA_RANGE) {
            for beta in ends(BETA_RANGE) {
                for base in ends(BASE_RANGE) {
                    for gamma in ends(GAMMA_RANGE) {
                        let f = Formula {
                            alpha,
                            beta,
                            base,
                            gamma,
                        };
                        for (pv, uv) in [(0, 0), (i64::MAX, i64::MAX), (1, 0)] {
                            for (p, at) in [(0, 0), (i64::MIN, i64::MAX), (i64::MAX, i64::MIN)] {
                                let s = f.score(pv, uv, p, at);
                                assert!(s.is_finite() && s >= 0.0, "{f:?} {pv} {uv} {p} {at}: {s}");
                            }
                        }
                    }
                }
            }
        }
    }

    proptest! {
        /// With every parameter in its config range, any counts and any two
        /// times, the score is finite and non-negative.
        #[test]
        fn score_is_finite_and_non_negative_within_the_config_ranges(
            f in formulas(), pv in any_count(), uv in any_count(), published in any_time(), at in any_time()
        ) {
            let s = f.score(pv, uv, published, at);
            prop_assert!(s.is_finite() && s >= 0.0, "{:?} pv {} uv {} published {} at {}: {}", f, pv, uv, published, at, s);
        }

        /// Offering candidates in order of an upper bound and stopping as soon
        /// as the selection is closed gives the brute-force answer.
        #[test]
        fn pruned_selection_equals_brute_force(arts in articles(), n in 1usize..10, extra in 0i64..500_000_000) {
            let f = Formula::default();
            // Deduplicate ids as a board would.
            let mut seen = std::collections::BTreeMap::new();
            for a in arts { seen.insert(a.id.clone(), a); }
            let arts: Vec<Article> = seen.into_values().collect();
            let view_ms = 1_000_000_000;
            let at = view_ms + extra;
            // Stored scores: as of the last view (upper bounds at any later time).
            let mut stored: Vec<(f64, &Article)> = arts.iter().map(|a| (f.score(a.pv, a.uv, a.published_ms, view_ms), a)).collect();
            stored.sort_by(|x, y| y.0.total_cmp(&x.0));
            let mut top = TopN::new(n);
            for (bound, a) in &stored {
                if top.is_closed_below(*bound) { break; }
                top.offer(&a.id, f.score(a.pv, a.uv, a.published_ms, at));
            }
            prop_assert_eq!(top.into_sorted(), brute_force_top(&f, &arts, at, None, n));
        }
    }
}
