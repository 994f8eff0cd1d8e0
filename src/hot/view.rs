//! What one page view does: the "plan" step of HOT.VIEW. Pure Rust, no
//! Redis; times are milliseconds since the unix epoch.
//!
//! HOT.VIEW is built as read → plan → write, and enters the core twice:
//! [`setup`] turns the stored board record and the view's arguments into
//! what the glue needs to name and read the view's keys ([`Setup`]); the
//! glue opens and reads them into [`ViewFacts`]; [`plan`] decides
//! everything the view does ([`Plan`], or an error, before anything is
//! written); one writer in the glue applies it and replicates its effects.
//! So a view that fails writes nothing. (Two content checks stay where
//! their key is read, so the first bad key is the one reported: the
//! HyperLogLog's header, [`hll::validate`], and the dedup string's records,
//! [`dedup::scan`].)

use super::dedup;
use super::hll::{self, HllError};
use super::record::BoardRecord;
use super::settings::BoardSettings;
use super::Formula;

/// What the glue needs to name and read a view's keys, from the board
/// record as stored and the view's arguments ([`setup`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setup {
    /// The record the view starts from ([`BoardRecord::with_settings`]),
    /// with the board's settings.
    pub record: BoardRecord,
    /// The board's incarnation id (names its dedup and visitor keys) and
    /// formula, from its settings.
    pub id: i64,
    pub formula: Formula,
    /// A record was stored (else the view creates the board).
    pub stored: bool,
    /// The view stores the settings (the record had none, or there is none).
    pub new_settings: bool,
    /// The pair's dedup fingerprint ([`dedup::fingerprint`]).
    pub fp: u64,
    /// The dedup window (ms, 0 = off) and the pair's shard (0 when off).
    pub dedup_window: i64,
    pub dedup_shard: i64,
    /// `visitor-max-views` (0 = the abnormal-traffic check is off).
    pub visitor_max: i64,
    /// The visitor window (ms) and this view's window index (`t div
    /// window`: with the window in seconds, they name the visitor's
    /// counter).
    pub visitor_window: i64,
    pub visitor_index: i64,
    /// `retention-seconds`, in ms.
    pub retention: i64,
    /// The board keeps a trending ranking.
    pub trending: bool,
}

impl Setup {
    /// The dedup window in whole seconds (names the shard strings).
    pub fn dedup_window_s(&self) -> i64 {
        self.dedup_window / 1000
    }

    /// The visitor window in whole seconds (names the visitor's counter).
    pub fn visitor_window_s(&self) -> i64 {
        self.visitor_window / 1000
    }
}

/// The first step of a view: from the board record's bytes as stored
/// (`None` when missing; `Err(())` when they are not a board record
/// hotrank wrote), the configs' settings of this moment (`defaults`, asked
/// only for a record without settings or a new board), the article,
/// visitor and view time `t` (unix ms).
#[allow(clippy::result_unit_err)]
pub fn setup(
    stored: Option<&[u8]>,
    defaults: impl FnOnce() -> BoardSettings,
    article: &[u8],
    visitor: &[u8],
    t: i64,
) -> Result<Setup, ()> {
    let stored = match stored {
        Some(text) => Some(BoardRecord::parse_cached(text).ok_or(())?),
        None => None,
    };
    let had = stored.is_some();
    let (record, new_settings) = BoardRecord::with_settings(stored, defaults);
    let s = record.settings.unwrap_or_default();
    let fp = dedup::fingerprint(article, visitor);
    let dedup_window = s.dedup_ms();
    let dedup_shard = if dedup_window > 0 {
        i64::from(dedup::shard(fp, s.dedup_shards() as u32))
    } else {
        0
    };
    let visitor_window = s.visitor_window_ms();
    Ok(Setup {
        record,
        id: s.id,
        formula: s.formula,
        stored: had,
        new_settings,
        fp,
        dedup_window,
        dedup_shard,
        visitor_max: s.visitor_max_views(),
        visitor_window,
        visitor_index: if visitor_window > 0 {
            t.div_euclid(visitor_window)
        } else {
            0
        },
        retention: s.retention_ms(),
        trending: s.trending(),
    })
}

