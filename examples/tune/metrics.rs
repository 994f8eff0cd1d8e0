//! How a top behaves over time, from its samples: churn, age of the listed
//! articles, dwell, how much of the next step's views it foresees, and the overlap
//! of two settings' tops.

use std::collections::{BTreeMap, HashSet};

use super::log::View;
use super::replay::{Run, Sample};

/// One setting's measures. Rates are per hour of log time; ages and dwell in hours.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    pub samples: usize,
    /// Articles that left the top between two consecutive samples, per hour: the
    /// churn (a top that only grows, early in the log, has none).
    pub churn_per_hour: f64,
    /// Median and 90th percentile of `t - published_at` over every listed article
    /// of every sample, in hours.
    pub age_median_h: f64,
    pub age_p90_h: f64,
    /// Median length of a stay in the top: a run of consecutive samples that list
    /// the article, times the sample step, in hours. Stays still running at the
    /// last sample count as they stand.
    pub dwell_median_h: f64,
    /// Distinct articles that were ever listed.
    pub distinct: usize,
    /// Of the views in the step after each sample (`(at, at + step]`), the share (0 … 1)
    /// that went to an article the sample lists: how well the list at `at` foresees
    /// what is read next. Pooled over the samples; NaN when no view follows a sample.
    pub next_share: f64,
}

/// The metrics of one run. `published` maps articles to unix seconds; `step_secs`
/// is the time between two samples, in seconds; `views` are every view of the log,
/// sorted by time (those after the last sample too: the last step's "next" views).
pub fn measure(
    run: &Run,
    published: &BTreeMap<String, i64>,
    step_secs: i64,
    views: &[View],
) -> Metrics {
    let mut ages = ages_hours(&run.samples, published);
    let mut dwell: Vec<f64> = stays(&run.samples)
        .into_iter()
        .map(|n| n as f64 * step_secs as f64 / 3600.0)
        .collect();
    let distinct: HashSet<&str> = run
        .samples
        .iter()
        .flat_map(|s| s.top.iter().map(String::as_str))
        .collect();
    Metrics {
        samples: run.samples.len(),
        churn_per_hour: churn_per_hour(&run.samples),
        age_median_h: quantile(&mut ages, 0.5),
        age_p90_h: quantile(&mut ages, 0.9),
        dwell_median_h: quantile(&mut dwell, 0.5),
        distinct: distinct.len(),
        next_share: next_share(&run.samples, views, step_secs),
    }
}

/// Of the views with a time in `(s.at, s.at + step]` after each sample `s`, the share
/// that went to an article `s` lists, pooled over the samples (a view counted once per
/// sample window it falls in). `views` sorted by time; NaN when no window has a view.
pub fn next_share(samples: &[Sample], views: &[View], step: i64) -> f64 {
    let (mut hits, mut total) = (0usize, 0usize);
    for s in samples {
        let listed: HashSet<&str> = s.top.iter().map(String::as_str).collect();
        let from = views.partition_point(|v| v.time <= s.at);
        let to = views.partition_point(|v| v.time <= s.at + step);
        total += to - from;
        hits += views[from..to]
            .iter()
            .filter(|v| listed.contains(v.article.as_str()))
            .count();
    }
    if total == 0 {
        f64::NAN
    } else {
        hits as f64 / total as f64
    }
}

/// Articles that left the top between consecutive samples, per hour between the
/// first and the last sample. 0 with fewer than two samples.
pub fn churn_per_hour(samples: &[Sample]) -> f64 {
    let (Some(first), Some(last)) = (samples.first(), samples.last()) else {
        return 0.0;
    };
    if last.at <= first.at {
        return 0.0;
    }
    let left: usize = samples
        .windows(2)
        .map(|w| {
            let now: HashSet<&String> = w[1].top.iter().collect();
            w[0].top.iter().filter(|a| !now.contains(a)).count()
        })
        .sum();
    left as f64 / ((last.at - first.at) as f64 / 3600.0)
}

/// The age in hours of every listed article at every sample (clamped at 0, as the
/// formula clamps it). Articles without a publish time are skipped.
pub fn ages_hours(samples: &[Sample], published: &BTreeMap<String, i64>) -> Vec<f64> {
    samples
        .iter()
        .flat_map(|s| {
            s.top
                .iter()
                .filter_map(|a| published.get(a))
                .map(move |p| (s.at - p).max(0) as f64 / 3600.0)
        })
        .collect()
}

/// The length, in samples, of every stay: a maximal run of consecutive samples
/// that all list the article.
pub fn stays(samples: &[Sample]) -> Vec<usize> {
    let mut open: BTreeMap<&str, usize> = BTreeMap::new();
    let mut done = Vec::new();
    for s in samples {
        let listed: HashSet<&str> = s.top.iter().map(String::as_str).collect();
        open.retain(|a, n| {
            let stays = listed.contains(a);
            if !stays {
                done.push(*n);
            }
            stays
        });
        for a in listed {
            *open.entry(a).or_insert(0) += 1;
        }
    }
    done.extend(open.into_values());
    done
}

