//! Section 2: HOT.TOP latency against ZREVRANGE on the big board.

use std::time::{Duration, Instant};

use redis::Value;

use crate::replies::describe;
use crate::util::{info_delta, info_section, info_suffix, progress, Summary};
use crate::{Cfg, Res, BOARD};

/// Mean single-client latency (µs) of one HOT.TOP variant and of ZREVRANGE.
pub struct TopMeans {
    pub label: &'static str,
    pub hot_us: f64,
    pub zrev_us: f64,
}

pub fn top_latency(
    con: &mut redis::Connection,
    cfg: &Cfg,
    problems: &mut Vec<String>,
) -> Res<Vec<TopMeans>> {
    progress("HOT.TOP vs ZREVRANGE latency");
    let mut zrev = redis::cmd("ZREVRANGE");
    zrev.arg(BOARD).arg(0).arg(19).arg("WITHSCORES");
    let variants: [(&str, Option<&str>); 3] = [
        ("HOT.TOP LIMIT 20 WITHSCORES", None),
        ("HOT.TOP LIMIT 20 WINDOW 72h WITHSCORES", Some("72h")),
        ("HOT.TOP LIMIT 20 WINDOW 1h WITHSCORES", Some("1h")),
    ];
    println!();
    println!(
        "Latency from one client, pipeline 1, {} iterations per command (at most {} s per \
         pair), HOT.TOP and `ZREVRANGE {BOARD} 0 19 WITHSCORES` interleaved A/B/B/A so drift \
         cancels; times in µs, round trip included.",
        cfg.top_iters,
        cfg.top_cap.as_secs()
    );
    println!();
    println!(
        "| query | iters | p50 µs | p99 µs | mean µs | ZREVRANGE p50 | p99 | mean | ratio of means | ratio of p50s | examined/call | rows |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut means = Vec::new();
    for (label, window) in variants {
        let mut hot = redis::cmd("HOT.TOP");
        hot.arg(BOARD).arg("LIMIT").arg(20);
        if let Some(w) = window {
            hot.arg("WINDOW").arg(w);
        }
        hot.arg("WITHSCORES");
        let rows = match hot.query::<Value>(con) {
            Ok(Value::Array(items)) => items.len() / 2,
            Ok(other) => {
                problems.push(format!("{label}: unexpected reply {}", describe(&other)));
                continue;
            }
            Err(e) => {
                problems.push(format!("{label}: {e}"));
                continue;
            }
        };
        means.push(measure_variant(con, cfg, label, &hot, &zrev, rows)?);
    }
    let hot = info_section(con, "hotrank")?;
    println!();
    match info_suffix(&hot, "top_articles_examined_per_call") {
        Some(v) => println!(
            "INFO hotrank top_articles_examined_per_call (cumulative over all HOT.TOP calls so far): {v}"
        ),
        None => println!("INFO hotrank has no top_articles_examined_per_call field."),
    }
    Ok(means)
}

/// Times one HOT.TOP variant against ZREVRANGE and prints its row.
fn measure_variant(
    con: &mut redis::Connection,
    cfg: &Cfg,
    label: &'static str,
    hot: &redis::Cmd,
    zrev: &redis::Cmd,
    rows: usize,
) -> Res<TopMeans> {
    let before = info_section(con, "hotrank")?;
    let (a, b) = measure_pair(con, hot, zrev, cfg.top_iters, cfg.top_cap)
        .map_err(|e| format!("{label} vs ZREVRANGE: {e}"))?;
    let after = info_section(con, "hotrank")?;
    let examined = match (
        info_delta(&before, &after, "top_articles_examined"),
        info_delta(&before, &after, "top_calls"),
    ) {
        (Some(e), Some(c)) if c > 0.0 => format!("{:.0}", e / c),
        _ => "n/a".to_string(),
    };
    let (sa, sb) = (Summary::of(&a), Summary::of(&b));
    println!(
        "| `{label}` | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {:.2}x | {:.2}x | {examined} | {rows} |",
        a.len(),
        sa.p50,
        sa.p99,
        sa.mean,
        sb.p50,
        sb.p99,
        sb.mean,
        sa.mean / sb.mean,
        sa.p50 / sb.p50
    );
    Ok(TopMeans {
        label,
        hot_us: sa.mean,
        zrev_us: sb.mean,
    })
}

/// Runs `a` and `b` alternately (A B, then B A, …) `iters` times each or until `cap`;
/// returns the latencies in µs. 20 warm-up calls of each are not recorded.
fn measure_pair(
    con: &mut redis::Connection,
    a: &redis::Cmd,
    b: &redis::Cmd,
    iters: usize,
    cap: Duration,
) -> Res<(Vec<f64>, Vec<f64>)> {
    let time = |con: &mut redis::Connection, c: &redis::Cmd| -> Res<f64> {
        let t = Instant::now();
        match c.query::<Value>(con) {
            Ok(Value::ServerError(e)) => Err(format!("server error: {e:?}")),
            Ok(_) => Ok(t.elapsed().as_secs_f64() * 1e6),
            Err(e) => Err(e.to_string()),
        }
    };
    for _ in 0..20 {
        time(con, a)?;
        time(con, b)?;
    }
    let (mut la, mut lb) = (Vec::with_capacity(iters), Vec::with_capacity(iters));
    let start = Instant::now();
    for i in 0..iters {
        if i % 2 == 0 {
            la.push(time(con, a)?);
            lb.push(time(con, b)?);
        } else {
            lb.push(time(con, b)?);
            la.push(time(con, a)?);
        }
        if start.elapsed() > cap {
            break;
        }
    }
    Ok((la, lb))
}
