//! Replication: a master with the module and a replica, with and without
//! the module. Every write command runs on the master (HOT.PUBLISH, HOT.VIEW
//! with and without AT and duplicates, RANK.CREATE, RANK.INCR/SET with and
//! without AT, RANK.REM, refused writes, MULTI/EXEC); then every key must be
//! identical on the replica: same names (binary-safe), type, DUMP payload and
//! TTL presence, and the same DEBUG DIGEST when the server allows DEBUG. With
//! the module on the replica, the read commands answer the same there.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::rng::SplitMix as Rng;
use common::*;
use redis::{Connection, Value};
use std::time::Instant;

/// DEBUG is off by default since Redis 7; allow it from loopback clients.
const DEBUG_LOCAL: [&str; 2] = ["--enable-debug-command", "local"];

fn bcmd(args: &[&[u8]]) -> redis::Cmd {
    let mut c = redis::cmd(std::str::from_utf8(args[0]).expect("command name"));
    for a in &args[1..] {
        c.arg(*a);
    }
    c
}

fn lossy(args: &[&[u8]]) -> Vec<String> {
    args.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// A master with the module, and a replica of it (with or without the module)
/// whose link is up.
fn pair(replica_module: bool) -> (Server, Server) {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let port = master.port.to_string();
    let mut args = vec!["--replicaof", "127.0.0.1", port.as_str()];
    args.extend_from_slice(&DEBUG_LOCAL);
    let replica = Server::start_with(&args, replica_module);
    wait_link_up(&replica);
    (master, replica)
}

const HOT_BOARDS: [&[u8]; 3] = [b"hot:{news}", b"hot:tech", b"hot:{a b}\nc"];
const RANK_BOARDS: [&[u8]; 5] = [b"lb:s", b"lb:{ms}", b"lb:wide", b"lb:implicit", b"lb:gone"];

fn articles() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..25).map(|i| format!("a{i}").into_bytes()).collect();
    v.extend([
        b"a:1:x".to_vec(),
        b"{tagged}".to_vec(),
        "статья".as_bytes().to_vec(),
        b"with space\n".to_vec(),
        b"z\0z".to_vec(),
    ]);
    v
}

fn visitors() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..40).map(|i| format!("v{i}").into_bytes()).collect();
    v.extend([b"u:1".to_vec(), b"{v}".to_vec(), b"".to_vec()]);
    v
}

fn members() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..30).map(|i| format!("m{i}").into_bytes()).collect();
    v.extend([b"".to_vec(), b"m\0n".to_vec(), "é".as_bytes().to_vec()]);
    v
}