/// The `q` quantile (0…1) by the nearest-rank method; NaN for no values. Sorts `v`.
pub fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let rank = (q * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Mean over the common sample instants of |A∩B| / max(|A|, |B|); instants where
/// both tops are empty are skipped. NaN when there is no such instant.
pub fn overlap(a: &[Sample], b: &[Sample]) -> f64 {
    let mut sum = 0.0;
    let mut n = 0usize;
    for (x, y) in a.iter().zip(b) {
        debug_assert_eq!(x.at, y.at, "samples of two runs at different instants");
        let size = x.top.len().max(y.top.len());
        if size == 0 {
            continue;
        }
        let ys: HashSet<&String> = y.top.iter().collect();
        let common = x.top.iter().filter(|t| ys.contains(t)).count();
        sum += common as f64 / size as f64;
        n += 1;
    }
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// `overlap` of every pair of runs (symmetric, 1 on the diagonal).
pub fn overlap_matrix(runs: &[Run]) -> Vec<Vec<f64>> {
    runs.iter()
        .map(|a| {
            runs.iter()
                .map(|b| overlap(&a.samples, &b.samples))
                .collect()
        })
        .collect()
}

/// The `n` articles listed in the most samples, over all runs; ties by id.
pub fn leading_articles(runs: &[Run], n: usize) -> Vec<String> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for s in runs.iter().flat_map(|r| &r.samples) {
        for a in &s.top {
            *count.entry(a).or_insert(0) += 1;
        }
    }
    let mut ranked: Vec<(&str, usize)> = count.into_iter().collect();
    ranked.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(y.0)));
    ranked
        .into_iter()
        .take(n)
        .map(|(a, _)| a.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(tops: &[&[&str]]) -> Vec<Sample> {
        tops.iter()
            .enumerate()
            .map(|(i, t)| Sample {
                at: 3600 * (i as i64 + 1),
                top: t.iter().map(|s| s.to_string()).collect(),
            })
            .collect()
    }

    #[test]
    fn churn_counts_articles_that_leave_per_hour() {
        // Growth (a → a,b) is no churn; b and a leaving are two, over 3 hours.
        let s = samples(&[&["a"], &["a", "b"], &["a", "c"], &["d", "c"]]);
        assert_eq!(churn_per_hour(&s), 2.0 / 3.0);
        assert_eq!(churn_per_hour(&s[..1]), 0.0);
    }

    #[test]
    fn stays_are_maximal_runs_including_open_ones() {
        let s = samples(&[&["a", "b"], &["a"], &["a", "b"], &["b"]]);
        let mut got = stays(&s);
        got.sort();
        // a: 3 samples; b: 1, then 2 (still open at the end).
        assert_eq!(got, vec![1, 2, 3]);
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let mut v = vec![5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(quantile(&mut v, 0.5), 3.0);
        assert_eq!(quantile(&mut v, 0.9), 5.0);
        assert_eq!(quantile(&mut v, 0.0), 1.0);
        assert!(quantile(&mut [], 0.5).is_nan());
    }

    #[test]
    fn overlap_is_shared_share_of_the_larger_top() {
        let a = samples(&[&["x", "y"], &[], &["x", "y", "z", "w"]]);
        let b = samples(&[&["y", "x"], &[], &["x", "q"]]);
        // 2/2 and 1/4; the empty instant is skipped.
        assert_eq!(overlap(&a, &b), (1.0 + 0.25) / 2.0);
        assert_eq!(overlap(&a, &a), 1.0);
        assert!(overlap(&a[1..2], &b[1..2]).is_nan());
    }

    #[test]
    fn next_share_counts_the_following_steps_views_of_listed_articles() {
        let view = |article: &str, time: i64| View {
            line_no: 0,
            article: article.to_string(),
            visitor: "v".to_string(),
            time,
        };
        // Samples at 3600 (lists a) and 7200 (lists b); steps of 3600 s.
        let s = samples(&[&["a"], &["b"]]);
        let views = [
            view("a", 3600), // at the sample instant: before its window
            view("a", 3601),
            view("c", 7200),
            view("b", 7300),
            view("a", 10_800),
            view("b", 10_801), // after the last window
        ];
        // Window 1 (3600, 7200]: a, c → 1 of 2; window 2 (7200, 10800]: b, a → 1 of 2.
        assert_eq!(next_share(&s, &views, 3600), 2.0 / 4.0);
        assert!(next_share(&s, &[], 3600).is_nan());
    }

    #[test]
    fn ages_use_the_sample_instant_and_clamp_at_zero() {
        let s = samples(&[&["a", "b"]]);
        let published = BTreeMap::from([("a".to_string(), 0), ("b".to_string(), 7200)]);
        assert_eq!(ages_hours(&s, &published), vec![1.0, 0.0]);
    }
}
