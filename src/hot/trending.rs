//! Trending: an exponentially decayed ranking of recent views, exact at any
//! query time, kept beside a HOT board's hot ranking. Pure Rust, no Redis;
//! times are unix milliseconds, the half-life `h` is in milliseconds.
//!
//! Forward decay (G. Cormode, V. Shkapenyuk, D. Srivastava, B. Xu,
//! "Forward Decay: A Practical Time Decay Model for Streaming Systems",
//! ICDE 2009): with a landmark time `L` and a half-life `H`, a counted view
//! at time `t` adds `w · 2^((t − L)/H)` to the article's stored sum `S`,
//! where `w = alpha + beta · (UV after − UV before)`. The trending score at
//! a query time `q` is `S · 2^(−(q − L)/H)` = Σ `w · 2^(−(q − t)/H)`: every
//! view decays by its own age. The factor `2^(−(q − L)/H)` is the same for
//! every article, so the order of the stored sums is the order at every
//! moment, and the top N is a reverse range of the sums.
//!
//! Exactness. Every `2^x` here is split into a whole power of two (`n`, the
//! floor of `x`) and a fraction (`r` in `[0, 1)`): `2^x = 2^n · 2^r`, with
//! `2^r` from [`crate::detmath::exp2`] (the same bits on every machine) and
//! `2^n` applied by multiplying by an exact power of two. Both `n` and `r`
//! come from integer arithmetic on milliseconds, so the rounding is that of
//! `r`'s one division and one `exp2`, whatever the distance to `L`.
//!
//! Landmark moves. The sums grow by 2 every half-life after `L`; before a
//! view's `(t − L)/H` exceeds [`MAX_EXPONENT`] the landmark moves forward by
//! a whole number `k` of half-lives and every stored sum is multiplied by
//! `2^−k`. A product by a power of two is exact in binary floating point
//! (short of subnormals, below `2^−1022`), and the score's fraction `r` is
//! the same before and after the move, so no score changes by a single bit.
//! The move is decided from `t`, the stored `L` and `H` only, so a replica
//! and an AOF load make the same move.

use crate::detmath;

/// Smallest non-zero half-life (ms): 60 seconds.
pub const MIN_HALF_LIFE_MS: i64 = 60_000;
/// Largest half-life (ms): 315,360,000 seconds (ten years of 365 days).
pub const MAX_HALF_LIFE_MS: i64 = 315_360_000_000;
/// A view whose `(t − L)/H` exceeds this many half-lives moves the landmark
/// first: the sums stay below about `2^(513 + 20 + 63)`, far from the
/// double's `2^1024`, for any alpha, beta and UV rise in range.
pub const MAX_EXPONENT: i64 = 512;

/// Whether `ms` is a valid half-life: 0 (no trending) or from
/// [`MIN_HALF_LIFE_MS`] to [`MAX_HALF_LIFE_MS`], a whole number of seconds.
pub fn valid_half_life(ms: i64) -> bool {
    ms == 0 || ((MIN_HALF_LIFE_MS..=MAX_HALF_LIFE_MS).contains(&ms) && ms % 1000 == 0)
}

/// `x · 2^n`, exact while the result is a normal double (products by a
/// power of two only move the exponent); rounds once below `2^−1022`, and
/// gives infinity from `2^1024` on.
pub fn scale_pow2(x: f64, n: i64) -> f64 {
    let mut x = x;
    let mut n = n.clamp(-4000, 4000);
    while n != 0 {
        let step = n.clamp(-1000, 1000);
        // 2^step is a normal double: the exponent field is step + 1023 in [23, 2023].
        let p = f64::from_bits(((step + 1023) as u64) << 52);
        x *= p;
        n -= step;
        if x == 0.0 || x.is_infinite() {
            break;
        }
    }
    x
}

