//! `RANK.*` at the edges (split out of tests/rank.rs): extreme values, bad
//! input (nothing written on any error) and survival of the server.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
#[path = "common/rank_client.rs"]
mod rank_client;
use rank_client::*;
use redis::Value;

// ------------------------------------------------------- extreme values

#[test]
fn extreme_scores_are_exact_and_one_past_is_refused() {
    let mut s = Server::start();
    let c = &mut s.conn();
    let i64max = i64::MAX.to_string();
    let i64min = i64::MIN.to_string();
    let two53 = 9_007_199_254_740_992i64; // 2^53
    let near53 = (two53 - 1000).to_string();
    let near53_max = (two53 - 1000 + 4_294_967_295).to_string();
    let boards: Vec<(&str, Vec<&str>, i64, i64)> = vec![
        ("s", vec![], S_MIN, S_MAX),
        ("ms", vec!["RESOLUTION", "ms"], MS_MIN, MS_MAX),
        (
            "wide",
            vec!["MIN", "0", "MAX", "4294967295"],
            0,
            4_294_967_295,
        ),
        (
            "wide53",
            vec!["MIN", &near53, "MAX", &near53_max],
            two53 - 1000,
            two53 - 1000 + 4_294_967_295,
        ),
        (
            "top",
            vec!["MIN", "9223372032559808512", "MAX", &i64max],
            9_223_372_032_559_808_512,
            i64::MAX,
        ),
        (
            "bottom",
            vec![
                "RESOLUTION",
                "ms",
                "MIN",
                &i64min,
                "MAX",
                "-9223372036850581505",
            ],
            i64::MIN,
            -9_223_372_036_850_581_505,
        ),
        ("tiny", vec!["MIN", "-1", "MAX", "0"], -1, 0),
    ];
    for (k, opts, min, max) in &boards {
        let mut args = vec!["RANK.CREATE", k];
        args.extend_from_slice(opts);
        assert_eq!(ok(c, &args), Value::Okay, "{args:?}");
        let (mn, mx) = (min.to_string(), max.to_string());
        assert_eq!(
            ok(c, &["RANK.SET", k, "max", &mx, "AT", "1700000000"]),
            int(*max)
        );
        assert_eq!(
            ok(c, &["RANK.SET", k, "min", &mn, "AT", "1600000000"]),
            int(*min)
        );
        assert_eq!(ok(c, &["RANK.SCORE", k, "max"]), int(*max));
        assert_eq!(
            ok(c, &["RANK.SCORE", k, "min", "WITHTIME"]),
            withtime(*min, "1600000000")
        );
        assert_eq!(
            ok(c, &["RANK.RANGE", k, "0", "-1", "WITHSCORES"]),
            ranged(&[("max", *max), ("min", *min)])
        );
        assert_eq!(ok(c, &["RANK.RANK", k, "min", "TIES"]), int(1));
        // One past either end, by SET and by INCR.
        if let Some(v) = max.checked_add(1) {
            refused(
                c,
                &["RANK.SET", k, "x", &v.to_string()],
                &out_of_range(v, *min, *max),
            );
            refused(
                c,
                &["RANK.INCR", k, "max", "1"],
                &out_of_range(v, *min, *max),
            );
        } else {
            refused(
                c,
                &["RANK.INCR", k, "max", "1"],
                "ERR delta 1 would overflow the score",
            );
        }
        if let Some(v) = min.checked_sub(1) {
            refused(
                c,
                &["RANK.SET", k, "x", &v.to_string()],
                &out_of_range(v, *min, *max),
            );
            refused(
                c,
                &["RANK.INCR", k, "min", "-1"],
                &out_of_range(v, *min, *max),
            );
        } else {
            refused(
                c,
                &["RANK.INCR", k, "min", "-1"],
                "ERR delta -1 would overflow the score",
            );
        }
        // Stepping back inside works exactly.
        assert_eq!(ok(c, &["RANK.INCR", k, "max", "-1"]), int(max - 1));
        assert_eq!(ok(c, &["RANK.INCR", k, "min", "1"]), int(min + 1));
        assert_eq!(ok(c, &["RANK.INCR", k, "max", "1"]), int(*max));
        assert_eq!(ok(c, &["RANK.INCR", k, "min", "-1"]), int(*min));
    }
    // Around 2^53 on a wide layout: odd values a double cannot hold stay exact.
    for (m, v) in [
        ("p1", two53 + 1),
        ("p3", two53 + 3),
        ("p0", two53),
        ("m1", two53 - 1),
    ] {
        assert_eq!(
            ok(
                c,
                &["RANK.SET", "wide53", m, &v.to_string(), "AT", "1700000000"]
            ),
            int(v)
        );
        assert_eq!(ok(c, &["RANK.SCORE", "wide53", m]), int(v));
    }
    assert_eq!(
        ok(c, &["RANK.INCR", "wide53", "p1", "1", "AT", "1700000000"]),
        int(two53 + 2)
    );
    assert_eq!(
        ok(c, &["RANK.INCR", "wide53", "p1", "-1", "AT", "1700000000"]),
        int(two53 + 1)
    );
    assert_eq!(
        ok(c, &["RANK.RANGE", "wide53", "0", "-1", "WITHSCORES"]),
        ranged(&[
            ("max", two53 - 1000 + 4_294_967_295),
            ("p3", two53 + 3),
            ("p1", two53 + 1),
            ("p0", two53),
            ("m1", two53 - 1),
            ("min", two53 - 1000),
        ])
    );
    // Same on the unsigned 32-bit layout.
    for (m, v) in [("a", 4_294_967_294i64), ("b", 1), ("c", 2_147_483_648)] {
        assert_eq!(ok(c, &["RANK.SET", "wide", m, &v.to_string()]), int(v));
    }
    assert_eq!(
        ok(c, &["RANK.RANGE", "wide", "0", "-1", "WITHSCORES"]),
        ranged(&[
            ("max", 4_294_967_295),
            ("a", 4_294_967_294),
            ("c", 2_147_483_648),
            ("b", 1),
            ("min", 0)
        ])
    );
    assert_healthy(&mut s, c);
}

