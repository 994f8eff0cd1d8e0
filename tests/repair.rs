//! A board whose identity key is gone (docs/eviction.md), unit by unit:
//! the one documented error with nothing written, no implicit creation
//! under an `allkeys-*` policy, HOT.REPAIR and RANK.REPAIR (and what they
//! refuse), an article whose PV counter, HyperLogLog or meta hash was lost
//! apart from the others, and the replication of all of it in both
//! `hotrank.replicate` modes and through the AOF.

mod common;
use common::repl::{digest, wait_replica, AOF_ALWAYS, DEBUG_LOCAL};
use common::*;
use redis::{Connection, Value};

const IDENTITY_MISSING: &str = "ERR board identity missing:";

fn ok(c: &mut Connection, line: &str) -> Value {
    q(c, &words(line)).unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn fail(c: &mut Connection, line: &str) -> String {
    err(c, &words(line))
}

/// Deletes a derived key `<board>\0<suffix>`, as eviction would.
fn evict(c: &mut Connection, board: &str, suffix: &str) {
    let name = format!("{board}\0{suffix}");
    let n: i64 = redis::cmd("DEL").arg(&name).query(c).expect("DEL");
    assert_eq!(n, 1, "{} was not there", name.escape_default());
}

use common::reply_text as text;

fn field(v: &Value, name: &str) -> String {
    match v {
        Value::Array(a) => a
            .chunks(2)
            .find(|p| text(&p[0]) == name)
            .map(|p| text(&p[1]))
            .unwrap_or_else(|| panic!("no {name} in {v:?}")),
        other => panic!("{other:?}"),
    }
}

fn flat(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a.iter().map(text).collect(),
        other => vec![text(other)],
    }
}

#[test]
fn a_hot_board_without_its_record_refuses_everything_with_one_error_and_writes_nothing() {
    let s = Server::start();
    let mut c = s.conn();
    ok(&mut c, "HOT.CREATE h:{x} GAMMA 1.1");
    ok(&mut c, "HOT.VIEW h:{x} a1 v1 AT 1700000000");
    ok(&mut c, "HOT.VIEW h:{x} a2 v1 AT 1700000001");
    evict(&mut c, "h:{x}", "board");
    let before = keyspace(&mut c);
    for line in [
        "HOT.VIEW h:{x} a1 v2",
        "HOT.PUBLISH h:{x} a3 1700000000",
        "HOT.TOP h:{x}",
        "HOT.STATS h:{x} a1",
        "HOT.INFO h:{x}",
        "HOT.EXPORT h:{x} 0",
        "HOT.REM h:{x} a1",
        "HOT.ALTER h:{x} GAMMA 1.2",
        "HOT.DROP h:{x}",
    ] {
        let e = fail(&mut c, line);
        assert!(e.starts_with(IDENTITY_MISSING), "{line}: {e}");
        assert!(e.contains("HOT.REPAIR h:{x}"), "{line}: the way out: {e}");
        assert!(e.contains("maxmemory-policy is noeviction"), "{line}: {e}");
        assert!(!e.contains("not made by"), "{line}: {e}");
    }
    assert_eq!(keyspace(&mut c), before, "nothing written");
    // A plain ZSET gets the same error: the module cannot tell the two apart.
    ok(&mut c, "ZADD plain 1 a");
    assert!(fail(&mut c, "HOT.VIEW plain a v").starts_with(IDENTITY_MISSING));
}

