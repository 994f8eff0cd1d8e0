//! RANK.COUNT's core: which packed ZSET scores rank ahead of a position
//! `(score, time, member)` on a board. Pure Rust, no Redis.
//!
//! The members of a board are in ZSET order: packed score ascending (best
//! first, see [`super::Layout`]), then member bytes ascending. A position
//! given by a score alone stands for the best place a member with that
//! score could hold (reached at the layout's first instant), so the members
//! ahead of it are those with a strictly better score: the competition
//! rank. With a time, the members ahead are those with a better score, or
//! the same score reached earlier (in the layout's resolution); with a
//! member too, those with the same packed score and smaller member bytes
//! are added ([`Ahead::Below`]'s `ties`). Summed over the shards of a
//! board, it is the exact rank of that position in the union.

use super::{Layout, EPOCH_MS};

/// The members ranked ahead of a position, as a range of packed scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ahead {
    /// No member: the score is better than the best end of the layout.
    Nobody,
    /// Every member: the score is worse than the worst end of the layout.
    Everyone,
    /// The members whose packed score is below `packed` (ZCOUNT `-inf
    /// (packed`); with `ties`, also those with exactly `packed` whose member
    /// bytes sort before the given member.
    Below { packed: f64, ties: bool },
    /// The members whose packed score is at most `packed` (a time past the
    /// layout's end: every member with the same score is ahead).
    UpTo { packed: f64 },
}

/// Where the members ahead of `(score, time_ms)` end on a board of layout
/// `l`; `time_ms` None: ahead means a strictly better score. `member`
/// says whether a member name breaks ties of equal packed scores (only
/// meaningful with a time inside the layout's range).
pub fn ahead(l: &Layout, score: i64, time_ms: Option<i64>, member: bool) -> Ahead {
    // A score past the best end beats everyone; past the worst end, no one.
    let (best, worst) = match l.order {
        super::Order::Desc => (l.max, l.min),
        super::Order::Asc => (l.min, l.max),
    };
    if l.order.better(score, best) {
        return Ahead::Nobody;
    }
    if l.order.better(worst, score) {
        return Ahead::Everyone;
    }
    let last = l.last_time_ms();
    let (t, ties) = match time_ms {
        None => (EPOCH_MS, false),
        Some(t) if t < EPOCH_MS => (EPOCH_MS, false),
        Some(t) if t > last => {
            // Reached after every storable time: all of its score are ahead.
            return match l.encode(score, last) {
                Ok(packed) => Ahead::UpTo { packed },
                Err(_) => Ahead::Everyone,
            };
        }
        Some(t) => (t, member),
    };
    match l.encode(score, t) {
        Ok(packed) => Ahead::Below { packed, ties },
        // Unreachable: score and time were checked against the layout.
        Err(_) => Ahead::Nobody,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::{Order, Resolution};
    use proptest::prelude::*;

    fn layout(order: Order) -> Layout {
        Layout::new(Resolution::Millis, -1000, 1000)
            .unwrap()
            .with_order(order)
    }

    /// The brute-force count: members (score, time, name) ordered before
    /// the position in the board's order.
    fn brute(
        l: &Layout,
        members: &[(i64, i64, u8)],
        s: i64,
        t: Option<i64>,
        m: Option<u8>,
    ) -> usize {
        members
            .iter()
            .filter(|&&(ms, mt, mn)| {
                if l.order.better(ms, s) {
                    return true;
                }
                if ms != s {
                    return false;
                }
                match t {
                    None => false,
                    Some(t) => mt < t || (mt == t && m.is_some_and(|m| mn < m)),
                }
            })
            .count()
    }

    fn count(l: &Layout, members: &[(i64, i64, u8)], a: Ahead, m: Option<u8>) -> usize {
        let packed: Vec<(f64, u8)> = members
            .iter()
            .map(|&(s, t, n)| (l.encode(s, t).unwrap(), n))
            .collect();
        match a {
            Ahead::Nobody => 0,
            Ahead::Everyone => packed.len(),
            Ahead::UpTo { packed: p } => packed.iter().filter(|(v, _)| *v <= p).count(),
            Ahead::Below { packed: p, ties } => packed
                .iter()
                .filter(|&&(v, n)| v < p || (ties && v == p && m.is_some_and(|m| n < m)))
                .count(),
        }
    }

    #[test]
    fn ends_of_the_layout() {
        let l = layout(Order::Desc);
        assert_eq!(ahead(&l, 1001, None, false), Ahead::Nobody);
        assert_eq!(ahead(&l, -1001, None, false), Ahead::Everyone);
        let a = layout(Order::Asc);
        assert_eq!(ahead(&a, -1001, None, false), Ahead::Nobody);
        assert_eq!(ahead(&a, 1001, None, false), Ahead::Everyone);
        assert!(matches!(
            ahead(&l, 5, Some(EPOCH_MS - 1), true),
            Ahead::Below { ties: false, .. }
        ));
        assert!(matches!(
            ahead(&l, 5, Some(i64::MAX), true),
            Ahead::UpTo { .. }
        ));
    }

    proptest! {
        #[test]
        fn counts_equal_brute_force(
            asc in any::<bool>(),
            members in prop::collection::vec((-5i64..5, 0i64..4, 0u8..4), 0..40),
            s in -7i64..7,
            t in prop::option::of(-1i64..5),
            m in prop::option::of(0u8..5),
        ) {
            let l = layout(if asc { Order::Asc } else { Order::Desc });
            let members: Vec<(i64, i64, u8)> =
                members.into_iter().map(|(s, t, n)| (s, EPOCH_MS + t, n)).collect();
            let t = t.map(|t| EPOCH_MS + t);
            let m = if t.is_some() { m } else { None };
            let a = ahead(&l, s, t, m.is_some());
            // A time before the epoch is the epoch with no tie-break by name.
            let (bt, bm) = match t {
                Some(x) if x < EPOCH_MS => (Some(EPOCH_MS), None),
                _ => (t, m),
            };
            prop_assert_eq!(count(&l, &members, a, m), brute(&l, &members, s, bt.or(None), bm));
        }
    }
}