/// Runs `n` seeded random write commands on the master, every kind, and
/// checks each succeeds or fails as it should. Returns (ok, refused) counts.
/// The first round creates the boards.
fn load(c: &mut Connection, seed: u64, n: usize, first: bool) -> (usize, usize) {
    let mut rng = Rng(seed);
    let now = now_s();
    let (arts, vis, mems) = (articles(), visitors(), members());
    let (mut oks, mut errs) = (0, 0);
    // `should_fail`: None when either outcome is right.
    let mut run = |c: &mut Connection, args: &[&[u8]], should_fail: Option<bool>| {
        let r = bcmd(args).query::<Value>(c);
        match (&r, should_fail) {
            (Ok(_), Some(false) | None) => oks += 1,
            (Err(_), Some(true) | None) => errs += 1,
            _ => panic!("{:?}: {r:?}", lossy(args)),
        }
    };
    // Boards with every layout; one more board is made by its first write.
    for (k, opts) in [
        (RANK_BOARDS[0], &[][..]),
        (RANK_BOARDS[1], &[&b"RESOLUTION"[..], b"ms"][..]),
        (
            RANK_BOARDS[2],
            &[&b"MIN"[..], b"0", b"MAX", b"4294967295"][..],
        ),
        (
            RANK_BOARDS[4],
            &[&b"RESOLUTION"[..], b"ms", b"MIN", b"-5", b"MAX", b"5"][..],
        ),
    ] {
        let mut args = vec![&b"RANK.CREATE"[..], k];
        args.extend_from_slice(opts);
        if first {
            run(c, &args, Some(false));
        }
        run(c, &args, Some(true)); // already exists
    }
    for _ in 0..n {
        let past = (now - 1 - rng.below(86_400) as i64).to_string();
        let past_ms = format!("{past}.{:03}", rng.below(1000));
        let at: Option<&str> = match rng.below(3) {
            0 => None,
            1 => Some(&past),
            _ => Some(&past_ms),
        };
        let mut args: Vec<Vec<u8>>;
        let mut fail = Some(false);
        match rng.below(100) {
            0..=9 => {
                let published = now - rng.below(7 * 86_400) as i64;
                args = vec![
                    b"HOT.PUBLISH".to_vec(),
                    rng.pick(&HOT_BOARDS).to_vec(),
                    rng.pick(&arts).clone(),
                    published.to_string().into_bytes(),
                ];
            }
            10..=49 => {
                // Few visitors per article: many duplicates.
                let v = if rng.below(2) == 0 {
                    rng.pick(&vis[..4]).clone()
                } else {
                    rng.pick(&vis).clone()
                };
                args = vec![
                    b"HOT.VIEW".to_vec(),
                    rng.pick(&HOT_BOARDS).to_vec(),
                    rng.pick(&arts[..8]).clone(),
                    v,
                ];
                if let Some(t) = at {
                    args.extend([b"AT".to_vec(), t.as_bytes().to_vec()]);
                }
            }
            50..=94 => {
                // May be refused (out of a board's range): either is fine.
                let k = *rng.pick(&RANK_BOARDS);
                let cmd = [&b"RANK.INCR"[..], b"RANK.SET"][rng.below(2) as usize];
                let v: i64 = match rng.below(10) {
                    0 => 0,
                    1..=6 => rng.below(21) as i64 - 10,
                    _ => rng.below(1_000_000) as i64,
                };
                args = vec![
                    cmd.to_vec(),
                    k.to_vec(),
                    rng.pick(&mems).clone(),
                    v.to_string().into_bytes(),
                ];
                if let Some(t) = at {
                    args.extend([b"AT".to_vec(), t.as_bytes().to_vec()]);
                }
                fail = None;
            }
            95..=97 => {
                args = vec![b"RANK.REM".to_vec(), rng.pick(&RANK_BOARDS).to_vec()];
                for _ in 0..=rng.below(4) {
                    args.push(rng.pick(&mems).clone());
                }
            }
            _ => {
                // Refused writes, some on keys that do not exist yet.
                fail = Some(true);
                let fresh = format!("lb:fresh{}", rng.below(3)).into_bytes();
                let future = (now + 3600).to_string().into_bytes();
                args = match rng.below(7) {
                    0 => vec![
                        b"RANK.SET".to_vec(),
                        fresh,
                        b"m".to_vec(),
                        b"1073741824".to_vec(),
                    ],
                    1 => vec![
                        b"RANK.INCR".to_vec(),
                        fresh,
                        b"m".to_vec(),
                        b"1".to_vec(),
                        b"AT".to_vec(),
                        b"1500000000".to_vec(),
                    ],
                    2 => vec![
                        b"RANK.INCR".to_vec(),
                        RANK_BOARDS[0].to_vec(),
                        b"m1".to_vec(),
                        b"1".to_vec(),
                        b"AT".to_vec(),
                        future,
                    ],
                    3 => vec![
                        b"HOT.VIEW".to_vec(),
                        HOT_BOARDS[0].to_vec(),
                        b"a1".to_vec(),
                        b"v1".to_vec(),
                        b"AT".to_vec(),
                        future,
                    ],
                    4 => vec![
                        b"HOT.PUBLISH".to_vec(),
                        HOT_BOARDS[0].to_vec(),
                        b"a1".to_vec(),
                        b"junk".to_vec(),
                    ],
                    5 => vec![
                        b"RANK.CREATE".to_vec(),
                        fresh,
                        b"MIN".to_vec(),
                        b"5".to_vec(),
                        b"MAX".to_vec(),
                        b"5".to_vec(),
                    ],
                    _ => vec![
                        b"RANK.SET".to_vec(),
                        RANK_BOARDS[2].to_vec(),
                        b"m".to_vec(),
                        b"-1".to_vec(),
                    ],
                };
            }
        }
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        run(c, &argv, fail);
    }
    // Module writes inside MULTI/EXEC.
    let r: Vec<Value> = redis::pipe()
        .atomic()
        .cmd("RANK.INCR")
        .arg(RANK_BOARDS[0])
        .arg("multi")
        .arg(3)
        .cmd("HOT.VIEW")
        .arg(HOT_BOARDS[0])
        .arg("a1")
        .arg("multi-visitor")
        .cmd("RANK.SET")
        .arg(RANK_BOARDS[1])
        .arg("multi")
        .arg(7)
        .arg("AT")
        .arg(now - 5)
        .query(c)
        .expect("MULTI/EXEC");
    assert_eq!(r.len(), 3);
    // A board emptied by RANK.REM (its ZSET goes; the layout stays).
    let mut rem = vec![b"RANK.REM".to_vec(), RANK_BOARDS[4].to_vec()];
    rem.extend(mems.iter().cloned());
    let argv: Vec<&[u8]> = rem.iter().map(|a| a.as_slice()).collect();
    run(c, &argv, Some(false));
    (oks, errs)
}

