//! Benchmark of the hotrank module against the plain-Redis ways of doing the same work.
//!
//! ```text
//! make bench                                   # full run (about 5-10 minutes on 2 cores)
//! BENCH_QUICK=1 cargo run --release --example bench   # smoke run, sizes shrunk 10x
//! ```
//!
//! It starts its own server on a free loopback port (no persistence, module loaded),
//! and prints a Markdown report on stdout; progress goes to stderr. Sections:
//! 1. machine and server;
//! 2. `HOT.TOP` latency vs `ZREVRANGE` on a board of 1,000,000 articles filled with
//!    Zipf-distributed views, plus an exactness check against a client-side brute force;
//! 3. memory: dedup bytes per active (article, visitor) pair, bytes per article;
//! 4. throughput with `redis-benchmark` (HOT.VIEW vs an equivalent Lua script, bare
//!    ZADD/INCR/PFADD, RANK.INCR (plain and with day/week/month period boards) vs
//!    ZINCRBY, RANK.SET BEST vs ZADD GT, HOT.TOP vs ZREVRANGE) and, from a Rust
//!    client, RANK.INCR vs a client-side lock recipe; then the issue's targets.
//!
//! Environment:
//! - `HOTRANK_SERVER`    server binary (default `redis-server`; a valkey-server works too).
//! - `HOTRANK_MODULE`    module to load (default `<crate>/target/release/libhotrank.so`).
//! - `HOTRANK_BENCHMARK` redis-benchmark binary (default `redis-benchmark` from PATH).
//! - `BENCH_QUICK=1`     shrink every size 10x for a smoke run.
//!
//! Exit codes: 0 ok (the report lists any problem met on the way), 1 fatal error.

use std::collections::BTreeMap;
use std::env;
use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use redis::Value;

type Res<T> = Result<T, String>;

/// The 1M-article board of section 2 (also used by HOT.TOP in section 4).
const BOARD: &str = "hot:{bench}";
/// The small board whose top lists are checked against a client-side brute force.
const EXACT_BOARD: &str = "hot:{exact}";
/// The dedup-memory board (in database 1, so SCAN only walks its keys).
const DD_BOARD: &str = "hot:{dd}";
const DD_DB: u32 = 1;
/// The RANK board with day, week and month boards (section 4).
const PERIOD_BOARD: &str = "plb:{b}";
/// Its RANK.INCR workload: four ZSETs written per command.
const PERIOD_INCR: &str = "RANK.INCR, PERIODS day week month";
/// Commands per pipeline when filling boards.
const BATCH: usize = 1000;
/// Connections that fill boards in parallel (the machine has 2 cores).
const FILL_THREADS: usize = 2;
const HOUR_MS: f64 = 3_600_000.0;
const DAY_MS: i64 = 86_400_000;
/// The module's default formula: (alpha·pv + beta·uv) / (hours + base)^gamma.
const ALPHA: f64 = 1.0;
const BETA: f64 = 1.2;
const BASE: f64 = 2.0;
const GAMMA: f64 = 1.5;
/// redis-benchmark settings.
const RB_CLIENTS: usize = 50;
const RB_KEYSPACE: u64 = 100_000;
/// Hard limit on one redis-benchmark run.
const RB_TIMEOUT_S: u64 = 150;
/// Dedup window the Lua script uses (the module's default `hotrank.dedup-seconds`).
const DEDUP_SECONDS: u64 = 900;

/// The Lua recipe HOT.VIEW replaces, as sites run it.
/// KEYS: 1 dedup marker, 2 pv counter, 3 uv HyperLogLog, 4 meta hash, 5 board ZSET.
/// ARGV: 1 article, 2 visitor, 3 dedup seconds.
const LUA_VIEW: &str = include_str!("view.lua");
/// The seed's plain script: the recipe without dedup.
const LUA_PLAIN: &str = include_str!("view_plain.lua");
/// Name of the plain seed script's workload.
const LUA_PLAIN_NAME: &str = "Lua EVALSHA, seed script (no dedup)";

/// Sizes of one run.
struct Cfg {
    quick: bool,
    articles: usize,
    views: usize,
    visitors: u64,
    exact_articles: usize,
    dd_articles: usize,
    dd_visitors: usize,
    top_iters: usize,
    top_cap: Duration,
    rb_n: u64,
    rounds: usize,
    rust_secs: f64,
}

