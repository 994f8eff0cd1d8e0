//! Integration tests of periodic boards, continued from tests/rank_period.rs:
//! effects replication to a replica without the module, cluster slots and
//! ACL of period boards, RANK.SET GT/LT/BEST on every board, and RANK.DROP of
//! the period boards.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::*;
#[path = "common/period.rs"]
mod period;
#[path = "common/rank_client.rs"]
mod rank_client;
use hotrank::keys::{self, Kind};
use hotrank::rank::period::DAY_MS;
use period::*;
use redis::{Connection, Value};

/// A master with the module, and a replica of it without the module whose
/// link is up.
fn pair() -> (Server, Server) {
    let master = Server::start();
    let port = master.port.to_string();
    let replica = Server::start_with(&["--replicaof", "127.0.0.1", port.as_str()], false);
    wait_link_up(&replica);
    (master, replica)
}

#[test]
fn a_replica_without_the_module_ends_identical() {
    let (master, replica) = pair();
    let (m, r) = (&mut master.conn(), &mut replica.conn());
    ok(
        m,
        &words("RANK.CREATE lb:{g} PERIODS day week month TZ -14:00"),
    );
    ok(
        m,
        &words("RANK.CREATE lb2 RESOLUTION ms MIN 0 MAX 100 PERIODS week KEEP 0"),
    );
    let now = now_ms();
    for i in 0..50i64 {
        let member = format!("m{}", i % 7);
        let t = now - (i * 7 % 40) * DAY_MS / 3;
        incr_at(m, "lb:{g}", &member, i % 5 - 1, t);
        let score = (i % 100).to_string();
        ok(m, &["RANK.SET", "lb2", &member, &score, "AT", &at(t)]);
        if i % 10 == 0 {
            ok(m, &["RANK.MINCR", "lb:{g}", "3", "m1", "m2", "m1"]);
            ok(m, &["RANK.MINCR", "lb2", "1", "m3"]);
        }
    }
    // Refused writes replicate nothing.
    let _ = err(m, &["RANK.INCR", "lb2", "m1", "1000"]);
    let acked: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(m).expect("WAIT");
    assert_eq!(acked, 1);
    let mut mk: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(m).expect("KEYS");
    let mut rk: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(r).expect("KEYS");
    mk.sort();
    rk.sort();
    assert_eq!(mk, rk);
    let periods = mk
        .iter()
        .filter(|k| k.windows(7).any(|w| w == b"period:"))
        .count();
    assert!(periods >= 5, "{periods} period boards");
    for k in &mk {
        for cmd in [&b"TYPE"[..], b"PEXPIRETIME", b"DUMP"] {
            let a: Value = bcmd(&[cmd, k]).query(m).expect("master");
            let b: Value = bcmd(&[cmd, k]).query(r).expect("replica");
            assert_eq!(
                a,
                b,
                "{} of {:?}",
                String::from_utf8_lossy(cmd),
                String::from_utf8_lossy(k)
            );
        }
        let is_period = k.windows(7).any(|w| w == b"period:");
        assert_eq!(
            pexpiretime(m, k) > 0,
            is_period,
            "{:?}",
            String::from_utf8_lossy(k)
        );
    }
}

// ---------------------------------------------------------------- ACL, slots

#[test]
fn period_boards_share_the_board_slot_and_acl() {
    for board in ["lb", "lb:{game}", "{x}y"] {
        for id in ["d2026-11-23", "w2026-W48", "m2026-11"] {
            let k = pkey(board, id);
            assert!(k.starts_with(board.as_bytes()));
            assert_eq!(keys::slot(&k), keys::slot(board.as_bytes()), "{board} {id}");
        }
    }
    let (s, mut c) = with_board("RANK.CREATE lb PERIODS day week");
    let c = &mut c;
    ok(c, &["RANK.INCR", "lb", "a", "1"]);
    let layout = keys::derived(b"lb", Kind::Layout, &[]);
    // alice: the board and its layout, but not its period boards.
    // (An ACL pattern cannot hold the zero byte: `?` matches it.)
    assert_eq!(layout, b"lb\0{lb}layout");
    ok(
        c,
        &words("ACL SETUSER alice on nopass +@all ~lb ~lb?{lb}layout"),
    );
    // bob: other keys only. carol: read-only on lb*.
    ok(c, &words("ACL SETUSER bob on nopass +@all ~other*"));
    ok(c, &words("ACL SETUSER carol on nopass +@all %R~lb*"));
    let snapshot = |c: &mut Connection| -> Vec<(String, i64)> {
        let mut v: Vec<(String, i64)> = Vec::new();
        for p in ["", "day", "week"] {
            let mut args = vec!["RANK.RANGE", "lb", "0", "-1", "WITHSCORES"];
            if !p.is_empty() {
                args.extend(["PERIOD", p]);
            }
            let r: Vec<(String, i64)> = redis::cmd(args[0])
                .arg(&args[1..])
                .query(c)
                .expect("RANK.RANGE");
            v.extend(r.into_iter().map(|(m, s)| (format!("{p}:{m}"), s)));
        }
        v
    };
    let before = snapshot(c);
    for user in ["alice", "bob", "carol"] {
        let u = &mut s.conn();
        ok(u, &["AUTH", user, "x"]);
        for args in [
            &["RANK.INCR", "lb", "a", "5"][..],
            &["RANK.SET", "lb", "b", "5"],
            &["RANK.MINCR", "lb", "5", "a", "c"],
        ] {
            let e = err(u, args);
            assert!(e.starts_with("NOPERM"), "{user} {args:?}: {e}");
        }
        let read = q(u, &["RANK.SCORE", "lb", "a", "PERIOD", "day"]);
        match user {
            "carol" => assert_eq!(read.expect("carol reads"), int(1)),
            _ => assert!(read.is_err_and(|e| e.code() == Some("NOPERM")), "{user}"),
        }
    }
    assert_eq!(snapshot(c), before);
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "a", "PERIOD", "week"]), int(1));
}