#[test]
fn i64_overflow_of_a_delta_is_refused() {
    let mut s = Server::start();
    let c = &mut s.conn();
    ok(c, &["RANK.SET", "lb", "pos", "5"]);
    ok(c, &["RANK.SET", "lb", "neg", "-5"]);
    refused(
        c,
        &["RANK.INCR", "lb", "pos", "9223372036854775807"],
        "ERR delta 9223372036854775807 would overflow the score",
    );
    refused(
        c,
        &["RANK.INCR", "lb", "neg", "-9223372036854775808"],
        "ERR delta -9223372036854775808 would overflow the score",
    );
    // In i64 but out of the layout: refused naming the value.
    refused(
        c,
        &["RANK.INCR", "lb", "neg", "9223372036854775807"],
        &out_of_range(i64::MAX - 5, S_MIN, S_MAX),
    );
    refused(
        c,
        &["RANK.INCR", "lb", "new", "-9223372036854775808"],
        &out_of_range(i64::MIN, S_MIN, S_MAX),
    );
    assert_eq!(
        ok(c, &["RANK.RANGE", "lb", "0", "-1", "WITHSCORES"]),
        ranged(&[("pos", 5), ("neg", -5)])
    );
    assert_healthy(&mut s, c);
}

#[test]
fn times_outside_the_layout_are_refused() {
    let mut s = Server::start();
    let c = &mut s.conn();
    ok(c, &["RANK.CREATE", "ms", "RESOLUTION", "ms"]);
    ok(c, &["RANK.CREATE", "wide", "MIN", "0", "MAX", "4294967295"]);
    for (k, last) in [
        ("s", EPOCH_S + (1 << 31) - 1),
        ("ms", (EPOCH_MS + (1 << 41) - 1) / 1000),
        ("wide", EPOCH_S + (1 << 30) - 1),
    ] {
        for at in ["1577836799", "1577836799.999", "0", "1000000000.5", "1.001"] {
            let want = format!(
                "ERR time {} is outside this board's range [1577836800, {last}] (unix seconds)",
                fmt_ms(parse_ms(at))
            );
            // The first write to "s" would also create the board: nothing is written.
            refused(c, &["RANK.SET", k, "a", "1", "AT", at], &want);
            refused(c, &["RANK.INCR", k, "a", "1", "AT", at], &want);
        }
        assert_eq!(
            ok(c, &["RANK.SET", k, "a", "1", "AT", "1577836800"]),
            int(1)
        );
        assert_eq!(
            ok(c, &["RANK.SCORE", k, "a", "WITHTIME"]),
            withtime(1, "1577836800")
        );
    }
    refused(
        c,
        &["RANK.SET", "s", "b", "1", "AT", "1577836799"],
        "ERR time 1577836799 is outside this board's range [1577836800, 3725320447] (unix seconds)",
    );
    refused(
        c,
        &["RANK.SET", "ms", "b", "1", "AT", "1577836799.999"],
        "ERR time 1577836799.999 is outside this board's range [1577836800, 3776860055] (unix seconds)",
    );
    assert_healthy(&mut s, c);
}

