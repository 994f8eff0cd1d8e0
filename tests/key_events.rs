//! The deletes and removals hotrank does through the key API fire the same
//! keyspace events, signal WATCH the same way, and replicate the same
//! commands as the plain commands they stand for: RANK.CREATE (SET of the
//! layout key), RANK.REM (ZREM), RANK.DROP (UNLINK), and HOT.VIEW's board
//! upkeep (ZREM of the board and the publish index, DEL of the counters).
//! Each check runs the plain command on a twin key next to the module's, so
//! the expected events come from the server itself, not from this file.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::*;
#[path = "common/hot_client.rs"]
mod hot_client;
use hot_client::*;
use redis::{Connection, Value};

fn ok(c: &mut Connection, args: &[&str]) -> Value {
    q(c, args).unwrap_or_else(|e| panic!("{args:?} failed: {e}"))
}

/// The event names `events` fired on `key`, in order.
fn names_on(events: &[(String, Vec<u8>)], key: &[u8]) -> Vec<String> {
    events
        .iter()
        .filter(|(_, k)| k == key)
        .map(|(e, _)| e.clone())
        .collect()
}

/// The layout key of RANK board `board`, which has a hash tag
/// (`board\0layout`; see the README's key layout).
fn layout_key(board: &str) -> Vec<u8> {
    let mut k = board.as_bytes().to_vec();
    k.extend_from_slice(b"\0layout");
    k
}

fn server_with_events() -> (Server, Connection) {
    let s = Server::start();
    let mut c = s.conn();
    config_set(&mut c, "notify-keyspace-events", "KEA");
    (s, c)
}

#[test]
fn rank_create_fires_set_on_the_layout_key_as_set_does() {
    let (s, mut c) = server_with_events();
    let lk = layout_key("lb:{c}");
    let seen = events_during(&s, || {
        ok(&mut c, &["RANK.CREATE", "lb:{c}", "MIN", "0", "MAX", "100"]);
    });
    let plain = events_during(&s, || {
        ok(&mut c, &["SET", "twin:{c}", "v1 s 0 100"]);
    });
    assert_eq!(names_on(&seen, &lk), names_on(&plain, b"twin:{c}"));
    assert_eq!(names_on(&seen, &lk), ["set"]);
    assert_eq!(ok(&mut c, &["TTL", "twin:{c}"]), Value::Int(-1));
}

#[test]
fn rank_rem_fires_zrem_then_del_as_zrem_does_and_nothing_when_nothing_goes() {
    let (s, mut c) = server_with_events();
    for m in ["a", "b", "c"] {
        ok(&mut c, &["RANK.INCR", "lb:{r}", m, "5"]);
        ok(&mut c, &["ZADD", "twin:{r}", "1", m]);
    }
    // Some members go: one zrem event for the command.
    let seen = events_during(&s, || {
        assert_eq!(
            ok(&mut c, &["RANK.REM", "lb:{r}", "a", "x", "a"]),
            Value::Int(1)
        );
    });
    let plain = events_during(&s, || {
        assert_eq!(
            ok(&mut c, &["ZREM", "twin:{r}", "a", "x", "a"]),
            Value::Int(1)
        );
    });
    assert_eq!(names_on(&seen, b"lb:{r}"), names_on(&plain, b"twin:{r}"));
    // Nothing goes: no event at all.
    let seen = events_during(&s, || {
        assert_eq!(ok(&mut c, &["RANK.REM", "lb:{r}", "x"]), Value::Int(0));
    });
    assert_eq!(seen, vec![]);
    // The last members go: zrem, then del of the emptied ZSET.
    let seen = events_during(&s, || {
        assert_eq!(ok(&mut c, &["RANK.REM", "lb:{r}", "b", "c"]), Value::Int(2));
    });
    let plain = events_during(&s, || {
        assert_eq!(ok(&mut c, &["ZREM", "twin:{r}", "b", "c"]), Value::Int(2));
    });
    assert_eq!(names_on(&seen, b"lb:{r}"), names_on(&plain, b"twin:{r}"));
    assert_eq!(names_on(&seen, b"lb:{r}"), ["zrem", "del"]);
    assert_eq!(ok(&mut c, &["EXISTS", "lb:{r}"]), Value::Int(0));
}

