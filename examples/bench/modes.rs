//! Section 5: the replication modes side by side, without a replica and with one.
//! For each `hotrank.replicate` mode ([`MODES`]), a fresh master (module loaded with
//! `replicate <mode>`), alone, then with one replica
//! (module loaded, `REPLICAOF` the master); the pairs of [`MODE_GROUPS`] run on the
//! master at pipeline 16, warmed up first, then in alternating rounds, each run
//! starting with the replica caught up; after each run, the replica's lag and how
//! long it took to apply the run.

use std::collections::BTreeMap;
use std::thread;
use std::time::{Duration, Instant};

use crate::rb::{redis_benchmark, server_counters, ReplicaRun, RunResult};
use crate::report;
use crate::server::{Options, SpawnedServer};
use crate::throughput::{
    prepare, rb_binary, rb_missing, run_rounds, script_load, Plan, RbResults, Ready, WarmUp,
};
use crate::util::{connect, info_num, info_section, info_suffix, progress};
use crate::workloads::{MODES, MODE_GROUPS, WRITE_BOARD};
use crate::{Cfg, Res, DEDUP_SECONDS, LUA_PLAIN, LUA_VIEW, RB_CLIENTS};

/// The pipeline of the section (redis-benchmark `-P 16`).
pub const MODE_PIPELINE: usize = 16;
/// Longest wait for the replica: link up after REPLICAOF, or caught up after a run.
const REPLICA_WAIT: Duration = Duration::from_secs(120);
/// The HOT boards compared between master and replica at the end of a mode.
const CHECKED_BOARDS: [&str; 2] = [WRITE_BOARD, "hot:{bench3}"];

/// One mode's workloads (as run) and results.
pub struct ModeRun {
    pub ready: Vec<Ready>,
    pub results: RbResults,
}