fn keys(c: &mut Connection) -> Vec<Vec<u8>> {
    let mut k: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    k.sort();
    k
}

/// Waits until the replica acknowledged every write.
fn wait_replica(master: &mut Connection) {
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query(master)
        .expect("WAIT");
    assert_eq!(acked, 1, "the replica did not acknowledge the writes");
}

/// A HyperLogLog's bytes with its cached cardinality (header bytes 8..16)
/// blanked: PFCOUNT caches it on the master only (see
/// `hyperloglog_bytes_and_debug_digest_match_exactly`).
fn hll_registers(raw: &[u8]) -> Vec<u8> {
    let mut v = raw.to_vec();
    v[8..16].fill(0);
    v
}

/// `DEBUG DIGEST-VALUE key`, or `None` when DEBUG is not allowed.
fn digest_value(c: &mut Connection, k: &[u8]) -> Option<String> {
    let r: redis::RedisResult<Vec<String>> =
        redis::cmd("DEBUG").arg("DIGEST-VALUE").arg(k).query(c);
    r.ok().map(|mut v| v.remove(0))
}

/// What the key comparison covered.
#[derive(Default, Debug)]
struct Compared {
    keys: usize,
    dumps: usize,
    digests: usize,
    hlls: usize,
    hashtables: usize,
    /// String encodings that differ, as "master/replica".
    string_encodings: std::collections::BTreeSet<String>,
}

