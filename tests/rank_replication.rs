//! RANK writes under `hotrank.replicate commands` (issue 21): each write
//! replicates as one command with its clock spelled out (`RANK.INCR K m n
//! [AT t] CLOCK now`, `RANK.MINCR K CLOCK now delta m…`, `RANK.DROP K CLOCK
//! now`, `RANK.CREATE K <every option>`, …) instead of its effects.
//! - a replica with the module, whose own `hotrank.*` configs differ, has
//!   the master's DEBUG DIGEST after every RANK write (periods day, week,
//!   month with TZ and KEEP, asc boards, ms boards, SET GT/LT/BEST written
//!   or not, MINCR, REM, DROP, boards made on the way, AT far in the past,
//!   MULTI/EXEC, Lua), its default user restricted so that an ACL check of
//!   a replicated command would fail; the replicated stream (MONITOR on the
//!   replica) carries the RANK commands with AT/CLOCK and no ZADD;
//! - writes without AT, run by the replica seconds later (it sleeps), take
//!   the master's clock: same times, same period boards;
//! - keyspace events and WATCH fire on the master and on the replica;
//! - an AOF (appendfsync always) holds the RANK commands and replays, with
//!   other configs and a later clock, to the same digest;
//! - `effects` mode: a replica without the module ends byte-identical;
//! - `CLOCK` from a client is refused as before.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::node::Node;
use common::repl::*;
use common::*;
use redis::{Connection, Value};
use std::io::{Read, Write};
use std::time::Duration;

const DAY: i64 = 86_400_000;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

/// One write of the workload and whether it must fail (`None`: either).
struct Op {
    args: Vec<String>,
    fail: Option<bool>,
}

fn w(line: &str) -> Op {
    Op {
        args: words(line).into_iter().map(String::from).collect(),
        fail: Some(false),
    }
}

/// Every RANK write, on boards of every kind. `now`: the test's clock (ms).
fn workload(now: i64) -> Vec<Op> {
    let mut out = vec![
        w("RANK.CREATE lb:{p} PERIODS day week month TZ +05:30 KEEP 3"),
        w("RANK.CREATE lb:{asc} ORDER asc RESOLUTION ms PERIODS day TZ -08:00 KEEP 0"),
        w("RANK.CREATE lb:{ms} RESOLUTION ms MIN -1000 MAX 1000000"),
        w("RANK.CREATE lb:{wk} PERIODS week month KEEP 1"),
    ];
    let mut bad = w("RANK.CREATE lb:{p}");
    bad.fail = Some(true);
    out.push(bad);
    // AT: none, an hour ago, 3 days ago, 40 days ago (the day boards of that
    // time have expired: not written), 400 days ago (every period board).
    let ats: [Option<i64>; 5] = [
        None,
        Some(now - 3_600_000),
        Some(now - 3 * DAY - 123),
        Some(now - 40 * DAY),
        Some(now - 400 * DAY + 7),
    ];
    let conds = ["", "GT", "LT", "BEST"];
    for i in 0..40usize {
        let at = ats[i % ats.len()]
            .map(|t| format!(" AT {}", ts(t)))
            .unwrap_or_default();
        let m = format!("m{}", i % 7);
        let delta = i as i64 % 5 - 1;
        let board = ["lb:{p}", "lb:{asc}", "lb:{ms}", "lb:{wk}"][i % 4];
        out.push(w(&format!("RANK.INCR {board} {m} {delta}{at}")));
        let cond = conds[i / 3 % 4];
        let score = (i as i64 * 37) % 500 - 100;
        out.push(w(&format!("RANK.SET {board} {m} {score} {cond}{at}")));
        if i % 5 == 0 {
            out.push(w(&format!("RANK.MINCR {board} 3 m1 m2 m1 n{i}")));
        }
        if i % 6 == 0 {
            out.push(w(&format!("RANK.REM {board} m3 nope")));
        }
    }
    for line in [
        // Nothing written: a worse score under GT/BEST, INCR by 0, REM of
        // absent members, DROP of a missing board.
        "RANK.SET lb:{p} m0 -1000000 GT",
        "RANK.SET lb:{asc} m0 1000000 BEST",
        "RANK.INCR lb:{p} m0 0",
        "RANK.REM lb:{p} nobody",
        "RANK.DROP lb:{missing}",
        // Boards made on the way by INCR, SET and MINCR.
        "RANK.INCR lb:{imp1} x 5",
        "RANK.SET lb:{imp2} x 5 BEST",
        "RANK.MINCR lb:{imp3} -2 a b a",
        "RANK.MINCR lb:{imp3} 0 a c",
        // DROP of boards with periods (live period boards deleted), and of
        // a board made on the way; re-created with another layout.
        "RANK.DROP lb:{wk}",
        "RANK.DROP lb:{imp1}",
        "RANK.CREATE lb:{wk} ORDER asc PERIODS month",
        "RANK.INCR lb:{wk} q 3",
        "RANK.REM lb:{imp2} x",
    ] {
        out.push(w(line));
    }
    // Refused writes: out of range, AT in the future, CLOCK from a client.
    for line in [
        "RANK.INCR lb:{ms} m 99999999",
        "RANK.MINCR lb:{ms} 2000000 m1",
        &format!("RANK.INCR lb:{{p}} m 1 AT {}", ts(now + 3_600_000)),
        "RANK.INCR lb:{p} m 1 CLOCK 5",
        "RANK.SET lb:{p} m 1 CLOCK 5",
        "RANK.MINCR lb:{p} CLOCK 5 1 m",
        "RANK.DROP lb:{p} CLOCK 5",
    ] {
        let mut x = w(line);
        x.fail = Some(true);
        out.push(x);
    }
    out
}

