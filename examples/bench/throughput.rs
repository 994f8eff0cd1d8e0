//! Section 4: throughput. redis-benchmark runs every workload of
//! [`crate::workloads::GROUPS`]; the Rust client runs its own; then the targets.

use std::collections::BTreeMap;
use std::env;
use std::process::Command;
use std::time::Instant;

use redis::Value;

use crate::data::Zipf;
use crate::rb::{redis_benchmark, RunResult};
use crate::report;
use crate::rng::SplitMix;
use crate::rust_client::{mincr_vs_zadd, rust_section};
use crate::top::TopMeans;
use crate::util::{connect, progress, restore_configs, set_configs};
use crate::workloads::{Workload, DEDUP_S, GROUPS, KEEP_BOARD, PLAIN_SHA, VIEW_SHA, WRITE_BOARD};
use crate::{
    Cfg, Res, DEDUP_SECONDS, LUA_PLAIN, LUA_PLAIN_NAME, LUA_VIEW, RB_CLIENTS, RB_KEYSPACE,
};

/// redis-benchmark results by (workload name, pipeline), one per round.
pub type RbResults = BTreeMap<(&'static str, usize), Vec<RunResult>>;

/// Pipelines every redis-benchmark workload runs at, in report order.
pub const PIPELINES: [usize; 2] = [16, 1];

/// How a table of workloads is run: rounds, pipelines, and an optional warm-up.
pub struct Plan {
    pub rounds: usize,
    pub pipelines: &'static [usize],
    pub warmup: Option<WarmUp>,
}

/// An untimed pass of every workload before the rounds, so the timed runs find the
/// keys it creates (the steady state); the timed runs are then sized from its rps.
pub struct WarmUp {
    /// Commands of the warm-up pass.
    pub n: u64,
    /// How long each timed run should last (s): its `n` is the warm-up's rps times
    /// this, at least `n / 4`.
    pub run_s: f64,
}

/// Runs one workload at one pipeline and returns its result (for example
/// [`redis_benchmark`] on the measured server).
pub type Runner<'a> = dyn FnMut(&mut redis::Connection, &Ready, usize) -> Res<RunResult> + 'a;

/// A workload of the table made ready to run: arguments filled in, `n` sized.
pub struct Ready {
    pub wl: &'static Workload,
    pub args: Vec<String>,
    /// Commands per run (`-n`).
    pub n: u64,
    /// Failed its check before timing: not run.
    pub broken: bool,
}

pub fn throughput(
    port: u16,
    con: &mut redis::Connection,
    cfg: &Cfg,
    top: Vec<TopMeans>,
    problems: &mut Vec<String>,
) -> Res<()> {
    println!("## Throughput");
    println!();
    let (bin, rb_version) = rb_binary();
    let sha = script_load(con, LUA_VIEW, "the Lua HOT.VIEW recipe")?;
    let sha_plain = script_load(con, LUA_PLAIN, "the plain seed script")?;
    let (fill_hot, fill_lua) = prefill_write_boards(port, con, &sha)?;
    println!(
        "Write boards filled before timing: {} views each, HOT.VIEW in {fill_hot:.1} s, the Lua \
         recipe in {fill_lua:.1} s (pipelined, 1000 per batch).",
        2 * RB_KEYSPACE
    );
    println!();
    let mut results = RbResults::new();
    match &rb_version {
        None => rb_missing(&bin, problems),
        Some(version) => {
            let mut ready = prepare(con, cfg, GROUPS, &sha, &sha_plain, problems)?;
            print_rb_intro(version, cfg);
            let plan = Plan {
                rounds: cfg.rounds,
                pipelines: &PIPELINES,
                warmup: None,
            };
            let mut run = |con: &mut redis::Connection, r: &Ready, pipeline: usize| {
                redis_benchmark(&bin, port, con, &r.args, r.n, pipeline, r.wl.keyspace)
            };
            run_rounds(con, &plan, &mut ready, &mut results, problems, &mut run)?;
            report::rb_table(&ready, &results);
        }
    }
    // RANK.INCR vs the client-side lock recipe, both from this Rust program.
    let rust = rust_section(port, con, cfg, problems);
    // One RANK.MINCR of many members vs one ZADD of the same members.
    let mincr = mincr_vs_zadd(con);
    if let Err(e) = &mincr {
        problems.push(format!("RANK.MINCR vs ZADD: {e}"));
    }
    report::targets(&results, &rust, mincr.ok(), &top);
    report::srv_table(&results, &rust);
    Ok(())
}

/// The redis-benchmark binary (`HOTRANK_BENCHMARK`, default from PATH) and its
/// version, `None` if it does not run.
pub fn rb_binary() -> (String, Option<String>) {
    let bin = env::var("HOTRANK_BENCHMARK").unwrap_or_else(|_| "redis-benchmark".to_string());
    let version = Command::new(&bin)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    (bin, version)
}

/// Says that redis-benchmark is missing, in the report and in `problems`.
pub fn rb_missing(bin: &str, problems: &mut Vec<String>) {
    println!(
        "`{bin}` was not found (install redis-tools, or set HOTRANK_BENCHMARK): the \
         redis-benchmark measurements are skipped."
    );
    problems.push(format!("{bin} not found: redis-benchmark section skipped"));
}

/// SCRIPT LOAD of `script` (`what` names it in the error); returns its SHA1.
pub fn script_load(con: &mut redis::Connection, script: &str, what: &str) -> Res<String> {
    redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(script)
        .query(con)
        .map_err(|e| format!("SCRIPT LOAD of {what}: {e}"))
}

/// Fills in the arguments of the workloads of `groups`, runs each workload's setup,
/// and checks every command before timing it (redis-benchmark only counts replies);
/// sizes runs of slow commands from their single-client latency so that no run takes
/// much more than `max_s`.
pub fn prepare(
    con: &mut redis::Connection,
    cfg: &Cfg,
    groups: &'static [&'static [Workload]],
    sha: &str,
    sha_plain: &str,
    problems: &mut Vec<String>,
) -> Res<Vec<Ready>> {
    let dedup_s = DEDUP_SECONDS.to_string();
    let fill = |a: &str| match a {
        VIEW_SHA => sha.to_string(),
        PLAIN_SHA => sha_plain.to_string(),
        DEDUP_S => dedup_s.clone(),
        other => other.to_string(),
    };
    let max_s = max_run_s(cfg);
    let mut rng = SplitMix(0xBEEF);
    let mut ready = Vec::new();
    for wl in groups.iter().copied().flatten() {
        let mut r = Ready {
            wl,
            args: wl.args.iter().map(|a| fill(a)).collect(),
            n: cfg.rb_n,
            broken: false,
        };
        match setup(con, wl).and_then(|()| preflight(con, &r, &mut rng)) {
            Ok(us) => {
                if us * r.n as f64 / 1e6 > max_s {
                    r.n = ((max_s / 4.0 * 1e6 / us) as u64).clamp(500, r.n);
                }
            }
            Err(e) => {
                problems.push(format!("{}: {e}; not benchmarked", r.args.join(" ")));
                r.broken = true;
            }
        }
        ready.push(r);
    }
    Ok(ready)
}

