//! The board record of a HOT board: what HOT.TOP's pruning relies on, kept
//! in one derived string (`K\0board`) that HOT.VIEW reads by DMA. Pure Rust,
//! no Redis.
//!
//! Text: `<maxViewAt>:<fp>`, where `maxViewAt` is a decimal upper bound
//! (unix ms, rounded up to a whole minute) of the instants the board's
//! stored scores were computed for, and `fp` is the 16-hex-digit
//! fingerprint of the formula that computed them ([`Formula::fingerprint`]),
//! or `mixed` once scores of two formulas are on the board. For example
//! `1722470400000:9f2c1e0b7a6d5c43`.
//!
//! A record written since boards have settings continues, after one space,
//! with the board's settings ([`BoardSettings`], their text form):
//! `1722470400000:9f2c1e0b7a6d5c43 id=1722470000000 alpha=1 beta=1.2 …`.
//! A record without them (written before) gets them on the board's next
//! write. A board with no score yet has `maxViewAt` `-9223372036854775808`.
//!
//! [`Formula::fingerprint`]: super::Formula::fingerprint

use super::settings::BoardSettings;
use crate::parse::{parse_i64, IntText};

/// Granularity of the `maxViewAt` bound (ms): it is rounded up to a whole
/// minute, so a busy board rewrites its record at most once a minute.
pub const VIEW_BOUND_STEP: i64 = 60_000;

/// Which formula computed the stored scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scored {
    /// All by the formula of this fingerprint.
    By([u8; 16]),
    /// By more than one formula (a config changed while the board lived).
    Mixed,
}

/// A parsed board record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoardRecord {
    /// Upper bound (unix ms) of the instants stored scores were computed for.
    pub max_view_at: i64,
    pub scored: Scored,
    /// The board's settings (`None` in a record written before settings).
    pub settings: Option<BoardSettings>,
}

