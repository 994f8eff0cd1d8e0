//! Bad input to the `HOT.*` commands (split out of tests/hot.rs): wrong arity,
//! bad times, limits, windows and options, wrong types, and that a failed
//! command writes nothing. Times are milliseconds since the epoch inside the
//! tests and unix seconds (with up to 3 decimals) on the wire.

mod common;
use common::*;
#[path = "common/hot_client.rs"]
mod hot_client;
use hot_client::*;
#[path = "common/hot_helpers.rs"]
mod hot_helpers;
#[path = "common/models.rs"]
mod models;
use hot_helpers::*;
use redis::Connection;

// ---------------------------------------------------------------------------
// 5. Bad input
// ---------------------------------------------------------------------------

#[test]
fn wrong_arity_is_the_standard_error_for_every_command() {
    let s = Server::start();
    let mut c = s.conn();
    let cases: [(&str, &[&str]); 13] = [
        ("hot.publish", &["HOT.PUBLISH"]),
        ("hot.publish", &["HOT.PUBLISH", "hot:{a}"]),
        ("hot.publish", &["HOT.PUBLISH", "hot:{a}", "a"]),
        ("hot.publish", &["HOT.PUBLISH", "hot:{a}", "a", "1", "2"]),
        ("hot.view", &["HOT.VIEW"]),
        ("hot.view", &["HOT.VIEW", "hot:{a}"]),
        ("hot.view", &["HOT.VIEW", "hot:{a}", "a"]),
        (
            "hot.view",
            &["HOT.VIEW", "hot:{a}", "a", "v", "AT", "1", "x"],
        ),
        ("hot.top", &["HOT.TOP"]),
        (
            "hot.top",
            &[
                "HOT.TOP",
                "hot:{a}",
                "BY",
                "hot",
                "LIMIT",
                "1",
                "WINDOW",
                "1h",
                "WITHSCORES",
                "AT",
                "1",
                "WITHSCORES",
            ],
        ),
        ("hot.stats", &["HOT.STATS"]),
        ("hot.stats", &["HOT.STATS", "hot:{a}"]),
        ("hot.stats", &["HOT.STATS", "hot:{a}", "a", "AT", "1", "x"]),
    ];
    for (name, args) in cases {
        let e = err(&mut c, args);
        assert_eq!(
            e,
            format!("ERR wrong number of arguments for '{name}' command"),
            "{args:?}"
        );
    }
    assert!(snapshot(&mut c).is_empty());
}

#[test]
fn bad_times_are_refused_naming_the_argument() {
    let s = Server::start();
    let mut c = s.conn();
    view(&mut c, b"hot:{a}", b"a", b"v", T0);
    let before = snapshot(&mut c);
    let bads = [
        "abc",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "1e400",
        "1e9",
        "-1",
        "-0",
        "1.2345",
        "1700000000.0001",
        "",
        " 1",
        "1 ",
        "+1",
        "1.",
        ".5",
        "0x10",
        "253402300800",
        "99999999999999999999",
        "1,5",
    ];
    for bad in bads {
        let checks: [(&str, Vec<&str>); 4] = [
            ("published_at", vec!["HOT.PUBLISH", "hot:{a}", "a", bad]),
            ("AT", vec!["HOT.VIEW", "hot:{a}", "a", "v", "AT", bad]),
            ("AT", vec!["HOT.TOP", "hot:{a}", "AT", bad]),
            ("AT", vec!["HOT.STATS", "hot:{a}", "a", "AT", bad]),
        ];
        for (name, args) in checks {
            let e = err(&mut c, &args);
            assert!(e.starts_with(&format!("ERR {name} ")), "{args:?}: {e}");
        }
    }
    // Up to three decimals and the largest time are accepted.
    for good in [
        "0",
        "0.001",
        "1700000000.5",
        "1700000000.12",
        "1700000000.123",
        "253402300799.999",
    ] {
        assert!(
            run(&mut c, &[b"HOT.TOP", b"hot:{a}", b"AT", good.as_bytes()]).is_ok(),
            "{good}"
        );
        assert!(
            run(
                &mut c,
                &[b"HOT.STATS", b"hot:{a}", b"a", b"AT", good.as_bytes()]
            )
            .is_ok(),
            "{good}"
        );
    }
    assert_eq!(snapshot(&mut c), before, "a failed command wrote");
}