/// Waits for the replica, then compares every key: names, TYPE, TTL
/// presence, contents, DUMP payload and DEBUG DIGEST-VALUE. Two exceptions,
/// both compared another way: a HyperLogLog's cached cardinality, and the
/// DUMP of a hash in hashtable encoding, whose field order follows each
/// server's own hash seed.
fn compare_all(master: &mut Connection, replica: &mut Connection) -> Compared {
    wait_replica(master);
    let (mk, rk) = (keys(master), keys(replica));
    assert!(!mk.is_empty());
    if mk != rk {
        let only_m: Vec<&[u8]> = mk
            .iter()
            .filter(|k| !rk.contains(k))
            .map(|k| k.as_slice())
            .collect();
        let only_r: Vec<&[u8]> = rk
            .iter()
            .filter(|k| !mk.contains(k))
            .map(|k| k.as_slice())
            .collect();
        panic!(
            "key sets differ: only on master {:?}, only on replica {:?}",
            lossy(&only_m),
            lossy(&only_r)
        );
    }
    let mut seen = Compared {
        keys: mk.len(),
        ..Compared::default()
    };
    let mut diffs = Vec::new();
    for k in &mk {
        let name = String::from_utf8_lossy(k).into_owned();
        let both = |cmd: &str, m: &mut Connection, r: &mut Connection| -> [Value; 2] {
            [m, r].map(|c| {
                redis::cmd(cmd)
                    .arg(k)
                    .query::<Value>(c)
                    .unwrap_or_else(|e| panic!("{cmd} {name:?}: {e}"))
            })
        };
        let [tm, tr] = both("TYPE", master, replica);
        assert_eq!(tm, tr, "TYPE of {name:?}");
        let Value::SimpleString(ty) = tm else {
            panic!("TYPE {tm:?}")
        };
        let [pm, pr] = both("PTTL", master, replica);
        let has_ttl = |v: &Value| matches!(v, Value::Int(t) if *t >= 0);
        assert_eq!(
            has_ttl(&pm),
            has_ttl(&pr),
            "TTL presence of {name:?}: {pm:?} {pr:?}"
        );
        let enc: [String; 2] = [&mut *master, &mut *replica].map(|c| {
            redis::cmd("OBJECT")
                .arg("ENCODING")
                .arg(k)
                .query(c)
                .expect("OBJECT ENCODING")
        });
        // Strings may differ: the module reads them with RedisModule_StringDMA,
        // which turns an int or embstr string into a raw one on the master.
        if ty == "string" {
            if enc[0] != enc[1] {
                seen.string_encodings
                    .insert(format!("{}/{}", enc[0], enc[1]));
            }
        } else {
            assert_eq!(enc[0], enc[1], "encoding of {name:?}");
        }
        let [dm, dr] = both("DUMP", master, replica);
        assert!(matches!(dm, Value::BulkString(_)), "DUMP of {name:?}");
        let mut is_hll = false;
        match ty.as_str() {
            "string" => {
                let [Value::BulkString(gm), Value::BulkString(gr)] = both("GET", master, replica)
                else {
                    panic!("GET {name:?}")
                };
                is_hll = gm.starts_with(b"HYLL");
                if is_hll {
                    seen.hlls += 1;
                    assert_eq!(
                        hll_registers(&gm),
                        hll_registers(&gr),
                        "HyperLogLog {name:?}"
                    );
                } else {
                    assert_eq!(gm, gr, "value of {name:?}");
                }
            }
            "zset" => {
                let [zm, zr] = [&mut *master, &mut *replica].map(|c| {
                    redis::cmd("ZRANGE")
                        .arg(k)
                        .arg(0)
                        .arg(-1)
                        .arg("WITHSCORES")
                        .query::<Vec<Vec<u8>>>(c)
                        .expect("ZRANGE")
                });
                assert_eq!(zm, zr, "members and scores of {name:?}");
            }
            "hash" => {
                let [hm, hr] = [&mut *master, &mut *replica].map(|c| {
                    let mut v: Vec<(Vec<u8>, Vec<u8>)> =
                        redis::cmd("HGETALL").arg(k).query(c).expect("HGETALL");
                    v.sort();
                    v
                });
                assert_eq!(hm, hr, "fields of {name:?}");
            }
            other => panic!("unexpected type {other} of {name:?}"),
        }
        let hashtable = ty == "hash" && enc[0] == "hashtable";
        if hashtable {
            seen.hashtables += 1;
        } else if !is_hll {
            seen.dumps += 1;
            if dm != dr {
                diffs.push(format!("{name:?} ({ty}, {})", enc[0]));
            }
        }
        if !is_hll {
            // None when DEBUG is not allowed: reported below.
            if let (Some(a), Some(b)) = (digest_value(master, k), digest_value(replica, k)) {
                seen.digests += 1;
                assert_eq!(a, b, "DEBUG DIGEST-VALUE of {name:?}");
            }
        }
    }
    assert!(
        diffs.is_empty(),
        "DUMP payloads differ for {} keys: {diffs:?}",
        diffs.len()
    );
    if seen.digests == 0 {
        eprintln!("DEBUG DIGEST-VALUE skipped: the server does not allow DEBUG");
    }
    seen
}

