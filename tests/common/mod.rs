//! Integration-test harness: starts a real redis-server (or valkey-server)
//! with the module loaded on a free loopback port, and stops it on drop
//! (`SHUTDOWN NOSAVE NOW FORCE`, then SIGKILL if it has not exited in time).
//!
//! - `HOTRANK_SERVER`: server binary (default `redis-server`). `make memcheck`
//!   sets it to `tests/valgrind-server.sh`, which runs redis-server under valgrind.
//! - `HOTRANK_MODULE`: path of `libhotrank.so` (default `target/release/libhotrank.so`;
//!   built with `cargo build --release` first if missing, because `cargo test`
//!   does not rebuild a cdylib for integration tests).
//! - `HOTRANK_START_WAIT_MS`: how long a server may take to answer PING after
//!   it is started (default 30000).
//! - `HOTRANK_SHUTDOWN_WAIT_MS`: how long a dropped server may take to exit
//!   after `SHUTDOWN` before it is killed (default 2000; 0 kills at once).
//!   A graceful exit lets valgrind write its leak report.
#![allow(dead_code)]

pub mod cluster;
pub mod node;
pub mod repl;
pub mod rng;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

static BUILD: Once = Once::new();

/// The module path, building it once if needed.
pub fn module_path() -> PathBuf {
    if let Ok(p) = std::env::var("HOTRANK_MODULE") {
        return PathBuf::from(p);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("target/release/libhotrank.so");
    BUILD.call_once(|| {
        let status = Command::new(env!("CARGO"))
            .args(["build", "--release", "--lib"])
            .current_dir(&root)
            .status()
            .expect("run cargo build");
        assert!(status.success(), "cargo build --release failed");
    });
    path
}

/// The server binary under test.
pub fn server_bin() -> String {
    std::env::var("HOTRANK_SERVER").unwrap_or_else(|_| "redis-server".into())
}

/// A duration in milliseconds from the environment variable `name`, or `default_ms`.
fn env_ms(name: &str, default_ms: u64) -> Duration {
    let ms = std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(default_ms);
    Duration::from_millis(ms)
}

/// Lowest and one past the highest port `free_port` hands out. They sit
/// below Linux's ephemeral range (32768–60999 by default), so a client
/// connection's local port can never take a test server's port between
/// `free_port` and the server's `bind`.
const PORT_LOW: u16 = 12_000;
const PORT_HIGH: u16 = 32_000;

/// A loopback TCP port that was free a moment ago, outside the ephemeral
/// range. Ports are handed out in turn from a per-process start point, so
/// two threads of one test binary never get the same one.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let span = u32::from(PORT_HIGH - PORT_LOW);
    if NEXT.load(Ordering::Relaxed) == u32::MAX {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let seed = (std::process::id().wrapping_mul(7919) ^ nanos) % span;
        let _ = NEXT.compare_exchange(u32::MAX, seed, Ordering::Relaxed, Ordering::Relaxed);
    }
    for _ in 0..span {
        let n = NEXT.fetch_add(1, Ordering::Relaxed) % span;
        let port = PORT_LOW + n as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in {PORT_LOW}..{PORT_HIGH}");
}

/// A running server; shut down (or killed) when dropped.
pub struct Server {
    pub port: u16,
    child: Child,
    pub dir: PathBuf,
}

impl Server {
    /// A server with the module loaded and no persistence.
    pub fn start() -> Server {
        Server::start_with(&[], true)
    }

    /// A server with extra arguments; `with_module` false starts a bare server.
    ///
    /// A server that exits before it answers PING (its port was taken between
    /// `free_port` and its `bind`) is started again on another port, up to
    /// five times.
    pub fn start_with(extra: &[&str], with_module: bool) -> Server {
        for attempt in 1.. {
            let mut server = Server::spawn(extra, with_module);
            if server.wait_ready() {
                return server;
            }
            let status = server.child.try_wait().ok().flatten();
            assert!(
                attempt < 5,
                "server on port {} exited while starting ({status:?}), {attempt} attempts",
                server.port
            );
        }
        unreachable!()
    }

    /// Starts a server with the module loaded with `module_args` (placed right
    /// after the module path) and its log in a file. `Err(log)` when the
    /// server exits instead of answering PING (a module refusing to load
    /// makes the server exit).
    pub fn try_start_with_module_args(module_args: &[&str]) -> Result<Server, String> {
        let log = std::env::temp_dir().join(format!(
            "hotrank-test-{}-{}.log",
            std::process::id(),
            free_port()
        ));
        let log_arg = log.to_string_lossy().into_owned();
        let mut extra: Vec<&str> = module_args.to_vec();
        extra.extend(["--logfile", &log_arg]);
        let mut server = Server::spawn(&extra, true);
        let deadline = Instant::now() + env_ms("HOTRANK_START_WAIT_MS", 30_000);
        loop {
            if !server.alive() {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                let _ = std::fs::remove_file(&log);
                return Err(text);
            }
            if let Ok(mut c) = redis::Client::open(server.url()).and_then(|c| c.get_connection()) {
                if redis::cmd("PING").query::<String>(&mut c).is_ok() {
                    let _ = std::fs::remove_file(&log);
                    return Ok(server);
                }
            }
            assert!(
                Instant::now() < deadline,
                "server on port {} neither started nor exited",
                server.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A server with the module loaded, started from `bin` (not
    /// `HOTRANK_SERVER`) with `env` added to its environment (for example
    /// libfaketime's `LD_PRELOAD` and `FAKETIME`). Started again on another
    /// port if it exits while starting, as `start_with`.
    pub fn start_bin_env(bin: &str, env: &[(&str, &str)]) -> Server {
        for attempt in 1.. {
            let mut server = Server::spawn_bin(bin, env, &[], true);
            if server.wait_ready() {
                return server;
            }
            assert!(
                attempt < 5,
                "{bin} exited while starting, {attempt} attempts"
            );
        }
        unreachable!()
    }

    /// Spawns the server process without waiting for it.
    fn spawn(extra: &[&str], with_module: bool) -> Server {
        Server::spawn_bin(&server_bin(), &[], extra, with_module)
    }

    /// Spawns `bin` with `env` added, without waiting for it.
    fn spawn_bin(bin: &str, env: &[(&str, &str)], extra: &[&str], with_module: bool) -> Server {
        let port = free_port();
        let dir =
            std::env::temp_dir().join(format!("hotrank-test-{}-{}", std::process::id(), port));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let mut cmd = Command::new(bin);
        cmd.envs(env.iter().copied());
        cmd.arg("--port")
            .arg(port.to_string())
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir);
        if with_module {
            cmd.arg("--loadmodule").arg(module_path());
        }
        cmd.args(extra).stdout(Stdio::null()).stderr(Stdio::null());
        let child = cmd.spawn().unwrap_or_else(|e| panic!("start {bin}: {e}"));
        Server { port, child, dir }
    }

    /// Waits until the server answers PING (true) or its process exits (false).
    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + env_ms("HOTRANK_START_WAIT_MS", 30_000);
        loop {
            if let Ok(mut c) = redis::Client::open(self.url()).and_then(|c| c.get_connection()) {
                if redis::cmd("PING").query::<String>(&mut c).is_ok() {
                    return true;
                }
            }
            if !self.alive() {
                return false;
            }
            assert!(
                Instant::now() < deadline,
                "server on port {} did not start",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub fn conn(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .expect("client")
            .get_connection()
            .expect("connect")
    }

    /// A connection authenticated as `user` with `password`.
    pub fn conn_as(&self, user: &str, password: &str) -> redis::Connection {
        let url = format!("redis://{user}:{password}@127.0.0.1:{}/", self.port);
        redis::Client::open(url)
            .expect("client")
            .get_connection()
            .unwrap_or_else(|e| panic!("connect as {user}: {e}"))
    }

    /// Whether the process is still alive.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Server {
    /// Asks the server to exit (`SHUTDOWN NOSAVE NOW FORCE` on a fresh
    /// connection) and waits up to `HOTRANK_SHUTDOWN_WAIT_MS` for the process
    /// to end. Returns whether it ended; errors are ignored (the caller kills).
    fn graceful_stop(&mut self) -> bool {
        let wait = env_ms("HOTRANK_SHUTDOWN_WAIT_MS", 2_000);
        if wait.is_zero() || !matches!(self.child.try_wait(), Ok(None)) {
            return !matches!(self.child.try_wait(), Ok(None));
        }
        let deadline = Instant::now() + wait;
        let step = wait.min(Duration::from_secs(1));
        let Ok(client) = redis::Client::open(self.url()) else {
            return false;
        };
        let Ok(mut c) = client.get_connection_with_timeout(step) else {
            return false;
        };
        let _ = c.set_read_timeout(Some(step));
        let _ = c.set_write_timeout(Some(step));
        let reply: redis::RedisResult<redis::Value> = redis::cmd("SHUTDOWN")
            .arg("NOSAVE")
            .arg("NOW")
            .arg("FORCE")
            .query(&mut c);
        // A server error reply (NOPERM, NOAUTH, ...) means it will not exit by
        // itself. Otherwise the connection was closed (the usual answer) or the
        // read timed out (valgrind writing its report): wait for the exit.
        if let Err(e) = &reply {
            if e.code().is_some() {
                return false;
            }
        }
        drop(c);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return true,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => return false,
            }
        }
    }
}

impl Server {
    /// The server's process id (to stop and continue it with signals).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if !self.graceful_stop() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs a command and returns its reply as a `redis::Value`.
pub fn q(c: &mut redis::Connection, args: &[&str]) -> redis::RedisResult<redis::Value> {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(c)
}

/// The words of `line`, split on white space: a command written as one string,
/// `q(c, &words("RANK.CREATE lb PERIODS day week"))`.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Runs a command that must fail and returns the error text (code and message).
pub fn err(c: &mut redis::Connection, args: &[&str]) -> String {
    match q(c, args) {
        Ok(v) => panic!("{args:?} should fail, got {v:?}"),
        Err(e) => format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""))
            .trim()
            .to_string(),
    }
}

/// Current unix time in seconds.
pub fn now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64
}

/// `CONFIG GET name` → its value.
pub fn config_get(c: &mut redis::Connection, name: &str) -> String {
    let v: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg(name)
        .query(c)
        .expect("CONFIG GET");
    assert_eq!(v.len(), 2, "CONFIG GET {name}: {v:?}");
    v[1].clone()
}

/// `CONFIG SET name value`, which must succeed.
pub fn config_set(c: &mut redis::Connection, name: &str, value: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg(name)
        .arg(value)
        .query(c)
        .unwrap_or_else(|e| panic!("CONFIG SET {name} {value}: {e}"));
}

/// `ACL SETUSER` with `rules` (the user name first), which must succeed.
pub fn acl_setuser(c: &mut redis::Connection, rules: &[&str]) {
    let mut cmd = redis::cmd("ACL");
    cmd.arg("SETUSER");
    for r in rules {
        cmd.arg(*r);
    }
    let () = cmd
        .query(c)
        .unwrap_or_else(|e| panic!("ACL SETUSER {rules:?}: {e}"));
}

/// RANK.CREATE (its `PERIODS`) and the RANK read commands (their `PERIOD …
/// [AGO n]`): the commands that take a period name, RANK.CREATE first.
pub const PERIOD_COMMANDS: &[&str] = &[
    "rank.create",
    "rank.score",
    "rank.rank",
    "rank.range",
    "rank.card",
    "rank.around",
    "rank.rangebyscore",
    "rank.count",
];

/// The RANK read commands: read-only, and each takes `PERIOD … [AGO n]`.
pub const RANK_READS: &[&str] = PERIOD_COMMANDS.split_first().expect("RANK.CREATE").1;

/// Every key with its DUMP payload and absolute expiry in ms (`PEXPIRETIME`,
/// -1 for none).
pub type Keyspace = BTreeMap<Vec<u8>, (Vec<u8>, i64)>;

/// The [`Keyspace`] of the current database. A key that expires between
/// `KEYS` and `DUMP` is left out.
pub fn keyspace(c: &mut redis::Connection) -> Keyspace {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    let mut pipe = redis::pipe();
    for k in &keys {
        pipe.cmd("DUMP").arg(k).cmd("PEXPIRETIME").arg(k);
    }
    let r: Vec<redis::Value> = pipe.query(c).expect("DUMP");
    keys.into_iter()
        .zip(r.chunks(2))
        .filter_map(|(k, v)| match (&v[0], &v[1]) {
            (redis::Value::BulkString(d), redis::Value::Int(e)) => Some((k, (d.clone(), *e))),
            (redis::Value::Nil, _) => None,
            other => panic!("DUMP/PEXPIRETIME of {}: {other:?}", k.escape_ascii()),
        })
        .collect()
}

/// Waits (at most 30 s) until `replica` reports `master_link_status:up`.
pub fn wait_link_up(replica: &Server) {
    let mut rc = replica.conn();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query(&mut rc)
            .expect("INFO replication");
        if info.lines().any(|l| l.trim() == "master_link_status:up") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "replica link did not come up:\n{info}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Keyspace events (event name, key) seen while `f` runs.
pub fn events_during(s: &Server, f: impl FnOnce()) -> Vec<(String, Vec<u8>)> {
    let mut sub = s.conn();
    let mut ps = sub.as_pubsub();
    ps.psubscribe("__keyevent@0__:*").unwrap();
    ps.set_read_timeout(Some(std::time::Duration::from_millis(300)))
        .unwrap();
    f();
    let mut out = Vec::new();
    while let Ok(msg) = ps.get_message() {
        let event = msg
            .get_channel_name()
            .trim_start_matches("__keyevent@0__:")
            .to_string();
        out.push((event, msg.get_payload_bytes().to_vec()));
    }
    out
}

/// A reply as one line of text for assertions: bulk and simple strings as
/// text, integers in decimal, nil as `nil`, OK as `OK`, arrays as `[a b …]`.
pub fn reply_text(v: &redis::Value) -> String {
    match v {
        redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        redis::Value::SimpleString(s) => s.clone(),
        redis::Value::Int(i) => i.to_string(),
        redis::Value::Nil => "nil".into(),
        redis::Value::Okay => "OK".into(),
        redis::Value::Array(a) => format!(
            "[{}]",
            a.iter().map(reply_text).collect::<Vec<_>>().join(" ")
        ),
        other => format!("{other:?}"),
    }
}
