//! Periodic boards: civil calendar math on unix milliseconds with a fixed
//! UTC offset. Pure Rust, no Redis, no calendar crate.
//!
//! A board created with `PERIODS day week month [TZ ±hh:mm] [KEEP n]` keeps,
//! next to its all-time board, one board per period (a day, an ISO week, a
//! calendar month) in its own time zone, a fixed offset from UTC (no
//! daylight saving). Each period is a [`Span`]: a [`Period`] and an index
//! counting periods from 1970 in local time, so going `n` periods back is a
//! subtraction:
//! - day `i`: local days since 1970-01-01;
//! - week `i`: ISO weeks (Monday to Sunday) since the week of Monday
//!   1970-01-05 (week 0);
//! - month `i`: `year * 12 + month - 1`.
//!
//! A period board expires `KEEP` whole periods after its period ends:
//! [`Spec::expiry`].
//!
//! Errors are [`RankError`]s, like the rest of the RANK core.

use super::RankError;

/// Milliseconds in a day (a fixed offset has no DST: every day is 24 h).
pub const DAY_MS: i64 = 86_400_000;
/// Largest `|TZ|`: 14 hours, in minutes (UTC+14:00 is Kiribati's, the
/// easternmost; -14:00 is allowed for symmetry).
pub const MAX_TZ_MINUTES: i32 = 14 * 60;
/// Default `KEEP`: a period board stays readable for 2 whole periods after
/// its period ends (yesterday and the day before, last week and the week
/// before, …), so `AGO 1` and `AGO 2` answer.
pub const DEFAULT_KEEP: i64 = 2;
/// Largest `KEEP` (a day board of 10000 days lives 27 years). RANK.DROP
/// deletes `KEEP + 2` boards per period, so this bounds its work.
pub const MAX_KEEP: i64 = 10_000;

// ---------------------------------------------------------------- civil dates

/// Days since 1970-01-01 of the proleptic Gregorian date `y-m-d` (`m` 1..=12,
/// `d` 1..=31). Howard Hinnant's `days_from_civil`, from "chrono-Compatible
/// Low-Level Date Algorithms", <https://howardhinnant.github.io/date_algorithms.html>.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // [0, 399]
    let m = m as i64;
    let mp = if m > 2 { m - 3 } else { m + 9 }; // March = 0
    let doy = (153 * mp + 2) / 5 + d as i64 - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date `(year, month 1..=12, day 1..=31)` of `z`
/// days since 1970-01-01. Howard Hinnant's `civil_from_days` (same source
/// as [`days_from_civil`]).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32; // [1, 12]
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Whether `y` is a Gregorian leap year.
pub fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

/// Days in month `m` (1..=12) of year `y`.
pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// ISO weekday of day `z` (days since 1970-01-01): 1 = Monday … 7 = Sunday.
pub fn iso_weekday(z: i64) -> u32 {
    // 1970-01-01 was a Thursday (4).
    ((z + 3).rem_euclid(7) + 1) as u32
}

/// The ISO 8601 `(week-year, week 1..=53)` of day `z`: weeks start on
/// Monday and week 1 is the one with the year's first Thursday.
pub fn iso_week(z: i64) -> (i64, u32) {
    let thursday = z - iso_weekday(z) as i64 + 4;
    let (y, _, _) = civil_from_days(thursday);
    let week = (thursday - days_from_civil(y, 1, 1)) / 7 + 1;
    (y, week as u32)
}

/// Monday of ISO week `week` of week-year `y` (days since 1970-01-01),
/// if the week exists (week 53 only in years that have one).
pub fn iso_week_monday(y: i64, week: u32) -> Option<i64> {
    if !(1..=53).contains(&week) {
        return None;
    }
    let jan4 = days_from_civil(y, 1, 4); // always in week 1
    let monday = jan4 - (iso_weekday(jan4) as i64 - 1) + 7 * (week as i64 - 1);
    (iso_week(monday) == (y, week)).then_some(monday)
}

// ---------------------------------------------------------------- time zone

/// A fixed UTC offset, -14:00 ..= +14:00, in minutes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Tz {
    minutes: i32,
}

impl Tz {
    /// UTC.
    pub const UTC: Tz = Tz { minutes: 0 };

    /// An offset of `minutes` east of UTC; `None` beyond ±14:00.
    pub fn from_minutes(minutes: i32) -> Option<Tz> {
        (-MAX_TZ_MINUTES..=MAX_TZ_MINUTES)
            .contains(&minutes)
            .then_some(Tz { minutes })
    }

