//! A private redis-server/valkey-server with the module loaded, for the examples
//! (`replay`, `tune`), which include this file with `#[path]`.
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
    log: PathBuf,
}

impl SpawnedServer {
    /// Starts the server on a free loopback port and waits until it answers PING.
    pub fn start() -> Res<Self> {
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
        let log =
            env::temp_dir().join(format!("hotrank-example-{}-{port}.log", std::process::id()));
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