// ---------------------------------------------------------- bad input

#[test]
fn wrong_arity_is_the_standard_error_for_every_command() {
    let mut s = Server::start();
    let c = &mut s.conn();
    ok(c, &["RANK.SET", "lb", "a", "1"]);
    for args in [
        &["RANK.CREATE"][..],
        &["RANK.INCR"],
        &["RANK.INCR", "lb"],
        &["RANK.INCR", "lb", "a"],
        &["RANK.INCR", "lb", "a", "1", "AT", "1700000000", "X"],
        &["RANK.SET"],
        &["RANK.SET", "lb"],
        &["RANK.SET", "lb", "a"],
        &["RANK.SET", "new", "a"],
        &["RANK.SCORE"],
        &["RANK.SCORE", "lb"],
        &["RANK.RANK"],
        &["RANK.RANK", "lb"],
        &["RANK.RANGE"],
        &["RANK.RANGE", "lb"],
        &["RANK.RANGE", "lb", "0"],
        &["RANK.REM"],
        &["RANK.REM", "lb"],
        &["RANK.CARD"],
    ] {
        let got = refusedb(c, &to_bytes(args));
        // The command is named in lower case, however the client typed it.
        assert_eq!(got, arity(&args[0].to_lowercase()), "{args:?}");
    }
    assert_eq!(
        err(c, &["rank.card"]),
        arity("rank.card"),
        "lower case command name"
    );
    assert_healthy(&mut s, c);
}

#[test]
fn bad_numbers_are_refused_naming_the_argument() {
    let mut s = Server::start();
    let c = &mut s.conn();
    ok(c, &["RANK.SET", "lb", "a", "1", "AT", "1700000000"]);
    let bad = [
        "abc",
        "1.5",
        "1.0",
        "NaN",
        "nan",
        "inf",
        "-inf",
        "+inf",
        "1e400",
        "1e3",
        "9223372036854775808",
        "-9223372036854775809",
        "99999999999999999999999",
        "",
        " 1",
        "1 ",
        "+1",
        "0x10",
        "-",
        "--1",
        "1-",
    ];
    for v in bad {
        for k in ["lb", "fresh"] {
            refused(
                c,
                &["RANK.INCR", k, "a", v],
                "ERR delta is not an integer or out of range",
            );
            refused(
                c,
                &["RANK.INCR", k, "a", v, "AT", "1700000000"],
                "ERR delta is not an integer or out of range",
            );
            refused(
                c,
                &["RANK.SET", k, "a", v],
                "ERR score is not an integer or out of range",
            );
        }
        refused(
            c,
            &["RANK.CREATE", "n", "MIN", v],
            "ERR MIN is not an integer or out of range",
        );
        refused(
            c,
            &["RANK.CREATE", "n", "MAX", v],
            "ERR MAX is not an integer or out of range",
        );
        refused(
            c,
            &["RANK.RANGE", "lb", v, "1"],
            "ERR start is not an integer or out of range",
        );
        refused(
            c,
            &["RANK.RANGE", "lb", "0", v],
            "ERR stop is not an integer or out of range",
        );
    }
    refusedb(c, &[b"RANK.INCR", b"lb", b"a", b"\xff"]);
    refusedb(c, &[b"RANK.SET", b"lb", b"a", b"1\x00"]);
    assert_eq!(
        ok(c, &["RANK.SCORE", "lb", "a", "WITHTIME"]),
        withtime(1, "1700000000")
    );
    assert_healthy(&mut s, c);
}

