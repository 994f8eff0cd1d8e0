//! Report tables of the throughput section (redis-benchmark results, targets and
//! verdicts, server CPU per operation) and of the replication-modes section.

use crate::modes::{ModeRun, MODE_PIPELINE};
use crate::rb::{mean_result, RunResult};
use crate::rust_client::{rust_mean, RustOp, RustResults};
use crate::throughput::{RbResults, Ready, PIPELINES};
use crate::top::TopMeans;
use crate::workloads::{Bound, Workload, GROUPS};
use crate::workloads::{MODES, MODE_GROUPS};
use crate::MINCR_MEMBERS;
use std::collections::BTreeMap;

/// The redis-benchmark table: one row per workload and pipeline measured.
pub fn rb_table(ready: &[Ready], results: &RbResults) {
    println!();
    println!("| workload | pipeline | n | rps | p50 ms | p99 ms | srv µs/op | rps range |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in ready.iter().filter(|r| r.n > 0) {
        for pipeline in PIPELINES {
            if let Some(rs) = results.get(&(r.wl.name, pipeline)) {
                let m = mean_result(rs);
                let (lo, hi) = rs.iter().fold((f64::MAX, 0.0f64), |(lo, hi), r| {
                    (lo.min(r.rps), hi.max(r.rps))
                });
                println!(
                    "| {} | {pipeline} | {} | {:.0} | {:.3} | {:.3} | {:.2} | {:.0}–{:.0} |",
                    r.wl.name, r.n, m.rps, m.p50, m.p99, m.srv_us, lo, hi
                );
            }
        }
    }
}

/// A ratio as the tables print it: `1.23x`, or `n/a`.
pub fn fmt_ratio(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.2}x"),
        _ => "n/a".to_string(),
    }
}

/// The verdict on `ratio` for `bound`: met, missed, not measured, or `—` (no target).
pub fn verdict(bound: Bound, ratio: Option<f64>) -> &'static str {
    match ratio.filter(|v| v.is_finite()).map(|v| bound.met(v)) {
        None => "not measured",
        Some(None) => "—",
        Some(Some(true)) => "met",
        Some(Some(false)) => "**missed**",
    }
}

/// One row of the targets table.
fn row(label: &str, p: &str, v: Option<f64>, bound: Bound) {
    println!(
        "| {label} | {p} | {} | {} | {} |",
        fmt_ratio(v),
        bound.text(),
        verdict(bound, v)
    );
}

/// `a / b` when both are known.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? / b?)
}

fn rb_rps(results: &RbResults, name: &str, p: usize) -> Option<f64> {
    results.get(&(name, p)).map(|rs| mean_result(rs).rps)
}

/// The table's comparisons whose bound is `AtLeast` (`at_most == false`) or `AtMost`,
/// in table order: (workload, comparison).
fn comparisons(
    at_most: bool,
) -> impl Iterator<Item = (&'static Workload, &'static crate::workloads::Vs)> {
    GROUPS
        .iter()
        .copied()
        .flatten()
        .flat_map(|wl| wl.vs.iter().map(move |vs| (wl, vs)))
        .filter(move |(_, vs)| matches!(vs.bound, Bound::AtMost(_)) == at_most)
}

/// Rows of the table's comparisons (speed-ups, or with `at_most` slow-downs), both
/// pipelines each.
fn table_rows(results: &RbResults, at_most: bool) {
    for (wl, vs) in comparisons(at_most) {
        let label = vs.label.map_or_else(
            || format!("{} / {} (rps)", wl.name, vs.baseline),
            str::to_string,
        );
        for p in PIPELINES {
            let (a, b) = (rb_rps(results, wl.name, p), rb_rps(results, vs.baseline, p));
            let v = if at_most { ratio(b, a) } else { ratio(a, b) };
            row(&label, &p.to_string(), v, vs.bound);
        }
    }
}

/// The targets section: every ratio with its target and verdict.
pub fn targets(
    results: &RbResults,
    rust: &RustResults,
    mincr: Option<(f64, f64)>,
    top: &[TopMeans],
) {
    println!();
    println!("## Targets");
    println!();
    println!("| ratio | pipeline | measured | target | result |");
    println!("|---|---:|---:|---:|---|");
    table_rows(results, false);
    let ru = |op: RustOp| rust_mean(rust, op).map(|m| m.rps);
    row(
        "RANK.INCR / ZINCRBY (Rust client ops/s)",
        "1",
        ratio(ru(RustOp::RankIncr), ru(RustOp::Zincrby)),
        Bound::AtLeast(0.95),
    );
    row(
        "RANK.INCR / client-side lock (Rust client ops/s)",
        "1",
        ratio(ru(RustOp::RankIncr), ru(RustOp::Lock)),
        Bound::AtLeast(4.0),
    );
    row(
        "RANK.INCR (redis-benchmark) / lock (Rust client)",
        "1",
        ratio(rb_rps(results, "RANK.INCR", 1), ru(RustOp::Lock)),
        Bound::AtLeast(4.0),
    );
    row(
        &format!(
            "RANK.MINCR {MINCR_MEMBERS} members / ZADD {MINCR_MEMBERS} members (time, best of 3)"
        ),
        "1",
        mincr.map(|(m, z)| m / z),
        Bound::AtMost(10.0),
    );
    for t in top {
        row(
            &format!("`{}` / ZREVRANGE, mean latency (1 client)", t.label),
            "1",
            Some(t.hot_us / t.zrev_us),
            Bound::AtMost(10.0),
        );
    }
    table_rows(results, true);
}

