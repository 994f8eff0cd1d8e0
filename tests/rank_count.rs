//! RANK.COUNT (members ranked ahead of a score, a time and a member name) and
//! RANK.RANGE … WITHTIME, against a real server: what a sharded leaderboard
//! (clients/python `ShardedLeaderboard`) needs for exact global ranks.
//!
//! - On one board, `RANK.COUNT K s TIME t MEMBER m` with a member's own
//!   score and time equals RANK.RANK, and `RANK.COUNT K s` equals RANK.RANK
//!   … TIES, on desc and asc boards, with ties of score and of time.
//! - Summed over 5 shards fed a split of the same writes, it equals RANK.RANK
//!   on one unsharded board for every member.
//! - Scores past the ends of the layout, times outside it, a missing board,
//!   PERIOD, and the errors.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
#[path = "common/rank_client.rs"]
mod rank_client;
use rank_client::*;
use redis::{Connection, Value};

fn count(c: &mut Connection, args: &[&str]) -> i64 {
    let mut full = vec!["RANK.COUNT"];
    full.extend_from_slice(args);
    match ok(c, &full) {
        Value::Int(n) => n,
        v => panic!("RANK.COUNT {args:?}: {v:?}"),
    }
}

fn opt_int(c: &mut Connection, args: &[&str]) -> Option<i64> {
    match ok(c, args) {
        Value::Int(n) => Some(n),
        Value::Nil => None,
        v => panic!("{args:?}: {v:?}"),
    }
}

/// `(score, time text)` of RANK.SCORE … WITHTIME.
fn score_time(c: &mut Connection, k: &str, m: &str) -> (i64, String) {
    match ok(c, &["RANK.SCORE", k, m, "WITHTIME"]) {
        Value::Array(v) => match (&v[0], &v[1]) {
            (Value::Int(s), Value::BulkString(t)) => (*s, String::from_utf8(t.clone()).unwrap()),
            other => panic!("{other:?}"),
        },
        v => panic!("{v:?}"),
    }
}