impl Cfg {
    fn from_env() -> Cfg {
        let quick = env::var("BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
        let d = if quick { 10 } else { 1 };
        Cfg {
            quick,
            articles: 1_000_000 / d,
            views: 3_000_000 / d,
            visitors: 1_000_000 / d as u64,
            exact_articles: 20_000,
            dd_articles: 1000 / d,
            dd_visitors: 1000,
            top_iters: 2000 / d,
            top_cap: Duration::from_secs(if quick { 8 } else { 30 }),
            rb_n: 200_000 / d as u64,
            rounds: if quick { 1 } else { 2 },
            rust_secs: if quick { 2.0 } else { 6.0 },
        }
    }
}

fn main() -> ExitCode {
    let started = Instant::now();
    let cfg = Cfg::from_env();
    let mut problems = Vec::new();
    let result = run(&cfg, &mut problems);
    println!();
    println!("## Problems");
    println!();
    if let Err(e) = &result {
        problems.push(format!("FATAL: {e}"));
    }
    if problems.is_empty() {
        println!("none: every command answered without error.");
    } else {
        for p in &problems {
            println!("- {p}");
        }
    }
    println!();
    println!(
        "Load average at the end (1, 5, 15 min): {}. A 1-minute load well above the 1.0 \
         the bench itself adds means other processes shared the 2 cores: treat the numbers \
         as noisy then.",
        loadavg()
    );
    println!();
    println!(
        "Total bench time: {:.1} s ({} mode).",
        started.elapsed().as_secs_f64(),
        if cfg.quick { "BENCH_QUICK" } else { "full" }
    );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn progress(msg: &str) {
    eprintln!("[bench] {msg}");
}

fn run(cfg: &Cfg, problems: &mut Vec<String>) -> Res<()> {
    PIPE_BUDGET_S.store(if cfg.quick { 120 } else { 420 }, Ordering::Relaxed);
    let server = SpawnedServer::start()?;
    let port = server.port;
    let mut con = connect(port, 0)?;

    println!("# hotrank benchmark");
    println!();
    println!(
        "Mode: {}. Report generated at unix time {}.",
        if cfg.quick {
            "BENCH_QUICK=1 (sizes shrunk 10x: a smoke run, not for comparison)"
        } else {
            "full"
        },
        now_ms() / 1000
    );
    println!();
    println!("## Machine and server");
    println!();
    for line in machine_info() {
        println!("- {line}");
    }
    let info = info_section(&mut con, "server")?;
    println!(
        "- server: `{}` ({}), redis_version {}{}",
        server.binary,
        info.get("server_name").map_or("redis", String::as_str),
        info.get("redis_version").map_or("?", String::as_str),
        info.get("valkey_version")
            .map(|v| format!(", valkey_version {v}"))
            .unwrap_or_default()
    );
    println!("- module: `{}`", server.module.display());
    println!(
        "- server started with `--save '' --appendonly no`, port {port}, all clients on loopback"
    );

    // ---------------------------------------------------------------- section 2
    println!();
    println!("## HOT.TOP vs ZREVRANGE (target: HOT.TOP within 10x of ZREVRANGE)");
    println!();
    let end_ms = now_ms() - 60_000;
    let ds = Dataset::generate(cfg.articles, cfg.views, cfg.visitors, end_ms, 0x5eed_0001);
    // A board of a million articles needs trimming off (hotrank.max-articles 0).
    let saved = set_config(&mut con, "hotrank.max-articles", "0")?;
    let fill = fill_board(port, BOARD, &ds);
    restore_config(&mut con, "hotrank.max-articles", &saved)?;
    let fill = fill?;
    println!(
        "Board `{BOARD}`: {} articles published uniformly over the last 30 days (HOT.PUBLISH, \
         times in the past); {} views sent with `HOT.VIEW … AT t` in time order, t after the \
         article's publish time: one per article plus {} drawn Zipf(s=1.0) over the articles; \
         visitors uniform over a pool of {}. Pipelines of {BATCH}, {FILL_THREADS} connections. {}",
        cfg.articles,
        ds.views.len(),
        ds.views.len() - cfg.articles,
        cfg.visitors,
        match &saved {
            Some(old) => format!(
                "Filled with `hotrank.max-articles 0` (no trimming; the default {old} would \
                 keep only the top {old}), restored to {old} afterwards."
            ),
            None => "(This module build has no hotrank.max-articles config.)".to_string(),
        }
    );
    println!();
    println!(
        "- fill time: publish {:.1} s ({:.0} cmd/s), views {:.1} s ({:.0} views/s)",
        fill.publish_s,
        cfg.articles as f64 / fill.publish_s,
        fill.views_s,
        ds.views.len() as f64 / fill.views_s
    );
    println!(
        "- views counted {}, duplicate {}; ZCARD {}; most views on one article: {}",
        fill.counted,
        fill.duplicate,
        zcard(&mut con, BOARD)?,
        ds.max_views_per_article()
    );
    if fill.counted + fill.duplicate != ds.views.len() as u64 {
        problems.push(format!(
            "fill: {} views sent but only {} counted + {} duplicate replies",
            ds.views.len(),
            fill.counted,
            fill.duplicate
        ));
    }
    let mem = info_section(&mut con, "memory")?;
    println!(
        "- server used_memory after the fill: {}",
        mem.get("used_memory_human").map_or("?", String::as_str)
    );
    let top_means = top_latency(&mut con, cfg, problems)?;

    // Exactness on a 20,000-article sample board.
    println!();
    exactness(port, &mut con, cfg, problems)?;

    // ---------------------------------------------------------------- section 3
    println!();
    println!("## Memory");
    println!();
    dedup_memory(port, cfg, problems)?;
    println!();
    article_memory(port, &mut con, cfg, problems)?;

    // ---------------------------------------------------------------- section 4
    println!();
    throughput(port, &mut con, cfg, top_means, problems)?;

    // Module error counters, as a last cross-check.
    let hot = info_section(&mut con, "hotrank")?;
    let errors = info_suffix(&hot, "errors").unwrap_or(0.0);
    let panics = info_suffix(&hot, "panics_caught").unwrap_or(0.0);
    if errors > 0.0 || panics > 0.0 {
        problems.push(format!(
            "INFO hotrank reports errors:{errors} panics_caught:{panics} over the whole run \
             (some are expected: none of the workloads above should produce any)"
        ));
    }
    drop(server);
    Ok(())
}

// ====================================================================== data set

/// Articles with publish times and views `(t_ms, article, visitor)` sorted by time.
struct Dataset {
    pub_ms: Vec<i64>,
    views: Vec<(i64, u32, u32)>,
}

impl Dataset {
    /// `articles` published uniformly over the 30 days before `end_ms`; one view per
    /// article, the rest Zipf(1.0) over articles (rank → article by a random
    /// permutation); each view at a uniform time between publication and `end_ms`.
    fn generate(articles: usize, views: usize, visitors: u64, end_ms: i64, seed: u64) -> Self {
        let mut rng = Rng(seed);
        let span = 30 * DAY_MS - 120_000;
        let pub_ms: Vec<i64> = (0..articles)
            .map(|_| end_ms - 30 * DAY_MS + (rng.f64() * span as f64) as i64)
            .collect();
        let mut perm: Vec<u32> = (0..articles as u32).collect();
        for i in (1..perm.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
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
            let t = p + (rng.f64() * (end_ms - p) as f64) as i64;
            out.push((t, a as u32, rng.below(visitors) as u32));
        }
        out.sort_unstable();
        Dataset { pub_ms, views: out }
    }

    fn max_views_per_article(&self) -> u64 {
        let mut counts = vec![0u64; self.pub_ms.len()];
        for v in &self.views {
            counts[v.1 as usize] += 1;
        }
        counts.into_iter().max().unwrap_or(0)
    }
}

fn article(i: u32) -> String {
    format!("art:{i}")
}

fn visitor(i: u32) -> String {
    format!("vis:{i}")
}

/// SplitMix64: small, fast and reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [0, n).
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }
}

/// Zipf over ranks 0..n (rank k has weight 1/(k+1)^s), by inverse CDF.
struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: usize, s: f64) -> Self {
        let mut acc = 0.0;
        let cdf = (1..=n)
            .map(|k| {
                acc += 1.0 / (k as f64).powf(s);
                acc
            })
            .collect();
        Zipf { cdf }
    }

    fn sample(&self, rng: &mut Rng) -> usize {
        let total = self.cdf.last().copied().unwrap_or(0.0);
        let u = rng.f64() * total;
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.cdf.len().saturating_sub(1))
    }
}

// ====================================================================== filling

struct Fill {
    publish_s: f64,
    views_s: f64,
    counted: u64,
    duplicate: u64,
}

fn fill_board(port: u16, board: &str, ds: &Dataset) -> Res<Fill> {
    progress(&format!(
        "filling {board}: {} HOT.PUBLISH, {} HOT.VIEW",
        ds.pub_ms.len(),
        ds.views.len()
    ));
    let t0 = Instant::now();
    pipelined(
        port,
        0,
        ds.pub_ms.len(),
        "HOT.PUBLISH",
        &|p, i| {
            p.cmd("HOT.PUBLISH")
                .arg(board)
                .arg(article(i as u32))
                .arg(fmt_ms(ds.pub_ms[i]));
        },
        &|i, v| match v {
            Value::Int(_) => Ok(()),
            other => Err(format!(
                "HOT.PUBLISH {board} {} {}: {}",
                article(i as u32),
                fmt_ms(ds.pub_ms[i]),
                describe(other)
            )),
        },
    )?;
    let publish_s = t0.elapsed().as_secs_f64();
    let (counted, duplicate) = (AtomicU64::new(0), AtomicU64::new(0));
    let t1 = Instant::now();
    pipelined(
        port,
        0,
        ds.views.len(),
        "HOT.VIEW",
        &|p, i| {
            let (t, a, v) = ds.views[i];
            p.cmd("HOT.VIEW")
                .arg(board)
                .arg(article(a))
                .arg(visitor(v))
                .arg("AT")
                .arg(fmt_ms(t));
        },
        &|i, v| {
            let (t, a, vis) = ds.views[i];
            match view_status(v) {
                Ok(s) if s == "counted" => {
                    counted.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                }
                Ok(s) if s == "duplicate" => {
                    duplicate.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                }
                Ok(s) => Err(format!("unexpected status {s:?}")),
                Err(e) => Err(e),
            }
            .map_err(|e| {
                format!(
                    "HOT.VIEW {board} {} {} AT {}: {e}",
                    article(a),
                    visitor(vis),
                    fmt_ms(t)
                )
            })
        },
    )?;
    Ok(Fill {
        publish_s,
        views_s: t1.elapsed().as_secs_f64(),
        counted: counted.into_inner(),
        duplicate: duplicate.into_inner(),
    })
}

type Build<'a> = &'a (dyn Fn(&mut redis::Pipeline, usize) + Sync);
type Check<'a> = &'a (dyn Fn(usize, &Value) -> Res<()> + Sync);

/// Sends commands `0..total` (built by `build`) in pipelines of BATCH over
/// FILL_THREADS connections to database `db`, and checks every reply.
/// Longest a single `pipelined` job may be projected to take (seconds), so that a
/// pathologically slow module build makes the bench stop with a clear error
/// instead of running for hours. Set from `Cfg` at start.
static PIPE_BUDGET_S: AtomicU64 = AtomicU64::new(600);

