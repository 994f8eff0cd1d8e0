//! The glue of a HOT board's trending ranking ([`crate::hot::trending`]):
//! its ZSET (derived key [`Kind::Trending`], article → stored sum), the
//! step a counted view applies to it, and the reads of HOT.TOP BY
//! trending, HOT.STATS, HOT.INFO and HOT.EXPORT. The landmark and
//! half-life live in the board record's settings.

use super::published_at;
use super::zread::ALL;
use super::{BoardCtx, Fail, Res};
use crate::ffi::{self, KeyKind};
use crate::hot::settings::BoardSettings;
use crate::hot::trending::{self, Step};
use crate::hot::{hot_order, in_window};
use crate::keys::Kind;
use crate::parse::ScoreText;
use redis_module::RedisString;

/// The error of `HOT.TOP … BY trending` on a board without trending.
pub(super) fn no_trending() -> Fail {
    Fail::Msg(
        "ERR board has no trending ranking (HOT.ALTER key TRENDING-HALF-LIFE 6h adds one)".into(),
    )
}

/// The trending ZSET's name (ACL-checked for writing when `write`) and a
/// handle, type-checked (a ZSET or missing).
pub(super) fn open(b: &BoardCtx, write: bool) -> Res<(RedisString, ffi::Key)> {
    b.open_derived(Kind::Trending, &[], KeyKind::ZSet, write)
}

/// [`open`] where the board may keep no trending ranking (`kept` false):
/// a missing trending ZSET then says nothing about a slot move, so it gets
/// no `TRYAGAIN` (HOT.ALTER, HOT.REM, HOT.DROP and HOT.INFO run on a board
/// without trending while its slot migrates, as before trending existed).
pub(super) fn open_maybe(b: &BoardCtx, write: bool, kept: bool) -> Res<(RedisString, ffi::Key)> {
    if kept {
        return open(b, write);
    }
    let name = b.derived(Kind::Trending, &[], write)?;
    let h = b.open_here(&name, KeyKind::ZSet, write)?;
    Ok((name, h))
}

/// Applies a counted view's [`Step`] to the trending ZSET `name` (open for
/// writing as `h`): a landmark set for the first time starts the ranking
/// empty (what a board of an earlier life left is deleted), a landmark move
/// rescales every stored sum by `2^−shift`, then the view's weight is added
/// to the article's sum. Each change replicates as its exact `ZADD` (`DEL`).
pub(super) fn apply_step(
    b: &BoardCtx,
    name: &RedisString,
    h: &mut ffi::Key,
    article: &RedisString,
    step: &Step,
    first: bool,
) -> Res<()> {
    if first && h.kind() != KeyKind::Empty {
        b.delete_open(&mut [(name, h)], false);
    }
    if step.shift > 0 {
        rescale_all(b, name, h, step.shift)?;
    }
    // One ZINCRBY-like update; in `effects` mode its exact result
    // replicates as ZADD (its text built only then).
    let s = h.zset_incrby(step.weight, article)?;
    super::zadd_score_effect(b.ctx, name, s, article);
    Ok(())
}

/// Multiplies every stored sum by `2^−k` (exact, see
/// [`trending::rescale`]), replicated as `ZADD name s m …` of up to 256
/// members each.
fn rescale_all(b: &BoardCtx, name: &RedisString, h: &mut ffi::Key, k: i64) -> Res<()> {
    let members: Vec<(RedisString, f64)> = match b.walk(name, ALL.0, ALL.1, false) {
        Some(w) => w.collect(),
        None => return Ok(()),
    };
    for batch in members.chunks(256) {
        let texts: Vec<ScoreText> = batch
            .iter()
            .map(|(_, s)| ScoreText::new(trending::rescale(*s, k)))
            .collect();
        let mut args: Vec<&[u8]> = Vec::with_capacity(2 * batch.len());
        for ((m, s), t) in batch.iter().zip(&texts) {
            h.zset_add(trending::rescale(*s, k), m)?;
            args.extend([t.as_bytes(), m.as_slice()]);
        }
        if !super::replicating_commands() {
            ffi::replicate(b.ctx, c"ZADD", name, &args);
        }
        ffi::notify(b.ctx, ffi::Event::ZSet, c"zadd", name);
        ffi::signal_modified(b.ctx, name);
    }
    Ok(())
}

/// An article's trending score at `q` (unix ms) on a board with settings
/// `s` (which keeps trending): 0 without a counted view since trending
/// started.
pub(super) fn score_of(b: &BoardCtx, s: &BoardSettings, article: &[u8], q: i64) -> Res<f64> {
    let Some(l) = s.landmark else {
        return Ok(0.0);
    };
    let (_, h) = open(b, false)?;
    let m = RedisString::create_from_slice(std::ptr::null_mut(), article);
    Ok(h.zset_score(&m).map_or(0.0, |stored| {
        trending::score_at(stored, q, l, s.trending_ms)
    }))
}

/// Articles (the walk's own strings, not copied) with their scores, best
/// first, and the number examined.
pub(super) type Ranked = (Vec<(RedisString, f64)>, u64);