#[test]
fn bad_and_future_at_are_refused() {
    let mut s = Server::start();
    let c = &mut s.conn();
    ok(c, &["RANK.SET", "lb", "a", "1", "AT", "1700000000"]);
    let future = (now_s() + 100).to_string();
    let far_future = "4000000000";
    for k in ["lb", "fresh"] {
        for at in [
            "1700000000.1234",
            "1700000000.0000",
            "-1",
            "-1700000000",
            "abc",
            "",
            "1e9",
            "1700000000.",
            ".5",
            "nan",
            "inf",
            "+1700000000",
            " 1700000000",
            "1700000000 ",
            "1,5",
            "253402300800",
            "99999999999999999999",
        ] {
            for cmd in ["RANK.INCR", "RANK.SET"] {
                refused(c, &[cmd, k, "a", "5", "AT", at], BAD_AT);
            }
        }
        for at in [future.as_str(), far_future, "253402300799.999"] {
            for cmd in ["RANK.INCR", "RANK.SET"] {
                refused(c, &[cmd, k, "a", "5", "AT", at], FUTURE_AT);
            }
        }
        for (cmd, when, at5) in [
            (
                "RANK.INCR",
                "ERR syntax error: expected AT t",
                "ERR syntax error: expected AT t",
            ),
            (
                "RANK.SET",
                "ERR syntax error at 'WHEN': expected GT, LT, BEST or AT t",
                "ERR syntax error at 'AT5': expected GT, LT, BEST or AT t",
            ),
        ] {
            refused(c, &[cmd, k, "a", "5", "AT"], "ERR AT needs a value");
            refused(c, &[cmd, k, "a", "5", "WHEN", "1700000000"], when);
            refused(c, &[cmd, k, "a", "5", "AT5"], at5);
        }
    }
    assert_eq!(
        ok(c, &["RANK.SCORE", "lb", "a", "WITHTIME"]),
        withtime(1, "1700000000")
    );
    assert_healthy(&mut s, c);
}