/// Server CPU per operation of every compared pair (A = workload, B = baseline).
pub fn srv_table(results: &RbResults, rust: &RustResults) {
    println!();
    println!(
        "Server CPU per operation (from the `srv µs/op` columns; lower is cheaper, and this \
         does not depend on the client's speed):"
    );
    println!();
    println!("| comparison | pipeline | srv µs/op A | srv µs/op B | B / A |");
    println!("|---|---:|---:|---:|---:|");
    let srv = |name: &str, p: usize| results.get(&(name, p)).map(|rs| mean_result(rs).srv_us);
    let pairs = comparisons(false).chain(comparisons(true));
    for (wl, vs) in pairs.filter(|(_, vs)| vs.srv) {
        let (a, b) = (wl.name, vs.baseline);
        for p in PIPELINES {
            if let (Some(x), Some(y)) = (srv(a, p), srv(b, p)) {
                println!(
                    "| A = {a}, B = {b} | {p} | {x:.2} | {y:.2} | {:.2}x |",
                    y / x
                );
            }
        }
    }
    let srv_rust = |op: RustOp| rust_mean(rust, op).map(|m| m.srv_us);
    if let (Some(x), Some(y)) = (srv_rust(RustOp::RankIncr), srv_rust(RustOp::Lock)) {
        println!(
            "| A = RANK.INCR, B = lock recipe (Rust client) | 1 | {x:.2} | {y:.2} | {:.2}x |",
            y / x
        );
    }
}

/// The replication-modes table: per group of [`MODE_GROUPS`], per mode, every
/// workload, those with a comparison in that mode with its ratio to its baseline,
/// target and verdict; then each workload's `commands` / `effects` ratios.
pub fn modes_table(runs: &BTreeMap<&'static str, ModeRun>) {
    let mean = |mode: &str, name: &str| {
        runs.get(mode)
            .and_then(|run| run.results.get(&(name, MODE_PIPELINE)))
            .map(|rs| mean_result(rs))
    };
    println!();
    println!(
        "| workload | -r | mode | n | rps | srv µs/op | replica µs/op | replica lag | \
         ratio (rps) | srv µs/op B / A | target | verdict |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---|");
    for group in MODE_GROUPS {
        for mode in MODES {
            for wl in group.iter() {
                let m = mean(mode, wl.name);
                let n = runs
                    .get(mode)
                    .and_then(|run| run.ready.iter().find(|r| r.wl.name == wl.name))
                    .map_or("—".to_string(), |r| r.n.to_string());
                let cells = match &m {
                    Some(m) => {
                        let rep = m.replica.as_ref();
                        format!(
                            "{n} | {:.0} | {:.2} | {} | {}",
                            m.rps,
                            m.srv_us,
                            rep.map_or("—".to_string(), |r| format!("{:.2}", r.cpu_us)),
                            rep.map_or("—".to_string(), |r| format!(
                                "{:.0} kB, {:.2} s",
                                r.lag_bytes / 1000.0,
                                r.catchup_s
                            )),
                        )
                    }
                    None => format!("{n} | not measured | | |"),
                };
                let head = format!("| {} | {} | {mode} | {cells}", wl.name, wl.keyspace);
                let mut vss = wl
                    .vs
                    .iter()
                    .filter(|vs| vs.mode.is_none_or(|x| x == mode))
                    .peekable();
                if vss.peek().is_none() {
                    println!("{head} | | | | |");
                }
                for vs in vss {
                    let b = mean(mode, vs.baseline);
                    let rps = ratio(m.as_ref().map(|m| m.rps), b.as_ref().map(|b| b.rps));
                    let srv = ratio(b.as_ref().map(|b| b.srv_us), m.as_ref().map(|m| m.srv_us));
                    println!(
                        "{head} | {} vs {} | {} | {} | {} |",
                        fmt_ratio(rps),
                        vs.baseline,
                        fmt_ratio(srv),
                        vs.bound.text(),
                        verdict(vs.bound, rps)
                    );
                }
            }
        }
    }
    println!();
    println!("The same workloads, `commands` mode against `effects` mode:");
    println!();
    println!(
        "| workload | rps commands / effects | srv µs/op effects / commands | \
         replica µs/op effects / commands |"
    );
    println!("|---|---:|---:|---:|");
    for wl in MODE_GROUPS.iter().copied().flatten() {
        let (c, e) = (mean("commands", wl.name), mean("effects", wl.name));
        let get = |r: &Option<RunResult>, f: fn(&RunResult) -> Option<f64>| r.as_ref().and_then(f);
        let rps = |r: &RunResult| Some(r.rps);
        let srv = |r: &RunResult| Some(r.srv_us);
        let rep = |r: &RunResult| r.replica.as_ref().map(|x| x.cpu_us);
        println!(
            "| {} | {} | {} | {} |",
            wl.name,
            fmt_ratio(ratio(get(&c, rps), get(&e, rps))),
            fmt_ratio(ratio(get(&e, srv), get(&c, srv))),
            fmt_ratio(ratio(get(&e, rep), get(&c, rep))),
        );
    }
}
