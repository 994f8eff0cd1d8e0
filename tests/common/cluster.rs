//! A Redis Cluster on loopback for tests: cluster-enabled nodes with the
//! module, each given a slot range, joined, and waited for until every node
//! reports `cluster_state:ok` and sees every range (`tests/cluster.rs`,
//! `tests/reshard.rs`).

use super::{free_port, q, Server};
use redis::{Connection, Value};
use std::time::{Duration, Instant};

/// One master: its server, cluster bus port and slot range.
pub struct Node {
    pub server: Server,
    pub bus: u16,
    pub range: (u16, u16),
}

/// Starts one cluster-enabled node (retrying if its bus port was taken meanwhile).
pub fn start_node(i: usize) -> (Server, u16) {
    for attempt in 0.. {
        let bus = free_port();
        let args = [
            "--cluster-enabled".to_string(),
            "yes".into(),
            "--cluster-config-file".into(),
            format!("nodes-{}-{i}-{attempt}.conf", std::process::id()),
            "--cluster-node-timeout".into(),
            "2000".into(),
            "--cluster-port".into(),
            bus.to_string(),
            "--cluster-announce-ip".into(),
            "127.0.0.1".into(),
        ];
        let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        match std::panic::catch_unwind(|| Server::start_with(&refs, true)) {
            Ok(s) if s.port != bus => return (s, bus),
            Ok(_) => continue,
            Err(e) if attempt >= 4 => std::panic::resume_unwind(e),
            Err(_) => continue,
        }
    }
    unreachable!()
}

pub fn info_field(c: &mut Connection, cmd: &[&str], field: &str) -> Option<String> {
    let text: String = q(c, cmd)
        .ok()
        .and_then(|v| redis::from_redis_value(v).ok())?;
    text.lines().find_map(|l| {
        l.strip_prefix(&format!("{field}:"))
            .map(|v| v.trim().to_string())
    })
}

/// Starts one master per range of `ranges`, gives each its range, joins
/// them and waits until every node reports `cluster_state:ok` with all
/// nodes known and every range in `CLUSTER SLOTS`.
pub fn start_cluster(ranges: &[(u16, u16)]) -> Vec<Node> {
    let nodes: Vec<Node> = (0..ranges.len())
        .map(|i| {
            let (server, bus) = start_node(i);
            Node {
                server,
                bus,
                range: ranges[i],
            }
        })
        .collect();
    for n in &nodes {
        let mut c = n.server.conn();
        let r = q(
            &mut c,
            &[
                "CLUSTER",
                "ADDSLOTSRANGE",
                &n.range.0.to_string(),
                &n.range.1.to_string(),
            ],
        );
        r.unwrap_or_else(|e| panic!("ADDSLOTSRANGE on {}: {e}", n.server.port));
    }
    let mut c0 = nodes[0].server.conn();
    for n in &nodes[1..] {
        q(
            &mut c0,
            &[
                "CLUSTER",
                "MEET",
                "127.0.0.1",
                &n.server.port.to_string(),
                &n.bus.to_string(),
            ],
        )
        .expect("CLUSTER MEET");
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ready = nodes.iter().all(|n| {
            let mut c = n.server.conn();
            info_field(&mut c, &["CLUSTER", "INFO"], "cluster_state").as_deref() == Some("ok")
                && info_field(&mut c, &["CLUSTER", "INFO"], "cluster_known_nodes").as_deref()
                    == Some(ranges.len().to_string().as_str())
                && info_field(&mut c, &["CLUSTER", "INFO"], "cluster_slots_assigned").as_deref()
                    == Some("16384")
        });
        if ready {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "cluster did not reach cluster_state:ok in 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Every node must also see every other node's slots (CLUSTER SLOTS
    // lists every range), so the client's slot map is complete.
    let deadline = Instant::now() + Duration::from_secs(30);
    for n in &nodes {
        let mut c = n.server.conn();
        loop {
            let slots: Vec<Value> = redis::cmd("CLUSTER")
                .arg("SLOTS")
                .query(&mut c)
                .expect("CLUSTER SLOTS");
            if slots.len() == ranges.len() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "CLUSTER SLOTS incomplete on {}",
                n.server.port
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    nodes
}