/// The read commands answer the same on master and replica.
fn compare_reads(master: &mut Connection, replica: &mut Connection) -> usize {
    let now = now_s();
    let at = (now - 60).to_string();
    let mut reads: Vec<Vec<Vec<u8>>> = Vec::new();
    let v = |a: &[&[u8]]| a.iter().map(|x| x.to_vec()).collect::<Vec<_>>();
    for k in HOT_BOARDS {
        reads.push(v(&[
            b"HOT.TOP",
            k,
            b"LIMIT",
            b"100",
            b"WITHSCORES",
            b"AT",
            at.as_bytes(),
        ]));
        reads.push(v(&[b"HOT.TOP", k, b"LIMIT", b"3", b"AT", at.as_bytes()]));
        reads.push(v(&[
            b"HOT.TOP",
            k,
            b"WINDOW",
            b"2d",
            b"WITHSCORES",
            b"AT",
            at.as_bytes(),
        ]));
        for a in articles() {
            reads.push(v(&[b"HOT.STATS", k, &a, b"AT", at.as_bytes()]));
        }
    }
    for k in RANK_BOARDS {
        reads.push(v(&[b"RANK.RANGE", k, b"0", b"-1", b"WITHSCORES"]));
        reads.push(v(&[b"RANK.RANGE", k, b"2", b"5"]));
        reads.push(v(&[b"RANK.CARD", k]));
        for m in members().iter().chain([&b"multi".to_vec()]) {
            reads.push(v(&[b"RANK.SCORE", k, m, b"WITHTIME"]));
            reads.push(v(&[b"RANK.RANK", k, m]));
            reads.push(v(&[b"RANK.RANK", k, m, b"TIES"]));
        }
    }
    let mut nonempty = 0;
    for r in &reads {
        let argv: Vec<&[u8]> = r.iter().map(|a| a.as_slice()).collect();
        let a: Value = bcmd(&argv)
            .query(master)
            .unwrap_or_else(|e| panic!("{:?}: {e}", lossy(&argv)));
        let b: Value = bcmd(&argv)
            .query(replica)
            .unwrap_or_else(|e| panic!("{:?} on the replica: {e}", lossy(&argv)));
        assert_eq!(a, b, "{:?}", lossy(&argv));
        if !matches!(a, Value::Nil) && a != Value::Array(vec![]) {
            nonempty += 1;
        }
    }
    assert!(
        nonempty > reads.len() / 3,
        "only {nonempty} of {} reads had data",
        reads.len()
    );
    reads.len()
}

fn check_replication(replica_module: bool) {
    let (mut m, mut r) = pair(replica_module);
    let (mc, rc) = (&mut m.conn(), &mut r.conn());
    let started = Instant::now();
    let (ok1, err1) = load(mc, 7, 1500, true);
    let n1 = compare_all(mc, rc);
    assert!(n1.keys > 100 && n1.hlls > 0 && n1.dumps > 0);
    let (ok2, err2) = load(mc, 8, 1500, false);
    let n2 = compare_all(mc, rc);
    let reads = if replica_module {
        compare_reads(mc, rc)
    } else {
        0
    };
    eprintln!(
        "replica with module: {replica_module}: {} writes ok, {} refused; {n1:?} then {n2:?} identical; {reads} reads compared; {:?}",
        ok1 + ok2,
        err1 + err2,
        started.elapsed()
    );
    assert!(err1 + err2 > 50);
    for s in [&mut m, &mut r] {
        assert!(s.alive());
    }
}

#[test]
fn replica_with_the_module_matches_the_master() {
    check_replication(true);
}

#[test]
fn replica_without_the_module_matches_the_master() {
    check_replication(false);
}

/// Byte-exact replication of HyperLogLogs, and so DEBUG DIGEST of the whole
/// dataset. PFCOUNT stores the cardinality it computed in the HyperLogLog's
/// header, so HOT.VIEW replicates its PFCOUNT calls, as Redis propagates a
/// client's PFCOUNT; otherwise the registers and counts would agree but the
/// bytes (DUMP, DEBUG DIGEST) would differ.
#[test]
fn hyperloglog_bytes_and_debug_digest_match_exactly() {
    let (m, r) = pair(false);
    let (mc, rc) = (&mut m.conn(), &mut r.conn());
    for v in ["v1", "v2", "v3"] {
        bcmd(&[b"HOT.VIEW", b"hot:{news}", b"a1", v.as_bytes()])
            .query::<Value>(mc)
            .expect("HOT.VIEW");
    }
    wait_replica(mc);
    let k = b"hot:{news}\0uv:a1";
    let dump =
        |c: &mut Connection| -> Vec<u8> { redis::cmd("DUMP").arg(k).query(c).expect("DUMP") };
    assert_eq!(dump(mc), dump(rc), "DUMP of the HyperLogLog");
    match (
        redis::cmd("DEBUG").arg("DIGEST").query::<String>(mc),
        redis::cmd("DEBUG").arg("DIGEST").query::<String>(rc),
    ) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "DEBUG DIGEST"),
        (a, b) => eprintln!("DEBUG DIGEST skipped (DEBUG not allowed): {a:?} {b:?}"),
    }
}

