//! Helpers of the replication and AOF tests (`tests/hot_settings.rs`,
//! `tests/rank_replication.rs`, `tests/replication_edges.rs`): a replica
//! with DEBUG enabled, WAIT, DEBUG DIGEST, and the `AT` text of a time.

use super::{q, wait_link_up, Server};
use redis::Connection;

/// Server arguments that enable DEBUG (DIGEST) from local clients.
pub const DEBUG_LOCAL: [&str; 2] = ["--enable-debug-command", "local"];

/// Server arguments for an AOF that survives `kill -9` (every write
/// fsynced), with DEBUG enabled.
pub const AOF_ALWAYS: [&str; 6] = [
    "--appendonly",
    "yes",
    "--appendfsync",
    "always",
    "--enable-debug-command",
    "local",
];

/// Runs a command that must succeed.
pub fn ok(c: &mut Connection, args: &[&str]) -> redis::Value {
    q(c, args).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// `DEBUG DIGEST` of the whole keyspace.
pub fn digest(c: &mut Connection) -> String {
    redis::cmd("DEBUG")
        .arg("DIGEST")
        .query(c)
        .expect("DEBUG DIGEST")
}

/// A unix time in ms as the `AT` text `seconds.mmm`.
pub fn ts(ms: i64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// `WAIT 1 5000`: the one replica acknowledged every write so far.
pub fn wait_replica(master: &mut Connection) {
    let n: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query(master)
        .expect("WAIT");
    assert_eq!(n, 1, "replica did not acknowledge");
}

/// A replica of `master` (with the module when `module`), DEBUG enabled,
/// its link up.
pub fn replica_of(master: &Server, module: bool) -> Server {
    replica_on(master.port, module)
}

/// A master named `name` writing an AOF with `appendfsync always`, in
/// `hotrank.replicate` `mode`, and a replica of it (with the module or
/// without, as [`replica_on`]), its link up.
#[allow(dead_code)] // not every test file uses it
pub fn aof_master_and_replica(
    name: &str,
    mode: &str,
    replica_module: bool,
) -> (super::node::Node, Server) {
    let mut master = super::node::Node::new(name);
    master.start(&AOF_ALWAYS);
    super::config_set(&mut master.conn(), "hotrank.replicate", mode);
    let replica = replica_on(master.port, replica_module);
    (master, replica)
}

/// A replica of the master on `port` (a [`Server`] or a
/// [`super::node::Node`]), as [`replica_of`].
#[allow(dead_code)] // not every test file uses it
pub fn replica_on(port: u16, module: bool) -> Server {
    let port = port.to_string();
    let mut args = vec!["--replicaof", "127.0.0.1", port.as_str()];
    args.extend_from_slice(&DEBUG_LOCAL);
    let r = Server::start_with(&args, module);
    wait_link_up(&r);
    r
}