// ---------------------------------------------------------------- with ORDER, GT/LT/BEST, DROP

#[test]
fn set_gt_lt_best_apply_to_each_board_separately() {
    let (_s, mut c) = with_board("RANK.CREATE lb PERIODS day month");
    let c = &mut c;
    let now = now_ms();
    let last_month = in_last_month(now);
    let kept = |s: i64, w: i64| arr(vec![int(s), int(w)]);
    assert_eq!(
        ok(c, &["RANK.SET", "lb", "a", "50", "AT", &at(last_month)]),
        int(50)
    );
    // GT 20: not higher than the all-time 50, but a itself is new to this
    // month's and today's boards: written there. The reply is the all-time board's.
    assert_eq!(ok(c, &["RANK.SET", "lb", "a", "20", "GT"]), kept(50, 0));
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "a"]), int(50));
    for p in ["day", "month"] {
        assert_eq!(ok(c, &["RANK.SCORE", "lb", "a", "PERIOD", p]), int(20));
    }
    assert_eq!(
        ok(c, &["RANK.SCORE", "lb", "a", "PERIOD", "month", "AGO", "1"]),
        int(50)
    );
    assert_eq!(ok(c, &["RANK.SET", "lb", "a", "30", "GT"]), kept(50, 0));
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "a", "PERIOD", "day"]), int(30));
    assert_eq!(ok(c, &["RANK.SET", "lb", "a", "10", "GT"]), kept(50, 0));
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "a", "PERIOD", "day"]), int(30));
    // LT 25: lower everywhere.
    assert_eq!(ok(c, &["RANK.SET", "lb", "a", "25", "LT"]), kept(25, 1));
    for p in ["day", "month"] {
        assert_eq!(ok(c, &["RANK.SCORE", "lb", "a", "PERIOD", p]), int(25));
    }
    assert_eq!(
        ok(c, &["RANK.SCORE", "lb", "a", "PERIOD", "month", "AGO", "1"]),
        int(50)
    );
    // BEST on an asc board (lowest first): LT on every board, period boards
    // packed in the same order.
    ok(c, &words("RANK.CREATE golf ORDER asc PERIODS week"));
    assert_eq!(ok(c, &["RANK.SET", "golf", "p", "72", "BEST"]), kept(72, 1));
    assert_eq!(ok(c, &["RANK.SET", "golf", "p", "75", "BEST"]), kept(72, 0));
    assert_eq!(ok(c, &["RANK.SET", "golf", "q", "70", "BEST"]), kept(70, 1));
    assert_eq!(
        ok(c, &["RANK.SCORE", "golf", "p", "PERIOD", "week"]),
        int(72)
    );
    assert_eq!(
        ok(c, &words("RANK.RANGE golf 0 -1 WITHSCORES PERIOD week")),
        ranged(&[("q", 70), ("p", 72)])
    );
    assert_eq!(
        ok(c, &["RANK.RANK", "golf", "p", "TIES", "PERIOD", "week"]),
        int(1)
    );
    // An out-of-range score is refused even where it would not be written.
    ok(c, &words("RANK.CREATE small MIN 0 MAX 10 PERIODS day"));
    assert!(
        err(c, &["RANK.SET", "small", "a", "11", "GT"]).starts_with("ERR score 11 is out of range")
    );
}

#[test]
fn drop_deletes_the_period_boards() {
    let (s, mut c) = with_board("RANK.CREATE lb PERIODS day week month KEEP 3 TZ -14:00");
    let c = &mut c;
    ok(c, &["RANK.CREATE", "other", "PERIODS", "day"]);
    ok(c, &["RANK.INCR", "other", "a", "1"]);
    let now = now_ms();
    for back in [0, 1, 2, 3, 4, 9, 20, 40, 80] {
        incr_at(c, "lb", "a", 1, now - back * DAY_MS);
    }
    let all: Vec<Vec<u8>> = redis::cmd("KEYS").arg("lb*").query(c).expect("KEYS");
    assert!(all.len() > 10, "{}", all.len());
    // A user who may not write the period boards deletes nothing.
    ok(
        c,
        &words("ACL SETUSER alice on nopass +@all ~lb ~lb?{lb}layout"),
    );
    let u = &mut s.conn();
    ok(u, &["AUTH", "alice", "x"]);
    assert!(err(u, &["RANK.DROP", "lb"]).starts_with("NOPERM"));
    let again: Vec<Vec<u8>> = redis::cmd("KEYS").arg("lb*").query(c).expect("KEYS");
    assert_eq!(again.len(), all.len());
    assert_eq!(ok(c, &["RANK.DROP", "lb"]), int(all.len() as i64));
    let left: Vec<Vec<u8>> = redis::cmd("KEYS").arg("lb*").query(c).expect("KEYS");
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(ok(c, &["RANK.CARD", "other", "PERIOD", "day"]), int(1));
    assert_eq!(ok(c, &["RANK.DROP", "lb"]), int(0));
}