#[test]
fn view_at_later_than_the_server_clock_is_refused() {
    let s = Server::start();
    let mut c = s.conn();
    for at in [
        now_ms() + 60_000,
        now_ms() + 3650 * DAY,
        253_402_300_799_999,
    ] {
        let e = fail(
            &mut c,
            &[
                b"HOT.VIEW",
                b"hot:{a}",
                b"a",
                b"v",
                b"AT",
                ts(at).as_bytes(),
            ],
        );
        assert!(
            e.starts_with("ERR AT ") && e.contains("server clock"),
            "{e}"
        );
    }
    assert!(snapshot(&mut c).is_empty());
    // Now (and the past) is fine; HOT.PUBLISH accepts future publish times.
    assert_eq!(
        view(&mut c, b"hot:{a}", b"a", b"v", now_ms() - 1).status,
        "counted"
    );
    assert_eq!(publish(&mut c, b"hot:{a}", b"b", now_ms() + DAY), 1);
}

#[test]
fn bad_limit_window_and_unknown_options_are_refused() {
    let s = Server::start();
    let mut c = s.conn();
    view(&mut c, b"hot:{a}", b"a", b"v", T0);
    let before = snapshot(&mut c);
    for bad in [
        "0",
        "-1",
        "abc",
        "10001",
        "1.5",
        "",
        "+1",
        "1e3",
        " 1",
        "99999999999999999999",
    ] {
        let e = err(&mut c, &["HOT.TOP", "hot:{a}", "LIMIT", bad]);
        assert!(e.starts_with("ERR LIMIT "), "LIMIT {bad:?}: {e}");
    }
    for bad in [
        "0", "0s", "0.0005d", "abc", "-1h", "1w", "h", "s", "", "1.2345h", "1e3", "nan", "inf",
        "1h30m", "36501d", "1H", " 1h", "1.h", "+1h",
    ] {
        let e = err(&mut c, &["HOT.TOP", "hot:{a}", "WINDOW", bad]);
        assert!(e.starts_with("ERR WINDOW "), "WINDOW {bad:?}: {e}");
    }
    // An option without its value names the option.
    for opt in ["LIMIT", "WINDOW", "AT"] {
        let e = err(&mut c, &["HOT.TOP", "hot:{a}", opt]);
        assert!(e.starts_with("ERR ") && e.contains(opt), "{opt}: {e}");
    }
    let e = err(&mut c, &["HOT.VIEW", "hot:{a}", "a", "v", "AT"]);
    assert!(e.starts_with("ERR ") && e.contains("AT"), "{e}");
    let e = err(&mut c, &["HOT.STATS", "hot:{a}", "a", "AT"]);
    assert!(e.starts_with("ERR ") && e.contains("AT"), "{e}");
    // Unknown options.
    let e = err(&mut c, &["HOT.TOP", "hot:{a}", "FOO"]);
    assert!(e.starts_with("ERR ") && e.contains("FOO"), "{e}");
    let e = err(&mut c, &["HOT.TOP", "hot:{a}", "LIMIT", "1", "BYSCORE"]);
    assert!(e.starts_with("ERR ") && e.contains("BYSCORE"), "{e}");
    for args in [
        vec!["HOT.VIEW", "hot:{a}", "a", "v", "FOO", "1"],
        vec!["HOT.VIEW", "hot:{a}", "a", "v", "LIMIT", "1"],
        vec!["HOT.STATS", "hot:{a}", "a", "FOO"],
        vec!["HOT.STATS", "hot:{a}", "a", "FOO", "1"],
    ] {
        let e = err(&mut c, &args);
        assert!(e.starts_with("ERR syntax error"), "{args:?}: {e}");
    }
    assert_eq!(snapshot(&mut c), before, "a failed command wrote");
}

