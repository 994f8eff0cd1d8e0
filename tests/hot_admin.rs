//! HOT board lifecycle (issue 22): HOT.REM, HOT.EXPORT, HOT.INFO,
//! HOT.DROP, HOT.BOARDS against a real server: replies, replication to a
//! replica with and without the module, ACL (NOPERM and nothing changes),
//! bad input that writes nothing.

#![allow(dead_code)]

mod common;
use common::*;

#[path = "common/hot_client.rs"]
mod hot_client;
use hot_client::*;

use redis::{Connection, Value};
use std::collections::BTreeMap;

const B: &[u8] = b"hot:{adm}";

fn rem(c: &mut Connection, board: &[u8], articles: &[&[u8]]) -> i64 {
    let mut args: Vec<&[u8]> = vec![b"HOT.REM", board];
    args.extend_from_slice(articles);
    int(&ok(c, &args))
}

/// Every key of the database whose name starts with `prefix`.
fn keys_with(c: &mut Connection, prefix: &[u8]) -> Vec<Vec<u8>> {
    let all: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    let mut v: Vec<Vec<u8>> = all.into_iter().filter(|k| k.starts_with(prefix)).collect();
    v.sort();
    v
}

fn dbsize(c: &mut Connection) -> i64 {
    redis::cmd("DBSIZE").query(c).expect("DBSIZE")
}

/// A master with the module and a replica (with or without it), link up.
fn pair(replica_module: bool) -> (Server, Server) {
    let master = Server::start();
    let port = master.port.to_string();
    let replica = Server::start_with(&["--replicaof", "127.0.0.1", &port], replica_module);
    wait_link_up(&replica);
    (master, replica)
}

/// Waits for the replica, then checks both hold the same keys with the same
/// expiries and values (a HyperLogLog compared without its cached count).
fn same_keyspace(master: &mut Connection, replica: &mut Connection) {
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query(master)
        .expect("WAIT");
    assert_eq!(acked, 1);
    let (m, r) = (keyspace(master), keyspace(replica));
    assert_eq!(
        m.keys().collect::<Vec<_>>(),
        r.keys().collect::<Vec<_>>(),
        "key sets"
    );
    for (k, (dump, exp)) in &m {
        let (rdump, rexp) = &r[k];
        assert_eq!(exp, rexp, "expiry of {}", k.escape_ascii());
        let hll = k.windows(4).any(|w| w == b"\0uv:");
        if !hll {
            assert_eq!(dump, rdump, "value of {}", k.escape_ascii());
        }
    }
}

fn setup_board(c: &mut Connection, board: &[u8]) {
    publish(c, board, b"a", T0);
    publish(c, board, b"b", T0);
    for (i, v) in ["v1", "v2", "v3"].iter().enumerate() {
        view(c, board, b"a", v.as_bytes(), T0 + i as i64 * 1000);
    }
    view(c, board, b"b", b"v1", T0 + 5000);
    view(c, board, b"c", b"v9", T0 + 6000);
}

fn top(c: &mut Connection, board: &[u8]) -> Vec<Vec<u8>> {
    let v = ok(c, &[b"HOT.TOP", board, b"AT", ts(T0 + 10_000).as_bytes()]);
    match v {
        Value::Array(a) => a.iter().map(bytes).collect(),
        other => panic!("{other:?}"),
    }
}

// ------------------------------------------------------------------ HOT.REM

#[test]
fn rem_takes_an_article_down_until_it_is_published_again() {
    let s = Server::start();
    let mut c = s.conn();
    setup_board(&mut c, B);
    assert_eq!(
        top(&mut c, B),
        [b"a".to_vec(), b"c".to_vec(), b"b".to_vec()]
    );
    // a and c are known, nosuch is not: 2 removed (duplicates count once).
    assert_eq!(rem(&mut c, B, &[b"a", b"nosuch", b"c", b"a"]), 2);
    assert_eq!(top(&mut c, B), [b"b".to_vec()]);
    assert_eq!(
        ok(&mut c, &[b"HOT.STATS", B, b"a"]),
        Value::Nil,
        "counters gone"
    );
    for kind in ["pv", "uv", "meta", "sus"] {
        let k = derived(B, kind, b"a");
        assert_eq!(keys_with(&mut c, &k), Vec::<Vec<u8>>::new(), "{kind}");
    }
    // The tombstone lives as long as the retention.
    let rm = derived(B, "rm", b"a");
    let pttl: i64 = redis::cmd("PTTL").arg(&rm).query(&mut c).unwrap();
    let ret: i64 = config_get(&mut c, "hotrank.retention-seconds")
        .parse()
        .unwrap();
    assert!(pttl > ret * 1000 - 60_000 && pttl <= ret * 1000, "{pttl}");

    // Later views are not counted and write nothing.
    let before = snapshot(&mut c);
    for v in ["v1", "v7", "v8"] {
        let r = view(&mut c, B, b"a", v.as_bytes(), T0 + 20_000);
        assert_eq!(
            r,
            ViewReply {
                pv: 0,
                uv: 0,
                score: 0.0,
                status: "removed".into()
            }
        );
    }
    assert_eq!(snapshot(&mut c), before, "a removed article's view wrote");
    // A second takedown of a removed article removes nothing.
    assert_eq!(rem(&mut c, B, &[b"a"]), 0);

    // Published again: counted again, from zero.
    assert_eq!(publish(&mut c, B, b"a", T0), 1);
    assert!(keys_with(&mut c, &rm).is_empty(), "tombstone cleared");
    // (A pair counted before the takedown stays a duplicate within the
    // dedup window: REM leaves the dedup shards, which expire by themselves.)
    let r = view(&mut c, B, b"a", b"v1", T0 + 30_000);
    assert_eq!((r.pv, r.uv, r.status.as_str()), (0, 0, "duplicate"));
    let r = view(&mut c, B, b"a", b"v5", T0 + 30_000);
    assert_eq!((r.pv, r.uv, r.status.as_str()), (1, 1, "counted"));
}

