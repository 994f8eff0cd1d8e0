//! Reference models shared by the HOT integration tests (tests/hot*.rs and
//! tests/hot_scale*.rs), included with `#[path = "common/models.rs"] mod models;`
//! next to `hot_client` (the including crate must have `mod hot_client;` at its root).
#![allow(dead_code)]

use crate::hot_client::{hot, murmur64a, ts, view_many, ViewReply, HLL_M, HLL_P, HLL_Q};
use redis::Connection;
use std::collections::{BTreeMap, HashMap, HashSet};

// ---------------------------------------------------------------------------
// A model of Redis's HyperLogLog (PFADD/PFCOUNT), so reference UVs equal the
// server's exactly: MurmurHash64A with seed 0xadc83b19, 2^14 registers, and
// Ertl's estimator as in hyperloglog.c (`hllCount`).
// ---------------------------------------------------------------------------

/// Registers kept sparsely (index → value, only the non-zero ones), with the
/// histogram of their values kept up to date: boards hold thousands of
/// articles with a few visitors each, and every counted view asks the count.
#[derive(Clone)]
pub struct Hll {
    regs: HashMap<usize, u8>,
    /// How many registers hold each value; `histo[0]` is unused (the zero
    /// registers are `HLL_M - regs.len()`).
    histo: [u32; 64],
}

impl Default for Hll {
    fn default() -> Hll {
        Hll {
            regs: HashMap::new(),
            histo: [0; 64],
        }
    }
}

impl Hll {
    pub fn new() -> Hll {
        Hll::default()
    }

    pub fn add(&mut self, ele: &[u8]) {
        let h = murmur64a(ele, 0xadc8_3b19);
        let idx = (h & (HLL_M as u64 - 1)) as usize;
        let rest = (h >> HLL_P) | (1u64 << HLL_Q);
        let count = (rest.trailing_zeros() + 1) as u8;
        let old = self.regs.get(&idx).copied().unwrap_or(0);
        if count > old {
            if old > 0 {
                self.histo[old as usize] -= 1;
            }
            self.histo[count as usize] += 1;
            self.regs.insert(idx, count);
        }
    }

    pub fn count(&self) -> i64 {
        fn sigma(mut x: f64) -> f64 {
            if x == 1.0 {
                return f64::INFINITY;
            }
            let (mut y, mut z) = (1.0, x);
            loop {
                x *= x;
                let zp = z;
                z += x * y;
                y += y;
                if zp == z {
                    return z;
                }
            }
        }
        fn tau(mut x: f64) -> f64 {
            if x == 0.0 || x == 1.0 {
                return 0.0;
            }
            let (mut y, mut z) = (1.0, 1.0 - x);
            loop {
                x = x.sqrt();
                let zp = z;
                y *= 0.5;
                z -= (1.0 - x).powf(2.0) * y;
                if zp == z {
                    return z / 3.0;
                }
            }
        }
        let mut histo = self.histo;
        histo[0] = (HLL_M - self.regs.len()) as u32;
        let m = HLL_M as f64;
        let mut z = m * tau((m - histo[HLL_Q + 1] as f64) / m);
        for j in (1..=HLL_Q).rev() {
            z += histo[j] as f64;
            z *= 0.5;
        }
        z += m * sigma(histo[0] as f64 / m);
        (0.721_347_520_444_481_7 * m * m / z).round() as i64
    }
}

// ---------------------------------------------------------------------------
// A model of one board: counted views per (article, visitor), PV, UV and the
// publish time of each article.
// ---------------------------------------------------------------------------

#[derive(Clone, Default)]
pub struct ModelArticle {
    pub pv: i64,
    pub uv: i64,
    pub hll: Hll,
    /// The exact set of visitors with a counted view.
    pub visitors: HashSet<Vec<u8>>,
    pub published: Option<i64>,
}

impl ModelArticle {
    pub fn new() -> ModelArticle {
        ModelArticle::default()
    }
}

#[derive(Default)]
pub struct Model {
    pub arts: BTreeMap<Vec<u8>, ModelArticle>,
    /// Last counted view time per (article, visitor).
    pub seen: HashMap<(Vec<u8>, Vec<u8>), i64>,
    pub last_view: i64,
}

impl Model {
    /// Applies a view (no visitor limit) and returns the reply the server must give.
    pub fn view(&mut self, article: &[u8], visitor: &[u8], t: i64, dedup_ms: i64) -> ViewReply {
        self.last_view = self.last_view.max(t);
        let key = (article.to_vec(), visitor.to_vec());
        let dup = self
            .seen
            .get(&key)
            .is_some_and(|&last| (0..dedup_ms).contains(&(t - last)));
        let a = self.arts.entry(article.to_vec()).or_default();
        if !dup {
            a.pv += 1;
            a.hll.add(visitor);
            a.uv = a.hll.count();
            a.visitors.insert(visitor.to_vec());
            a.published.get_or_insert(t);
            if dedup_ms > 0 {
                self.seen.insert(key, t);
            }
        }
        ViewReply {
            pv: a.pv,
            uv: a.uv,
            score: hot(a.pv, a.uv, a.published.unwrap_or(t), t),
            status: if dup { "duplicate" } else { "counted" }.into(),
        }
    }

    /// Applies a publish and returns the server's reply (1 new, 0 updated).
    pub fn publish(&mut self, article: &[u8], t: i64) -> i64 {
        let a = self.arts.entry(article.to_vec()).or_default();
        let new = a.published.is_none();
        a.published = Some(t);
        i64::from(new)
    }

    /// Viewed articles published in `[at - w, at]` (all viewed ones without a window).
    pub fn in_window(&self, at: i64, window: Option<i64>) -> usize {
        self.arts
            .values()
            .filter(|a| a.pv > 0)
            .filter(|a| window.is_none_or(|w| (at - w..=at).contains(&a.published.unwrap())))
            .count()
    }

    /// The brute-force hot list at `at`: every article on the board (one
    /// with at least one view), scored at `at`, filtered by the window,
    /// sorted by score descending then id ascending, cut at `limit`.
    pub fn top(&self, at: i64, window: Option<i64>, limit: usize) -> Vec<(Vec<u8>, f64)> {
        let mut v: Vec<(Vec<u8>, f64)> = self
            .arts
            .iter()
            .filter(|(_, a)| a.pv > 0)
            .filter(|(_, a)| {
                let p = a.published.expect("viewed articles have a publish time");
                window.is_none_or(|w| p <= at && p >= at - w)
            })
            .map(|(id, a)| (id.clone(), hot(a.pv, a.uv, a.published.unwrap(), at)))
            .collect();
        v.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
        v.truncate(limit);
        v
    }
}

/// Replays views pipelined and checks every reply against the model.
pub fn replay(
    c: &mut Connection,
    board: &[u8],
    m: &mut Model,
    views: &[(Vec<u8>, Vec<u8>, i64)],
    dedup_ms: i64,
    ctx: &str,
) {
    let got = view_many(c, board, views);
    for ((a, v, t), got) in views.iter().zip(got) {
        let want = m.view(a, v, *t, dedup_ms);
        assert_eq!(
            got,
            want,
            "{ctx}: HOT.VIEW {} {} AT {}",
            String::from_utf8_lossy(a),
            String::from_utf8_lossy(v),
            ts(*t)
        );
    }
}