/// A small deterministic generator (xorshift), so failures repeat.
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn sums_over_shards_equal_the_rank_on_one_board_desc_and_asc() {
    let s = Server::start();
    let c = &mut s.conn();
    let t0 = now_s() - 10_000;
    for order in ["desc", "asc"] {
        let one = format!("lb:{{one-{order}}}");
        let shards: Vec<String> = (0..5)
            .map(|i| format!("lb:{{sh-{order}:{i:02}}}"))
            .collect();
        for k in shards.iter().chain([&one]) {
            ok(c, &["RANK.CREATE", k, "RESOLUTION", "ms", "ORDER", order]);
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut members = Vec::new();
        for _ in 0..600 {
            let m = format!("m{}", rng.next(400));
            // Few scores and few times: many ties of score, and of score and time.
            let score = (rng.next(12) as i64).to_string();
            let at = format!("{}.{:03}", t0 + rng.next(3) as i64, rng.next(2) * 500);
            // A member always goes to the same shard (by its name).
            let home = &shards[m.bytes().map(|b| b as usize).sum::<usize>() % 5];
            ok(c, &["RANK.SET", home, &m, &score, "AT", &at]);
            ok(c, &["RANK.SET", &one, &m, &score, "AT", &at]);
            members.push(m);
        }
        members.sort();
        members.dedup();
        for m in &members {
            let home = &shards[m.bytes().map(|b| b as usize).sum::<usize>() % 5];
            let (score, time) = score_time(c, home, m);
            assert_eq!(score_time(c, &one, m), (score, time.clone()));
            let sc = score.to_string();
            let rank = opt_int(c, &["RANK.RANK", &one, m]).unwrap();
            let ties = opt_int(c, &["RANK.RANK", &one, m, "TIES"]).unwrap();
            // On its own board: RANK.RANK and RANK.RANK … TIES.
            assert_eq!(
                count(c, &[home, &sc, "TIME", &time, "MEMBER", m]),
                opt_int(c, &["RANK.RANK", home, m]).unwrap()
            );
            assert_eq!(
                count(c, &[home, &sc]),
                opt_int(c, &["RANK.RANK", home, m, "TIES"]).unwrap()
            );
            // Over the shards: the rank on the unsharded board.
            let sum: i64 = shards
                .iter()
                .map(|k| count(c, &[k, &sc, "TIME", &time, "MEMBER", m]))
                .sum();
            assert_eq!(sum, rank, "{order} {m}");
            let sum_ties: i64 = shards.iter().map(|k| count(c, &[k, &sc])).sum();
            assert_eq!(sum_ties, ties, "{order} {m} TIES");
            // TIME without MEMBER: the first place among equal (score, time).
            let first: i64 = shards
                .iter()
                .map(|k| count(c, &[k, &sc, "TIME", &time]))
                .sum();
            assert!(first <= rank && first >= ties, "{order} {m}");
        }
        // WITHTIME gives each member's time, as RANK.SCORE … WITHTIME does.
        let all = match ok(
            c,
            &["RANK.RANGE", &one, "0", "-1", "WITHSCORES", "WITHTIME"],
        ) {
            Value::Array(v) => v,
            v => panic!("{v:?}"),
        };
        assert_eq!(all.len(), members.len() * 3);
        for triple in all.chunks(3) {
            let (Value::BulkString(m), Value::Int(sc), Value::BulkString(t)) =
                (&triple[0], &triple[1], &triple[2])
            else {
                panic!("{triple:?}")
            };
            let m = String::from_utf8(m.clone()).unwrap();
            assert_eq!(
                score_time(c, &one, &m),
                (*sc, String::from_utf8(t.clone()).unwrap())
            );
        }
        let times_only = ok(c, &["RANK.RANGE", &one, "0", "0", "WITHTIME"]);
        assert_eq!(times_only, arr(vec![all[0].clone(), all[2].clone()]));
    }
}

#[test]
fn ends_of_the_layout_missing_boards_periods_and_errors() {
    let s = Server::start();
    let c = &mut s.conn();
    let t = now_s() - 1000;
    let k = "lb:{ends}";
    ok(
        c,
        &["RANK.CREATE", k, "MIN", "0", "MAX", "100", "PERIODS", "day"],
    );
    for (m, sc) in [("a", "10"), ("b", "20"), ("c", "20"), ("d", "30")] {
        ok(c, &["RANK.SET", k, m, sc, "AT", &t.to_string()]);
    }
    assert_eq!(count(c, &[k, "1000"]), 0, "better than the best end");
    assert_eq!(count(c, &[k, "-5"]), 4, "worse than the worst end");
    assert_eq!(count(c, &[k, "20"]), 1);
    assert_eq!(
        count(c, &[k, "20", "TIME", "0"]),
        1,
        "before the layout's epoch"
    );
    assert_eq!(count(c, &[k, "20", "TIME", &t.to_string()]), 1);
    assert_eq!(
        count(c, &[k, "20", "TIME", &t.to_string(), "MEMBER", "bb"]),
        2
    );
    assert_eq!(
        count(c, &[k, "20", "TIME", &t.to_string(), "MEMBER", "zz"]),
        3
    );
    assert_eq!(count(c, &[k, "20", "TIME", &(t + 1).to_string()]), 3);
    assert_eq!(
        count(c, &[k, "20", "TIME", "9999999999"]),
        3,
        "after the layout's end"
    );
    // The day board holds the same writes (t is within a day or two of now).
    let day = count(c, &[k, "20", "PERIOD", "day", "AGO", "0"])
        + count(c, &[k, "20", "PERIOD", "day", "AGO", "1"]);
    assert_eq!(day, 1);
    assert_eq!(count(c, &[k, "20", "PERIOD", "day", "AGO", "500"]), 0);
    assert_eq!(
        count(
            c,
            &["lb:{missing}", "20", "TIME", "1700000000", "MEMBER", "x"]
        ),
        0
    );
    for (args, want) in [
        (vec![k, "x"], "ERR score is not an integer"),
        (vec![k, "1", "MEMBER", "a"], "ERR MEMBER needs TIME"),
        (vec![k, "1", "TIME", "soon"], "ERR TIME"),
        (vec![k, "1", "TIME"], "ERR"),
        (
            vec![k, "1", "WITHSCORES"],
            "ERR syntax error: expected TIME, MEMBER or PERIOD",
        ),
        (
            vec![k, "1", "PERIOD", "week"],
            "ERR board has no week period",
        ),
    ] {
        let mut full = vec!["RANK.COUNT"];
        full.extend_from_slice(&args);
        let e = err(c, &full);
        assert!(e.starts_with(want), "{args:?}: {e}");
    }
    assert!(err(c, &["RANK.COUNT", k]).contains("wrong number of arguments"));
    ok(c, &["SET", "plain", "x"]);
    assert!(err(c, &["RANK.COUNT", "plain", "1"]).starts_with("WRONGTYPE"));
    assert!(err(c, &["RANK.RANGE", k, "0", "1", "WITHTIMES"]).starts_with("ERR syntax error"));
}
