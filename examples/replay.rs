//! Demo client: replay a web access log (gzipped or plain) into `HOT.VIEW` and
//! print the resulting hot list.
//!
//! ```text
//! cargo run --release --example replay -- [path/to/log.tsv.gz]
//! ```
//!
//! The log is the demo's TSV (a header line, then tab-separated columns
//! `host logname time method url response bytes [referer useragent]`, `time` in
//! unix seconds) or the Common Log Format; see `examples/shared/log.rs`. Every `GET`
//! of a `.html` page answered with `200` is one view: article = URL path without
//! query string, visitor = host.
//!
//! Environment:
//! - `HOTRANK_SPAWN`  — unless `0`, start a private server on a free port, load the
//!   module into it, and stop it at the end (default). With `0`, connect to an
//!   already running server on `127.0.0.1:$HOTRANK_PORT` (default 6379).
//! - `HOTRANK_SERVER` — server binary to spawn (default `redis-server`).
//! - `HOTRANK_MODULE` — module to load (default `<crate>/target/release/libhotrank.so`).
//! - `HOTRANK_PORT`   — port of the running server when `HOTRANK_SPAWN=0`.
//!
//! Exit codes: 0 ok, 1 error (server error, connection failure, …), 2 log file missing.

use std::collections::BTreeMap;
use std::env;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use redis::Value;

#[path = "shared/cli.rs"]
mod cli;
#[path = "shared/log.rs"]
mod log;
#[path = "shared/replies.rs"]
mod replies;
#[path = "shared/server.rs"]
mod server;

use replies::{pairs, view_status, Pipeline};
use server::SpawnedServer;

const DEFAULT_LOG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/nasa_19950801.tsv.gz");
const BOARD: &str = "hot:{nasa}";
const BATCH: usize = 1000;
const TOP_N: usize = 20;

type Res<T> = Result<T, String>;

fn main() -> ExitCode {
    let path = env::args()
        .nth(1)
        .unwrap_or_else(|| DEFAULT_LOG.to_string());
    if !Path::new(&path).is_file() {
        eprintln!("replay: log file not found: {path}");
        eprintln!("usage: cargo run --release --example replay -- <access-log.tsv.gz>");
        return ExitCode::from(2);
    }
    cli::exit_code("replay", run(&path))
}

