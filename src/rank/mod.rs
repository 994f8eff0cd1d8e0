//! Leaderboard core: exact packing of (integer score, time reached) into one
//! ZSET double. Pure Rust, no Redis.
//!
//! A board's [`Layout`] fixes an integer score range `[min, max]` and a time
//! resolution (seconds or milliseconds), and an [`Order`]: on a `desc` board
//! (the default) the highest score ranks first, on an `asc` board (lap times,
//! golf) the lowest. The score's offset from the worst end of the range and
//! the reversed time form a 62-bit key
//! `k = off << time_bits | (2^time_bits - 1 - units)`, where `off = score - min`
//! on a desc board and `off = max - score` on an asc board (both in
//! `0 ..= max - min`, so both ends of the range pack exactly), so a better
//! score, then an earlier time, always gives a larger `k`, whatever the
//! order. The ZSET stores the positive normal double whose IEEE-754 bit
//! pattern is
//! `0x0010_0000_0000_0000 + (2^62 - 1 - k)`: for positive finite doubles
//! numeric order equals bit-pattern order, so ascending ZSET order is best
//! first, exact for every key (no rounding, unlike packing below 2^53), and
//! equal (score, time) pairs fall back to the ZSET's member order, ascending.
//!
//! Errors are typed ([`RankError`]): each message is written once, in its
//! `Display`, without the `ERR ` prefix the glue adds when it replies.

pub mod count;
pub mod period;

/// Why the RANK core refused a value. `Display` gives the message without
/// the `ERR ` prefix; the command glue sends it as `ERR <message>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankError {
    /// `ORDER` is not `asc` or `desc`.
    BadOrder,
    /// `RESOLUTION` is not `s` or `ms`.
    BadResolution,
    /// `MIN` is not below `MAX`.
    MinNotBelowMax,
    /// `MIN..MAX` spans more than `2^max_score_bits` values.
    RangeTooWide {
        max_score_bits: u32,
        resolution: Resolution,
    },
    /// A score outside the board's `[min, max]`.
    ScoreOutOfRange { score: i64, min: i64, max: i64 },
    /// A time (ms) outside the board's time range, which ends at `last_ms`.
    TimeOutOfRange { time_ms: i64, last_ms: i64 },
    /// A ZSET score that is not a value packed with this layout.
    NotPacked,
    /// A layout key whose text is not one RANK wrote.
    CorruptLayout,
    /// Adding `delta` would overflow the score.
    DeltaOverflow { delta: i64 },
    /// `TZ` is not a UTC offset `±hh:mm` within ±14:00.
    BadTz,
    /// Option `option` (`PERIOD`, `PERIODS`) is not `day`, `week` or `month`.
    BadPeriod { option: &'static str },
    /// `PERIODS` names no period.
    NoPeriods,
    /// `KEEP` is not an integer in `0 ..=` [`period::MAX_KEEP`].
    BadKeep,
}

impl std::fmt::Display for RankError {
    /// The message without the `ERR ` prefix.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            RankError::BadOrder => f.write_str("ORDER must be asc or desc"),
            RankError::BadResolution => f.write_str("RESOLUTION must be s or ms"),
            RankError::MinNotBelowMax => f.write_str("MIN must be below MAX"),
            RankError::RangeTooWide {
                max_score_bits,
                resolution,
            } => write!(
                f,
                "score range MIN..MAX too wide: at most 2^{max_score_bits} values with \
                 RESOLUTION {}",
                resolution.name()
            ),
            RankError::ScoreOutOfRange { score, min, max } => {
                write!(
                    f,
                    "score {score} is out of range [{min}, {max}] of this board"
                )
            }
            RankError::TimeOutOfRange { time_ms, last_ms } => write!(
                f,
                "time {} is outside this board's range [{}, {}] (unix seconds)",
                crate::parse::format_time_ms(time_ms),
                EPOCH_MS / 1000,
                last_ms / 1000
            ),
            RankError::NotPacked => {
                f.write_str("ZSET score was not packed by RANK with this board's layout")
            }
            RankError::CorruptLayout => f.write_str("corrupt RANK layout key"),
            RankError::DeltaOverflow { delta } => {
                write!(f, "delta {delta} would overflow the score")
            }
            RankError::BadTz => {
                f.write_str("TZ must be a UTC offset +hh:mm or -hh:mm between -14:00 and +14:00")
            }
            RankError::BadPeriod { option } => {
                write!(f, "{option} must be day, week or month")
            }
            RankError::NoPeriods => f.write_str("PERIODS needs at least one of day, week, month"),
            RankError::BadKeep => write!(
                f,
                "KEEP must be an integer between 0 and {}",
                period::MAX_KEEP
            ),
        }
    }
}

