//! A private redis-server/valkey-server with the module loaded, for the examples
//! (`replay`, `tune`, `bench`), which include this file with `#[path]`.
//!
//! - `HOTRANK_SERVER` — server binary to spawn (default `redis-server`).
//! - `HOTRANK_MODULE` — module to load (default `<crate>/target/release/libhotrank.so`).
#![allow(dead_code)]

use std::env;
use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

type Res<T> = Result<T, String>;

/// A private redis-server/valkey-server child with the module loaded; killed on drop.
pub struct SpawnedServer {
    child: Child,
    pub port: u16,
    /// The server binary started (`HOTRANK_SERVER` or `redis-server`).
    pub binary: String,
    /// The module loaded, canonical path.
    pub module: PathBuf,
    log: PathBuf,
    /// The server's own `--dir`, removed on drop (see [`Options::private_dir`]).
    dir: Option<PathBuf>,
    stderr_tag: Option<&'static str>,
}

/// How to start the server; `Options::default()` is what [`SpawnedServer::start`] does.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    /// Give the server a temporary working directory of its own (`--dir`, holding
    /// its log), removed when the server is dropped.
    pub private_dir: bool,
    /// Announce start and stop on stderr as `[tag] …` instead of start on stdout,
    /// for an example whose stdout is a report.
    pub stderr_tag: Option<&'static str>,
    /// More server arguments, before `--loadmodule` (e.g. `--repl-diskless-sync-delay 0`).
    pub server_args: &'a [&'a str],
    /// Arguments after the module's path on `--loadmodule` (e.g. `replicate commands`).
    pub module_args: &'a [&'a str],
}

impl SpawnedServer {
    /// Starts the server on a free loopback port and waits until it answers PING.
    pub fn start() -> Res<Self> {
        Self::start_with(Options::default())
    }

    /// [`SpawnedServer::start`] with [`Options`].
    pub fn start_with(opts: Options<'_>) -> Res<Self> {
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
        let (log, dir) = log_and_dir(opts, port)?;
        let log_file =
            File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let log_err = log_file
            .try_clone()
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;

        let mut cmd = Command::new(&binary);
        cmd.arg("--port")
            .arg(port.to_string())
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--appendonly", "no"]);
        if let Some(dir) = &dir {
            cmd.arg("--dir").arg(dir);
        }
        let child = cmd
            .args(opts.server_args)
            .arg("--loadmodule")
            .arg(&module)
            .args(opts.module_args)
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err)
            .spawn()
            .map_err(|e| {
                format!("cannot start {binary}: {e} (set HOTRANK_SERVER to a redis-server or valkey-server binary)")
            })?;
        let started = format!(
            "started {binary} on 127.0.0.1:{port} (pid {}) with --loadmodule {}{}",
            child.id(),
            module.display(),
            opts.module_args
                .iter()
                .map(|a| format!(" {a}"))
                .collect::<String>()
        );
        if let Some(tag) = opts.stderr_tag {
            eprintln!("[{tag}] {started}");
        } else {
            println!("{started}");
        }
        let mut server = SpawnedServer {
            child,
            port,
            binary: binary.clone(),
            module,
            log,
            dir,
            stderr_tag: opts.stderr_tag,
        };
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

/// The server's log file and, with [`Options::private_dir`], its own directory.
fn log_and_dir(opts: Options<'_>, port: u16) -> Res<(PathBuf, Option<PathBuf>)> {
    let name = format!("hotrank-example-{}-{port}", std::process::id());
    if opts.private_dir {
        let dir = env::temp_dir().join(name);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok((dir.join("server.log"), Some(dir)))
    } else {
        Ok((env::temp_dir().join(format!("{name}.log")), None))
    }
}

impl Drop for SpawnedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
        if let Some(tag) = self.stderr_tag {
            eprintln!("[{tag}] stopped {} (port {})", self.binary, self.port);
        }
    }
}