/// What the glue read before deciding. Times and durations in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewFacts<'a> {
    /// View time: `AT t`, or the server clock.
    pub t: i64,
    /// The server clock (expiries are set from it).
    pub now: i64,
    /// The article's PV counter before this view; `None` when missing.
    pub pv: Option<i64>,
    /// Time to live left on the PV counter, if it has an expiry.
    pub pv_ttl: Option<i64>,
    /// The article's stored publish time, if any.
    pub published: Option<i64>,
    /// Views of this visitor on the board in the current visitor window
    /// before this one; `None` when the abnormal-traffic check is off.
    pub visitor_views: Option<i64>,
    /// `hotrank.visitor-max-views` (used when `visitor_views` is `Some`).
    pub visitor_max: i64,
    /// `hotrank.visitor-window-seconds`, in ms: a new visitor counter
    /// expires this long after it is created.
    pub visitor_window: i64,
    /// Whether dedup found a counted view of the pair within the window.
    pub duplicate: bool,
    /// The pair's dedup shard string as read, when dedup is on: a counted
    /// view plans its entry in it ([`dedup::plan_write`]).
    pub dedup: Option<DedupFacts<'a>>,
    /// The meta hash's `lastView` (unix ms of the article's last counted view).
    pub last_view: Option<i64>,
    /// The visitor id: the element added to the HyperLogLog.
    pub visitor: &'a [u8],
    /// The article's HyperLogLog as stored (header checked); `None` when missing.
    pub hll: Option<&'a [u8]>,
    /// The server's `hll-sparse-max-bytes`.
    pub hll_sparse_max: usize,
    /// `hotrank.retention-seconds`, in ms.
    pub retention: i64,
    /// The board record as read (see [`BoardRecord`]).
    pub record: Option<BoardRecord>,
    /// Whether this view may move the record's `trending-keep`
    /// ([`super::trending::next_keep`]): a client's view, or one from the
    /// master or the AOF marked `KEEP` (the master's view moved it). An
    /// unmarked replicated view leaves it as stored, as hotrank 0.3.0 (which
    /// has no such field) does, so a replica or an AOF load of a 0.3.0
    /// master's views writes that master's bytes.
    pub keep_moves: bool,
}

/// The pair's dedup shard string as a view read it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DedupFacts<'a> {
    /// The pair's fingerprint and the dedup window (ms, ≥ 1).
    pub fp: u64,
    pub window: i64,
    /// The string and what [`dedup::scan`] found in it; `None` when missing.
    pub existing: Option<(&'a [u8], dedup::Found)>,
    /// Strings of the old layout (of the view's generations) exist.
    pub upgraded: bool,
}

/// How much older than a counted view's time the stored `lastView` must be
/// for the view to write it (ms): a busy article writes it at most once a
/// minute, as the board record's `maxViewAt`.
pub const LAST_VIEW_GRAIN_MS: i64 = 60_000;

/// Whether a counted view at `t` (unix ms) writes `lastView`: when the
/// meta hash has none, or the stored one is more than
/// [`LAST_VIEW_GRAIN_MS`] older than `t`. Decided from `t` and the stored
/// value only, so a replica and an AOF load decide the same.
pub fn last_view_due(stored: Option<i64>, t: i64) -> bool {
    stored.is_none_or(|l| t.saturating_sub(l) > LAST_VIEW_GRAIN_MS)
}

/// The status word of a HOT.VIEW of an article taken down by HOT.REM (a
/// takedown tombstone lives): nothing is written, the reply is
/// `[0, 0, "0", "removed"]`.
pub const REMOVED_STATUS: &str = "removed";

/// What the view is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Past the visitor limit: only the suspicious counter (and the
    /// visitor's view count) moves; the ranking does not.
    Suspicious,
    /// A repeat of a counted view of the pair: only the visitor's view count moves.
    Duplicate,
    /// Counted: PV, UV, score, dedup entry and board move.
    Counted,
}

