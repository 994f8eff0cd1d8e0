//! RANK.INFO (issue 22): layout, periods, members and current period
//! boards; RESP2 and RESP3; replica; ACL; bad input writes nothing.

mod common;
use common::*;
use redis::{Connection, Value};
use std::collections::BTreeMap;

use common::reply_text as text;

fn info(c: &mut Connection, key: &str) -> BTreeMap<String, String> {
    match q(c, &["RANK.INFO", key]).expect("RANK.INFO") {
        Value::Array(a) => a.chunks(2).map(|p| (text(&p[0]), text(&p[1]))).collect(),
        Value::Map(m) => m.iter().map(|(k, v)| (text(k), text(v))).collect(),
        other => panic!("{other:?}"),
    }
}

fn day_id() -> String {
    // The current UTC day as RANK names it: d2026-11-26.
    let out = std::process::Command::new("date")
        .args(["-u", "+d%Y-%m-%d"])
        .output()
        .expect("date");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn info_reports_the_layout_members_and_period_boards() {
    let s = Server::start();
    let mut c = s.conn();
    q(&mut c, &words("RANK.CREATE lb:{p} RESOLUTION ms MIN 0 MAX 1000 ORDER asc PERIODS day week TZ +00:00 KEEP 3")).unwrap();
    for (m, v) in [("a", "5"), ("b", "7"), ("c", "9")] {
        q(&mut c, &["RANK.INCR", "lb:{p}", m, v]).unwrap();
    }
    let i = info(&mut c, "lb:{p}");
    let day = day_id();
    let got: Vec<(&str, &str)> = i.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut want = vec![
        // The server's eviction policy (docs/eviction.md).
        ("eviction_unsafe", "0"),
        ("maxmemory_policy", "noeviction"),
        ("keep", "3"),
        ("max", "1000"),
        ("members", "3"),
        ("min", "0"),
        ("order", "asc"),
        ("periods", "[day week]"),
        ("resolution", "ms"),
        ("tz", "+00:00"),
    ];
    let boards = i["period_boards"].clone();
    assert!(boards.starts_with(&format!("[{day} 3 w")), "{boards}");
    assert!(boards.ends_with(" 3]"), "{boards}");
    want.push(("period_boards", boards.as_str()));
    want.sort();
    assert_eq!(got, want);
    // A board without periods, and a missing one (the default layout).
    q(&mut c, &["RANK.INCR", "lb:{plain}", "a", "1"]).unwrap();
    let i = info(&mut c, "lb:{plain}");
    assert_eq!(
        (
            i["resolution"].as_str(),
            i["order"].as_str(),
            i["periods"].as_str(),
            i["tz"].as_str(),
            i["members"].as_str()
        ),
        ("s", "desc", "[]", "nil", "1")
    );
    assert_eq!(i["min"], (-(1i64 << 30)).to_string());
    let none = info(&mut c, "lb:{none}");
    assert_eq!(none["members"], "0");
    // lb:{p}, its layout, day and week boards; lb:{plain} and its layout.
    assert_eq!(dbsize(&mut c), 6, "RANK.INFO wrote nothing");
    // RESP3: a map.
    let mut c3 = redis::Client::open(format!("{}?protocol=resp3", s.url()))
        .unwrap()
        .get_connection()
        .unwrap();
    assert!(matches!(
        q(&mut c3, &["RANK.INFO", "lb:{p}"]).unwrap(),
        Value::Map(_)
    ));
    assert_eq!(info(&mut c3, "lb:{p}"), info(&mut c, "lb:{p}"));
}

fn dbsize(c: &mut Connection) -> i64 {
    redis::cmd("DBSIZE").query(c).unwrap()
}

#[test]
fn info_on_a_replica_matches_the_master() {
    let m = Server::start();
    let port = m.port.to_string();
    let r = Server::start_with(&["--replicaof", "127.0.0.1", &port], true);
    wait_link_up(&r);
    let (mut mc, mut rc) = (m.conn(), r.conn());
    q(&mut mc, &words("RANK.CREATE lb:{r} PERIODS month")).unwrap();
    q(&mut mc, &["RANK.INCR", "lb:{r}", "a", "1"]).unwrap();
    let _: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(&mut mc).unwrap();
    assert_eq!(info(&mut mc, "lb:{r}"), info(&mut rc, "lb:{r}"));
}

#[test]
fn info_bad_input_and_acl() {
    let s = Server::start();
    let mut c = s.conn();
    q(&mut c, &["RANK.INCR", "lb:{a}", "a", "1"]).unwrap();
    q(&mut c, &["SET", "str", "x"]).unwrap();
    q(&mut c, &["ZADD", "plainz", "1", "m"]).unwrap();
    let before = keyspace(&mut c);
    assert!(err(&mut c, &["RANK.INFO"]).contains("wrong number"));
    assert!(err(&mut c, &["RANK.INFO", "lb:{a}", "x"]).contains("wrong number"));
    assert!(err(&mut c, &["RANK.INFO", "str"]).starts_with("WRONGTYPE"));
    assert!(err(&mut c, &["RANK.INFO", "plainz"]).starts_with("ERR board identity missing:"));
    acl_setuser(&mut c, &["other", "on", ">pw", "~other:*", "+@all"]);
    let e = err(&mut s.conn_as("other", "pw"), &["RANK.INFO", "lb:{a}"]);
    assert!(e.starts_with("NOPERM"), "{e}");
    acl_setuser(&mut c, &["reader", "on", ">pw", "%R~lb:*", "+@all"]);
    assert_eq!(
        info(&mut s.conn_as("reader", "pw"), "lb:{a}")["members"],
        "1"
    );
    assert_eq!(keyspace(&mut c), before);
}
