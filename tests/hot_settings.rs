//! Per-board settings (HOT.CREATE, HOT.ALTER) and `hotrank.replicate`:
//! - bad input to HOT.CREATE / HOT.ALTER writes nothing;
//! - `commands` mode: a replica with the module, whose own `hotrank.*`
//!   configs differ, ends with the master's DEBUG DIGEST, also after CONFIG
//!   SET on the master between writes, and after a failover the promoted
//!   replica ranks by the board's settings; an AOF (appendfsync always)
//!   replays to the same digest;
//! - `effects` mode: a replica without the module stays byte-identical;
//! - a trimmed article that returns keeps every counted view.
//!
//! Every setting is at a non-default value on the created board.
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::node::Node;
use common::repl::*;
use common::*;
use redis::Connection;

const H: i64 = 3_600_000;

/// Every write command on two boards: one created with every setting at a
/// non-default value, one created on the way by HOT.VIEW (configs of that
/// moment); CONFIG SET on the master between writes; HOT.ALTER of the
/// formula (rescoring) and of the size (trimming). `t0`: a time in the past.
fn workload(c: &mut Connection, t0: i64, round: i64) {
    let b = "hot:{set}";
    if round == 0 {
        ok(
            c,
            &[
                "HOT.CREATE",
                b,
                "ALPHA",
                "2",
                "BETA",
                "0.5",
                "BASE",
                "3",
                "GAMMA",
                "1.3",
                "DEDUP-SECONDS",
                "60",
                "DEDUP-SHARDS",
                "7",
                "VISITOR-MAX-VIEWS",
                "5",
                "VISITOR-WINDOW-SECONDS",
                "600",
                "MAX-ARTICLES",
                "4",
                "RETENTION-SECONDS",
                "86400",
            ],
        );
    }
    for i in 0..12i64 {
        let a = format!("a{}", (i * 7 + round) % 9);
        let pubt = ts(t0 - (i % 5) * H);
        ok(c, &["HOT.PUBLISH", b, &a, &pubt]);
        if i == 4 {
            config_set(c, "hotrank.gamma", "2.5");
            config_set(c, "hotrank.max-articles", "2");
            config_set(c, "hotrank.dedup-seconds", "0");
        }
        for v in 0..(i % 4 + 1) {
            let at = ts(t0 + round * 1000 + i * 1000 + v);
            // The same visitor twice: a duplicate; visitor v0 goes over its limit.
            ok(c, &["HOT.VIEW", b, &a, &format!("v{v}"), "AT", &at]);
            ok(c, &["HOT.VIEW", b, &a, "v0", "AT", &at]);
            ok(
                c,
                &[
                    "HOT.VIEW",
                    "hot:{implicit}",
                    &a,
                    &format!("w{i}"),
                    "AT",
                    &at,
                ],
            );
        }
        ok(c, &["HOT.VIEW", b, &a, &format!("now{i}")]);
    }
    ok(c, &["HOT.ALTER", b, "GAMMA", "1.7", "MAX-ARTICLES", "3"]);
    ok(c, &["HOT.ALTER", "hot:{implicit}", "ALPHA", "4"]);
    ok(c, &["HOT.VIEW", b, "late", "x", "AT", &ts(t0 + 50_000)]);
    if round == 1 {
        // A board made again after HOT.DROP lives at epoch 1.
        ok(c, &["HOT.DROP", "hot:{implicit}"]);
        for v in ["y", "z", "y"] {
            ok(
                c,
                &[
                    "HOT.VIEW",
                    "hot:{implicit}",
                    "late",
                    v,
                    "AT",
                    &ts(t0 + 60_000),
                ],
            );
        }
        // The old epoch's keys go in steps on the master's timer (every
        // 1 ms), the old article index last: let them finish before
        // digests are compared.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while redis::cmd("EXISTS")
            .arg(b"hot:{implicit}\0ix".as_slice())
            .query::<i64>(c)
            .expect("EXISTS")
            == 1
        {
            assert!(
                std::time::Instant::now() < deadline,
                "HOT.DROP steps did not finish"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    config_set(c, "hotrank.gamma", "1.5");
    config_set(c, "hotrank.max-articles", "1000");
    config_set(c, "hotrank.dedup-seconds", "900");
}

fn top(c: &mut Connection, b: &str, at: i64) -> Vec<String> {
    redis::cmd("HOT.TOP")
        .arg(b)
        .arg("LIMIT")
        .arg(100)
        .arg("WITHSCORES")
        .arg("AT")
        .arg(ts(at))
        .query(c)
        .expect("HOT.TOP")
}

/// Configs unlike the master's (and the boards').
fn odd_configs(c: &mut Connection) {
    for (k, v) in [
        ("gamma", "0.2"),
        ("alpha", "9"),
        ("dedup-seconds", "1"),
        ("dedup-shards", "3"),
        ("visitor-max-views", "0"),
        ("max-articles", "1"),
        ("retention-seconds", "600"),
    ] {
        config_set(c, &format!("hotrank.{k}"), v);
    }
}

#[test]
fn commands_mode_replica_with_other_configs_matches_and_keeps_ranking_after_failover() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let replica = replica_of(&master, true);
    let (mut m, mut r) = (master.conn(), replica.conn());
    config_set(&mut m, "hotrank.replicate", "commands");
    assert_eq!(config_get(&mut m, "hotrank.replicate"), "commands");
    odd_configs(&mut r);
    let t0 = now_s() * 1000 - 100_000;
    workload(&mut m, t0, 0);
    workload(&mut m, t0, 1);
    wait_replica(&mut m);
    let d = digest(&mut m);
    assert_eq!(digest(&mut r), d, "replica digest differs");
    let q = t0 + 2 * H;
    for b in ["hot:{set}", "hot:{implicit}"] {
        assert_eq!(top(&mut m, b, q), top(&mut r, b, q), "{b}");
        assert!(!top(&mut m, b, q).is_empty());
    }
    // Failover: the replica is promoted; the old master stops replicating
    // too. The same writes on both, each with its own (different) configs,
    // give the same data: both rank by the boards' settings.
    ok(&mut r, &["REPLICAOF", "NO", "ONE"]);
    config_set(&mut r, "hotrank.replicate", "commands");
    odd_configs(&mut r);
    for c in [&mut m, &mut r] {
        for i in 0..6 {
            let at = ts(t0 + 60_000 + i);
            ok(
                c,
                &["HOT.VIEW", "hot:{set}", &format!("a{i}"), "z", "AT", &at],
            );
            ok(
                c,
                &[
                    "HOT.VIEW",
                    "hot:{implicit}",
                    &format!("a{i}"),
                    "z",
                    "AT",
                    &at,
                ],
            );
        }
    }
    assert_eq!(digest(&mut r), digest(&mut m), "after failover");
    for b in ["hot:{set}", "hot:{implicit}"] {
        assert_eq!(top(&mut m, b, q), top(&mut r, b, q), "{b} after failover");
    }
}

#[test]
fn commands_mode_aof_replays_to_the_same_digest() {
    let mut n = Node::new("settings-aof");
    let extra = AOF_ALWAYS;
    n.start(&extra);
    let mut c = n.conn();
    config_set(&mut c, "hotrank.replicate", "commands");
    let t0 = now_s() * 1000 - 100_000;
    workload(&mut c, t0, 0);
    workload(&mut c, t0, 1);
    let d = digest(&mut c);
    n.kill9();
    n.start(&extra);
    let mut c = n.conn();
    // Replayed with this server's configs at their defaults and another clock.
    assert_eq!(digest(&mut c), d, "AOF replay differs");
}

#[test]
fn effects_mode_replica_without_the_module_is_identical() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let replica = replica_of(&master, false);
    let (mut m, mut r) = (master.conn(), replica.conn());
    let t0 = now_s() * 1000 - 100_000;
    workload(&mut m, t0, 0);
    workload(&mut m, t0, 1);
    wait_replica(&mut m);
    assert_eq!(digest(&mut r), digest(&mut m));
}

fn record(c: &mut Connection, b: &str) -> Option<String> {
    let name = format!("{b}\0board");
    redis::cmd("GET")
        .arg(name.as_bytes())
        .query(c)
        .expect("GET")
}

#[test]
fn create_and_alter_refuse_bad_input_and_write_nothing() {
    let s = Server::start_with(&DEBUG_LOCAL, true);
    let mut c = s.conn();
    let b = "hot:{bad}";
    for args in [
        &["GAMMA", "11"][..],
        &["GAMMA", "nan"],
        &["BASE", "0"],
        &["ALPHA", "-1"],
        &["BETA", "1e7"],
        &["ALPHA", "1", "BETA"],
        &["MAX-ARTICLES", "-1"],
        &["MAX-ARTICLES", "1.5"],
        &["RETENTION-SECONDS", "59"],
        &["DEDUP-SECONDS", "01"],
        &["DEDUP-SHARDS", "0"],
        &["VISITOR-WINDOW-SECONDS", "0"],
        &["VISITOR-MAX-VIEWS", "x"],
        &["NOPE", "1"],
        &["ID", "5"],
        &["CLOCK", "5"],
    ] {
        let mut all = vec!["HOT.CREATE", b];
        all.extend_from_slice(args);
        let e = err(&mut c, &all);
        assert!(e.starts_with("ERR"), "{all:?}: {e}");
        let n: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
        assert_eq!(n, 0, "{all:?} wrote something");
    }
    assert!(err(&mut c, &["HOT.ALTER", b, "GAMMA", "1"]).contains("no such HOT board"));
    assert!(err(&mut c, &["HOT.ALTER", b]).contains("wrong number"));
    assert!(err(&mut c, &["HOT.CREATE"]).contains("wrong number"));
    let n: i64 = redis::cmd("DBSIZE").query(&mut c).unwrap();
    assert_eq!(n, 0);
    // Wrong types and other boards.
    ok(&mut c, &["SET", "str", "x"]);
    assert!(err(&mut c, &["HOT.CREATE", "str"]).starts_with("WRONGTYPE"));
    ok(&mut c, &["ZADD", "z", "1", "m"]);
    assert!(err(&mut c, &["HOT.CREATE", "z"]).contains("already exists"));
    ok(&mut c, &["RANK.CREATE", "lb"]);
    assert!(err(&mut c, &["HOT.CREATE", "lb"]).starts_with("ERR"));
    // A board: created once; a bad ALTER changes nothing.
    ok(
        &mut c,
        &["HOT.CREATE", b, "gamma", "1.3", "MAX-ARTICLES", "5"],
    );
    let rec = record(&mut c, b).expect("record");
    assert!(
        rec.contains(" gamma=1.3 ") && rec.contains(" max-articles=5 "),
        "{rec}"
    );
    assert!(err(&mut c, &["HOT.CREATE", b]).contains("board already exists"));
    let d = digest(&mut c);
    for args in [
        &["ALPHA", "2", "GAMMA", "11"][..],
        &["ALPHA", "2", "BOGUS", "1"],
        &["ALPHA", "2", "GAMMA"],
    ] {
        let mut all = vec!["HOT.ALTER", b];
        all.extend_from_slice(args);
        assert!(err(&mut c, &all).starts_with("ERR"), "{all:?}");
        assert_eq!(digest(&mut c), d, "{all:?} wrote something");
    }
    ok(&mut c, &["HOT.ALTER", b, "ALPHA", "2", "GAMMA", "1.8"]);
    let rec = record(&mut c, b).expect("record");
    assert!(
        rec.contains(" alpha=2 ") && rec.contains(" gamma=1.8 "),
        "{rec}"
    );
}

#[test]
fn a_trimmed_article_comes_back_with_every_counted_view() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{trim}";
    ok(
        &mut c,
        &["HOT.CREATE", b, "MAX-ARTICLES", "2", "DEDUP-SECONDS", "0"],
    );
    let t0 = now_s() * 1000 - 10 * H;
    // "back": many views, published long ago (low score now); then newer articles
    // push it off the board.
    ok(&mut c, &["HOT.PUBLISH", b, "back", &ts(t0 - 500 * H)]);
    for v in 0..30 {
        ok(
            &mut c,
            &["HOT.VIEW", b, "back", &format!("v{v}"), "AT", &ts(t0)],
        );
    }
    let mut counts = vec![("back".to_string(), 30i64, t0 - 500 * H)];
    for i in 0..40 {
        let a = format!("n{i}");
        ok(&mut c, &["HOT.PUBLISH", b, &a, &ts(t0)]);
        ok(&mut c, &["HOT.VIEW", b, &a, "x", "AT", &ts(t0 + i)]);
        counts.push((a, 1, t0));
    }
    let on: Vec<String> = redis::cmd("ZRANGE")
        .arg(b)
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    assert!(!on.contains(&"back".to_string()), "not trimmed: {on:?}");
    // Its counters stayed.
    let st: Vec<redis::Value> = redis::cmd("HOT.STATS")
        .arg(b)
        .arg("back")
        .query(&mut c)
        .unwrap();
    assert!(format!("{st:?}").contains("30"), "{st:?}");
    // Viewed again: back with 31 views and 31 visitors.
    let r: Vec<redis::Value> = redis::cmd("HOT.VIEW")
        .arg(b)
        .arg("back")
        .arg("v99")
        .arg("AT")
        .arg(ts(t0 + 100))
        .query(&mut c)
        .unwrap();
    assert_eq!(r[0], redis::Value::Int(31));
    assert_eq!(r[1], redis::Value::Int(31));
    counts[0].1 = 31;
    // HOT.TOP equals brute force over the articles on the board, from all
    // their counted views.
    let q = t0 + H;
    let on: Vec<String> = redis::cmd("ZRANGE")
        .arg(b)
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    assert!(on.contains(&"back".to_string()));
    let score = |pv: i64, uv: i64, p: i64| {
        let hours = ((q - p) as f64 / H as f64).max(0.0);
        (pv as f64 + 1.2 * uv as f64) / hotrank::detmath::pow(hours + 2.0, 1.5)
    };
    let mut want: Vec<(String, f64)> = counts
        .iter()
        .filter(|(a, _, _)| on.contains(a))
        .map(|(a, n, p)| (a.clone(), score(*n, *n, *p)))
        .collect();
    want.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    let got = top(&mut c, b, q);
    let got: Vec<(String, f64)> = got
        .chunks(2)
        .map(|p| (p[0].clone(), p[1].parse().unwrap()))
        .collect();
    assert_eq!(got, want);
}

