//! The trending ranking of a HOT board (issue 32) through its commands,
//! against a real server:
//! - HOT.CREATE / HOT.ALTER `TRENDING-HALF-LIFE`: add, remove (deleting the
//!   trending ZSET), a refused change while it has data, the range, and
//!   nothing written on error; `hotrank.trending-half-life` for new boards;
//! - HOT.TOP BY trending: the order and WITHSCORES at two query times
//!   against Σ w·2^(−(q − t)/H) over the counted views, ties by article id,
//!   WINDOW;
//! - HOT.STATS, HOT.INFO and HOT.EXPORT fields; trimming to MAX-ARTICLES
//!   by stored sum; HOT.REM and HOT.DROP deleting from / the trending ZSET;
//!   COMMAND GETKEYS and ACL key patterns;
//! - a board without trending answers as before (no new field but HOT.INFO's
//!   `trending-half-life 0`, the same record text).
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::repl::ok;
use common::*;
use redis::{Connection, Value};

const T0: i64 = 1_700_000_000;

/// The trending ZSET of board `b` (`b\0tr`, see src/keys.rs).
fn tr(b: &str) -> Vec<u8> {
    let mut k = b.as_bytes().to_vec();
    k.extend_from_slice(b"\0tr");
    k
}

/// The board record of board `b`.
fn record(c: &mut Connection, b: &str) -> Option<String> {
    let mut k = b.as_bytes().to_vec();
    k.extend_from_slice(b"\0board");
    redis::cmd("GET").arg(k).query(c).expect("GET record")
}

fn zcard(c: &mut Connection, key: &[u8]) -> i64 {
    redis::cmd("ZCARD").arg(key).query(c).expect("ZCARD")
}

/// Field/value pairs of a flat RESP2 reply.
fn fields(v: &Value) -> Vec<(String, String)> {
    let Value::Array(a) = v else {
        panic!("not an array: {v:?}")
    };
    a.chunks(2)
        .map(|p| (reply_text(&p[0]), reply_text(&p[1])))
        .collect()
}