#[test]
fn a_leaderboard_without_its_layout_refuses_everything_with_one_error() {
    let s = Server::start();
    let mut c = s.conn();
    ok(
        &mut c,
        "RANK.CREATE l:{x} ORDER asc RESOLUTION ms MIN 0 MAX 3600000",
    );
    ok(&mut c, "RANK.SET l:{x} p1 1234");
    evict(&mut c, "l:{x}", "layout");
    let before = keyspace(&mut c);
    for line in [
        "RANK.SET l:{x} p1 1000 BEST",
        "RANK.INCR l:{x} p2 5",
        "RANK.MINCR l:{x} 1 p1",
        "RANK.SCORE l:{x} p1",
        "RANK.RANGE l:{x} 0 -1",
        "RANK.INFO l:{x}",
        "RANK.REM l:{x} p1",
        "RANK.DROP l:{x}",
    ] {
        let e = fail(&mut c, line);
        assert!(e.starts_with(IDENTITY_MISSING), "{line}: {e}");
        assert!(e.contains("RANK.REPAIR l:{x}"), "{line}: {e}");
    }
    assert_eq!(keyspace(&mut c), before, "nothing written");
    // The other family's board: named as such, no repair offered.
    ok(&mut c, "HOT.VIEW h:{y} a v");
    let e = fail(&mut c, "RANK.INCR h:{y} a 1");
    assert!(e.contains("is a HOT board"), "{e}");
    ok(&mut c, "RANK.INCR r:{y} a 1");
    let e = fail(&mut c, "HOT.VIEW r:{y} a v");
    assert!(e.contains("is a RANK board"), "{e}");
}

#[test]
fn under_an_allkeys_policy_no_board_is_created_implicitly() {
    let s = Server::start_with(
        &["--maxmemory-policy", "allkeys-lru", "--maxmemory", "1gb"],
        true,
    );
    let mut c = s.conn();
    for (line, fam) in [
        ("HOT.VIEW h:{n} a v", "HOT.CREATE h:{n}"),
        ("HOT.PUBLISH h:{n} a 1700000000", "HOT.CREATE h:{n}"),
        ("HOT.INFO h:{n}", "HOT.CREATE h:{n}"),
        ("RANK.INCR l:{n} m 1", "RANK.CREATE l:{n}"),
        ("RANK.SET l:{n} m 1", "RANK.CREATE l:{n}"),
        ("RANK.MINCR l:{n} 1 m", "RANK.CREATE l:{n}"),
        ("RANK.INFO l:{n}", "RANK.CREATE l:{n}"),
    ] {
        let e = fail(&mut c, line);
        assert!(e.starts_with(IDENTITY_MISSING), "{line}: {e}");
        assert!(e.contains("maxmemory-policy allkeys-lru"), "{line}: {e}");
        assert!(e.contains(fam), "{line}: the way out: {e}");
    }
    let n: i64 = redis::cmd("DBSIZE").query(&mut c).expect("DBSIZE");
    assert_eq!(n, 0, "nothing written");
    // Reads of a missing board answer as before.
    assert_eq!(ok(&mut c, "HOT.TOP h:{n}"), Value::Array(vec![]));
    assert_eq!(ok(&mut c, "RANK.SCORE l:{n} m"), Value::Nil);
    // An explicit create, then writes as usual.
    ok(&mut c, "HOT.CREATE h:{n} GAMMA 1.1");
    ok(&mut c, "HOT.VIEW h:{n} a v");
    assert_eq!(field(&ok(&mut c, "HOT.INFO h:{n}"), "eviction_unsafe"), "1");
    assert_eq!(
        field(&ok(&mut c, "HOT.INFO h:{n}"), "maxmemory_policy"),
        "allkeys-lru"
    );
    ok(&mut c, "RANK.CREATE l:{n} ORDER asc");
    ok(&mut c, "RANK.SET l:{n} m 5 BEST");
    assert_eq!(field(&ok(&mut c, "RANK.INFO l:{n}"), "order"), "asc");
    assert_eq!(
        field(&ok(&mut c, "RANK.INFO l:{n}"), "eviction_unsafe"),
        "1"
    );
    // A safe policy: implicit creation as before.
    config_set(&mut c, "maxmemory-policy", "volatile-lru");
    ok(&mut c, "RANK.INCR l2:{n} m 1");
    ok(&mut c, "HOT.VIEW h2:{n} a v");
    assert_eq!(
        field(&ok(&mut c, "RANK.INFO l2:{n}"), "eviction_unsafe"),
        "0"
    );
}

