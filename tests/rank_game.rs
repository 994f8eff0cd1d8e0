//! Leaderboards for every kind of game, against a real server: ascending
//! boards (`RANK.CREATE … ORDER asc`: the lowest score ranks first) through
//! every read command, exact packing at both ends of an asc board's range,
//! keep-best writes (`RANK.SET … GT|LT|BEST`) with their `[score, written]`
//! reply, `RANK.DROP`, and ACL on RANK.DROP. Replication of all three is in
//! `tests/replication.rs` (`game_boards_replicate_exactly`).
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
#[path = "common/rank_client.rs"]
mod rank_client;
use rank_client::*;
use redis::{Connection, Value};

/// `[score, written]` as RANK.SET GT|LT|BEST replies it.
fn kept(score: i64, written: bool) -> Value {
    arr(vec![int(score), int(written as i64)])
}

/// The derived layout key of board `k`.
fn layout_key(k: &str) -> Vec<u8> {
    hotrank::keys::derived(k.as_bytes(), hotrank::keys::Kind::Layout, &[])
}

fn exists(c: &mut Connection, k: &[u8]) -> bool {
    redis::cmd("EXISTS").arg(k).query::<i64>(c).expect("EXISTS") == 1
}

fn get(c: &mut Connection, k: &[u8]) -> Option<Vec<u8>> {
    redis::cmd("GET").arg(k).query(c).expect("GET")
}

/// The raw packed score of a member (ZSCORE), to see whether a write happened.
fn raw_score(c: &mut Connection, k: &str, m: &str) -> Option<String> {
    redis::cmd("ZSCORE").arg(k).arg(m).query(c).expect("ZSCORE")
}

/// A whole second some time ago (writes with AT must not be in the future).
fn t0() -> i64 {
    now_s() - 10_000
}

