//! HOT.BOARDS and RANK.BOARDS (issue 22): a node's boards listed with a
//! SCAN-shaped cursor, found by their records (HOT board record at any
//! epoch, RANK layout), walked server-side with the module scan API.
//!
//! Checked: which keys count as boards (tags, epochs, emptied boards,
//! dropped boards, look-alike names, wrong types, expired records, other
//! databases); SCAN's guarantee over a walk with a small COUNT, on a quiet
//! keyspace and while boards come and go and the table grows; errors; the
//! RESP2 and RESP3 shapes; keyless registration (no key spec, SCAN's flags,
//! tips and ACL categories); and that no internal SCAN shows in INFO
//! commandstats or SLOWLOG.

mod common;
use common::rng::Rng;
use common::*;
use redis::{Connection, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One call: `(next cursor, board names)`, checking the reply's shape.
fn call(
    c: &mut Connection,
    cmd: &str,
    cursor: &str,
    count: Option<usize>,
) -> (String, Vec<String>) {
    let mut r = redis::cmd(cmd);
    r.arg(cursor);
    if let Some(n) = count {
        r.arg("COUNT").arg(n);
    }
    let v: Value = r.query(c).unwrap_or_else(|e| panic!("{cmd} {cursor}: {e}"));
    shape(&v)
}

/// `[bulk cursor, [bulk name, …]]` → `(cursor, names)`; panics on another shape.
fn shape(v: &Value) -> (String, Vec<String>) {
    let Value::Array(top) = v else {
        panic!("not an array: {v:?}")
    };
    assert_eq!(top.len(), 2, "{v:?}");
    let Value::BulkString(cur) = &top[0] else {
        panic!("cursor is not a bulk string: {v:?}")
    };
    let cursor = String::from_utf8(cur.clone()).expect("utf-8 cursor");
    assert!(
        cursor.bytes().all(|b| b.is_ascii_digit()),
        "cursor {cursor:?}"
    );
    let Value::Array(items) = &top[1] else {
        panic!("names are not an array: {v:?}")
    };
    let names = items
        .iter()
        .map(|i| match i {
            Value::BulkString(b) => String::from_utf8(b.clone()).expect("utf-8 name"),
            other => panic!("name is not a bulk string: {other:?}"),
        })
        .collect();
    (cursor, names)
}

/// A whole walk: each board with the number of times it was returned, and
/// the number of calls.
fn walk(c: &mut Connection, cmd: &str, count: Option<usize>) -> (BTreeMap<String, usize>, usize) {
    let mut seen = BTreeMap::new();
    let mut cursor = "0".to_string();
    let mut calls = 0;
    loop {
        let (next, names) = call(c, cmd, &cursor, count);
        calls += 1;
        for n in names {
            *seen.entry(n).or_insert(0) += 1;
        }
        if next == "0" {
            return (seen, calls);
        }
        assert!(calls < 1_000_000, "the walk does not end");
        cursor = next;
    }
}

/// The distinct boards of a whole walk.
fn boards(c: &mut Connection, cmd: &str) -> BTreeSet<String> {
    walk(c, cmd, Some(1000)).0.into_keys().collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn ok(c: &mut Connection, args: &[&str]) {
    q(c, args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
}

/// `n` plain string keys `fill:<i>` (not boards).
fn fill(c: &mut Connection, prefix: &str, n: usize) {
    let mut p = redis::pipe();
    for i in 0..n {
        p.cmd("SET").arg(format!("{prefix}:{i}")).arg("x").ignore();
    }
    let () = p.query(c).expect("fill");
}

#[test]
fn boards_are_recognised_by_their_records() {
    let s = Server::start_with(&["--enable-debug-command", "yes"], true);
    let mut c = s.conn();
    // Expired keys stay in the table until looked up: the walk meets them.
    ok(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    // HOT boards: with and without a hash tag, made by HOT.CREATE or by a
    // first write.
    ok(&mut c, &["HOT.CREATE", "hot:{news}"]);
    ok(&mut c, &["HOT.CREATE", "hot:plain"]);
    ok(&mut c, &["HOT.PUBLISH", "hot:{first}", "a1", "1700000000"]);
    ok(&mut c, &["HOT.VIEW", "hot:viewed", "a1", "u1"]);
    // Every article taken down: the board ZSET is gone, its record stays.
    ok(
        &mut c,
        &["HOT.PUBLISH", "hot:{emptied}", "a1", "1700000000"],
    );
    ok(&mut c, &["HOT.VIEW", "hot:{emptied}", "a1", "u1"]);
    ok(&mut c, &["HOT.REM", "hot:{emptied}", "a1"]);
    assert_eq!(
        q(&mut c, &["EXISTS", "hot:{emptied}"]).unwrap(),
        Value::Int(0)
    );
    // Epoch-named boards: dropped, then made again (epochs 1 and 2).
    ok(&mut c, &["HOT.CREATE", "hot:{ep}"]);
    ok(&mut c, &["HOT.DROP", "hot:{ep}"]);
    ok(&mut c, &["HOT.CREATE", "hot:{ep}"]);
    ok(&mut c, &["HOT.DROP", "hot:{ep}"]);
    ok(&mut c, &["HOT.VIEW", "hot:{ep}", "a1", "u1"]);
    ok(&mut c, &["HOT.VIEW", "hot:ep2", "a1", "u1"]);
    ok(&mut c, &["HOT.DROP", "hot:ep2"]);
    ok(&mut c, &["HOT.CREATE", "hot:ep2"]);
    let ep: Vec<Vec<u8>> = redis::cmd("KEYS")
        .arg("hot:*~*board")
        .query(&mut c)
        .unwrap();
    let ep: BTreeSet<Vec<u8>> = ep.into_iter().collect();
    assert_eq!(
        ep,
        BTreeSet::from([
            b"hot:{ep}\0~2:board".to_vec(),
            b"hot:ep2\0{hot:ep2}~1:board".to_vec()
        ]),
        "the records of boards made again are epoch-named"
    );
    // Dropped and not made again: not listed.
    ok(&mut c, &["HOT.CREATE", "hot:{gone}"]);
    ok(&mut c, &["HOT.DROP", "hot:{gone}"]);
    // RANK boards: with and without a tag, made by RANK.CREATE or a first
    // write, and one emptied by RANK.REM (its layout stays).
    ok(&mut c, &["RANK.CREATE", "lb:{game}"]);
    ok(&mut c, &["RANK.INCR", "lb:plain", "m", "1"]);
    ok(&mut c, &["RANK.SET", "lb:{emptied}", "m", "5"]);
    ok(&mut c, &["RANK.REM", "lb:{emptied}", "m"]);
    ok(&mut c, &["RANK.CREATE", "lb:{gone}"]);
    ok(&mut c, &["RANK.DROP", "lb:{gone}"]);
    // Not boards: plain ZSETs and other keys, names holding `\0board` or
    // `\0layout` that are not the record name of their prefix, a real
    // record name holding another type, an expired hand-made record, and
    // boards of another database.
    ok(&mut c, &["ZADD", "zs:{plain}", "1", "m"]);
    ok(&mut c, &["SET", "str", "v"]);
    ok(&mut c, &["HSET", "h", "f", "v"]);
    for fake in [
        &b"fake\0board"[..],          // no tag: the record is fake\0{fake}board
        b"fake:{t}\0{fake:{t}}board", // tagged: the record is fake:{t}\0board
        b"fake:{t}\0~0:board",        // epoch 0 is never written
        b"fake:{t}\0~01:board",
        b"fake:{t}\0pv:board", // an article named `board`
        b"fake:{t}\0xboard",
        b"fake:{t}\0board\0board",
        b"\0board",
        b"fake:{t}\0~1:layout", // RANK layouts carry no epoch
        b"fake\0layout",
        b"board",
        b"layout",
    ] {
        let () = redis::cmd("SET")
            .arg(fake)
            .arg("1:2")
            .query(&mut c)
            .unwrap();
    }
    let () = redis::cmd("ZADD")
        .arg(&b"wrongtype:{w}\0board"[..])
        .arg(1)
        .arg("m")
        .query(&mut c)
        .unwrap();
    let () = redis::cmd("HSET")
        .arg(&b"wrongtype:{w}\0layout"[..])
        .arg("f")
        .arg("v")
        .query(&mut c)
        .unwrap();
    let () = redis::cmd("SET")
        .arg(&b"expired:{x}\0board"[..])
        .arg("1:2")
        .arg("PX")
        .arg(1)
        .query(&mut c)
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let dbsize = |c: &mut Connection| -> i64 { redis::cmd("DBSIZE").query(c).unwrap() };
    let with_expired = dbsize(&mut c);
    ok(&mut c, &["SELECT", "3"]);
    ok(&mut c, &["HOT.CREATE", "hot:{db3}"]);
    ok(&mut c, &["RANK.CREATE", "lb:{db3}"]);
    assert_eq!(boards(&mut c, "HOT.BOARDS"), set(&["hot:{db3}"]));
    assert_eq!(boards(&mut c, "RANK.BOARDS"), set(&["lb:{db3}"]));
    ok(&mut c, &["SELECT", "0"]);

    assert_eq!(
        boards(&mut c, "HOT.BOARDS"),
        set(&[
            "hot:{news}",
            "hot:plain",
            "hot:{first}",
            "hot:viewed",
            "hot:{emptied}",
            "hot:{ep}",
            "hot:ep2",
        ])
    );
    assert_eq!(
        boards(&mut c, "RANK.BOARDS"),
        set(&["lb:{game}", "lb:plain", "lb:{emptied}"])
    );
    // The expired record was met and looked up (and so deleted, as SCAN
    // deletes the expired keys it meets).
    assert_eq!(dbsize(&mut c), with_expired - 1);
    // The default COUNT walks the same boards, in more calls.
    let (seen, calls) = walk(&mut c, "HOT.BOARDS", None);
    assert_eq!(seen.len(), 7, "{seen:?}");
    assert!(calls >= 2, "{calls} calls over 50 keys with COUNT 10");
}

#[test]
fn a_walk_with_a_small_count_returns_every_board() {
    let s = Server::start();
    let mut c = s.conn();
    fill(&mut c, "fill", 3000);
    let mut hot = BTreeSet::new();
    let mut rank = BTreeSet::new();
    for i in 0..60 {
        let h = format!("hot:{{h{i}}}");
        let r = if i % 2 == 0 {
            format!("lb:{{r{i}}}")
        } else {
            format!("lb:r{i}")
        };
        ok(&mut c, &["HOT.CREATE", &h]);
        ok(&mut c, &["RANK.CREATE", &r]);
        hot.insert(h);
        rank.insert(r);
    }
    let keys = 3000 + 120;
    for count in [1, 3, 10, 100, 100_000] {
        let (seen, calls) = walk(&mut c, "HOT.BOARDS", Some(count));
        assert_eq!(
            seen.keys().cloned().collect::<BTreeSet<_>>(),
            hot,
            "COUNT {count}"
        );
        let (seen_r, calls_r) = walk(&mut c, "RANK.BOARDS", Some(count));
        assert_eq!(
            seen_r.keys().cloned().collect::<BTreeSet<_>>(),
            rank,
            "COUNT {count}"
        );
        // COUNT bounds the keys one call walks (a hint: a call stops at
        // the end of the table step that reached it, one bucket of up to
        // a few keys): a walk takes about keys/COUNT calls.
        if count < keys {
            assert!(calls >= keys / count / 8, "COUNT {count}: {calls} calls");
            assert!(
                calls_r >= keys / count / 8,
                "COUNT {count}: {calls_r} calls"
            );
        } else {
            assert_eq!((calls, calls_r), (1, 1), "COUNT {count}");
        }
    }
}

#[test]
fn boards_present_throughout_are_returned_while_boards_come_and_go() {
    let s = Server::start();
    let mut c = s.conn();
    fill(&mut c, "fill", 500);
    let mut steady_hot = BTreeSet::new();
    let mut steady_rank = BTreeSet::new();
    for i in 0..100 {
        let h = format!("hot:{{s{i}}}");
        let r = format!("lb:s{i}");
        ok(&mut c, &["HOT.CREATE", &h]);
        ok(&mut c, &["RANK.CREATE", &r]);
        steady_hot.insert(h);
        steady_rank.insert(r);
    }
    // Boards that come and go during the walks; some exist at the start.
    for i in 0..50 {
        ok(&mut c, &["HOT.CREATE", &format!("hot:{{c{i}}}")]);
        ok(&mut c, &["RANK.CREATE", &format!("lb:{{c{i}}}")]);
    }
    // Churn boards `{c<i>}`: made in order, dropped in order, across both walks.
    let mut churn_made = 50usize;
    let mut churn_dropped = 0usize;
    for (cmd, steady) in [("HOT.BOARDS", &steady_hot), ("RANK.BOARDS", &steady_rank)] {
        let mut seen = BTreeSet::new();
        let mut cursor = "0".to_string();
        let mut step = 0usize;
        let mut grown: Vec<String> = Vec::new();
        loop {
            let (next, names) = call(&mut c, cmd, &cursor, Some(5));
            for n in names {
                assert!(
                    steady.contains(&n) || n.contains("{c"),
                    "{cmd} returned {n:?}, never a board"
                );
                seen.insert(n);
            }
            if next == "0" {
                break;
            }
            cursor = next;
            step += 1;
            // Between calls: new boards, dropped boards and, now and then,
            // many new keys (the table grows and rehashes) or many deleted
            // ones (it may shrink).
            let (hot_c, lb_c) = (
                format!("hot:{{c{churn_made}}}"),
                format!("lb:{{c{churn_made}}}"),
            );
            ok(&mut c, &["HOT.CREATE", &hot_c]);
            ok(&mut c, &["RANK.CREATE", &lb_c]);
            churn_made += 1;
            if churn_dropped < churn_made {
                ok(&mut c, &["HOT.DROP", &format!("hot:{{c{churn_dropped}}}")]);
                ok(&mut c, &["RANK.DROP", &format!("lb:{{c{churn_dropped}}}")]);
                churn_dropped += 1;
            }
            if step.is_multiple_of(20) {
                let prefix = format!("grow:{cmd}:{step}");
                fill(&mut c, &prefix, 1000);
                grown.push(prefix);
            }
            if step.is_multiple_of(30) && !grown.is_empty() {
                let prefix = grown.remove(0);
                let mut p = redis::pipe();
                for i in 0..1000 {
                    p.cmd("DEL").arg(format!("{prefix}:{i}")).ignore();
                }
                let () = p.query(&mut c).unwrap();
            }
            assert!(step < 100_000, "the walk does not end");
        }
        let missing: Vec<&String> = steady.iter().filter(|b| !seen.contains(*b)).collect();
        assert!(
            missing.is_empty(),
            "{cmd}: boards present throughout not returned: {missing:?}"
        );
        assert!(step > 50, "{cmd}: only {step} calls");
    }
}

#[test]
fn bad_input_is_refused_with_clear_errors() {
    let s = Server::start();
    let mut c = s.conn();
    for cmd in ["HOT.BOARDS", "RANK.BOARDS"] {
        let lc = cmd.to_ascii_lowercase();
        assert_eq!(
            err(&mut c, &[cmd]),
            format!("ERR wrong number of arguments for '{lc}' command")
        );
        for bad in [
            "-1",
            "abc",
            "1.5",
            "+1",
            " 1",
            "18446744073709551616",
            "",
            "0x10",
        ] {
            assert_eq!(
                err(&mut c, &[cmd, bad]),
                "ERR invalid cursor",
                "{cmd} {bad:?}"
            );
        }
        for bad in [
            "0",
            "-1",
            "abc",
            "1.5",
            "100001",
            "",
            "18446744073709551616",
        ] {
            assert_eq!(
                err(&mut c, &[cmd, "0", "COUNT", bad]),
                "ERR COUNT must be an integer between 1 and 100000",
                "{cmd} COUNT {bad:?}"
            );
        }
        assert_eq!(err(&mut c, &[cmd, "0", "COUNT"]), "ERR COUNT needs a value");
        assert_eq!(
            err(&mut c, &[cmd, "0", "MATCH", "x*"]),
            "ERR syntax error at 'MATCH'"
        );
        assert_eq!(
            err(&mut c, &[cmd, "0", "COUNT", "5", "TYPE", "zset"]),
            "ERR syntax error at 'TYPE'"
        );
        // Accepted: the largest cursor, COUNT in any case, COUNT repeated
        // (the last wins, as SCAN's).
        shape(&q(&mut c, &[cmd, "18446744073709551615"]).unwrap());
        shape(&q(&mut c, &[cmd, "0", "count", "100000"]).unwrap());
        shape(&q(&mut c, &[cmd, "0", "COUNT", "1", "COUNT", "7"]).unwrap());
    }
}

#[test]
fn resp2_and_resp3_replies_have_scans_shape() {
    let s = Server::start();
    let mut c = s.conn();
    ok(&mut c, &["HOT.CREATE", "hot:{r}"]);
    ok(&mut c, &["RANK.CREATE", "lb:{r}"]);
    let mut c3 = redis::Client::open(format!("{}?protocol=resp3", s.url()))
        .and_then(|cl| cl.get_connection())
        .expect("RESP3 connection");
    for conn in [&mut c, &mut c3] {
        for (cmd, want) in [("HOT.BOARDS", "hot:{r}"), ("RANK.BOARDS", "lb:{r}")] {
            let v = q(conn, &[cmd, "0", "COUNT", "100"]).unwrap();
            assert_eq!(
                v,
                Value::Array(vec![
                    Value::BulkString(b"0".to_vec()),
                    Value::Array(vec![Value::BulkString(want.as_bytes().to_vec())]),
                ]),
                "{cmd}"
            );
        }
    }
    // An empty database: `["0", []]`.
    ok(&mut c3, &["SELECT", "5"]);
    let v = q(&mut c3, &["HOT.BOARDS", "0"]).unwrap();
    assert_eq!(
        v,
        Value::Array(vec![Value::BulkString(b"0".to_vec()), Value::Array(vec![])])
    );
}

#[test]
fn no_internal_scan_shows_in_commandstats_or_slowlog() {
    let s = Server::start();
    let mut c = s.conn();
    fill(&mut c, "fill", 200);
    ok(&mut c, &["HOT.CREATE", "hot:{s}"]);
    ok(&mut c, &["RANK.CREATE", "lb:{s}"]);
    config_set(&mut c, "slowlog-log-slower-than", "0");
    ok(&mut c, &["SLOWLOG", "RESET"]);
    ok(&mut c, &["CONFIG", "RESETSTAT"]);
    walk(&mut c, "HOT.BOARDS", Some(7));
    walk(&mut c, "RANK.BOARDS", Some(7));
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut c)
        .unwrap();
    assert!(stats.contains("cmdstat_hot.boards:"), "{stats}");
    assert!(stats.contains("cmdstat_rank.boards:"), "{stats}");
    let names: Vec<&str> = stats
        .lines()
        .filter_map(|l| l.strip_prefix("cmdstat_"))
        .filter_map(|l| l.split(':').next())
        .collect();
    for n in &names {
        assert!(
            ["hot.boards", "rank.boards", "config|resetstat"].contains(n),
            "commandstats shows {n}: {stats}"
        );
    }
    let log: Value = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(-1)
        .query(&mut c)
        .unwrap();
    let Value::Array(entries) = log else {
        panic!("{log:?}")
    };
    assert!(!entries.is_empty());
    for e in &entries {
        let Value::Array(fields) = e else {
            panic!("{e:?}")
        };
        let Value::Array(argv) = &fields[3] else {
            panic!("{e:?}")
        };
        let Value::BulkString(name) = &argv[0] else {
            panic!("{e:?}")
        };
        let name = String::from_utf8_lossy(name).to_ascii_lowercase();
        assert!(
            ["hot.boards", "rank.boards", "config", "slowlog", "info"].contains(&name.as_str()),
            "SLOWLOG shows {name}"
        );
    }
    // RANK.BOARDS is a RANK read in INFO hotrank.
    let info: String = redis::cmd("INFO").arg("hotrank").query(&mut c).unwrap();
    let reads = |info: &str| -> i64 {
        info.lines()
            .find_map(|l| l.strip_prefix("hotrank_rank_reads:"))
            .expect("rank_reads")
            .trim()
            .parse()
            .unwrap()
    };
    let before = reads(&info);
    call(&mut c, "RANK.BOARDS", "0", None);
    let info: String = redis::cmd("INFO").arg("hotrank").query(&mut c).unwrap();
    assert_eq!(reads(&info), before + 1);
}

#[test]
fn the_commands_are_keyless_with_scans_flags() {
    let s = Server::start();
    let mut c = s.conn();
    for cmd in ["hot.boards", "rank.boards"] {
        let v = q(&mut c, &["COMMAND", "INFO", cmd]).unwrap();
        let Value::Array(outer) = v else {
            panic!("{v:?}")
        };
        let Value::Array(info) = &outer[0] else {
            panic!("{outer:?}")
        };
        // name, arity, flags, first key, last key, step, categories, tips, key specs.
        assert_eq!(info[1], Value::Int(-1), "{cmd}: arity");
        let flags: BTreeSet<String> = match &info[2] {
            Value::Array(f) | Value::Set(f) => f
                .iter()
                .map(|x| match x {
                    Value::SimpleString(s) => s.clone(),
                    Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                    o => panic!("{o:?}"),
                })
                .collect(),
            o => panic!("{o:?}"),
        };
        assert!(flags.contains("readonly"), "{cmd}: {flags:?}");
        assert!(
            !flags.contains("write") && !flags.contains("fast"),
            "{cmd}: {flags:?}"
        );
        assert_eq!(
            (&info[3], &info[4], &info[5]),
            (&Value::Int(0), &Value::Int(0), &Value::Int(0)),
            "{cmd}: keyless"
        );
        assert_eq!(info[8], Value::Array(vec![]), "{cmd}: no key spec");
        let tips = format!("{:?}", info[7]);
        assert!(tips.contains("nondeterministic_output"), "{cmd}: {tips}");
        // No key to extract.
        assert!(q(&mut c, &["COMMAND", "GETKEYS", cmd, "0"]).is_err());
    }
    // Keyless, as SCAN: a user allowed the command sees every board name,
    // whatever its key patterns (no ACL key check applies).
    ok(&mut c, &["HOT.CREATE", "hot:{secret}"]);
    acl_setuser(
        &mut c,
        &[
            "lister",
            "on",
            ">pw",
            "~other:*",
            "+hot.boards",
            "+rank.boards",
        ],
    );
    let mut u = s.conn_as("lister", "pw");
    assert_eq!(boards(&mut u, "HOT.BOARDS"), set(&["hot:{secret}"]));
    assert!(err(&mut u, &["HOT.INFO", "hot:{secret}"]).starts_with("NOPERM"));
    // Where the server sets ACL categories (Redis 7.2+, Valkey): SCAN's.
    let cats: Vec<String> = redis::cmd("ACL")
        .arg("CAT")
        .arg("keyspace")
        .query(&mut c)
        .unwrap();
    if cats.iter().any(|x| x.starts_with("hot.")) {
        for cat in ["keyspace", "read", "slow"] {
            let cmds: Vec<String> = redis::cmd("ACL").arg("CAT").arg(cat).query(&mut c).unwrap();
            for cmd in ["hot.boards", "rank.boards"] {
                assert!(cmds.iter().any(|x| x == cmd), "{cmd} not in @{cat}");
            }
        }
    }
}

/// `CLUSTER INFO` field `field` of a node.
fn cluster_info(c: &mut Connection, field: &str) -> Option<String> {
    common::cluster::info_field(c, &["CLUSTER", "INFO"], field)
}

/// A cluster-enabled node holding slots `range`, with its bus port.
fn cluster_node(i: usize, range: (u16, u16)) -> (Server, u16) {
    let (s, bus) = common::cluster::start_node(i);
    let mut c = s.conn();
    let (lo, hi) = (range.0.to_string(), range.1.to_string());
    ok(&mut c, &["CLUSTER", "ADDSLOTSRANGE", &lo, &hi]);
    (s, bus)
}

#[test]
fn in_a_cluster_each_node_lists_its_own_boards() {
    // Two masters with half the slots each. Valkey keeps one table per
    // slot there, and its SCAN cursor carries the slot: resuming the walk
    // at the client's cursor must cross every slot table.
    let (a, _) = cluster_node(0, (0, 8191));
    let (b, b_bus) = cluster_node(1, (8192, 16383));
    let mut ca = a.conn();
    let mut cb = b.conn();
    let port = b.port.to_string();
    let bus = b_bus.to_string();
    ok(&mut ca, &["CLUSTER", "MEET", "127.0.0.1", &port, &bus]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while [&mut ca, &mut cb].into_iter().any(|c| {
        cluster_info(c, "cluster_state").as_deref() != Some("ok")
            || cluster_info(c, "cluster_known_nodes").as_deref() != Some("2")
    }) {
        assert!(
            std::time::Instant::now() < deadline,
            "no cluster_state:ok in 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Boards over many slots, each written on the node that owns its slot.
    let slot = |c: &mut Connection, k: &str| -> i64 {
        redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(k)
            .query(c)
            .unwrap()
    };
    let (mut on_a, mut on_b) = (BTreeSet::new(), BTreeSet::new());
    for i in 0..200 {
        let (h, r) = (format!("hot:{{b{i}}}"), format!("lb:r{i}"));
        for (key, cmd) in [(&h, "HOT.CREATE"), (&r, "RANK.CREATE")] {
            let mine = slot(&mut ca, key) <= 8191;
            let c = if mine { &mut ca } else { &mut cb };
            ok(c, &[cmd, key]);
            if mine { &mut on_a } else { &mut on_b }.insert(key.clone());
        }
    }
    for (c, mine) in [(&mut ca, &on_a), (&mut cb, &on_b)] {
        for count in [1, 10, 100_000] {
            let (hot, calls) = walk(c, "HOT.BOARDS", Some(count));
            let (rank, _) = walk(c, "RANK.BOARDS", Some(count));
            let got: BTreeSet<String> = hot.into_keys().chain(rank.into_keys()).collect();
            assert_eq!(&got, mine, "COUNT {count}");
            if count == 1 {
                assert!(calls >= 100, "{calls} calls with COUNT 1");
            }
        }
    }
    assert!(on_a.len() > 100 && on_b.len() > 100);
}

#[test]
fn any_cursor_and_any_arguments_are_safe() {
    let s = Server::start();
    let mut c = s.conn();
    fill(&mut c, "fill", 3000);
    for i in 0..20 {
        ok(&mut c, &["HOT.CREATE", &format!("hot:{{f{i}}}")]);
        ok(&mut c, &["RANK.CREATE", &format!("lb:{{f{i}}}")]);
    }
    let mut rng = Rng(0x5eed_b0a4d5);
    let words = [
        "COUNT",
        "count",
        "0",
        "1",
        "-1",
        "x",
        "MATCH",
        "",
        "99999999999",
    ];
    for i in 0..3000 {
        let cmd = if i % 2 == 0 {
            "HOT.BOARDS"
        } else {
            "RANK.BOARDS"
        };
        // Any 64-bit cursor, as SCAN takes: a valid reply, names of real boards.
        let cursor = match rng.below(3) {
            0 => rng.next().to_string(),
            1 => u64::MAX.to_string(),
            _ => rng.below(1 << 16).to_string(),
        };
        let count = (rng.below(2000) + 1) as usize;
        let (_, names) = call(&mut c, cmd, &cursor, Some(count));
        assert!(names.iter().all(|n| n.contains("{f")), "{names:?}");
        // Random words after the cursor: a reply or an ERR, never anything else.
        let mut args = vec![cmd.to_string(), cursor];
        for _ in 0..rng.below(4) {
            args.push(rng.pick(&words).to_string());
        }
        let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        match q(&mut c, &refs) {
            Ok(v) => {
                shape(&v);
            }
            Err(e) => assert_eq!(e.code(), Some("ERR"), "{args:?}: {e}"),
        }
    }
    assert_eq!(
        q(&mut c, &["PING"]).unwrap(),
        Value::SimpleString("PONG".into())
    );
    assert_eq!(boards(&mut c, "HOT.BOARDS").len(), 20);
}

#[test]
fn a_replica_lists_the_masters_boards() {
    let m = Server::start();
    let mut mc = m.conn();
    fill(&mut mc, "fill", 500);
    for i in 0..30 {
        ok(&mut mc, &["HOT.CREATE", &format!("hot:{{m{i}}}")]);
        ok(&mut mc, &["RANK.CREATE", &format!("lb:m{i}")]);
    }
    let port = m.port.to_string();
    let r = Server::start_with(&["--replicaof", "127.0.0.1", &port], true);
    wait_link_up(&r);
    let mut rc = r.conn();
    ok(&mut mc, &["HOT.CREATE", "hot:{late}"]);
    ok(&mut mc, &["WAIT", "1", "5000"]);
    for cmd in ["HOT.BOARDS", "RANK.BOARDS"] {
        assert_eq!(boards(&mut rc, cmd), boards(&mut mc, cmd), "{cmd}");
        let (seen, _) = walk(&mut rc, cmd, Some(3));
        assert_eq!(seen.len(), 31 - usize::from(cmd == "RANK.BOARDS"), "{cmd}");
    }
}