#[test]
fn rem_replicates_to_a_replica_with_and_without_the_module() {
    for module in [true, false] {
        let (m, r) = pair(module);
        let (mut mc, mut rc) = (m.conn(), r.conn());
        setup_board(&mut mc, B);
        assert_eq!(rem(&mut mc, B, &[b"a", b"b"]), 2);
        same_keyspace(&mut mc, &mut rc);
        assert!(keys_with(&mut rc, &derived(B, "pv", b"a")).is_empty());
        assert_eq!(keys_with(&mut rc, &derived(B, "rm", b"a")).len(), 1);
        if module {
            assert_eq!(
                ok(&mut rc, &[b"HOT.TOP", B, b"AT", ts(T0 + 10_000).as_bytes()]),
                Value::Array(vec![Value::BulkString(b"c".to_vec())])
            );
        }
    }
}

#[test]
fn rem_without_access_is_refused_and_changes_nothing() {
    let s = Server::start();
    let mut c = s.conn();
    setup_board(&mut c, B);
    acl_setuser(&mut c, &["other", "on", ">pw", "~other:*", "+@all"]);
    acl_setuser(&mut c, &["reader", "on", ">pw", "%R~hot:*", "+@all"]);
    let before = snapshot(&mut c);
    for user in ["other", "reader"] {
        let mut u = s.conn_as(user, "pw");
        let e = err(&mut u, &["HOT.REM", "hot:{adm}", "a"]);
        assert!(e.starts_with("NOPERM"), "{user}: {e}");
    }
    assert_eq!(snapshot(&mut c), before);
}

#[test]
fn rem_bad_input_writes_nothing() {
    let s = Server::start();
    let mut c = s.conn();
    setup_board(&mut c, B);
    ok(&mut c, &[b"SET", b"str", b"x"]);
    ok(&mut c, &[b"HSET", &derived(B, "pv", b"bad"), b"f", b"v"]);
    let before = snapshot(&mut c);
    assert!(err(&mut c, &["HOT.REM", "hot:{adm}"]).contains("wrong number of arguments"));
    assert!(err(&mut c, &["HOT.REM"]).contains("wrong number of arguments"));
    assert!(err(&mut c, &["HOT.REM", "str", "a"]).starts_with("WRONGTYPE"));
    assert!(err(&mut c, &["HOT.REM", "a{b", "a"]).contains("board key"));
    // A wrong-typed key of one article: nothing removed, not even the others.
    let e = err(&mut c, &["HOT.REM", "hot:{adm}", "a", "bad"]);
    assert!(e.starts_with("WRONGTYPE"), "{e}");
    // A RANK board is not a HOT board.
    ok(&mut c, &[b"RANK.CREATE", b"lb"]);
    ok(&mut c, &[b"RANK.INCR", b"lb", b"m", b"1"]);
    let before_rank = snapshot(&mut c);
    assert!(err(&mut c, &["HOT.REM", "lb", "m"]).starts_with("ERR"));
    assert_eq!(snapshot(&mut c), before_rank);
    ok(&mut c, &[b"DEL", b"lb", &derived_board(b"lb", "layout")]);
    assert_eq!(snapshot(&mut c), before);
}

/// A derived key of the board itself (no article part).
fn derived_board(board: &[u8], kind: &str) -> Vec<u8> {
    let mut k = board.to_vec();
    k.push(0);
    if !board.contains(&b'{') {
        k.push(b'{');
        k.extend_from_slice(board);
        k.push(b'}');
    }
    k.extend_from_slice(kind.as_bytes());
    k
}

// --------------------------------------------------------------- HOT.EXPORT

/// One HOT.EXPORT row: (article, field → value).
type Row = (Vec<u8>, BTreeMap<String, Value>);

fn export(c: &mut Connection, board: &[u8], cursor: i64, count: i64) -> (i64, Vec<Row>) {
    let v = ok(
        c,
        &[
            b"HOT.EXPORT",
            board,
            cursor.to_string().as_bytes(),
            b"COUNT",
            count.to_string().as_bytes(),
        ],
    );
    let Value::Array(a) = v else { panic!("{v:?}") };
    let next: i64 = text(&a[0]).parse().expect("cursor");
    let Value::Array(rows) = &a[1] else {
        panic!("{a:?}")
    };
    let rows = rows
        .iter()
        .map(|r| match r {
            Value::Array(p) if p.len() == 2 => {
                let Value::Array(f) = &p[1] else {
                    panic!("{p:?}")
                };
                let fields: Vec<String> = f.iter().step_by(2).map(text).collect();
                assert_eq!(
                    fields,
                    [
                        "pv",
                        "uv",
                        "suspicious",
                        "published_at",
                        "score",
                        "last_view"
                    ]
                );
                let m = f
                    .chunks(2)
                    .map(|kv| (text(&kv[0]), kv[1].clone()))
                    .collect();
                (bytes(&p[0]), m)
            }
            other => panic!("{other:?}"),
        })
        .collect();
    (next, rows)
}

