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
//!
//! **Deep reads.** A walk is linear, so past [`WALK_BUDGET`] members (a
//! count, a rank, or the start of a range by index that is more than that
//! far from both ends) the read is handed to the server's own ZCOUNT or
//! ZRANGE through `RedisModule_Call`, which is O(log n): a rank deep in a
//! board of 1,000,000 members took 37 ms as a walk. Those reads, and only
//! those, show up in `INFO commandstats` as `zcount` / `zrange`. The
//! answer is the same either way.

use super::{BoardCtx, Res};
use crate::ffi::{self, Bound, KeyKind, ZsetWalk};
use redis_module::{CallOptionsBuilder, CallReply, CallResult, RedisString};

/// Members a count or a position may walk through the key API before the
/// read goes to the server's own O(log n) ZCOUNT / ZRANGE instead (see the
/// module docs). A walk of 1,000 members costs about 63,000 instructions,
/// the call about 15,000 to 25,000.
pub const WALK_BUDGET: usize = 1000;

/// A score bound as ZCOUNT takes it: `(s` when excluded; shortest text
/// that parses back to the same f64 (`inf`, `-inf` for the infinities).
fn bound_text(b: Bound) -> String {
    let v = if b.score.is_infinite() {
        if b.score > 0.0 {
            "+inf".to_string()
        } else {
            "-inf".to_string()
        }
    } else {
        format!("{:?}", b.score)
    };
    if b.excluded {
        format!("({v}")
    } else {
        v
    }
}

/// Members with their scores, in the ZSET's order.
pub type Members = Vec<(RedisString, f64)>;

/// The whole score range.
pub const ALL: (Bound, Bound) = (
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

    /// `ZCOUNT name min max`: members with a score between the bounds; a
    /// walk up to [`WALK_BUDGET`] members, the server's ZCOUNT past it.
    pub fn zcount(&self, name: &RedisString, min: Bound, max: Bound) -> usize {
        let Some(mut w) = self.walk(name, min, max, false) else {
            return 0;
        };
        let walked = w.pass(WALK_BUDGET + 1);
        if walked <= WALK_BUDGET {
            return walked;
        }
        let (lo, hi) = (bound_text(min), bound_text(max));
        match self.deep_read("ZCOUNT", &[name.as_slice(), lo.as_bytes(), hi.as_bytes()]) {
            Some(CallReply::I64(v)) => usize::try_from(v.to_i64()).unwrap_or(0),
            _ => walked + w.remaining(),
        }
    }

    /// A read the key API would do in linear time, by the server's own
    /// command (see the module docs): its reply, `None` on an error reply.
    fn deep_read(&self, cmd: &str, args: &[&[u8]]) -> Option<CallReply<'static>> {
        let opts = CallOptionsBuilder::new().errors_as_replies().build();
        let res: CallResult<'static> = self.ctx.call_ext(cmd, &opts, args);
        res.ok()
    }

    /// `ZRANGE name first last WITHSCORES` by the server's command (0 ≤
    /// first ≤ last < card); `None` if the reply is not that shape.
    fn deep_range(&self, name: &RedisString, first: i64, last: i64) -> Option<Members> {
        let (f, l) = (first.to_string(), last.to_string());
        let args: [&[u8]; 4] = [name.as_slice(), f.as_bytes(), l.as_bytes(), b"WITHSCORES"];
        let CallReply::Array(a) = self.deep_read("ZRANGE", &args)? else {
            return None;
        };
        let mut flat = Vec::with_capacity(a.len());
        for e in a.iter() {
            match e.ok()? {
                CallReply::String(s) => flat.push(s.as_bytes().to_vec()),
                _ => return None,
            }
        }
        let mut out = Vec::with_capacity(flat.len() / 2);
        for pair in flat.chunks(2) {
            let [m, score] = pair else { return None };
            let score: f64 = std::str::from_utf8(score).ok()?.parse().ok()?;
            // No context: freed on drop, not by automatic memory.
            out.push((
                RedisString::create_from_slice(std::ptr::null_mut(), m),
                score,
            ));
        }
        Some(out)
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
        if skip as usize > WALK_BUDGET {
            if let Some(out) = self.deep_range(name, first, last) {
                return Ok(out);
            }
        }
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
