//! Measurements from this Rust program: RANK.INCR against ZINCRBY and a client-side
//! lock recipe, and one RANK.MINCR of many members against one ZADD.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use redis::Value;

use crate::rb::{mean_result, server_counters, RunResult};
use crate::rng::SplitMix;
use crate::util::{connect, now_ms, progress, Summary};
use crate::{Cfg, Res, MINCR_MEMBERS, RB_CLIENTS, RB_KEYSPACE};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RustOp {
    RankIncr,
    Zincrby,
    Lock,
}

impl RustOp {
    pub fn name(self) -> &'static str {
        match self {
            RustOp::RankIncr => "RANK.INCR lb:{r} m 1",
            RustOp::Zincrby => "ZINCRBY zlb:{r} 1 m",
            RustOp::Lock => "lock: SET NX PX, ZSCORE, ZADD, DEL",
        }
    }
}

/// Results of the Rust client runs by op name: one (result, lock retries) per round.
pub type RustResults = BTreeMap<&'static str, Vec<(RunResult, u64)>>;

/// Mean over rounds of one op's results.
pub fn rust_mean(rust: &RustResults, op: RustOp) -> Option<RunResult> {
    rust.get(op.name())
        .map(|rs| mean_result(&rs.iter().map(|r| r.0.clone()).collect::<Vec<_>>()))
}

/// The Rust client section: runs every op `cfg.rounds` times, interleaved, and prints
/// its table.
pub fn rust_section(
    port: u16,
    con: &mut redis::Connection,
    cfg: &Cfg,
    problems: &mut Vec<String>,
) -> RustResults {
    println!();
    println!(
        "Rust client, {RB_CLIENTS} threads each with its own connection, pipeline 1, {} s per run, \
         {} round(s) interleaved, members uniform over {RB_KEYSPACE}. The lock recipe per \
         increment: `SET lk:{{r}}:lock:<member> <token> NX PX 100` (retry after 100 µs while \
         taken), `ZSCORE`, `ZADD` of the packed score (score·2^32 + reversed seconds since \
         2020), `DEL` the lock: 4 round trips. **Measured by this Rust client, not by \
         redis-benchmark**; RANK.INCR and ZINCRBY are measured the same way so the ratios \
         compare like with like.",
        cfg.rust_secs, cfg.rounds
    );
    println!();
    let mut rust = RustResults::new();
    for round in 0..cfg.rounds {
        for op in [RustOp::RankIncr, RustOp::Lock, RustOp::Zincrby] {
            progress(&format!(
                "round {}/{}: Rust client {}",
                round + 1,
                cfg.rounds,
                op.name()
            ));
            match rust_load(port, con, op, RB_CLIENTS, cfg.rust_secs) {
                Ok((r, retries)) => {
                    if r.errors > 0 {
                        problems.push(format!("Rust client {}: {} errors", op.name(), r.errors));
                    }
                    rust.entry(op.name()).or_default().push((r, retries));
                }
                Err(e) => problems.push(format!("Rust client {}: {e}", op.name())),
            }
        }
    }
    println!("| workload (Rust client) | ops/s | p50 ms | p99 ms | srv µs/op | lock retries |");
    println!("|---|---:|---:|---:|---:|---:|");
    for op in [RustOp::RankIncr, RustOp::Zincrby, RustOp::Lock] {
        if let (Some(m), Some(rs)) = (rust_mean(&rust, op), rust.get(op.name())) {
            let retries: u64 = rs.iter().map(|r| r.1).sum();
            println!(
                "| {} | {:.0} | {:.3} | {:.3} | {:.2} | {} |",
                op.name(),
                m.rps,
                m.p50,
                m.p99,
                m.srv_us,
                if op == RustOp::Lock {
                    retries.to_string()
                } else {
                    "–".to_string()
                }
            );
        }
    }
    rust
}

/// One operation of `op` on member `m` from connection `c`.
fn one_op(
    op: RustOp,
    c: &mut redis::Connection,
    m: &str,
    rng: &mut SplitMix,
    retries: &AtomicU64,
) -> redis::RedisResult<()> {
    match op {
        RustOp::RankIncr => redis::cmd("RANK.INCR")
            .arg("lb:{r}")
            .arg(m)
            .arg(1)
            .query::<i64>(c)
            .map(|_| ()),
        RustOp::Zincrby => redis::cmd("ZINCRBY")
            .arg("zlb:{r}")
            .arg(1)
            .arg(m)
            .query::<f64>(c)
            .map(|_| ()),
        RustOp::Lock => lock_incr(c, m, rng, retries),
    }
}