#[test]
fn hot_repair_rebuilds_the_record_with_the_given_settings_and_rescores() {
    let s = Server::start();
    let mut c = s.conn();
    ok(&mut c, "HOT.CREATE h:{r} GAMMA 1.1 MAX-ARTICLES 50");
    let t0 = now_s() - 3600;
    for (a, v, dt) in [
        ("a1", "v1", 0),
        ("a1", "v2", 1),
        ("a2", "v1", 2),
        ("a3", "v3", 3),
    ] {
        let at = (t0 + dt).to_string();
        q(&mut c, &["HOT.VIEW", "h:{r}", a, v, "AT", &at]).expect("view");
    }
    let at = (t0 + 600).to_string();
    let top_before = ok(&mut c, &format!("HOT.TOP h:{{r}} WITHSCORES AT {at}"));
    evict(&mut c, "h:{r}", "board");
    ok(&mut c, "HOT.REPAIR h:{r} GAMMA 1.1 MAX-ARTICLES 50");
    let info = ok(&mut c, "HOT.INFO h:{r}");
    assert_eq!(field(&info, "gamma"), "1.1");
    assert_eq!(field(&info, "max-articles"), "50");
    assert_eq!(field(&info, "articles"), "3");
    // The same ranking as before the loss, at any time (exact either way).
    let top_after = ok(&mut c, &format!("HOT.TOP h:{{r}} WITHSCORES AT {at}"));
    assert_eq!(flat(&top_after), flat(&top_before));
    ok(&mut c, "HOT.VIEW h:{r} a2 v9");
    // Refusals, nothing written.
    let before = keyspace(&mut c);
    let healthy = fail(&mut c, "HOT.REPAIR h:{r}");
    assert!(healthy.contains("not damaged"), "{healthy}");
    assert!(fail(&mut c, "HOT.REPAIR nosuch:{r}").contains("no board data"));
    ok(&mut c, "SET str:{r} x");
    assert!(fail(&mut c, "HOT.REPAIR str:{r}").starts_with("WRONGTYPE"));
    ok(&mut c, "RANK.INCR l:{r} m 1");
    assert!(fail(&mut c, "HOT.REPAIR l:{r}").contains("is a RANK board"));
    evict(&mut c, "h:{r}", "board");
    let before_bad = keyspace(&mut c);
    assert!(fail(&mut c, "HOT.REPAIR h:{r} GAMMA 11").contains("GAMMA"));
    assert!(fail(&mut c, "HOT.REPAIR h:{r} FOO 1").starts_with("ERR"));
    assert_eq!(keyspace(&mut c), before_bad);
    ok(&mut c, "HOT.REPAIR h:{r} GAMMA 1.1 MAX-ARTICLES 50");
    let _ = before;
}

