//! Demo client: replay a web access log (gzipped or plain) into `HOT.VIEW` and
//! print the resulting hot list and, beside it, the trending list of the same views
//! (`HOT.TOP … BY trending`), marking the articles listed in only one of the two.
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
//! - `HOTRANK_TRENDING` — the board's trending half-life (`HOT.CREATE …
//!   TRENDING-HALF-LIFE`, default `1h`); `0` creates no trending ranking and prints
//!   only the hot list, as before trending existed (tests/replay-compare.sh, which
//!   also runs this client against older modules).
//!
//! Why 1 hour: the NASA log is one day of traffic, and its pages' "publish time" is
//! their first view, early in the day for most. A 1-hour half-life weighs the last
//! hour of views as much as everything before it, so the trending list is "what is
//! read this afternoon"; 6 hours or more would be close to the day's totals, and
//! minutes would follow single visitors.
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
/// The trending half-life when `HOTRANK_TRENDING` is not set.
const DEFAULT_TRENDING: &str = "1h";

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
    let trending = env::var("HOTRANK_TRENDING").unwrap_or_else(|_| DEFAULT_TRENDING.to_string());
    let trending = (trending != "0").then_some(trending);
    if let Some(half_life) = &trending {
        // HOT.DROP also removes the derived keys DEL left (the trending ZSET among
        // them), then the board is created with its trending half-life.
        redis::cmd("HOT.DROP")
            .arg(BOARD)
            .query::<i64>(&mut con)
            .map_err(|e| format!("HOT.DROP {BOARD}: {e}"))?;
        redis::cmd("HOT.CREATE")
            .arg(BOARD)
            .arg("TRENDING-HALF-LIFE")
            .arg(half_life)
            .query::<()>(&mut con)
            .map_err(|e| format!("HOT.CREATE {BOARD} TRENDING-HALF-LIFE {half_life}: {e}"))?;
        println!("{BOARD} keeps a trending ranking, half-life {half_life}");
    }

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

    let rows = top(&mut con, "", at)?;
    let trending_rows = match trending {
        Some(_) => Some(top(&mut con, "BY trending ", at)?),
        None => None,
    };
    let only = |rows: &[(String, String)], other: Option<&Vec<(String, String)>>, a: &str| {
        other.is_some_and(|o| !o.iter().any(|(b, _)| b == a)) && rows.iter().any(|(b, _)| b == a)
    };
    print_top(&rows, "", at, |a| only(&rows, trending_rows.as_ref(), a));
    if let (Some(half_life), Some(trows)) = (&trending, &trending_rows) {
        print_top(trows, "BY trending ", at, |a| only(trows, Some(&rows), a));
        println!();
        println!("side by side (* listed in this column only; trending half-life {half_life}):");
        let width = rows.iter().map(|(a, _)| a.len()).max().unwrap_or(0).max(3) + 2;
        println!("{:>4}  {:<width$}  trending", "rank", "hot");
        for i in 0..rows.len().max(trows.len()) {
            let cell = |list: &[(String, String)], other: &[(String, String)]| {
                list.get(i).map_or(String::new(), |(a, _)| {
                    let mark = if other.iter().any(|(b, _)| b == a) {
                        ""
                    } else {
                        " *"
                    };
                    format!("{a}{mark}")
                })
            };
            println!(
                "{:>4}  {:<width$}  {}",
                i + 1,
                cell(&rows, trows),
                cell(trows, &rows)
            );
        }
        let hot_only = rows
            .iter()
            .filter(|(a, _)| only(&rows, Some(trows), a))
            .count();
        let trending_only = trows
            .iter()
            .filter(|(a, _)| only(trows, Some(&rows), a))
            .count();
        println!("{hot_only} in the hot list only, {trending_only} in the trending list only");
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

/// `HOT.TOP BOARD [BY trending] LIMIT TOP_N WITHSCORES AT at`: (article, score) pairs.
/// `by` is `""` or `"BY trending "`.
fn top(con: &mut redis::Connection, by: &str, at: i64) -> Res<Vec<(String, String)>> {
    let mut cmd = redis::cmd("HOT.TOP");
    cmd.arg(BOARD);
    for word in by.split_whitespace() {
        cmd.arg(word);
    }
    let reply = cmd
        .arg("LIMIT")
        .arg(TOP_N)
        .arg("WITHSCORES")
        .arg("AT")
        .arg(at)
        .query::<Value>(con)
        .map_err(|e| format!("HOT.TOP {BOARD} {by}LIMIT {TOP_N} WITHSCORES AT {at}: {e}"))?;
    pairs(&reply).map_err(|e| format!("HOT.TOP: {e}"))
}

/// Prints one top with its scores; `only(article)` marks (`*`) an article the other
/// list does not have (never true without trending: the output stays as it was).
fn print_top(rows: &[(String, String)], by: &str, at: i64, only: impl Fn(&str) -> bool) {
    println!();
    println!("HOT.TOP {BOARD} {by}LIMIT {TOP_N} WITHSCORES AT {at}");
    println!("{:>4}  {:>20}  article", "rank", "score");
    for (i, (article, score)) in rows.iter().enumerate() {
        let mark = if only(article) { "  *" } else { "" };
        println!("{:>4}  {:>20}  {}{mark}", i + 1, score, article);
    }
    if rows.is_empty() {
        println!("   (empty)");
    }
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