/// Longest a redis-benchmark run should take (s).
fn max_run_s(cfg: &Cfg) -> f64 {
    if cfg.quick {
        5.0
    } else {
        30.0
    }
}

/// Sends a workload's setup commands.
fn setup(con: &mut redis::Connection, wl: &Workload) -> Res<()> {
    for c in wl.setup {
        let mut cmd = redis::cmd(c[0]);
        for a in &c[1..] {
            cmd.arg(*a);
        }
        match cmd.query::<Value>(con) {
            Ok(Value::ServerError(e)) => return Err(format!("setup {}: {e:?}", c.join(" "))),
            Err(e) => return Err(format!("setup {}: {e}", c.join(" "))),
            Ok(_) => {}
        }
    }
    Ok(())
}

/// Runs a workload 30 times from one client, with random numbers for `__rand_int__`;
/// returns the mean latency in µs, or the first error reply.
fn preflight(con: &mut redis::Connection, r: &Ready, rng: &mut SplitMix) -> Res<f64> {
    let saved = set_configs(con, r.wl.config)?;
    let mut total = 0.0;
    let mut result = Ok(());
    for _ in 0..30 {
        let mut c = redis::cmd(&r.args[0]);
        for a in &r.args[1..] {
            c.arg(a.replace(
                "__rand_int__",
                &format!("{:012}", rng.below_scaled(r.wl.keyspace)),
            ));
        }
        let t = Instant::now();
        match c.query::<Value>(con) {
            Ok(Value::ServerError(e)) => result = Err(format!("{e:?}")),
            Err(e) => result = Err(e.to_string()),
            Ok(_) => {}
        }
        total += t.elapsed().as_secs_f64() * 1e6;
        if result.is_err() {
            break;
        }
    }
    restore_configs(con, &saved)?;
    result.map(|()| total / 30.0)
}