fn field(v: &Value, name: &str) -> Option<String> {
    fields(v)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

fn info(c: &mut Connection, b: &str) -> Value {
    ok(c, &["HOT.INFO", b])
}

fn view(c: &mut Connection, b: &str, article: &str, visitor: &str, at: i64) -> String {
    let at = at.to_string();
    let r = ok(c, &["HOT.VIEW", b, article, visitor, "AT", &at]);
    let Value::Array(a) = r else { panic!("{r:?}") };
    reply_text(&a[3])
}

fn top_trending(c: &mut Connection, b: &str, extra: &[&str]) -> Vec<(String, f64)> {
    let mut args = vec!["HOT.TOP", b, "BY", "trending", "WITHSCORES"];
    args.extend_from_slice(extra);
    let Value::Array(a) = ok(c, &args) else {
        panic!("HOT.TOP reply")
    };
    a.chunks(2)
        .map(|p| {
            let s: f64 = reply_text(&p[1]).parse().expect("score");
            (reply_text(&p[0]), s)
        })
        .collect()
}

/// Everything in the database: DUMP of every key.
fn snapshot(c: &mut Connection) -> Keyspace {
    keyspace(c)
}

#[test]
fn create_and_alter_add_remove_and_refuse_a_change() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{t}";
    ok(&mut c, &["HOT.CREATE", b, "TRENDING-HALF-LIFE", "6h"]);
    let i = info(&mut c, b);
    assert_eq!(field(&i, "trending-half-life").as_deref(), Some("21600"));
    assert_eq!(field(&i, "trending-landmark").as_deref(), Some("0"));
    assert_eq!(field(&i, "trending-articles").as_deref(), Some("0"));
    assert_eq!(view(&mut c, b, "a1", "u1", T0), "counted");
    let i = info(&mut c, b);
    // The landmark: the first counted view's time floored to whole 6 h.
    assert_eq!(
        field(&i, "trending-landmark"),
        Some((T0 / 21600 * 21600).to_string())
    );
    assert_eq!(zcard(&mut c, &tr(b)), 1);

    // A change with data is refused, and writes nothing.
    let before = snapshot(&mut c);
    assert_eq!(
        err(&mut c, &["HOT.ALTER", b, "TRENDING-HALF-LIFE", "12h"]),
        "ERR TRENDING-HALF-LIFE cannot change while the board has trending data: set it to 0 first, then to the new value"
    );
    // Nor with another setting given with it.
    err(
        &mut c,
        &["HOT.ALTER", b, "GAMMA", "1.2", "TRENDING-HALF-LIFE", "1h"],
    );
    assert_eq!(snapshot(&mut c), before);
    // The same half-life again changes nothing.
    ok(&mut c, &["HOT.ALTER", b, "TRENDING-HALF-LIFE", "21600"]);
    assert_eq!(snapshot(&mut c), before);

    // Removing deletes the trending ZSET, and the record loses the fields.
    ok(&mut c, &["HOT.ALTER", b, "TRENDING-HALF-LIFE", "0"]);
    assert_eq!(zcard(&mut c, &tr(b)), 0);
    let i = info(&mut c, b);
    assert_eq!(field(&i, "trending-half-life").as_deref(), Some("0"));
    assert_eq!(field(&i, "trending-landmark"), None);
    assert!(!record(&mut c, b).expect("record").contains("trending"));
    assert!(err(&mut c, &["HOT.TOP", b, "BY", "trending"]).contains("no trending ranking"));

    // Adding again starts empty, from that moment.
    ok(&mut c, &["HOT.ALTER", b, "TRENDING-HALF-LIFE", "1h"]);
    assert_eq!(top_trending(&mut c, b, &["AT", "1700000100"]), vec![]);
    let st = ok(&mut c, &["HOT.STATS", b, "a1", "AT", "1700000100"]);
    assert_eq!(field(&st, "trending").as_deref(), Some("0"));
    assert_eq!(view(&mut c, b, "a1", "u2", T0 + 3600), "counted");
    let got = top_trending(&mut c, b, &["AT", "1700003600"]);
    // Only the view since: 1 + 1.2 (a new visitor).
    assert_eq!(got.len(), 1);
    assert!((got[0].1 - 2.2).abs() < 1e-12, "{got:?}");

    // Removed and added in one command: the landmark starts afresh, and
    // the old sums go with it (they stayed, with no landmark, before).
    ok(
        &mut c,
        &[
            "HOT.ALTER",
            b,
            "TRENDING-HALF-LIFE",
            "0",
            "TRENDING-HALF-LIFE",
            "1h",
        ],
    );
    let i = info(&mut c, b);
    assert_eq!(field(&i, "trending-landmark").as_deref(), Some("0"));
    assert_eq!(field(&i, "trending-articles").as_deref(), Some("0"));
    assert_eq!(zcard(&mut c, &tr(b)), 0);
    // So another half-life is accepted at once.
    ok(&mut c, &["HOT.ALTER", b, "TRENDING-HALF-LIFE", "2h"]);
}

#[test]
fn bad_half_lives_are_refused_and_write_nothing() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{r}";
    for bad in [
        "59",
        "30s",
        "60.5",
        "315360001",
        "-60",
        "abc",
        "1.5m5",
        "0s",
        "",
    ] {
        let e = err(&mut c, &["HOT.CREATE", b, "TRENDING-HALF-LIFE", bad]);
        assert!(
            e.starts_with("ERR TRENDING-HALF-LIFE must be 0"),
            "{bad}: {e}"
        );
    }
    let n: i64 = redis::cmd("DBSIZE").query(&mut c).expect("DBSIZE");
    assert_eq!(n, 0);
    ok(&mut c, &["HOT.CREATE", b]);
    let before = snapshot(&mut c);
    for bad in ["59", "11y", "315360001"] {
        err(&mut c, &["HOT.ALTER", b, "TRENDING-HALF-LIFE", bad]);
    }
    assert_eq!(
        err(&mut c, &["HOT.ALTER", b, "TRENDING-HALF-LIFE"]),
        "ERR wrong number of arguments for 'hot.alter' command"
    );
    assert_eq!(snapshot(&mut c), before);
    for good in ["60", "1m", "315360000", "3650d", "0"] {
        ok(&mut c, &["HOT.ALTER", b, "TRENDING-HALF-LIFE", good]);
    }
    // The config: 0, or 60 to 315360000.
    for bad in ["59", "1", "315360001", "-1"] {
        assert!(q(
            &mut c,
            &["CONFIG", "SET", "hotrank.trending-half-life", bad]
        )
        .is_err());
    }
    config_set(&mut c, "hotrank.trending-half-life", "3600");
    // A board made by a first write takes the config of that moment.
    view(&mut c, "hot:{cfg}", "a", "u", T0);
    assert_eq!(
        field(&info(&mut c, "hot:{cfg}"), "trending-half-life").as_deref(),
        Some("3600")
    );
    config_set(&mut c, "hotrank.trending-half-life", "0");
    // An existing board keeps its own.
    assert_eq!(
        field(&info(&mut c, "hot:{cfg}"), "trending-half-life").as_deref(),
        Some("3600")
    );
}