    /// Minutes east of UTC.
    pub fn minutes(self) -> i32 {
        self.minutes
    }

    /// The offset in milliseconds (local = UTC + offset).
    pub fn offset_ms(self) -> i64 {
        self.minutes as i64 * 60_000
    }

    /// Parses `±hh:mm` (sign required, minutes 00..=59, at most ±14:00).
    /// Error: [`RankError::BadTz`].
    pub fn parse(raw: &[u8]) -> Result<Tz, RankError> {
        let bad = || RankError::BadTz;
        let [sign, h1, h2, b':', m1, m2] = raw else {
            return Err(bad());
        };
        let sign = match sign {
            b'+' => 1,
            b'-' => -1,
            _ => return Err(bad()),
        };
        let digit = |b: &u8| b.is_ascii_digit().then(|| (b - b'0') as i32);
        let (Some(a), Some(b), Some(c), Some(d)) = (digit(h1), digit(h2), digit(m1), digit(m2))
        else {
            return Err(bad());
        };
        let (h, m) = (a * 10 + b, c * 10 + d);
        if m > 59 {
            return Err(bad());
        }
        Tz::from_minutes(sign * (h * 60 + m)).ok_or_else(bad)
    }

    /// The `±hh:mm` form ([`Tz::parse`] reads it back).
    pub fn format(self) -> String {
        let sign = if self.minutes < 0 { '-' } else { '+' };
        let a = self.minutes.abs();
        format!("{sign}{:02}:{:02}", a / 60, a % 60)
    }

    /// The local day (days since 1970-01-01) of instant `t_ms`.
    pub fn local_day(self, t_ms: i64) -> i64 {
        (t_ms + self.offset_ms()).div_euclid(DAY_MS)
    }

    /// The instant (unix ms) local day `z` starts at.
    pub fn day_start_ms(self, z: i64) -> i64 {
        z * DAY_MS - self.offset_ms()
    }
}

// ---------------------------------------------------------------- periods

/// Parses `day`, `week` or `month` (case-insensitive) for option `option`.
/// Error: [`RankError::BadPeriod`] naming `option`.
pub fn parse_period(option: &'static str, raw: &[u8]) -> Result<Period, RankError> {
    match raw.to_ascii_lowercase().as_slice() {
        b"day" => Ok(Period::Day),
        b"week" => Ok(Period::Week),
        b"month" => Ok(Period::Month),
        _ => Err(RankError::BadPeriod { option }),
    }
}

/// A kind of period.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Period {
    Day,
    Week,
    Month,
}

impl Period {
    /// Every period, in the canonical order.
    pub const ALL: [Period; 3] = [Period::Day, Period::Week, Period::Month];

    /// The name used in commands and the stored layout: `day`, `week`, `month`.
    pub fn name(self) -> &'static str {
        match self {
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The period containing instant `t_ms` in time zone `tz`.
    pub fn containing(self, t_ms: i64, tz: Tz) -> Span {
        let z = tz.local_day(t_ms);
        let index = match self {
            Period::Day => z,
            // Monday 1970-01-05 (day 4) starts week 0.
            Period::Week => (z - 4).div_euclid(7),
            Period::Month => {
                let (y, m, _) = civil_from_days(z);
                y * 12 + m as i64 - 1
            }
        };
        Span {
            period: self,
            index,
        }
    }
}

/// One period: a kind and its index (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub period: Period,
    pub index: i64,
}

impl Span {
    /// The period `n` periods after this one (`n` may be negative).
    pub fn plus(self, n: i64) -> Span {
        Span {
            index: self.index + n,
            ..self
        }
    }

    /// The period `n` periods before this one: `ago(1)` is the previous one.
    pub fn ago(self, n: i64) -> Span {
        self.plus(-n)
    }

    /// The local day (days since 1970-01-01) the period starts on.
    fn first_day(self) -> i64 {
        match self.period {
            Period::Day => self.index,
            Period::Week => 4 + 7 * self.index,
            Period::Month => days_from_civil(
                self.index.div_euclid(12),
                self.index.rem_euclid(12) as u32 + 1,
                1,
            ),
        }
    }

    /// The instant (unix ms) the period starts at, inclusive.
    pub fn start_ms(self, tz: Tz) -> i64 {
        tz.day_start_ms(self.first_day())
    }