fn run(c: &mut Connection, x: &Op) {
    let args: Vec<&str> = x.args.iter().map(String::as_str).collect();
    let r = q(c, &args);
    match (&r, x.fail) {
        (Ok(_), Some(false) | None) | (Err(_), Some(true) | None) => {}
        _ => panic!("{args:?}: {r:?}"),
    }
}

/// MULTI/EXEC and a Lua script with RANK writes.
fn transactions(c: &mut Connection) {
    let r: Vec<Value> = redis::pipe()
        .atomic()
        .cmd("RANK.INCR")
        .arg("lb:{p}")
        .arg("tx")
        .arg(4)
        .cmd("RANK.DROP")
        .arg("lb:{imp3}")
        .cmd("RANK.SET")
        .arg("lb:{imp3}")
        .arg("a")
        .arg(1)
        .arg("BEST")
        .cmd("RANK.MINCR")
        .arg("lb:{asc}")
        .arg(-1)
        .arg("tx")
        .query(c)
        .expect("MULTI/EXEC");
    assert_eq!(r.len(), 4);
    let lua = "redis.call('RANK.INCR', KEYS[1], 'lua', 2); return redis.call('RANK.SET', KEYS[1], 'lua2', 9, 'GT')";
    let _: Value = redis::cmd("EVAL")
        .arg(lua)
        .arg(1)
        .arg("lb:{p}")
        .query(c)
        .expect("EVAL");
}

/// The replica's MONITOR output while `f` runs (the commands it got from
/// the master), as text.
fn monitor_during(replica: &Server, f: impl FnOnce()) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", replica.port)).expect("connect");
    s.write_all(b"*1\r\n$7\r\nMONITOR\r\n").expect("MONITOR");
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .expect("timeout");
    let mut buf = [0u8; 5];
    s.read_exact(&mut buf).expect("+OK");
    assert_eq!(&buf, b"+OK\r\n");
    f();
    let mut out = Vec::new();
    let mut chunk = [0u8; 65536];
    while let Ok(n) = s.read(&mut chunk) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `hotrank.*` configs unlike the master's.
fn odd_configs(c: &mut Connection) {
    for (k, v) in [
        ("gamma", "0.2"),
        ("alpha", "9"),
        ("dedup-seconds", "1"),
        ("max-articles", "1"),
        ("retention-seconds", "600"),
        ("replicate", "effects"),
    ] {
        config_set(c, &format!("hotrank.{k}"), v);
    }
}

/// Reads that must answer the same on both servers.
fn reads(c: &mut Connection) -> Vec<Value> {
    let mut out = Vec::new();
    for b in [
        "lb:{p}",
        "lb:{asc}",
        "lb:{ms}",
        "lb:{wk}",
        "lb:{imp2}",
        "lb:{imp3}",
    ] {
        out.push(q(c, &["RANK.RANGE", b, "0", "-1", "WITHSCORES", "WITHTIME"]).expect("RANGE"));
        out.push(q(c, &["RANK.INFO", b]).expect("INFO"));
        for p in ["day", "week", "month"] {
            for ago in ["0", "1"] {
                // Refused (no such period) on some boards: the same error.
                out.push(
                    q(
                        c,
                        &[
                            "RANK.RANGE",
                            b,
                            "0",
                            "-1",
                            "WITHSCORES",
                            "PERIOD",
                            p,
                            "AGO",
                            ago,
                        ],
                    )
                    .unwrap_or_else(|e| Value::SimpleString(e.to_string())),
                );
            }
        }
    }
    out
}