/// `d / h` for `d = a − b` split into a whole part and a fraction:
/// `(n, 2^(r))` where `d = n·h + rem`, `0 ≤ rem < h` and `r = rem / h` in
/// `[0, 1)`; `2^r` from [`detmath::exp2`]. `h` > 0 (ms). In 64 bits when
/// `a − b` fits (one division, `rem < h < 2^53` converted exactly): the
/// same `n` and `rem`, so the same bits, as the 128-bit arithmetic of the
/// rare other case.
fn split(a: i64, b: i64, h: i64) -> (i64, f64) {
    let (n, rem) = match a.checked_sub(b) {
        Some(d) if h > 0 => (d.div_euclid(h), d.rem_euclid(h) as f64),
        _ => {
            let (d, h128) = (i128::from(a) - i128::from(b), i128::from(h));
            let n = d.div_euclid(h128);
            (
                n.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
                d.rem_euclid(h128) as f64,
            )
        }
    };
    (
        n.clamp(i64::MIN / 2, i64::MAX / 2),
        detmath::exp2(rem / h as f64),
    )
}

/// Grain of [`view_keep`] (ms): rounded down to a whole minute, so views
/// whose `AT` runs a little ahead of the server clock rewrite the board
/// record at most once per minute of lead.
pub const KEEP_STEP: i64 = 60_000;

/// log2 of a bound of the total weight all counted views of one article can
/// add: each adds at most `alpha + beta · rise` ≤ 2^20 · (1 + 2^63) < 2^84
/// (alpha and beta at most 10^6 < 2^20, whatever they were at the view; a
/// rise of the UV estimate below 2^63), and no article gets 2^63 counted
/// views (its PV counter stops there, and no server runs that many
/// commands).
pub const LOG2_MAX_WEIGHT: i64 = 147;

/// Safety margin of [`expired_ceiling`], in half-lives (a factor 2^16):
/// covers the rounding of the stored sums and the few milliseconds between
/// the clock the server judges expiry by and the one HOT.TOP reads.
pub const KEEP_MARGIN: i64 = 16;

/// What a counted view at `t` guarantees (ms, may be negative): its
/// article's counters cannot expire before `t` plus this. `kept` is how
/// long past the server clock `now` the view leaves them at least
/// (retention − its refresh slack, see
/// [`crate::hot::view::retention_slack`]); the counters expire by the
/// clock, the view counts at `t` (`AT`, else the clock), so a view with
/// `AT` in the past guarantees more (HOT.VIEW refuses an `AT` later than
/// the clock; one would guarantee less). Rounded down to [`KEEP_STEP`].
pub fn view_keep(t: i64, now: i64, kept: i64) -> i64 {
    // In 64 bits when nothing can overflow (the usual case: one division).
    let k64 = t.checked_sub(now).and_then(|lead| kept.checked_sub(lead));
    if let Some(k) = k64.filter(|k| k.unsigned_abs() < 1 << 62) {
        return (k.div_euclid(KEEP_STEP) * KEEP_STEP).clamp(i64::MIN / 2, i64::MAX / 2);
    }
    let k = i128::from(kept) - (i128::from(t) - i128::from(now));
    let step = i128::from(KEEP_STEP);
    let k = k.div_euclid(step) * step;
    k.clamp(i128::from(i64::MIN / 2), i128::from(i64::MAX / 2)) as i64
}

/// A board's `keep` after a counted view that guarantees `view` ms
/// ([`view_keep`]): the smallest over the views counted into the sums.
/// The first view since trending started (no `landmark` yet) starts it;
/// a board whose record did not keep it (`old` `None` with a landmark)
/// stays unknown, since views before it are not covered.
pub fn next_keep(old: Option<i64>, landmark: Option<i64>, view: i64) -> Option<i64> {
    match landmark {
        None => Some(view),
        Some(_) => old.map(|k| k.min(view)),
    }
}

/// The trending score (at the server clock) at or below which an article
/// may have lost its counters to retention, on a board whose views all
/// guarantee `keep` ms ([`next_keep`]) with half-life `h` (ms): such an
/// article's counted views are all more than `keep` before the clock, so
/// it scores at most 2^[`LOG2_MAX_WEIGHT`] · 2^(−keep/h); with the
/// [`KEEP_MARGIN`] that is 2^(163 − ⌊keep/h⌋). An article scoring above
/// it at the server clock still has its counters (short of eviction or a
/// client deleting them). Never below 2^−1000 (scores that small are
/// compared inexactly), infinite when nothing is certain.
pub fn expired_ceiling(keep: i64, h: i64) -> f64 {
    let k = (LOG2_MAX_WEIGHT + KEEP_MARGIN).saturating_sub(keep.div_euclid(h.max(1)));
    scale_pow2(1.0, k.max(-1000))
}