#[test]
fn unknown_options_and_bad_layouts_are_refused() {
    let mut s = Server::start();
    let c = &mut s.conn();
    ok(c, &["RANK.SET", "lb", "a", "1"]);
    for (args, want) in [
        (
            &["RANK.CREATE", "n", "FOO"][..],
            "ERR syntax error at 'FOO'",
        ),
        (
            &["RANK.CREATE", "n", "MIN", "1", "BAR", "2"],
            "ERR syntax error at 'BAR'",
        ),
        (
            &["RANK.CREATE", "n", "RESOLUTION", "x"],
            "ERR RESOLUTION must be s or ms",
        ),
        (
            &["RANK.CREATE", "n", "RESOLUTION", "sec"],
            "ERR RESOLUTION must be s or ms",
        ),
        (
            &["RANK.CREATE", "n", "RESOLUTION", "us"],
            "ERR RESOLUTION must be s or ms",
        ),
        (
            &["RANK.CREATE", "n", "RESOLUTION", ""],
            "ERR RESOLUTION must be s or ms",
        ),
        (
            &["RANK.CREATE", "n", "RESOLUTION"],
            "ERR RESOLUTION needs a value",
        ),
        (&["RANK.CREATE", "n", "MIN"], "ERR MIN needs a value"),
        (&["RANK.CREATE", "n", "MAX"], "ERR MAX needs a value"),
        (
            &["RANK.CREATE", "n", "MIN", "5", "MAX", "5"],
            "ERR MIN must be below MAX",
        ),
        (
            &["RANK.CREATE", "n", "MIN", "6", "MAX", "5"],
            "ERR MIN must be below MAX",
        ),
        (
            &["RANK.CREATE", "n", "MIN", "1073741823"],
            "ERR MIN must be below MAX",
        ),
        (
            &["RANK.CREATE", "n", "MAX", "-1073741824"],
            "ERR MIN must be below MAX",
        ),
        (
            &["RANK.CREATE", "n", "RESOLUTION", "ms", "MIN", "1048575"],
            "ERR MIN must be below MAX",
        ),
        (
            &[
                "RANK.CREATE",
                "n",
                "MIN",
                "-9223372036854775808",
                "MAX",
                "9223372036854775807",
            ],
            "ERR score range MIN..MAX too wide: at most 2^32 values with RESOLUTION s",
        ),
        (
            &["RANK.CREATE", "n", "MIN", "0", "MAX", "4294967296"],
            "ERR score range MIN..MAX too wide: at most 2^32 values with RESOLUTION s",
        ),
        (
            &[
                "RANK.CREATE",
                "n",
                "RESOLUTION",
                "ms",
                "MIN",
                "0",
                "MAX",
                "4194304",
            ],
            "ERR score range MIN..MAX too wide: at most 2^22 values with RESOLUTION ms",
        ),
        (
            &["RANK.CREATE", "n", "RESOLUTION", "ms", "MIN", "-2147483648"],
            "ERR score range MIN..MAX too wide: at most 2^22 values with RESOLUTION ms",
        ),
        (&["RANK.CREATE", "lb", "FOO"], "ERR syntax error at 'FOO'"),
        (
            &["RANK.SCORE", "lb", "a", "FOO"],
            "ERR syntax error: expected WITHTIME or PERIOD",
        ),
        (
            &["RANK.SCORE", "lb", "a", "WITHSCORES"],
            "ERR syntax error: expected WITHTIME or PERIOD",
        ),
        (
            &["RANK.RANK", "lb", "a", "FOO"],
            "ERR syntax error: expected TIES or PERIOD",
        ),
        (
            &["RANK.RANK", "lb", "a", "WITHTIME"],
            "ERR syntax error: expected TIES or PERIOD",
        ),
        (
            &["RANK.RANGE", "lb", "0", "1", "FOO"],
            "ERR syntax error: expected WITHSCORES, WITHTIME or PERIOD",
        ),
        (
            &["RANK.RANGE", "lb", "0", "1", "REV"],
            "ERR syntax error: expected WITHSCORES, WITHTIME or PERIOD",
        ),
        // Extra words after the last option (arity errors before PERIOD).
        (
            &["RANK.SCORE", "lb", "a", "WITHTIME", "X"],
            "ERR syntax error: expected WITHTIME or PERIOD",
        ),
        (
            &["RANK.RANK", "lb", "a", "TIES", "X"],
            "ERR syntax error: expected TIES or PERIOD",
        ),
        (
            &["RANK.RANGE", "lb", "0", "1", "WITHSCORES", "X"],
            "ERR syntax error: expected WITHSCORES, WITHTIME or PERIOD",
        ),
        (
            &["RANK.CARD", "lb", "X"],
            "ERR syntax error: expected PERIOD",
        ),
        (
            &[
                "RANK.CREATE",
                "k",
                "RESOLUTION",
                "s",
                "MIN",
                "1",
                "MAX",
                "2",
                "X",
            ],
            "ERR syntax error at 'X'",
        ),
        (
            &["RANK.INCR", "lb", "a", "1", "FOO"],
            "ERR syntax error: expected AT t",
        ),
        (
            &["RANK.SET", "lb", "a", "1", "NX"],
            "ERR syntax error at 'NX': expected GT, LT, BEST or AT t",
        ),
    ] {
        refused(c, args, want);
    }
    assert_healthy(&mut s, c);
}