#[test]
fn asc_board_ranks_lowest_first_then_earliest_then_by_name() {
    let s = Server::start();
    let c = &mut s.conn();
    let k = "lap:{monaco}";
    let t = t0();
    assert_eq!(ok(c, &["RANK.CREATE", k, "ORDER", "asc"]), Value::Okay);
    assert_eq!(
        get(c, &layout_key(k)).as_deref(),
        Some(&b"v1 s -1073741824 1073741823 asc"[..])
    );
    for (m, score, at) in [
        ("a", 50, t),
        ("b", 40, t + 10),
        ("c", 50, t - 5),
        ("d", 60, t - 100),
        ("e", 40, t + 10), // same score and second as b: by name
        ("f", 40, t + 11),
    ] {
        assert_eq!(
            ok(
                c,
                &["RANK.SET", k, m, &score.to_string(), "AT", &at.to_string()]
            ),
            int(score)
        );
    }
    let order = [
        ("b", 40),
        ("e", 40),
        ("f", 40),
        ("c", 50),
        ("a", 50),
        ("d", 60),
    ];
    assert_eq!(
        ok(c, &["RANK.RANGE", k, "0", "-1", "WITHSCORES"]),
        ranged(&order)
    );
    assert_eq!(ok(c, &["RANK.RANGE", k, "-2", "-1"]), members(&["a", "d"]));
    // RANK and RANK … TIES (competition rank: strictly lower scores).
    let ties = [0, 0, 0, 3, 3, 5];
    for (i, (m, _)) in order.iter().enumerate() {
        assert_eq!(ok(c, &["RANK.RANK", k, m]), int(i as i64), "{m}");
        assert_eq!(ok(c, &["RANK.RANK", k, m, "TIES"]), int(ties[i]), "{m}");
    }
    assert_eq!(ok(c, &["RANK.RANK", k, "nobody", "TIES"]), Value::Nil);
    // AROUND, clamped at both ends.
    assert_eq!(
        ok(c, &["RANK.AROUND", k, "c", "1"]),
        arr(vec![
            arr(vec![int(2), bulk("f"), int(40)]),
            arr(vec![int(3), bulk("c"), int(50)]),
            arr(vec![int(4), bulk("a"), int(50)]),
        ])
    );
    assert_eq!(
        ok(c, &["RANK.AROUND", k, "b", "1"]),
        arr(vec![
            arr(vec![int(0), bulk("b"), int(40)]),
            arr(vec![int(1), bulk("e"), int(40)]),
        ])
    );
    assert_eq!(
        ok(c, &["RANK.AROUND", k, "d", "1"]),
        arr(vec![
            arr(vec![int(4), bulk("a"), int(50)]),
            arr(vec![int(5), bulk("d"), int(60)]),
        ])
    );
    // RANGEBYSCORE: min is the lower number; best (lowest) first.
    assert_eq!(
        ok(c, &["RANK.RANGEBYSCORE", k, "40", "50"]),
        members(&["b", "e", "f", "c", "a"])
    );
    assert_eq!(
        ok(c, &["RANK.RANGEBYSCORE", k, "45", "+inf", "WITHSCORES"]),
        ranged(&[("c", 50), ("a", 50), ("d", 60)])
    );
    assert_eq!(
        ok(c, &["RANK.RANGEBYSCORE", k, "-inf", "40"]),
        members(&["b", "e", "f"])
    );
    assert_eq!(
        ok(
            c,
            &["RANK.RANGEBYSCORE", k, "-inf", "+inf", "LIMIT", "2", "3"]
        ),
        members(&["f", "c", "a"])
    );
    assert_eq!(
        ok(c, &["RANK.RANGEBYSCORE", k, "50", "50"]),
        members(&["c", "a"])
    );
    assert_eq!(ok(c, &["RANK.RANGEBYSCORE", k, "50", "40"]), members(&[]));
    assert_eq!(ok(c, &["RANK.RANGEBYSCORE", k, "61", "+inf"]), members(&[]));
    // SCORE WITHTIME.
    assert_eq!(
        ok(c, &["RANK.SCORE", k, "c", "WITHTIME"]),
        withtime(50, &(t - 5).to_string())
    );
    assert_eq!(
        ok(c, &["RANK.SCORE", k, "e", "WITHTIME"]),
        withtime(40, &(t + 10).to_string())
    );
    assert_eq!(ok(c, &["RANK.CARD", k]), int(6));
    // INCR and MINCR move members on an asc board too: down is better.
    assert_eq!(
        ok(
            c,
            &["RANK.INCR", k, "d", "-30", "AT", &(t + 20).to_string()]
        ),
        int(30)
    );
    assert_eq!(ok(c, &["RANK.RANK", k, "d"]), int(0));
    assert_eq!(
        ok(c, &["RANK.MINCR", k, "15", "d", "b"]),
        arr(vec![int(45), int(55)])
    );
    assert_eq!(
        ok(c, &["RANK.RANGE", k, "0", "-1", "WITHSCORES"]),
        ranged(&[
            ("e", 40),
            ("f", 40),
            ("d", 45),
            ("c", 50),
            ("a", 50),
            ("b", 55)
        ])
    );

    // The same writes on a desc board (explicit ORDER desc is the default
    // layout) rank the other way round.
    let d = "lap:{desc}";
    assert_eq!(ok(c, &["RANK.CREATE", d, "order", "DESC"]), Value::Okay);
    assert_eq!(
        get(c, &layout_key(d)).as_deref(),
        Some(&b"v1 s -1073741824 1073741823"[..])
    );
    for (m, score, at) in [("a", 50, t), ("b", 40, t + 10), ("c", 50, t - 5)] {
        ok(
            c,
            &["RANK.SET", d, m, &score.to_string(), "AT", &at.to_string()],
        );
    }
    assert_eq!(
        ok(c, &["RANK.RANGE", d, "0", "-1"]),
        members(&["c", "a", "b"])
    );
    assert_eq!(
        ok(c, &["RANK.RANGEBYSCORE", d, "40", "50"]),
        members(&["c", "a", "b"])
    );
    assert_eq!(ok(c, &["RANK.RANK", d, "b", "TIES"]), int(2));
}