#[test]
fn wrongtype_board_is_refused_by_every_command_and_nothing_is_written() {
    let s = Server::start();
    let mut c = s.conn();
    let _: () = redis::cmd("SET")
        .arg("hot:{str}")
        .arg("x")
        .query(&mut c)
        .unwrap();
    let _: () = redis::cmd("RPUSH")
        .arg("hot:{list}")
        .arg("x")
        .query(&mut c)
        .unwrap();
    let before = snapshot(&mut c);
    for b in ["hot:{str}", "hot:{list}"] {
        let at = ts(T0);
        for args in [
            vec!["HOT.PUBLISH", b, "a", "1700000000"],
            vec!["HOT.VIEW", b, "a", "v"],
            vec!["HOT.VIEW", b, "a", "v", "AT", &at],
            vec!["HOT.TOP", b],
            vec!["HOT.TOP", b, "LIMIT", "5", "WITHSCORES", "AT", &at],
            vec!["HOT.STATS", b, "a"],
        ] {
            let e = err(&mut c, &args);
            assert!(e.starts_with("WRONGTYPE "), "{args:?}: {e}");
        }
    }
    assert_eq!(snapshot(&mut c), before);
    assert_eq!(int(&ok(&mut c, &[b"DBSIZE"])), 2);
}

/// A board record (`K\0board`) that is not a string: the reads that take
/// the record from the handle their epoch lookup opened (HOT.TOP, HOT.STATS)
/// refuse it as WRONGTYPE, as the writes and the admin commands do, and
/// write nothing.
#[test]
fn a_board_record_of_another_type_is_wrongtype_for_the_reads() {
    let s = Server::start();
    let mut c = s.conn();
    ok(&mut c, &[b"HOT.VIEW".as_slice(), b"hot:{rec}", b"a", b"v"]);
    ok(&mut c, &[b"DEL".as_slice(), b"hot:{rec}\0board"]);
    ok(
        &mut c,
        &[b"HSET".as_slice(), b"hot:{rec}\0board", b"f", b"v"],
    );
    let before = snapshot(&mut c);
    for args in [
        vec!["HOT.TOP", "hot:{rec}"],
        vec!["HOT.TOP", "hot:{rec}", "BY", "trending"],
        vec!["HOT.STATS", "hot:{rec}", "a"],
        vec!["HOT.VIEW", "hot:{rec}", "a", "v"],
    ] {
        let e = err(&mut c, &args);
        assert!(e.starts_with("WRONGTYPE "), "{args:?}: {e}");
    }
    assert_eq!(snapshot(&mut c), before);
}