/// Game boards (issue 11): asc boards, RANK.SET GT/LT/BEST (written or not)
/// and RANK.DROP, also inside MULTI/EXEC and followed by a re-creation with
/// another order, end byte-identical on a replica with and without the
/// module; with the module, reads answer the same on both.
fn check_game_boards(replica_module: bool) {
    let (m, r) = pair(replica_module);
    let (mc, rc) = (&mut m.conn(), &mut r.conn());
    let now = now_s();
    let at = |d: i64| (now - 1000 + d).to_string();
    let run = |c: &mut Connection, args: &[&str]| -> Value {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        bcmd(&argv)
            .query(c)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
    };
    run(
        mc,
        &["RANK.CREATE", "lap:{a}", "ORDER", "asc", "RESOLUTION", "ms"],
    );
    run(
        mc,
        &[
            "RANK.CREATE",
            "golf:{b}",
            "ORDER",
            "asc",
            "MIN",
            "-20",
            "MAX",
            "200",
        ],
    );
    run(mc, &["RANK.CREATE", "pts:{c}"]);
    let mut rng = Rng(11);
    for i in 0..400 {
        let board = *rng.pick(&["lap:{a}", "golf:{b}", "pts:{c}", "pts:{implicit}"]);
        let member = format!("p{}", rng.below(25));
        let score = match board {
            "golf:{b}" => rng.below(221) as i64 - 20,
            _ => 60_000 + rng.below(5000) as i64,
        }
        .to_string();
        let t = at(i);
        let opt = *rng.pick(&["BEST", "GT", "LT", "BEST", ""]);
        let mut args = vec!["RANK.SET", board, &member, &score, "AT", &t];
        if !opt.is_empty() {
            args.push(opt);
        }
        run(mc, &args);
        if rng.below(20) == 0 {
            run(mc, &["RANK.INCR", board, &member, "-3"]);
        }
    }
    // Dropped for good; dropped and re-made with another order in one
    // transaction; dropped, then re-made by a first write.
    assert_eq!(run(mc, &["RANK.DROP", "golf:{b}"]), Value::Int(2));
    assert_eq!(run(mc, &["RANK.DROP", "golf:{b}"]), Value::Int(0));
    let r2: Vec<Value> = redis::pipe()
        .atomic()
        .cmd("RANK.DROP")
        .arg("pts:{c}")
        .cmd("RANK.CREATE")
        .arg("pts:{c}")
        .arg("ORDER")
        .arg("asc")
        .cmd("RANK.SET")
        .arg("pts:{c}")
        .arg("x")
        .arg(7)
        .arg("BEST")
        .query(mc)
        .expect("MULTI/EXEC");
    assert_eq!(r2[0], Value::Int(2));
    assert_eq!(run(mc, &["RANK.DROP", "pts:{implicit}"]), Value::Int(2));
    run(
        mc,
        &["RANK.SET", "pts:{implicit}", "y", "3", "BEST", "AT", &at(0)],
    );
    let seen = compare_all(mc, rc);
    assert_eq!(seen.keys, 6, "{seen:?}"); // lap, pts:{c}, pts:{implicit} + layouts
    if replica_module {
        for k in ["lap:{a}", "pts:{c}", "pts:{implicit}", "golf:{b}"] {
            let mut reads = vec![
                vec!["RANK.RANGE", k, "0", "-1", "WITHSCORES"],
                vec!["RANK.RANGEBYSCORE", k, "60100", "+inf", "WITHSCORES"],
                vec!["RANK.CARD", k],
            ];
            let names: Vec<String> = (0..25).map(|i| format!("p{i}")).collect();
            for n in &names {
                reads.push(vec!["RANK.SCORE", k, n, "WITHTIME"]);
                reads.push(vec!["RANK.RANK", k, n, "TIES"]);
                reads.push(vec!["RANK.AROUND", k, n, "2"]);
            }
            for args in reads {
                assert_eq!(run(mc, &args), run(rc, &args), "{args:?}");
            }
        }
    }
}

