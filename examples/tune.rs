//! `make tune`: choose the formula and the trending half-life from your own access
//! log. Replays the log once per setting (every gamma × base of the hot ranking, and
//! every trending half-life) into a private server with the module loaded, samples
//! `HOT.TOP [BY trending] … LIMIT 20 AT t` every 10 minutes of log time, prints how
//! the top behaves under each setting (with the share of the next 10 minutes' views
//! it foresaw), and writes an SVG chart of the leading articles' rank over time,
//! one panel per setting.
//!
//! ```text
//! cargo run --release --example tune -- [--log PATH] [--gammas 1.3,1.5,1.8]
//!     [--bases 2] [--half-lives 1h,6h] [--out target/tune.svg] [--step SECONDS] [--limit N]
//!     [--articles N] [--lines N] [--published FILE]
//! ```
//!
//! - `--log`: the demo's TSV or a Common Log Format log, gzipped or plain
//!   (default `data/nasa_19950801.tsv.gz`); see `examples/shared/log.rs`.
//! - `--half-lives`: trending half-lives compared beside the gammas (default
//!   `1h,6h`; seconds or a number with a unit s, m, h or d, 60 s to 10 years;
//!   `none` for no trending run).
//! - `--step`: seconds of log time between samples (default 600).
//! - `--limit`: length of the sampled top (default 20).
//! - `--articles`: leading articles drawn (default 8, at most 10).
//! - `--lines`: read only the first N lines of the log.
//! - `--published`: a file of `article time` lines (unix seconds or a CLF date)
//!   with the articles' real publish times; an article not listed is published at
//!   its first view in the log.
//!
//! Environment: `HOTRANK_SERVER` (default `redis-server`) and `HOTRANK_MODULE`
//! (default `<crate>/target/release/libhotrank.so`), as for `replay`.
//!
//! Exit codes: 0 ok, 1 error, 2 bad arguments or log file missing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/server.rs"]
mod server;
#[path = "tune/mod.rs"]
mod tune;

use tune::{Plan, Setting};

const DEFAULT_LOG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/nasa_19950801.tsv.gz");
const DEFAULT_OUT: &str = "target/tune.svg";

/// The command line.
struct Args {
    log: PathBuf,
    out: PathBuf,
    plan: Plan,
    articles: usize,
    lines: Option<u64>,
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("tune: {e}");
            eprintln!(
                "usage: cargo run --release --example tune -- [--log PATH] [--gammas 1.3,1.5,1.8] \
                 [--bases 2] [--half-lives 1h,6h|none] [--out target/tune.svg] [--step SECONDS] [--limit N] \
                 [--articles N] [--lines N] [--published FILE]"
            );
            return ExitCode::from(2);
        }
    };
    if !args.log.is_file() {
        eprintln!("tune: log file not found: {}", args.log.display());
        return ExitCode::from(2);
    }
    cli::exit_code("tune", run(&args))
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut gammas = vec![1.3, 1.5, 1.8];
    let mut bases = vec![2.0];
    let mut half_lives = vec![3600, 6 * 3600];
    let mut args = Args {
        log: PathBuf::from(DEFAULT_LOG),
        out: PathBuf::from(DEFAULT_OUT),
        plan: Plan::new(Vec::new()),
        articles: tune::DEFAULT_CHART_ARTICLES,
        lines: None,
    };
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |v: &str| {
            v.parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{flag}: {v:?} is not a positive integer"))
        };
        match flag.as_str() {
            "--log" => args.log = PathBuf::from(value),
            "--out" => args.out = PathBuf::from(value),
            "--gammas" => gammas = tune::parse_list("--gammas", &value)?,
            "--bases" => bases = tune::parse_list("--bases", &value)?,
            "--half-lives" if value == "none" => half_lives.clear(),
            "--half-lives" => half_lives = tune::parse_half_lives("--half-lives", &value)?,
            "--step" => args.plan.step_secs = number(&value)? as i64,
            "--limit" => args.plan.limit = number(&value)? as usize,
            "--articles" => args.articles = number(&value)? as usize,
            "--lines" => args.lines = Some(number(&value)?),
            "--published" => {
                args.plan.known_published = tune::log::read_publish_times(Path::new(&value))?
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    args.plan.settings = Setting::grid(&gammas, &bases);
    args.plan.settings.extend(Setting::trending(&half_lives));
    Ok(args)
}

fn run(args: &Args) -> Result<(), String> {
    let (mut views, counts) = tune::log::read_views(&args.log, args.lines)?;
    println!(
        "read {}: {} lines ({} malformed), {} views of .html pages",
        args.log.display(),
        counts.lines,
        counts.malformed,
        views.len()
    );
    let server = server::SpawnedServer::start()?;
    let url = format!("redis://127.0.0.1:{}/", server.port);
    let mut con = redis::Client::open(url.as_str())
        .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(5)))
        .map_err(|e| format!("cannot connect to {url}: {e}"))?;
    let started = Instant::now();
    let outcome = tune::run(&mut con, &mut views, &args.plan)?;
    println!(
        "replayed {} settings in {:.1} s; view statuses per setting: {}\n",
        outcome.runs.len(),
        started.elapsed().as_secs_f64(),
        statuses(&outcome.runs[0])
    );
    print!("{}", tune::report::table(&outcome));
    tune::chart::write(&args.out, &outcome, args.articles)?;
    println!("\nchart: {}", args.out.display());
    Ok(())
}

/// `counted=… duplicate=…` of one run (every run replays the same views).
fn statuses(run: &tune::Run) -> String {
    let parts: Vec<String> = run
        .statuses
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    parts.join(" ")
}