impl std::error::Error for RankError {}

/// Start of every layout's time range: 2020-01-01T00:00:00Z, in milliseconds.
pub const EPOCH_MS: i64 = 1_577_836_800_000;
/// Bits of the packed key.
pub const KEY_BITS: u32 = 62;
const SMALLEST_NORMAL_BITS: u64 = 0x0010_0000_0000_0000;
const KEY_MAX: u64 = (1u64 << KEY_BITS) - 1;

/// Time resolution of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// 1-second units: at least 30 time bits (34 years).
    Seconds,
    /// 1-millisecond units: at least 40 time bits (34.8 years).
    Millis,
}

impl Resolution {
    /// Milliseconds per time unit.
    pub fn unit_ms(self) -> i64 {
        match self {
            Resolution::Seconds => 1000,
            Resolution::Millis => 1,
        }
    }
    fn min_time_bits(self) -> u32 {
        match self {
            Resolution::Seconds => 30,
            Resolution::Millis => 40,
        }
    }
    /// The name `RESOLUTION` takes: `s` or `ms`.
    pub fn name(self) -> &'static str {
        match self {
            Resolution::Seconds => "s",
            Resolution::Millis => "ms",
        }
    }
}

/// Which end of the score range ranks first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// The highest score ranks first (points). The default.
    #[default]
    Desc,
    /// The lowest score ranks first (lap times, golf).
    Asc,
}

impl Order {
    /// Whether score `a` is strictly better than score `b` on a board of this order.
    pub fn better(self, a: i64, b: i64) -> bool {
        match self {
            Order::Desc => a > b,
            Order::Asc => a < b,
        }
    }
}

/// Parses `asc`/`desc` (case-insensitive) for `ORDER`. Error:
/// [`RankError::BadOrder`].
pub fn parse_order(raw: &[u8]) -> Result<Order, RankError> {
    match raw.to_ascii_lowercase().as_slice() {
        b"asc" => Ok(Order::Asc),
        b"desc" => Ok(Order::Desc),
        _ => Err(RankError::BadOrder),
    }
}

/// A board's packing layout, stored with the board when it is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub resolution: Resolution,
    /// Lowest storable score.
    pub min: i64,
    /// Highest storable score.
    pub max: i64,
    /// Which end of `[min, max]` ranks first.
    pub order: Order,
    score_bits: u32,
}

/// The default layout: seconds, scores -2^30 ..= 2^30-1 (2^31 values), 31
/// time bits: 2020-01-01 to 2088-01-19.
pub const DEFAULT_SECONDS: (i64, i64) = (-(1 << 30), (1 << 30) - 1);
/// The default millisecond layout: scores -2^20 ..= 2^20-1 (2^21 values), 41
/// time bits: 2020-01-01 to 2089-09-07.
pub const DEFAULT_MILLIS: (i64, i64) = (-(1 << 20), (1 << 20) - 1);

impl Layout {
    /// A layout for scores in `[min, max]`. The score span takes
    /// `ceil(log2(max - min + 1))` bits and the rest of the 62 bits hold time,
    /// which must keep at least 30 bits for seconds and 40 for milliseconds.
    ///
    /// Errors name the argument: [`RankError::MinNotBelowMax`],
    /// [`RankError::RangeTooWide`].
    pub fn new(resolution: Resolution, min: i64, max: i64) -> Result<Layout, RankError> {
        if min >= max {
            return Err(RankError::MinNotBelowMax);
        }
        let span = (max as i128 - min as i128) as u128; // values - 1
        let score_bits = 128 - span.leading_zeros();
        let max_score_bits = KEY_BITS - resolution.min_time_bits();
        if score_bits > max_score_bits {
            return Err(RankError::RangeTooWide {
                max_score_bits,
                resolution,
            });
        }
        Ok(Layout {
            resolution,
            min,
            max,
            order: Order::Desc,
            score_bits,
        })
    }