/// A whole HOT.EXPORT walk, `count` entries a call.
fn export_all(c: &mut Connection, board: &[u8], count: i64) -> Vec<Row> {
    let (mut cursor, mut out) = (0, Vec::new());
    loop {
        let (next, rows) = export(c, board, cursor, count);
        out.extend(rows);
        if next == 0 {
            return out;
        }
        assert!(next > cursor, "the cursor goes forward");
        cursor = next;
    }
}

/// Checks an export row against HOT.STATS of the same article now.
fn row_matches_stats(c: &mut Connection, board: &[u8], (article, f): &Row) {
    let stats = ok(c, &[b"HOT.STATS", board, article]);
    let s = parse_stats(&stats).unwrap_or_else(|| panic!("stats of {article:?}"));
    let a = article.escape_ascii().to_string();
    assert_eq!(int(&f["pv"]), s.pv, "{a}");
    assert_eq!(int(&f["uv"]), s.uv, "{a}");
    assert_eq!(int(&f["suspicious"]), s.suspicious, "{a}");
    let published = match &f["published_at"] {
        Value::Nil => None,
        v => Some(text(v)),
    };
    assert_eq!(published, s.published_at, "{a}");
    let (es, ss) = (score(&f["score"]), s.score);
    assert!(
        (es - ss).abs() <= 1e-6 * ss.abs().max(1e-12),
        "{a}: {es} vs {ss}"
    );
}