#[test]
fn asc_board_packs_exactly_at_both_ends_of_the_range() {
    let s = Server::start();
    let c = &mut s.conn();
    let now = now_s() - 1;
    for (k, opts, min, max) in [
        ("golf:{s}", vec![], -(1i64 << 30), (1i64 << 30) - 1),
        (
            "golf:{ms}",
            vec!["RESOLUTION", "ms"],
            -(1i64 << 20),
            (1i64 << 20) - 1,
        ),
        (
            "golf:{wide}",
            vec!["MIN", "0", "MAX", "4294967295"],
            0,
            4_294_967_295,
        ),
        ("golf:{narrow}", vec!["MIN", "-3", "MAX", "-2"], -3, -2),
    ] {
        let mut create = vec!["RANK.CREATE", k];
        create.extend(&opts);
        create.extend(["ORDER", "asc"]);
        assert_eq!(ok(c, &create), Value::Okay);
        let scores: Vec<i64> = if max - min >= 3 {
            vec![min, min + 1, max - 1, max]
        } else {
            vec![min, max]
        };
        // Each score at the earliest instant and at now, lowest score first.
        let mut want = Vec::new();
        for (i, sc) in scores.iter().enumerate() {
            for (j, at) in [EPOCH_S, now].into_iter().enumerate() {
                let m = format!("m{i}{j}");
                assert_eq!(
                    ok(
                        c,
                        &["RANK.SET", k, &m, &sc.to_string(), "AT", &at.to_string()]
                    ),
                    int(*sc),
                    "{k} {sc}"
                );
                assert_eq!(
                    ok(c, &["RANK.SCORE", k, &m, "WITHTIME"]),
                    withtime(*sc, &at.to_string()),
                    "{k} {sc} {at}"
                );
                want.push((m, *sc));
            }
        }
        let want: Vec<(&str, i64)> = want.iter().map(|(m, s)| (m.as_str(), *s)).collect();
        assert_eq!(
            ok(c, &["RANK.RANGE", k, "0", "-1", "WITHSCORES"]),
            ranged(&want),
            "{k}"
        );
        assert_eq!(
            ok(c, &["RANK.RANGEBYSCORE", k, "-inf", "+inf", "WITHSCORES"]),
            ranged(&want),
            "{k}"
        );
        assert_eq!(
            ok(
                c,
                &["RANK.RANGEBYSCORE", k, &min.to_string(), &min.to_string()]
            ),
            members(&["m00", "m01"]),
            "{k}"
        );
        let n = want.len();
        assert_eq!(
            ok(c, &["RANK.RANGEBYSCORE", k, &max.to_string(), "+inf"]),
            members(&[want[n - 2].0, want[n - 1].0]),
            "{k}"
        );
        assert_eq!(
            ok(c, &["RANK.RANK", k, want[n - 1].0, "TIES"]),
            int(n as i64 - 2)
        );
        // One past either end is refused, naming the value.
        for v in [min - 1, max + 1] {
            let e = err(c, &["RANK.SET", k, "x", &v.to_string()]);
            assert!(
                e.starts_with(&format!("ERR score {v} is out of range")),
                "{e}"
            );
        }
        assert_eq!(ok(c, &["RANK.SCORE", k, "x"]), Value::Nil);
    }
}