    /// This layout with order `order` (layouts are [`Order::Desc`] unless set).
    pub fn with_order(self, order: Order) -> Layout {
        Layout { order, ..self }
    }

    /// Of scores `lo <= hi`, the better one and the worse one, in this order.
    pub fn better_worse(&self, lo: i64, hi: i64) -> (i64, i64) {
        match self.order {
            Order::Desc => (hi, lo),
            Order::Asc => (lo, hi),
        }
    }

    /// The default layout for a resolution (see [`DEFAULT_SECONDS`], [`DEFAULT_MILLIS`]).
    pub fn default_for(resolution: Resolution) -> Layout {
        let (min, max) = match resolution {
            Resolution::Seconds => DEFAULT_SECONDS,
            Resolution::Millis => DEFAULT_MILLIS,
        };
        Layout {
            resolution,
            min,
            max,
            order: Order::Desc,
            score_bits: KEY_BITS - resolution.min_time_bits() - 1,
        }
    }

    /// Bits of the packed key that hold time.
    pub fn time_bits(&self) -> u32 {
        KEY_BITS - self.score_bits
    }

    /// The last representable instant, in ms since the unix epoch (capped at
    /// the year 9999, the end of every time argument's range).
    pub fn last_time_ms(&self) -> i64 {
        let units = (1i128 << self.time_bits()) - 1;
        let unit = self.resolution.unit_ms() as i128;
        let last = EPOCH_MS as i128 + units * unit + (unit - 1);
        last.min(crate::parse::MAX_TIME_MS as i128) as i64
    }

    /// Packs `score` reached at `time_ms` into a ZSET score.
    ///
    /// Errors: [`RankError::ScoreOutOfRange`], [`RankError::TimeOutOfRange`].
    pub fn encode(&self, score: i64, time_ms: i64) -> Result<f64, RankError> {
        if score < self.min || score > self.max {
            return Err(RankError::ScoreOutOfRange {
                score,
                min: self.min,
                max: self.max,
            });
        }
        if time_ms < EPOCH_MS || time_ms > self.last_time_ms() {
            return Err(RankError::TimeOutOfRange {
                time_ms,
                last_ms: self.last_time_ms(),
            });
        }
        let tb = self.time_bits();
        let units = ((time_ms - EPOCH_MS) / self.resolution.unit_ms()) as u64;
        let rev = ((1u64 << tb) - 1) - units;
        // The offset from the worst end of the range: in 0 ..= max - min, so
        // it fits `score_bits` bits at both ends of the range.
        let off = match self.order {
            Order::Desc => score as i128 - self.min as i128,
            Order::Asc => self.max as i128 - score as i128,
        } as u64;
        let key = (off << tb) | rev;
        Ok(f64::from_bits(SMALLEST_NORMAL_BITS + (KEY_MAX - key)))
    }

    /// Unpacks a ZSET score into `(score, time_ms)`, time rounded down to the
    /// resolution. Error: [`RankError::NotPacked`].
    pub fn decode(&self, packed: f64) -> Result<(i64, i64), RankError> {
        let bits = packed.to_bits();
        if !(SMALLEST_NORMAL_BITS..=SMALLEST_NORMAL_BITS + KEY_MAX).contains(&bits) {
            return Err(RankError::NotPacked);
        }
        let key = KEY_MAX - (bits - SMALLEST_NORMAL_BITS);
        let tb = self.time_bits();
        let rev = key & ((1u64 << tb) - 1);
        let units = ((1u64 << tb) - 1) - rev;
        let off = (key >> tb) as i128;
        if off > self.max as i128 - self.min as i128 {
            return Err(RankError::NotPacked);
        }
        let score = match self.order {
            Order::Desc => self.min as i128 + off,
            Order::Asc => self.max as i128 - off,
        };
        Ok((
            score as i64,
            EPOCH_MS + units as i64 * self.resolution.unit_ms(),
        ))
    }