fn pipelined(port: u16, db: u32, total: usize, what: &str, build: Build, check: Check) -> Res<()> {
    let failed = AtomicBool::new(false);
    let first_err: Mutex<Option<String>> = Mutex::new(None);
    let batches = total.div_ceil(BATCH);
    let done = AtomicU64::new(0);
    let started = Instant::now();
    let budget = PIPE_BUDGET_S.load(Ordering::Relaxed) as f64;
    let (failed_r, first_err_r, done_r) = (&failed, &first_err, &done);
    thread::scope(|s| {
        for j in 0..FILL_THREADS {
            s.spawn(move || {
                let r = (|| -> Res<()> {
                    let mut con = connect(port, db)?;
                    let mut pipe = redis::pipe();
                    pipe.ignore_errors();
                    let mut b = j;
                    while b < batches && !failed_r.load(Ordering::Relaxed) {
                        pipe.clear();
                        let (lo, hi) = (b * BATCH, ((b + 1) * BATCH).min(total));
                        for i in lo..hi {
                            build(&mut pipe, i);
                        }
                        let replies: Vec<Value> = pipe
                            .query(&mut con)
                            .map_err(|e| format!("sending a pipeline of {what}: {e}"))?;
                        if replies.len() != hi - lo {
                            return Err(format!(
                                "pipeline of {} {what} got {} replies",
                                hi - lo,
                                replies.len()
                            ));
                        }
                        for (k, v) in replies.iter().enumerate() {
                            check(lo + k, v)?;
                        }
                        let n = done_r.fetch_add((hi - lo) as u64, Ordering::Relaxed)
                            + (hi - lo) as u64;
                        let el = started.elapsed().as_secs_f64();
                        let projected = el * total as f64 / n as f64;
                        if el > 15.0 && projected > budget {
                            return Err(format!(
                                "{what} is far too slow: {n} of {total} commands in {el:.0} s \
                                 ({:.0}/s), the whole job would take about {projected:.0} s \
                                 (budget {budget:.0} s); aborting the bench",
                                n as f64 / el
                            ));
                        }
                        b += FILL_THREADS;
                    }
                    Ok(())
                })();
                if let Err(e) = r {
                    failed_r.store(true, Ordering::Relaxed);
                    if let Ok(mut g) = first_err_r.lock() {
                        g.get_or_insert(e);
                    }
                }
            });
        }
    });
    match first_err.into_inner() {
        Ok(Some(e)) => Err(e),
        Ok(None) => Ok(()),
        Err(_) => Err(format!("a {what} sender thread panicked")),
    }
}

// ====================================================================== HOT.TOP latency

/// Mean single-client latency (µs) of one HOT.TOP variant and of ZREVRANGE.
struct TopMeans {
    label: &'static str,
    hot_us: f64,
    zrev_us: f64,
}

fn top_latency(
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
        let before = info_section(con, "hotrank")?;
        let (a, b) = measure_pair(con, &hot, &zrev, cfg.top_iters, cfg.top_cap)
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
        means.push(TopMeans {
            label,
            hot_us: sa.mean,
            zrev_us: sb.mean,
        });
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

struct Summary {
    p50: f64,
    p99: f64,
    mean: f64,
}

impl Summary {
    fn of(v: &[f64]) -> Summary {
        if v.is_empty() {
            return Summary {
                p50: f64::NAN,
                p99: f64::NAN,
                mean: f64::NAN,
            };
        }
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let q = |p: f64| s[((s.len() as f64 * p).ceil() as usize).clamp(1, s.len()) - 1];
        Summary {
            p50: q(0.50),
            p99: q(0.99),
            mean: s.iter().sum::<f64>() / s.len() as f64,
        }
    }
}

// ====================================================================== exactness

/// Score of the module's default formula, computed on the client.
fn client_score(pv: i64, uv: i64, pub_ms: i64, at_ms: i64) -> f64 {
    let hours = ((at_ms - pub_ms) as f64 / HOUR_MS).max(0.0);
    (ALPHA * pv as f64 + BETA * uv as f64) / (hours + BASE).powf(GAMMA)
}

fn exactness(
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
    let stats: Mutex<Vec<Option<(i64, i64, i64)>>> = Mutex::new(vec![None; n]);
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
                .arg(&at);
        },
        &|i, v| {
            let m = pairs(v)
                .map_err(|e| format!("HOT.STATS {EXACT_BOARD} {}: {e}", article(i as u32)))?;
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
    let stats = stats
        .into_inner()
        .map_err(|_| "HOT.STATS collector poisoned".to_string())?;
    println!(
        "Exactness: board `{EXACT_BOARD}` with {n} articles and {} views (same generator); for \
         every article pv, uv and published_at were fetched with HOT.STATS (pipelined), the score \
         `(1.0·pv + 1.2·uv) / (max(0, (at−pub)/3600000 ms) + 2)^1.5` was computed on the client at \
         AT {at}, and the brute-force top 20 (ties by article id) was compared with \
         `HOT.TOP {EXACT_BOARD} LIMIT 20 [WINDOW w] WITHSCORES AT {at}` (board filled with \
         `hotrank.max-articles 0`).",
        ds.views.len()
    );
    println!();
    let mut all_exact = true;
    for (label, window_ms) in [
        ("no window", None),
        ("WINDOW 72h", Some(72 * 3_600_000i64)),
        ("WINDOW 1h", Some(3_600_000i64)),
    ] {
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
                Some((article(i as u32), client_score(pv, uv, p, at_ms)))
            })
            .collect();
        expect.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        expect.truncate(20);
        let mut cmd = redis::cmd("HOT.TOP");
        cmd.arg(EXACT_BOARD).arg("LIMIT").arg(20);
        if let Some(w) = window_ms {
            cmd.arg("WINDOW").arg(format!("{}", w / 1000));
        }
        cmd.arg("WITHSCORES").arg("AT").arg(&at);
        let got = cmd
            .query::<Value>(con)
            .map_err(|e| format!("HOT.TOP {EXACT_BOARD} ({label}): {e}"))?;
        let got = flat_pairs(&got).map_err(|e| format!("HOT.TOP {EXACT_BOARD} ({label}): {e}"))?;
        let ids_same =
            got.len() == expect.len() && got.iter().zip(&expect).all(|(g, e)| g.0 == e.0);
        let mut max_rel = 0.0f64;
        let mut bits_same = ids_same;
        for (g, e) in got.iter().zip(&expect) {
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
        all_exact &= exact;
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
    }
    println!();
    println!("**exact: {}**", yes(all_exact));
    Ok(())
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

// ====================================================================== memory

/// Keys of database `db` whose name starts with `prefix` (binary), by SCAN MATCH.
fn scan_prefix(con: &mut redis::Connection, prefix: &[u8]) -> Res<Vec<Vec<u8>>> {
    let mut pattern = Vec::with_capacity(prefix.len() + 1);
    for &b in prefix {
        if matches!(b, b'*' | b'?' | b'[' | b']' | b'\\') {
            pattern.push(b'\\');
        }
        pattern.push(b);
    }
    pattern.push(b'*');
    let mut keys = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let (next, batch): (String, Vec<Vec<u8>>) = redis::cmd("SCAN")
            .arg(&cursor)
            .arg("MATCH")
            .arg(&pattern[..])
            .arg("COUNT")
            .arg(10_000)
            .query(con)
            .map_err(|e| format!("SCAN MATCH {}: {e}", String::from_utf8_lossy(&pattern)))?;
        keys.extend(batch);
        if next == "0" {
            break;
        }
        cursor = next;
    }
    keys.sort();
    keys.dedup();
    Ok(keys)
}

/// Sum of MEMORY USAGE (SAMPLES 0: exact for aggregates) over `keys` in database `db`.
fn memory_usage(port: u16, db: u32, keys: &[Vec<u8>]) -> Res<u64> {
    let sum = AtomicU64::new(0);
    pipelined(
        port,
        db,
        keys.len(),
        "MEMORY USAGE",
        &|p, i| {
            p.cmd("MEMORY")
                .arg("USAGE")
                .arg(&keys[i][..])
                .arg("SAMPLES")
                .arg(0);
        },
        &|i, v| match v {
            Value::Int(n) => {
                sum.fetch_add(*n as u64, Ordering::Relaxed);
                Ok(())
            }
            Value::Nil => Ok(()), // expired or deleted meanwhile
            other => Err(format!(
                "MEMORY USAGE {}: {}",
                String::from_utf8_lossy(&keys[i]).replace('\0', "\\x00"),
                describe(other)
            )),
        },
    )?;
    Ok(sum.into_inner())
}

fn derived(board: &str, suffix: &str, id: &str) -> Vec<u8> {
    let mut k = board.as_bytes().to_vec();
    k.push(0);
    k.extend_from_slice(suffix.as_bytes());
    k.extend_from_slice(id.as_bytes());
    k
}