#[test]
fn rank_repair_rebuilds_the_layout_and_refuses_one_that_does_not_fit() {
    let s = Server::start();
    let mut c = s.conn();
    ok(
        &mut c,
        "RANK.CREATE l:{r} ORDER asc RESOLUTION ms MIN 0 MAX 3600000",
    );
    ok(&mut c, "RANK.SET l:{r} p1 61000 AT 1700000000");
    ok(&mut c, "RANK.SET l:{r} p2 59000 AT 1700000001");
    ok(&mut c, "RANK.SET l:{r} p3 3000000 AT 1700000002");
    let range = flat(&ok(&mut c, "RANK.RANGE l:{r} 0 -1 WITHSCORES WITHTIME"));
    evict(&mut c, "l:{r}", "layout");
    let before = keyspace(&mut c);
    // Scores up to 3000000 do not fit MAX 100: refused, nothing written.
    let e = fail(
        &mut c,
        "RANK.REPAIR l:{r} ORDER asc RESOLUTION ms MIN 0 MAX 100",
    );
    assert!(e.contains("cannot decode"), "{e}");
    assert!(fail(&mut c, "RANK.REPAIR l:{r} ORDER sideways").contains("ORDER"));
    assert_eq!(keyspace(&mut c), before);
    ok(
        &mut c,
        "RANK.REPAIR l:{r} ORDER asc RESOLUTION ms MIN 0 MAX 3600000",
    );
    assert_eq!(
        flat(&ok(&mut c, "RANK.RANGE l:{r} 0 -1 WITHSCORES WITHTIME")),
        range
    );
    let info = ok(&mut c, "RANK.INFO l:{r}");
    assert_eq!(
        (field(&info, "order"), field(&info, "resolution")),
        ("asc".into(), "ms".into())
    );
    // Writes go on with the board's own order.
    ok(&mut c, "RANK.SET l:{r} p1 50000 BEST");
    assert_eq!(flat(&ok(&mut c, "RANK.RANGE l:{r} 0 0"))[0], "p1");
    // Refusals.
    assert!(fail(&mut c, "RANK.REPAIR l:{r}").contains("not damaged"));
    assert!(fail(&mut c, "RANK.REPAIR nosuch:{r}").contains("no board data"));
    ok(&mut c, "SET str:{r} x");
    assert!(fail(&mut c, "RANK.REPAIR str:{r}").starts_with("WRONGTYPE"));
    ok(&mut c, "HOT.VIEW h:{r} a v");
    assert!(fail(&mut c, "RANK.REPAIR h:{r}").contains("is a HOT board"));
}

/// `[pv, uv, suspicious, published_at, score]` of HOT.STATS, nil as "nil".
fn stats(c: &mut Connection, article: &str) -> Vec<String> {
    flat(&ok(
        c,
        &format!("HOT.STATS p:{{a}} {article} AT 1700003600"),
    ))
}

#[test]
fn an_article_that_lost_a_key_reads_and_views_as_forgotten() {
    let s = Server::start();
    let mut c = s.conn();
    for a in ["a1", "a2", "a3", "a4"] {
        for v in ["v1", "v2", "v3"] {
            q(&mut c, &["HOT.VIEW", "p:{a}", a, v, "AT", "1700000000"]).expect("view");
        }
    }
    // The HyperLogLog lost: PV and UV read 0, the publish time stays.
    evict(&mut c, "p:{a}", "uv:a1");
    let s1 = stats(&mut c, "a1");
    assert_eq!((s1[1].as_str(), s1[3].as_str()), ("0", "0"), "{s1:?}");
    assert_eq!(s1[7], "1700000000", "{s1:?}");
    // The PV counter lost: the same.
    evict(&mut c, "p:{a}", "pv:a2");
    let s2 = stats(&mut c, "a2");
    assert_eq!((s2[1].as_str(), s2[3].as_str()), ("0", "0"), "{s2:?}");
    // The meta hash lost: the article is unknown.
    evict(&mut c, "p:{a}", "meta:a3");
    assert_eq!(ok(&mut c, "HOT.STATS p:{a} a3"), Value::Nil);
    // HOT.TOP ranks only the whole article.
    let top = flat(&ok(&mut c, "HOT.TOP p:{a} AT 1700003600"));
    assert_eq!(top, vec!["a4"]);
    // A view starts the counts afresh: one view, one visitor.
    for a in ["a1", "a2", "a3"] {
        let r = flat(&ok(
            &mut c,
            &format!("HOT.VIEW p:{{a}} {a} v9 AT 1700000100"),
        ));
        assert_eq!((r[0].as_str(), r[1].as_str()), ("1", "1"), "{a}: {r:?}");
    }
    // A publish does not bring lost counts back.
    evict(&mut c, "p:{a}", "meta:a4");
    ok(&mut c, "HOT.PUBLISH p:{a} a4 1700000000");
    let s4 = stats(&mut c, "a4");
    assert_eq!((s4[1].as_str(), s4[3].as_str()), ("0", "0"), "{s4:?}");
}