impl Outcome {
    /// The status word of the HOT.VIEW reply.
    pub fn status(self) -> &'static str {
        match self {
            Outcome::Suspicious => "suspicious",
            Outcome::Duplicate => "duplicate",
            Outcome::Counted => "counted",
        }
    }
}

/// A counter's new value, and its expiry (unix ms) when this write creates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bump {
    pub value: i64,
    pub expire_at: Option<i64>,
}

/// What a counted view writes to the article's HyperLogLog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HllWrite {
    /// The bytes to store; `None` when nothing changes.
    pub value: Option<Vec<u8>>,
    /// Replicate `PFADD key visitor`: a register changed or the key is new.
    pub pfadd: bool,
    /// Replicate `PFCOUNT key`: the cached count was rewritten.
    pub pfcount: bool,
}

/// The writes of a counted view.
#[derive(Clone, Debug, PartialEq)]
pub struct Counted {
    /// The PV counter (created with its retention expiry when missing).
    pub pv: Bump,
    pub hll: HllWrite,
    /// The publish time the score uses (stored, or this view's time).
    pub published: i64,
    /// The publish time to record: the article's first counted view.
    pub publish: Option<i64>,
    /// Retention: the expiry (unix ms) to set on the article's keys that
    /// exist (the PV counter too, unless it is created with it); `None`
    /// while the PV counter's expiry is fresh (refreshed at most once per a
    /// tenth of the retention, at most a day).
    pub expire_at: Option<i64>,
    /// The new board record, when it changes.
    pub record: Option<BoardRecord>,
    /// On a board that keeps a trending ranking: what the view does to it
    /// (the landmark, its move, the weight added to the article's sum).
    pub trend: Option<super::trending::Step>,
    /// Whether the record's `trending-keep` changes: `commands` mode then
    /// marks the replicated view `KEEP` ([`ViewFacts::keep_moves`]).
    pub keep_moved: bool,
    /// The pair's dedup entry, when dedup is on ([`dedup::plan_write`]).
    pub dedup: Option<dedup::Write>,
    /// Write `lastView` (the view time): [`last_view_due`].
    pub last_view: bool,
}

/// Everything one view does, decided before anything is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub outcome: Outcome,
    /// PV, UV and score after the view (the reply).
    pub pv: i64,
    pub uv: i64,
    pub score: f64,
    /// The visitor's view counter, when the abnormal-traffic check is on.
    pub visitor: Option<Bump>,
    /// The writes of a counted view.
    pub counted: Option<Counted>,
    /// The status word of the reply ([`Outcome::status`]).
    pub status: &'static str,
}

/// Why a view cannot be applied. Nothing is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewError {
    /// A counter is at `i64::MAX` and cannot take one more.
    Overflow,
    /// The formula's parameters are outside their ranges (see
    /// [`Formula::is_valid`]), so a score could be non-finite.
    BadFormula,
    /// The article's HyperLogLog is corrupt (the error PFADD would give).
    Hll(HllError),
}