/// Every key's name, DUMP and absolute expiry; expiries within `slack_ms`
/// (Redis 7.0 has no absolute-expiry call for modules: a period board's
/// expiry is set relative to each server's own clock).
fn same_keyspace(a: &Keyspace, b: &Keyspace, slack_ms: i64) {
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "key names"
    );
    for (k, (dump, exp)) in a {
        let (dump2, exp2) = &b[k];
        assert_eq!(dump, dump2, "DUMP of {}", k.escape_ascii());
        assert_eq!(*exp == -1, *exp2 == -1, "expiry of {}", k.escape_ascii());
        assert!(
            (exp - exp2).abs() <= slack_ms,
            "expiry of {}: {exp} vs {exp2}",
            k.escape_ascii()
        );
    }
}

#[test]
fn commands_mode_replica_with_other_configs_matches_after_every_write() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let replica = replica_of(&master, true);
    let (mut m, mut r) = (master.conn(), replica.conn());
    config_set(&mut m, "hotrank.replicate", "commands");
    odd_configs(&mut r);
    // The replica's default user may touch no board: an ACL check of a
    // replicated command would fail there (and the replica diverge).
    acl_setuser(&mut r, &["admin", "on", ">pw", "~*", "&*", "+@all"]);
    let mut r = replica.conn_as("admin", "pw");
    acl_setuser(&mut r, &["default", "resetkeys", "~nothing:*"]);
    let now = now_ms();
    let writes = workload(now);
    let stream = monitor_during(&replica, || {
        for x in &writes {
            run(&mut m, x);
            wait_replica(&mut m);
            assert_eq!(digest(&mut r), digest(&mut m), "after {:?}", x.args);
        }
        transactions(&mut m);
        wait_replica(&mut m);
    });
    assert_eq!(digest(&mut r), digest(&mut m), "after MULTI/EXEC and Lua");
    assert_eq!(reads(&mut r), reads(&mut m));
    same_keyspace(&keyspace(&mut m), &keyspace(&mut r), 5);
    // Period boards (with their expiry) and many members were written.
    let keys = keyspace(&mut m);
    assert!(
        keys.values().filter(|(_, e)| *e > 0).count() >= 6,
        "{keys:?}"
    );
    // The stream: the commands, with their clock, not their effects.
    for want in [
        "\"RANK.INCR\" \"lb:{p}\"",
        "\"RANK.SET\" \"lb:{asc}\"",
        "\"BEST\" \"AT\"",
        "\"RANK.MINCR\" \"lb:{p}\" \"CLOCK\"",
        "\"RANK.REM\" \"lb:{p}\" \"m3\" \"nope\"",
        "\"RANK.DROP\" \"lb:{wk}\" \"CLOCK\"",
        "\"RANK.CREATE\" \"lb:{imp1}\" \"RESOLUTION\" \"s\" \"MIN\" \"-1073741824\" \"MAX\" \"1073741823\" \"ORDER\" \"desc\"",
        "\"RANK.CREATE\" \"lb:{p}\" \"RESOLUTION\" \"s\" \"MIN\" \"-1073741824\" \"MAX\" \"1073741823\" \"ORDER\" \"desc\" \"PERIODS\" \"day\" \"week\" \"month\" \"TZ\" \"+05:30\" \"KEEP\" \"3\"",
    ] {
        assert!(stream.contains(want), "{want} not in the stream:\n{stream}");
    }
    // Every INCR/SET carries CLOCK; AT when the write had one (a write
    // without AT is at `now`).
    let scores: Vec<&str> = stream
        .lines()
        .filter(|l| l.contains("\"RANK.INCR\"") || l.contains("\"RANK.SET\""))
        .collect();
    assert!(scores.len() > 50, "{stream}");
    assert!(scores.iter().all(|l| l.contains("\"CLOCK\"")), "{scores:?}");
    assert!(scores.iter().any(|l| l.contains("\"AT\"")), "{scores:?}");
    assert!(scores.iter().any(|l| !l.contains("\"AT\"")), "{scores:?}");
    for effect in [
        "\"ZADD\"",
        "\"PEXPIREAT\"",
        "\"ZREM\"",
        "\"UNLINK\"",
        "\"SET\"",
    ] {
        assert!(
            !stream.contains(effect),
            "{effect} in the stream:\n{stream}"
        );
    }
    // Nothing written, nothing replicated.
    assert!(!stream.contains("\"nobody\""), "{stream}");
    assert!(!stream.contains("lb:{missing}"), "{stream}");
    for mut s in [master, replica] {
        assert!(s.alive());
    }
}