/// The warm-up of `plan` if any, then `plan.rounds` rounds; in each, every pipeline
/// of the plan; at each, every workload in table order (so a group runs back to
/// back, and the rounds alternate its workloads: A B A B). Each run goes through
/// `run` with the workload's configs set on `con`.
pub fn run_rounds(
    con: &mut redis::Connection,
    plan: &Plan,
    ready: &mut [Ready],
    results: &mut RbResults,
    problems: &mut Vec<String>,
    run: &mut Runner,
) -> Res<()> {
    if let Some(warm) = &plan.warmup {
        for r in ready.iter_mut().filter(|r| r.n > 0 && !r.broken) {
            let timed_n = r.n;
            r.n = warm.n;
            let pipeline = plan.pipelines[0];
            let res = one_run(con, r, pipeline, "warm-up", problems, run)?;
            r.n = match res {
                Some(res) => ((res.rps * warm.run_s) as u64).max(warm.n / 4),
                None => timed_n,
            };
        }
    }
    for round in 0..plan.rounds {
        for &pipeline in plan.pipelines {
            for r in ready.iter().filter(|r| r.n > 0 && !r.broken) {
                let what = format!("round {}/{}", round + 1, plan.rounds);
                if let Some(res) = one_run(con, r, pipeline, &what, problems, run)? {
                    results.entry((r.wl.name, pipeline)).or_default().push(res);
                }
            }
        }
    }
    Ok(())
}

/// One run of `r` through `run`, its configs set around it; its failure or error
/// replies go to `problems`.
fn one_run(
    con: &mut redis::Connection,
    r: &Ready,
    pipeline: usize,
    what: &str,
    problems: &mut Vec<String>,
    run: &mut Runner,
) -> Res<Option<RunResult>> {
    let name = r.wl.name;
    progress(&format!(
        "{what}: redis-benchmark {name} -P {pipeline} -n {} -r {}",
        r.n, r.wl.keyspace
    ));
    let saved = set_configs(con, r.wl.config)?;
    let res = run(con, r, pipeline);
    restore_configs(con, &saved)?;
    match res {
        Ok(res) => {
            if res.errors > 0 {
                problems.push(format!(
                    "{name} -P {pipeline} ({what}): {} error replies during the run",
                    res.errors
                ));
            }
            Ok(Some(res))
        }
        Err(e) => {
            problems.push(format!("{name} -P {pipeline} ({what}): {e}"));
            Ok(None)
        }
    }
}

/// The (article, visitor) views of the write-board prefill: one per article, then as
/// many Zipf-drawn, named as redis-benchmark's `__rand_int__` makes them.
fn write_views() -> Vec<(String, String)> {
    let n = RB_KEYSPACE as usize;
    let zipf = Zipf::new(n, 1.0);
    let mut rng = SplitMix(0x5EED_F111);
    let mut views: Vec<(String, String)> = (0..n)
        .map(|i| {
            (
                format!("art:{i:012}"),
                format!("vis:{:012}", zipf.sample(&mut rng)),
            )
        })
        .collect();
    for _ in 0..n {
        views.push((
            format!("art:{:012}", zipf.sample(&mut rng)),
            format!("vis:{:012}", zipf.sample(&mut rng)),
        ));
    }
    views
}