/// The landmark a board takes at its first counted view after trending is
/// enabled: the view time `t` floored to a whole number of half-lives `h`
/// (both ms), so `0 ≤ t − L < h`.
pub fn first_landmark(t: i64, h: i64) -> i64 {
    t.div_euclid(h).saturating_mul(h)
}

/// How many whole half-lives the landmark `l` moves forward before a view
/// at `t` is added (0: it stays): when `t − l` exceeds [`MAX_EXPONENT`]
/// half-lives, the `k` that brings it within one half-life of `t`
/// (`0 ≤ t − (l + k·h) < h`). All times and `h` in ms.
pub fn landmark_shift(l: i64, t: i64, h: i64) -> i64 {
    let d = i128::from(t) - i128::from(l);
    let h128 = i128::from(h);
    if d <= i128::from(MAX_EXPONENT) * h128 {
        return 0;
    }
    // t − l < 2^64 and h ≥ 1, so k fits an i64.
    i64::try_from(d.div_euclid(h128)).unwrap_or(i64::MAX)
}

/// The weight a counted view at `t` adds to its article's stored sum, for
/// a board of landmark `l` and half-life `h` (ms): `alpha · 2^x + beta ·
/// 2^x · uv_rise` with `x = (t − l)/h`. `uv_rise` is the UV estimate after
/// the view minus the one before (0 when it did not rise).
pub fn weight(alpha: f64, beta: f64, uv_rise: i64, t: i64, l: i64, h: i64) -> f64 {
    let (n, g) = split(t, l, h);
    let w = alpha * g + beta * g * uv_rise.max(0) as f64;
    scale_pow2(w, n)
}

/// The trending score at query time `q` of a stored sum `s`, for a board of
/// landmark `l` and half-life `h` (ms): `s · 2^(−(q − l)/h)`.
pub fn score_at(s: f64, q: i64, l: i64, h: i64) -> f64 {
    Decay::new(q, l, h).score(s)
}

/// The decay factor `2^(−(q − l)/h)` of one query time `q`, landmark `l`
/// and half-life `h` (ms), split once (`2^m · g`, one [`detmath::exp2`])
/// for scoring many stored sums: [`Decay::score`] gives the same bits as
/// [`score_at`] for every sum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decay {
    /// The whole power of two `m` (floor of `(l − q)/h`).
    m: i64,
    /// The fraction's factor `2^(rem/h)`, in `[1, 2)`.
    g: f64,
}

impl Decay {
    /// The split of `2^((l − q)/h)`: `l − q = m·h + rem`, `0 ≤ rem < h`.
    pub fn new(q: i64, l: i64, h: i64) -> Decay {
        let (m, g) = split(l, q, h);
        Decay { m, g }
    }

    /// The trending score of stored sum `s`: `(s · g) · 2^m`; the rounded
    /// part (`s · g`) is the same after a landmark move. Monotone
    /// (non-decreasing) in `s`, so a larger sum never scores lower.
    pub fn score(&self, s: f64) -> f64 {
        scale_pow2(s * self.g, self.m)
    }
}

/// What a counted view does to a board's trending ranking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The landmark after the view (ms).
    pub landmark: i64,
    /// Whole half-lives the landmark moved forward (0: none): every stored
    /// sum is multiplied by `2^−shift` ([`rescale`]) before the weight is added.
    pub shift: i64,
    /// What the view adds to its article's sum (after the rescale).
    pub weight: f64,
}

/// The trending step of a counted view at `t` on a board of half-life `h`
/// (ms, > 0) and stored landmark `landmark` (`None` before the first
/// counted view since trending was enabled).
pub fn step(landmark: Option<i64>, t: i64, h: i64, alpha: f64, beta: f64, uv_rise: i64) -> Step {
    let l0 = landmark.unwrap_or_else(|| first_landmark(t, h));
    let shift = landmark_shift(l0, t, h);
    // l0 ≤ l ≤ t, so the sum fits an i64.
    let l = i64::try_from(i128::from(l0) + i128::from(shift) * i128::from(h)).unwrap_or(t);
    Step {
        landmark: l,
        shift,
        weight: weight(alpha, beta, uv_rise, t, l, h),
    }
}