/// Decides a view from its facts. Checks come first: the visitor limit
/// (abnormal traffic), then dedup, then the counters that a counted view
/// increments; every counter that will take one more is checked for
/// overflow, and the HyperLogLog is updated on a copy, so an error leaves
/// nothing to undo.
pub fn plan(f: &Formula, v: &ViewFacts) -> Result<Plan, ViewError> {
    if !f.is_valid() {
        return Err(ViewError::BadFormula);
    }
    let visitor = match v.visitor_views {
        None => None,
        Some(i64::MAX) => return Err(ViewError::Overflow),
        Some(n) => Some(Bump {
            value: n + 1,
            expire_at: (n == 0).then_some(v.now + v.visitor_window),
        }),
    };
    let pv = v.pv.unwrap_or(0);
    let outcome = match visitor {
        Some(b) if b.value > v.visitor_max => Outcome::Suspicious,
        _ if v.duplicate => Outcome::Duplicate,
        _ => Outcome::Counted,
    };
    if outcome != Outcome::Counted {
        let uv = match v.hll {
            Some(bytes) => to_i64(hll::estimate_of(bytes).map_err(ViewError::Hll)?),
            None => 0,
        };
        let score = f.score(pv, uv, v.published.unwrap_or(v.t), v.t);
        return Ok(Plan {
            outcome,
            pv,
            uv,
            score,
            visitor,
            counted: None,
            status: outcome.status(),
        });
    }
    let new_pv = pv.checked_add(1).ok_or(ViewError::Overflow)?;
    let (hll, uv, uv_before) = add_visitor(v)?;
    let published = v.published.unwrap_or(v.t);
    let mut record = BoardRecord::after_write(v.record.as_ref(), f.fingerprint(), v.t);
    let settings = v.record.and_then(|r| r.settings);
    let mut keep_moved = false;
    let trend = settings.filter(|s| s.trending()).map(|s| {
        let step = super::trending::step(
            s.landmark,
            v.t,
            s.trending_ms,
            f.alpha,
            f.beta,
            uv.saturating_sub(uv_before),
        );
        // The shortest time from a counted view to its counters' expiry,
        // which lets HOT.TOP BY trending skip their check.
        let view_keep =
            super::trending::view_keep(v.t, v.now, v.retention - retention_slack(v.retention));
        let keep = if v.keep_moves {
            super::trending::next_keep(s.keep, s.landmark, view_keep)
        } else {
            s.keep
        };
        keep_moved = s.keep != keep;
        if s.landmark != Some(step.landmark) || keep_moved {
            // The landmark is stored with the settings in the record.
            let mut r = record
                .or(v.record)
                .unwrap_or_else(|| BoardRecord::new_board(s));
            r.settings = Some(BoardSettings {
                landmark: Some(step.landmark),
                keep,
                ..s
            });
            record = Some(r);
        }
        step
    });
    let counted = Counted {
        pv: Bump {
            value: new_pv,
            expire_at: v.pv.is_none().then_some(v.now + v.retention),
        },
        hll,
        published,
        publish: v.published.is_none().then_some(v.t),
        expire_at: retention_expiry(v),
        record,
        trend,
        keep_moved,
        dedup: v
            .dedup
            .map(|d| dedup::plan_write(d.existing, d.fp, v.t, d.window, v.now, d.upgraded)),
        last_view: last_view_due(v.last_view, v.t),
    };
    Ok(Plan {
        outcome,
        pv: new_pv,
        uv,
        score: f.score(new_pv, uv, published, v.t),
        visitor,
        counted: Some(counted),
        status: outcome.status(),
    })
}

/// The visitor's `PFADD` on a copy of the HyperLogLog (a new one when
/// missing), the count after it, and (on a board with trending, else 0)
/// the count before it, in one walk ([`hll::add_counted`],
/// [`hll::add_counted_before`]). A small sparse value keeps the stale count
/// PFADD leaves (counting it is cheaper than replicating a PFCOUNT); a
/// larger one caches it ([`hll::worth_caching`]).
fn add_visitor(v: &ViewFacts) -> Result<(HllWrite, i64, i64), ViewError> {
    let mut value = v.hll.map_or_else(hll::create, <[u8]>::to_vec);
    // The estimate before the view (`estimate_of` the stored bytes, from
    // the add's own walk): only a board with trending uses it; 0 for a new
    // HyperLogLog.
    let (a, before) = if v.hll.is_some() && trending_on(v) {
        hll::add_counted_before(&mut value, v.visitor, v.hll_sparse_max).map_err(ViewError::Hll)?
    } else {
        let a =
            hll::add_counted(&mut value, v.visitor, v.hll_sparse_max).map_err(ViewError::Hll)?;
        (a, 0)
    };
    let added = a.changed || v.hll.is_none();
    let (uv, recounted) = (a.count, a.recounted);
    let write = HllWrite {
        value: (added || recounted).then_some(value),
        pfadd: added,
        pfcount: recounted,
    };
    Ok((write, to_i64(uv), to_i64(before)))
}