/// Every key's absolute expiry (PEXPIRETIME, unix ms; -1 none).
fn expiries(c: &mut Connection) -> std::collections::BTreeMap<Vec<u8>, i64> {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    keys.into_iter()
        .map(|k| {
            let at: i64 = redis::cmd("PEXPIRETIME")
                .arg(&k)
                .query(c)
                .expect("PEXPIRETIME");
            (k, at)
        })
        .collect()
}

/// In `commands` mode, whether a view refreshes the retention expiry is
/// judged at the master's clock (`CLOCK`), not at the clock of the server
/// that replays it: an AOF replayed 7 s later sets the same expiry times.
/// (DEBUG DIGEST does not show expiry times on Redis 7.0, so this compares
/// PEXPIRETIME of every key.)
#[test]
fn commands_mode_aof_replay_keeps_the_masters_expiry_times() {
    let mut n = Node::new("settings-aof-expiry");
    let extra = AOF_ALWAYS;
    n.start(&extra);
    let mut c = n.conn();
    config_set(&mut c, "hotrank.replicate", "commands");
    let b = "hot:{expiry}";
    let _: redis::Value = redis::cmd("HOT.CREATE")
        .arg(b)
        .arg("RETENTION-SECONDS")
        .arg(60)
        .query(&mut c)
        .expect("HOT.CREATE");
    let view = |c: &mut Connection, v: &str| {
        let _: redis::Value = redis::cmd("HOT.VIEW")
            .arg(b)
            .arg("a")
            .arg(v)
            .query(c)
            .expect("HOT.VIEW");
    };
    view(&mut c, "v1");
    // 1 s later the expiry is still fresh (more than 54 s left): kept.
    std::thread::sleep(std::time::Duration::from_millis(1000));
    view(&mut c, "v2");
    let before = expiries(&mut c);
    assert!(before.values().any(|&at| at > 0), "{before:?}");
    // Replayed 7 s later, where the same expiry would look stale (53 s left).
    std::thread::sleep(std::time::Duration::from_millis(6500));
    n.kill9();
    n.start(&extra);
    let mut c = n.conn();
    assert_eq!(
        expiries(&mut c),
        before,
        "expiry times after the AOF replay"
    );
}

