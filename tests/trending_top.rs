//! HOT.TOP BY trending without a key open per listed article (issue 32's
//! second cost target), against a real server: the walk opens an article's
//! PV counter only when its score at the server clock does not prove that
//! retention kept its counters (the board record's `trending-keep`, see
//! src/hot/trending.rs `expired_ceiling`). `INFO hotrank`'s
//! `top_trending_checks` counts the articles looked up.
//!
//! - a live board lists its articles with no lookup;
//! - retention lowered by HOT.ALTER then raised again: an article viewed
//!   under the short retention whose counters expired is not listed (the
//!   board's `keep` is the smallest over its views, not the retention now);
//! - a board whose activity is all old (by the clock or by `AT`) checks
//!   every article it lists: the fallback path;
//! - a record without `trending-keep` (written before it existed) and a
//!   `maxmemory-policy` that may evict check every article;
//! - a replica (`effects` without the module, `commands` with it) and an
//!   AOF replay after `kill -9` hold the master's record bytes and DEBUG
//!   DIGEST.
//!
//! Expiry by the clock without waiting: the boards whose counters must
//! have expired are loaded from an AOF of `commands`-mode commands whose
//! `CLOCK` is hours before the server's, the AOF a master would have
//! written then. Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::node::Node;
use common::repl::{aof_master_and_replica, digest, ok, ts, wait_replica, AOF_ALWAYS};
use common::*;
use redis::{Connection, Value};

const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;

/// The board record of board `b`.
fn record(c: &mut Connection, b: &str) -> String {
    let mut k = b.as_bytes().to_vec();
    k.extend_from_slice(b"\0board");
    redis::cmd("GET").arg(k).query(c).expect("GET record")
}

/// The record's `trending-keep` (ms), if it has one.
fn keep_of(c: &mut Connection, b: &str) -> Option<i64> {
    record(c, b)
        .split(' ')
        .find_map(|f| f.strip_prefix("trending-keep="))
        .map(|v| v.parse().expect("trending-keep"))
}

/// `INFO hotrank`'s `top_trending_checks`.
fn checks(c: &mut Connection) -> i64 {
    let text: String = redis::cmd("INFO").arg("hotrank").query(c).expect("INFO");
    text.lines()
        .find_map(|l| l.strip_prefix("hotrank_top_trending_checks:"))
        .map(|v| v.trim().parse().expect("counter"))
        .expect("hotrank_top_trending_checks in INFO hotrank")
}

/// HOT.TOP BY trending's article ids (at the server clock, or `AT`).
fn top_names(c: &mut Connection, b: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["HOT.TOP", b, "BY", "trending"];
    args.extend_from_slice(extra);
    let Value::Array(a) = ok(c, &args) else {
        panic!("HOT.TOP reply")
    };
    a.iter().map(reply_text).collect()
}

/// The server's clock (ms).
fn server_ms(c: &mut Connection) -> i64 {
    let (s, us): (i64, i64) = redis::cmd("TIME").query(c).expect("TIME");
    s * 1000 + us / 1000
}