#[test]
fn set_gt_lt_best_keep_the_best_score_on_both_orders() {
    let s = Server::start();
    let c = &mut s.conn();
    let t = t0();
    let at = |d: i64| (t + d).to_string();
    // Desc board (default): BEST is GT.
    let k = "pts:{a}";
    ok(c, &["RANK.CREATE", k]);
    assert_eq!(
        ok(c, &["RANK.SET", k, "m", "10", "BEST", "AT", &at(0)]),
        kept(10, true)
    );
    assert_eq!(
        ok(c, &["RANK.SET", k, "m", "5", "BEST", "AT", &at(1)]),
        kept(10, false)
    );
    assert_eq!(
        ok(c, &["RANK.SET", k, "m", "15", "best", "AT", &at(2)]),
        kept(15, true)
    );
    assert_eq!(
        ok(c, &["RANK.SCORE", k, "m", "WITHTIME"]),
        withtime(15, &(t + 2).to_string())
    );
    // An equal score is not written: the time stays.
    assert_eq!(
        ok(c, &["RANK.SET", k, "m", "15", "AT", &at(3), "BEST"]),
        kept(15, false)
    );
    assert_eq!(
        ok(c, &["RANK.SET", k, "m", "15", "GT", "AT", &at(3)]),
        kept(15, false)
    );
    assert_eq!(
        ok(c, &["RANK.SET", k, "m", "15", "LT", "AT", &at(3)]),
        kept(15, false)
    );
    assert_eq!(ok(c, &["RANK.SET", k, "m", "15", "AT", &at(3)]), int(15));
    assert_eq!(
        ok(c, &["RANK.SCORE", k, "m", "WITHTIME"]),
        withtime(15, &(t + 2).to_string())
    );
    // GT and LT as ZADD's.
    assert_eq!(ok(c, &["RANK.SET", k, "m", "12", "GT"]), kept(15, false));
    assert_eq!(ok(c, &["RANK.SET", k, "m", "20", "gt"]), kept(20, true));
    assert_eq!(ok(c, &["RANK.SET", k, "m", "30", "LT"]), kept(20, false));
    assert_eq!(
        ok(c, &["RANK.SET", k, "m", "-7", "LT", "LT"]),
        kept(-7, true)
    );
    // A missing member is always written, whatever the condition.
    assert_eq!(ok(c, &["RANK.SET", k, "n1", "3", "GT"]), kept(3, true));
    assert_eq!(ok(c, &["RANK.SET", k, "n2", "3", "LT"]), kept(3, true));
    assert_eq!(ok(c, &["RANK.SET", k, "n3", "3", "BEST"]), kept(3, true));
    // Plain RANK.SET keeps its integer reply and writes a worse score.
    assert_eq!(ok(c, &["RANK.SET", k, "n3", "1"]), int(1));

    // Asc board: BEST is LT; GT and LT keep their meaning.
    let a = "lap:{a}";
    ok(c, &["RANK.CREATE", a, "ORDER", "asc", "RESOLUTION", "ms"]);
    assert_eq!(
        ok(c, &["RANK.SET", a, "m", "90500", "BEST", "AT", &at(0)]),
        kept(90500, true)
    );
    assert_eq!(
        ok(c, &["RANK.SET", a, "m", "91000", "BEST"]),
        kept(90500, false)
    );
    assert_eq!(
        ok(c, &["RANK.SET", a, "m", "89999", "AT", &at(5), "BEST"]),
        kept(89999, true)
    );
    assert_eq!(
        ok(c, &["RANK.SCORE", a, "m", "WITHTIME"]),
        withtime(89999, &(t + 5).to_string())
    );
    assert_eq!(
        ok(c, &["RANK.SET", a, "m", "89999", "BEST"]),
        kept(89999, false)
    );
    assert_eq!(
        ok(c, &["RANK.SCORE", a, "m", "WITHTIME"]),
        withtime(89999, &(t + 5).to_string())
    );
    assert_eq!(
        ok(c, &["RANK.SET", a, "m", "95000", "GT"]),
        kept(95000, true)
    );
    assert_eq!(
        ok(c, &["RANK.SET", a, "m", "94000", "GT"]),
        kept(95000, false)
    );
    assert_eq!(
        ok(c, &["RANK.SET", a, "m", "94000", "LT"]),
        kept(94000, true)
    );
    assert_eq!(
        ok(c, &["RANK.SET", a, "new", "99000", "BEST"]),
        kept(99000, true)
    );
    assert_eq!(ok(c, &["RANK.RANGE", a, "0", "-1"]), members(&["m", "new"]));
    // A score that is not written is still checked against the layout.
    let before = raw_score(c, a, "m");
    let e = err(c, &["RANK.SET", a, "m", "2000000", "BEST"]);
    assert!(e.starts_with("ERR score 2000000 is out of range"), "{e}");
    assert_eq!(raw_score(c, a, "m"), before);

    // A missing board is created desc by its first write, as without options.
    let f = "pts:{fresh}";
    assert_eq!(ok(c, &["RANK.SET", f, "m", "5", "BEST"]), kept(5, true));
    assert_eq!(ok(c, &["RANK.SET", f, "m", "4", "BEST"]), kept(5, false));
    assert_eq!(
        get(c, &layout_key(f)).as_deref(),
        Some(&b"v1 s -1073741824 1073741823"[..])
    );
    // A refused conditional write on a missing board creates nothing.
    let e = err(c, &["RANK.SET", "pts:{none}", "m", "1073741824", "BEST"]);
    assert!(e.starts_with("ERR score"), "{e}");
    assert!(!exists(c, b"pts:{none}") && !exists(c, &layout_key("pts:{none}")));
}

