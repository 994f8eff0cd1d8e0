//! ZSET reads of the board's keys through the key API ([`ffi::ZsetWalk`],
//! `ZsetScore`, `ValueLength`) instead of `RedisModule_Call`: the same
//! answers as ZRANK, ZCOUNT, ZRANGE and ZRANGEBYSCORE, without the internal
//! command showing up in SLOWLOG or `INFO commandstats`, and without the
//! argument objects, fake client and RESP reply of a call.
//!
//! Costs: a count or a rank walks the members it counts (one skiplist hop
//! each, no member fetched), where the server's own ZCOUNT and ZRANK use the
//! skiplist's spans (O(log n)). A range by index walks from the nearer end.
//! Leaderboard reads are mostly near the top, where the walk is short.

use super::{BoardCtx, Res};
use crate::ffi::{self, Bound, KeyKind, ZsetWalk};
use redis_module::RedisString;

/// Members with their scores, in the ZSET's order.
pub type Members = Vec<(RedisString, f64)>;

/// The whole score range.
const ALL: (Bound, Bound) = (
    Bound {
        score: f64::NEG_INFINITY,
        excluded: false,
    },
    Bound {
        score: f64::INFINITY,
        excluded: false,
    },
);

impl BoardCtx<'_> {
    /// A walk over the ZSET `name` (the board key or a name from
    /// [`BoardCtx::derived`]) between `min` and `max`, lowest first or
    /// (`rev`) highest first; `None` when it is missing or not a ZSET.
    pub fn walk(&self, name: &RedisString, min: Bound, max: Bound, rev: bool) -> Option<ZsetWalk> {
        ffi::ZsetWalk::open(self.ctx, name, min, max, rev)
    }

    /// `ZCOUNT name min max`: members with a score between the bounds.
    pub fn zcount(&self, name: &RedisString, min: Bound, max: Bound) -> usize {
        self.walk(name, min, max, false)
            .map_or(0, ZsetWalk::remaining)
    }

    /// `ZCARD name` (0 when missing). Error: WRONGTYPE unless a ZSET.
    pub fn zcard(&self, name: &RedisString) -> Res<usize> {
        Ok(self.open(name, KeyKind::ZSet, false)?.len())
    }

    /// `ZRANK name member`: the 0-based position of `member` in the ZSET's
    /// order (score, then member bytes); `None` when absent. Error:
    /// WRONGTYPE unless a ZSET.
    pub fn zrank(&self, name: &RedisString, member: &RedisString) -> Res<Option<usize>> {
        let Some(s) = self.open(name, KeyKind::ZSet, false)?.zset_score(member) else {
            return Ok(None);
        };
        let below = self.zcount(name, ALL.0, Bound::excl(s));
        // Members of the same score come in byte order (the server's
        // sdscmp: memcmp, then the shorter first, as slices compare).
        let mut ties = 0;
        if let Some(w) = self.walk(name, Bound::incl(s), Bound::incl(s), false) {
            for (m, _) in w {
                if m.as_slice() >= member.as_slice() {
                    break;
                }
                ties += 1;
            }
        }
        Ok(Some(below + ties))
    }

    /// The members around `member` in the ZSET's order: its rank `r` and
    /// the members of ranks `r - n ..= r + n` (clamped at the ends) with
    /// their scores, as ZRANK then `ZRANGE name r-n r+n WITHSCORES` give
    /// them; `None` when `member` is absent. The rank costs a walk of the
    /// members before it (see [`BoardCtx::zrank`]); the neighbours are read
    /// from the member's score outwards, so they cost O(n) more, not a
    /// second walk from the end. Error: WRONGTYPE unless a ZSET.
    pub fn zaround(
        &self,
        name: &RedisString,
        member: &RedisString,
        n: usize,
    ) -> Res<Option<(usize, Members)>> {
        let Some(s) = self.open(name, KeyKind::ZSet, false)?.zset_score(member) else {
            return Ok(None);
        };
        let below = self.zcount(name, ALL.0, Bound::excl(s));
        // The members of the same score (byte order): those before the
        // member all count for its rank; of those after it, n are enough.
        let (mut tied_before, mut me, mut tied_after) = (Vec::new(), None, Vec::new());
        if let Some(w) = self.walk(name, Bound::incl(s), Bound::incl(s), false) {
            for (m, score) in w {
                match m.as_slice().cmp(member.as_slice()) {
                    std::cmp::Ordering::Less => tied_before.push((m, score)),
                    std::cmp::Ordering::Equal => me = Some((m, score)),
                    std::cmp::Ordering::Greater if tied_after.len() < n => {
                        tied_after.push((m, score))
                    }
                    std::cmp::Ordering::Greater => break,
                }
            }
        }
        let Some(me) = me else {
            return Ok(None);
        };
        let rank = below + tied_before.len();
        // Before it: the last n ties, then lower scores from the highest down.
        let mut before: Vec<(RedisString, f64)> = Vec::with_capacity(n);
        let from_ties = tied_before.len().min(n);
        before.extend(tied_before.drain(tied_before.len() - from_ties..).rev());
        if before.len() < n {
            if let Some(w) = self.walk(name, ALL.0, Bound::excl(s), true) {
                before.extend(w.take(n - before.len()));
            }
        }
        before.reverse();
        let before_len = before.len();
        let mut out = before;
        out.push(me);
        out.extend(tied_after);
        let have_after = out.len() - before_len - 1;
        if have_after < n {
            if let Some(w) = self.walk(name, Bound::excl(s), ALL.1, false) {
                out.extend(w.take(n - have_after));
            }
        }
        Ok(Some((rank, out)))
    }

    /// `ZRANGE name start stop WITHSCORES` (indexes as ZRANGE takes them:
    /// negative from the end, clamped), walking from the nearer end.
    /// Error: WRONGTYPE unless a ZSET.
    pub fn zrange(
        &self,
        name: &RedisString,
        start: i64,
        stop: i64,
    ) -> Res<Vec<(RedisString, f64)>> {
        let n = self.zcard(name)? as i64;
        let Some((first, last)) = index_range(n, start, stop) else {
            return Ok(Vec::new());
        };
        let take = (last - first + 1) as usize;
        let from_end = n - 1 - last;
        let (rev, skip) = if first <= from_end {
            (false, first)
        } else {
            (true, from_end)
        };
        let Some(mut w) = self.walk(name, ALL.0, ALL.1, rev) else {
            return Ok(Vec::new());
        };
        w.pass(skip as usize);
        let mut out: Vec<(RedisString, f64)> = w.take(take).collect();
        if rev {
            out.reverse();
        }
        Ok(out)
    }

    /// `ZRANGEBYSCORE name min max WITHSCORES [LIMIT offset count]`
    /// (`count` < 0: all the rest), lowest first.
    pub fn zrange_by_score(
        &self,
        name: &RedisString,
        min: Bound,
        max: Bound,
        limit: Option<(usize, i64)>,
    ) -> Vec<(RedisString, f64)> {
        let Some(mut w) = self.walk(name, min, max, false) else {
            return Vec::new();
        };
        match limit {
            None => w.collect(),
            Some((offset, count)) => {
                w.pass(offset);
                let take = usize::try_from(count).unwrap_or(usize::MAX);
                w.take(take).collect()
            }
        }
    }

    /// Every member of the ZSET `name`, lowest score first (`ZRANGE name 0
    /// -1`), as bytes.
    pub fn zmembers(&self, name: &RedisString) -> Vec<Vec<u8>> {
        self.walk(name, ALL.0, ALL.1, false)
            .map(|w| w.map(|(m, _)| m.as_slice().to_vec()).collect())
            .unwrap_or_default()
    }
}