/// A stored sum after the landmark moved forward by `k` half-lives:
/// `s · 2^−k`, exact short of subnormals.
pub fn rescale(s: f64, k: i64) -> f64 {
    scale_pow2(s, -k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const H: i64 = 3_600_000;

    #[test]
    fn half_life_range() {
        assert!(valid_half_life(0));
        assert!(valid_half_life(60_000));
        assert!(valid_half_life(MAX_HALF_LIFE_MS));
        assert!(!valid_half_life(59_000));
        assert!(!valid_half_life(MAX_HALF_LIFE_MS + 1000));
        assert!(!valid_half_life(60_500));
        assert!(!valid_half_life(-60_000));
    }

    #[test]
    fn scale_pow2_is_exact_and_saturates() {
        assert_eq!(scale_pow2(3.0, 4), 48.0);
        assert_eq!(scale_pow2(3.0, -1), 1.5);
        assert_eq!(scale_pow2(1.0, 1023), f64::MAX / (2.0 - f64::EPSILON));
        assert_eq!(scale_pow2(1.0, -1074), f64::from_bits(1));
        assert_eq!(scale_pow2(1.0, -1075 - 10), 0.0);
        assert_eq!(scale_pow2(1.0, 2000), f64::INFINITY);
        assert_eq!(scale_pow2(5.0, 0), 5.0);
        assert_eq!(scale_pow2(1.0, i64::MIN), 0.0);
    }

    #[test]
    fn first_landmark_floors_to_whole_half_lives() {
        assert_eq!(first_landmark(7_200_001, H), 7_200_000);
        assert_eq!(first_landmark(7_200_000, H), 7_200_000);
        assert_eq!(first_landmark(-1, H), -H);
    }

    #[test]
    fn weights_at_hand_computed_times() {
        // One half-life after the landmark a view weighs 2, two after, 4.
        assert_eq!(weight(1.0, 0.0, 0, H, 0, H), 2.0);
        assert_eq!(weight(1.0, 1.2, 1, 2 * H, 0, H), 4.0 + 4.0 * 1.2);
        assert_eq!(weight(1.0, 1.2, 0, 0, 0, H), 1.0);
        // Half a half-life: sqrt 2.
        let w = weight(1.0, 0.0, 0, H / 2, 0, H);
        assert!((w - std::f64::consts::SQRT_2).abs() < 1e-15, "{w}");
        // A view before the landmark weighs less than 1.
        assert_eq!(weight(1.0, 0.0, 0, -H, 0, H), 0.5);
    }

    #[test]
    fn score_decays_by_half_each_half_life() {
        assert_eq!(score_at(8.0, 0, 0, H), 8.0);
        assert_eq!(score_at(8.0, H, 0, H), 4.0);
        assert_eq!(score_at(8.0, 3 * H, 0, H), 1.0);
        let s = score_at(8.0, H / 2, 0, H);
        assert!((s - 8.0 / std::f64::consts::SQRT_2).abs() < 1e-14, "{s}");
        // A view's own score at its time is its weight.
        let w = weight(1.0, 1.2, 3, 5 * H + 1234, 0, H);
        let s = score_at(w, 5 * H + 1234, 0, H);
        assert!((s - (1.0 + 3.6)).abs() < 1e-14, "{s}");
    }

    #[test]
    fn landmark_moves_past_512_half_lives_to_within_one() {
        assert_eq!(landmark_shift(0, 512 * H, H), 0);
        assert_eq!(landmark_shift(0, 512 * H + 1, H), 512);
        assert_eq!(landmark_shift(0, 1000 * H + 5, H), 1000);
        assert_eq!(landmark_shift(0, -5000 * H, H), 0);
        let s = step(Some(0), 700 * H + 17, H, 1.0, 0.0, 0);
        assert_eq!((s.landmark, s.shift), (700 * H, 700));
        assert!(s.weight >= 1.0 && s.weight < 2.0);
        let s = step(None, 3 * H + 17, H, 1.0, 0.0, 0);
        assert_eq!((s.landmark, s.shift), (3 * H, 0));
        let s = step(Some(i64::MIN), i64::MAX, MIN_HALF_LIFE_MS, 1.0, 0.0, 0);
        assert!(i64::MAX - s.landmark < MIN_HALF_LIFE_MS);
        assert!(s.weight.is_finite());
    }

    #[test]
    fn rescale_is_a_power_of_two() {
        assert_eq!(rescale(1024.0, 10), 1.0);
        assert_eq!(rescale(3.0, 0), 3.0);
        assert_eq!(rescale(1.0, 5000), 0.0);
    }

    #[test]
    fn keep_is_retention_less_lead_rounded_down() {
        const DAY: i64 = 86_400_000;
        assert_eq!(view_keep(1_000, 1_000, 89 * DAY), 89 * DAY);
        // AT 5 ms ahead of the clock: a minute less (rounded down).
        assert_eq!(view_keep(1_005, 1_000, 89 * DAY), 89 * DAY - KEEP_STEP);
        // AT an hour behind: an hour more.
        assert_eq!(view_keep(1_000, 1_000 + H, 89 * DAY), 89 * DAY + H);
        assert_eq!(view_keep(i64::MAX, i64::MIN, 0), i64::MIN / 2);
        assert_eq!(view_keep(i64::MIN, i64::MAX, i64::MAX), i64::MAX / 2);
        assert_eq!(next_keep(None, None, 5), Some(5));
        assert_eq!(next_keep(Some(3), Some(0), 5), Some(3));
        assert_eq!(next_keep(Some(7), Some(0), 5), Some(5));
        // A record without it stays unknown.
        assert_eq!(next_keep(None, Some(0), 5), None);
        // Trending (re)starts: the old value goes.
        assert_eq!(next_keep(Some(-9), None, 5), Some(5));
    }

    #[test]
    fn ceilings_at_hand_computed_keeps() {
        const DAY: i64 = 86_400_000;
        // 90-day retention (slack a day), 6 h half-life: 2^(163 − 356).
        assert_eq!(expired_ceiling(89 * DAY, 6 * H), scale_pow2(1.0, -193));
        assert_eq!(expired_ceiling(0, H), scale_pow2(1.0, 163));
        assert_eq!(expired_ceiling(-H, H), scale_pow2(1.0, 164));
        assert_eq!(expired_ceiling(-2000 * H, H), f64::INFINITY);
        assert_eq!(
            expired_ceiling(i64::MIN / 2, MIN_HALF_LIFE_MS),
            f64::INFINITY
        );
        assert_eq!(
            expired_ceiling(i64::MAX / 2, MIN_HALF_LIFE_MS),
            scale_pow2(1.0, -1000)
        );
    }

    /// One counted view of the retention model below: clock advance (ms),
    /// retention (ms), and `AT` relative to the clock (ms).
    type ModelView = (i64, i64, i64);

    fn model_views() -> impl Strategy<Value = Vec<ModelView>> {
        proptest::collection::vec(
            (
                prop_oneof![0i64..1000, 0i64..10_000_000_000],
                prop_oneof![
                    Just(60_000i64),
                    Just(7_776_000_000),
                    (60i64..315_360_000).prop_map(|s| s * 1000)
                ],
                prop_oneof![Just(0i64), -10_000_000_000i64..0, 0i64..10_000_000_000],
            ),
            1..40,
        )
    }

    proptest! {
        /// The lemma HOT.TOP BY trending relies on: the retention model of
        /// HOT.VIEW (a counted view creates the counters to expire
        /// `retention` after the clock, or moves their expiry there when it
        /// is not fresh, [`crate::hot::view::retention_fresh`]), with the
        /// retention changing between views (HOT.ALTER), views ahead of and
        /// behind the clock (`AT`) and counters expiring and coming back:
        /// whenever the counters are gone at a clock `now`, every counted
        /// view is more than the board's `keep` before `now`, so the
        /// article's score at `now` is under [`expired_ceiling`].
        #[test]
        fn expired_counters_score_under_the_ceiling(
            views in model_views(), h in half_life(), after in 1i64..10_000_000_000,
            alpha in 0.0f64..1e6,
        ) {
            let mut clock = 1_700_000_000_000i64;
            let mut expiry: Option<i64> = None;
            let (mut keep, mut landmark) = (None, None);
            let mut times = Vec::new();
            for (dc, retention, lead) in views {
                clock += dc;
                // The counters exist while the clock is not past their expiry.
                let ttl = expiry.filter(|&e| clock <= e).map(|e| e - clock);
                if ttl.is_none() || !crate::hot::view::retention_fresh(ttl, retention) {
                    expiry = Some(clock + retention);
                }
                let t = clock + lead;
                let kept = retention - crate::hot::view::retention_slack(retention);
                keep = next_keep(keep, landmark, view_keep(t, clock, kept));
                landmark = Some(step(landmark, t, h, alpha, 0.0, 0).landmark);
                times.push(t);
            }
            let (Some(e), Some(keep)) = (expiry, keep) else { unreachable!() };
            let now = e + after;
            let mut score = 0.0;
            for &t in &times {
                prop_assert!(now - t > keep, "{} {} {}", now, t, keep);
                score += alpha * crate::detmath::exp2(-((now - t) as f64) / h as f64);
            }
            prop_assert!(score <= expired_ceiling(keep, h), "{} {}", score, keep);
        }
    }

    /// [`split`] as it was, all in 128 bits: the reference of its bits.
    fn split_wide(d: i128, h: i64) -> (i64, f64) {
        let h128 = i128::from(h);
        let n = d.div_euclid(h128);
        let rem = d.rem_euclid(h128) as f64;
        let n = n.clamp(i128::from(i64::MIN / 2), i128::from(i64::MAX / 2)) as i64;
        (n, crate::detmath::exp2(rem / h as f64))
    }

    /// [`view_keep`] as it was, all in 128 bits.
    fn view_keep_wide(t: i64, now: i64, kept: i64) -> i64 {
        let k = i128::from(kept) - (i128::from(t) - i128::from(now));
        let step = i128::from(KEEP_STEP);
        let k = k.div_euclid(step) * step;
        k.clamp(i128::from(i64::MIN / 2), i128::from(i64::MAX / 2)) as i64
    }

    fn any_time() -> impl Strategy<Value = i64> {
        prop_oneof![
            -4_000_000_000_000i64..4_000_000_000_000,
            any::<i64>(),
            Just(i64::MIN),
            Just(i64::MAX),
            Just(0i64),
        ]
    }

    proptest! {
        /// The 64-bit split gives the 128-bit one's whole part and bits,
        /// in range and at the extremes (`a − b` overflowing an i64).
        #[test]
        fn split_in_64_bits_is_the_wide_split(a in any_time(), b in any_time(), h in half_life()) {
            let (n, g) = split(a, b, h);
            let (wn, wg) = split_wide(i128::from(a) - i128::from(b), h);
            prop_assert_eq!((n, g.to_bits()), (wn, wg.to_bits()));
        }

        /// The same for [`view_keep`].
        #[test]
        fn view_keep_in_64_bits_is_the_wide_one(t in any_time(), now in any_time(), kept in any_time()) {
            prop_assert_eq!(view_keep(t, now, kept), view_keep_wide(t, now, kept));
        }
    }

    fn half_life() -> impl Strategy<Value = i64> {
        prop_oneof![
            Just(MIN_HALF_LIFE_MS),
            Just(H),
            Just(MAX_HALF_LIFE_MS),
            (60i64..315_360_000).prop_map(|s| s * 1000),
        ]
    }

    proptest! {
        /// A landmark move (sums rescaled by 2^-k, the landmark k half-lives
        /// later) changes no score at any query time by more than 1e-15
        /// relative: in fact not at all, short of subnormals.
        #[test]
        fn a_move_changes_no_score(
            s in 1e-200f64..1e200, h in half_life(), l in -1_000_000_000_000i64..4_000_000_000_000,
            k in 0i64..600, dq in -2_000i64..2_000, frac in 0i64..1_000_000,
        ) {
            let q = l + dq * h / 4 + frac % h;
            let before = score_at(s, q, l, h);
            let after = score_at(rescale(s, k), q, l + k * h, h);
            if before > 1e-290 && before.is_finite() {
                prop_assert!(((after - before) / before).abs() <= 1e-15, "{} {}", before, after);
                prop_assert_eq!(before, after);
            }
        }

        /// One query's [`Decay`], split once, scores every stored sum with
        /// the bits of the per-sum [`score_at`] (the split done for each).
        #[test]
        fn decay_split_once_is_bit_identical(
            sums in proptest::collection::vec(prop_oneof![
                0.0f64..1.0, 1e-300f64..1e300, Just(0.0), Just(f64::MIN_POSITIVE)
            ], 1..20),
            h in half_life(), l in -4_000_000_000_000i64..4_000_000_000_000,
            dq in -4_000_000_000_000i64..4_000_000_000_000,
        ) {
            let q = l.saturating_add(dq);
            let d = Decay::new(q, l, h);
            for s in sums {
                let (m, g) = split_wide(i128::from(l) - i128::from(q), h);
                let reference = scale_pow2(s * g, m);
                prop_assert_eq!(d.score(s).to_bits(), reference.to_bits());
                prop_assert_eq!(score_at(s, q, l, h).to_bits(), reference.to_bits());
            }
        }

        /// A larger stored sum never scores lower at one query time, so
        /// comparing sums first and scores only below the n-th sum is exact.
        #[test]
        fn decay_score_is_monotone(
            a in 0.0f64..1e300, b in 0.0f64..1e300,
            h in half_life(), l in -4_000_000_000_000i64..4_000_000_000_000,
            dq in -4_000_000_000_000i64..4_000_000_000_000,
        ) {
            let d = Decay::new(l.saturating_add(dq), l, h);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(d.score(lo) <= d.score(hi));
        }

        /// A later view weighs at least as much as an earlier one.
        #[test]
        fn weights_are_monotone_in_time(
            h in half_life(), l in -1_000_000_000_000i64..4_000_000_000_000,
            a in -600_000_000_000i64..600_000_000_000, d in 0i64..100_000_000,
            alpha in 0.0f64..1e6, beta in 0.0f64..1e6, rise in 0i64..1000,
        ) {
            let t1 = l + a.clamp(-(MAX_EXPONENT * h), MAX_EXPONENT * h);
            let t2 = t1 + d.min(l + MAX_EXPONENT * h - t1);
            let w1 = weight(alpha, beta, rise, t1, l, h);
            let w2 = weight(alpha, beta, rise, t2, l, h);
            prop_assert!(w2 >= w1, "{} {}", w1, w2);
            prop_assert!(w1.is_finite() && w1 >= 0.0);
        }

        /// The score of one view's weight at a later query time is the
        /// weight at its own time decayed by the time between, whatever the
        /// landmark (within the reference's own rounding: one `exp2` of an
        /// argument rounded to 2^-53 relative).
        #[test]
        fn score_is_weight_decayed_by_its_age(
            h in half_life(), l in -1_000_000_000_000i64..4_000_000_000_000,
            dt in 0i64..=512, frac in 0i64..1_000_000_000, age_hl in 0i64..900, age_frac in 0i64..1_000_000_000,
        ) {
            let t = l + dt * h + frac % h;
            let t = t.min(l + MAX_EXPONENT * h);
            let w = weight(1.0, 0.0, 0, t, l, h);
            let age = age_hl * h + age_frac % h;
            let q = t + age;
            let got = score_at(w, q, l, h);
            let want = crate::detmath::exp2(-(age as f64) / h as f64);
            let tol = 1e-15 * (2.0 + age as f64 / h as f64);
            prop_assert!(((got - want) / want).abs() < tol, "{} {}", got, want);
        }

        /// The step's landmark is within MAX_EXPONENT half-lives before the
        /// view, a whole number of half-lives from the stored one, and the
        /// weight is finite.
        #[test]
        fn steps_keep_the_exponent_bounded(
            h in half_life(), l in proptest::option::of(-4_000_000_000_000i64..4_000_000_000_000),
            t in -4_000_000_000_000i64..4_000_000_000_000,
        ) {
            let s = step(l, t, h, 1e6, 1e6, 1_000_000);
            prop_assert!(s.weight.is_finite());
            prop_assert!(i128::from(t) - i128::from(s.landmark) <= i128::from(MAX_EXPONENT * h));
            if let Some(l) = l {
                prop_assert_eq!(s.landmark - l, s.shift * h);
            } else {
                prop_assert_eq!(s.landmark.rem_euclid(h), 0);
            }
        }
    }
}