#[test]
fn set_and_create_options_are_checked() {
    let s = Server::start();
    let c = &mut s.conn();
    let k = "opt:{a}";
    ok(c, &["RANK.SET", k, "m", "5"]);
    let before = raw_score(c, k, "m");
    for (args, want) in [
        (
            &["RANK.SET", k, "m", "9", "GT", "LT"][..],
            "ERR GT and LT options at the same time are not compatible",
        ),
        (
            &["RANK.SET", k, "m", "9", "lt", "AT", "1700000000", "gt"],
            "ERR GT and LT options at the same time are not compatible",
        ),
        (
            &["RANK.SET", k, "m", "9", "BEST", "GT"],
            "ERR BEST and GT/LT options at the same time are not compatible",
        ),
        (
            &["RANK.SET", k, "m", "9", "LT", "BEST"],
            "ERR BEST and GT/LT options at the same time are not compatible",
        ),
        (
            &["RANK.SET", k, "m", "9", "NX"],
            "ERR syntax error at 'NX': expected GT, LT, BEST or AT t",
        ),
        (
            &["RANK.SET", k, "m", "9", "GT", "AT", "1700000000", "GT", "X"],
            "ERR syntax error at 'X': expected GT, LT, BEST or AT t",
        ),
        (
            &["RANK.SET", k, "m", "9", "BEST", "WITHTIME"],
            "ERR syntax error at 'WITHTIME'",
        ),
        (
            &["RANK.SET", k, "m", "9", "GT", "AT"],
            "ERR AT needs a value",
        ),
        (
            &["RANK.SET", k, "m", "x", "GT"],
            "ERR score is not an integer",
        ),
        (
            &["RANK.INCR", k, "m", "1", "GT"],
            "ERR syntax error: expected AT t",
        ),
        (
            &["RANK.CREATE", "opt:{b}", "ORDER", "up"],
            "ERR ORDER must be asc or desc",
        ),
        (
            &["RANK.CREATE", "opt:{b}", "ORDER"],
            "ERR ORDER needs a value",
        ),
        (
            &["RANK.CREATE", "opt:{b}", "ORDER", "asc", "BEST"],
            "ERR syntax error at 'BEST'",
        ),
        (
            &["RANK.CREATE", k, "ORDER", "asc"],
            "ERR board already exists",
        ),
    ] {
        let e = err(c, args);
        assert!(e.starts_with(want), "{args:?}: {e}");
    }
    assert_eq!(raw_score(c, k, "m"), before);
    assert!(!exists(c, b"opt:{b}") && !exists(c, &layout_key("opt:{b}")));
    let e = err(c, &["RANK.DROP"]);
    assert!(e.contains("wrong number of arguments"), "{e}");
    let e = err(c, &["RANK.DROP", k, "extra"]);
    assert!(e.contains("wrong number of arguments"), "{e}");
    // ORDER with the other options, in any order.
    assert_eq!(
        ok(
            c,
            &[
                "RANK.CREATE",
                "opt:{c}",
                "ORDER",
                "asc",
                "MAX",
                "9",
                "MIN",
                "-9",
                "RESOLUTION",
                "ms"
            ]
        ),
        Value::Okay
    );
    assert_eq!(
        get(c, &layout_key("opt:{c}")).as_deref(),
        Some(&b"v1 ms -9 9 asc"[..])
    );
}