/// ZRANGE's index rule on a ZSET of `n` members: negative indexes count
/// from the end, `start` is clamped at 0 and `stop` at `n - 1`; `None` when
/// the range is empty. Returns the first and last 0-based index.
pub fn index_range(n: i64, start: i64, stop: i64) -> Option<(i64, i64)> {
    let first = if start < 0 {
        start.saturating_add(n)
    } else {
        start
    }
    .max(0);
    let last = if stop < 0 {
        stop.saturating_add(n)
    } else {
        stop
    };
    if n == 0 || first > last || first >= n {
        return None;
    }
    Some((first, last.min(n - 1)))
}

#[cfg(test)]
mod tests {
    use super::index_range;

    #[test]
    fn index_range_follows_zrange() {
        assert_eq!(index_range(0, 0, -1), None);
        assert_eq!(index_range(5, 0, -1), Some((0, 4)));
        assert_eq!(index_range(5, -2, -1), Some((3, 4)));
        assert_eq!(index_range(5, -100, 1), Some((0, 1)));
        assert_eq!(index_range(5, 2, 100), Some((2, 4)));
        assert_eq!(index_range(5, 5, 10), None);
        assert_eq!(index_range(5, 3, 2), None);
        assert_eq!(index_range(5, 0, -6), None);
        assert_eq!(index_range(5, i64::MIN, i64::MAX), Some((0, 4)));
        assert_eq!(index_range(5, i64::MAX, i64::MAX), None);
    }
}
