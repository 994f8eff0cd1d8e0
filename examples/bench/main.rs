//! Benchmark of the hotrank module against the plain-Redis ways of doing the same work.
//!
//! ```text
//! make bench                                   # full run (about 10-15 minutes on 2 cores)
//! BENCH_QUICK=1 cargo run --release --example bench   # smoke run, sizes shrunk 10x
//! BENCH_ONLY=modes cargo run --release --example bench  # only section 5 (about 8 minutes: without and with a replica)
//! ```
//!
//! It starts its own server on a free loopback port (no persistence, module loaded),
//! and prints a Markdown report on stdout; progress goes to stderr. Sections:
//! 1. machine and server;
//! 2. `HOT.TOP` latency vs `ZREVRANGE` on a board of 1,000,000 articles filled with
//!    Zipf-distributed views, plus an exactness check against a client-side brute force;
//! 3. memory: dedup bytes per active (article, visitor) pair, bytes per article;
//! 4. throughput with `redis-benchmark` (HOT.VIEW vs an equivalent Lua script, bare
//!    ZADD/INCR/PFADD, RANK.INCR (plain and with day/week/month period boards) vs ZINCRBY, RANK.SET BEST vs ZADD GT, HOT.TOP vs
//!    ZREVRANGE) and, from a Rust
//!    client, RANK.INCR vs a client-side lock recipe; then the issue's targets;
//! 5. replication modes: for `hotrank.replicate effects` and `commands`, each on a fresh
//!    master with one replica attached, at `-P 16 -c 50`: HOT.VIEW in the steady state
//!    (5,000 articles, not trimmed) vs the Lua recipe with dedup and vs the seed's plain
//!    script on the same 5,000 articles (issue 31's targets), HOT.VIEW on a long tail
//!    (100,000 articles, defaults) beside the plain script (shown), RANK.INCR vs ZINCRBY;
//!    warmed up, pairs back to back in alternating rounds, the replica's lag after each
//!    run; one table with targets and verdicts.
//!
//! Environment:
//! - `HOTRANK_SERVER`    server binary (default `redis-server`; a valkey-server works too).
//! - `HOTRANK_MODULE`    module to load (default `<crate>/target/release/libhotrank.so`).
//! - `HOTRANK_BENCHMARK` redis-benchmark binary (default `redis-benchmark` from PATH).
//! - `BENCH_QUICK=1`     shrink every size 10x for a smoke run (section 5: shorter runs,
//!   2 rounds instead of 4).
//! - `BENCH_ONLY=modes`  run only section 5 (after section 1); `BENCH_ONLY=main` only
//!   sections 1-4. Unset or empty: everything.
//!
//! Exit codes: 0 ok (the report lists any problem met on the way), 1 fatal error.
//!
//! Layout: `main.rs` (sizes, sections 1 and 2), `data.rs` (generated data sets),
//! `fill.rs` (filling boards, pipelined sender), `top.rs` (HOT.TOP latency),
//! `exact.rs` (exactness), `memory.rs`, `workloads.rs` (the table of redis-benchmark
//! workloads and their targets), `throughput.rs`, `rb.rs` (one redis-benchmark run),
//! `rust_client.rs`, `modes.rs` (section 5), `report.rs` (targets and verdicts),
//! `util.rs`; the server, reply
//! decoding and the exit code come from `examples/shared/` (`server.rs`, `replies.rs`,
//! `cli.rs`), the random generator from `tests/common/rng.rs`.

#[path = "../shared/cli.rs"]
mod cli;
mod data;
mod exact;
mod fill;
mod memory;
mod modes;
mod rb;
#[path = "../shared/replies.rs"]
mod replies;
mod report;
#[path = "../../tests/common/rng.rs"]
mod rng;
mod rust_client;
#[path = "../shared/server.rs"]
mod server;
mod throughput;
mod top;
mod util;
mod workloads;

use std::env;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use server::{Options, SpawnedServer};
use util::{connect, info_section, info_suffix, loadavg, machine_info, now_ms};
use util::{restore_config, set_config, zcard};

type Res<T> = Result<T, String>;

/// The 1M-article board of section 2 (also used by HOT.TOP in section 4).
const BOARD: &str = "hot:{bench}";
/// The small board whose top lists are checked against a client-side brute force.
const EXACT_BOARD: &str = "hot:{exact}";
/// The dedup-memory board (in database 1, so SCAN only walks its keys).
const DD_BOARD: &str = "hot:{dd}";
const DD_DB: u32 = 1;
/// Commands per pipeline when filling boards.
const BATCH: usize = 1000;
/// Connections that fill boards in parallel (the machine has 2 cores).
const FILL_THREADS: usize = 2;
const DAY_MS: i64 = 86_400_000;
/// redis-benchmark settings.
const RB_CLIENTS: usize = 50;
const RB_KEYSPACE: u64 = 100_000;
/// Hard limit on one redis-benchmark run.
const RB_TIMEOUT_S: u64 = 150;
/// Dedup window the Lua script uses (the module's default `hotrank.dedup-seconds`).
const DEDUP_SECONDS: u64 = 900;
/// Members in the one-command RANK.MINCR vs ZADD comparison.
const MINCR_MEMBERS: usize = 80_000;

/// The Lua recipe HOT.VIEW replaces, as sites run it.
/// KEYS: 1 dedup marker, 2 pv counter, 3 uv HyperLogLog, 4 meta hash, 5 board ZSET.
/// ARGV: 1 article, 2 visitor, 3 dedup seconds.
const LUA_VIEW: &str = include_str!("../view.lua");
/// The seed's plain script: the recipe without dedup.
const LUA_PLAIN: &str = include_str!("../view_plain.lua");
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
    /// Which sections run (`BENCH_ONLY`).
    only: Only,
    /// Section 5: commands of each workload's untimed warm-up run, seconds per timed
    /// run, rounds.
    modes_warmup: u64,
    modes_run_s: f64,
    modes_rounds: usize,
}