/// Σ w·2^(−(q − t)/H) over an article's counted views `(t s, w)`.
fn reference(views: &[(i64, f64)], q: i64, h: i64) -> f64 {
    views
        .iter()
        .map(|(t, w)| w * 2f64.powf(-((q - t) as f64) / h as f64))
        .sum()
}

#[test]
fn by_trending_ranks_by_decayed_views_at_any_query_time() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{rank}";
    let h = 3600;
    ok(
        &mut c,
        &[
            "HOT.CREATE",
            b,
            "TRENDING-HALF-LIFE",
            "1h",
            "DEDUP-SECONDS",
            "600",
        ],
    );
    ok(&mut c, &["HOT.PUBLISH", b, "old", "1690000000"]);
    // (article, visitor, time): `old` gets a late burst, `new` an early
    // one, `b1`/`b2` identical views (a tie), one duplicate (`new`, u1).
    let views: &[(&str, &str, i64)] = &[
        ("new", "u1", T0),
        ("new", "u2", T0 + 300),
        ("new", "u1", T0 + 400),
        ("new", "u3", T0 + 900),
        ("b2", "u1", T0 + 1800),
        ("b1", "u1", T0 + 1800),
        ("b2", "u2", T0 + 2400),
        ("b1", "u2", T0 + 2400),
        ("old", "u1", T0 + 6000),
        ("old", "u2", T0 + 6600),
        ("old", "u1", T0 + 7000),
        ("old", "u4", T0 + 7100),
    ];
    let mut counted: std::collections::BTreeMap<&str, Vec<(i64, f64)>> = Default::default();
    let mut seen = std::collections::BTreeSet::new();
    for (a, v, t) in views {
        let status = view(&mut c, b, a, v, *t);
        if status == "counted" {
            // alpha, plus beta when the view brought a new visitor (the
            // UV estimate of a few visitors is exact).
            let w = if seen.insert((*a, *v)) { 2.2 } else { 1.0 };
            counted.entry(a).or_default().push((*t, w));
        }
    }
    assert_eq!(counted["new"].len(), 3, "the duplicate adds nothing");
    assert_eq!(
        counted["old"].len(),
        4,
        "a visitor back after the dedup window counts"
    );
    for q in [T0 + 7200, T0 + 30 * 3600] {
        let got = top_trending(&mut c, b, &["AT", &q.to_string()]);
        let mut want: Vec<(String, f64)> = counted
            .iter()
            .map(|(a, v)| (a.to_string(), reference(v, q, h)))
            .collect();
        want.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        let names: Vec<&str> = got.iter().map(|(a, _)| a.as_str()).collect();
        let want_names: Vec<&str> = want.iter().map(|(a, _)| a.as_str()).collect();
        assert_eq!(names, want_names, "at {q}");
        for ((a, g), (_, w)) in got.iter().zip(&want) {
            assert!(((g - w) / w).abs() < 1e-12, "{a} at {q}: {g} vs {w}");
        }
        // The tie is ordered by id.
        let i1 = names.iter().position(|a| *a == "b1");
        let i2 = names.iter().position(|a| *a == "b2");
        assert!(i1 < i2, "{names:?}");
        assert_eq!(got[i1.unwrap_or(0)].1, got[i2.unwrap_or(0)].1);
        // HOT.STATS gives the same score.
        let st = ok(&mut c, &["HOT.STATS", b, "old", "AT", &q.to_string()]);
        let old = got.iter().find(|(a, _)| a == "old").map(|x| x.1);
        assert_eq!(field(&st, "trending").and_then(|t| t.parse().ok()), old);
    }
    assert_eq!(
        top_trending(&mut c, b, &["AT", "1700007200"])[0].0,
        "old",
        "read most right now"
    );
    // LIMIT keeps the order; a limit inside a tie still breaks it by id.
    let q = (T0 + 7200).to_string();
    let all = top_trending(&mut c, b, &["AT", &q]);
    let pos = all.iter().position(|(a, _)| a == "b1").expect("b1");
    let lim = (pos + 1).to_string();
    let cut = top_trending(&mut c, b, &["LIMIT", &lim, "AT", &q]);
    assert_eq!(cut, all[..pos + 1].to_vec());
    // WINDOW filters by publish time: `old` was published long before.
    let w = top_trending(&mut c, b, &["WINDOW", "24h", "AT", &q]);
    assert!(w.iter().all(|(a, _)| a != "old"), "{w:?}");
    assert_eq!(w.len(), all.len() - 1);
    // BY hot is the default list.
    assert_eq!(
        ok(&mut c, &["HOT.TOP", b, "BY", "hot", "AT", &q]),
        ok(&mut c, &["HOT.TOP", b, "AT", &q])
    );
    assert!(
        err(&mut c, &["HOT.TOP", b, "BY", "cold"]).starts_with("ERR BY must be hot or trending")
    );
    assert!(err(&mut c, &["HOT.TOP", b, "BY"]).starts_with("ERR"));
}

