//! The logic of `make tune` (examples/tune.rs), shared with tests/tune.rs through
//! `#[path]`: replay an access log once per setting (each gamma × base of the hot
//! formula, and each trending half-life) into a server with the module loaded,
//! sample `HOT.TOP [BY trending] … LIMIT 20 AT t` over log time, and measure how the
//! top behaves under each setting and how well it foresees the next step's views.
//!
//! - [`replay`]: one setting's replay into its own board, with the samples.
//! - [`metrics`]: churn, age, dwell, the share of the next step's views the top
//!   foresees, and overlap, from the samples.
//! - [`report`]: the table printed to the terminal.
//! - [`chart`]: the SVG chart (rank over time of the leading articles, one panel
//!   per setting).
//!
//! Units: times are unix seconds (`i64`), as in the log; ages, dwell and churn
//! rates are reported in hours.
#![allow(dead_code)]

#[path = "../shared/log.rs"]
pub mod log;
#[path = "../shared/replies.rs"]
pub mod replies;

pub mod chart;
pub mod metrics;
pub mod replay;
pub mod report;

use std::collections::BTreeMap;

pub use metrics::Metrics;
pub use replay::Run;

/// Default spacing of the `HOT.TOP` samples, in seconds of log time.
pub const DEFAULT_STEP_SECS: i64 = 600;
/// Default length of the sampled top (`HOT.TOP … LIMIT`).
pub const DEFAULT_LIMIT: usize = 20;
/// Default number of leading articles drawn in the chart.
pub const DEFAULT_CHART_ARTICLES: usize = 8;

/// One ranking to replay: the hot formula `score = (alpha·pv + beta·uv) / (hours +
/// base)^gamma` (`base` in hours; alpha and beta stay at the server's configured
/// values), or the trending ranking with a half-life (`HOT.CREATE … TRENDING-HALF-LIFE`,
/// sampled with `HOT.TOP … BY trending`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Setting {
    Hot {
        gamma: f64,
        base: f64,
    },
    /// `half_life_secs`: 60 … 315360000 seconds.
    Trending {
        half_life_secs: i64,
    },
}

impl Setting {
    /// A short human label, `gamma 1.5, base 2` or `trending 1h`; unique per setting.
    pub fn label(&self) -> String {
        match self {
            Setting::Hot { gamma, base } => format!("gamma {gamma}, base {base}"),
            Setting::Trending { half_life_secs } => {
                format!("trending {}", duration_label(*half_life_secs))
            }
        }
    }

    /// Every gamma × base combination, gammas outermost, in the given order.
    pub fn grid(gammas: &[f64], bases: &[f64]) -> Vec<Setting> {
        gammas
            .iter()
            .flat_map(|&gamma| bases.iter().map(move |&base| Setting::Hot { gamma, base }))
            .collect()
    }

    /// One trending setting per half-life (seconds), in the given order.
    pub fn trending(half_lives: &[i64]) -> Vec<Setting> {
        half_lives
            .iter()
            .map(|&half_life_secs| Setting::Trending { half_life_secs })
            .collect()
    }
}

/// Seconds as the largest whole unit: `90s`, `30m`, `6h`, `2d`.
pub fn duration_label(secs: i64) -> String {
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60)] {
        if secs % size == 0 && secs >= size {
            return format!("{}{unit}", secs / size);
        }
    }
    format!("{secs}s")
}

/// Parses a comma-separated list of half-lives (`30m,1h,6h`: seconds, or a number
/// with a unit `s`, `m`, `h` or `d`, as HOT.TOP's WINDOW), each from 60 s to 10 years
/// (315360000 s, the module's range); refuses an empty list and repeats.
pub fn parse_half_lives(what: &str, s: &str) -> Result<Vec<i64>, String> {
    parse_items(what, s, |item| {
        let (digits, unit) = match item.char_indices().last() {
            Some((i, c)) if c.is_ascii_alphabetic() => (&item[..i], c),
            _ => (item, 's'),
        };
        let size = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(format!("{item:?}: the unit must be s, m, h or d")),
        };
        let secs = digits
            .parse::<i64>()
            .ok()
            .and_then(|n| n.checked_mul(size))
            .ok_or_else(|| format!("{item:?} is not a duration such as 90, 30m, 6h or 1d"))?;
        if !(60..=315_360_000).contains(&secs) {
            return Err(format!("{item} is outside 60 s … 10 years"));
        }
        Ok(secs)
    })
}