/// Writes without AT reach the replica seconds after the master ran them
/// (the replica sleeps): it stores the master's times, on the master's
/// period boards, because each carries `AT t CLOCK now`.
#[test]
fn commands_mode_writes_without_at_use_the_masters_clock() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let replica = replica_of(&master, true);
    let (mut m, mut r) = (master.conn(), replica.conn());
    config_set(&mut m, "hotrank.replicate", "commands");
    for line in [
        "RANK.CREATE c:{ms} RESOLUTION ms PERIODS day week month KEEP 0",
        "RANK.CREATE c:{s} PERIODS day TZ +14:00",
    ] {
        q(&mut m, &words(line)).expect(line);
    }
    wait_replica(&mut m);
    let port = replica.port;
    let sleeper = std::thread::spawn(move || {
        let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
            .unwrap()
            .get_connection()
            .unwrap();
        let _: Value = redis::cmd("DEBUG")
            .arg("SLEEP")
            .arg("1.5")
            .query(&mut c)
            .unwrap();
    });
    std::thread::sleep(Duration::from_millis(200));
    for i in 0..20 {
        let mem = format!("p{}", i % 6);
        for b in ["c:{ms}", "c:{s}", "c:{made}"] {
            q(&mut m, &["RANK.INCR", b, &mem, "1"]).expect("INCR");
        }
        q(&mut m, &["RANK.SET", "c:{ms}", &mem, &i.to_string(), "GT"]).expect("SET");
        q(&mut m, &["RANK.MINCR", "c:{ms}", "2", &mem, "z"]).expect("MINCR");
        std::thread::sleep(Duration::from_millis(3));
    }
    sleeper.join().unwrap();
    wait_replica(&mut m);
    assert_eq!(digest(&mut r), digest(&mut m));
    for b in ["c:{ms}", "c:{s}", "c:{made}"] {
        let args = ["RANK.RANGE", b, "0", "-1", "WITHSCORES", "WITHTIME"];
        assert_eq!(q(&mut r, &args).unwrap(), q(&mut m, &args).unwrap(), "{b}");
    }
    same_keyspace(&keyspace(&mut m), &keyspace(&mut r), 5);
}

/// Keyspace events and WATCH, on the master and on the replica.
#[test]
fn commands_mode_fires_events_and_watch_on_master_and_replica() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let replica = replica_of(&master, true);
    let mut m = master.conn();
    config_set(&mut m, "hotrank.replicate", "commands");
    for s in [&master, &replica] {
        config_set(&mut s.conn(), "notify-keyspace-events", "KEA");
    }
    let now = now_ms();
    let lines = [
        "RANK.CREATE e:{a} PERIODS day week".to_string(),
        "RANK.INCR e:{a} x 2".to_string(),
        format!("RANK.SET e:{{a}} y 5 BEST AT {}", ts(now - 8 * DAY)),
        "RANK.MINCR e:{a} 1 x z".to_string(),
        "RANK.INCR e:{new} x 1".to_string(),
        "RANK.REM e:{a} z".to_string(),
        "RANK.DROP e:{a}".to_string(),
    ];
    let mut on_master = Vec::new();
    let on_replica = events_during(&replica, || {
        on_master = events_during(&master, || {
            let mut c = master.conn();
            for l in &lines {
                q(&mut c, &words(l)).expect(l);
            }
            wait_replica(&mut c);
        });
    });
    let names = |ev: &[(String, Vec<u8>)]| -> Vec<String> {
        ev.iter()
            .map(|(e, k)| format!("{e} {}", k.escape_ascii()))
            .collect()
    };
    let (em, er) = (names(&on_master), names(&on_replica));
    assert_eq!(em, er, "events differ");
    for e in ["set", "zadd", "expire", "zrem", "del"] {
        assert!(
            em.iter().any(|x| x.starts_with(&format!("{e} "))),
            "{e}: {em:?}"
        );
    }
    // WATCH of a board: a write replicated as its command aborts the
    // transaction on both.
    q(&mut m, &words("RANK.INCR w:{a} x 1")).unwrap();
    wait_replica(&mut m);
    let mut watchers = [master.conn(), replica.conn()];
    for c in watchers.iter_mut() {
        q(c, &["WATCH", "w:{a}"]).unwrap();
    }
    q(&mut m, &words("RANK.INCR w:{a} x 1")).unwrap();
    q(&mut m, &words("RANK.MINCR w:{a} 1 x")).unwrap();
    wait_replica(&mut m);
    for c in watchers.iter_mut() {
        q(c, &["MULTI"]).unwrap();
        q(c, &["RANK.SCORE", "w:{a}", "x"]).unwrap();
        assert_eq!(q(c, &["EXEC"]).unwrap(), Value::Nil, "WATCH not signalled");
    }
}