/// `BENCH_ONLY`: which sections run (section 1 always does).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Only {
    All,
    /// Sections 1-4.
    Main,
    /// Sections 1 and 5.
    Modes,
}

impl Cfg {
    /// Sizes from `BENCH_QUICK`, sections from `BENCH_ONLY`. Error: an unknown
    /// `BENCH_ONLY`.
    fn from_env() -> Res<Cfg> {
        let only = match env::var("BENCH_ONLY").unwrap_or_default().as_str() {
            "" => Only::All,
            "modes" => Only::Modes,
            "main" => Only::Main,
            other => return Err(format!("BENCH_ONLY={other:?}: use modes, main or nothing")),
        };
        let quick = env::var("BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
        let d = if quick { 10 } else { 1 };
        Ok(Cfg {
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
            only,
            modes_warmup: if quick { 10_000 } else { 60_000 },
            modes_run_s: if quick { 1.0 } else { 3.0 },
            modes_rounds: if quick { 2 } else { 4 },
        })
    }
}

fn main() -> ExitCode {
    let started = Instant::now();
    let cfg = match Cfg::from_env() {
        Ok(cfg) => cfg,
        Err(e) => return cli::exit_code("bench", Err(e)),
    };
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
    cli::exit_code("bench", result)
}

fn run(cfg: &Cfg, problems: &mut Vec<String>) -> Res<()> {
    fill::PIPE_BUDGET_S.store(if cfg.quick { 120 } else { 420 }, Ordering::Relaxed);
    let server = SpawnedServer::start_with(Options {
        private_dir: true,
        stderr_tag: Some("bench"),
        ..Options::default()
    })?;
    let mut con = connect(server.port, 0)?;
    machine_section(cfg, &server, &mut con)?;
    if cfg.only != Only::Modes {
        main_sections(cfg, &server, &mut con, problems)?;
    }
    drop(con);
    drop(server);
    // ---------------------------------------------------------------- section 5
    if cfg.only != Only::Main {
        modes::modes(cfg, problems)?;
    }
    Ok(())
}

/// Sections 2 to 4, on the server of section 1.
fn main_sections(
    cfg: &Cfg,
    server: &SpawnedServer,
    con: &mut redis::Connection,
    problems: &mut Vec<String>,
) -> Res<()> {
    let port = server.port;

    // ---------------------------------------------------------------- section 2
    println!();
    println!("## HOT.TOP vs ZREVRANGE (target: HOT.TOP within 10x of ZREVRANGE)");
    println!();
    big_board(port, con, cfg, problems)?;
    let top_means = top::top_latency(con, cfg, problems)?;

    // Exactness on a 20,000-article sample board.
    println!();
    exact::exactness(port, con, cfg, problems)?;

    // ---------------------------------------------------------------- section 3
    println!();
    println!("## Memory");
    println!();
    memory::dedup_memory(port, cfg, problems)?;
    println!();
    memory::article_memory(port, con, cfg, problems)?;

    // ---------------------------------------------------------------- section 4
    println!();
    throughput::throughput(port, con, cfg, top_means, problems)?;

    // Module error counters, as a last cross-check.
    let hot = info_section(con, "hotrank")?;
    let errors = info_suffix(&hot, "errors").unwrap_or(0.0);
    let panics = info_suffix(&hot, "panics_caught").unwrap_or(0.0);
    if errors > 0.0 || panics > 0.0 {
        problems.push(format!(
            "INFO hotrank reports errors:{errors} panics_caught:{panics} over the whole run \
             (some are expected: none of the workloads above should produce any)"
        ));
    }
    Ok(())
}

/// The report's title and section 1: machine and server.
fn machine_section(cfg: &Cfg, server: &SpawnedServer, con: &mut redis::Connection) -> Res<()> {
    let port = server.port;
    println!("# hotrank benchmark");
    println!();
    println!(
        "Mode: {}{}. Report generated at unix time {}.",
        if cfg.quick {
            "BENCH_QUICK=1 (sizes shrunk 10x: a smoke run, not for comparison)"
        } else {
            "full"
        },
        match cfg.only {
            Only::All => "",
            Only::Main => ", BENCH_ONLY=main (sections 1-4)",
            Only::Modes => ", BENCH_ONLY=modes (sections 1 and 5)",
        },
        now_ms() / 1000
    );
    println!();
    println!("## Machine and server");
    println!();
    for line in machine_info() {
        println!("- {line}");
    }
    let info = info_section(con, "server")?;
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
    Ok(())
}

/// Fills the big board of section 2 and prints how it went.
fn big_board(
    port: u16,
    con: &mut redis::Connection,
    cfg: &Cfg,
    problems: &mut Vec<String>,
) -> Res<()> {
    let end_ms = now_ms() - 60_000;
    let ds = data::Dataset::generate(cfg.articles, cfg.views, cfg.visitors, end_ms, 0x5eed_0001);
    // A board of a million articles needs trimming off (hotrank.max-articles 0).
    let saved = set_config(con, "hotrank.max-articles", "0")?;
    let fill = fill::fill_board(port, BOARD, &ds);
    restore_config(con, "hotrank.max-articles", &saved)?;
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
        zcard(con, BOARD)?,
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
    let mem = info_section(con, "memory")?;
    println!(
        "- server used_memory after the fill: {}",
        mem.get("used_memory_human").map_or("?", String::as_str)
    );
    Ok(())
}