/// The top `n` articles by trending score at `q` (unix ms; `at_clock`: the
/// server clock), ties by article id ascending, among those published in
/// `[q − w, q]` with a `window` `w` (ms). A walk of the ZSET from its
/// highest sum: the scores at `q` follow the sums' order
/// ([`trending::Decay::score`] is monotone), so a member whose sum is at
/// least the n-th kept one's is kept without scoring it,
/// and the walk stops at the first member scoring below the n-th (equal
/// scores are all read, so their order is the ids'). The decay factor is
/// split once per query; each kept member's score is the bits
/// [`trending::score_at`] gives.
pub(super) fn top(
    b: &BoardCtx,
    s: &BoardSettings,
    q: i64,
    at_clock: bool,
    n: usize,
    window: Option<i64>,
) -> Res<Ranked> {
    let Some(l) = s.landmark else {
        return Ok((Vec::new(), 0));
    };
    let decay = trending::Decay::new(q, l, s.trending_ms);
    let mut live = Live::new(s, l, at_clock.then_some(decay));
    let (_, h) = open(b, false)?;
    let Some(walk) = ffi::ZsetWalk::over(h, ALL.0, ALL.1, true) else {
        return Ok((Vec::new(), 0));
    };
    // (member, stored sum, then its score), in walk order: sums descending.
    let mut got: Vec<(RedisString, f64)> = Vec::with_capacity(n.min(1024) + 1);
    // The n-th kept member's sum and score, once n are kept.
    let mut nth: Option<(f64, f64)> = None;
    let (mut examined, mut checks) = (0u64, 0u64);
    for (m, stored) in walk {
        if let Some((nth_sum, nth_score)) = nth {
            if stored < nth_sum && decay.score(stored) < nth_score {
                break;
            }
        }
        examined += 1;
        if let Some(w) = window {
            let (_, meta) = b.open_derived(Kind::Meta, &[m.as_slice()], KeyKind::Hash, false)?;
            let p = published_at(&meta)?.unwrap_or(i64::MIN / 2);
            if !in_window(p, q, Some(w)) {
                continue;
            }
        }
        // An article whose counters retention expired is not listed, as
        // BY hot does not list it: its sum stays until upkeep sweeps it.
        // Its PV counter is looked up only where its score at the server
        // clock does not prove the counters live ([`Live`]).
        if !live.proves(stored) {
            checks += 1;
            let (_, pv) = b.open_derived(Kind::Pv, &[m.as_slice()], KeyKind::String, false)?;
            if pv.kind() == KeyKind::Empty {
                continue;
            }
        }
        got.push((m, stored));
        if nth.is_none() && got.len() == n {
            nth = Some((stored, decay.score(stored)));
        }
    }
    crate::stats::add(&crate::stats::TOP_TRENDING_CHECKS, checks);
    for kept in got.iter_mut() {
        kept.1 = decay.score(kept.1);
    }
    // The walk's order is by score, descending (Decay::score is monotone):
    // only runs of equal scores need sorting, by id ascending.
    let mut start = 0;
    while start < got.len() {
        let score = got[start].1;
        let end = start
            + got[start..]
                .iter()
                .take_while(|x| x.1 == score)
                .count()
                .max(1);
        if end - start > 1 {
            got[start..end].sort_by(|x, y| hot_order((x.0.as_slice(), x.1), (y.0.as_slice(), y.1)));
        }
        start = end;
    }
    got.truncate(n);
    Ok((got, examined))
}

/// Which articles of HOT.TOP BY trending's walk provably still have their
/// counters, so their PV counter need not be opened: those whose trending
/// score at the server clock is above [`trending::expired_ceiling`] of the
/// board's `keep` (every counted view was at least `keep` ms before its
/// counters can expire). Nothing is proved on a board whose record does
/// not keep `keep`, nor where the server's `maxmemory-policy` may evict
/// counters early. The walk goes by stored sum, descending, so once one
/// member is not proved none after it is.
enum Live {
    /// Each member's score at the clock is compared with the ceiling.
    Above(trending::Decay, f64),
    /// Every member is checked.
    Unproved,
}

impl Live {
    /// For a board of settings `s` and landmark `l` (ms), at this server's
    /// clock (by which its keys expire); `at_clock`: the query's decay when
    /// the query is at the clock (the same, read once).
    fn new(s: &BoardSettings, l: i64, at_clock: Option<trending::Decay>) -> Live {
        let Some(keep) = s.keep.filter(|_| !crate::eviction::may_evict()) else {
            return Live::Unproved;
        };
        let ceiling = trending::expired_ceiling(keep, s.trending_ms);
        if ceiling.is_infinite() {
            return Live::Unproved;
        }
        let now = at_clock.unwrap_or_else(|| trending::Decay::new(ffi::now_ms(), l, s.trending_ms));
        Live::Above(now, ceiling)
    }

    /// Whether the member of stored sum `stored` provably has its counters
    /// (the first `false` makes every later answer `false`).
    fn proves(&mut self, stored: f64) -> bool {
        if let Live::Above(now, ceiling) = self {
            if now.score(stored) > *ceiling {
                return true;
            }
            *self = Live::Unproved;
        }
        false
    }
}

/// Trims the trending ZSET to the board's `MAX-ARTICLES` highest sums once
/// it holds [`crate::hot::trim_slack`] more (the lowest go, ties by the
/// ZSET's order), as HOT.VIEW's upkeep trims the board; each batch of 256
/// replicates as one `ZREM`. Counters stay.
pub(super) fn trim(b: &BoardCtx, s: &BoardSettings) -> Res<u64> {
    let max = s.max_articles();
    if !s.trending() || max <= 0 {
        return Ok(0);
    }
    let (name, mut h) = open(b, true)?;
    let len = h.len() as i64;
    if len <= max + crate::hot::trim_slack(max) {
        return Ok(0);
    }
    drop(h);
    let gone: Vec<Vec<u8>> = b
        .zrange(&name, 0, len - max - 1)?
        .into_iter()
        .map(|(m, _)| m.as_slice().to_vec())
        .collect();
    h = b.open(&name, KeyKind::ZSet, true)?;
    for batch in gone.chunks(256) {
        let members: Vec<&[u8]> = batch.iter().map(|m| m.as_slice()).collect();
        b.zrem(&name, &mut h, &members);
    }
    Ok(gone.len() as u64)
}
