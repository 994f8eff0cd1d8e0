//! Redis Cluster: a 3-master cluster on loopback, each node with the module.
//!
//! The redis crate's cluster client (`ClusterClient`, sync) routes every
//! `HOT.*` / `RANK.*` command by its first argument, the declared board key
//! (the crate's default for commands it does not know), so no routing by hand
//! is needed. On ~100 boards spread over many slots (hash-tagged `hot:{b0}`
//! and tagless `hot:b7` alike):
//! - no command gets MOVED / ASK / CROSSSLOT, and every reply equals the
//!   reply of a standalone server running the same operations;
//! - every key the module wrote lives on the node that owns its board's slot,
//!   in the board's slot (KEYS, CLUSTER KEYSLOT, CLUSTER COUNTKEYSINSLOT), and
//!   the cluster holds exactly the keys the standalone server holds.

mod common;
use common::cluster::start_cluster;
use common::rng::Rng;
use common::*;
use redis::{Connection, ConnectionLike, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Slot ranges of the three masters.
const RANGES: [(u16, u16); 3] = [(0, 5460), (5461, 10922), (10923, 16383)];

/// Article / member ids, including bytes that matter for key names.
fn id(rng: &mut Rng, prefix: &str) -> Vec<u8> {
    match rng.below(12) {
        0 => format!("{prefix}{{x}}").into_bytes(),
        1 => format!("{{{prefix}}}").into_bytes(),
        2 => format!("{prefix} with space\n").into_bytes(),
        3 => vec![b'z', 0, 0xff, b'}'],
        n => format!("{prefix}{n}").into_bytes(),
    }
}

/// Seconds (with up to 3 decimals) `ms` after `base_s`.
fn at(base_s: i64, ms: i64) -> String {
    let t = base_s * 1000 + ms;
    if t % 1000 == 0 {
        (t / 1000).to_string()
    } else {
        format!("{}.{:03}", t / 1000, t % 1000)
    }
}

type Op = Vec<Vec<u8>>;

fn op(parts: &[&[u8]]) -> Op {
    parts.iter().map(|p| p.to_vec()).collect()
}

/// Every command on every board. Writes use AT so the replies do not depend
/// on the clock; the one RANK.MINCR per board (server clock) comes after the
/// WITHTIME reads, and is the only clock-timed write of its board, so the
/// tie order stays the same on both servers.
fn workload(base_s: i64, seed: u64) -> Vec<Op> {
    let mut rng = Rng(seed);
    let mut boards: Vec<Vec<Op>> = Vec::new();
    for b in 0..50 {
        let key = if b % 5 == 4 {
            format!("hot:b{b}")
        } else {
            format!("hot:{{b{b}}}")
        };
        let k = key.as_bytes();
        let mut ops = Vec::new();
        let articles: Vec<Vec<u8>> = (0..6).map(|_| id(&mut rng, "a")).collect();
        for a in articles.iter().take(3) {
            let p = at(base_s, rng.below(1_800_000) as i64);
            ops.push(op(&[b"HOT.PUBLISH", k, a, p.as_bytes()]));
        }
        for _ in 0..25 {
            let a = &articles[rng.below(6) as usize];
            let v = format!("v{}", rng.below(8));
            let t = at(base_s, 1_800_000 + rng.below(3_600_000) as i64);
            ops.push(op(&[b"HOT.VIEW", k, a, v.as_bytes(), b"AT", t.as_bytes()]));
        }
        let q1 = at(base_s, 5_400_000);
        let q2 = at(base_s, 9_000_000);
        ops.push(op(&[b"HOT.TOP", k, b"WITHSCORES", b"AT", q1.as_bytes()]));
        ops.push(op(&[
            b"HOT.TOP",
            k,
            b"LIMIT",
            b"3",
            b"WINDOW",
            b"1h",
            b"WITHSCORES",
            b"AT",
            q2.as_bytes(),
        ]));
        ops.push(op(&[
            b"HOT.TOP",
            k,
            b"LIMIT",
            b"10",
            b"WINDOW",
            b"90m",
            b"AT",
            q1.as_bytes(),
        ]));
        for a in &articles {
            ops.push(op(&[b"HOT.STATS", k, a, b"AT", q1.as_bytes()]));
        }
        // A republish of a viewed article (rescored), then the reads again.
        let p = at(base_s, 600_000);
        ops.push(op(&[b"HOT.PUBLISH", k, &articles[0], p.as_bytes()]));
        ops.push(op(&[b"HOT.TOP", k, b"WITHSCORES", b"AT", q2.as_bytes()]));
        ops.push(op(&[b"HOT.STATS", k, &articles[0], b"AT", q2.as_bytes()]));
        boards.push(ops);
    }
    for b in 0..50 {
        let key = if b % 5 == 4 {
            format!("lb:b{b}")
        } else {
            format!("lb:{{b{b}}}")
        };
        let k = key.as_bytes();
        let mut ops = Vec::new();
        match b % 3 {
            0 => ops.push(op(&[
                b"RANK.CREATE",
                k,
                b"RESOLUTION",
                b"ms",
                b"MIN",
                b"-1000",
                b"MAX",
                b"1000",
            ])),
            1 => ops.push(op(&[b"RANK.CREATE", k])),
            _ => {}
        }
        let members: Vec<Vec<u8>> = (0..8).map(|_| id(&mut rng, "m")).collect();
        for i in 0..30 {
            let m = &members[rng.below(8) as usize];
            let t = at(base_s, i * 1000 + rng.below(3) as i64 * 500);
            if rng.below(4) == 0 {
                let s = (rng.below(40) as i64 - 10).to_string();
                ops.push(op(&[b"RANK.SET", k, m, s.as_bytes(), b"AT", t.as_bytes()]));
            } else {
                let d = (rng.below(7) as i64 - 2).to_string();
                ops.push(op(&[b"RANK.INCR", k, m, d.as_bytes(), b"AT", t.as_bytes()]));
            }
        }
        // Errors route and reply the same too.
        ops.push(op(&[b"RANK.CREATE", k]));
        ops.push(op(&[
            b"RANK.SET",
            k,
            b"big",
            b"99999999999",
            b"AT",
            at(base_s, 0).as_bytes(),
        ]));
        let reads = |ops: &mut Vec<Op>, withtime: bool, rng: &mut Rng| {
            for m in &members {
                if withtime {
                    ops.push(op(&[b"RANK.SCORE", k, m, b"WITHTIME"]));
                } else {
                    ops.push(op(&[b"RANK.SCORE", k, m]));
                }
                ops.push(op(&[b"RANK.RANK", k, m]));
                ops.push(op(&[b"RANK.RANK", k, m, b"TIES"]));
            }
            let m = &members[rng.below(8) as usize];
            ops.push(op(&[b"RANK.AROUND", k, m, b"2"]));
            ops.push(op(&[b"RANK.RANGE", k, b"0", b"-1", b"WITHSCORES"]));
            ops.push(op(&[b"RANK.RANGE", k, b"1", b"3"]));
            ops.push(op(&[b"RANK.RANGEBYSCORE", k, b"0", b"+inf", b"WITHSCORES"]));
            ops.push(op(&[
                b"RANK.RANGEBYSCORE",
                k,
                b"-inf",
                b"5",
                b"LIMIT",
                b"1",
                b"2",
            ]));
            ops.push(op(&[b"RANK.CARD", k]));
        };
        reads(&mut ops, true, &mut rng);
        ops.push(op(&[
            b"RANK.MINCR",
            k,
            b"3",
            &members[0],
            &members[1],
            b"new",
        ]));
        ops.push(op(&[b"RANK.REM", k, &members[2], b"absent"]));
        reads(&mut ops, false, &mut rng);
        // Dropped (board and layout, one slot), then made again ascending
        // and written with keep-best updates.
        if b % 2 == 0 {
            ops.push(op(&[b"RANK.DROP", k]));
            ops.push(op(&[b"RANK.CREATE", k, b"ORDER", b"asc"]));
            for i in 0..10 {
                let m = &members[rng.below(8) as usize];
                let t = at(base_s, 40_000 + i * 1000);
                let s = (rng.below(40) as i64 - 10).to_string();
                let cond: &[u8] = [&b"BEST"[..], b"GT", b"LT"][rng.below(3) as usize];
                ops.push(op(&[
                    b"RANK.SET",
                    k,
                    m,
                    s.as_bytes(),
                    cond,
                    b"AT",
                    t.as_bytes(),
                ]));
            }
            reads(&mut ops, true, &mut rng);
        }
        boards.push(ops);
    }
    // Interleave the boards, so consecutive commands go to different nodes.
    let mut out = Vec::new();
    let longest = boards.iter().map(|b| b.len()).max().unwrap_or(0);
    for i in 0..longest {
        for b in &boards {
            if let Some(o) = b.get(i) {
                out.push(o.clone());
            }
        }
    }
    out
}

/// A reply in comparable form: the value, or "CODE detail" of an error.
fn run_all(c: &mut dyn ConnectionLike, ops: &[Op]) -> Vec<Result<Value, String>> {
    ops.iter()
        .map(|o| {
            let mut cmd = redis::cmd(std::str::from_utf8(&o[0]).unwrap());
            for a in &o[1..] {
                cmd.arg(a.as_slice());
            }
            cmd.query::<Value>(c).map_err(|e| {
                format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""))
                    .trim()
                    .to_string()
            })
        })
        .collect()
}