#[test]
fn game_boards_replicate_exactly() {
    check_game_boards(false);
    check_game_boards(true);
}

/// A key's name, type, value (a string's bytes, a hash's sorted fields and
/// values, a ZSET's members and scores) and expiry (unix ms).
type KeyState = (Vec<u8>, String, Vec<Vec<u8>>, i64);

/// Every key's type, value and exact expiry (`PEXPIRETIME`, unix ms; -1
/// without one) on `c`, by name.
fn keys_with_expiry(c: &mut Connection) -> Vec<KeyState> {
    let mut out = Vec::new();
    for k in keys(c) {
        let ty: String = redis::cmd("TYPE").arg(&k).query(c).expect("TYPE");
        let value: Vec<Vec<u8>> = match ty.as_str() {
            "string" => vec![redis::cmd("GET").arg(&k).query(c).expect("GET")],
            "hash" => {
                let mut v: Vec<(Vec<u8>, Vec<u8>)> =
                    redis::cmd("HGETALL").arg(&k).query(c).expect("HGETALL");
                v.sort();
                v.into_iter().flat_map(|(f, v)| [f, v]).collect()
            }
            "zset" => redis::cmd("ZRANGE")
                .arg(&k)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES")
                .query(c)
                .expect("ZRANGE"),
            other => panic!("unexpected type {other}"),
        };
        let at: i64 = redis::cmd("PEXPIRETIME")
            .arg(&k)
            .query(c)
            .expect("PEXPIRETIME");
        out.push((k, ty, value, at));
    }
    out
}

