//! Demo client: replay a gzipped TSV web access log into `HOT.VIEW` and print
//! the resulting hot list.
//!
//! ```text
//! cargo run --release --example replay -- [path/to/log.tsv.gz]
//! ```
//!
//! The log has a header line, then tab-separated columns
//! `host logname time method url response bytes [referer useragent]`.
//! `time` is unix seconds (the Common Log Format date `01/Aug/1995:00:00:01 -0400`
//! is accepted too). Every `GET` of a `.html` page answered with `200` is one
//! view: article = URL path without query string, visitor = host.
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
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use flate2::read::GzDecoder;
use redis::Value;

const DEFAULT_LOG: &str = "../shared/data/nasa_19950801.tsv.gz";
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
    match run(&path) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("replay: error: {e}");
            ExitCode::FAILURE
        }
    }
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

    let file = File::open(path).map_err(|e| format!("cannot open {path}: {e}"))?;
    let mut reader = BufReader::with_capacity(1 << 16, GzDecoder::new(file));

    let started = Instant::now();
    let mut stats = Stats::default();
    let mut batch = Batch::new();
    let mut line = Vec::new();
    let mut line_no: u64 = 0;

    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("reading {path} (line {}): {e}", line_no + 1))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if line_no == 1 && text.starts_with("host\t") {
            continue; // header
        }
        stats.lines += 1;
        let Some(rec) = parse_line(text) else {
            stats.malformed += 1;
            continue;
        };
        stats.last_time = Some(stats.last_time.map_or(rec.time, |t: i64| t.max(rec.time)));
        if rec.method != "GET" || rec.response != "200" {
            continue;
        }
        let Some(article) = article_of(rec.url) else {
            continue;
        };
        batch.push(line_no, article, rec.host, rec.time);
        if batch.len() >= BATCH {
            batch.flush(&mut con, &mut stats)?;
        }
    }
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

/// One log record, borrowing from the line.
struct Record<'a> {
    host: &'a str,
    time: i64,
    method: &'a str,
    url: &'a str,
    response: &'a str,
}

fn parse_line(line: &str) -> Option<Record<'_>> {
    let mut cols = line.split('\t');
    let host = cols.next()?.trim();
    let _logname = cols.next()?;
    let time = parse_time(cols.next()?.trim())?;
    let method = cols.next()?.trim();
    let url = cols.next()?.trim();
    let response = cols.next()?.trim();
    if host.is_empty() {
        return None;
    }
    Some(Record {
        host,
        time,
        method,
        url,
        response,
    })
}

/// The article of a request URL: its path without query string or fragment, if it
/// names an `.html` page.
fn article_of(url: &str) -> Option<&str> {
    let path = url.split(['?', '#']).next().unwrap_or("");
    (path.len() > ".html".len() && path.ends_with(".html")).then_some(path)
}