impl BoardRecord {
    /// Parses the record's text; `None` for text hotrank did not write.
    pub fn parse(text: &[u8]) -> Option<BoardRecord> {
        let (text, settings) = match text.iter().position(|&c| c == b' ') {
            Some(sp) => (
                &text[..sp],
                Some(BoardSettings::parse_cached(&text[sp + 1..])?),
            ),
            None => (text, None),
        };
        let colon = text.iter().position(|&c| c == b':')?;
        let max_view_at = parse_i64("maxViewAt", &text[..colon]).ok()?;
        let fp = &text[colon + 1..];
        let scored = if fp == b"mixed" {
            Scored::Mixed
        } else {
            let hex: [u8; 16] = fp.try_into().ok()?;
            if !hex.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')) {
                return None;
            }
            Scored::By(hex)
        };
        Some(BoardRecord {
            max_view_at,
            scored,
            settings,
        })
    }

    /// [`Self::parse`] through a small per-thread cache of recent texts
    /// ([`crate::parse::Recent`]): a view reads its board's record on every
    /// call, and the record changes at most once a minute
    /// ([`VIEW_BOUND_STEP`]), so the bytes are compared instead of parsed.
    /// Same result as `parse`.
    pub fn parse_cached(text: &[u8]) -> Option<BoardRecord> {
        thread_local! {
            static CACHE: std::cell::RefCell<crate::parse::Recent<BoardRecord>> =
                const { std::cell::RefCell::new(crate::parse::Recent::new()) };
        }
        CACHE.with(|c| c.borrow_mut().parse(text, BoardRecord::parse))
    }

    /// The record a write starts from, and whether the write stores settings:
    /// the `stored` record as it is when it has settings; with `defaults()`
    /// attached when it has none (a record from before settings); a new
    /// board's ([`Self::new_board`]) when there is none. `defaults` (the
    /// configs of this moment) is called only in those two cases.
    #[inline]
    pub fn with_settings(
        stored: Option<BoardRecord>,
        defaults: impl FnOnce() -> BoardSettings,
    ) -> (BoardRecord, bool) {
        match stored {
            Some(r) if r.settings.is_some() => (r, false),
            Some(r) => (
                BoardRecord {
                    settings: Some(defaults()),
                    ..r
                },
                true,
            ),
            None => (BoardRecord::new_board(defaults()), true),
        }
    }

    /// The record of a new board with `settings` and no score yet.
    pub fn new_board(settings: BoardSettings) -> BoardRecord {
        BoardRecord {
            max_view_at: i64::MIN,
            scored: Scored::By(settings.formula.fingerprint()),
            settings: Some(settings),
        }
    }

    /// The record's text.
    pub fn text(&self) -> Vec<u8> {
        let max = IntText::new(self.max_view_at);
        let fp: &[u8] = match &self.scored {
            Scored::By(hex) => hex,
            Scored::Mixed => b"mixed",
        };
        let mut t = Vec::with_capacity(256);
        for part in [max.as_bytes(), b":", fp] {
            t.extend_from_slice(part);
        }
        if let Some(s) = &self.settings {
            t.push(b' ');
            t.extend_from_slice(s.text().as_bytes());
        }
        t
    }

    /// The record after a score computed at `at_ms` by the formula of
    /// fingerprint `fp` is stored; `None` when `old` already covers it
    /// (nothing to write). The bound only grows, rounded up to
    /// [`VIEW_BOUND_STEP`].
    pub fn after_write(old: Option<&BoardRecord>, fp: [u8; 16], at_ms: i64) -> Option<Self> {
        let bound = at_ms
            .div_euclid(VIEW_BOUND_STEP)
            .saturating_add(1)
            .saturating_mul(VIEW_BOUND_STEP);
        let new = match old {
            None => BoardRecord {
                max_view_at: bound,
                scored: Scored::By(fp),
                settings: None,
            },
            Some(o) => BoardRecord {
                settings: o.settings,
                max_view_at: if o.max_view_at >= at_ms {
                    o.max_view_at
                } else {
                    bound
                },
                scored: if o.scored == Scored::By(fp) {
                    o.scored
                } else {
                    Scored::Mixed
                },
            },
        };
        (old != Some(&new)).then_some(new)
    }

    /// Whether stored scores bound the scores at query time `q` (unix ms)
    /// under the formula of fingerprint `fp`: all were computed by that
    /// formula, and no later than `q` (`at_clock`: `q` is the server clock,
    /// which no view can be later than).
    pub fn bounds_scores_at(&self, fp: [u8; 16], q: i64, at_clock: bool) -> bool {
        self.scored == Scored::By(fp) && (at_clock || self.max_view_at <= q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FP: [u8; 16] = *b"0123456789abcdef";
    const FP2: [u8; 16] = *b"fedcba9876543210";

    #[test]
    fn text_round_trips() {
        let r = BoardRecord {
            max_view_at: 1_722_470_400_000,
            scored: Scored::By(FP),
            settings: None,
        };
        assert_eq!(r.text().as_slice(), b"1722470400000:0123456789abcdef");
        assert_eq!(BoardRecord::parse(&r.text()), Some(r));
        let m = BoardRecord {
            max_view_at: -60_000,
            scored: Scored::Mixed,
            settings: None,
        };
        assert_eq!(m.text().as_slice(), b"-60000:mixed");
        let s = BoardRecord::new_board(BoardSettings {
            id: 7,
            ..Default::default()
        });
        assert!(s.text().starts_with(b"-9223372036854775808:"));
        assert_eq!(BoardRecord::parse(&s.text()), Some(s));
        assert_eq!(BoardRecord::parse(b"-60000:mixed"), Some(m));
    }

    #[test]
    fn foreign_text_is_refused() {
        for bad in [
            &b""[..],
            b"x",
            b"12",
            b"12:",
            b":0123456789abcdef",
            b"1x:0123456789abcdef",
            b"12:0123456789ABCDEF",
            b"12:0123456789abcde",
            b"12:0123456789abcdef0",
            b"12:mixed ",
            b"9223372036854775808:mixed",
            b"12:mixed id=0",
            b"12:mixed  id=0 alpha=1",
        ] {
            assert_eq!(BoardRecord::parse(bad), None, "{}", bad.escape_ascii());
        }
    }

    #[test]
    fn bound_is_rounded_up_and_only_grows() {
        let r = BoardRecord::after_write(None, FP, 61_000).unwrap();
        assert_eq!(r.max_view_at, 120_000);
        assert_eq!(r.scored, Scored::By(FP));
        // Covered: nothing to write.
        assert_eq!(BoardRecord::after_write(Some(&r), FP, 119_999), None);
        assert_eq!(BoardRecord::after_write(Some(&r), FP, 5), None);
        // A later view moves the bound.
        let r2 = BoardRecord::after_write(Some(&r), FP, 120_001).unwrap();
        assert_eq!(r2.max_view_at, 180_000);
        // Another formula: mixed, for good.
        let m = BoardRecord::after_write(Some(&r2), FP2, 0).unwrap();
        assert_eq!(m.scored, Scored::Mixed);
        assert_eq!(m.max_view_at, 180_000);
        assert_eq!(BoardRecord::after_write(Some(&m), FP, 0), None);
    }

    #[test]
    fn bounds_need_the_same_formula_and_a_late_enough_query() {
        let r = BoardRecord {
            max_view_at: 120_000,
            scored: Scored::By(FP),
            settings: None,
        };
        assert!(r.bounds_scores_at(FP, 120_000, false));
        assert!(!r.bounds_scores_at(FP, 119_999, false));
        assert!(r.bounds_scores_at(FP, 0, true));
        assert!(!r.bounds_scores_at(FP2, 200_000, true));
        let m = BoardRecord {
            scored: Scored::Mixed,
            ..r
        };
        assert!(!m.bounds_scores_at(FP, 200_000, true));
    }

    proptest! {
        #[test]
        fn any_record_round_trips(max in any::<i64>(), mixed in any::<bool>(), fp in proptest::array::uniform16(0u8..16)) {
            let hex = fp.map(|d| b"0123456789abcdef"[d as usize]);
            let r = BoardRecord { max_view_at: max, scored: if mixed { Scored::Mixed } else { Scored::By(hex) }, settings: None };
            prop_assert_eq!(BoardRecord::parse(&r.text()), Some(r));
        }

        /// The cache gives what `parse` gives, whatever the sequence of
        /// texts: records with and without settings, texts that differ in
        /// one byte, texts that do not parse, texts met again after more
        /// than the cache keeps.
        #[test]
        fn the_cache_gives_what_parse_gives(picks in proptest::collection::vec((0usize..24, any::<bool>(), 0usize..64, any::<u8>()), 1..120)) {
            let mut texts: Vec<Vec<u8>> = Vec::new();
            for i in 0..12i64 {
                let r = BoardRecord { max_view_at: i * 60_000, scored: Scored::By(FP), settings: None };
                texts.push(r.text());
                let s = BoardRecord::new_board(BoardSettings { id: i, ..Default::default() });
                texts.push(s.text());
            }
            for (pick, damage, at, byte) in picks {
                let mut t = texts[pick].clone();
                if damage {
                    let at = at % t.len();
                    t[at] = byte;
                }
                prop_assert_eq!(BoardRecord::parse_cached(&t), BoardRecord::parse(&t));
            }
        }

        #[test]
        fn after_write_covers_the_write(at in -1_000_000_000_000i64..4_000_000_000_000, prev in proptest::option::of(-1_000_000_000_000i64..4_000_000_000_000)) {
            let old = prev.map(|m| BoardRecord { max_view_at: m, scored: Scored::By(FP), settings: None });
            let new = BoardRecord::after_write(old.as_ref(), FP, at).or(old).unwrap();
            prop_assert!(new.max_view_at >= at);
            prop_assert!(new.max_view_at >= prev.unwrap_or(i64::MIN));
            prop_assert!(new.bounds_scores_at(FP, new.max_view_at, false));
        }
    }
}