/// `INFO hotrank`'s `hotrank_<field>` as an integer.
fn hotrank_info(c: &mut Connection, field: &str) -> i64 {
    let info: String = redis::cmd("INFO").arg("hotrank").query(c).expect("INFO");
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("hotrank_{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {info}"))
        .trim()
        .parse()
        .expect("integer")
}

/// In `commands` mode, board upkeep (trim, retention and index sweeps)
/// replicates its effects after the view, and a replica runs none itself:
/// what upkeep may open depends on the caller's ACL key patterns, which
/// the replica does not see. Here a user may write the board and the keys
/// of articles `a*` but not those of `xold`, which the trim must read: the
/// master's upkeep stops at NOPERM (counted), and the replica must not trim
/// either.
#[test]
fn commands_mode_upkeep_follows_the_masters_acl() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let replica = replica_of(&master, true);
    let (mut m, mut r) = (master.conn(), replica.conn());
    config_set(&mut m, "hotrank.replicate", "commands");
    let b = "hot:{acl}";
    let t0 = now_s() * 1000 - 100_000;
    ok(
        &mut m,
        &["HOT.CREATE", b, "MAX-ARTICLES", "1", "DEDUP-SECONDS", "0"],
    );
    ok(&mut m, &["HOT.VIEW", b, "xold", "v", "AT", &ts(t0)]);
    let _: redis::Value = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("lim")
        .arg("on")
        .arg(">pw")
        .arg("+@all")
        .arg("~hot:{acl}")
        .arg(b"~hot:{acl}?*:a*".as_slice())
        .arg(b"~hot:{acl}?board".as_slice())
        .arg(b"~hot:{acl}?pub".as_slice())
        .arg(b"~hot:{acl}?ix".as_slice())
        .arg(b"~hot:{acl}?ep".as_slice())
        .arg(b"~hot:{acl}?vv:*".as_slice())
        .query(&mut m)
        .expect("ACL SETUSER");
    let mut lim = master.conn_as("lim", "pw");
    for i in 0..40 {
        ok(
            &mut lim,
            &[
                "HOT.VIEW",
                b,
                &format!("a{i}"),
                "v",
                "AT",
                &ts(t0 + 1000 + i),
            ],
        );
    }
    assert!(
        hotrank_info(&mut m, "upkeep_errors") > 0,
        "upkeep never hit NOPERM"
    );
    let card: i64 = redis::cmd("ZCARD").arg(b).query(&mut m).expect("ZCARD");
    assert_eq!(card, 41, "the master trimmed nothing");
    wait_replica(&mut m);
    assert_eq!(digest(&mut r), digest(&mut m), "replica digest differs");
    // The default user's next new article trims the board, and the replica
    // applies the master's trim.
    ok(&mut m, &["HOT.VIEW", b, "a99", "v", "AT", &ts(t0 + 2000)]);
    let card: i64 = redis::cmd("ZCARD").arg(b).query(&mut m).expect("ZCARD");
    assert_eq!(card, 1, "trimmed to MAX-ARTICLES");
    wait_replica(&mut m);
    assert_eq!(digest(&mut r), digest(&mut m), "after the trim");
}

