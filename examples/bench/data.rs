//! Data sets of the bench: articles and Zipf-drawn views, drawn with the
//! tests' reproducible splitmix64 generator (`tests/common/rng.rs`).

use crate::rng::SplitMix;
use crate::DAY_MS;

/// Articles with publish times and views `(t_ms, article, visitor)` sorted by time.
pub struct Dataset {
    pub pub_ms: Vec<i64>,
    pub views: Vec<(i64, u32, u32)>,
}

impl Dataset {
    /// `articles` published uniformly over the 30 days before `end_ms`; one view per
    /// article, the rest Zipf(1.0) over articles (rank → article by a random
    /// permutation); each view at a uniform time between publication and `end_ms`.
    pub fn generate(articles: usize, views: usize, visitors: u64, end_ms: i64, seed: u64) -> Self {
        let mut rng = SplitMix(seed);
        let span = 30 * DAY_MS - 120_000;
        let pub_ms: Vec<i64> = (0..articles)
            .map(|_| end_ms - 30 * DAY_MS + (rng.unit() * span as f64) as i64)
            .collect();
        let mut perm: Vec<u32> = (0..articles as u32).collect();
        for i in (1..perm.len()).rev() {
            let j = rng.below_scaled(i as u64 + 1) as usize;
            perm.swap(i, j);
        }
        let zipf = Zipf::new(articles, 1.0);
        let mut out = Vec::with_capacity(views.max(articles));
        for n in 0..views.max(articles) {
            let a = if n < articles {
                n
            } else {
                perm[zipf.sample(&mut rng)] as usize
            };
            let p = pub_ms[a];
            let t = p + (rng.unit() * (end_ms - p) as f64) as i64;
            out.push((t, a as u32, rng.below_scaled(visitors) as u32));
        }
        out.sort_unstable();
        Dataset { pub_ms, views: out }
    }

    pub fn max_views_per_article(&self) -> u64 {
        let mut counts = vec![0u64; self.pub_ms.len()];
        for v in &self.views {
            counts[v.1 as usize] += 1;
        }
        counts.into_iter().max().unwrap_or(0)
    }
}

pub fn article(i: u32) -> String {
    format!("art:{i}")
}

pub fn visitor(i: u32) -> String {
    format!("vis:{i}")
}

/// Zipf over ranks 0..n (rank k has weight 1/(k+1)^s), by inverse CDF.
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    pub fn new(n: usize, s: f64) -> Self {
        let mut acc = 0.0;
        let cdf = (1..=n)
            .map(|k| {
                acc += 1.0 / (k as f64).powf(s);
                acc
            })
            .collect();
        Zipf { cdf }
    }

    pub fn sample(&self, rng: &mut SplitMix) -> usize {
        let total = self.cdf.last().copied().unwrap_or(0.0);
        let u = rng.unit() * total;
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.cdf.len().saturating_sub(1))
    }
}