/// The section: both modes without a replica, then both with one, each a
/// labelled table (a replica on the same 2 cores takes CPU from the master,
/// and a master with a replica feeds a replication backlog: both views are
/// worth showing).
pub fn modes(cfg: &Cfg, problems: &mut Vec<String>) -> Res<()> {
    println!();
    println!("## Replication modes, without a replica and with one");
    println!();
    let (bin, version) = rb_binary();
    let Some(version) = version else {
        rb_missing(&bin, problems);
        return Ok(());
    };
    print_intro(&version, cfg);
    let started = Instant::now();
    for with_replica in [false, true] {
        let label = if with_replica {
            "with one replica attached"
        } else {
            "without a replica"
        };
        let mut runs = BTreeMap::new();
        for mode in MODES {
            match run_mode(&bin, mode, cfg, with_replica, problems) {
                Ok(run) => {
                    runs.insert(mode, run);
                }
                Err(e) => problems.push(format!(
                    "replication mode {mode}, {label}: {e}; not measured"
                )),
            }
        }
        println!();
        println!("### Replication modes, {label}");
        report::modes_table(&runs);
    }
    println!();
    println!(
        "This section took {:.0} s (servers, warm-ups, timed runs and catch-ups).",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn print_intro(version: &str, cfg: &Cfg) {
    println!(
        "`{version}`, {RB_CLIENTS} clients, `-P {MODE_PIPELINE}`. For each mode, a fresh \
         master started with `--loadmodule … replicate <mode>`: once alone (no replica, \
         no replication backlog), once with one replica (the module loaded, \
         `REPLICAOF` the master, `master_link_status:up`); all on these 2 cores, with \
         redis-benchmark; the two tables below are labelled. Every workload first runs once untimed \
         (`-n {}`: the steady state, its keys exist), which also sizes its timed runs \
         (about {:.0} s each); then {} rounds, each pair back to back (A B A B …); rps \
         and CPU are means over rounds. Before each run the replica has applied all the \
         master sent (equal `master_repl_offset`). `srv µs/op`: the master's CPU per \
         command; `replica µs/op`: the replica's CPU per command, from the start of the \
         run until it has applied all of it; `replica lag`: the bytes of replication \
         stream it had not yet applied when redis-benchmark ended, and how long it then \
         took to apply them (largest over rounds). The Lua baselines run on the same \
         master (the replica applies their effects). The steady-state HOT.VIEW runs with \
         `hotrank.max-articles 1000000` (like the Lua ZSET, the board keeps every \
         article) and `hotrank.visitor-max-views 1000000000` (the abnormal-traffic \
         check runs, but none of the 5,000 visitors goes over the limit, as the \
         default 60 an hour would make them all do before the end; the Lua recipe has \
         no such check), beside the Lua recipe and the seed's plain script on the same \
         5,000 articles and visitors; the long-tail HOT.VIEW with every default (trimmed to 1000 \
         articles) beside the plain script on 100,000 articles, shown with no target, since \
         HOT.VIEW does work there the script does not (trimming, retention, the article \
         index, dedup); the dedup window is {DEDUP_SECONDS} s on both sides. RANK.INCR and \
         ZINCRBY draw members from 100,000.",
        cfg.modes_warmup, cfg.modes_run_s, cfg.modes_rounds
    );
}

/// One mode: its servers, its runs, and (`with_replica`) a check that the
/// replica holds what the master holds.
fn run_mode(
    bin: &str,
    mode: &'static str,
    cfg: &Cfg,
    with_replica: bool,
    problems: &mut Vec<String>,
) -> Res<ModeRun> {
    progress(&format!(
        "replication mode {mode}: starting the master{}",
        if with_replica { " and a replica" } else { "" }
    ));
    let master = SpawnedServer::start_with(Options {
        private_dir: true,
        stderr_tag: Some("bench"),
        // No 5-second wait before the replica's full sync.
        server_args: &["--repl-diskless-sync-delay", "0"],
        module_args: &["replicate", mode],
    })?;
    let port = master.port;
    let mut con = connect(port, 0)?;
    let shown: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("hotrank.replicate")
        .query(&mut con)
        .map_err(|e| format!("CONFIG GET hotrank.replicate: {e}"))?;
    if shown.get(1).map(String::as_str) != Some(mode) {
        return Err(format!("the master reports hotrank.replicate {shown:?}"));
    }
    let replica = if with_replica {
        let replica = SpawnedServer::start_with(Options {
            private_dir: true,
            stderr_tag: Some("bench"),
            ..Options::default()
        })?;
        let mut rcon = connect(replica.port, 0)?;
        attach(&mut rcon, port)?;
        Some((replica, rcon))
    } else {
        None
    };
    let sha = script_load(&mut con, LUA_VIEW, "the Lua HOT.VIEW recipe")?;
    let sha_plain = script_load(&mut con, LUA_PLAIN, "the plain seed script")?;
    let mut ready = prepare(&mut con, cfg, MODE_GROUPS, &sha, &sha_plain, problems)?;
    let plan = Plan {
        rounds: cfg.modes_rounds,
        pipelines: &[MODE_PIPELINE],
        warmup: Some(WarmUp {
            n: cfg.modes_warmup,
            run_s: cfg.modes_run_s,
        }),
    };
    let mut results = RbResults::new();
    let (replica, mut rcon) = match replica {
        Some((s, c)) => (Some(s), Some(c)),
        None => (None, None),
    };
    let mut run = |con: &mut redis::Connection, r: &Ready, pipeline: usize| match rcon.as_mut() {
        Some(rcon) => run_with_replica(bin, port, con, rcon, r, pipeline),
        None => redis_benchmark(bin, port, con, &r.args, r.n, pipeline, r.wl.keyspace),
    };
    run_rounds(
        &mut con,
        &plan,
        &mut ready,
        &mut results,
        problems,
        &mut run,
    )?;
    if let Some(rcon) = rcon.as_mut() {
        // A key the master expires between the two reads would differ once: try again.
        let mut same = Err(String::new());
        for _ in 0..3 {
            wait_caught_up(&mut con, rcon)?;
            same = same_data(&mut con, rcon);
            if same.is_ok() {
                break;
            }
        }
        if let Err(e) = same {
            problems.push(format!(
                "mode {mode}: the replica differs from the master: {e}"
            ));
        }
    }
    let hot = info_section(&mut con, "hotrank")?;
    let errors = info_suffix(&hot, "errors").unwrap_or(0.0);
    if errors > 0.0 {
        problems.push(format!(
            "mode {mode}: INFO hotrank reports errors:{errors} on the master"
        ));
    }
    drop(replica);
    drop(master);
    Ok(ModeRun { ready, results })
}

/// Makes the server behind `rcon` a replica of the master on `port` and waits until
/// its link is up.
fn attach(rcon: &mut redis::Connection, port: u16) -> Res<()> {
    redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(port)
        .query::<()>(rcon)
        .map_err(|e| format!("REPLICAOF 127.0.0.1 {port}: {e}"))?;
    let deadline = Instant::now() + REPLICA_WAIT;
    loop {
        let info = info_section(rcon, "replication")?;
        if info.get("master_link_status").map(String::as_str) == Some("up") {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the replica's link to the master is not up after {} s",
                REPLICA_WAIT.as_secs()
            ));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

fn repl_offset(con: &mut redis::Connection) -> Res<u64> {
    info_num(con, "replication", "master_repl_offset")
}

/// Waits until the replica has applied everything the master has sent (its
/// `master_repl_offset` reaches the master's); returns how long that took (s).
fn wait_caught_up(con: &mut redis::Connection, rcon: &mut redis::Connection) -> Res<f64> {
    let t = Instant::now();
    let target = repl_offset(con)?;
    loop {
        if repl_offset(rcon)? >= target {
            return Ok(t.elapsed().as_secs_f64());
        }
        if t.elapsed() > REPLICA_WAIT {
            return Err(format!(
                "the replica did not catch up within {} s",
                REPLICA_WAIT.as_secs()
            ));
        }
        thread::sleep(Duration::from_millis(2));
    }
}

/// One redis-benchmark run on the master with the replica caught up before it;
/// afterwards the replica's lag, how long it took to catch up, and its CPU.
fn run_with_replica(
    bin: &str,
    port: u16,
    con: &mut redis::Connection,
    rcon: &mut redis::Connection,
    r: &Ready,
    pipeline: usize,
) -> Res<RunResult> {
    wait_caught_up(con, rcon)?;
    let (cpu0, _) = server_counters(rcon)?;
    let mut res = redis_benchmark(bin, port, con, &r.args, r.n, pipeline, r.wl.keyspace)?;
    let lag = repl_offset(con)?.saturating_sub(repl_offset(rcon)?);
    let catchup_s = wait_caught_up(con, rcon)?;
    let (cpu1, _) = server_counters(rcon)?;
    res.replica = Some(ReplicaRun {
        cpu_us: (cpu1 - cpu0) * 1e6 / r.n as f64,
        lag_bytes: lag as f64,
        catchup_s,
    });
    Ok(res)
}

/// The replica holds what the master holds: the same number of keys, and the same
/// top 20 with scores on the HOT boards.
fn same_data(con: &mut redis::Connection, rcon: &mut redis::Connection) -> Res<()> {
    let dbsize = |c: &mut redis::Connection| -> Res<i64> {
        redis::cmd("DBSIZE")
            .query(c)
            .map_err(|e| format!("DBSIZE: {e}"))
    };
    let (m, r) = (dbsize(con)?, dbsize(rcon)?);
    if m != r {
        return Err(format!("DBSIZE {m} on the master, {r} on the replica"));
    }
    for board in CHECKED_BOARDS {
        let top = |c: &mut redis::Connection| -> Res<Vec<String>> {
            redis::cmd("ZREVRANGE")
                .arg(board)
                .arg(0)
                .arg(19)
                .arg("WITHSCORES")
                .query(c)
                .map_err(|e| format!("ZREVRANGE {board}: {e}"))
        };
        let (m, r) = (top(con)?, top(rcon)?);
        if m != r {
            return Err(format!(
                "top 20 of {board}: {m:?} on the master, {r:?} on the replica"
            ));
        }
    }
    Ok(())
}