    /// The instant (unix ms) the period ends at, exclusive: the next one's start.
    pub fn end_ms(self, tz: Tz) -> i64 {
        self.plus(1).start_ms(tz)
    }

    /// The period's id, as in its key name: `d2026-11-23`, `w2026-W48` (ISO
    /// week-year and week), `m2026-11`.
    pub fn id(self) -> String {
        String::from_utf8_lossy(self.id_text().as_bytes()).into_owned()
    }

    /// [`Span::id`] on the stack, without allocating (write paths name a
    /// period board per period and command).
    pub fn id_text(self) -> IdText {
        let mut t = IdText::default();
        match self.period {
            Period::Day => {
                let (y, m, d) = civil_from_days(self.index);
                t.push(b"d");
                push_num(&mut t, y, 4);
                t.push(b"-");
                push_num(&mut t, i64::from(m), 2);
                t.push(b"-");
                push_num(&mut t, i64::from(d), 2);
            }
            Period::Week => {
                let (y, w) = iso_week(self.first_day());
                t.push(b"w");
                push_num(&mut t, y, 4);
                t.push(b"-");
                t.push(b"W");
                push_num(&mut t, i64::from(w), 2);
            }
            Period::Month => {
                t.push(b"m");
                push_num(&mut t, self.index.div_euclid(12), 4);
                t.push(b"-");
                push_num(&mut t, self.index.rem_euclid(12) + 1, 2);
            }
        }
        t
    }

    /// Reads [`Span::id`]'s form back (years 0000..=9999); `None` if it is
    /// not one.
    pub fn parse_id(id: &str) -> Option<Span> {
        let num = |s: &str, len: usize| -> Option<i64> {
            (s.len() == len && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse().ok())
                .flatten()
        };
        let (kind, rest) = (id.get(..1)?, id.get(1..)?);
        let year = num(rest.get(..4)?, 4)?;
        let rest = rest.get(4..)?;
        match kind {
            "d" => {
                let (m, d) = (num(rest.get(1..3)?, 2)?, num(rest.get(4..)?, 2)?);
                if !rest.starts_with('-') || rest.get(3..4)? != "-" || !(1..=12).contains(&m) {
                    return None;
                }
                let m = m as u32;
                if d < 1 || d > days_in_month(year, m) as i64 {
                    return None;
                }
                Some(Span {
                    period: Period::Day,
                    index: days_from_civil(year, m, d as u32),
                })
            }
            "w" => {
                let w = num(rest.strip_prefix("-W")?, 2)?;
                let monday = iso_week_monday(year, w as u32)?;
                Some(Span {
                    period: Period::Week,
                    index: (monday - 4) / 7,
                })
            }
            "m" => {
                let m = num(rest.strip_prefix('-')?, 2)?;
                (1..=12).contains(&m).then_some(Span {
                    period: Period::Month,
                    index: year * 12 + m - 1,
                })
            }
            _ => None,
        }
    }
}

// ---------------------------------------------------------------- board spec

/// A period id as text on the stack (see [`Span::id_text`]): at most 12
/// bytes (`d10000-01-01` at the very end of the time range in +14:00).
pub type IdText = crate::parse::StackText<16>;

/// Appends `v` (0 ..= 99,999) in decimal, zero-padded to `width` digits.
fn push_num(t: &mut IdText, v: i64, width: usize) {
    let v = v.clamp(0, 99_999) as u32;
    let digits = if v >= 10_000 {
        5
    } else {
        width.max(match v {
            0..=9 => 1,
            10..=99 => 2,
            100..=999 => 3,
            _ => 4,
        })
    };
    for i in (0..digits).rev() {
        t.push(&[b'0' + (v / 10u32.pow(i as u32) % 10) as u8]);
    }
}

/// Splits a board's stored layout text `<layout>[ periods …]` into the
/// layout part and, for a periodic board, the [`Spec`] part (`periods …`).
/// A layout written before periods existed has no spec part.
pub fn split_stored(raw: &[u8]) -> (&[u8], Option<&[u8]>) {
    const MARK: &[u8] = b" periods ";
    match raw.windows(MARK.len()).position(|w| w == MARK) {
        Some(i) => (&raw[..i], Some(&raw[i + 1..])),
        None => (raw, None),
    }
}