#[test]
fn export_returns_every_article_with_the_stats_fields_and_last_view() {
    let s = Server::start();
    let mut c = s.conn();
    config_set(&mut c, "hotrank.visitor-max-views", "3");
    setup_board(&mut c, B);
    // An article with suspicious views only (never on the board).
    for i in 0..3 {
        view(&mut c, B, b"x", b"v1", T0 + 7000 + i);
    }
    let r = view(&mut c, B, b"sus-only", b"v1", T0 + 8000);
    assert_eq!(r.status, "suspicious");
    // A published article without views, and a removed one.
    publish(&mut c, B, b"p", T0);
    publish(&mut c, B, b"gone", T0);
    rem(&mut c, B, &[b"gone"]);
    for count in [1, 2, 3, 100] {
        let rows = export_all(&mut c, B, count);
        let mut names: Vec<Vec<u8>> = rows.iter().map(|r| r.0.clone()).collect();
        names.sort();
        let want: Vec<Vec<u8>> = ["a", "b", "c", "p", "sus-only", "x"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        assert_eq!(names, want, "COUNT {count}");
        for r in &rows {
            row_matches_stats(&mut c, B, r);
        }
        let last = |a: &[u8]| {
            let r = rows.iter().find(|r| r.0 == a).unwrap();
            match &r.1["last_view"] {
                Value::Nil => None,
                v => Some(text(v)),
            }
        };
        // Minute grain: the views at T0 + 1 s and + 2 s keep T0's.
        assert_eq!(last(b"a"), Some(ts(T0)));
        assert_eq!(last(b"c"), Some(ts(T0 + 6000)));
        assert_eq!(last(b"p"), None);
        assert_eq!(last(b"sus-only"), None);
    }
    // An older view does not move last_view back; a view moves it only
    // when more than 60 s after the stored one.
    let last_a = |c: &mut Connection| {
        let rows = export_all(c, B, 10);
        let a = rows.iter().find(|r| r.0 == b"a").unwrap();
        text(&a.1["last_view"])
    };
    view(&mut c, B, b"a", b"v-old", T0 - 5000);
    assert_eq!(last_a(&mut c), ts(T0));
    view(&mut c, B, b"a", b"v-60s", T0 + 60_000);
    assert_eq!(last_a(&mut c), ts(T0));
    view(&mut c, B, b"a", b"v-61s", T0 + 60_001);
    assert_eq!(last_a(&mut c), ts(T0 + 60_001));
    // A board without keys: nothing, done at once.
    assert_eq!(export(&mut c, b"hot:{none}", 0, 10), (0, vec![]));
    // Under RESP3 the same shape (the inner field list stays an array).
    let mut c3 = redis::Client::open(format!("{}?protocol=resp3", s.url()))
        .unwrap()
        .get_connection()
        .unwrap();
    assert_eq!(export_all(&mut c3, B, 2).len(), 6);
}

#[test]
fn export_bad_input_and_acl() {
    let s = Server::start();
    let mut c = s.conn();
    setup_board(&mut c, B);
    ok(&mut c, &[b"SET", b"str", b"x"]);
    let before = snapshot(&mut c);
    for (args, want) in [
        (vec!["HOT.EXPORT", "hot:{adm}"], "wrong number of arguments"),
        (vec!["HOT.EXPORT", "hot:{adm}", "-1"], "invalid cursor"),
        (vec!["HOT.EXPORT", "hot:{adm}", "abc"], "invalid cursor"),
        (vec!["HOT.EXPORT", "hot:{adm}", "0", "COUNT", "0"], "COUNT"),
        (
            vec!["HOT.EXPORT", "hot:{adm}", "0", "COUNT", "10001"],
            "COUNT",
        ),
        (
            vec!["HOT.EXPORT", "hot:{adm}", "0", "COUNT"],
            "COUNT needs a value",
        ),
        (
            vec!["HOT.EXPORT", "hot:{adm}", "0", "MATCH", "x"],
            "syntax error",
        ),
        (vec!["HOT.EXPORT", "str", "0"], "WRONGTYPE"),
    ] {
        let e = err(&mut c, &args);
        assert!(e.contains(want), "{args:?}: {e}");
    }
    acl_setuser(&mut c, &["other", "on", ">pw", "~other:*", "+@all"]);
    acl_setuser(&mut c, &["reader", "on", ">pw", "%R~hot:*", "+@all"]);
    let e = err(
        &mut s.conn_as("other", "pw"),
        &["HOT.EXPORT", "hot:{adm}", "0"],
    );
    assert!(e.starts_with("NOPERM"), "{e}");
    // Read access is enough.
    let mut reader = s.conn_as("reader", "pw");
    assert_eq!(export_all(&mut reader, B, 10).len(), 3);
    assert_eq!(snapshot(&mut c), before);
}

#[test]
fn export_on_a_replica_matches_the_master() {
    for module in [true, false] {
        let (m, r) = pair(module);
        let (mut mc, mut rc) = (m.conn(), r.conn());
        setup_board(&mut mc, B);
        rem(&mut mc, B, &[b"b"]);
        same_keyspace(&mut mc, &mut rc);
        if module {
            let strip = |rows: Vec<Row>| -> Vec<(Vec<u8>, i64, i64)> {
                rows.into_iter()
                    .map(|(a, f)| (a, int(&f["pv"]), int(&f["uv"])))
                    .collect()
            };
            assert_eq!(
                strip(export_all(&mut mc, B, 1)),
                strip(export_all(&mut rc, B, 1))
            );
        }
    }
}

/// During a walk, another client keeps viewing (new articles that make the
/// board trim, and old ones): every article tracked before the walk and
/// still tracked after it is returned, and at the end every row equals
/// HOT.STATS.
#[test]
fn export_during_views_and_trims_returns_every_article_present_throughout() {
    let s = Server::start();
    let mut c = s.conn();
    config_set(&mut c, "hotrank.max-articles", "300");
    let board: &[u8] = b"hot:{exp}";
    let n = 2000;
    let mut pipe = redis::pipe();
    for i in 0..n {
        pipe.cmd("HOT.VIEW")
            .arg(board)
            .arg(format!("a{i}"))
            .arg(format!("v{}", i % 97))
            .arg("AT")
            .arg(ts(T0 + i * 10));
    }
    let _: Vec<Value> = pipe.query(&mut c).expect("fill");
    let before: std::collections::BTreeSet<Vec<u8>> = export_all(&mut c, board, 1000)
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(before.len(), n as usize, "every article is tracked");
    let card: i64 = redis::cmd("ZCARD").arg(board).query(&mut c).unwrap();
    assert!(card < n, "the board was trimmed: {card}");

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let mut w = s.conn();
        std::thread::spawn(move || {
            let mut i = 0i64;
            // At most 400 pipelines: the walk must catch up with the end
            // of the index, which the new articles keep extending.
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && i < 400 {
                let mut pipe = redis::pipe();
                for j in 0..20 {
                    let k = i * 20 + j;
                    // New articles (trims) and views of old ones.
                    let article = if k % 2 == 0 {
                        format!("new{k}")
                    } else {
                        format!("a{}", (k * 7919) % n)
                    };
                    pipe.cmd("HOT.VIEW")
                        .arg(b"hot:{exp}")
                        .arg(article)
                        .arg(format!("w{k}"))
                        .arg("AT")
                        .arg(ts(T0 + n * 10 + k));
                }
                let _: Vec<Value> = pipe.query(&mut w).expect("views");
                i += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            i * 20
        })
    };
    let mut seen = std::collections::BTreeSet::new();
    let (mut cursor, mut calls) = (0, 0);
    loop {
        let (next, rows) = export(&mut c, board, cursor, 25);
        calls += 1;
        seen.extend(rows.into_iter().map(|r| r.0));
        if next == 0 {
            break;
        }
        cursor = next;
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let views = writer.join().unwrap();
    let after = export_all(&mut c, board, 1000);
    let after_names: std::collections::BTreeSet<Vec<u8>> =
        after.iter().map(|r| r.0.clone()).collect();
    let throughout: Vec<&Vec<u8>> = before.intersection(&after_names).collect();
    let missed: Vec<&&Vec<u8>> = throughout.iter().filter(|a| !seen.contains(**a)).collect();
    println!(
        "export walk: {calls} calls, {views} concurrent views, {} articles present throughout, {} returned",
        throughout.len(),
        seen.len()
    );
    assert!(views > 0, "no concurrent views");
    assert!(
        missed.is_empty(),
        "missed {} articles: {:?}",
        missed.len(),
        &missed[..missed.len().min(5)]
    );
    for r in &after {
        row_matches_stats(&mut c, board, r);
    }
}

// ----------------------------------------------------------------- HOT.INFO

fn info_map(c: &mut Connection, board: &[u8]) -> BTreeMap<String, Value> {
    match ok(c, &[b"HOT.INFO", board]) {
        Value::Array(a) => a.chunks(2).map(|p| (text(&p[0]), p[1].clone())).collect(),
        Value::Map(m) => m.into_iter().map(|(k, v)| (text(&k), v)).collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn info_reports_settings_sizes_keys_and_memory() {
    let s = Server::start();
    let mut c = s.conn();
    setup_board(&mut c, B);
    publish(&mut c, B, b"p", T0);
    let m = info_map(&mut c, B);
    for name in [
        "alpha",
        "beta",
        "base",
        "gamma",
        "dedup-seconds",
        "dedup-shards",
        "visitor-max-views",
        "visitor-window-seconds",
        "max-articles",
        "retention-seconds",
    ] {
        let want = config_get(&mut c, &format!("hotrank.{name}"));
        let got = match &m[name] {
            Value::Int(i) => i.to_string(),
            v => text(v),
        };
        assert_eq!(got, want, "{name}");
    }
    assert_eq!(int(&m["articles"]), 3);
    assert_eq!(int(&m["articles_tracked"]), 4);
    // Every key of the board but the visitor counters.
    for v in ["n1", "n2"] {
        ok(&mut c, &[b"HOT.VIEW", B, b"a", v.as_bytes()]);
    }
    let m = info_map(&mut c, B);
    let mut own: Vec<Vec<u8>> = keys_with(&mut c, B);
    own.retain(|k| !k.windows(4).any(|w| w == b"\0vv:"));
    // Every dedup shard string is counted, whatever the view times (the
    // views with AT in 2023 wrote into the same strings).
    assert!(own.iter().any(|k| k.windows(4).any(|w| w == b"\0dd:")));
    assert_eq!(int(&m["keys"]), own.len() as i64, "{own:?}");
    let mut sum = 0;
    for k in &own {
        let u: i64 = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(k)
            .query(&mut c)
            .unwrap();
        sum += u;
    }
    assert_eq!(int(&m["memory_bytes"]), sum);
    assert_eq!(text(&m["memory_method"]), "summed");
    assert_eq!(text(&m["replication"]), "effects");
    // RESP3: a map.
    let mut c3 = redis::Client::open(format!("{}?protocol=resp3", s.url()))
        .unwrap()
        .get_connection()
        .unwrap();
    let v = ok(&mut c3, &[b"HOT.INFO", B]);
    assert!(matches!(v, Value::Map(_)), "{v:?}");
    assert_eq!(
        info_map(&mut c3, B).keys().collect::<Vec<_>>(),
        m.keys().collect::<Vec<_>>()
    );
}

#[test]
fn info_samples_a_large_board() {
    let s = Server::start();
    let mut c = s.conn();
    config_set(&mut c, "hotrank.max-articles", "0");
    let board: &[u8] = b"hot:{big}";
    let mut pipe = redis::pipe();
    for i in 0..3000 {
        pipe.cmd("HOT.VIEW")
            .arg(board)
            .arg(format!("a{i}"))
            .arg(format!("v{i}"))
            .arg("AT")
            .arg(ts(T0 + i));
    }
    let _: Vec<Value> = pipe.query(&mut c).expect("fill");
    let m = info_map(&mut c, board);
    assert_eq!(int(&m["articles"]), 3000);
    assert_eq!(int(&m["articles_tracked"]), 3000);
    assert_eq!(text(&m["memory_method"]), "sampled");
    let mut own = keys_with(&mut c, board);
    // Every key but the visitor counters: the dedup shard strings count,
    // whatever the views' times.
    own.retain(|k| !k.windows(4).any(|w| w == b"\0vv:"));
    assert_eq!(int(&m["keys"]), own.len() as i64);
    let mut sum = 0;
    for k in &own {
        let u: i64 = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(k)
            .query(&mut c)
            .unwrap();
        sum += u;
    }
    let got = int(&m["memory_bytes"]);
    println!("HOT.INFO memory_bytes {got} (sampled) vs {sum} (MEMORY USAGE of every key)");
    assert!((got - sum).abs() * 10 < sum, "{got} vs {sum}");
}

#[test]
fn info_bad_input_and_acl() {
    let s = Server::start();
    let mut c = s.conn();
    setup_board(&mut c, B);
    ok(&mut c, &[b"SET", b"str", b"x"]);
    let before = snapshot(&mut c);
    assert!(err(&mut c, &["HOT.INFO"]).contains("wrong number"));
    assert!(err(&mut c, &["HOT.INFO", "hot:{adm}", "x"]).contains("wrong number"));
    assert!(err(&mut c, &["HOT.INFO", "str"]).starts_with("WRONGTYPE"));
    let none = info_map(&mut c, b"hot:{none}");
    assert_eq!(
        ["articles", "articles_tracked", "keys", "memory_bytes"].map(|f| int(&none[f])),
        [0; 4]
    );
    acl_setuser(&mut c, &["other", "on", ">pw", "~other:*", "+@all"]);
    let e = err(&mut s.conn_as("other", "pw"), &["HOT.INFO", "hot:{adm}"]);
    assert!(e.starts_with("NOPERM"), "{e}");
    assert_eq!(snapshot(&mut c), before);
}

// ----------------------------------------------------------------- HOT.DROP

fn drop_board(c: &mut Connection, board: &[u8]) -> i64 {
    int(&ok(c, &[b"HOT.DROP", board]))
}

/// Waits (at most `secs`) until DBSIZE is `want`.
fn wait_dbsize(c: &mut Connection, want: i64, secs: u64) -> i64 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        let n = dbsize(c);
        if n == want || std::time::Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn drop_makes_a_new_board_under_the_same_name_start_fresh() {
    let s = Server::start();
    let mut c = s.conn();
    config_set(&mut c, "hotrank.visitor-max-views", "3");
    setup_board(&mut c, B);
    for i in 0..3 {
        view(&mut c, B, b"x", b"v1", T0 + 7000 + i);
    }
    assert_eq!(view(&mut c, B, b"y", b"v1", T0 + 8000).status, "suspicious");
    rem(&mut c, B, &[b"b"]);
    let keys = keys_with(&mut c, B);
    let n = drop_board(&mut c, B);
    // Every key but the visitor counters and dedup shards (not walked).
    let own = keys
        .iter()
        .filter(|k| !k.windows(4).any(|w| w == b"\0vv:" || w == b"\0dd:"))
        .count() as i64;
    assert_eq!(n, own, "{keys:?}");
    assert_eq!(ok(&mut c, &[b"HOT.TOP", B]), Value::Array(vec![]));
    assert_eq!(ok(&mut c, &[b"HOT.STATS", B, b"a"]), Value::Nil);
    // The same views again: counted, no dedup hit, no suspicious visitor,
    // no takedown.
    let r = view(&mut c, B, b"a", b"v1", T0 + 9000);
    assert_eq!((r.pv, r.uv, r.status.as_str()), (1, 1, "counted"));
    let r = view(&mut c, B, b"b", b"v1", T0 + 9001);
    assert_eq!((r.pv, r.status.as_str()), (1, "counted"));
    let r = view(&mut c, B, b"y", b"v1", T0 + 9002);
    assert_eq!((r.pv, r.status.as_str()), (1, "counted"));
    let m = info_map(&mut c, B);
    assert_eq!((int(&m["articles"]), int(&m["articles_tracked"])), (3, 3));
    let rows = export_all(&mut c, B, 10);
    assert_eq!(rows.len(), 3);
    for r in &rows {
        row_matches_stats(&mut c, B, r);
    }
    // The old keys are gone once the steps ran (all but the short-lived).
    std::thread::sleep(std::time::Duration::from_millis(300));
    for k in &keys {
        if k.windows(4).any(|w| w == b"\0vv:" || w == b"\0dd:") || k == B {
            continue;
        }
        let exists: i64 = redis::cmd("EXISTS").arg(k).query(&mut c).unwrap();
        assert_eq!(exists, 0, "{}", k.escape_ascii());
    }
    // A board in another database: the steps delete there.
    let mut c9 = redis::Client::open(format!("{}/9", s.url()))
        .unwrap()
        .get_connection()
        .unwrap();
    setup_board(&mut c9, B);
    let n9 = keys_with(&mut c9, B).len();
    assert!(drop_board(&mut c9, B) > 0);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let left: Vec<Vec<u8>> = keys_with(&mut c9, B)
        .into_iter()
        .filter(|k| !k.windows(4).any(|w| w == b"\0vv:" || w == b"\0dd:"))
        .collect();
    assert_eq!(left, vec![derived_board(B, "ep")], "db 9 had {n9} keys");
    // Drop again (epoch 1), and a board never written: 0.
    assert!(drop_board(&mut c, B) >= 3 * 3);
    assert_eq!(drop_board(&mut c, b"hot:{never}"), 0);
}

#[test]
fn drop_returns_dbsize_to_before_on_master_and_replicas() {
    for module in [true, false] {
        let (m, r) = pair(module);
        let (mut mc, mut rc) = (m.conn(), r.conn());
        // Short windows: the keys that are not walked expire within 2 s.
        config_set(&mut mc, "hotrank.dedup-seconds", "1");
        config_set(&mut mc, "hotrank.visitor-window-seconds", "1");
        ok(&mut mc, &[b"SET", b"other", b"1"]);
        let before = dbsize(&mut mc);
        let board: &[u8] = b"hot:{gone}";
        let mut pipe = redis::pipe();
        for i in 0..3000 {
            pipe.cmd("HOT.VIEW")
                .arg(board)
                .arg(format!("a{}", i % 1500))
                .arg(format!("v{i}"));
        }
        let _: Vec<Value> = pipe.query(&mut mc).expect("fill");
        rem(&mut mc, board, &[b"a1"]);
        assert!(dbsize(&mut mc) > before + 3000);
        assert!(drop_board(&mut mc, board) > 3000);
        assert_eq!(wait_dbsize(&mut mc, before, 15), before, "master");
        let _: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(&mut mc).unwrap();
        assert_eq!(
            wait_dbsize(&mut rc, before, 15),
            before,
            "replica (module: {module})"
        );
        // A new board after that: epoch 0 again, the usual names.
        view(&mut mc, board, b"a", b"v", T0);
        assert_eq!(keys_with(&mut mc, &derived(board, "pv", b"a")).len(), 1);
    }
}

#[test]
fn drop_of_a_large_board_does_not_block_the_server() {
    let s = Server::start();
    let mut c = s.conn();
    config_set(&mut c, "hotrank.max-articles", "0");
    config_set(&mut c, "hotrank.dedup-seconds", "1");
    config_set(&mut c, "hotrank.visitor-window-seconds", "1");
    let before = dbsize(&mut c);
    let board: &[u8] = b"hot:{large}";
    let n = 100_000;
    for chunk in 0..(n / 10_000) {
        let mut pipe = redis::pipe();
        for i in chunk * 10_000..(chunk + 1) * 10_000 {
            pipe.cmd("HOT.VIEW")
                .arg(board)
                .arg(format!("article:{i}"))
                .arg(format!("visitor:{i}"));
        }
        let _: Vec<Value> = pipe.query(&mut c).expect("fill");
    }
    let m = info_map(&mut c, board);
    assert_eq!(int(&m["articles"]), n);
    // The visitor counters and dedup shards of the fill expire first (their
    // expiry is not HOT.DROP's work).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while dbsize(&mut c) > 3 * n + 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let full = dbsize(&mut c);
    // A client pinging all along: the longest reply time is the longest block.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let pinger = {
        let stop = stop.clone();
        let mut p = s.conn();
        std::thread::spawn(move || {
            let mut worst = std::time::Duration::ZERO;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let t = std::time::Instant::now();
                let _: String = redis::cmd("PING").query(&mut p).unwrap();
                worst = worst.max(t.elapsed());
            }
            worst
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(200));
    config_set(&mut c, "slowlog-log-slower-than", "1000");
    config_set(&mut c, "slowlog-max-len", "10000");
    let _: () = redis::cmd("SLOWLOG").arg("RESET").query(&mut c).unwrap();
    let t = std::time::Instant::now();
    let removed = drop_board(&mut c, board);
    let drop_ms = t.elapsed().as_secs_f64() * 1000.0;
    let during = dbsize(&mut c);
    let after = wait_dbsize(&mut c, before, 60);
    let total_ms = t.elapsed().as_secs_f64() * 1000.0;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let worst = pinger.join().unwrap();
    let log: Vec<Value> = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(1000)
        .query(&mut c)
        .unwrap();
    let drop_us = log
        .iter()
        .filter_map(|e| match e {
            Value::Array(f) if matches!(&f[3], Value::Array(a) if text(&a[0]).eq_ignore_ascii_case("HOT.DROP")) => {
                Some(int(&f[2]))
            }
            _ => None,
        })
        .max();
    println!("HOT.DROP in the server: {drop_us:?} us (SLOWLOG, None: under 1 ms)");
    println!(
        "HOT.DROP of {n} articles: keys before {full}, right after {during}, at the end {after} (empty db {before}); \
         {removed} keys reported; the command took {drop_ms:.1} ms, all steps and expiries {total_ms:.0} ms; \
         longest PING {:.1} ms",
        worst.as_secs_f64() * 1000.0
    );
    assert_eq!(after, before);
    assert!(during < full && during > before, "{during}");
    assert!(removed >= 3 * n, "{removed}");
}

#[test]
fn drop_without_access_and_bad_input_write_nothing() {
    let s = Server::start();
    let mut c = s.conn();
    setup_board(&mut c, B);
    ok(&mut c, &[b"SET", b"str", b"x"]);
    acl_setuser(&mut c, &["other", "on", ">pw", "~other:*", "+@all"]);
    acl_setuser(&mut c, &["reader", "on", ">pw", "%R~hot:*", "+@all"]);
    let before = snapshot(&mut c);
    for user in ["other", "reader"] {
        let e = err(&mut s.conn_as(user, "pw"), &["HOT.DROP", "hot:{adm}"]);
        assert!(e.starts_with("NOPERM"), "{user}: {e}");
    }
    assert!(err(&mut c, &["HOT.DROP"]).contains("wrong number"));
    assert!(err(&mut c, &["HOT.DROP", "hot:{adm}", "x"]).contains("wrong number"));
    assert!(err(&mut c, &["HOT.DROP", "str"]).starts_with("WRONGTYPE"));
    ok(&mut c, &[b"ZADD", b"plainz", b"1", b"m"]);
    assert!(err(&mut c, &["HOT.DROP", "plainz"]).starts_with("ERR"));
    ok(&mut c, &[b"DEL", b"plainz"]);
    assert_eq!(snapshot(&mut c), before);
}

// ------------------------------------------------------------- index sweep

/// The article index loses the entries of articles whose keys retention
/// expired (simulated with DEL), as new articles are added, and never an
/// entry of a live article.
#[test]
fn adding_articles_sweeps_index_entries_of_expired_articles() {
    let s = Server::start();
    let mut c = s.conn();
    let board: &[u8] = b"hot:{sweep}";
    let views = |c: &mut Connection, prefix: &str, n: i64, t: i64| {
        let mut pipe = redis::pipe();
        for i in 0..n {
            pipe.cmd("HOT.VIEW")
                .arg(board)
                .arg(format!("{prefix}{i}"))
                .arg(format!("v-{prefix}{i}"))
                .arg("AT")
                .arg(ts(t + i));
        }
        let _: Vec<Value> = pipe.query(c).expect("views");
    };
    views(&mut c, "a", 300, T0);
    assert_eq!(int(&info_map(&mut c, board)["articles_tracked"]), 300);
    // Retention expires the first 200 articles (their keys only: the
    // index entries stay until the sweep finds them).
    for i in 0..200 {
        let a = format!("a{i}");
        for k in ["pv", "uv", "meta"] {
            ok(&mut c, &[b"DEL", &derived(board, k, a.as_bytes())]);
        }
        ok(&mut c, &[b"ZREM", board, a.as_bytes()]);
        ok(
            &mut c,
            &[b"ZREM", &derived_board(board, "pub"), a.as_bytes()],
        );
    }
    // 300 new articles: each add probes the index once.
    views(&mut c, "n", 300, T0 + 1000);
    let tracked = int(&info_map(&mut c, board)["articles_tracked"]);
    let live: std::collections::BTreeSet<Vec<u8>> = (200..300)
        .map(|i| format!("a{i}").into_bytes())
        .chain((0..300).map(|i| format!("n{i}").into_bytes()))
        .collect();
    println!("articles tracked after the sweep: {tracked} (400 live, 200 expired)");
    assert!(
        tracked <= 400 + 50,
        "at most 50 of the 200 stale entries left: {tracked}"
    );
    let exported: std::collections::BTreeSet<Vec<u8>> = export_all(&mut c, board, 1000)
        .into_iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(exported, live, "every live article is still exported");
}

/// A takedown tombstone keeps its article index entry: a view of an
/// article never seen before looks for a tombstone only when the index
/// lists the article, so articles removed before their first view stay
/// removed while hundreds of new articles sweep the index, and an article
/// the index does not list is counted.
#[test]
fn articles_removed_before_their_first_view_stay_removed_through_sweeps() {
    let s = Server::start();
    let mut c = s.conn();
    let board: &[u8] = b"hot:{tomb}";
    assert_eq!(view(&mut c, board, b"first", b"v", T0).status, "counted");
    let removed: Vec<Vec<u8>> = (0..50).map(|i| format!("x{i}").into_bytes()).collect();
    let names: Vec<&[u8]> = removed.iter().map(|a| a.as_slice()).collect();
    assert_eq!(rem(&mut c, board, &names), 0, "none was known");
    for i in 0..300 {
        let a = format!("n{i}");
        let v = format!("v{i}");
        let r = view(&mut c, board, a.as_bytes(), v.as_bytes(), T0 + 1 + i);
        assert_eq!(r.status, "counted", "{a}");
    }
    for a in &removed {
        let r = view(&mut c, board, a, b"v2", T0 + 1000);
        assert_eq!(r.status, "removed", "{}", String::from_utf8_lossy(a));
        let rm = derived(board, "rm", a);
        let n: i64 = redis::cmd("EXISTS").arg(&rm).query(&mut c).expect("EXISTS");
        assert_eq!(n, 1, "the tombstone lives");
    }
    assert_eq!(
        view(&mut c, board, b"new", b"v", T0 + 1001).status,
        "counted"
    );
}

/// After HOT.DROP, the epoch key lives as long as the dropped board's own
/// dedup shards may (two of its dedup windows), not the configs' window: a
/// board created with DEDUP-SECONDS 3600 on a server whose config says 900.
#[test]
fn drop_keeps_the_epoch_as_long_as_the_dropped_boards_own_dedup_window() {
    let s = Server::start();
    let mut c = s.conn();
    let board: &[u8] = b"hot:{guard}";
    ok(&mut c, &[b"HOT.CREATE", board, b"DEDUP-SECONDS", b"3600"]);
    assert_eq!(view(&mut c, board, b"a", b"v", T0).status, "counted");
    assert!(drop_board(&mut c, board) > 0);
    let ep = derived_board(board, "ep");
    // The steps run on a 1 ms timer; the expiry is set after the last one.
    let mut ttl = -1;
    for _ in 0..200 {
        ttl = redis::cmd("PTTL").arg(&ep).query(&mut c).expect("PTTL");
        if ttl > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(
        ttl > 2 * 3600 * 1000 - 60_000 && ttl <= 2 * 3600 * 1000,
        "epoch key PTTL {ttl} ms: should cover two 3600 s windows"
    );
    // A board made again at once under the name starts fresh.
    assert_eq!(view(&mut c, board, b"a", b"v", T0 + 1).status, "counted");
}

/// A hand-written article index with a huge sequence number does not break
/// the index sweep: a view of a new article is counted, replies normally,
/// and no panic is counted.
#[test]
fn index_sweep_survives_a_hand_written_huge_sequence_number() {
    let s = Server::start();
    let mut c = s.conn();
    let board: &[u8] = b"hot:{huge}";
    assert_eq!(view(&mut c, board, b"a1", b"v1", T0).status, "counted");
    let ix = derived_board(board, "ix");
    ok(&mut c, &[b"ZADD", &ix, b"1e20", b"zz"]);
    for i in 0..5 {
        let a = format!("n{i}");
        let r = view(&mut c, board, a.as_bytes(), b"v1", T0 + 1 + i);
        assert_eq!((r.pv, r.status.as_str()), (1, "counted"), "{a}");
    }
    let info: String = redis::cmd("INFO").arg("hotrank").query(&mut c).unwrap();
    assert!(info.contains("hotrank_panics_caught:0"), "{info}");
    assert!(info.contains("hotrank_upkeep_errors:0"), "{info}");
}