#[test]
fn board_keys_and_types_are_checked() {
    let mut s = Server::start();
    let c = &mut s.conn();
    ok(c, &["SET", "str", "x"]);
    ok(c, &["HSET", "hash", "f", "v"]);
    ok(c, &["RPUSH", "list", "v"]);
    let all_commands = |k: &'static str| -> Vec<Vec<&'static str>> {
        vec![
            vec!["RANK.CREATE", k],
            vec!["RANK.INCR", k, "a", "1"],
            vec!["RANK.SET", k, "a", "1", "AT", "1700000000"],
            vec!["RANK.SCORE", k, "a"],
            vec!["RANK.SCORE", k, "a", "WITHTIME"],
            vec!["RANK.RANK", k, "a"],
            vec!["RANK.RANK", k, "a", "TIES"],
            vec!["RANK.RANGE", k, "0", "-1"],
            vec!["RANK.REM", k, "a"],
            vec!["RANK.CARD", k],
        ]
    };
    for k in ["str", "hash", "list"] {
        for args in all_commands(k) {
            refused(c, &args, WRONGTYPE);
        }
    }
    // Board keys must not hold a zero byte, nor a brace without a hash tag.
    for (k, want) in [
        (&b"a\0b"[..], "ERR board key must not contain a zero byte"),
        (
            b"a{b",
            "ERR board key has a '{' or '}' but no hash tag: use a key such as hot:{news}",
        ),
        (
            b"a}b",
            "ERR board key has a '{' or '}' but no hash tag: use a key such as hot:{news}",
        ),
        (
            b"a{}b",
            "ERR board key has a '{' or '}' but no hash tag: use a key such as hot:{news}",
        ),
    ] {
        for args in [
            &[&b"RANK.CREATE"[..], k][..],
            &[b"RANK.INCR", k, b"a", b"1"],
            &[b"RANK.SET", k, b"a", b"1"],
            &[b"RANK.SCORE", k, b"a"],
            &[b"RANK.RANK", k, b"a"],
            &[b"RANK.RANGE", k, b"0", b"-1"],
            &[b"RANK.REM", k, b"a"],
            &[b"RANK.CARD", k],
        ] {
            assert_eq!(refusedb(c, args), want, "{:?}", lossy(args));
        }
    }
    // A layout key of the wrong type: WRONGTYPE, not a panic.
    okb(c, &[b"HSET", b"odd\0{odd}layout", b"f", b"v"]);
    for args in all_commands("odd") {
        refused(c, &args, WRONGTYPE);
    }
    assert_healthy(&mut s, c);
}

#[test]
fn plain_zsets_and_foreign_scores_are_refused_unchanged() {
    let mut s = Server::start();
    let c = &mut s.conn();
    ok(c, &["ZADD", "plain", "1", "a", "2.5", "b", "-inf", "c"]);
    for args in [
        &["RANK.INCR", "plain", "a", "1"][..],
        &["RANK.INCR", "plain", "new", "1", "AT", "1700000000"],
        &["RANK.SET", "plain", "a", "5"],
        &["RANK.SET", "plain", "new", "5"],
        &["RANK.REM", "plain", "a"],
        &["RANK.SCORE", "plain", "a"],
        &["RANK.RANK", "plain", "a", "TIES"],
        &["RANK.RANGE", "plain", "0", "-1", "WITHSCORES"],
        &["RANK.CARD", "plain"],
    ] {
        refused(c, args, NOT_RANK);
    }
    refused(c, &["RANK.CREATE", "plain"], "ERR board already exists");
    assert_eq!(
        ok(c, &["ZRANGE", "plain", "0", "-1", "WITHSCORES"]),
        members(&["c", "-inf", "a", "1", "b", "2.5"])
    );
    assert_eq!(dbsize(c), 1);

    // A board with a member added by hand (a score RANK did not pack): reads
    // and writes of it are refused, other members still work.
    ok(c, &["RANK.SET", "lb", "ok", "3", "AT", "1700000000"]);
    ok(
        c,
        &[
            "ZADD", "lb", "0", "bad0", "-1", "neg", "1e300", "huge", "inf", "inf",
        ],
    );
    let not_packed = "ERR ZSET score was not packed by RANK with this board's layout";
    for m in ["bad0", "neg", "huge", "inf"] {
        for args in [
            &["RANK.SCORE", "lb", m][..],
            &["RANK.SCORE", "lb", m, "WITHTIME"],
            &["RANK.RANK", "lb", m, "TIES"],
            &["RANK.INCR", "lb", m, "1"],
            &["RANK.SET", "lb", m, "1"],
        ] {
            refused(c, args, not_packed);
        }
    }
    refused(
        c,
        &["RANK.RANGE", "lb", "0", "-1", "WITHSCORES"],
        not_packed,
    );
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "ok"]), int(3));
    assert_eq!(
        ok(c, &["RANK.REM", "lb", "bad0", "neg", "huge", "inf"]),
        int(4)
    );
    assert_eq!(
        ok(c, &["RANK.RANGE", "lb", "0", "-1", "WITHSCORES"]),
        ranged(&[("ok", 3)])
    );
    // A corrupt layout key: refused, not a panic.
    let layout = b"lb\0{lb}layout";
    for junk in [
        &b"junk"[..],
        b"v1 s 5 5",
        b"v1 x 0 1",
        b"v1 s 0",
        b"",
        b"v1 s 0 99999999999999999999",
    ] {
        okb(c, &[b"SET", layout, junk]);
        for args in [
            &["RANK.SCORE", "lb", "ok"][..],
            &["RANK.INCR", "lb", "ok", "1"],
            &["RANK.RANGE", "lb", "0", "-1"],
            &["RANK.CARD", "lb"],
            &["RANK.REM", "lb", "ok"],
            &["RANK.CREATE", "lb"],
        ] {
            let got = refusedb(c, &to_bytes(args));
            assert!(
                got == "ERR corrupt RANK layout key" || got == "ERR board already exists",
                "{args:?} with layout {junk:?}: {got}"
            );
        }
    }
    assert_healthy(&mut s, c);
}

