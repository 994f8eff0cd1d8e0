//! A server that can be killed (SIGKILL) and restarted on the same dir and
//! port, for persistence tests (`tests/crash.rs`, `tests/stored_numbers.rs`).

use super::{free_port, module_path, server_bin};
use redis::Connection;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One server process on a fixed port and dir, with the module loaded.
pub struct Node {
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
}

impl Node {
    pub fn new(tag: &str) -> Node {
        let port = free_port();
        let dir =
            std::env::temp_dir().join(format!("hotrank-crash-{tag}-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir");
        Node {
            port,
            dir,
            child: None,
        }
    }

    /// Starts the server (with the module) on this node's port and dir and
    /// waits until it has loaded its data and answers PING.
    pub fn start(&mut self, extra: &[&str]) {
        self.start_env(extra, &[]);
    }

    /// [`Node::start`] with extra environment variables for the server
    /// process (`LD_PRELOAD` of a shim library, for one).
    pub fn start_env(&mut self, extra: &[&str], env: &[(&str, &str)]) {
        assert!(self.child.is_none(), "already running");
        let mut cmd = Command::new(server_bin());
        cmd.envs(env.iter().copied());
        cmd.arg("--port")
            .arg(self.port.to_string())
            .args(["--bind", "127.0.0.1", "--save", ""])
            .arg("--dir")
            .arg(&self.dir)
            .arg("--loadmodule")
            .arg(module_path())
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", server_bin()));
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(mut c) = redis::Client::open(self.url()).and_then(|c| c.get_connection()) {
                // A server still loading its AOF answers PING with LOADING.
                if let Ok(pong) = redis::cmd("PING").query::<String>(&mut c) {
                    assert_eq!(pong, "PONG");
                    return;
                }
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "server on port {} exited while starting: {status}",
                    self.port
                );
            }
            assert!(
                Instant::now() < deadline,
                "server on port {} did not start in 30 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL, and waits for the process to be gone.
    pub fn kill9(&mut self) {
        let mut child = self.child.take().expect("running");
        child.kill().expect("SIGKILL");
        child.wait().expect("wait");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    pub fn conn(&self) -> Connection {
        redis::Client::open(self.url())
            .expect("client")
            .get_connection()
            .expect("connect")
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