fn show(o: &Op) -> String {
    o.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

fn keys(c: &mut Connection) -> Vec<Vec<u8>> {
    redis::cmd("KEYS").arg("*").query(c).expect("KEYS")
}

/// The board a key belongs to: the bytes before the first zero byte.
fn board_of(key: &[u8]) -> &[u8] {
    key.split(|&b| b == 0).next().unwrap_or(key)
}

fn keyslot(c: &mut Connection, key: &[u8]) -> u16 {
    redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(key)
        .query(c)
        .expect("CLUSTER KEYSLOT")
}

#[test]
fn every_command_routes_by_board_key_and_matches_a_standalone_server() {
    let nodes = start_cluster(&RANGES);
    let base_s = now_s() - 4 * 3600;
    let seed = 0x5eed_c1a5_7e12;
    let ops = workload(base_s, seed);

    let urls: Vec<String> = nodes.iter().map(|n| n.server.url()).collect();
    let client = redis::cluster::ClusterClient::new(urls).expect("cluster client");
    let mut cc = client.get_connection().expect("cluster connection");
    let got = run_all(&mut cc, &ops);

    // Each command went straight to the node owning its board's slot: the
    // nodes ran exactly their boards' commands and redirected none (a MOVED
    // reply counts as a rejected call in INFO commandstats).
    for n in &nodes {
        let mut c = n.server.conn();
        let mut want_calls: BTreeMap<String, i64> = BTreeMap::new();
        for o in &ops {
            if (n.range.0..=n.range.1).contains(&hotrank::keys::slot(&o[1])) {
                let name = String::from_utf8_lossy(&o[0]).to_lowercase();
                *want_calls.entry(name).or_default() += 1;
            }
        }
        let stats: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut c)
            .unwrap();
        let mut calls: BTreeMap<String, i64> = BTreeMap::new();
        for line in stats.lines() {
            let Some((name, fields)) = line
                .strip_prefix("cmdstat_")
                .and_then(|l| l.split_once(':'))
            else {
                continue;
            };
            if !(name.starts_with("hot.") || name.starts_with("rank.")) {
                continue;
            }
            for f in fields.split(',') {
                match f.split_once('=') {
                    Some(("calls", v)) => {
                        calls.insert(name.to_string(), v.parse().unwrap());
                    }
                    Some(("rejected_calls", v)) => {
                        assert_eq!(
                            v, "0",
                            "node {}: {name} was rejected (redirected)",
                            n.server.port
                        )
                    }
                    _ => {}
                }
            }
        }
        assert_eq!(
            calls, want_calls,
            "node {}: calls per command",
            n.server.port
        );
    }

    let single = Server::start();
    let mut sc = single.conn();
    let want = run_all(&mut sc, &ops);

    let mut errors = 0;
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if let Err(e) = g {
            errors += 1;
            for bad in ["MOVED", "ASK", "CROSSSLOT", "TRYAGAIN", "CLUSTERDOWN"] {
                assert!(!e.contains(bad), "{}: cluster error {e}", show(&ops[i]));
            }
        }
        assert_eq!(g, w, "op #{i} `{}`: cluster vs standalone", show(&ops[i]));
    }
    // The deliberate errors (2 per RANK board) and no others.
    assert_eq!(errors, 100, "errors in the cluster run");
    // The results are not trivial: every HOT board has a top list.
    let tops = ops
        .iter()
        .zip(&got)
        .filter(|(o, r)| o[0] == b"HOT.TOP" && matches!(r, Ok(Value::Array(a)) if !a.is_empty()))
        .count();
    assert!(tops >= 100, "only {tops} non-empty HOT.TOP replies");

    // Every key lives on the node owning its board's slot, in that slot.
    let mut cluster_keys = BTreeSet::new();
    let mut slots_used = BTreeSet::new();
    for n in &nodes {
        let mut c = n.server.conn();
        let mut board_slots: BTreeMap<u16, i64> = BTreeMap::new();
        let ks = keys(&mut c);
        for k in &ks {
            let slot = keyslot(&mut c, k);
            let board_slot = keyslot(&mut c, board_of(k));
            let lossy = String::from_utf8_lossy(k);
            assert_eq!(slot, board_slot, "key {lossy:?} is not in its board's slot");
            assert!(
                (n.range.0..=n.range.1).contains(&slot),
                "key {lossy:?} (slot {slot}) is on node {} owning {:?}",
                n.server.port,
                n.range
            );
            assert_eq!(
                slot,
                hotrank::keys::crc16(hotrank::keys::hash_tag(board_of(k)).unwrap_or(board_of(k)))
                    % 16384
            );
            *board_slots.entry(slot).or_default() += 1;
            assert!(cluster_keys.insert(k.clone()), "key {lossy:?} on two nodes");
        }
        for (slot, count) in &board_slots {
            let n_in_slot: i64 = redis::cmd("CLUSTER")
                .arg("COUNTKEYSINSLOT")
                .arg(*slot)
                .query(&mut c)
                .expect("COUNTKEYSINSLOT");
            assert_eq!(n_in_slot, *count, "slot {slot}");
            slots_used.insert(*slot);
        }
        let dbsize: i64 = redis::cmd("DBSIZE").query(&mut c).expect("DBSIZE");
        assert_eq!(dbsize as usize, ks.len());
        assert!(
            !ks.is_empty(),
            "node {} holds no key: boards not spread",
            n.server.port
        );
    }
    // hot:{bN} and lb:{bN} share the tag bN: 40 tags and 20 tagless boards.
    assert!(
        slots_used.len() >= 55,
        "boards use only {} slots",
        slots_used.len()
    );
    let single_keys: BTreeSet<Vec<u8>> = keys(&mut sc).into_iter().collect();
    assert_eq!(
        cluster_keys, single_keys,
        "the cluster and the standalone server hold other keys"
    );
}

#[test]
fn cluster_node_refuses_a_board_of_another_slot_with_moved() {
    // Without the cluster client, a node redirects a board it does not own:
    // the module command is routed by its declared key like any command.
    let nodes = start_cluster(&RANGES);
    let mut c = nodes[0].server.conn();
    // A board whose slot is not in node 0's range.
    let board = (0..)
        .map(|i| format!("hot:{{r{i}}}"))
        .find(|b| keyslot(&mut c, b.as_bytes()) > RANGES[0].1)
        .unwrap();
    for args in [
        vec!["HOT.VIEW", &board, "a", "v"],
        vec!["HOT.TOP", &board],
        vec!["RANK.INCR", &board, "m", "1"],
        vec!["RANK.CARD", &board],
        vec!["RANK.DROP", &board],
    ] {
        let e = err(&mut c, &args);
        assert!(e.starts_with("MOVED"), "{args:?}: {e}");
    }
    let dbsize: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(dbsize, 0);
}