#[test]
fn failed_view_writes_nothing() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{n}";
    // A healthy board with one article, so there is something to disturb.
    publish(&mut c, b, b"ok", T0);
    view(&mut c, b, b"ok", b"v", T0);
    let set = |c: &mut Connection, k: &[u8], v: &[u8]| {
        ok(c, &[b"SET", k, v]);
    };
    // Plant broken derived keys, one article each.
    set(&mut c, &derived(b, "uv", b"hll-garbage"), b"garbage");
    // Sparse HyperLogLogs with the cached cardinality marked invalid (so
    // PFCOUNT reads the registers): one with no register runs at all
    // (PFADD refuses it), one with a valid body plus a stray opcode (PFADD
    // accepts it, PFCOUNT refuses it).
    let hll_head = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80";
    set(&mut c, &derived(b, "uv", b"hll-empty"), hll_head);
    set(
        &mut c,
        &derived(b, "uv", b"hll-trailing"),
        &[&hll_head[..], b"\x7f\xf5\x84\x08\x55"].concat(),
    );
    set(&mut c, &derived(b, "pv", b"pv-text"), b"abc");
    set(
        &mut c,
        &derived(b, "pv", b"pv-max"),
        i64::MAX.to_string().as_bytes(),
    );
    // A whole article (PV counter, HyperLogLog and publish time): one whose
    // PV counter stood alone would read as what eviction left of an article
    // and start afresh (docs/eviction.md), not overflow.
    ok(&mut c, &[b"PFADD", &derived(b, "uv", b"pv-max"), b"v0"]);
    ok(
        &mut c,
        &[
            b"HSET",
            &derived(b, "meta", b"pv-max"),
            b"publishedAt",
            T0.to_string().as_bytes(),
        ],
    );
    ok(&mut c, &[b"RPUSH", &derived(b, "meta", b"meta-list"), b"x"]);
    ok(
        &mut c,
        &[b"HSET", &derived(b, "pv", b"pv-hash"), b"f", b"1"],
    );
    let before = snapshot(&mut c);
    let dbsize = int(&ok(&mut c, &[b"DBSIZE"]));
    for (article, code) in [
        (&b"hll-garbage"[..], "WRONGTYPE"),
        (b"hll-empty", "INVALIDOBJ"),
        (b"pv-text", "ERR"),
        (b"pv-max", "ERR"),
        (b"meta-list", "WRONGTYPE"),
        (b"pv-hash", "WRONGTYPE"),
    ] {
        for visitor in [&b"v"[..], b"new-visitor"] {
            let e = fail(
                &mut c,
                &[
                    b"HOT.VIEW",
                    b,
                    article,
                    visitor,
                    b"AT",
                    ts(T0 + 1000).as_bytes(),
                ],
            );
            assert!(
                e.starts_with(code),
                "{}: {e}",
                String::from_utf8_lossy(article)
            );
            assert_eq!(
                snapshot(&mut c),
                before,
                "HOT.VIEW {} wrote",
                String::from_utf8_lossy(article)
            );
        }
    }
    // PFADD may rewrite a corrupt HyperLogLog before PFCOUNT refuses it;
    // every other key stays as it was.
    let uv_key = derived(b, "uv", b"hll-trailing");
    for visitor in [&b"v"[..], b"new-visitor"] {
        let e = fail(
            &mut c,
            &[
                b"HOT.VIEW",
                b,
                b"hll-trailing",
                visitor,
                b"AT",
                ts(T0 + 1000).as_bytes(),
            ],
        );
        assert!(e.starts_with("INVALIDOBJ"), "{e}");
        let mut after = snapshot(&mut c);
        assert!(after.remove(&uv_key).is_some());
        let mut want = before.clone();
        want.remove(&uv_key);
        assert_eq!(after, want, "HOT.VIEW hll-trailing wrote");
    }
    let before = snapshot(&mut c);
    // HOT.PUBLISH on a broken article writes nothing either.
    for article in [&b"pv-text"[..], b"meta-list", b"pv-hash"] {
        fail(&mut c, &[b"HOT.PUBLISH", b, article, b"1700000000"]);
        assert_eq!(
            snapshot(&mut c),
            before,
            "HOT.PUBLISH {} wrote",
            String::from_utf8_lossy(article)
        );
    }
    // The board key itself of the wrong type.
    let lb: &[u8] = b"hot:{lst}";
    ok(&mut c, &[b"RPUSH", lb, b"x"]);
    let before = snapshot(&mut c);
    fail(&mut c, &[b"HOT.VIEW", lb, b"a", b"v"]);
    fail(&mut c, &[b"HOT.PUBLISH", lb, b"a", b"1"]);
    assert_eq!(snapshot(&mut c), before);
    assert_eq!(int(&ok(&mut c, &[b"DBSIZE"])), dbsize + 1);
    // The healthy article is untouched and still counts.
    assert_eq!(view(&mut c, b, b"ok", b"w", T0 + 1000).pv, 2);
}