fn run(path: &str) -> Res<()> {
    // Keep the spawned server (if any) alive until the end of `run`; its Drop kills it,
    // on the error paths too.
    let spawn = env::var("HOTRANK_SPAWN").map(|v| v != "0").unwrap_or(true);
    let (port, _server) = if spawn {
        let server = SpawnedServer::start()?;
        (server.port, Some(server))
    } else {
        let port = match env::var("HOTRANK_PORT") {
            Ok(p) => p
                .parse::<u16>()
                .map_err(|_| format!("HOTRANK_PORT is not a port number: {p:?}"))?,
            Err(_) => 6379,
        };
        (port, None)
    };

    let url = format!("redis://127.0.0.1:{port}/");
    let client = redis::Client::open(url.as_str()).map_err(|e| format!("bad url {url}: {e}"))?;
    let mut con = client
        .get_connection_with_timeout(Duration::from_secs(5))
        .map_err(|e| {
            format!("cannot connect to {url}: {e} (is a server with hotrank loaded running there?)")
        })?;
    println!("replaying {path} into {BOARD} on {url}");

    // Start from an empty board so that re-running against a long-lived server
    // (HOTRANK_SPAWN=0) does not count everything as a duplicate.
    redis::cmd("DEL")
        .arg(BOARD)
        .query::<i64>(&mut con)
        .map_err(|e| format!("DEL {BOARD}: {e}"))?;

    let started = Instant::now();
    let mut stats = Stats::default();
    let mut batch = Batch::new();
    let counts = log::for_each_line(Path::new(path), None, |line_no, rec| {
        stats.last_time = Some(stats.last_time.map_or(rec.time, |t: i64| t.max(rec.time)));
        if let Some(view) = rec.view(line_no) {
            batch.push(line_no, &view.article, &view.visitor, view.time);
            if batch.len() >= BATCH {
                batch.flush(&mut con, &mut stats)?;
            }
        }
        Ok(())
    })?;
    stats.lines = counts.lines;
    stats.malformed = counts.malformed;
    batch.flush(&mut con, &mut stats)?;
    let elapsed = started.elapsed();

    let counted = stats.statuses.get("counted").copied().unwrap_or(0);
    let duplicates = stats.statuses.get("duplicate").copied().unwrap_or(0);
    let secs = elapsed.as_secs_f64();
    println!();
    println!("lines read      {:>10}", stats.lines);
    if stats.malformed > 0 {
        println!("malformed       {:>10}", stats.malformed);
    }
    println!("views sent      {:>10}", stats.sent);
    println!("counted         {:>10}", counted);
    println!("duplicates      {:>10}", duplicates);
    let others: Vec<String> = stats
        .statuses
        .iter()
        .filter(|(k, _)| k.as_str() != "counted" && k.as_str() != "duplicate")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let other_total: u64 = stats.statuses.values().sum::<u64>() - counted - duplicates;
    if others.is_empty() {
        println!("other statuses  {:>10}", 0);
    } else {
        println!(
            "other statuses  {:>10}  ({})",
            other_total,
            others.join(", ")
        );
    }
    println!("elapsed         {:>10.3} s", secs);
    let rate = if secs > 0.0 {
        stats.sent as f64 / secs
    } else {
        0.0
    };
    println!("throughput      {:>10.0} views/s", rate);

    let Some(at) = stats.last_time else {
        println!("\nno log lines with a timestamp; nothing to rank");
        return Ok(());
    };

    let top = redis::cmd("HOT.TOP")
        .arg(BOARD)
        .arg("LIMIT")
        .arg(TOP_N)
        .arg("WITHSCORES")
        .arg("AT")
        .arg(at)
        .query::<Value>(&mut con)
        .map_err(|e| format!("HOT.TOP {BOARD} LIMIT {TOP_N} WITHSCORES AT {at}: {e}"))?;
    let rows = pairs(&top).map_err(|e| format!("HOT.TOP: {e}"))?;

    println!();
    println!("HOT.TOP {BOARD} LIMIT {TOP_N} WITHSCORES AT {at}");
    println!("{:>4}  {:>20}  article", "rank", "score");
    for (i, (article, score)) in rows.iter().enumerate() {
        println!("{:>4}  {:>20}  {}", i + 1, score, article);
    }
    if rows.is_empty() {
        println!("   (empty)");
    }

    if let Some((article, _)) = rows.first() {
        let reply = redis::cmd("HOT.STATS")
            .arg(BOARD)
            .arg(article)
            .arg("AT")
            .arg(at)
            .query::<Value>(&mut con)
            .map_err(|e| format!("HOT.STATS {BOARD} {article} AT {at}: {e}"))?;
        let fields = pairs(&reply).map_err(|e| format!("HOT.STATS: {e}"))?;
        println!();
        println!("HOT.STATS {BOARD} {article} AT {at}");
        for (field, value) in fields {
            println!("  {field:<14} {value}");
        }
    }
    Ok(())
}

#[derive(Default)]
struct Stats {
    lines: u64,
    malformed: u64,
    sent: u64,
    statuses: BTreeMap<String, u64>,
    last_time: Option<i64>,
}

/// A pipeline of up to BATCH `HOT.VIEW` commands, each described with its log line.
struct Batch(Pipeline);

impl Batch {
    fn new() -> Self {
        Batch(Pipeline::new(BATCH))
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn push(&mut self, line_no: u64, article: &str, visitor: &str, time: i64) {
        self.0
            .cmd(
                "HOT.VIEW",
                format!("log line {line_no}: HOT.VIEW {BOARD} {article} {visitor} AT {time}"),
            )
            .arg(BOARD)
            .arg(article)
            .arg(visitor)
            .arg("AT")
            .arg(time);
    }

    fn flush(&mut self, con: &mut redis::Connection, stats: &mut Stats) -> Res<()> {
        let replies = self.0.send(con)?;
        stats.sent += replies.len() as u64;
        let mut errors = Vec::new();
        for (reply, command) in &replies {
            match view_status(reply) {
                Ok(status) => *stats.statuses.entry(status).or_insert(0) += 1,
                Err(e) => errors.push(format!("{command}: {e}")),
            }
        }
        if !errors.is_empty() {
            for e in errors.iter().take(5) {
                eprintln!("replay: {e}");
            }
            if errors.len() > 5 {
                eprintln!(
                    "replay: ... and {} more errors in this batch",
                    errors.len() - 5
                );
            }
            return Err(format!(
                "{} of {} HOT.VIEW commands in the last pipeline failed (see above)",
                errors.len(),
                replies.len(),
            ));
        }
        Ok(())
    }
}