/// The AOF files' text (every part: base and increments).
fn aof_text(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for d in [dir.join("appendonlydir"), dir.to_path_buf()] {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.contains(".aof") && !name.ends_with(".manifest") {
                out.push_str(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out
}

#[test]
fn commands_mode_aof_holds_the_commands_and_replays_to_the_same_digest() {
    let mut n = Node::new("rank-repl-aof");
    let extra = AOF_ALWAYS;
    n.start(&extra);
    let mut c = n.conn();
    config_set(&mut c, "hotrank.replicate", "commands");
    for x in &workload(now_ms()) {
        run(&mut c, x);
    }
    transactions(&mut c);
    let d = digest(&mut c);
    let before = reads(&mut c);
    let aof = aof_text(&n.dir);
    for want in [
        "RANK.INCR",
        "RANK.SET",
        "RANK.MINCR",
        "RANK.REM",
        "RANK.DROP",
        "RANK.CREATE",
        "CLOCK",
    ] {
        assert!(aof.contains(want), "{want} not in the AOF");
    }
    for effect in [
        "\r\nZADD\r\n",
        "\r\nPEXPIREAT\r\n",
        "\r\nZREM\r\n",
        "\r\nUNLINK\r\n",
    ] {
        assert!(!aof.contains(effect), "{effect:?} in the AOF");
    }
    n.kill9();
    // Replayed later, with other configs given as loadmodule arguments.
    std::thread::sleep(Duration::from_millis(1100));
    let mut odd = vec!["gamma", "0.2", "max-articles", "1", "replicate", "effects"];
    odd.extend_from_slice(&extra);
    n.start(&odd);
    let mut c = n.conn();
    assert_eq!(digest(&mut c), d, "AOF replay differs");
    assert_eq!(reads(&mut c), before);
}

/// `effects` mode (the default) is unchanged: a replica without the module
/// ends byte-identical.
#[test]
fn effects_mode_replica_without_the_module_is_identical() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let replica = replica_of(&master, false);
    let (mut m, mut r) = (master.conn(), replica.conn());
    assert_eq!(config_get(&mut m, "hotrank.replicate"), "effects");
    let stream = monitor_during(&replica, || {
        for x in &workload(now_ms()) {
            run(&mut m, x);
        }
        transactions(&mut m);
        wait_replica(&mut m);
    });
    assert_eq!(digest(&mut r), digest(&mut m));
    same_keyspace(&keyspace(&mut m), &keyspace(&mut r), 5);
    assert!(stream.contains("\"ZADD\""), "{stream}");
    assert!(!stream.contains("\"RANK."), "{stream}");
}

/// `CLOCK` (replication and AOF only) is not in COMMAND DOCS of the RANK
/// writes, and a client's CLOCK is refused.
#[test]
fn clock_is_neither_documented_nor_taken_from_a_client() {
    let s = Server::start();
    let mut c = s.conn();
    for cmd in [
        "rank.incr",
        "rank.set",
        "rank.mincr",
        "rank.drop",
        "rank.rem",
        "rank.create",
    ] {
        let docs = q(&mut c, &["COMMAND", "DOCS", cmd]).expect("COMMAND DOCS");
        let text = format!("{docs:?}").to_ascii_uppercase();
        assert!(text.contains("SUMMARY"), "{cmd}: {text}");
        assert!(!text.contains("CLOCK"), "{cmd} documents CLOCK: {text}");
    }
    q(&mut c, &words("RANK.INCR k:{a} m 1")).unwrap();
    let d = redis::cmd("DUMP")
        .arg("k:{a}")
        .query::<Vec<u8>>(&mut c)
        .unwrap();
    for line in [
        "RANK.INCR k:{a} m 1 CLOCK 1",
        "RANK.INCR k:{a} m 1 AT 1700000000 CLOCK 1",
        "RANK.SET k:{a} m 1 CLOCK 1",
        "RANK.SET k:{a} m 1 GT CLOCK 1",
        "RANK.MINCR k:{a} CLOCK 1 1 m",
        "RANK.DROP k:{a} CLOCK 1",
    ] {
        let e = err(&mut c, &words(line));
        assert!(e.starts_with("ERR"), "{line}: {e}");
    }
    let after = redis::cmd("DUMP")
        .arg("k:{a}")
        .query::<Vec<u8>>(&mut c)
        .unwrap();
    assert_eq!(d, after);
}