#[test]
fn stats_info_and_export_show_trending() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{f}";
    ok(&mut c, &["HOT.CREATE", b]);
    view(&mut c, b, "before", "u1", T0);
    ok(&mut c, &["HOT.ALTER", b, "TRENDING-HALF-LIFE", "2h"]);
    view(&mut c, b, "after", "u1", T0 + 60);
    let q = (T0 + 7260).to_string();
    let st = ok(&mut c, &["HOT.STATS", b, "before", "AT", &q]);
    let names: Vec<String> = fields(&st).into_iter().map(|(k, _)| k).collect();
    assert_eq!(
        names,
        [
            "pv",
            "uv",
            "suspicious",
            "published_at",
            "score",
            "trending"
        ]
    );
    assert_eq!(field(&st, "trending").as_deref(), Some("0"));
    let st = ok(&mut c, &["HOT.STATS", b, "after", "AT", &q]);
    let t: f64 = field(&st, "trending")
        .expect("trending")
        .parse()
        .expect("f64");
    assert!((t - 1.1).abs() < 1e-12, "{t}");
    let i = info(&mut c, b);
    assert_eq!(field(&i, "trending-half-life").as_deref(), Some("7200"));
    assert_eq!(field(&i, "trending-articles").as_deref(), Some("1"));
    // HOT.EXPORT: `trending` after `score` in every row.
    let Value::Array(r) = ok(&mut c, &["HOT.EXPORT", b, "0", "COUNT", "10", "AT", &q]) else {
        panic!("export")
    };
    let Value::Array(rows) = &r[1] else {
        panic!("rows")
    };
    assert_eq!(rows.len(), 2);
    for row in rows {
        let Value::Array(row) = row else {
            panic!("row")
        };
        let f = fields(&row[1]);
        let keys: Vec<&str> = f.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "pv",
                "uv",
                "suspicious",
                "published_at",
                "score",
                "trending",
                "last_view"
            ]
        );
        let want = if reply_text(&row[0]) == "after" {
            "1.1"
        } else {
            "0"
        };
        let got: f64 = f[5].1.parse().expect("f64");
        assert!((got - want.parse::<f64>().expect("f64")).abs() < 1e-12);
    }
}

#[test]
fn a_board_without_trending_answers_as_before() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{plain}";
    ok(&mut c, &["HOT.CREATE", b]);
    view(&mut c, b, "a", "u1", T0);
    let st = ok(&mut c, &["HOT.STATS", b, "a", "AT", "1700003600"]);
    assert_eq!(
        reply_text(&st),
        "[pv 1 uv 1 suspicious 0 published_at 1700000000 score 0.4233901974057256]"
    );
    let ex = ok(&mut c, &["HOT.EXPORT", b, "0", "AT", "1700003600"]);
    assert_eq!(
        reply_text(&ex),
        "[0 [[a [pv 1 uv 1 suspicious 0 published_at 1700000000 score 0.4233901974057256 last_view 1700000000]]]]"
    );
    let i = info(&mut c, b);
    assert_eq!(field(&i, "trending-half-life").as_deref(), Some("0"));
    assert_eq!(field(&i, "trending-landmark"), None);
    assert_eq!(field(&i, "trending-articles"), None);
    // The record's text is as before trending existed.
    let rec = record(&mut c, b).expect("record");
    assert!(
        rec.ends_with(" max-articles=1000 retention-seconds=7776000"),
        "{rec}"
    );
    assert_eq!(zcard(&mut c, &tr(b)), 0);
    assert_eq!(
        err(&mut c, &["HOT.TOP", b, "BY", "trending"]),
        "ERR board has no trending ranking (HOT.ALTER key TRENDING-HALF-LIFE 6h adds one)"
    );
    // A missing board is empty, as for BY hot.
    assert_eq!(
        reply_text(&ok(&mut c, &["HOT.TOP", "hot:{none}", "BY", "trending"])),
        "[]"
    );
}