/// Parses a comma-separated list of numbers (`1.3,1.5,1.8`); `what` names the
/// list in errors. Refuses an empty list, non-finite numbers and repeats.
pub fn parse_list(what: &str, s: &str) -> Result<Vec<f64>, String> {
    parse_items(what, s, |item| {
        let v: f64 = item
            .parse()
            .map_err(|_| format!("{item:?} is not a number"))?;
        if !v.is_finite() {
            return Err(format!("{item:?} is not finite"));
        }
        Ok(v)
    })
}

/// The items of a comma-separated list, each through `parse`; errors name the list
/// (`what`). Refuses an empty list and an item listed twice.
fn parse_items<T: PartialEq>(
    what: &str,
    s: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let mut out: Vec<T> = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let v = parse(item).map_err(|e| format!("{what}: {e}"))?;
        if out.contains(&v) {
            return Err(format!("{what}: {item} is listed twice"));
        }
        out.push(v);
    }
    if out.is_empty() {
        return Err(format!("{what}: empty list"));
    }
    Ok(out)
}

/// What to replay and how to sample it.
#[derive(Debug, Clone)]
pub struct Plan {
    pub settings: Vec<Setting>,
    /// Seconds of log time between two `HOT.TOP` samples.
    pub step_secs: i64,
    /// `HOT.TOP … LIMIT`.
    pub limit: usize,
    /// Known publish times, unix seconds, by article (`--published`); an article
    /// not listed is published at its first view in the log.
    pub known_published: BTreeMap<String, i64>,
}

impl Plan {
    /// The default sampling (every 600 s, top 20) for these settings.
    pub fn new(settings: Vec<Setting>) -> Plan {
        Plan {
            settings,
            step_secs: DEFAULT_STEP_SECS,
            limit: DEFAULT_LIMIT,
            known_published: BTreeMap::new(),
        }
    }
}

/// Everything measured: one run and one row of metrics per setting, in plan order,
/// and the pairwise overlap of the settings' tops.
#[derive(Debug)]
pub struct Outcome {
    pub plan: Plan,
    pub runs: Vec<Run>,
    pub metrics: Vec<Metrics>,
    /// `overlap[i][j]`: mean over the samples of |A∩B| / max(|A|, |B|), A and B the
    /// tops of settings i and j at the same instant (|A∩B|/20 once both are full).
    pub overlap: Vec<Vec<f64>>,
    /// The views replayed: those up to the last sample instant.
    pub views: usize,
    /// Time of the first view, unix seconds: samples are taken every `step_secs`
    /// after it.
    pub start: i64,
    /// The articles replayed, with their publish time (from `plan.known_published`,
    /// else their first view in the log), unix seconds.
    pub published: BTreeMap<String, i64>,
}

/// Replays `views` once per setting of `plan` into the server behind `con` and
/// measures the tops. Each setting gets its own board (`hot:{tune}:<i>`), set up
/// with `CONFIG SET hotrank.gamma/base` (hot) or `HOT.CREATE … TRENDING-HALF-LIFE`
/// (trending), so `con` should be a private server.
pub fn run(
    con: &mut redis::Connection,
    views: &mut [log::View],
    plan: &Plan,
) -> Result<Outcome, String> {
    if plan.step_secs <= 0 || plan.limit == 0 || plan.settings.is_empty() {
        return Err("the plan needs a positive step and limit and at least one setting".into());
    }
    // A stable sort: views of the same second keep their log order.
    views.sort_by_key(|v| v.time);
    // Views after the last sample instant would change no sample: not replayed.
    let times = replay::sample_times(views, plan.step_secs);
    let replayed = times
        .last()
        .map_or(0, |&t| views.partition_point(|v| v.time <= t));
    let all: &[log::View] = views;
    let views = &all[..replayed];
    let mut published = replay::publish_times(views);
    for (article, t) in published.iter_mut() {
        if let Some(known) = plan.known_published.get(article) {
            *t = *known;
        }
    }
    let mut runs = Vec::with_capacity(plan.settings.len());
    for (i, setting) in plan.settings.iter().enumerate() {
        let board = format!("hot:{{tune}}:{i}");
        let run = replay::replay(con, &board, *setting, views, &published, &times, plan.limit)?;
        runs.push(run);
    }
    let metrics = runs
        .iter()
        .map(|r| metrics::measure(r, &published, plan.step_secs, all))
        .collect();
    let overlap = metrics::overlap_matrix(&runs);
    Ok(Outcome {
        plan: plan.clone(),
        runs,
        metrics,
        overlap,
        views: views.len(),
        start: views.first().map_or(0, |v| v.time),
        published,
    })
}