/// A new article's string keys are created with their expiry in one effect
/// (`SET name value PXAT at`: the PV counter, the HyperLogLog as its bytes,
/// the visitor's counter, the dedup string), at the expiry a `PEXPIREAT`
/// carried before (the view's clock plus the retention, or the window). A
/// replica without the module (`effects`) and one with it (`commands`)
/// hold every key with the master's value and exact expiry: when the keys
/// are made, after a later view refreshes the retention (`PEXPIREAT`; the
/// shortest retention, 60 s, is refreshed once 6 s passed), and after the
/// master expired the visitor counters and dedup strings of a second board
/// (1 s windows): the replica's copies go with the master's `DEL`. The
/// first board's windows are a minute, so no key expires while the
/// keyspaces are compared. About 8 s per mode.
#[test]
fn new_keys_are_created_with_their_expiry_and_replicate_exactly() {
    let (b, short): (&[u8], &[u8]) = (b"hot:{px}", b"hot:{px}s");
    let name = |kind: &str, a: &[u8]| -> Vec<u8> {
        let mut k = b.to_vec();
        k.push(0);
        k.extend_from_slice(kind.as_bytes());
        k.push(b':');
        k.extend_from_slice(a);
        k
    };
    let expiry = |c: &mut Connection, k: &[u8]| -> i64 {
        redis::cmd("PEXPIRETIME")
            .arg(k)
            .query(c)
            .expect("PEXPIRETIME")
    };
    // The short board's visitor counters and dedup strings, by a SCAN, which
    // on the master deletes (and replicates the DEL of) an expired key.
    let expiring = |c: &mut Connection| -> usize {
        let mut prefixes = [short.to_vec(), short.to_vec()];
        prefixes[0].extend_from_slice(b"\0vv:");
        prefixes[1].extend_from_slice(b"\0dd:");
        let (mut cursor, mut keys) = (0u64, Vec::<Vec<u8>>::new());
        loop {
            let (next, batch): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("COUNT")
                .arg(1000)
                .query(c)
                .expect("SCAN");
            keys.extend(batch);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        keys.iter()
            .filter(|k| prefixes.iter().any(|p| k.starts_with(p)))
            .count()
    };
    for (mode, replica_module) in [("effects", false), ("commands", true)] {
        let m = Server::start();
        let mut mc = m.conn();
        config_set(&mut mc, "hotrank.replicate", mode);
        let port = m.port.to_string();
        let r = Server::start_with(&["--replicaof", "127.0.0.1", &port], replica_module);
        wait_link_up(&r);
        let mut rc = r.conn();
        for (board, window) in [(b, &b"60"[..]), (short, &b"1"[..])] {
            bcmd(&[
                b"HOT.CREATE",
                board,
                b"RETENTION-SECONDS",
                b"60",
                b"DEDUP-SECONDS",
                window,
                b"VISITOR-WINDOW-SECONDS",
                window,
            ])
            .query::<Value>(&mut mc)
            .expect("HOT.CREATE");
        }
        let view = |c: &mut Connection, board: &[u8], a: &[u8], v: &[u8]| {
            let r: Vec<Value> = bcmd(&[b"HOT.VIEW", board, a, v])
                .query(c)
                .expect("HOT.VIEW");
            assert_eq!(r[3], Value::BulkString(b"counted".to_vec()), "{r:?}");
        };
        // The first view of a1 makes its PV counter, HyperLogLog and meta
        // hash, all expiring at the view's clock + 60 s.
        view(&mut mc, b, b"a1", b"v1");
        let (pv, uv, meta) = (name("pv", b"a1"), name("uv", b"a1"), name("meta", b"a1"));
        let made = expiry(&mut mc, &pv);
        assert!(made > 0, "{mode}: the PV counter has no expiry");
        assert_eq!(expiry(&mut mc, &uv), made, "{mode}: HyperLogLog");
        assert_eq!(expiry(&mut mc, &meta), made, "{mode}: meta hash");
        let hll: Vec<u8> = redis::cmd("GET").arg(&uv).query(&mut mc).expect("GET");
        assert!(hll.starts_with(b"HYLL"), "{mode}: {hll:?}");
        wait_replica(&mut mc);
        let first = keys_with_expiry(&mut mc);
        assert!(first.len() >= 10, "{mode}: {} keys", first.len());
        assert_eq!(keys_with_expiry(&mut rc), first, "{mode}: keys made");
        // 6.2 s later (more than a tenth of the retention) a view of a1
        // refreshes the retention of its keys (PEXPIREAT), a view of a2
        // makes a2's keys.
        std::thread::sleep(std::time::Duration::from_millis(6_200));
        view(&mut mc, b, b"a1", b"v2");
        view(&mut mc, b, b"a2", b"v1");
        let refreshed = expiry(&mut mc, &pv);
        assert!(refreshed >= made + 6_000, "{mode}: {made} → {refreshed}");
        assert_eq!(expiry(&mut mc, &uv), refreshed, "{mode}: HyperLogLog");
        assert_eq!(expiry(&mut mc, &meta), refreshed, "{mode}: meta hash");
        wait_replica(&mut mc);
        let second = keys_with_expiry(&mut mc);
        assert_eq!(keys_with_expiry(&mut rc), second, "{mode}: keys refreshed");
        // The short board's new visitor counter and dedup string expire on
        // the master, and on the replica with the master's DEL.
        view(&mut mc, short, b"a1", b"v1");
        assert_eq!(
            expiring(&mut mc),
            2,
            "{mode}: a visitor counter, a dedup string"
        );
        let deadline = Instant::now() + std::time::Duration::from_secs(20);
        while expiring(&mut mc) > 0 {
            assert!(Instant::now() < deadline, "{mode}: the keys did not expire");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        wait_replica(&mut mc);
        let last = keys_with_expiry(&mut mc);
        assert!(last.len() > second.len(), "{mode}: {} keys", last.len());
        assert_eq!(keys_with_expiry(&mut rc), last, "{mode}: keys expired");
        // DBSIZE counts a key whose expiry passed until it is deleted: the
        // replica deleted what the master did.
        let dbsize = |c: &mut Connection| -> i64 { redis::cmd("DBSIZE").query(c).expect("DBSIZE") };
        assert_eq!(
            dbsize(&mut rc),
            dbsize(&mut mc),
            "{mode}: deleted on the replica"
        );
    }
}