/// The HyperLogLog encoding a view writes follows the master's
/// `hll-sparse-max-bytes` in `commands` mode too: the replicated HOT.VIEW
/// carries it when it is not the default (`SPARSE n`), and a view from the
/// master without it uses the default 3000, never the replica's own config.
#[test]
fn commands_mode_hyperloglog_encoding_follows_the_master() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let replica = replica_of(&master, true);
    let (mut m, mut r) = (master.conn(), replica.conn());
    config_set(&mut m, "hotrank.replicate", "commands");
    config_set(&mut r, "hll-sparse-max-bytes", "200");
    let t0 = now_s() * 1000 - 100_000;
    let encoding = |c: &mut Connection, board: &str| -> String {
        // The header's encoding byte (after "HYLL"): 0 dense, 1 sparse.
        let key = [board.as_bytes(), b"\0uv:a"].concat();
        let byte: Vec<u8> = redis::cmd("GETRANGE")
            .arg(key)
            .arg(4)
            .arg(4)
            .query(c)
            .expect("GETRANGE");
        match byte.as_slice() {
            [0] => "dense".to_string(),
            [1] => "sparse".to_string(),
            other => panic!("not a HyperLogLog header: {other:?}"),
        }
    };
    // The master at the default: 400 visitors stay sparse (over 200 bytes).
    for v in 0..400 {
        ok(
            &mut m,
            &["HOT.VIEW", "hot:{s1}", "a", &format!("v{v}"), "AT", &ts(t0)],
        );
    }
    // The master at 10 bytes: 30 visitors go dense.
    config_set(&mut m, "hll-sparse-max-bytes", "10");
    for v in 0..30 {
        ok(
            &mut m,
            &["HOT.VIEW", "hot:{s2}", "a", &format!("v{v}"), "AT", &ts(t0)],
        );
    }
    assert_eq!(encoding(&mut m, "hot:{s1}"), "sparse");
    assert_eq!(encoding(&mut m, "hot:{s2}"), "dense");
    wait_replica(&mut m);
    assert_eq!(encoding(&mut r, "hot:{s1}"), "sparse");
    assert_eq!(encoding(&mut r, "hot:{s2}"), "dense");
    assert_eq!(digest(&mut r), digest(&mut m), "replica digest differs");
    // A client cannot send SPARSE.
    let e = q(&mut m, &["HOT.VIEW", "hot:{s2}", "a", "v", "SPARSE", "5"]).unwrap_err();
    assert!(e.to_string().contains("syntax error"), "{e}");
}