/// `cmd` in RESP, as an AOF holds it.
fn resp(cmd: &[&str]) -> String {
    let mut s = format!("*{}\r\n", cmd.len());
    for a in cmd {
        s.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s
}

/// A `commands`-mode view as the master replicates it: at its clock
/// `clock`, marked `KEEP` (the master marks the views that move the
/// record's `trending-keep`; on the others the mark changes nothing, since
/// the replica then computes the field the master kept).
fn view_at_clock(b: &str, article: &str, visitor: &str, clock: i64) -> String {
    resp(&[
        "HOT.VIEW",
        b,
        article,
        visitor,
        "CLOCK",
        &clock.to_string(),
        "KEEP",
    ])
}

/// A server loaded from the AOF `aof` (`commands`-mode commands).
fn load_aof(tag: &str, aof: &str) -> Node {
    let mut node = Node::new(tag);
    std::fs::write(node.dir.join("appendonly.aof"), aof).expect("write the AOF");
    node.start(&["--appendonly", "yes", "--enable-debug-command", "local"]);
    node
}

#[test]
fn a_live_board_lists_its_articles_without_looking_them_up() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{live}";
    ok(&mut c, &["HOT.CREATE", b, "TRENDING-HALF-LIFE", "6h"]);
    for (i, a) in ["a", "b", "c", "d"].iter().enumerate() {
        for v in 0..=i {
            ok(&mut c, &["HOT.VIEW", b, a, &format!("u{v}")]);
        }
    }
    // Views at the clock on a 90-day retention: each keeps the counters
    // 89 days (the refresh slack is a day).
    assert_eq!(keep_of(&mut c, b), Some(89 * DAY));
    let before = checks(&mut c);
    assert_eq!(top_names(&mut c, b, &[]), ["d", "c", "b", "a"]);
    assert_eq!(top_names(&mut c, b, &["LIMIT", "2", "WITHSCORES"]).len(), 4);
    assert_eq!(
        checks(&mut c),
        before,
        "a live board looked its articles up"
    );
    // Under a policy that may evict counters early, every article is checked.
    ok(&mut c, &["CONFIG", "SET", "maxmemory", "1gb"]);
    ok(
        &mut c,
        &["CONFIG", "SET", "maxmemory-policy", "volatile-lru"],
    );
    assert_eq!(top_names(&mut c, b, &[]), ["d", "c", "b", "a"]);
    assert_eq!(checks(&mut c), before + 4);
    ok(&mut c, &["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
    assert_eq!(top_names(&mut c, b, &[]), ["d", "c", "b", "a"]);
    assert_eq!(checks(&mut c), before + 4);
}

/// A record written before `trending-keep` existed checks every article,
/// and views do not start a `keep` on it (views before them are not
/// covered); trending added again starts one.
#[test]
fn a_record_without_keep_checks_every_article() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{old}";
    ok(&mut c, &["HOT.CREATE", b, "TRENDING-HALF-LIFE", "6h"]);
    ok(&mut c, &["HOT.VIEW", b, "a", "u1"]);
    ok(&mut c, &["HOT.VIEW", b, "b", "u1"]);
    ok(&mut c, &["HOT.VIEW", b, "b", "u2"]);
    let text = record(&mut c, b);
    let keep = format!(" trending-keep={}", 89 * DAY);
    assert!(text.ends_with(&keep), "{text}");
    let older = text.replace(&keep, "");
    let mut k = b.as_bytes().to_vec();
    k.extend_from_slice(b"\0board");
    let _: () = redis::cmd("SET")
        .arg(&k)
        .arg(&older)
        .query(&mut c)
        .expect("SET");
    let before = checks(&mut c);
    assert_eq!(top_names(&mut c, b, &[]), ["b", "a"]);
    assert_eq!(checks(&mut c), before + 2);
    ok(&mut c, &["HOT.VIEW", b, "a", "u2"]);
    ok(&mut c, &["HOT.VIEW", b, "c", "u1"]);
    assert_eq!(keep_of(&mut c, b), None, "{}", record(&mut c, b));
    ok(&mut c, &["HOT.ALTER", b, "TRENDING-HALF-LIFE", "0"]);
    ok(&mut c, &["HOT.ALTER", b, "TRENDING-HALF-LIFE", "6h"]);
    assert_eq!(keep_of(&mut c, b), None);
    ok(&mut c, &["HOT.VIEW", b, "c", "u2"]);
    assert_eq!(keep_of(&mut c, b), Some(89 * DAY));
}

/// Retention lowered to 4 hours by HOT.ALTER, an article viewed then, the
/// retention raised to 30 days again: five hours later that article's
/// counters have expired (it was viewed under the short retention), and
/// HOT.TOP BY trending does not list it, although the board's retention
/// now is 30 days and the first view of the board was under 30 days too.
/// An article viewed a minute ago is listed without a lookup; the others
/// score under the board's ceiling and are looked up.
#[test]
fn an_article_viewed_under_a_lowered_retention_is_not_listed_once_its_counters_expire() {
    let now = now_s() * 1000;
    let c0 = now - 5 * HOUR;
    let b = "hot:{ret}";
    let mut aof = resp(&["SELECT", "0"]);
    aof += &resp(&[
        "HOT.CREATE",
        b,
        "ID",
        &(c0 - 2 * HOUR).to_string(),
        "TRENDING-HALF-LIFE",
        "60",
        "RETENTION-SECONDS",
        "2592000",
    ]);
    aof += &view_at_clock(b, "early", "u1", c0 - HOUR);
    let alter = |secs: &str, clock: i64| {
        resp(&[
            "HOT.ALTER",
            b,
            "RETENTION-SECONDS",
            secs,
            "CLOCK",
            &clock.to_string(),
        ])
    };
    aof += &alter("14400", c0);
    for v in ["u1", "u2", "u3"] {
        aof += &view_at_clock(b, "old", v, c0);
    }
    aof += &alter("2592000", c0 + 1);
    aof += &view_at_clock(b, "new", "u1", now - MINUTE);
    let node = load_aof("trendtop-ret", &aof);
    let mut c = node.conn();
    // 4 hours less the 24-minute refresh slack, from `old`'s views.
    assert_eq!(keep_of(&mut c, b), Some(216 * MINUTE));
    assert!(server_ms(&mut c) > c0 + 4 * HOUR);
    // `old`'s counters expired with the retention it was viewed under.
    assert_eq!(ok(&mut c, &["HOT.STATS", b, "old"]), Value::Nil);
    let before = checks(&mut c);
    assert_eq!(top_names(&mut c, b, &[]), ["new", "early"]);
    // `new` scores about 1 at the clock: listed without a lookup; `old`
    // and `early` (2^-300 and 2^-360) are under 2^(163 - 216) and looked up.
    assert_eq!(checks(&mut c) - before, 2);
    // A query time just after `old`'s views (where it outscores `early`)
    // changes nothing: its counters are gone by the server clock, which
    // expiry goes by, and which decides what is looked up.
    let at = ts(c0 + MINUTE);
    assert_eq!(top_names(&mut c, b, &["AT", &at]), ["new", "early"]);
    assert_eq!(checks(&mut c) - before, 4);
}

/// A board whose activity is all old: by the clock (views replayed from an
/// AOF five hours before the server's clock, on a 4-hour retention) and by
/// `AT` (views at today's clock with `AT` in 2023). Every article it would
/// list scores under the ceiling: each is looked up, those whose counters
/// are gone are not listed, and the rest are.
#[test]
fn a_board_of_old_activity_looks_up_every_article_it_lists() {
    let now = now_s() * 1000;
    let c0 = now - 5 * HOUR;
    let b = "hot:{aged}";
    let mut aof = resp(&["SELECT", "0"]);
    aof += &resp(&[
        "HOT.CREATE",
        b,
        "ID",
        &(c0 - HOUR).to_string(),
        "TRENDING-HALF-LIFE",
        "60",
        "RETENTION-SECONDS",
        "14400",
    ]);
    for (a, visitors, clock) in [
        ("gone1", 4, c0),
        ("gone2", 3, c0 + MINUTE),
        ("kept1", 1, now - 3 * HOUR),
        ("kept2", 3, now - 3 * HOUR - MINUTE),
    ] {
        for v in 0..visitors {
            aof += &view_at_clock(b, a, &format!("u{v}"), clock);
        }
    }
    let node = load_aof("trendtop-aged", &aof);
    let mut c = node.conn();
    assert_eq!(keep_of(&mut c, b), Some(216 * MINUTE));
    let before = checks(&mut c);
    assert_eq!(top_names(&mut c, b, &[]), ["kept2", "kept1"]);
    assert_eq!(checks(&mut c) - before, 4);
    // The walk stops after the first: one more lookup.
    assert_eq!(top_names(&mut c, b, &["LIMIT", "1"]), ["kept2"]);
    assert_eq!(checks(&mut c) - before, 5);

    // Old by `AT`: views now, at times in 2023, on a 90-day retention.
    let b = "hot:{at}";
    ok(&mut c, &["HOT.CREATE", b, "TRENDING-HALF-LIFE", "1h"]);
    let t0 = 1_700_000_000;
    for (a, visitors) in [("x", 3), ("y", 2), ("z", 1)] {
        for v in 0..visitors {
            let at = t0.to_string();
            ok(&mut c, &["HOT.VIEW", b, a, &format!("u{v}"), "AT", &at]);
        }
    }
    // A client deleting `x`'s counters: looked up, not listed.
    let keys: Vec<Vec<u8>> = ["pv", "uv", "meta"]
        .iter()
        .map(|k| format!("{b}\0{k}:x").into_bytes())
        .collect();
    let _: i64 = redis::cmd("DEL").arg(&keys).query(&mut c).expect("DEL");
    let before = checks(&mut c);
    let at = (t0 + 10).to_string();
    assert_eq!(top_names(&mut c, b, &["AT", &at]), ["y", "z"]);
    assert_eq!(checks(&mut c) - before, 3);
}

/// The board record with `trending-keep` is the master's on a replica
/// without the module (`effects`: the record's `SET`), on one with it
/// (`commands`: recomputed from the master's `CLOCK`), and after an AOF
/// replay after `kill -9`, through retention changes and views with `AT`
/// in the past (each lowers `keep` by less than its age).
#[test]
fn replicas_and_an_aof_replay_hold_the_masters_keep() {
    for (mode, replica_module) in [("effects", false), ("commands", true)] {
        let (mut master, replica) =
            aof_master_and_replica(&format!("trendtop-{mode}"), mode, replica_module);
        let (mut m, mut r) = (master.conn(), replica.conn());
        let b = "hot:{det}";
        ok(&mut m, &["HOT.CREATE", b, "TRENDING-HALF-LIFE", "1h"]);
        let now = server_ms(&mut m);
        let mut keeps = Vec::new();
        for (i, (retention, age)) in [
            ("2592000", 3 * DAY),
            ("2592000", 2 * DAY + 17),
            ("86400", 5 * HOUR + 123),
            ("7776000", 40 * MINUTE),
            ("600", 0),
            ("7776000", 0),
        ]
        .iter()
        .enumerate()
        {
            ok(&mut m, &["HOT.ALTER", b, "RETENTION-SECONDS", retention]);
            for v in 0..3 {
                let (a, u) = (format!("art{}", (i + v) % 4), format!("u{i}-{v}"));
                ok(&mut m, &["HOT.VIEW", b, &a, &u, "AT", &ts(now - age)]);
            }
            keeps.push(keep_of(&mut m, b).expect("keep"));
        }
        // 30 days, then less: 1 day (slack 2.4 h) 5 h ago, and 10 minutes.
        assert_eq!(keeps[0], 29 * DAY + 3 * DAY, "{keeps:?}");
        assert!(keeps.windows(2).all(|w| w[1] <= w[0]), "{keeps:?}");
        // 1 day less its 2.4-hour slack, plus the view's age 5 h 0.123 s
        // rounded down to a minute.
        assert_eq!(keeps[2], 21 * HOUR + 36 * MINUTE + 5 * HOUR, "{keeps:?}");
        assert_eq!(keeps[4], 9 * MINUTE, "{keeps:?}");
        wait_replica(&mut m);
        let (text, dm) = (record(&mut m, b), digest(&mut m));
        assert_eq!(record(&mut r, b), text, "{mode} replica's record");
        assert_eq!(digest(&mut r), dm, "{mode} replica's DEBUG DIGEST");
        let top = top_names(&mut m, b, &[]);
        assert_eq!(top.len(), 4, "{top:?}");
        if replica_module {
            assert_eq!(top_names(&mut r, b, &[]), top, "{mode}: the replica's list");
        }
        drop(r);
        drop(replica);
        drop(m);
        master.kill9();
        master.start(&AOF_ALWAYS);
        let mut m = master.conn();
        assert_eq!(
            record(&mut m, b),
            text,
            "{mode}: record after the AOF replay"
        );
        assert_eq!(
            digest(&mut m),
            dm,
            "{mode}: DEBUG DIGEST after the AOF replay"
        );
        assert_eq!(top_names(&mut m, b, &[]), top);
    }
}