#[test]
fn drop_deletes_a_board_and_its_layout_only() {
    let s = Server::start();
    let c = &mut s.conn();
    let k = "lb:{d}";
    ok(c, &["RANK.CREATE", k, "ORDER", "asc"]);
    ok(c, &["RANK.SET", k, "a", "1"]);
    ok(c, &["RANK.SET", k, "b", "2"]);
    ok(c, &["SET", "lb:{d}:other", "x"]); // shares the prefix: not RANK's
    assert_eq!(ok(c, &["RANK.DROP", k]), int(2));
    assert!(!exists(c, k.as_bytes()) && !exists(c, &layout_key(k)));
    assert!(exists(c, b"lb:{d}:other"));
    assert_eq!(ok(c, &["RANK.DROP", k]), int(0));
    assert_eq!(ok(c, &["RANK.CARD", k]), int(0));
    // Gone for good: it can be created again with another order.
    assert_eq!(ok(c, &["RANK.CREATE", k, "ORDER", "desc"]), Value::Okay);
    ok(c, &["RANK.SET", k, "a", "1"]);
    ok(c, &["RANK.SET", k, "b", "2"]);
    assert_eq!(ok(c, &["RANK.RANGE", k, "0", "-1"]), members(&["b", "a"]));
    // A board emptied by RANK.REM still has its layout: 1 key.
    ok(c, &["RANK.REM", k, "a", "b"]);
    assert_eq!(ok(c, &["RANK.DROP", k]), int(1));
    // A board made by its first write, and an untagged one.
    ok(c, &["RANK.INCR", "lb:plain", "m", "3"]);
    assert_eq!(ok(c, &["RANK.DROP", "lb:plain"]), int(2));
    assert!(!exists(c, &layout_key("lb:plain")));
    // A missing board.
    assert_eq!(ok(c, &["RANK.DROP", "lb:{never}"]), int(0));
    // A plain ZSET RANK did not make is refused and kept.
    ok(c, &["ZADD", "z:{p}", "1", "a"]);
    let e = err(c, &["RANK.DROP", "z:{p}"]);
    assert!(e.starts_with("ERR board identity missing:"), "{e}");
    assert_eq!(e, err(c, &["RANK.CARD", "z:{p}"]));
    assert_eq!(ok(c, &["ZCARD", "z:{p}"]), int(1));
    // Other types: WRONGTYPE, nothing deleted.
    ok(c, &["SET", "s:{p}", "x"]);
    let e = err(c, &["RANK.DROP", "s:{p}"]);
    assert!(e.starts_with("WRONGTYPE"), "{e}");
    ok(c, &["RANK.CREATE", "w:{p}"]);
    ok(c, &["DEL", "w:{p}"]);
    ok(c, &["SET", "w:{p}", "x"]);
    let e = err(c, &["RANK.DROP", "w:{p}"]);
    assert!(e.starts_with("WRONGTYPE"), "{e}");
    assert!(exists(c, b"s:{p}") && exists(c, b"w:{p}") && exists(c, &layout_key("w:{p}")));
    // A bad board key.
    let e = err(c, &["RANK.DROP", "a}b"]);
    assert!(e.starts_with("ERR board key"), "{e}");
    // Inside MULTI/EXEC, with the board re-made in the same transaction.
    ok(c, &["RANK.SET", k, "a", "1"]);
    let r: Vec<Value> = redis::pipe()
        .atomic()
        .cmd("RANK.DROP")
        .arg(k)
        .cmd("RANK.CREATE")
        .arg(k)
        .arg("ORDER")
        .arg("asc")
        .cmd("RANK.SET")
        .arg(k)
        .arg("a")
        .arg(5)
        .query(c)
        .expect("MULTI/EXEC");
    assert_eq!(r, vec![int(2), Value::Okay, int(5)]);
    assert_eq!(
        get(c, &layout_key(k)).as_deref(),
        Some(&b"v1 s -1073741824 1073741823 asc"[..])
    );
    // It only deletes: allowed under maxmemory, where writes are refused
    // (its COMMAND INFO flags are checked in tests/acl.rs).
    ok(c, &["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
    ok(c, &["CONFIG", "SET", "maxmemory", "1"]);
    let e = err(c, &["RANK.SET", k, "b", "1", "BEST"]);
    assert!(e.starts_with("OOM"), "{e}");
    assert_eq!(ok(c, &["RANK.DROP", k]), int(2));
    ok(c, &["CONFIG", "SET", "maxmemory", "0"]);
}

#[test]
fn drop_needs_write_access_to_every_key_of_the_board() {
    let s = Server::start();
    let c = &mut s.conn();
    let k = "lb:{acl}";
    ok(c, &["RANK.CREATE", k, "ORDER", "asc"]);
    ok(c, &["RANK.SET", k, "a", "1"]);
    for (user, pattern) in [
        ("other", "~lb:{other}*"),  // not the board: refused by the server
        ("keyonly", "~lb:{acl}"),   // the board key only: refused by the module
        ("reader", "%R~lb:{acl}*"), // read only
    ] {
        ok(
            c,
            &[
                "ACL",
                "SETUSER",
                user,
                "on",
                ">pw",
                "+@all",
                "resetkeys",
                pattern,
            ],
        );
        let uc = &mut s.conn_as(user, "pw");
        let e = err(uc, &["RANK.DROP", k]);
        assert!(e.starts_with("NOPERM"), "{user}: {e}");
        assert_eq!(ok(c, &["RANK.CARD", k]), int(1), "{user}");
        assert!(exists(c, &layout_key(k)), "{user}");
    }
    ok(
        c,
        &[
            "ACL",
            "SETUSER",
            "owner",
            "on",
            ">pw",
            "+@all",
            "resetkeys",
            "~lb:{acl}*",
        ],
    );
    let uc = &mut s.conn_as("owner", "pw");
    assert_eq!(ok(uc, &["RANK.DROP", k]), int(2));
}