    /// The form stored in the board's layout key: `v1 <s|ms> <min> <max>` for
    /// a desc board (the only form before ORDER existed, so every stored
    /// layout keeps its meaning), `v1 <s|ms> <min> <max> asc` for an asc board.
    pub fn serialize(&self) -> String {
        let order = match self.order {
            Order::Desc => "",
            Order::Asc => " asc",
        };
        format!(
            "v1 {} {} {}{order}",
            self.resolution.name(),
            self.min,
            self.max
        )
    }

    /// Reads [`Layout::serialize`]'s form back. Error:
    /// [`RankError::CorruptLayout`].
    pub fn deserialize(raw: &[u8]) -> Result<Layout, RankError> {
        let bad = || RankError::CorruptLayout;
        let s = std::str::from_utf8(raw).map_err(|_| bad())?;
        let f: Vec<&str> = s.split(' ').collect();
        if f[0] != "v1" {
            return Err(bad());
        }
        // Exactly the forms `serialize` writes: a 5th field only for asc.
        let order = match f.len() {
            4 => Order::Desc,
            5 if f[4] == "asc" => Order::Asc,
            _ => return Err(bad()),
        };
        let res = match f[1] {
            "s" => Resolution::Seconds,
            "ms" => Resolution::Millis,
            _ => return Err(bad()),
        };
        // Integers by the server's rule, as every stored number is read.
        let min = crate::parse::parse_i64("min", f[2].as_bytes()).map_err(|_| bad())?;
        let max = crate::parse::parse_i64("max", f[3].as_bytes()).map_err(|_| bad())?;
        Ok(Layout::new(res, min, max)
            .map_err(|_| bad())?
            .with_order(order))
    }
}

/// What a board's layout key holds: its packing [`Layout`] and, for a board
/// with periods, their [`period::Spec`]. Text: the layout's
/// ([`Layout::serialize`]), then ` periods …` ([`period::split_stored`]).
pub type Settings = (Layout, Option<period::Spec>);

/// Parses a layout key's text. Error: [`RankError::CorruptLayout`].
pub fn parse_settings(raw: &[u8]) -> Result<Settings, RankError> {
    let (head, tail) = period::split_stored(raw);
    let l = Layout::deserialize(head)?;
    let spec = match tail {
        None => None,
        Some(t) => Some(period::Spec::deserialize(
            std::str::from_utf8(t).map_err(|_| RankError::CorruptLayout)?,
        )?),
    };
    Ok((l, spec))
}

/// [`parse_settings`] through the per-thread cache of recent texts that
/// HOT's board record uses too ([`crate::parse::Recent`]): boards almost
/// always share a layout, and every RANK command would otherwise re-parse
/// it. A text that does not parse is parsed again for its error.
pub fn parse_settings_cached(raw: &[u8]) -> Result<Settings, RankError> {
    thread_local! {
        static CACHE: std::cell::RefCell<crate::parse::Recent<Settings>> =
            const { std::cell::RefCell::new(crate::parse::Recent::new()) };
    }
    match CACHE.with(|c| c.borrow_mut().parse(raw, |t| parse_settings(t).ok())) {
        Some(st) => Ok(st),
        None => parse_settings(raw),
    }
}

/// What RANK.INCR or RANK.SET does to one member on every board it updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// Add `delta` (a member new to a board starts there at 0).
    Add(i64),
    /// Set the score; with `Some(higher)` only if it raises (`true`, GT) or
    /// lowers (`false`, LT) the board's current score.
    Set(i64, Option<bool>),
}

/// For the member's current score on each board (`None`: absent), its score
/// after the update and whether the update writes it. An equal score is
/// never written, so the time it was reached stays; GT/LT compare with each
/// board's own score. Error: [`RankError::DeltaOverflow`].
pub fn plan_update(olds: &[Option<i64>], u: Update) -> Result<Vec<(i64, bool)>, RankError> {
    olds.iter().map(|&old| plan_one(old, u)).collect()
}