/// The first write to a missing key would create the board: when it fails,
/// not even the layout may be left behind.
#[test]
fn a_failed_first_write_creates_no_board() {
    let mut s = Server::start();
    let c = &mut s.conn();
    for args in [
        &["RANK.SET", "n", "a", "1073741824"][..],
        &["RANK.SET", "n", "a", "-1073741825"],
        &["RANK.INCR", "n", "a", "1073741824"],
        &["RANK.INCR", "n", "a", "9223372036854775807"],
        &["RANK.SET", "n", "a", "1", "AT", "1577836799"],
        &["RANK.INCR", "n", "a", "1", "AT", "0"],
    ] {
        refusedb(c, &to_bytes(args));
        assert_eq!(dbsize(c), 0, "{args:?}");
    }
    // Nor does a read.
    for args in [
        &["RANK.SCORE", "n", "a"][..],
        &["RANK.RANK", "n", "a", "TIES"],
        &["RANK.RANGE", "n", "0", "-1"],
        &["RANK.CARD", "n"],
        &["RANK.REM", "n", "a"],
    ] {
        ok(c, args);
    }
    assert_eq!(dbsize(c), 0);
    // The board can then still be created with any layout.
    assert_eq!(
        ok(c, &["RANK.CREATE", "n", "RESOLUTION", "ms"]),
        Value::Okay
    );
    assert_healthy(&mut s, c);
}

/// Errors inside MULTI/EXEC and from scripts do not break the server either.
#[test]
fn errors_in_transactions_and_scripts_leave_the_server_answering() {
    let mut s = Server::start();
    let c = &mut s.conn();
    let r: Vec<Value> = redis::pipe()
        .atomic()
        .cmd("RANK.SET")
        .arg("lb")
        .arg("a")
        .arg(5)
        .cmd("RANK.SET")
        .arg("lb")
        .arg("b")
        .arg("x")
        .cmd("RANK.INCR")
        .arg("lb")
        .arg("a")
        .arg(2)
        .ignore_errors()
        .query(c)
        .unwrap();
    assert_eq!(r.len(), 3);
    assert_eq!(r[0], int(5));
    assert!(matches!(r[1], Value::ServerError(_)), "{:?}", r[1]);
    assert_eq!(r[2], int(7));
    let e = err(
        c,
        &[
            "EVAL",
            "return redis.pcall('RANK.INCR', KEYS[1], 'a', 'nope')",
            "1",
            "lb",
        ],
    );
    assert!(e.contains("delta is not an integer"), "{e}");
    let v = ok(
        c,
        &[
            "EVAL",
            "return redis.call('RANK.INCR', KEYS[1], 'a', '3')",
            "1",
            "lb",
        ],
    );
    assert_eq!(v, int(10));
    assert_healthy(&mut s, c);
}