/// Whether the board keeps a trending ranking (from its record's settings).
fn trending_on(v: &ViewFacts) -> bool {
    v.record
        .and_then(|r| r.settings)
        .is_some_and(|s| s.trending())
}

/// The retention expiry a counted view sets (see [`Counted::expire_at`]).
fn retention_expiry(v: &ViewFacts) -> Option<i64> {
    let fresh = v.pv.is_some() && retention_fresh(v.pv_ttl, v.retention);
    (!fresh).then_some(v.now + v.retention)
}

/// Whether a key's retention expiry is fresh: its time to live `ttl` (ms)
/// is within a tenth of the `retention` (ms, at most a day) of a new one.
/// Retention is refreshed only when it is not, so a busy article rewrites
/// its expiries at most daily.
pub fn retention_fresh(ttl: Option<i64>, retention: i64) -> bool {
    ttl.is_some_and(|ttl| ttl > retention - retention_slack(retention))
}

/// How much a fresh retention expiry may have run down (ms) before a
/// counted view refreshes it: a tenth of the `retention` (ms), at most a
/// day. So after any counted view at server clock `now`, the article's
/// counters live past `now + retention − slack`.
pub fn retention_slack(retention: i64) -> i64 {
    (retention / 10).min(86_400_000)
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HOUR: i64 = 3_600_000;
    const RET: i64 = 90 * 24 * HOUR;

    fn facts() -> ViewFacts<'static> {
        ViewFacts {
            t: 1_000,
            now: 1_000,
            pv: Some(4),
            pv_ttl: Some(RET),
            published: Some(0),
            visitor_views: Some(0),
            visitor_max: 60,
            visitor_window: HOUR,
            duplicate: false,
            dedup: None,
            last_view: None,
            visitor: b"v1",
            hll: None,
            hll_sparse_max: hll::DEFAULT_SPARSE_MAX_BYTES,
            retention: RET,
            record: None,
            keep_moves: true,
        }
    }

    #[test]
    fn a_fresh_view_is_counted_and_keeps_the_publish_time() {
        let p = plan(&Formula::default(), &facts()).unwrap();
        assert_eq!((p.outcome, p.pv, p.uv), (Outcome::Counted, 5, 1));
        assert_eq!(p.score, Formula::default().score(5, 1, 0, 1_000));
        let c = p.counted.unwrap();
        assert_eq!(
            c.pv,
            Bump {
                value: 5,
                expire_at: None
            }
        );
        assert_eq!((c.published, c.publish, c.expire_at), (0, None, None));
        assert!(c.hll.pfadd && !c.hll.pfcount && c.hll.value.is_some());
        assert!(c.record.is_some());
        assert_eq!(
            p.visitor,
            Some(Bump {
                value: 1,
                expire_at: Some(1_000 + HOUR)
            })
        );
    }

    /// A client's view (or one marked `KEEP`) starts `trending-keep` at
    /// trending's first view; an unmarked replicated one (hotrank 0.3.0's
    /// stream) sets the landmark only, as 0.3.0 does.
    #[test]
    fn only_a_marked_view_moves_trending_keep() {
        let mut s = BoardSettings::default();
        s.apply(&[b"TRENDING-HALF-LIFE", b"6h"]).unwrap();
        let v = ViewFacts {
            record: Some(BoardRecord::new_board(s)),
            ..facts()
        };
        let c = plan(&Formula::default(), &v).unwrap().counted.unwrap();
        assert!(c.keep_moved);
        let got = c.record.and_then(|r| r.settings).unwrap();
        assert_eq!(got.keep, Some(RET - 24 * HOUR));
        let v = ViewFacts {
            keep_moves: false,
            ..v
        };
        let c = plan(&Formula::default(), &v).unwrap().counted.unwrap();
        assert!(!c.keep_moved);
        let got = c.record.and_then(|r| r.settings).unwrap();
        assert_eq!((got.landmark.is_some(), got.keep), (true, None));
    }

    #[test]
    fn an_unpublished_article_is_published_at_its_first_counted_view() {
        let v = ViewFacts {
            published: None,
            ..facts()
        };
        let c = plan(&Formula::default(), &v).unwrap().counted.unwrap();
        assert_eq!((c.published, c.publish), (1_000, Some(1_000)));
    }

    #[test]
    fn a_new_article_gets_its_counter_with_the_retention_expiry() {
        let v = ViewFacts {
            pv: None,
            pv_ttl: None,
            ..facts()
        };
        let c = plan(&Formula::default(), &v).unwrap().counted.unwrap();
        let at = 1_000 + RET;
        assert_eq!(
            c.pv,
            Bump {
                value: 1,
                expire_at: Some(at)
            }
        );
        assert_eq!(c.expire_at, Some(at));
    }

    #[test]
    fn retention_is_refreshed_only_when_the_expiry_has_aged() {
        let slack = RET / 10;
        for (ttl, refresh) in [
            (Some(RET), false),
            (Some(RET - slack.min(86_400_000) + 1), false),
            (Some(RET - 86_400_000), true),
            (None, true),
        ] {
            let v = ViewFacts {
                pv_ttl: ttl,
                ..facts()
            };
            let c = plan(&Formula::default(), &v).unwrap().counted.unwrap();
            assert_eq!(c.expire_at.is_some(), refresh, "ttl {ttl:?}");
        }
    }

    #[test]
    fn the_visitor_limit_wins_over_dedup() {
        let v = ViewFacts {
            visitor_views: Some(60),
            duplicate: true,
            ..facts()
        };
        let p = plan(&Formula::default(), &v).unwrap();
        assert_eq!((p.outcome, p.pv, p.counted), (Outcome::Suspicious, 4, None));
        assert_eq!(
            p.visitor,
            Some(Bump {
                value: 61,
                expire_at: None
            })
        );
        let v = ViewFacts {
            visitor_views: None,
            duplicate: true,
            ..facts()
        };
        let p = plan(&Formula::default(), &v).unwrap();
        assert_eq!((p.outcome, p.visitor), (Outcome::Duplicate, None));
    }

    #[test]
    fn a_repeat_visitor_leaves_the_hll_alone_and_a_big_one_is_cached() {
        let mut h = hll::create();
        hll::add(&mut h, b"v1", 3000).unwrap();
        let v = ViewFacts {
            hll: Some(&h),
            ..facts()
        };
        let c = plan(&Formula::default(), &v).unwrap().counted.unwrap();
        assert_eq!(
            c.hll,
            HllWrite {
                value: None,
                pfadd: false,
                pfcount: false
            }
        );
        let mut big = hll::create();
        let mut i = 0u32;
        while big.len() <= hll::STALE_OK_BYTES {
            hll::add(&mut big, &i.to_le_bytes(), 3000).unwrap();
            i += 1;
        }
        let v = ViewFacts {
            hll: Some(&big),
            ..facts()
        };
        let p = plan(&Formula::default(), &v).unwrap();
        let c = p.counted.unwrap();
        assert!(c.hll.pfadd && c.hll.pfcount);
        let stored = c.hll.value.unwrap();
        assert_eq!(hll::cached_count(&stored), Some(p.uv as u64));
    }

    #[test]
    fn full_counters_bad_formulas_and_corrupt_hlls_are_refused() {
        let v = ViewFacts {
            pv: Some(i64::MAX),
            ..facts()
        };
        assert_eq!(plan(&Formula::default(), &v), Err(ViewError::Overflow));
        let v = ViewFacts {
            visitor_views: Some(i64::MAX),
            ..facts()
        };
        assert_eq!(plan(&Formula::default(), &v), Err(ViewError::Overflow));
        let f = Formula {
            base: 1e-300,
            ..Formula::default()
        };
        assert_eq!(plan(&f, &facts()), Err(ViewError::BadFormula));
        let corrupt = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80\x7f\xfe";
        for dup in [false, true] {
            let v = ViewFacts {
                hll: Some(corrupt),
                duplicate: dup,
                ..facts()
            };
            assert_eq!(
                plan(&Formula::default(), &v),
                Err(ViewError::Hll(HllError::Corrupt))
            );
        }
    }

    #[test]
    fn last_view_is_written_at_minute_grain() {
        assert!(last_view_due(None, 0));
        assert!(!last_view_due(Some(1_000), 1_000));
        assert!(!last_view_due(Some(1_000), 500));
        assert!(!last_view_due(Some(1_000), 61_000));
        assert!(last_view_due(Some(1_000), 61_001));
        assert!(!last_view_due(Some(i64::MAX), i64::MIN));
        assert!(last_view_due(Some(i64::MIN), i64::MAX));
    }

    #[test]
    fn setup_names_the_pairs_shard_and_the_visitors_window() {
        let s = BoardSettings::default();
        let rec = BoardRecord::new_board(s).text();
        let got = setup(Some(&rec), || unreachable!(), b"a", b"v", 7_200_000).unwrap();
        assert!(got.stored && !got.new_settings && got.formula.is_valid());
        assert_eq!(got.fp, dedup::fingerprint(b"a", b"v"));
        let shard = dedup::shard(got.fp, s.dedup_shards() as u32);
        assert_eq!(got.dedup_shard, i64::from(shard));
        assert_eq!(got.dedup_window_s() * 1000, s.dedup_ms());
        assert_eq!(got.visitor_index, 7_200_000 / s.visitor_window_ms());
        let new = setup(None, || s, b"a", b"v", 0).unwrap();
        assert!(!new.stored && new.new_settings);
        // A record from before settings gets the configs' of this moment.
        let mut other = s;
        other.id = 7;
        let old = BoardRecord {
            settings: None,
            ..BoardRecord::new_board(s)
        };
        let got = setup(Some(&old.text()), || other, b"a", b"v", 0).unwrap();
        assert!(got.stored && got.new_settings);
        assert_eq!((got.id, got.record.settings), (7, Some(other)));
        assert_eq!(setup(Some(b"not a record"), || s, b"a", b"v", 0), Err(()));
    }

    proptest! {
        /// A counted view adds exactly one PV; the other outcomes add none
        /// and write nothing but the visitor counter.
        #[test]
        fn only_a_counted_view_moves_the_pv(pv in 0i64..1_000_000, n in 0i64..100, dup: bool, max in 0i64..100) {
            let v = ViewFacts { pv: Some(pv), visitor_views: Some(n), visitor_max: max, duplicate: dup, ..facts() };
            let p = plan(&Formula::default(), &v).unwrap();
            prop_assert_eq!(p.visitor.map(|b| b.value), Some(n + 1));
            match p.outcome {
                Outcome::Counted => prop_assert!(p.pv == pv + 1 && !dup && n < max && p.counted.is_some()),
                Outcome::Duplicate => prop_assert!(dup && n < max && p.pv == pv && p.counted.is_none()),
                Outcome::Suspicious => prop_assert!(n >= max && p.pv == pv && p.counted.is_none()),
            }
        }

        /// The reply's UV is the server's count of the stored bytes after the view.
        #[test]
        fn the_uv_is_the_count_of_what_is_stored(ids in proptest::collection::vec(0u32..5000, 1..300)) {
            let mut stored: Option<Vec<u8>> = None;
            for id in ids {
                let key = id.to_le_bytes();
                let v = ViewFacts { visitor: &key, hll: stored.as_deref(), ..facts() };
                let p = plan(&Formula::default(), &v).unwrap();
                if let Some(bytes) = p.counted.unwrap().hll.value {
                    stored = Some(bytes);
                }
                let mut copy = stored.clone().unwrap();
                prop_assert_eq!(hll::count(&mut copy).unwrap().0 as i64, p.uv);
            }
        }
    }
}