/// Fills the write-path boards before they are timed, the same way on both
/// sides: every one of the `RB_KEYSPACE` articles gets one view, then as
/// many views again go to Zipf-drawn articles (s = 1.0) from Zipf-drawn
/// visitors, through HOT.VIEW on [`WRITE_BOARD`] and through the Lua recipe
/// on its own keys, with the names redis-benchmark's `__rand_int__` makes.
/// The abnormal-traffic check is off during the fill, so the Zipf head's
/// visitors are not flagged before the runs start.
fn prefill_write_boards(port: u16, con: &mut redis::Connection, sha: &str) -> Res<(f64, f64)> {
    let saved = set_configs(con, &[KEEP_BOARD, ("hotrank.visitor-max-views", "0")])?;
    let mut c = connect(port, 0)?;
    let views = write_views();
    let dedup_s = DEDUP_SECONDS.to_string();
    let mut times = (0.0, 0.0);
    for lua in [false, true] {
        progress(&format!(
            "prefilling the {} write board: {} views",
            if lua { "Lua" } else { "HOT.VIEW" },
            views.len()
        ));
        let t = Instant::now();
        for chunk in views.chunks(1000) {
            let mut p = redis::pipe();
            for (a, v) in chunk {
                if lua {
                    p.cmd("EVALSHA")
                        .arg(sha)
                        .arg(5)
                        .arg(format!("lua:{{b}}:dd:{a}:{v}"))
                        .arg(format!("lua:{{b}}:pv:{a}"))
                        .arg(format!("lua:{{b}}:uv:{a}"))
                        .arg(format!("lua:{{b}}:meta:{a}"))
                        .arg("lua:{b}")
                        .arg(a)
                        .arg(v)
                        .arg(&dedup_s)
                        .ignore();
                } else {
                    p.cmd("HOT.VIEW").arg(WRITE_BOARD).arg(a).arg(v).ignore();
                }
            }
            p.query::<()>(&mut c)
                .map_err(|e| format!("prefill of the write boards: {e}"))?;
        }
        let secs = t.elapsed().as_secs_f64();
        if lua {
            times.1 = secs;
        } else {
            times.0 = secs;
        }
    }
    restore_configs(con, &saved)?;
    Ok(times)
}

/// What the redis-benchmark table measures, and the Lua recipe it is compared with.
fn print_rb_intro(version: &str, cfg: &Cfg) {
    let max_s = max_run_s(cfg);
    println!(
        "`{version}`, {RB_CLIENTS} clients, `-r {RB_KEYSPACE}` (every `__rand_int__` is \
         replaced by its own random number below {RB_KEYSPACE}), `-n {}` per run (less \
         for a command whose single-client latency would make the run last over \
         {max_s:.0} s: see the n column), pipelines 16 and 1, {} round(s), each group of \
         workloads run back to back; rps and latencies are \
         means over rounds. `srv µs/op` is the server's CPU time (INFO cpu, user+sys) \
         per command: it does not depend on how fast the client is. redis-benchmark \
         and the server share the 2 cores, so for the cheapest commands at `-P 16` the \
         client may be the bottleneck. `HOT.VIEW` runs on a board of {RB_KEYSPACE} \
         articles filled beforehand (one view each, then as many Zipf-drawn views; \
         the Lua recipe's keys are filled the same way) with every default except \
         `hotrank.max-articles`, raised so the board keeps all of them, like the Lua \
         recipe's ZSET. `abnormal-traffic check off` adds `hotrank.visitor-max-views \
         0` (the Lua recipe has no such check). `defaults (trims to 1000)` is the \
         module as installed, on a board limited to 1000 articles: on this workload \
         almost every view brings a new article, so the board is trimmed every 500 \
         views. `RANK.SET BEST` and `ZADD GT` write the fixed score 7 \
         (redis-benchmark's `__rand_int__` is zero-padded, which RANK.SET refuses as \
         an integer, as INCRBY does): a first write per member, then writes that keep \
         the best score.",
        cfg.rb_n, cfg.rounds
    );
    println!();
    println!(
        "The Lua recipe (EVALSHA, keys passed as KEYS with a hash tag): `SET dedup 1 NX EX \
         {DEDUP_SECONDS}` (stop if it exists), INCRBY pv, PFADD uv, PFCOUNT uv, TIME, HGET \
         meta publishedAt (HSET it to now if missing), the same decayed score in Lua, \
         ZADD. redis-benchmark draws each `__rand_int__` independently, so its dedup, \
         pv, uv and meta keys name different random articles; every key still sees the \
         same access pattern (uniform over {RB_KEYSPACE}) as HOT.VIEW's, so the cost per \
         call is the same as with matching names. The seed's plain script \
         (`examples/view_plain.lua`, row `{LUA_PLAIN_NAME}`) is the same without the \
         dedup `SET`, on the same keys."
    );
}