/// The periods of a board, its time zone and `KEEP`, stored after its
/// layout: `periods day,week,month tz +00:00 keep 2`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    /// Bit set of [`Period`]s (never empty).
    bits: u8,
    pub tz: Tz,
    /// Whole periods a period board stays readable after its period ends,
    /// 0..=[`MAX_KEEP`].
    pub keep: i64,
}

impl Spec {
    /// A spec of the given periods (duplicates ignored). Errors:
    /// [`RankError::NoPeriods`], [`RankError::BadKeep`].
    pub fn new(periods: &[Period], tz: Tz, keep: i64) -> Result<Spec, RankError> {
        if periods.is_empty() {
            return Err(RankError::NoPeriods);
        }
        if !(0..=MAX_KEEP).contains(&keep) {
            return Err(RankError::BadKeep);
        }
        let bits = periods.iter().fold(0, |b, p| b | p.bit());
        Ok(Spec { bits, tz, keep })
    }

    /// Whether the board has period `p`.
    pub fn has(&self, p: Period) -> bool {
        self.bits & p.bit() != 0
    }

    /// The board's periods, in the canonical order (day, week, month).
    pub fn periods(&self) -> impl Iterator<Item = Period> + '_ {
        Period::ALL.into_iter().filter(|p| self.has(*p))
    }

    /// The instant (unix ms) a period board expires: `KEEP` whole periods
    /// after its period ends (calendar months for months).
    pub fn expiry(&self, span: Span) -> i64 {
        span.plus(1 + self.keep).start_ms(self.tz)
    }

    /// The periods of kind `p` whose board can still be alive at `now_ms`,
    /// newest first: the current one back to `KEEP + 1` periods ago (one
    /// more than can be alive: [`Spec::expiry`] of `KEEP + 1` periods ago is
    /// at or before `now_ms`). Writes are never later than the server clock,
    /// so no other board of `p` can exist.
    pub fn live(&self, p: Period, now_ms: i64) -> Vec<Span> {
        let cur = p.containing(now_ms, self.tz);
        (0..=self.keep + 1).map(|n| cur.ago(n)).collect()
    }

    /// The ids of [`Spec::live`] for every period of the board.
    pub fn live_ids(&self, now_ms: i64) -> Vec<String> {
        self.periods()
            .flat_map(|p| self.live(p, now_ms))
            .map(Span::id)
            .collect()
    }

    /// The stored form: `periods <p>[,<p>…] tz ±hh:mm keep <n>`.
    pub fn serialize(&self) -> String {
        let names: Vec<&str> = self.periods().map(Period::name).collect();
        format!(
            "periods {} tz {} keep {}",
            names.join(","),
            self.tz.format(),
            self.keep
        )
    }

    /// Reads [`Spec::serialize`]'s form back. Error: [`RankError::CorruptLayout`].
    pub fn deserialize(s: &str) -> Result<Spec, RankError> {
        let bad = || RankError::CorruptLayout;
        let f: Vec<&str> = s.split(' ').collect();
        let ["periods", list, "tz", tz, "keep", keep] = f.as_slice() else {
            return Err(bad());
        };
        let mut ps = Vec::new();
        for name in list.split(',') {
            ps.push(parse_period("PERIODS", name.as_bytes()).map_err(|_| bad())?);
        }
        let tz = Tz::parse(tz.as_bytes()).map_err(|_| bad())?;
        let keep = keep.parse().map_err(|_| bad())?;
        Spec::new(&ps, tz, keep).map_err(|_| bad())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Unix ms of `y-m-d hh:mm` UTC.
    fn utc(y: i64, m: u32, d: u32, hh: i64, mm: i64) -> i64 {
        days_from_civil(y, m, d) * DAY_MS + (hh * 60 + mm) * 60_000
    }

    fn tz(s: &str) -> Tz {
        Tz::parse(s.as_bytes()).unwrap()
    }

    fn id(p: Period, t: i64, z: Tz) -> String {
        p.containing(t, z).id()
    }

    #[test]
    fn civil_dates_of_known_days() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        // 2020-01-01, the layouts' epoch.
        assert_eq!(days_from_civil(2020, 1, 1) * DAY_MS, crate::rank::EPOCH_MS);
        assert_eq!(iso_weekday(0), 4, "1970-01-01 was a Thursday");
        assert_eq!(iso_weekday(days_from_civil(2026, 11, 23)), 1, "a Monday");
    }

    #[test]
    fn month_ends_roll_over() {
        let z = Tz::UTC;
        // Jan 31 → Feb 1.
        assert_eq!(id(Period::Day, utc(2026, 1, 31, 23, 59), z), "d2026-01-31");
        assert_eq!(id(Period::Day, utc(2026, 1, 31, 24, 0), z), "d2026-02-01");
        assert_eq!(id(Period::Month, utc(2026, 1, 31, 23, 59), z), "m2026-01");
        assert_eq!(id(Period::Month, utc(2026, 2, 1, 0, 0), z), "m2026-02");
        // Feb 28 → Mar 1 in a common year, Feb 28 → 29 → Mar 1 in a leap year.
        assert_eq!(id(Period::Day, utc(2026, 2, 28, 24, 0), z), "d2026-03-01");
        assert_eq!(id(Period::Day, utc(2024, 2, 28, 24, 0), z), "d2024-02-29");
        assert_eq!(id(Period::Day, utc(2024, 2, 29, 24, 0), z), "d2024-03-01");
        // Dec 31 → Jan 1 of the next year.
        assert_eq!(id(Period::Day, utc(2025, 12, 31, 23, 59), z), "d2025-12-31");
        assert_eq!(id(Period::Day, utc(2026, 1, 1, 0, 0), z), "d2026-01-01");
        assert_eq!(id(Period::Month, utc(2025, 12, 31, 23, 59), z), "m2025-12");
        assert_eq!(id(Period::Month, utc(2026, 1, 1, 0, 0), z), "m2026-01");
        // Month starts and ends, in ms.
        let feb24 = Period::Month.containing(utc(2024, 2, 10, 0, 0), z);
        assert_eq!(feb24.start_ms(z), utc(2024, 2, 1, 0, 0));
        assert_eq!(feb24.end_ms(z), utc(2024, 3, 1, 0, 0));
        assert_eq!(feb24.end_ms(z) - feb24.start_ms(z), 29 * DAY_MS);
        let dec = Period::Month.containing(utc(2025, 12, 31, 12, 0), z);
        assert_eq!(dec.end_ms(z), utc(2026, 1, 1, 0, 0));
    }

    #[test]
    fn leap_years() {
        assert!(is_leap(2024) && is_leap(2000) && !is_leap(2100) && !is_leap(2026));
        assert_eq!(
            id(Period::Day, utc(2024, 2, 29, 12, 0), Tz::UTC),
            "d2024-02-29"
        );
        // 2100 is not leap: Feb 28 is followed by Mar 1.
        assert_eq!(
            days_from_civil(2100, 3, 1) - days_from_civil(2100, 2, 28),
            1
        );
        assert_eq!(
            id(Period::Day, utc(2100, 2, 28, 24, 0), Tz::UTC),
            "d2100-03-01"
        );
        // 2000 is: Feb 29 exists.
        assert_eq!(
            days_from_civil(2000, 3, 1) - days_from_civil(2000, 2, 28),
            2
        );
        assert_eq!(
            id(Period::Day, utc(2000, 2, 28, 24, 0), Tz::UTC),
            "d2000-02-29"
        );
        assert_eq!(
            Span::parse_id("d2024-02-29").map(Span::id).as_deref(),
            Some("d2024-02-29")
        );
        assert_eq!(Span::parse_id("d2100-02-29"), None);
        assert_eq!(Span::parse_id("d2026-02-29"), None);
        assert!(Span::parse_id("d2000-02-29").is_some());
    }

    #[test]
    fn iso_weeks_across_new_year() {
        let w = |y, m, d| id(Period::Week, utc(y, m, d, 12, 0), Tz::UTC);
        assert_eq!(w(2020, 12, 31), "w2020-W53");
        assert_eq!(w(2021, 1, 1), "w2020-W53");
        assert_eq!(w(2021, 1, 3), "w2020-W53", "a Sunday, still 2020's week 53");
        assert_eq!(w(2021, 1, 4), "w2021-W01", "a Monday");
        assert_eq!(w(2024, 12, 29), "w2024-W52");
        assert_eq!(w(2024, 12, 30), "w2025-W01");
        assert_eq!(w(2026, 11, 23), "w2026-W48");
        assert_eq!(w(2026, 1, 1), "w2026-W01", "a Thursday: week 1");
        assert_eq!(
            w(2027, 1, 1),
            "w2026-W53",
            "a Friday: the last week of 2026"
        );
        // A week is Monday 00:00 to the next Monday 00:00.
        let s = Period::Week.containing(utc(2021, 1, 3, 23, 59), Tz::UTC);
        assert_eq!(s.start_ms(Tz::UTC), utc(2020, 12, 28, 0, 0));
        assert_eq!(s.end_ms(Tz::UTC), utc(2021, 1, 4, 0, 0));
        assert_eq!(s.plus(1).id(), "w2021-W01");
        assert_eq!(Span::parse_id("w2020-W53"), Some(s));
        assert_eq!(Span::parse_id("w2021-W53"), None, "2021 has 52 weeks");
        assert_eq!(Span::parse_id("w2021-W00"), None);
    }

    #[test]
    fn time_zones_move_instants_across_periods() {
        // Monday 2026-11-30 11:00 UTC: Tuesday at +14:00, Sunday at -12:00.
        let t = utc(2026, 11, 30, 11, 0);
        assert_eq!(id(Period::Day, t, tz("+14:00")), "d2026-12-01");
        assert_eq!(id(Period::Month, t, tz("+14:00")), "m2026-12");
        assert_eq!(id(Period::Day, t, tz("-12:00")), "d2026-11-29");
        assert_eq!(id(Period::Week, t, tz("-12:00")), "w2026-W48");
        assert_eq!(id(Period::Week, t, Tz::UTC), "w2026-W49");
        assert_eq!(id(Period::Day, t, tz("-14:00")), "d2026-11-29");
        // New year: 2025-12-31 10:00 UTC is 2026-01-01 00:00 at +14:00.
        let ny = utc(2025, 12, 31, 10, 0);
        assert_eq!(id(Period::Day, ny, tz("+14:00")), "d2026-01-01");
        assert_eq!(id(Period::Month, ny, tz("+14:00")), "m2026-01");
        assert_eq!(id(Period::Day, ny - 1, tz("+14:00")), "d2025-12-31");
        // 2021-01-04 06:00 UTC is Sunday 2021-01-03 at -12:00: 2020-W53.
        let t = utc(2021, 1, 4, 6, 0);
        assert_eq!(id(Period::Week, t, tz("-12:00")), "w2020-W53");
        assert_eq!(id(Period::Week, t, Tz::UTC), "w2021-W01");
        // Starts are local midnights.
        let d = Period::Day.containing(ny, tz("+14:00"));
        assert_eq!(d.start_ms(tz("+14:00")), ny);
        let d = Period::Day.containing(ny, tz("-14:00"));
        assert_eq!(d.id(), "d2025-12-30");
        assert_eq!(d.start_ms(tz("-14:00")), utc(2025, 12, 30, 14, 0));
        assert_eq!(d.end_ms(tz("-14:00")), utc(2025, 12, 31, 14, 0));
        // Minutes count.
        assert_eq!(
            id(Period::Day, utc(2026, 1, 1, 18, 29), tz("+05:30")),
            "d2026-01-01"
        );
        assert_eq!(
            id(Period::Day, utc(2026, 1, 1, 18, 30), tz("+05:30")),
            "d2026-01-02"
        );
    }

    #[test]
    fn tz_text() {
        for (s, m) in [
            ("+00:00", 0),
            ("-14:00", -840),
            ("+14:00", 840),
            ("+05:45", 345),
            ("-03:30", -210),
        ] {
            assert_eq!(tz(s).minutes(), m);
            assert_eq!(tz(s).format(), s);
        }
        for s in [
            "+14:01", "-15:00", "05:00", "+5:00", "+05:60", "+0500", "", "+05:00 ", "Z",
        ] {
            assert_eq!(Tz::parse(s.as_bytes()), Err(RankError::BadTz), "{s}");
        }
        assert_eq!(tz("-00:00"), Tz::UTC);
        assert_eq!(
            RankError::BadTz.to_string(),
            "TZ must be a UTC offset +hh:mm or -hh:mm between -14:00 and +14:00"
        );
    }

    #[test]
    fn period_names_are_day_week_month() {
        assert_eq!(parse_period("PERIOD", b"Week"), Ok(Period::Week));
        let e = parse_period("PERIODS", b"year").unwrap_err();
        assert_eq!(e, RankError::BadPeriod { option: "PERIODS" });
        assert_eq!(e.to_string(), "PERIODS must be day, week or month");
    }

    #[test]
    fn expiry_is_keep_whole_periods_after_the_end() {
        let z = tz("+02:00");
        let spec = Spec::new(&Period::ALL, z, 2).unwrap();
        let t = utc(2026, 1, 31, 12, 0);
        let d = Period::Day.containing(t, z);
        assert_eq!(spec.expiry(d), d.end_ms(z) + 2 * DAY_MS);
        let w = Period::Week.containing(t, z);
        assert_eq!(spec.expiry(w), w.end_ms(z) + 14 * DAY_MS);
        // January's board lives through February and March (calendar months).
        let m = Period::Month.containing(t, z);
        assert_eq!(spec.expiry(m), utc(2026, 4, 1, 0, 0) - 2 * 3_600_000);
        let zero = Spec::new(&[Period::Day], z, 0).unwrap();
        assert_eq!(zero.expiry(d), d.end_ms(z));
    }

    #[test]
    fn live_periods_cover_every_unexpired_board() {
        let spec = Spec::new(&[Period::Day, Period::Month], Tz::UTC, 2).unwrap();
        let now = utc(2026, 3, 2, 5, 0);
        assert_eq!(
            spec.live_ids(now),
            [
                "d2026-03-02",
                "d2026-03-01",
                "d2026-02-28",
                "d2026-02-27",
                "m2026-03",
                "m2026-02",
                "m2026-01",
                "m2025-12"
            ]
        );
    }

    #[test]
    fn stored_text_splits_into_layout_and_spec() {
        assert_eq!(split_stored(b"v1 s 0 10"), (&b"v1 s 0 10"[..], None));
        assert_eq!(
            split_stored(b"v1 s 0 10 periods day tz +00:00 keep 2"),
            (
                &b"v1 s 0 10"[..],
                Some(&b"periods day tz +00:00 keep 2"[..])
            )
        );
    }

    #[test]
    fn spec_round_trips_through_its_stored_form() {
        let s = Spec::new(
            &[Period::Month, Period::Day, Period::Month],
            tz("-03:30"),
            7,
        )
        .unwrap();
        assert_eq!(s.serialize(), "periods day,month tz -03:30 keep 7");
        assert_eq!(Spec::deserialize(&s.serialize()).unwrap(), s);
        for bad in [
            "periods  tz +00:00 keep 2",
            "periods day tz +00:00",
            "periods day tz +00:00 keep -1",
            "periods day tz +00:00 keep 10001",
            "periods year tz +00:00 keep 1",
            "periods day tz 0 keep 1",
        ] {
            assert_eq!(
                Spec::deserialize(bad),
                Err(RankError::CorruptLayout),
                "{bad}"
            );
        }
        assert_eq!(Spec::new(&[], Tz::UTC, 2), Err(RankError::NoPeriods));
        assert_eq!(
            Spec::new(&[Period::Day], Tz::UTC, MAX_KEEP + 1),
            Err(RankError::BadKeep)
        );
        assert_eq!(
            Spec::new(&[Period::Day], Tz::UTC, -1),
            Err(RankError::BadKeep)
        );
        assert_eq!(
            RankError::NoPeriods.to_string(),
            "PERIODS needs at least one of day, week, month"
        );
        assert_eq!(
            RankError::BadKeep.to_string(),
            "KEEP must be an integer between 0 and 10000"
        );
    }

    fn any_period() -> impl Strategy<Value = Period> {
        prop_oneof![Just(Period::Day), Just(Period::Week), Just(Period::Month)]
    }

    fn any_tz() -> impl Strategy<Value = Tz> {
        (-MAX_TZ_MINUTES..=MAX_TZ_MINUTES).prop_map(|m| Tz::from_minutes(m).unwrap())
    }

    /// Instants from 1971 to the year 9999 (the range of every time argument).
    fn any_t() -> impl Strategy<Value = i64> {
        DAY_MS * 366..=crate::parse::MAX_TIME_MS - DAY_MS
    }

    proptest! {

        /// The id built on the stack equals the one `format!` builds.
        #[test]
        fn id_text_equals_formatted_id(t in 0i64..=crate::parse::MAX_TIME_MS, tz in -840i32..=840) {
            let tz = Tz::from_minutes(tz).unwrap();
            for p in Period::ALL {
                let s = p.containing(t, tz);
                let want = match p {
                    Period::Day => {
                        let (y, m, d) = civil_from_days(s.index);
                        format!("d{y:04}-{m:02}-{d:02}")
                    }
                    Period::Week => {
                        let (y, w) = iso_week(s.first_day());
                        format!("w{y:04}-W{w:02}")
                    }
                    Period::Month => format!("m{:04}-{:02}", s.index.div_euclid(12), s.index.rem_euclid(12) + 1),
                };
                prop_assert_eq!(s.id(), want);
            }
        }
        #[test]
        fn civil_round_trip(z in -1_000_000i64..3_000_000) {
            let (y, m, d) = civil_from_days(z);
            prop_assert!((1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m));
            prop_assert_eq!(days_from_civil(y, m, d), z);
            // The next day is the next date.
            let (y2, m2, d2) = civil_from_days(z + 1);
            if d < days_in_month(y, m) {
                prop_assert_eq!((y2, m2, d2), (y, m, d + 1));
            } else if m < 12 {
                prop_assert_eq!((y2, m2, d2), (y, m + 1, 1));
            } else {
                prop_assert_eq!((y2, m2, d2), (y + 1, 1, 1));
            }
        }

        #[test]
        fn a_period_contains_its_instant(p in any_period(), t in any_t(), z in any_tz()) {
            let s = p.containing(t, z);
            prop_assert!(s.start_ms(z) <= t && t < s.end_ms(z));
            // Local midnights, and the right length.
            prop_assert_eq!((s.start_ms(z) + z.offset_ms()).rem_euclid(DAY_MS), 0);
            let days = (s.end_ms(z) - s.start_ms(z)) / DAY_MS;
            match p {
                Period::Day => prop_assert_eq!(days, 1),
                Period::Week => {
                    prop_assert_eq!(days, 7);
                    prop_assert_eq!(iso_weekday(z.local_day(s.start_ms(z))), 1);
                }
                Period::Month => prop_assert!((28..=31).contains(&days)),
            }
        }

        #[test]
        fn consecutive_periods_tile_the_line(p in any_period(), t in any_t(), z in any_tz()) {
            let s = p.containing(t, z);
            let next = s.plus(1);
            prop_assert_eq!(s.end_ms(z), next.start_ms(z));
            prop_assert_eq!(p.containing(s.end_ms(z), z), next);
            prop_assert_eq!(p.containing(s.end_ms(z) - 1, z), s);
            prop_assert_eq!(p.containing(s.start_ms(z), z), s);
            prop_assert_eq!(p.containing(s.start_ms(z) - 1, z), s.ago(1));
            // Ids sort in time order (4-digit years).
            prop_assert!(s.id() < next.id());
        }

        #[test]
        fn ids_round_trip(p in any_period(), t in any_t(), z in any_tz()) {
            let s = p.containing(t, z);
            prop_assert_eq!(Span::parse_id(&s.id()), Some(s));
        }

        #[test]
        fn ago_steps_back_one_period_at_a_time(p in any_period(), t in any_t(), z in any_tz(), n in 0i64..200) {
            let s = p.containing(t, z);
            let mut walk = s;
            for _ in 0..n {
                walk = p.containing(walk.start_ms(z) - 1, z);
            }
            prop_assert_eq!(s.ago(n), walk);
            prop_assert_eq!(s.ago(n).plus(n), s);
        }

        #[test]
        fn live_list_holds_every_unexpired_board(p in any_period(), now in any_t(), z in any_tz(), keep in 0i64..40, back in 0i64..200) {
            let spec = Spec::new(&[p], z, keep).unwrap();
            let s = p.containing(now, z).ago(back);
            let live = spec.live(p, now);
            if spec.expiry(s) > now {
                prop_assert!(live.contains(&s), "{} expires after now but is not live", s.id());
            }
            prop_assert_eq!(live.len() as i64, keep + 2);
        }

        #[test]
        fn iso_week_one_holds_january_4th(y in 1971i64..9999, d in 0i64..7) {
            // Week 1 holds Jan 4 (so the year's first Thursday), and the
            // week before it is the previous week-year's last week.
            let jan4 = days_from_civil(y, 1, 4);
            prop_assert_eq!(iso_week(jan4), (y, 1));
            let monday = iso_week_monday(y, 1).unwrap();
            prop_assert_eq!(iso_week(monday + d), (y, 1));
            let (py, pw) = iso_week(monday - 1 - d);
            prop_assert_eq!(py, y - 1);
            prop_assert!(pw == 52 || pw == 53);
        }

        #[test]
        fn tz_text_round_trips(z in any_tz()) {
            prop_assert_eq!(Tz::parse(z.format().as_bytes()).unwrap(), z);
        }
    }
}