#[test]
fn trimming_keeps_the_highest_sums_and_the_counters() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{trim}";
    ok(
        &mut c,
        &[
            "HOT.CREATE",
            b,
            "TRENDING-HALF-LIFE",
            "1h",
            "MAX-ARTICLES",
            "2",
            "DEDUP-SECONDS",
            "0",
            "VISITOR-MAX-VIEWS",
            "0",
        ],
    );
    // 18 articles (max 2 + slack 16): article i has i + 1 visitors.
    for i in 0..18 {
        for v in 0..=i {
            view(&mut c, b, &format!("a{i:02}"), &format!("u{v}"), T0);
        }
    }
    assert_eq!(zcard(&mut c, &tr(b)), 18);
    // The 19th article triggers the trim: the two highest sums stay.
    view(&mut c, b, "z", "u0", T0);
    let left: Vec<String> = redis::cmd("ZRANGE")
        .arg(tr(b))
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .expect("ZRANGE");
    assert_eq!(left, ["a16", "a17"]);
    // Counters stay: a trimmed article keeps its PV.
    let st = ok(&mut c, &["HOT.STATS", b, "a03", "AT", "1700000000"]);
    assert_eq!(field(&st, "pv").as_deref(), Some("4"));
    assert_eq!(field(&st, "trending").as_deref(), Some("0"));
}

#[test]
fn rem_and_drop_delete_trending_data() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{d}";
    ok(&mut c, &["HOT.CREATE", b, "TRENDING-HALF-LIFE", "1h"]);
    view(&mut c, b, "a", "u1", T0);
    view(&mut c, b, "b", "u1", T0);
    assert_eq!(zcard(&mut c, &tr(b)), 2);
    ok(&mut c, &["HOT.REM", b, "a"]);
    assert_eq!(zcard(&mut c, &tr(b)), 1);
    let got = top_trending(&mut c, b, &["AT", "1700000000"]);
    assert_eq!(got.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(), ["b"]);
    ok(&mut c, &["HOT.DROP", b]);
    assert_eq!(zcard(&mut c, &tr(b)), 0);
    // A new board of the name starts without trending data.
    ok(&mut c, &["HOT.CREATE", b, "TRENDING-HALF-LIFE", "1h"]);
    assert_eq!(top_trending(&mut c, b, &["AT", "1700000000"]), vec![]);
}

#[test]
fn key_spec_and_acl_patterns_cover_the_trending_key() {
    let s = Server::start();
    let mut c = s.conn();
    let keys: Vec<String> = redis::cmd("COMMAND")
        .arg(&[
            "GETKEYS", "HOT.TOP", "hot:{a}", "BY", "trending", "LIMIT", "5",
        ])
        .query(&mut c)
        .expect("GETKEYS");
    assert_eq!(keys, ["hot:{a}"]);
    ok(
        &mut c,
        &["HOT.CREATE", "hot:{a}", "TRENDING-HALF-LIFE", "1h"],
    );
    ok(
        &mut c,
        &["HOT.CREATE", "hot:{b}", "TRENDING-HALF-LIFE", "1h"],
    );
    acl_setuser(&mut c, &["writer", "on", ">pw", "~hot:{a}*", "+@all"]);
    acl_setuser(&mut c, &["reader", "on", ">pw", "%R~hot:{a}*", "+@all"]);
    let mut w = s.conn_as("writer", "pw");
    view(&mut w, "hot:{a}", "x", "u1", T0);
    assert_eq!(
        top_trending(&mut w, "hot:{a}", &["AT", "1700000000"]).len(),
        1
    );
    ok(&mut w, &["HOT.ALTER", "hot:{a}", "TRENDING-HALF-LIFE", "0"]);
    ok(
        &mut w,
        &["HOT.ALTER", "hot:{a}", "TRENDING-HALF-LIFE", "1h"],
    );
    view(&mut w, "hot:{a}", "x", "u2", T0);
    assert!(err(&mut w, &["HOT.TOP", "hot:{b}", "BY", "trending"]).starts_with("NOPERM"));
    let mut r = s.conn_as("reader", "pw");
    assert_eq!(
        top_trending(&mut r, "hot:{a}", &["AT", "1700000000"]).len(),
        1
    );
    let st = ok(&mut r, &["HOT.STATS", "hot:{a}", "x", "AT", "1700000000"]);
    assert!(field(&st, "trending").is_some());
    assert!(err(
        &mut r,
        &["HOT.VIEW", "hot:{a}", "x", "u3", "AT", "1700000000"]
    )
    .starts_with("NOPERM"));
    // A user whose patterns cover every key of the board but the trending
    // ZSET cannot count a view on it: nothing is written.
    acl_setuser(
        &mut c,
        &[
            "partial",
            "on",
            ">pw",
            "~hot:{a}",
            "~hot:{a}?[^t]*",
            "+@all",
        ],
    );
    let before = snapshot(&mut c);
    let mut p = s.conn_as("partial", "pw");
    assert!(err(
        &mut p,
        &["HOT.VIEW", "hot:{a}", "y", "u9", "AT", "1700000000"]
    )
    .starts_with("NOPERM"));
    assert_eq!(snapshot(&mut c), before);
}