fn dedup_memory(port: u16, cfg: &Cfg, problems: &mut Vec<String>) -> Res<()> {
    let (na, nv) = (cfg.dd_articles, cfg.dd_visitors);
    let pairs_n = na * nv;
    // Each visitor views PER_VISITOR different articles, so no visitor crosses the
    // module's abnormal-traffic limit (hotrank.visitor-max-views, 60 an hour by default);
    // every article still gets `nv` distinct visitors.
    const PER_VISITOR: usize = 50;
    let pair = move |i: usize| -> (String, String) {
        let (v, k) = (i / PER_VISITOR, i % PER_VISITOR);
        (
            article(((v * PER_VISITOR + k) % na) as u32),
            visitor(v as u32),
        )
    };
    progress(&format!(
        "dedup memory: {pairs_n} distinct pairs on {DD_BOARD}"
    ));
    let mut con = connect(port, DD_DB)?;
    let used_before = info_num(&mut con, "memory", "used_memory")?;
    let (counted, other) = (AtomicU64::new(0), AtomicU64::new(0));
    let t = Instant::now();
    pipelined(
        port,
        DD_DB,
        pairs_n,
        "HOT.VIEW",
        &|p, i| {
            let (a, v) = pair(i);
            p.cmd("HOT.VIEW").arg(DD_BOARD).arg(a).arg(v);
        },
        &|i, v| match view_status(v) {
            Ok(s) if s == "counted" => {
                counted.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Ok(_) => {
                other.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                let (a, v) = pair(i);
                Err(format!("HOT.VIEW {DD_BOARD} {a} {v}: {e}"))
            }
        },
    )?;
    let fill_s = t.elapsed().as_secs_f64();
    let used_after = info_num(&mut con, "memory", "used_memory")?;
    let counted = counted.into_inner();
    if counted != pairs_n as u64 {
        problems.push(format!(
            "dedup board: {pairs_n} distinct pairs sent, {counted} counted, {} duplicate or \
             suspicious",
            other.into_inner()
        ));
    }
    println!(
        "Dedup state: {pairs_n} HOT.VIEW with distinct (article, visitor) pairs ({na} articles × \
         {nv} distinct visitors each; {} visitors viewing {PER_VISITOR} articles each, under \
         the abnormal-traffic limit; view time = now, so every pair is active) on `{DD_BOARD}` \
         (database {DD_DB}), sent in {fill_s:.1} s; {counted} counted. Module defaults \
         (hotrank.dedup-shards etc.).",
        pairs_n / PER_VISITOR
    );
    println!();
    println!("| dedup keys | count | MEMORY USAGE sum | bytes per active pair |");
    println!("|---|---:|---:|---:|");
    let mut total = 0u64;
    let mut found_any = false;
    for suffix in ["seen:", "dd:"] {
        let prefix = derived(DD_BOARD, suffix, "");
        let keys = scan_prefix(&mut con, &prefix)?;
        let bytes = memory_usage(port, DD_DB, &keys)?;
        total += bytes;
        found_any |= !keys.is_empty();
        println!(
            "| `{DD_BOARD}\\x00{suffix}*` | {} | {bytes} | {:.1} |",
            keys.len(),
            bytes as f64 / pairs_n as f64
        );
    }
    println!(
        "| **total dedup** | | {total} | **{:.1}** |",
        total as f64 / pairs_n as f64
    );
    // Not dedup: the abnormal-traffic counters (one key per visitor and window).
    let vv = scan_prefix(&mut con, &derived(DD_BOARD, "vv:", ""))?;
    if !vv.is_empty() {
        let bytes = memory_usage(port, DD_DB, &vv)?;
        println!(
            "| (not dedup) abnormal-traffic state `{DD_BOARD}\\x00vv:*` | {} | {bytes} | {:.1} |",
            vv.len(),
            bytes as f64 / pairs_n as f64
        );
    }
    if !found_any {
        problems.push(format!(
            "dedup memory: no key matched {DD_BOARD}\\x00seen:* nor {DD_BOARD}\\x00dd:* (dedup \
             off, or key naming changed)"
        ));
    }
    println!();
    let board_bytes = used_after.saturating_sub(used_before);
    println!(
        "Cross-check: INFO used_memory grew by {board_bytes} bytes ({:.1} per pair) during this \
         fill; that counts the whole board (also {na} pv/uv/meta triples, whose {na} \
         HyperLogLogs of {nv} visitors are dense, ~12 KB each, and the abnormal-traffic keys) \
         and the keyspace dictionaries' and expires dictionary's own overhead, which MEMORY \
         USAGE leaves out.",
        board_bytes as f64 / pairs_n as f64
    );
    Ok(())
}

fn article_memory(
    port: u16,
    con: &mut redis::Connection,
    cfg: &Cfg,
    problems: &mut Vec<String>,
) -> Res<()> {
    progress(&format!("bytes per article on {BOARD}"));
    let n = cfg.articles;
    let probe = derived(BOARD, "pv:", &article(0));
    let exists: i64 = redis::cmd("EXISTS")
        .arg(&probe[..])
        .query(con)
        .map_err(|e| format!("EXISTS: {e}"))?;
    if exists == 0 {
        problems.push(format!(
            "bytes per article: key {}\\x00pv:art:0 does not exist (derived key naming changed?)",
            BOARD
        ));
    }
    let mut rows = Vec::new();
    let mut total = 0.0;
    for suffix in ["pv:", "uv:", "meta:", "sus:"] {
        let keys: Vec<Vec<u8>> = (0..n)
            .map(|i| derived(BOARD, suffix, &article(i as u32)))
            .collect();
        let bytes = memory_usage(port, 0, &keys)?;
        total += bytes as f64 / n as f64;
        rows.push((format!("`{BOARD}\\x00{suffix}<article>`"), bytes));
    }
    let zset = memory_usage(port, 0, &[BOARD.as_bytes().to_vec()])?;
    total += zset as f64 / n as f64;
    rows.push((format!("ZSET `{BOARD}` (share per article)"), zset));
    let pubidx = memory_usage(port, 0, &[derived(BOARD, "pub", "")])?;
    if pubidx > 0 {
        total += pubidx as f64 / n as f64;
        rows.push((
            format!("ZSET `{BOARD}\\x00pub` publish index (share)"),
            pubidx,
        ));
    }
    let hb = memory_usage(port, 0, &[derived(BOARD, "board", "")])?;
    total += hb as f64 / n as f64;
    rows.push((format!("`{BOARD}\\x00board` (share)"), hb));
    println!(
        "Bytes per article on `{BOARD}` ({n} articles, every one viewed at least once): MEMORY \
         USAGE … SAMPLES 0 summed over each kind of per-article key, divided by the number of \
         articles (dedup keys not included)."
    );
    println!();
    println!("| key | MEMORY USAGE sum | bytes per article |");
    println!("|---|---:|---:|");
    for (k, b) in rows {
        println!("| {k} | {b} | {:.1} |", b as f64 / n as f64);
    }
    println!("| **total** | | **{total:.1}** |");
    Ok(())
}

// ====================================================================== throughput

#[derive(Clone, Debug)]
struct RunResult {
    rps: f64,
    p50: f64,
    p99: f64,
    /// Server CPU time (user + sys) per operation, µs.
    srv_us: f64,
    errors: u64,
}

/// One redis-benchmark workload.
struct Workload {
    name: &'static str,
    args: Vec<String>,
    /// Commands per run (`-n`).
    n: u64,
    /// Module configs set for the run (and restored after).
    config: Vec<(&'static str, &'static str)>,
}

/// Sets `configs`, returning what to restore.
fn set_configs(
    con: &mut redis::Connection,
    configs: &[(&'static str, &'static str)],
) -> Res<Vec<(&'static str, Option<String>)>> {
    let mut saved = Vec::new();
    for (k, v) in configs {
        saved.push((*k, set_config(con, k, v)?));
    }
    Ok(saved)
}

fn restore_configs(
    con: &mut redis::Connection,
    saved: &[(&'static str, Option<String>)],
) -> Res<()> {
    for (k, old) in saved.iter().rev() {
        restore_config(con, k, old)?;
    }
    Ok(())
}

/// Board of the HOT.VIEW throughput runs: 100,000 articles, as in the issue.
const WRITE_BOARD: &str = "hot:{bench2}";
/// Configs that keep the whole 100,000-article write board (no trimming).
const KEEP_BOARD: (&str, &str) = ("hotrank.max-articles", "1000000");

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
    let n = RB_KEYSPACE as usize;
    let zipf = Zipf::new(n, 1.0);
    let mut rng = Rng(0x5EED_F111);
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

/// Runs a workload 30 times from one client, with random numbers for `__rand_int__`;
/// returns the mean latency in µs, or the first error reply.
fn preflight(con: &mut redis::Connection, wl: &Workload, rng: &mut Rng) -> Res<f64> {
    let saved = set_configs(con, &wl.config)?;
    let mut total = 0.0;
    let mut result = Ok(());
    for _ in 0..30 {
        let mut c = redis::cmd(&wl.args[0]);
        for a in &wl.args[1..] {
            c.arg(a.replace("__rand_int__", &format!("{:012}", rng.below(RB_KEYSPACE))));
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

fn throughput(
    port: u16,
    con: &mut redis::Connection,
    cfg: &Cfg,
    top: Vec<TopMeans>,
    problems: &mut Vec<String>,
) -> Res<()> {
    println!("## Throughput");
    println!();
    let bin = env::var("HOTRANK_BENCHMARK").unwrap_or_else(|_| "redis-benchmark".to_string());
    let rb_version = Command::new(&bin)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(LUA_VIEW)
        .query(con)
        .map_err(|e| format!("SCRIPT LOAD of the Lua HOT.VIEW recipe: {e}"))?;
    let sha_plain: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(LUA_PLAIN)
        .query(con)
        .map_err(|e| format!("SCRIPT LOAD of the plain seed script: {e}"))?;
    let (fill_hot, fill_lua) = prefill_write_boards(port, con, &sha)?;
    println!(
        "Write boards filled before timing: {} views each, HOT.VIEW in {fill_hot:.1} s, the Lua \
         recipe in {fill_lua:.1} s (pipelined, 1000 per batch).",
        2 * RB_KEYSPACE
    );
    println!();

    let mut results: BTreeMap<(&'static str, usize), Vec<RunResult>> = BTreeMap::new();
    match &rb_version {
        None => {
            println!(
                "`{bin}` was not found (install redis-tools, or set HOTRANK_BENCHMARK): the \
                 redis-benchmark measurements are skipped."
            );
            problems.push(format!("{bin} not found: redis-benchmark section skipped"));
        }
        Some(version) => {
            let w = |name, args: &[&str]| Workload {
                name,
                args: args.iter().map(|s| s.to_string()).collect(),
                n: cfg.rb_n,
                config: Vec::new(),
            };
            let view_args = [
                "HOT.VIEW",
                WRITE_BOARD,
                "art:__rand_int__",
                "vis:__rand_int__",
            ];
            let mut main_view = w("HOT.VIEW", &view_args);
            main_view.config = vec![KEEP_BOARD];
            let mut no_abnormal = w("HOT.VIEW, abnormal-traffic check off", &view_args);
            no_abnormal.config = vec![KEEP_BOARD, ("hotrank.visitor-max-views", "0")];
            let trimmed = w(
                "HOT.VIEW, defaults (trims to 1000)",
                &[
                    "HOT.VIEW",
                    "hot:{bench3}",
                    "art:__rand_int__",
                    "vis:__rand_int__",
                ],
            );
            let dedup_s = DEDUP_SECONDS.to_string();
            // The periodic board: each RANK.INCR also updates its day, week and
            // month boards.
            if let Err(e) = redis::cmd("RANK.CREATE")
                .arg(PERIOD_BOARD)
                .arg(&["PERIODS", "day", "week", "month"])
                .query::<()>(con)
            {
                problems.push(format!(
                    "RANK.CREATE {PERIOD_BOARD} PERIODS day week month: {e}"
                ));
            }
            // Groups measured back to back (A then B …), so drift hits them alike.
            let mut pairs: Vec<Vec<Workload>> = vec![
                vec![
                    main_view,
                    w(
                        "Lua EVALSHA",
                        &[
                            "EVALSHA",
                            &sha,
                            "5",
                            "lua:{b}:dd:art:__rand_int__:vis:__rand_int__",
                            "lua:{b}:pv:art:__rand_int__",
                            "lua:{b}:uv:art:__rand_int__",
                            "lua:{b}:meta:art:__rand_int__",
                            "lua:{b}",
                            "art:__rand_int__",
                            "vis:__rand_int__",
                            &dedup_s,
                        ],
                    ),
                    w(
                        LUA_PLAIN_NAME,
                        &[
                            "EVALSHA",
                            &sha_plain,
                            "4",
                            "lua:{b}:pv:art:__rand_int__",
                            "lua:{b}:uv:art:__rand_int__",
                            "lua:{b}:meta:art:__rand_int__",
                            "lua:{b}",
                            "art:__rand_int__",
                            "vis:__rand_int__",
                        ],
                    ),
                    no_abnormal,
                    trimmed,
                ],
                vec![
                    w("ZADD", &["ZADD", "z:{b}", "__rand_int__", "m:__rand_int__"]),
                    w("INCR", &["INCR", "c:{b}:__rand_int__"]),
                    w(
                        "PFADD",
                        &["PFADD", "hll:{b}:__rand_int__", "vis:__rand_int__"],
                    ),
                ],
                vec![
                    w("RANK.INCR", &["RANK.INCR", "lb:{b}", "m:__rand_int__", "1"]),
                    w(
                        PERIOD_INCR,
                        &["RANK.INCR", PERIOD_BOARD, "m:__rand_int__", "1"],
                    ),
                    w("ZINCRBY", &["ZINCRBY", "zlb:{b}", "1", "m:__rand_int__"]),
                ],
                // Keep-best writes: a random score per member, kept if higher.
                vec![
                    w(
                        "RANK.SET BEST",
                        &[
                            "RANK.SET",
                            "lbbest:{b}",
                            "m:__rand_int__",
                            "__rand_int__",
                            "BEST",
                        ],
                    ),
                    w(
                        "ZADD GT",
                        &["ZADD", "zgt:{b}", "GT", "__rand_int__", "m:__rand_int__"],
                    ),
                ],
                vec![
                    w("HOT.TOP", &["HOT.TOP", BOARD, "LIMIT", "20", "WITHSCORES"]),
                    w("ZREVRANGE", &["ZREVRANGE", BOARD, "0", "19", "WITHSCORES"]),
                ],
            ];
            // Check every command before timing it (redis-benchmark only counts replies),
            // and size runs of slow commands from their single-client latency so that no
            // run takes much more than `max_s`.
            let max_s = if cfg.quick { 5.0 } else { 30.0 };
            let mut broken: Vec<&str> = Vec::new();
            let mut rng = Rng(0xBEEF);
            for wl in pairs.iter_mut().flatten() {
                match preflight(con, wl, &mut rng) {
                    Ok(us) => {
                        if us * wl.n as f64 / 1e6 > max_s {
                            wl.n = ((max_s / 4.0 * 1e6 / us) as u64).clamp(500, wl.n);
                        }
                    }
                    Err(e) => {
                        problems.push(format!("{}: {e}; not benchmarked", wl.args.join(" ")));
                        broken.push(wl.name);
                    }
                }
            }
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
                 views.",
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
            for round in 0..cfg.rounds {
                for pipeline in [16usize, 1] {
                    for pair in &pairs {
                        for wl in pair {
                            if wl.n == 0 || broken.contains(&wl.name) {
                                continue;
                            }
                            progress(&format!(
                                "round {}/{}: redis-benchmark {} -P {pipeline} -n {}",
                                round + 1,
                                cfg.rounds,
                                wl.name,
                                wl.n
                            ));
                            let saved = set_configs(con, &wl.config)?;
                            let r = redis_benchmark(&bin, port, con, wl, pipeline);
                            restore_configs(con, &saved)?;
                            match r {
                                Ok(r) => {
                                    if r.errors > 0 {
                                        problems.push(format!(
                                            "{} -P {pipeline}: {} error replies during the run",
                                            wl.name, r.errors
                                        ));
                                    }
                                    results.entry((wl.name, pipeline)).or_default().push(r);
                                }
                                Err(e) => problems.push(format!("{} -P {pipeline}: {e}", wl.name)),
                            }
                        }
                    }
                }
            }
            println!();
            println!("| workload | pipeline | n | rps | p50 ms | p99 ms | srv µs/op | rps range |");
            println!("|---|---:|---:|---:|---:|---:|---:|---:|");
            for pair in &pairs {
                for wl in pair {
                    if wl.n == 0 {
                        continue;
                    }
                    for pipeline in [16usize, 1] {
                        if let Some(rs) = results.get(&(wl.name, pipeline)) {
                            let m = mean_result(rs);
                            let (lo, hi) = rs.iter().fold((f64::MAX, 0.0f64), |(lo, hi), r| {
                                (lo.min(r.rps), hi.max(r.rps))
                            });
                            println!(
                                "| {} | {pipeline} | {} | {:.0} | {:.3} | {:.3} | {:.2} | {:.0}–{:.0} |",
                                wl.name, wl.n, m.rps, m.p50, m.p99, m.srv_us, lo, hi
                            );
                        }
                    }
                }
            }
        }
    }

    // RANK.INCR vs the client-side lock recipe, both from this Rust program.
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
    let mut rust: BTreeMap<&'static str, Vec<(RunResult, u64)>> = BTreeMap::new();
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
        if let Some(rs) = rust.get(op.name()) {
            let m = mean_result(&rs.iter().map(|r| r.0.clone()).collect::<Vec<_>>());
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

    // One RANK.MINCR of many members vs one ZADD of the same members.
    let mincr = mincr_vs_zadd(con);
    if let Err(e) = &mincr {
        problems.push(format!("RANK.MINCR vs ZADD: {e}"));
    }

    // Ratios and targets.
    println!();
    println!("## Targets");
    println!();
    println!("| ratio | pipeline | measured | target | result |");
    println!("|---|---:|---:|---:|---|");
    let rb = |name: &str, p: usize| -> Option<f64> {
        results.get(&(name, p)).map(|rs| mean_result(rs).rps)
    };
    let ru = |name: &str| -> Option<f64> {
        rust.get(name)
            .map(|rs| mean_result(&rs.iter().map(|r| r.0.clone()).collect::<Vec<_>>()).rps)
    };
    let row =
        |label: &str, p: &str, v: Option<f64>, target: &str, met: &dyn Fn(f64) -> bool| match v {
            Some(v) if v.is_finite() => println!(
                "| {label} | {p} | {v:.2}x | {target} | {} |",
                if met(v) { "met" } else { "**missed**" }
            ),
            _ => println!("| {label} | {p} | n/a | {target} | not measured |"),
        };
    let ratio = |a: Option<f64>, b: Option<f64>| -> Option<f64> { Some(a? / b?) };
    for (label, a, b, target, min) in [
        (
            "HOT.VIEW / Lua EVALSHA (rps)",
            "HOT.VIEW",
            "Lua EVALSHA",
            "≥ 2.5x",
            2.5,
        ),
        (
            "HOT.VIEW / seed script without dedup (rps)",
            "HOT.VIEW",
            LUA_PLAIN_NAME,
            "≥ 2x",
            2.0,
        ),
        ("HOT.VIEW / ZADD (rps)", "HOT.VIEW", "ZADD", "≥ 0.5x", 0.5),
        (
            "HOT.VIEW, abnormal-traffic check off / Lua EVALSHA (rps)",
            "HOT.VIEW, abnormal-traffic check off",
            "Lua EVALSHA",
            "≥ 2.5x",
            2.5,
        ),
        (
            "HOT.VIEW, abnormal-traffic check off / ZADD (rps)",
            "HOT.VIEW, abnormal-traffic check off",
            "ZADD",
            "≥ 0.5x",
            0.5,
        ),
        (
            "HOT.VIEW, defaults (trims to 1000) / Lua EVALSHA (rps)",
            "HOT.VIEW, defaults (trims to 1000)",
            "Lua EVALSHA",
            "≥ 2x",
            2.0,
        ),
        (
            "RANK.INCR / ZINCRBY (rps)",
            "RANK.INCR",
            "ZINCRBY",
            "≥ 0.95x",
            0.95,
        ),
        (
            "RANK.SET BEST / ZADD GT (rps)",
            "RANK.SET BEST",
            "ZADD GT",
            "≥ 0.95x",
            0.95,
        ),
    ] {
        for p in [16usize, 1] {
            row(
                label,
                &p.to_string(),
                ratio(rb(a, p), rb(b, p)),
                target,
                &|v| v >= min,
            );
        }
    }
    row(
        "RANK.INCR / ZINCRBY (Rust client ops/s)",
        "1",
        ratio(ru(RustOp::RankIncr.name()), ru(RustOp::Zincrby.name())),
        "≥ 0.95x",
        &|v| v >= 0.95,
    );
    row(
        "RANK.INCR / client-side lock (Rust client ops/s)",
        "1",
        ratio(ru(RustOp::RankIncr.name()), ru(RustOp::Lock.name())),
        "≥ 4x",
        &|v| v >= 4.0,
    );
    row(
        "RANK.INCR (redis-benchmark) / lock (Rust client)",
        "1",
        ratio(rb("RANK.INCR", 1), ru(RustOp::Lock.name())),
        "≥ 4x",
        &|v| v >= 4.0,
    );
    row(
        &format!(
            "RANK.MINCR {MINCR_MEMBERS} members / ZADD {MINCR_MEMBERS} members (time, best of 3)"
        ),
        "1",
        mincr.ok().map(|(m, z)| m / z),
        "≤ 10x",
        &|v| v <= 10.0,
    );
    for t in &top {
        row(
            &format!("`{}` / ZREVRANGE, mean latency (1 client)", t.label),
            "1",
            Some(t.hot_us / t.zrev_us),
            "≤ 10x",
            &|v| v <= 10.0,
        );
    }
    for p in [16usize, 1] {
        row(
            "ZREVRANGE rps / HOT.TOP rps (50 clients)",
            &p.to_string(),
            ratio(rb("ZREVRANGE", p), rb("HOT.TOP", p)),
            "≤ 10x",
            &|v| v <= 10.0,
        );
    }
    println!();
    println!(
        "Server CPU per operation (from the `srv µs/op` columns; lower is cheaper, and this \
         does not depend on the client's speed):"
    );
    println!();
    println!("| comparison | pipeline | srv µs/op A | srv µs/op B | B / A |");
    println!("|---|---:|---:|---:|---:|");
    let srv = |name: &str, p: usize| results.get(&(name, p)).map(|rs| mean_result(rs).srv_us);
    for (a, b) in [
        ("HOT.VIEW", "Lua EVALSHA"),
        ("HOT.VIEW", LUA_PLAIN_NAME),
        ("HOT.VIEW, abnormal-traffic check off", "Lua EVALSHA"),
        ("HOT.VIEW, defaults (trims to 1000)", "Lua EVALSHA"),
        ("HOT.VIEW", "ZADD"),
        ("RANK.INCR", "ZINCRBY"),
        ("RANK.INCR", PERIOD_INCR),
        (PERIOD_INCR, "ZINCRBY"),
        ("RANK.SET BEST", "ZADD GT"),
        ("HOT.TOP", "ZREVRANGE"),
    ] {
        for p in [16usize, 1] {
            if let (Some(x), Some(y)) = (srv(a, p), srv(b, p)) {
                println!(
                    "| A = {a}, B = {b} | {p} | {x:.2} | {y:.2} | {:.2}x |",
                    y / x
                );
            }
        }
    }
    let srv_rust = |op: RustOp| {
        rust.get(op.name())
            .map(|rs| mean_result(&rs.iter().map(|r| r.0.clone()).collect::<Vec<_>>()).srv_us)
    };
    if let (Some(x), Some(y)) = (srv_rust(RustOp::RankIncr), srv_rust(RustOp::Lock)) {
        println!(
            "| A = RANK.INCR, B = lock recipe (Rust client) | 1 | {x:.2} | {y:.2} | {:.2}x |",
            y / x
        );
    }
    Ok(())
}

/// Members in the one-command RANK.MINCR vs ZADD comparison.
const MINCR_MEMBERS: usize = 80_000;

/// Seconds taken by one `RANK.MINCR b 1 m0 … m79999` and by one `ZADD z 1 m0
/// … m79999` on fresh keys, each the best of 3 runs.
fn mincr_vs_zadd(con: &mut redis::Connection) -> Res<(f64, f64)> {
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

fn mean_result(rs: &[RunResult]) -> RunResult {
    let n = rs.len().max(1) as f64;
    RunResult {
        rps: rs.iter().map(|r| r.rps).sum::<f64>() / n,
        p50: rs.iter().map(|r| r.p50).sum::<f64>() / n,
        p99: rs.iter().map(|r| r.p99).sum::<f64>() / n,
        srv_us: rs.iter().map(|r| r.srv_us).sum::<f64>() / n,
        errors: rs.iter().map(|r| r.errors).sum(),
    }
}

/// Server CPU seconds (user + sys) and error replies so far.
fn server_counters(con: &mut redis::Connection) -> Res<(f64, f64)> {
    let cpu = info_section(con, "cpu")?;
    let stats = info_section(con, "stats")?;
    let g = |m: &BTreeMap<String, String>, k: &str| -> f64 {
        m.get(k).and_then(|v| v.parse().ok()).unwrap_or(0.0)
    };
    Ok((
        g(&cpu, "used_cpu_user") + g(&cpu, "used_cpu_sys"),
        g(&stats, "total_error_replies"),
    ))
}

fn redis_benchmark(
    bin: &str,
    port: u16,
    con: &mut redis::Connection,
    wl: &Workload,
    pipeline: usize,
) -> Res<RunResult> {
    let (cpu0, err0) = server_counters(con)?;
    let base = env::temp_dir().join(format!("hotrank-bench-rb-{}", std::process::id()));
    let (out_path, err_path) = (base.with_extension("out"), base.with_extension("err"));
    let out_file = File::create(&out_path)
        .map_err(|e| format!("cannot create {}: {e}", out_path.display()))?;
    let err_file = File::create(&err_path)
        .map_err(|e| format!("cannot create {}: {e}", err_path.display()))?;
    let mut child = Command::new(bin)
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(["-c", &RB_CLIENTS.to_string()])
        .args(["-n", &wl.n.to_string()])
        .args(["-P", &pipeline.to_string()])
        .args(["-r", &RB_KEYSPACE.to_string()])
        .args(["--csv", "-e"])
        .args(&wl.args)
        .stdin(Stdio::null())
        .stdout(out_file)
        .stderr(err_file)
        .spawn()
        .map_err(|e| format!("cannot run {bin}: {e}"))?;
    // A hard limit per run, so a pathologically slow command cannot stall the bench.
    let deadline = Instant::now() + Duration::from_secs(RB_TIMEOUT_S);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_file(&out_path);
                let _ = std::fs::remove_file(&err_path);
                return Err(format!(
                    "{bin} did not finish {} commands within {RB_TIMEOUT_S} s; killed",
                    wl.n
                ));
            }
            Ok(None) => thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("waiting for {bin}: {e}")),
        }
    };
    let (cpu1, err1) = server_counters(con)?;
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    if !status.success() {
        return Err(format!("{bin} exited with {status}: {}", stderr.trim()));
    }
    if let Some(line) = stdout.lines().find(|l| l.starts_with("Error")) {
        return Err(format!("{bin} reported: {line}"));
    }
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with("\"test\""));
    let header = lines
        .next()
        .ok_or_else(|| format!("no CSV header in {bin} output: {stdout:?} {stderr:?}"))?;
    let row = lines
        .next()
        .ok_or_else(|| format!("no CSV row in {bin} output: {stdout:?}"))?;
    let cols = csv_fields(header);
    let vals = csv_fields(row);
    let field = |name: &str| -> Res<f64> {
        let i = cols
            .iter()
            .position(|c| c == name)
            .ok_or_else(|| format!("no column {name:?} in {bin} CSV header {header:?}"))?;
        vals.get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .ok_or_else(|| format!("bad {name} in {bin} CSV row {row:?}"))
    };
    Ok(RunResult {
        rps: field("rps")?,
        p50: field("p50_latency_ms")?,
        p99: field("p99_latency_ms")?,
        srv_us: (cpu1 - cpu0) * 1e6 / wl.n as f64,
        // The INFO calls themselves never fail; anything counted here came from the run.
        errors: (err1 - err0).max(0.0) as u64,
    })
}

/// Fields of one CSV line with double-quoted fields.
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum RustOp {
    RankIncr,
    Zincrby,
    Lock,
}

impl RustOp {
    fn name(self) -> &'static str {
        match self {
            RustOp::RankIncr => "RANK.INCR lb:{r} m 1",
            RustOp::Zincrby => "ZINCRBY zlb:{r} 1 m",
            RustOp::Lock => "lock: SET NX PX, ZSCORE, ZADD, DEL",
        }
    }
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
    let barrier = Barrier::new(clients + 1);
    let stop = AtomicBool::new(false);
    let retries = AtomicU64::new(0);
    let errors = AtomicU64::new(0);
    let first_err: Mutex<Option<String>> = Mutex::new(None);
    let (cpu0, _) = server_counters(con)?;
    let epoch_2020: i64 = 1_577_836_800;
    let (lat, elapsed) = thread::scope(|s| {
        let handles: Vec<_> = cons
            .into_iter()
            .enumerate()
            .map(|(tid, mut c)| {
                let (barrier, stop, retries, errors, first_err) =
                    (&barrier, &stop, &retries, &errors, &first_err);
                s.spawn(move || {
                    let mut rng = Rng(0xC0FFEE ^ (tid as u64).wrapping_mul(0x9E37_79B9));
                    let mut lat: Vec<f64> = Vec::with_capacity(1 << 16);
                    barrier.wait();
                    while !stop.load(Ordering::Relaxed) {
                        let m = format!("m:{:012}", rng.below(RB_KEYSPACE));
                        let t = Instant::now();
                        let r: redis::RedisResult<()> = match op {
                            RustOp::RankIncr => redis::cmd("RANK.INCR")
                                .arg("lb:{r}")
                                .arg(&m)
                                .arg(1)
                                .query::<i64>(&mut c)
                                .map(|_| ()),
                            RustOp::Zincrby => redis::cmd("ZINCRBY")
                                .arg("zlb:{r}")
                                .arg(1)
                                .arg(&m)
                                .query::<f64>(&mut c)
                                .map(|_| ()),
                            RustOp::Lock => (|| {
                                let lock = format!("lk:{{r}}:lock:{m}");
                                let token = rng.next().to_string();
                                loop {
                                    let got: Option<String> = redis::cmd("SET")
                                        .arg(&lock)
                                        .arg(&token)
                                        .arg("NX")
                                        .arg("PX")
                                        .arg(100)
                                        .query(&mut c)?;
                                    if got.is_some() {
                                        break;
                                    }
                                    retries.fetch_add(1, Ordering::Relaxed);
                                    thread::sleep(Duration::from_micros(100));
                                }
                                let old: Option<f64> =
                                    redis::cmd("ZSCORE").arg("lk:{r}").arg(&m).query(&mut c)?;
                                let old_score = old.map_or(0.0, |p| (p / 4_294_967_296.0).floor());
                                let secs = (now_ms() / 1000 - epoch_2020).clamp(0, u32::MAX as i64);
                                let packed = (old_score + 1.0) * 4_294_967_296.0
                                    + (u32::MAX as i64 - secs) as f64;
                                redis::cmd("ZADD")
                                    .arg("lk:{r}")
                                    .arg(packed)
                                    .arg(&m)
                                    .query::<i64>(&mut c)?;
                                redis::cmd("DEL").arg(&lock).query::<i64>(&mut c)?;
                                Ok(())
                            })(),
                        };
                        match r {
                            Ok(()) => lat.push(t.elapsed().as_secs_f64() * 1e3),
                            Err(e) => {
                                errors.fetch_add(1, Ordering::Relaxed);
                                if let Ok(mut g) = first_err.lock() {
                                    g.get_or_insert(e.to_string());
                                }
                                break;
                            }
                        }
                    }
                    lat
                })
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for h in handles {
            if let Ok(l) = h.join() {
                all.extend(l);
            } else {
                errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        (all, t0.elapsed().as_secs_f64())
    });
    let (cpu1, _) = server_counters(con)?;
    if let Ok(Some(e)) = first_err.into_inner() {
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
            errors: errors.into_inner(),
        },
        retries.into_inner(),
    ))
}

// ====================================================================== helpers

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Unix milliseconds as seconds with 3 decimals.
fn fmt_ms(ms: i64) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

/// Unix seconds (integer or up to 3 decimals) to milliseconds, exactly.
fn parse_time_ms(s: &str) -> Option<i64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = int.parse().ok()?;
    let mut f = frac.to_string();
    while f.len() < 3 {
        f.push('0');
    }
    let ms: i64 = f.parse().ok()?;
    Some(secs * 1000 + if secs < 0 { -ms } else { ms })
}

/// Sets a config and returns its old value; `None` (nothing set) if the server has
/// no such config (an older module build).
fn set_config(con: &mut redis::Connection, name: &str, value: &str) -> Res<Option<String>> {
    let old: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg(name)
        .query(con)
        .map_err(|e| format!("CONFIG GET {name}: {e}"))?;
    let Some(old) = old.get(1).cloned() else {
        return Ok(None);
    };
    redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query::<()>(con)
        .map_err(|e| format!("CONFIG SET {name} {value}: {e}"))?;
    Ok(Some(old))
}

fn restore_config(con: &mut redis::Connection, name: &str, old: &Option<String>) -> Res<()> {
    if let Some(old) = old {
        redis::cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(old)
            .query::<()>(con)
            .map_err(|e| format!("CONFIG SET {name} {old}: {e}"))?;
    }
    Ok(())
}

fn connect(port: u16, db: u32) -> Res<redis::Connection> {
    let url = format!("redis://127.0.0.1:{port}/{db}");
    let client = redis::Client::open(url.as_str()).map_err(|e| format!("bad url {url}: {e}"))?;
    client
        .get_connection_with_timeout(Duration::from_secs(5))
        .map_err(|e| format!("cannot connect to {url}: {e}"))
}

fn zcard(con: &mut redis::Connection, key: &str) -> Res<i64> {
    redis::cmd("ZCARD")
        .arg(key)
        .query(con)
        .map_err(|e| format!("ZCARD {key}: {e}"))
}

fn info_section(con: &mut redis::Connection, section: &str) -> Res<BTreeMap<String, String>> {
    let text: String = redis::cmd("INFO")
        .arg(section)
        .query(con)
        .map_err(|e| format!("INFO {section}: {e}"))?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect())
}

fn info_num(con: &mut redis::Connection, section: &str, field: &str) -> Res<u64> {
    info_section(con, section)?
        .get(field)
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("INFO {section} has no numeric {field}"))
}

/// A field of a module INFO section, whatever its prefix (`hotrank_top_calls`).
fn info_suffix(m: &BTreeMap<String, String>, suffix: &str) -> Option<f64> {
    m.iter()
        .find(|(k, _)| k.as_str() == suffix || k.ends_with(&format!("_{suffix}")))
        .and_then(|(_, v)| v.parse().ok())
}

fn info_delta(
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
    suffix: &str,
) -> Option<f64> {
    let find = |m: &BTreeMap<String, String>| {
        m.iter()
            .find(|(k, _)| {
                k.as_str() == suffix
                    || k.ends_with(&format!("_{suffix}")) && !k.ends_with("_per_call")
            })
            .and_then(|(_, v)| v.parse::<f64>().ok())
    };
    Some(find(b)? - find(a)?)
}

/// The status (4th element) of a `HOT.VIEW` reply `[pv, uv, score, status]`.
fn view_status(reply: &Value) -> Res<String> {
    match reply {
        Value::Array(items) if items.len() >= 4 => match &items[3] {
            Value::ServerError(e) => Err(format!("server error: {e:?}")),
            v => Ok(text(v)),
        },
        other => Err(describe(other)),
    }
}

/// Name/value pairs of a flat array (RESP2) or a map (RESP3).
fn pairs(reply: &Value) -> Res<BTreeMap<String, String>> {
    match reply {
        Value::Map(kv) => Ok(kv.iter().map(|(k, v)| (text(k), text(v))).collect()),
        Value::Array(items) if items.len() % 2 == 0 => Ok(items
            .chunks(2)
            .map(|p| (text(&p[0]), text(&p[1])))
            .collect()),
        other => Err(describe(other)),
    }
}

/// `[member, score, member, score, …]` in order.
fn flat_pairs(reply: &Value) -> Res<Vec<(String, String)>> {
    match reply {
        Value::Array(items) if items.len() % 2 == 0 => Ok(items
            .chunks(2)
            .map(|p| (text(&p[0]), text(&p[1])))
            .collect()),
        other => Err(describe(other)),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::VerbatimString { text, .. } => text.clone(),
        Value::Int(i) => i.to_string(),
        Value::Double(d) => d.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Okay => "OK".to_string(),
        Value::Nil => "(nil)".to_string(),
        other => format!("{other:?}"),
    }
}

/// A reply that was not the one expected, for error messages.
fn describe(v: &Value) -> String {
    match v {
        Value::ServerError(e) => format!("server error: {e:?}"),
        other => format!("unexpected reply {other:?}"),
    }
}

/// The first three fields of /proc/loadavg.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

/// nproc, CPU model and total memory, from /proc.
fn machine_info() -> Vec<String> {
    let nproc = thread::available_parallelism().map_or(0, |n| n.get());
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map_or("unknown".to_string(), |(_, v)| v.trim().to_string());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or("unknown".to_string(), |kb| {
            format!("{:.1} GiB", kb / 1024.0 / 1024.0)
        });
    vec![
        format!("nproc: {nproc}"),
        format!("CPU: {model}"),
        format!("memory: {mem}"),
        format!("load average at start (1, 5, 15 min): {}", loadavg()),
    ]
}

// ====================================================================== server

/// A private server child with the module loaded; killed on drop.
struct SpawnedServer {
    child: Child,
    port: u16,
    binary: String,
    module: PathBuf,
    dir: PathBuf,
}

impl SpawnedServer {
    fn start() -> Res<Self> {
        let binary = env::var("HOTRANK_SERVER").unwrap_or_else(|_| "redis-server".to_string());
        let module = match env::var_os("HOTRANK_MODULE") {
            Some(m) => PathBuf::from(m),
            None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release/libhotrank.so"),
        };
        let module = module.canonicalize().map_err(|e| {
            format!(
                "module {} not found ({e}); run `cargo build --release` or set HOTRANK_MODULE",
                module.display()
            )
        })?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("cannot find a free port: {e}"))?
            .port();
        let dir = env::temp_dir().join(format!("hotrank-bench-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let log = dir.join("server.log");
        let log_file =
            File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let log_err = log_file
            .try_clone()
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let child = Command::new(&binary)
            .arg("--port")
            .arg(port.to_string())
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .arg("--loadmodule")
            .arg(&module)
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err)
            .spawn()
            .map_err(|e| {
                format!(
                    "cannot start {binary}: {e} (set HOTRANK_SERVER to a redis-server or \
                     valkey-server binary)"
                )
            })?;
        let mut server = SpawnedServer {
            child,
            port,
            binary,
            module,
            dir,
        };
        progress(&format!(
            "started {} on 127.0.0.1:{port} (pid {})",
            server.binary,
            server.child.id()
        ));
        server.wait_ready()?;
        Ok(server)
    }

    fn wait_ready(&mut self) -> Res<()> {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "{} exited early ({status}); its output:\n{}",
                    self.binary,
                    self.log_tail()
                ));
            }
            if let Ok(mut con) = connect(self.port, 0) {
                if redis::cmd("PING").query::<String>(&mut con).is_ok() {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{} did not answer PING on port {} within 15 s; its output:\n{}",
                    self.binary,
                    self.port,
                    self.log_tail()
                ));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for SpawnedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
        progress(&format!("stopped {} (port {})", self.binary, self.port));
    }
}
