//! Exactness: HOT.TOP on a 20,000-article board against a client-side brute force.

use std::collections::BTreeMap;
use std::sync::Mutex;

use hotrank::hot::Formula;
use redis::Value;

use crate::data::{article, Dataset};
use crate::fill::{fill_board, pipelined};
use crate::replies::pairs;
use crate::util::{fmt_ms, now_ms, parse_time_ms, progress, yes};
use crate::util::{restore_config, set_config};
use crate::{Cfg, Res, EXACT_BOARD};

/// (pv, uv, published ms) of every article of the exactness board, by index.
type Stats = Vec<Option<(i64, i64, i64)>>;

/// The windows checked: label and window in ms.
const WINDOWS: [(&str, Option<i64>); 3] = [
    ("no window", None),
    ("WINDOW 72h", Some(72 * 3_600_000)),
    ("WINDOW 1h", Some(3_600_000)),
];

pub fn exactness(
    port: u16,
    con: &mut redis::Connection,
    cfg: &Cfg,
    problems: &mut Vec<String>,
) -> Res<()> {
    let n = cfg.exact_articles;
    progress(&format!("exactness check on {EXACT_BOARD} ({n} articles)"));
    let end_ms = now_ms() - 60_000;
    let ds = Dataset::generate(n, 3 * n, 50_000, end_ms, 0x5eed_0002);
    let saved = set_config(con, "hotrank.max-articles", "0")?;
    let fill = fill_board(port, EXACT_BOARD, &ds);
    restore_config(con, "hotrank.max-articles", &saved)?;
    fill?;
    // A fixed query instant with milliseconds, after every view.
    let at_ms = end_ms + 30_123;
    let at = fmt_ms(at_ms);
    let stats = fetch_stats(port, n, &at)?;
    let f = Formula::DEFAULT;
    println!(
        "Exactness: board `{EXACT_BOARD}` with {n} articles and {} views (same generator); for \
         every article pv, uv and published_at were fetched with HOT.STATS (pipelined), the score \
         `({:.1}·pv + {}·uv) / (max(0, (at−pub)/3600000 ms) + {})^{}` was computed on the client \
         at AT {at}, and the brute-force top 20 (ties by article id) was compared with \
         `HOT.TOP {EXACT_BOARD} LIMIT 20 [WINDOW w] WITHSCORES AT {at}` (board filled with \
         `hotrank.max-articles 0`).",
        ds.views.len(),
        f.alpha,
        f.beta,
        f.base,
        f.gamma
    );
    println!();
    let mut all_exact = true;
    for (label, window_ms) in WINDOWS {
        let expect = brute_force_top(&stats, at_ms, window_ms);
        all_exact &= compare_top(con, label, window_ms, &at, &expect, problems)?;
    }
    println!();
    println!("**exact: {}**", yes(all_exact));
    Ok(())
}

/// pv, uv and published_at of articles `0..n` by HOT.STATS … AT `at`, pipelined.
fn fetch_stats(port: u16, n: usize, at: &str) -> Res<Stats> {
    let stats: Mutex<Stats> = Mutex::new(vec![None; n]);
    pipelined(
        port,
        0,
        n,
        "HOT.STATS",
        &|p, i| {
            p.cmd("HOT.STATS")
                .arg(EXACT_BOARD)
                .arg(article(i as u32))
                .arg("AT")
                .arg(at);
        },
        &|i, v| {
            let m: BTreeMap<String, String> = pairs(v)
                .map_err(|e| format!("HOT.STATS {EXACT_BOARD} {}: {e}", article(i as u32)))?
                .into_iter()
                .collect();
            let pv = m.get("pv").and_then(|s| s.parse::<i64>().ok());
            let uv = m.get("uv").and_then(|s| s.parse::<i64>().ok());
            let published = m.get("published_at").and_then(|s| parse_time_ms(s));
            match (pv, uv, published) {
                (Some(pv), Some(uv), Some(p)) => {
                    if let Ok(mut g) = stats.lock() {
                        g[i] = Some((pv, uv, p));
                    }
                    Ok(())
                }
                _ => Err(format!(
                    "HOT.STATS {EXACT_BOARD} {}: missing pv/uv/published_at in {m:?}",
                    article(i as u32)
                )),
            }
        },
    )?;
    stats
        .into_inner()
        .map_err(|_| "HOT.STATS collector poisoned".to_string())
}

/// The top 20 by the crate's default formula at `at_ms`, ties by article id.
///
/// The score is the crate's (`hotrank::hot::Formula`, the one the module uses); the
/// selection is an independent check on purpose: a plain sort over every article, not
/// the module's pruned top-N, so it cannot share a bug with it.
fn brute_force_top(stats: &Stats, at_ms: i64, window_ms: Option<i64>) -> Vec<(String, f64)> {
    let f = Formula::DEFAULT;
    let mut expect: Vec<(String, f64)> = stats
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let (pv, uv, p) = (*s)?;
            if pv == 0 {
                return None;
            }
            if let Some(w) = window_ms {
                if p > at_ms || p < at_ms - w {
                    return None;
                }
            }
            Some((article(i as u32), f.score(pv, uv, p, at_ms)))
        })
        .collect();
    expect.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    expect.truncate(20);
    expect
}

/// Asks HOT.TOP for one window, prints its line and returns whether it is exact.
fn compare_top(
    con: &mut redis::Connection,
    label: &str,
    window_ms: Option<i64>,
    at: &str,
    expect: &[(String, f64)],
    problems: &mut Vec<String>,
) -> Res<bool> {
    let mut cmd = redis::cmd("HOT.TOP");
    cmd.arg(EXACT_BOARD).arg("LIMIT").arg(20);
    if let Some(w) = window_ms {
        cmd.arg("WINDOW").arg(format!("{}", w / 1000));
    }
    cmd.arg("WITHSCORES").arg("AT").arg(at);
    let got = cmd
        .query::<Value>(con)
        .map_err(|e| format!("HOT.TOP {EXACT_BOARD} ({label}): {e}"))?;
    let got = pairs(&got).map_err(|e| format!("HOT.TOP {EXACT_BOARD} ({label}): {e}"))?;
    let ids_same = got.len() == expect.len() && got.iter().zip(expect).all(|(g, e)| g.0 == e.0);
    let mut max_rel = 0.0f64;
    let mut bits_same = ids_same;
    for (g, e) in got.iter().zip(expect) {
        match g.1.parse::<f64>() {
            Ok(s) => {
                bits_same &= s.to_bits() == e.1.to_bits();
                if e.1 != 0.0 {
                    max_rel = max_rel.max(((s - e.1) / e.1).abs());
                }
            }
            Err(_) => bits_same = false,
        }
    }
    let exact = ids_same && bits_same;
    println!(
        "- {label}: {} rows; same articles in the same order: {}; scores bit-identical: {} \
         (max relative difference {max_rel:.1e}) → exact: {}",
        got.len(),
        yes(ids_same),
        yes(bits_same),
        yes(exact)
    );
    if !exact {
        problems.push(format!(
            "exactness ({label}): HOT.TOP differs from the brute force; HOT.TOP {:?}, brute force {:?}",
            got.iter().take(5).collect::<Vec<_>>(),
            expect.iter().take(5).collect::<Vec<_>>()
        ));
    }
    Ok(exact)
}