/// [`plan_update`] into `out` (one entry per board of `olds`, at most as
/// many as `out` holds), without allocating: the RANK.INCR/SET path.
pub fn plan_update_into(
    olds: &[Option<i64>],
    u: Update,
    out: &mut [(i64, bool)],
) -> Result<(), RankError> {
    for (o, &old) in out.iter_mut().zip(olds) {
        *o = plan_one(old, u)?;
    }
    Ok(())
}

/// [`plan_update`] for one board.
fn plan_one(old: Option<i64>, u: Update) -> Result<(i64, bool), RankError> {
    let new = match u {
        Update::Add(d) => old
            .unwrap_or(0)
            .checked_add(d)
            .ok_or(RankError::DeltaOverflow { delta: d })?,
        Update::Set(v, _) => v,
    };
    let kept = match (u, old) {
        (Update::Set(_, Some(true)), Some(o)) => new <= o,
        (Update::Set(_, Some(false)), Some(o)) => new >= o,
        _ => old == Some(new),
    };
    Ok(if kept {
        (old.unwrap_or(new), false)
    } else {
        (new, true)
    })
}

/// Parses `s`/`ms` (case-insensitive) for `RESOLUTION`. Error:
/// [`RankError::BadResolution`].
pub fn parse_resolution(raw: &[u8]) -> Result<Resolution, RankError> {
    match raw.to_ascii_lowercase().as_slice() {
        b"s" => Ok(Resolution::Seconds),
        b"ms" => Ok(Resolution::Millis),
        _ => Err(RankError::BadResolution),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn updates_write_only_what_changes() {
        let olds = [Some(10), None, Some(12)];
        assert_eq!(
            plan_update(&olds, Update::Add(2)),
            Ok(vec![(12, true), (2, true), (14, true)])
        );
        assert_eq!(
            plan_update(&olds, Update::Add(0)),
            Ok(vec![(10, false), (0, true), (12, false)])
        );
        assert_eq!(
            plan_update(&olds, Update::Set(11, Some(true))),
            Ok(vec![(11, true), (11, true), (12, false)])
        );
        assert_eq!(
            plan_update(&olds, Update::Set(11, Some(false))),
            Ok(vec![(10, false), (11, true), (11, true)])
        );
        assert_eq!(
            plan_update(&olds, Update::Set(12, None)),
            Ok(vec![(12, true), (12, true), (12, false)])
        );
        assert_eq!(
            plan_update(&[Some(i64::MAX)], Update::Add(1)),
            Err(RankError::DeltaOverflow { delta: 1 })
        );
        assert_eq!(
            RankError::DeltaOverflow { delta: -1 }.to_string(),
            "delta -1 would overflow the score"
        );
    }
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn cached_settings_equal_parsed_ones() {
        let a = Layout::default_for(Resolution::Seconds).serialize();
        let b = format!(
            "{} periods day,week tz +02:00 keep 3",
            Layout::default_for(Resolution::Millis).serialize()
        );
        for raw in [&a, &b, &a, &a, &b] {
            assert_eq!(
                parse_settings_cached(raw.as_bytes()),
                parse_settings(raw.as_bytes())
            );
        }
        assert!(parse_settings(b.as_bytes()).unwrap().1.is_some());
        assert_eq!(
            parse_settings_cached(b"v1 x 1 2"),
            Err(RankError::CorruptLayout)
        );
        assert_eq!(
            parse_settings(b"v1 s 0 10 periods day tz +00:00 keep x"),
            Err(RankError::CorruptLayout)
        );
        assert_eq!(
            parse_settings_cached(a.as_bytes()),
            Ok((Layout::deserialize(a.as_bytes()).unwrap(), None))
        );
    }

    const T0: i64 = 1_700_000_000_000;

    #[test]
    fn default_layouts_have_documented_ranges() {
        let s = Layout::default_for(Resolution::Seconds);
        assert_eq!(
            s,
            Layout::new(Resolution::Seconds, DEFAULT_SECONDS.0, DEFAULT_SECONDS.1).unwrap()
        );
        assert_eq!(s.time_bits(), 31);
        assert_eq!(s.last_time_ms() / 1000, 1_577_836_800 + (1 << 31) - 1); // 2088-01-19
        let ms = Layout::default_for(Resolution::Millis);
        assert_eq!(
            ms,
            Layout::new(Resolution::Millis, DEFAULT_MILLIS.0, DEFAULT_MILLIS.1).unwrap()
        );
        assert_eq!(ms.time_bits(), 41);
    }

    #[test]
    fn higher_score_ranks_first_then_earlier_time() {
        let l = Layout::default_for(Resolution::Seconds);
        let a = l.encode(10, T0).unwrap();
        let b = l.encode(9, T0 - 1_000_000).unwrap();
        let c = l.encode(10, T0 + 1000).unwrap();
        assert!(a < b, "higher score must sort first (ascending)");
        assert!(a < c, "earlier time must sort first");
        // Same second: same packed value (ties fall back to member order).
        assert_eq!(l.encode(10, T0 + 999).unwrap(), a);
    }

    #[test]
    fn out_of_range_values_are_refused_naming_them() {
        let l = Layout::default_for(Resolution::Seconds);
        let e = l.encode(1 << 30, T0).unwrap_err();
        assert_eq!(
            e,
            RankError::ScoreOutOfRange {
                score: 1 << 30,
                min: l.min,
                max: l.max
            }
        );
        assert_eq!(
            e.to_string(),
            "score 1073741824 is out of range [-1073741824, 1073741823] of this board"
        );
        let e = l.encode(0, EPOCH_MS - 1).unwrap_err();
        assert_eq!(
            e,
            RankError::TimeOutOfRange {
                time_ms: EPOCH_MS - 1,
                last_ms: l.last_time_ms()
            }
        );
        assert_eq!(
            e.to_string(),
            "time 1577836799.999 is outside this board's range [1577836800, 3725320447] \
             (unix seconds)"
        );
        assert!(matches!(
            l.encode(0, l.last_time_ms() + 1),
            Err(RankError::TimeOutOfRange { .. })
        ));
        let e = Layout::new(Resolution::Seconds, 0, 1 << 32).unwrap_err();
        assert_eq!(
            e,
            RankError::RangeTooWide {
                max_score_bits: 32,
                resolution: Resolution::Seconds
            }
        );
        assert_eq!(
            e.to_string(),
            "score range MIN..MAX too wide: at most 2^32 values with RESOLUTION s"
        );
        assert!(Layout::new(Resolution::Seconds, 0, (1 << 32) - 1).is_ok());
        assert_eq!(
            Layout::new(Resolution::Seconds, 5, 5),
            Err(RankError::MinNotBelowMax)
        );
    }

    #[test]
    fn foreign_zset_scores_are_not_decoded() {
        let l = Layout::default_for(Resolution::Seconds);
        for v in [0.0, -1.0, 1e-310, 1e300, f64::INFINITY, f64::NAN] {
            assert_eq!(l.decode(v), Err(RankError::NotPacked), "{v}");
        }
    }

    #[test]
    fn packed_scores_are_positive_normal_doubles() {
        let l = Layout::default_for(Resolution::Millis);
        for (s, t) in [
            (l.min, EPOCH_MS),
            (l.max, EPOCH_MS),
            (l.min, l.last_time_ms()),
            (l.max, l.last_time_ms()),
        ] {
            let v = l.encode(s, t).unwrap();
            assert!(v.is_normal() && v > 0.0);
            assert_eq!(l.decode(v).unwrap(), (s, t));
        }
    }

    #[test]
    fn layout_round_trips_through_its_stored_form() {
        let l = Layout::new(Resolution::Millis, -5, 1000).unwrap();
        assert_eq!(Layout::deserialize(l.serialize().as_bytes()).unwrap(), l);
        assert_eq!(
            Layout::deserialize(b"v2 s 0 1"),
            Err(RankError::CorruptLayout)
        );
        // Bounds are integers by the server's rule: no `+`, no leading zero, no `-0`.
        for bad in [
            &b"v1 s +0 10"[..],
            b"v1 s 00 10",
            b"v1 s -0 10",
            b"v1 s 0 010",
        ] {
            assert_eq!(Layout::deserialize(bad), Err(RankError::CorruptLayout));
        }
    }

    #[test]
    fn layout_strings_without_an_order_are_desc() {
        // Stored by earlier versions: still parse, as desc.
        let old = Layout::deserialize(b"v1 s -1073741824 1073741823").unwrap();
        assert_eq!(old, Layout::default_for(Resolution::Seconds));
        assert_eq!(old.order, Order::Desc);
        // A desc layout is still written in the old form; asc adds a field.
        assert_eq!(old.serialize(), "v1 s -1073741824 1073741823");
        let asc = Layout::new(Resolution::Millis, -5, 1000)
            .unwrap()
            .with_order(Order::Asc);
        assert_eq!(asc.serialize(), "v1 ms -5 1000 asc");
        assert_eq!(Layout::deserialize(b"v1 ms -5 1000 asc").unwrap(), asc);
        for bad in [
            &b"v1 s 0 10 desc"[..],
            b"v1 s 0 10 ASC",
            b"v1 s 0 10 asc x",
            b"v1 s 0 10 asc ",
            b"v2 s 0 10 asc",
        ] {
            assert_eq!(
                Layout::deserialize(bad),
                Err(RankError::CorruptLayout),
                "{}",
                bad.escape_ascii()
            );
        }
    }

    #[test]
    fn parse_order_takes_asc_and_desc_only() {
        assert_eq!(parse_order(b"ASC"), Ok(Order::Asc));
        assert_eq!(parse_order(b"desc"), Ok(Order::Desc));
        assert_eq!(parse_order(b"up"), Err(RankError::BadOrder));
        assert_eq!(RankError::BadOrder.to_string(), "ORDER must be asc or desc");
    }

    #[test]
    fn asc_board_lower_score_ranks_first_then_earlier_time() {
        let l = Layout::default_for(Resolution::Seconds).with_order(Order::Asc);
        let a = l.encode(10, T0).unwrap();
        let b = l.encode(11, T0 - 1_000_000).unwrap();
        let c = l.encode(10, T0 + 1000).unwrap();
        assert!(a < b, "lower score must sort first (ascending)");
        assert!(a < c, "earlier time must sort first");
        assert_eq!(l.encode(10, T0 + 999).unwrap(), a);
        assert_eq!(l.decode(a).unwrap(), (10, T0));
        // The same packed value means another score on a desc board.
        let d = l.with_order(Order::Desc);
        assert_ne!(d.decode(a).unwrap().0, 10);
    }

    /// Both ends of the score range and of the time range, both orders,
    /// every resolution, and the narrowest and widest custom ranges.
    #[test]
    fn both_ends_of_the_range_round_trip_exactly_in_both_orders() {
        let mut layouts = vec![
            Layout::default_for(Resolution::Seconds),
            Layout::default_for(Resolution::Millis),
            Layout::new(Resolution::Seconds, 0, 1).unwrap(),
            Layout::new(Resolution::Seconds, 0, (1 << 32) - 1).unwrap(),
            Layout::new(Resolution::Millis, -(1 << 21), (1 << 21) - 1).unwrap(),
            Layout::new(Resolution::Seconds, i64::MAX - 10, i64::MAX).unwrap(),
            Layout::new(Resolution::Seconds, i64::MIN, i64::MIN + 10).unwrap(),
        ];
        layouts.extend(
            layouts
                .clone()
                .into_iter()
                .map(|l| l.with_order(Order::Asc)),
        );
        for l in layouts {
            let unit = l.resolution.unit_ms();
            let (first, last) = (
                EPOCH_MS,
                l.last_time_ms() - (l.last_time_ms() - EPOCH_MS) % unit,
            );
            let scores = [l.min, l.min + 1, l.max - 1, l.max];
            let times = [first, first + unit, last - unit, last];
            for s in scores {
                for t in times {
                    let v = l.encode(s, t).unwrap();
                    assert!(v.is_normal() && v > 0.0, "{l:?} {s} {t}");
                    assert_eq!(l.decode(v).unwrap(), (s, t), "{l:?}");
                    let text = crate::parse::format_score(v);
                    assert_eq!(text.parse::<f64>().unwrap().to_bits(), v.to_bits());
                }
            }
            // Best first: the better end of the range at the earliest time
            // packs lowest, the worse end at the latest time highest.
            let (best, worst) = l.better_worse(l.min, l.max);
            let lowest = l.encode(best, first).unwrap();
            let highest = l.encode(worst, last).unwrap();
            for s in scores {
                for t in times {
                    let v = l.encode(s, t).unwrap();
                    assert!(lowest <= v && v <= highest, "{l:?} {s} {t}");
                }
            }
            // One step better always packs lower, even across the time range.
            let (b1, w1) = l.better_worse(l.min, l.min + 1);
            assert!(l.encode(b1, last).unwrap() < l.encode(w1, first).unwrap());
            let (b2, w2) = l.better_worse(l.max - 1, l.max);
            assert!(l.encode(b2, last).unwrap() < l.encode(w2, first).unwrap());
            assert!(l.encode(l.min - 1, first).is_err() || l.min == i64::MIN);
            if l.max < i64::MAX {
                assert!(l.encode(l.max + 1, first).is_err());
            }
        }
    }

    fn layout() -> impl Strategy<Value = Layout> {
        (any::<bool>(), any::<bool>(), any::<i32>(), 1u32..=32).prop_filter_map(
            "fits",
            |(ms, asc, lo, bits)| {
                let res = if ms {
                    Resolution::Millis
                } else {
                    Resolution::Seconds
                };
                let order = if asc { Order::Asc } else { Order::Desc };
                let span = (1i64 << bits) - 1;
                Layout::new(res, lo as i64, lo as i64 + span)
                    .ok()
                    .map(|l| l.with_order(order))
            },
        )
    }

    proptest! {
        #[test]
        fn encode_decode_round_trip(l in layout(), s in any::<u64>(), t in any::<u64>()) {
            let score = l.min + (s % ((l.max - l.min) as u64 + 1)) as i64;
            let time = EPOCH_MS + (t % ((l.last_time_ms() - EPOCH_MS) as u64 + 1)) as i64;
            let v = l.encode(score, time).unwrap();
            let unit = l.resolution.unit_ms();
            prop_assert_eq!(l.decode(v).unwrap(), (score, time - (time - EPOCH_MS) % unit));
            // The text form Redis uses keeps the exact value.
            prop_assert_eq!(crate::parse::format_score(v).parse::<f64>().unwrap().to_bits(), v.to_bits());
        }

        #[test]
        fn packed_order_is_best_score_then_earliest_time(l in layout(), a in any::<(u32, u32)>(), b in any::<(u32, u32)>()) {
            let span = (l.max - l.min) as u64 + 1;
            let units = 1u64 << l.time_bits();
            let pick = |(s, t): (u32, u32)| (l.min + (s as u64 % span) as i64, EPOCH_MS + (t as u64 % units) as i64 * l.resolution.unit_ms());
            let (sa, ta) = pick(a);
            let (sb, tb) = pick(b);
            let (va, vb) = (l.encode(sa, ta).unwrap(), l.encode(sb, tb).unwrap());
            let by_score = match l.order {
                Order::Desc => sb.cmp(&sa),
                Order::Asc => sa.cmp(&sb),
            };
            prop_assert_eq!(va.partial_cmp(&vb).unwrap(), by_score.then(ta.cmp(&tb)));
            prop_assert_eq!(l.order.better(sa, sb), by_score.is_lt());
        }

        /// Near both ends of the score range, in both orders, at any time.
        #[test]
        fn ends_of_the_range_round_trip(l in layout(), k in 0u64..4, from_max in any::<bool>(), t in any::<u64>()) {
            let span = (l.max - l.min) as u64;
            let k = k.min(span) as i64;
            let score = if from_max { l.max - k } else { l.min + k };
            let time = EPOCH_MS + (t % ((l.last_time_ms() - EPOCH_MS) as u64 + 1)) as i64;
            let unit = l.resolution.unit_ms();
            let v = l.encode(score, time).unwrap();
            prop_assert_eq!(l.decode(v).unwrap(), (score, time - (time - EPOCH_MS) % unit));
            prop_assert_eq!(Layout::deserialize(l.serialize().as_bytes()).unwrap(), l);
        }
    }
}