#[test]
fn retention_forgets_an_expired_article_from_the_trending_ranking() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{ret}";
    ok(&mut c, &["HOT.CREATE", b, "TRENDING-HALF-LIFE", "1h"]);
    // `x`: published long ago (the board's lowest hot score and its first
    // publish time) but read recently; `gone`: the lowest trending sum.
    ok(&mut c, &["HOT.PUBLISH", b, "x", "1699000000"]);
    for v in ["u1", "u2", "u3"] {
        view(&mut c, b, "gone", v, T0);
    }
    view(&mut c, b, "x", "u1", T0 + 7200);
    let low: Vec<String> = redis::cmd("ZRANGE")
        .arg(tr(b))
        .arg(0)
        .arg(0)
        .query(&mut c)
        .expect("ZRANGE");
    assert_eq!(low, ["gone"]);
    // Retention expires `gone`'s counters (as its PEXPIREAT would).
    let _: i64 = redis::cmd("DEL")
        .arg(format!("{b}\0pv:gone"))
        .query(&mut c)
        .expect("DEL");
    // The next article new to the board runs upkeep, which forgets it.
    view(&mut c, b, "n", "u1", T0 + 7300);
    let left: Vec<String> = redis::cmd("ZRANGE")
        .arg(tr(b))
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .expect("ZRANGE");
    assert_eq!(left, ["x", "n"]);
}

/// An article whose counters retention expired is not listed BY trending,
/// even at the top of the trending ZSET (upkeep sweeps only its fronts), as
/// BY hot and HOT.STATS do not know it either.
#[test]
fn by_trending_skips_an_article_whose_counters_expired() {
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{exp}";
    ok(&mut c, &["HOT.CREATE", b, "TRENDING-HALF-LIFE", "1d"]);
    view(&mut c, b, "b", "u1", T0);
    for v in ["u1", "u2", "u3", "u4", "u5"] {
        view(&mut c, b, "a", v, T0 + 1);
    }
    view(&mut c, b, "c", "u1", T0 + 2);
    let at = (T0 + 10).to_string();
    let names = |got: Vec<(String, f64)>| got.into_iter().map(|(m, _)| m).collect::<Vec<_>>();
    assert_eq!(
        names(top_trending(&mut c, b, &["AT", &at])),
        ["a", "c", "b"]
    );
    // `a`'s counters expire (as retention's PEXPIREAT would).
    let _: i64 = redis::cmd("DEL")
        .arg(format!("{b}\0pv:a"))
        .arg(format!("{b}\0uv:a"))
        .arg(format!("{b}\0meta:a"))
        .query(&mut c)
        .expect("DEL");
    assert_eq!(names(top_trending(&mut c, b, &["AT", &at])), ["c", "b"]);
    assert_eq!(
        names(top_trending(&mut c, b, &["AT", &at, "LIMIT", "1"])),
        ["c"]
    );
    let st = ok(&mut c, &["HOT.STATS", b, "a", "AT", &at]);
    assert_eq!(st, Value::Nil);
}