/// Unix seconds, or a Common Log Format date such as `01/Aug/1995:00:00:01 -0400`
/// (optionally in brackets).
fn parse_time(s: &str) -> Option<i64> {
    if let Ok(t) = s.parse::<i64>() {
        return Some(t);
    }
    let s = s.trim_start_matches('[').trim_end_matches(']');
    let (stamp, zone) = match s.split_once(' ') {
        Some((a, b)) => (a, Some(b.trim())),
        None => (s, None),
    };
    let mut it = stamp.splitn(4, [':', '/']);
    let day: i64 = it.next()?.parse().ok()?;
    let month = match it.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = it.next()?.parse().ok()?;
    let mut hms = it.next()?.split(':');
    let h: i64 = hms.next()?.parse().ok()?;
    let m: i64 = hms.next()?.parse().ok()?;
    let sec: i64 = hms.next()?.parse().ok()?;
    let offset = match zone {
        Some(z) if z.len() == 5 => {
            let sign = match &z[..1] {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            let zh: i64 = z[1..3].parse().ok()?;
            let zm: i64 = z[3..5].parse().ok()?;
            sign * (zh * 3600 + zm * 60)
        }
        Some(_) => return None,
        None => 0,
    };
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + sec - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A pipeline of up to BATCH `HOT.VIEW` commands plus what is needed to report errors.
struct Batch {
    pipe: redis::Pipeline,
    origin: Vec<(u64, String)>,
}

impl Batch {
    fn new() -> Self {
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        Batch {
            pipe,
            origin: Vec::with_capacity(BATCH),
        }
    }

    fn len(&self) -> usize {
        self.origin.len()
    }

    fn push(&mut self, line_no: u64, article: &str, visitor: &str, time: i64) {
        self.pipe
            .cmd("HOT.VIEW")
            .arg(BOARD)
            .arg(article)
            .arg(visitor)
            .arg("AT")
            .arg(time);
        self.origin.push((
            line_no,
            format!("HOT.VIEW {BOARD} {article} {visitor} AT {time}"),
        ));
    }

    fn flush(&mut self, con: &mut redis::Connection, stats: &mut Stats) -> Res<()> {
        if self.origin.is_empty() {
            return Ok(());
        }
        let replies: Vec<Value> = self
            .pipe
            .query(con)
            .map_err(|e| format!("sending HOT.VIEW pipeline: {e}"))?;
        if replies.len() != self.origin.len() {
            return Err(format!(
                "pipeline of {} HOT.VIEW commands got {} replies",
                self.origin.len(),
                replies.len()
            ));
        }
        stats.sent += replies.len() as u64;
        let mut errors = Vec::new();
        for (reply, (line_no, command)) in replies.iter().zip(&self.origin) {
            match view_status(reply) {
                Ok(status) => *stats.statuses.entry(status).or_insert(0) += 1,
                Err(e) => errors.push(format!("log line {line_no}: {command}: {e}")),
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
                self.origin.len(),
            ));
        }
        self.pipe.clear();
        self.origin.clear();
        Ok(())
    }
}

/// The status (4th element) of a `HOT.VIEW` reply `[pv, uv, score, status]`.
fn view_status(reply: &Value) -> Res<String> {
    match reply {
        Value::ServerError(e) => Err(format!("server error: {e}")),
        Value::Array(items) if items.len() >= 4 => match &items[3] {
            Value::ServerError(e) => Err(format!("server error: {e}")),
            v => Ok(text(v)),
        },
        other => Err(format!(
            "unexpected reply {other:?} (want [pv, uv, score, status])"
        )),
    }
}

/// Pairs from a flat array `[a, b, a, b, …]` (RESP2), an array of 2-element arrays,
/// or a map (RESP3).
fn pairs(reply: &Value) -> Res<Vec<(String, String)>> {
    match reply {
        Value::Nil => Ok(Vec::new()),
        Value::Map(kv) => Ok(kv.iter().map(|(k, v)| (text(k), text(v))).collect()),
        Value::Array(items)
            if items
                .iter()
                .all(|i| matches!(i, Value::Array(p) if p.len() == 2)) =>
        {
            Ok(items
                .iter()
                .filter_map(|i| match i {
                    Value::Array(p) => Some((text(&p[0]), text(&p[1]))),
                    _ => None,
                })
                .collect())
        }
        Value::Array(items) if items.len() % 2 == 0 => Ok(items
            .chunks(2)
            .map(|p| (text(&p[0]), text(&p[1])))
            .collect()),
        other => Err(format!(
            "unexpected reply {other:?} (want name/value pairs)"
        )),
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

/// A private redis-server/valkey-server child with the module loaded; killed on drop.
struct SpawnedServer {
    child: Child,
    port: u16,
    log: PathBuf,
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
        let log = env::temp_dir().join(format!("hotrank-replay-{}-{port}.log", std::process::id()));
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
            .arg("--loadmodule")
            .arg(&module)
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err)
            .spawn()
            .map_err(|e| {
                format!("cannot start {binary}: {e} (set HOTRANK_SERVER to a redis-server or valkey-server binary)")
            })?;
        let mut server = SpawnedServer { child, port, log };
        println!(
            "started {binary} on 127.0.0.1:{port} (pid {}) with --loadmodule {}",
            server.child.id(),
            module.display()
        );
        server.wait_ready(&binary)?;
        Ok(server)
    }

    fn wait_ready(&mut self, binary: &str) -> Res<()> {
        let url = format!("redis://127.0.0.1:{}/", self.port);
        let client =
            redis::Client::open(url.as_str()).map_err(|e| format!("bad url {url}: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "{binary} exited early ({status}); its output:\n{}",
                    self.log_tail()
                ));
            }
            if let Ok(mut con) = client.get_connection_with_timeout(Duration::from_millis(500)) {
                if redis::cmd("PING").query::<String>(&mut con).is_ok() {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{binary} did not answer PING on port {} within 15 s; its output:\n{}",
                    self.port,
                    self.log_tail()
                ));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for SpawnedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clf_dates() {
        assert_eq!(parse_time("807256800"), Some(807_256_800));
        // 807256800 == 1995-08-01 06:00:00 UTC == 1995-08-01 02:00:00 -0400
        assert_eq!(parse_time("01/Aug/1995:02:00:00 -0400"), Some(807_256_800));
        assert_eq!(
            parse_time("[01/Aug/1995:06:00:00 +0000]"),
            Some(807_256_800)
        );
        assert_eq!(parse_time("01/Jan/1970:00:00:00"), Some(0));
        assert_eq!(parse_time("yesterday"), None);
    }

    #[test]
    fn articles() {
        assert_eq!(article_of("/a/b.html?x=1"), Some("/a/b.html"));
        assert_eq!(article_of("/a/b.gif"), None);
        assert_eq!(article_of("/"), None);
    }
}