#[test]
fn rank_drop_fires_del_on_each_key_as_unlink_does() {
    let (s, mut c) = server_with_events();
    ok(&mut c, &["RANK.CREATE", "lb:{d}", "PERIODS", "day"]);
    ok(&mut c, &["RANK.INCR", "lb:{d}", "a", "5"]);
    let seen = events_during(&s, || {
        assert_eq!(ok(&mut c, &["RANK.DROP", "lb:{d}"]), Value::Int(3));
    });
    let dels: Vec<&[u8]> = seen
        .iter()
        .filter(|(e, _)| e == "del")
        .map(|(_, k)| k.as_slice())
        .collect();
    assert_eq!(dels.len(), 3, "{seen:?}");
    assert_eq!(dels[0], b"lb:{d}");
    assert_eq!(dels[1], layout_key("lb:{d}").as_slice());
    assert!(dels[2].starts_with(b"lb:{d}\0period:d"), "{seen:?}");
    assert!(seen.iter().all(|(e, _)| e == "del"), "{seen:?}");
    // A second drop deletes nothing and fires nothing.
    let seen = events_during(&s, || {
        assert_eq!(ok(&mut c, &["RANK.DROP", "lb:{d}"]), Value::Int(0));
    });
    assert_eq!(seen, vec![]);
}

#[test]
fn watch_on_a_board_fails_after_rank_rem_and_rank_drop_and_holds_when_nothing_changed() {
    let s = Server::start();
    let mut c = s.conn();
    let mut w = s.conn();
    ok(&mut c, &["RANK.INCR", "lb:{w}", "a", "5"]);
    let watched_exec = |w: &mut Connection, c: &mut Connection, cmd: &[&str]| {
        ok(w, &["WATCH", "lb:{w}"]);
        ok(c, cmd);
        ok(w, &["MULTI"]);
        ok(w, &["PING"]);
        ok(w, &["EXEC"])
    };
    // Nothing removed: the transaction runs.
    assert_ne!(
        watched_exec(&mut w, &mut c, &["RANK.REM", "lb:{w}", "x"]),
        Value::Nil
    );
    ok(&mut c, &["RANK.INCR", "lb:{w}", "b", "5"]);
    assert_eq!(
        watched_exec(&mut w, &mut c, &["RANK.REM", "lb:{w}", "a"]),
        Value::Nil
    );
    assert_eq!(
        watched_exec(&mut w, &mut c, &["RANK.DROP", "lb:{w}"]),
        Value::Nil
    );
}

#[test]
fn trimming_a_hot_board_fires_zrem_and_del_as_the_plain_commands_do() {
    let (s, mut c) = server_with_events();
    // Trim when the board holds more than 5 + 16 articles.
    config_set(&mut c, "hotrank.max-articles", "5");
    let b: &[u8] = b"hot:{t}";
    let t = now_s() * 1000 - 100_000;
    for i in 0..21 {
        // Article i gets i + 1 views: the last ones score highest.
        for v in 0..=i {
            let (a, vis) = (format!("a{i:02}"), format!("v{v}"));
            view(&mut c, b, a.as_bytes(), vis.as_bytes(), t + i);
        }
    }
    // A 22nd article: the board is trimmed to the top 5 by exact score
    // (a16..a20); a00..a15 and the new article itself are taken off it.
    let seen = events_during(&s, || {
        view(&mut c, b, b"a21", b"v0", t + 50);
    });
    assert_eq!(ok(&mut c, &["ZCARD", "hot:{t}"]), Value::Int(5));
    // The board's events: the view's zadd, then one zrem for the trim.
    assert_eq!(names_on(&seen, b), ["zadd", "zrem"]);
    // A trim takes articles off the board only: their PV counters and
    // HyperLogLogs stay (until retention), with no del event.
    for i in (0..16).chain([21]) {
        let a = format!("a{i:02}");
        for kind in ["pv", "uv"] {
            let k = derived(b, kind, a.as_bytes());
            assert!(
                !names_on(&seen, &k).contains(&"del".to_string()),
                "{kind} of {a}: {seen:?}"
            );
            let name = std::str::from_utf8(&k).unwrap();
            assert_eq!(ok(&mut c, &["EXISTS", name]), Value::Int(1));
        }
    }
    // The same events as ZREM and DEL of twins would fire.
    ok(&mut c, &["ZADD", "twin:{t}", "1", "x", "2", "y"]);
    ok(&mut c, &["SET", "twin2:{t}", "1"]);
    let plain = events_during(&s, || {
        ok(&mut c, &["ZREM", "twin:{t}", "x", "nope"]);
        ok(&mut c, &["DEL", "twin2:{t}", "nope:{t}"]);
    });
    assert_eq!(names_on(&plain, b"twin:{t}"), ["zrem"]);
    assert_eq!(names_on(&plain, b"twin2:{t}"), ["del"]);
}
