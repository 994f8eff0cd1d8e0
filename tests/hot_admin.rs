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