/// Every write of this file's story: lost records, layouts and article
/// keys, their repairs and views, on `c` (a master).
fn story(c: &mut Connection) {
    // A board made on the way, which a replica or an AOF load under an
    // allkeys policy must make too.
    ok(c, "HOT.VIEW imp:{s} a v AT 1700000000");
    ok(c, "RANK.INCR impl:{s} m 3");
    ok(c, "HOT.CREATE h:{s} GAMMA 1.1");
    for (a, v) in [("a1", "v1"), ("a1", "v2"), ("a2", "v1"), ("a3", "v1")] {
        q(c, &["HOT.VIEW", "h:{s}", a, v]).expect("view");
    }
    ok(c, "HOT.PUBLISH h:{s} a4 1700000000");
    evict(c, "h:{s}", "board");
    ok(c, "HOT.REPAIR h:{s} GAMMA 1.1");
    evict(c, "h:{s}", "uv:a1");
    ok(c, "HOT.VIEW h:{s} a1 v7");
    evict(c, "h:{s}", "meta:a2");
    ok(c, "HOT.PUBLISH h:{s} a2 1700000000");
    ok(
        c,
        "RANK.CREATE l:{s} ORDER asc RESOLUTION ms MIN 0 MAX 3600000 PERIODS day",
    );
    ok(c, "RANK.SET l:{s} p1 1234");
    ok(c, "RANK.SET l:{s} p2 999");
    evict(c, "l:{s}", "layout");
    ok(
        c,
        "RANK.REPAIR l:{s} ORDER asc RESOLUTION ms MIN 0 MAX 3600000 PERIODS day",
    );
    ok(c, "RANK.SET l:{s} p3 500 BEST");
    // Refused writes replicate nothing.
    config_set(c, "maxmemory", "1gb");
    config_set(c, "maxmemory-policy", "allkeys-lru");
    assert!(fail(c, "HOT.VIEW n:{s} a v").starts_with(IDENTITY_MISSING));
    assert!(fail(c, "RANK.INCR n:{s} a 1").starts_with(IDENTITY_MISSING));
    config_set(c, "maxmemory-policy", "noeviction");
}

#[test]
fn repairs_and_forgotten_articles_replicate_and_replay_the_same_in_both_modes() {
    for mode in ["effects", "commands"] {
        let mut n = node::Node::new(&format!("repair-{mode}"));
        n.start(&AOF_ALWAYS);
        let port = n.port.to_string();
        // The replica runs an allkeys policy: what the master sends is
        // never refused there.
        let mut args = vec![
            "--replicaof",
            "127.0.0.1",
            port.as_str(),
            "--maxmemory-policy",
            "allkeys-lru",
            "--maxmemory",
            "1gb",
        ];
        args.extend_from_slice(&DEBUG_LOCAL);
        let replica = Server::start_with(&args, true);
        wait_link_up(&replica);
        let mut m = n.conn();
        config_set(&mut m, "hotrank.replicate", mode);
        story(&mut m);
        wait_replica(&mut m);
        let mut r = replica.conn();
        let d = digest(&mut m);
        assert_eq!(digest(&mut r), d, "{mode}: replica differs");
        assert_eq!(
            field(&ok(&mut r, "HOT.INFO h:{s}"), "gamma"),
            "1.1",
            "{mode}"
        );
        // The AOF, replayed under an allkeys policy and other configs.
        n.kill9();
        let other = if mode == "effects" {
            "commands"
        } else {
            "effects"
        };
        let mut odd = vec![
            "gamma",
            "0.2",
            "replicate",
            other,
            "--maxmemory-policy",
            "allkeys-lru",
            "--maxmemory",
            "1gb",
        ];
        odd.extend_from_slice(&AOF_ALWAYS);
        n.start(&odd);
        let mut m = n.conn();
        assert_eq!(digest(&mut m), d, "{mode}: AOF replay differs");
    }
}