/// The client-side recipe RANK.INCR replaces: lock, read, write the packed score,
/// unlock. The packing (score·2^32 + reversed seconds since 2020) is restated here on
/// purpose, not taken from `hotrank::rank`: this is the baseline a site would write
/// itself, and it must not change when the module's packing does.
fn lock_incr(
    c: &mut redis::Connection,
    m: &str,
    rng: &mut SplitMix,
    retries: &AtomicU64,
) -> redis::RedisResult<()> {
    const EPOCH_2020: i64 = 1_577_836_800;
    let lock = format!("lk:{{r}}:lock:{m}");
    let token = rng.next().to_string();
    loop {
        let got: Option<String> = redis::cmd("SET")
            .arg(&lock)
            .arg(&token)
            .arg("NX")
            .arg("PX")
            .arg(100)
            .query(c)?;
        if got.is_some() {
            break;
        }
        retries.fetch_add(1, Ordering::Relaxed);
        thread::sleep(Duration::from_micros(100));
    }
    let old: Option<f64> = redis::cmd("ZSCORE").arg("lk:{r}").arg(m).query(c)?;
    let old_score = old.map_or(0.0, |p| (p / 4_294_967_296.0).floor());
    let secs = (now_ms() / 1000 - EPOCH_2020).clamp(0, u32::MAX as i64);
    let packed = (old_score + 1.0) * 4_294_967_296.0 + (u32::MAX as i64 - secs) as f64;
    redis::cmd("ZADD")
        .arg("lk:{r}")
        .arg(packed)
        .arg(m)
        .query::<i64>(c)?;
    redis::cmd("DEL").arg(&lock).query::<i64>(c)?;
    Ok(())
}

/// What the client threads share.
struct Shared {
    barrier: Barrier,
    stop: AtomicBool,
    retries: AtomicU64,
    errors: AtomicU64,
    first_err: Mutex<Option<String>>,
}

/// One client thread: `op` on uniform members until `stop`; returns latencies in ms.
fn client_loop(op: RustOp, tid: usize, mut c: redis::Connection, sh: &Shared) -> Vec<f64> {
    let mut rng = SplitMix(0xC0FFEE ^ (tid as u64).wrapping_mul(0x9E37_79B9));
    let mut lat: Vec<f64> = Vec::with_capacity(1 << 16);
    sh.barrier.wait();
    while !sh.stop.load(Ordering::Relaxed) {
        let m = format!("m:{:012}", rng.below_scaled(RB_KEYSPACE));
        let t = Instant::now();
        match one_op(op, &mut c, &m, &mut rng, &sh.retries) {
            Ok(()) => lat.push(t.elapsed().as_secs_f64() * 1e3),
            Err(e) => {
                sh.errors.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut g) = sh.first_err.lock() {
                    g.get_or_insert(e.to_string());
                }
                break;
            }
        }
    }
    lat
}

/// `clients` threads doing `op` for `secs` seconds; returns the result and lock retries.
fn rust_load(
    port: u16,
    con: &mut redis::Connection,
    op: RustOp,
    clients: usize,
    secs: f64,
) -> Res<(RunResult, u64)> {
    let mut cons = Vec::with_capacity(clients);
    for _ in 0..clients {
        cons.push(connect(port, 0)?);
    }
    let sh = Shared {
        barrier: Barrier::new(clients + 1),
        stop: AtomicBool::new(false),
        retries: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        first_err: Mutex::new(None),
    };
    let (cpu0, _) = server_counters(con)?;
    let (lat, elapsed) = thread::scope(|s| {
        let sh = &sh;
        let handles: Vec<_> = cons
            .into_iter()
            .enumerate()
            .map(|(tid, c)| s.spawn(move || client_loop(op, tid, c, sh)))
            .collect();
        sh.barrier.wait();
        let t0 = Instant::now();
        thread::sleep(Duration::from_secs_f64(secs));
        sh.stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for h in handles {
            if let Ok(l) = h.join() {
                all.extend(l);
            } else {
                sh.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        (all, t0.elapsed().as_secs_f64())
    });
    let (cpu1, _) = server_counters(con)?;
    if let Ok(Some(e)) = sh.first_err.into_inner() {
        return Err(format!("{}: {e}", op.name()));
    }
    let s = Summary::of(&lat);
    let ops = lat.len() as f64;
    Ok((
        RunResult {
            rps: ops / elapsed,
            p50: s.p50,
            p99: s.p99,
            srv_us: if ops > 0.0 {
                (cpu1 - cpu0) * 1e6 / ops
            } else {
                f64::NAN
            },
            replica: None,
            errors: sh.errors.into_inner(),
        },
        sh.retries.into_inner(),
    ))
}

/// Seconds taken by one `RANK.MINCR b 1 m0 … m79999` and by one `ZADD z 1 m0
/// … m79999` on fresh keys, each the best of 3 runs.
pub fn mincr_vs_zadd(con: &mut redis::Connection) -> Res<(f64, f64)> {
    progress("RANK.MINCR vs ZADD, 80,000 members");
    let mut best = (f64::MAX, f64::MAX);
    for run in 0..3 {
        let (b, z) = (format!("lb:{{mincr{run}}}"), format!("z:{{mincr{run}}}"));
        let mut mincr = redis::cmd("RANK.MINCR");
        mincr.arg(&b).arg(1);
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(&z);
        for i in 0..MINCR_MEMBERS {
            mincr.arg(format!("m{i}"));
            zadd.arg(1).arg(format!("m{i}"));
        }
        let t = Instant::now();
        let _: Value = mincr.query(con).map_err(|e| format!("RANK.MINCR: {e}"))?;
        best.0 = best.0.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let _: Value = zadd.query(con).map_err(|e| format!("ZADD: {e}"))?;
        best.1 = best.1.min(t.elapsed().as_secs_f64());
        let _: Value = redis::cmd("DEL")
            .arg(&b)
            .arg(&z)
            .query(con)
            .map_err(|e| format!("DEL: {e}"))?;
    }
    println!();
    println!(
        "One command with {MINCR_MEMBERS} members (best of 3): RANK.MINCR {:.3} s, ZADD {:.3} s.",
        best.0, best.1
    );
    Ok(best)
}
