//! Integration tests of periodic boards (`RANK.CREATE … PERIODS … [TZ]
//! [KEEP]`, `PERIOD p [AGO n]` reads) against a real server: calendar
//! boundaries written with AT (month and year ends, the ISO week across a
//! new year, the leap day, TZ ±14:00), INCR/SET/MINCR updating every board
//! all or nothing, period key names and exact expiries, AGO reads, effects
//! replication to a replica without the module, ACL and cluster slots.
//!
//! Expected period ids and instants come from the pure core
//! (`hotrank::rank::period`, unit-tested on its own).
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::*;
#[path = "common/period.rs"]
mod period;
#[path = "common/rank_client.rs"]
mod rank_client;
use hotrank::keys::{self, Kind};
use hotrank::rank::period::{Period, Spec, Tz, DAY_MS};
use period::*;
use redis::{Connection, Value};

// ---------------------------------------------------------------- create

#[test]
fn create_stores_periods_in_the_layout_and_checks_them() {
    let (_s, mut c) = with_board("RANK.CREATE lb PERIODS month DAY week day TZ +14:00");
    let c = &mut c;
    assert_eq!(
        layout_text(c, "lb"),
        "v1 s -1073741824 1073741823 periods day,week,month tz +14:00 keep 2"
    );
    ok(
        c,
        &words("RANK.CREATE lb2 RESOLUTION ms MIN 0 MAX 9 PERIODS week KEEP 0 TZ -03:30"),
    );
    assert_eq!(
        layout_text(c, "lb2"),
        "v1 ms 0 9 periods week tz -03:30 keep 0"
    );
    let bad_tz = "ERR TZ must be a UTC offset +hh:mm or -hh:mm between -14:00 and +14:00";
    let bad_keep = "ERR KEEP must be an integer between 0 and 10000";
    for (args, want) in [
        ("RANK.CREATE n PERIODS", "ERR PERIODS needs a value"),
        (
            "RANK.CREATE n PERIODS year",
            "ERR PERIODS must be day, week or month",
        ),
        (
            "RANK.CREATE n PERIODS day year",
            "ERR syntax error at 'year'",
        ),
        ("RANK.CREATE n TZ +01:00", "ERR TZ and KEEP need PERIODS"),
        ("RANK.CREATE n KEEP 3", "ERR TZ and KEEP need PERIODS"),
        ("RANK.CREATE n PERIODS day TZ +14:01", bad_tz),
        ("RANK.CREATE n PERIODS day TZ UTC", bad_tz),
        ("RANK.CREATE n PERIODS day KEEP -1", bad_keep),
        ("RANK.CREATE n PERIODS day KEEP 10001", bad_keep),
        ("RANK.CREATE lb PERIODS day", "ERR board already exists"),
    ] {
        assert_eq!(err(c, &words(args)), want, "{args:?}");
    }
    assert!(!exists(c, &keys::derived(b"n", Kind::Layout, &[])));
    // Reads of a period the board does not have, or of a board without periods.
    ok(c, &["RANK.SET", "plain", "a", "1"]);
    for (args, want) in [
        ("RANK.SCORE lb2 a PERIOD day", "ERR board has no day period"),
        (
            "RANK.CARD plain PERIOD week",
            "ERR board has no week period",
        ),
        (
            "RANK.CARD lb PERIOD year",
            "ERR PERIOD must be day, week or month",
        ),
        ("RANK.CARD lb PERIOD", "ERR PERIOD needs a value"),
        ("RANK.CARD lb PERIOD day AGO", "ERR AGO needs a value"),
        (
            "RANK.CARD lb PERIOD day AGO -1",
            "ERR AGO must be an integer >= 0",
        ),
        (
            "RANK.CARD lb PERIOD day AGO x",
            "ERR AGO must be an integer >= 0",
        ),
        ("RANK.CARD lb AGO 1", "ERR syntax error: expected PERIOD"),
    ] {
        assert_eq!(err(c, &words(args)), want, "{args:?}");
    }
    // A missing board reads empty, whatever PERIOD.
    assert_eq!(ok(c, &["RANK.CARD", "missing", "PERIOD", "month"]), int(0));
    assert_eq!(
        ok(c, &["RANK.SCORE", "missing", "a", "PERIOD", "day"]),
        Value::Nil
    );
}

// ---------------------------------------------------------------- boundaries

#[test]
fn month_and_year_ends_split_the_boards() {
    let (_s, mut c) = with_board("RANK.CREATE lb RESOLUTION ms PERIODS day month KEEP 10000");
    let c = &mut c;
    let writes = [
        (
            utc(2026, 1, 31, 23, 59, 59) + 999,
            1,
            "d2026-01-31",
            "m2026-01",
        ),
        (utc(2026, 2, 1, 0, 0, 0), 2, "d2026-02-01", "m2026-02"),
        (utc(2026, 2, 28, 23, 59, 59), 4, "d2026-02-28", "m2026-02"),
        (utc(2026, 3, 1, 0, 0, 0), 8, "d2026-03-01", "m2026-03"),
        (
            utc(2025, 12, 31, 23, 59, 59) + 999,
            16,
            "d2025-12-31",
            "m2025-12",
        ),
        (utc(2026, 1, 1, 0, 0, 0), 32, "d2026-01-01", "m2026-01"),
    ];
    for (t, d, _, _) in writes {
        incr_at(c, "lb", "a", d, t);
    }
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "a"]), int(63));
    for (_, d, day, _) in writes {
        assert!(exists(c, &pkey("lb", day)), "{day}");
        assert_eq!(board_of(c, "lb", day), pairs(&[("a", d)]), "{day}");
    }
    assert_eq!(board_of(c, "lb", "m2026-01"), pairs(&[("a", 33)]));
    assert_eq!(board_of(c, "lb", "m2026-02"), pairs(&[("a", 6)]));
    assert_eq!(board_of(c, "lb", "m2026-03"), pairs(&[("a", 8)]));
    assert_eq!(board_of(c, "lb", "m2025-12"), pairs(&[("a", 16)]));
    // The reads by AGO agree with the period of each instant.
    for (t, d, _, _) in writes {
        assert_eq!(pscore(c, "lb", "a", Period::Day, Tz::UTC, t), int(d));
    }
    // Six day boards, four month boards, the board and its layout.
    let n: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    assert_eq!(n.len(), 12, "{n:?}");
}

#[test]
fn iso_week_across_new_year() {
    let (_s, mut c) = with_board("RANK.CREATE lb PERIODS week KEEP 10000");
    let c = &mut c;
    for (y, m, d, pts, id) in [
        (2020, 12, 31, 1, "w2020-W53"),
        (2021, 1, 3, 2, "w2020-W53"),
        (2021, 1, 4, 4, "w2021-W01"),
        (2024, 12, 29, 8, "w2024-W52"),
        (2024, 12, 30, 16, "w2025-W01"),
        (2025, 1, 5, 32, "w2025-W01"),
        (2025, 1, 6, 64, "w2025-W02"),
    ] {
        let t = utc(y, m, d, 12, 0, 0);
        assert_eq!(Period::Week.containing(t, Tz::UTC).id(), id);
        incr_at(c, "lb", "p", pts, t);
        assert!(exists(c, &pkey("lb", id)), "{id}");
    }
    // Sunday 23:59:59 and Monday 00:00:00 fall in different weeks.
    incr_at(c, "lb", "q", 1, utc(2021, 1, 3, 23, 59, 59));
    incr_at(c, "lb", "q", 10, utc(2021, 1, 4, 0, 0, 0));
    assert_eq!(board_of(c, "lb", "w2020-W53"), pairs(&[("p", 3), ("q", 1)]));
    assert_eq!(
        board_of(c, "lb", "w2021-W01"),
        pairs(&[("q", 10), ("p", 4)])
    );
    assert_eq!(board_of(c, "lb", "w2024-W52"), pairs(&[("p", 8)]));
    assert_eq!(board_of(c, "lb", "w2025-W01"), pairs(&[("p", 48)]));
    assert_eq!(board_of(c, "lb", "w2025-W02"), pairs(&[("p", 64)]));
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "p"]), int(127));
}

#[test]
fn leap_day_has_its_own_board() {
    let (_s, mut c) = with_board("RANK.CREATE lb PERIODS day month KEEP 10000");
    let c = &mut c;
    for (t, pts) in [
        (utc(2024, 2, 28, 23, 59, 59), 1),
        (utc(2024, 2, 29, 0, 0, 0), 2),
        (utc(2024, 2, 29, 23, 59, 59), 4),
        (utc(2024, 3, 1, 0, 0, 0), 8),
    ] {
        incr_at(c, "lb", "a", pts, t);
    }
    assert_eq!(board_of(c, "lb", "d2024-02-28"), pairs(&[("a", 1)]));
    assert_eq!(board_of(c, "lb", "d2024-02-29"), pairs(&[("a", 6)]));
    assert_eq!(board_of(c, "lb", "d2024-03-01"), pairs(&[("a", 8)]));
    assert_eq!(board_of(c, "lb", "m2024-02"), pairs(&[("a", 7)]));
    assert_eq!(board_of(c, "lb", "m2024-03"), pairs(&[("a", 8)]));
}

#[test]
fn time_zones_move_instants_to_other_periods() {
    let s = Server::start();
    let c = &mut s.conn();
    // 2025-12-31 10:00 UTC: 2026-01-01 00:00 at +14:00 (Thursday, 2026-W01),
    // 2025-12-30 22:00 at -12:00 (Tuesday, 2026-W01), 20:00 at -14:00.
    let t = utc(2025, 12, 31, 10, 0, 0);
    let cases = [
        ("e", "+14:00", ["d2026-01-01", "w2026-W01", "m2026-01"]),
        ("u", "+00:00", ["d2025-12-31", "w2026-W01", "m2025-12"]),
        ("w", "-12:00", ["d2025-12-30", "w2026-W01", "m2025-12"]),
        ("x", "-14:00", ["d2025-12-30", "w2026-W01", "m2025-12"]),
    ];
    for (board, offset, ids) in cases {
        let create = format!("RANK.CREATE {board} PERIODS day week month TZ {offset} KEEP 10000");
        ok(c, &words(&create));
        incr_at(c, board, "a", 5, t);
        // One second earlier: the day before at +14:00.
        incr_at(c, board, "b", 1, t - 1000);
        for (p, id) in Period::ALL.into_iter().zip(ids) {
            assert_eq!(p.containing(t, tz(offset)).id(), id);
            assert!(exists(c, &pkey(board, id)), "{board} {id}");
            assert_eq!(
                pscore(c, board, "a", p, tz(offset), t),
                int(5),
                "{board} {id}"
            );
        }
    }
    // b at 09:59:59 UTC is 2025-12-31 23:59:59 at +14:00: alone on that day.
    let v: Vec<String> = bcmd(&[b"ZRANGE", &pkey("e", "d2025-12-31"), b"0", b"-1"])
        .query(c)
        .expect("ZRANGE");
    assert_eq!(v, ["b"]);
    assert!(exists(c, &pkey("e", "m2025-12")));
    // Reads use the board's TZ for the current period.
    for (board, offset) in [("e", "+14:00"), ("x", "-14:00")] {
        ok(c, &["RANK.INCR", board, "now", "1"]);
        let now = now_ms();
        for p in Period::ALL {
            let id = p.containing(now, tz(offset)).id();
            assert!(exists(c, &pkey(board, &id)), "{board} {id}");
            assert_eq!(
                ok(c, &["RANK.SCORE", board, "now", "PERIOD", p.name()]),
                int(1)
            );
        }
    }
}

// ---------------------------------------------------------------- writes

#[test]
fn incr_set_mincr_update_every_board() {
    let (_s, mut c) = with_board("RANK.CREATE lb PERIODS day week month");
    let c = &mut c;
    let now = now_ms();
    // Earlier this week or last week, and last month: their boards are
    // still alive with KEEP 2.
    let last_month = in_last_month(now);
    incr_at(c, "lb", "a", 5, last_month);
    ok(c, &["RANK.INCR", "lb", "a", "3"]);
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "a"]), int(8));
    // A member new to a period starts there at 0.
    for p in Period::ALL {
        assert_eq!(ok(c, &in_period("RANK.SCORE lb a", p)), int(3), "{p:?}");
    }
    assert_eq!(
        ok(c, &["RANK.SCORE", "lb", "a", "PERIOD", "month", "AGO", "1"]),
        int(5)
    );
    // Last month's day board had expired (KEEP 2 days): not written.
    let old_day = Period::Day.containing(last_month, Tz::UTC).id();
    assert!(!exists(c, &pkey("lb", &old_day)), "{old_day}");
    // SET sets every current board.
    assert_eq!(ok(c, &["RANK.SET", "lb", "a", "100"]), int(100));
    assert_eq!(ok(c, &["RANK.SET", "lb", "b", "7"]), int(7));
    for p in Period::ALL {
        assert_eq!(ok(c, &in_period("RANK.SCORE lb a", p)), int(100));
        assert_eq!(
            ok(c, &in_period("RANK.RANGE lb 0 -1 WITHSCORES", p)),
            ranged(&[("a", 100), ("b", 7)])
        );
    }
    assert_eq!(
        ok(c, &["RANK.SCORE", "lb", "a", "PERIOD", "month", "AGO", "1"]),
        int(5)
    );
    // MINCR: a member named twice gets delta twice, on every board.
    assert_eq!(
        ok(c, &["RANK.MINCR", "lb", "2", "a", "c", "a"]),
        arr(vec![int(102), int(2), int(104)])
    );
    for p in Period::ALL {
        assert_eq!(ok(c, &in_period("RANK.SCORE lb a", p)), int(104));
        assert_eq!(ok(c, &in_period("RANK.SCORE lb c", p)), int(2));
        assert_eq!(ok(c, &in_period("RANK.CARD lb", p)), int(3));
        assert_eq!(ok(c, &in_period("RANK.RANK lb c", p)), int(2));
        assert_eq!(
            ok(c, &in_period("RANK.RANGEBYSCORE lb 5 +inf", p)),
            members(&["a", "b"])
        );
        assert_eq!(
            ok(c, &in_period("RANK.AROUND lb b 0", p)),
            arr(vec![arr(vec![int(1), bulk("b"), int(7)])])
        );
    }
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "a"]), int(104));
    // A member new to the board and named twice with delta 0 is added at 0.
    assert_eq!(
        ok(c, &["RANK.MINCR", "lb", "0", "z", "z"]),
        arr(vec![int(0), int(0)])
    );
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "z"]), int(0));
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "z", "PERIOD", "day"]), int(0));
}

#[test]
fn a_score_out_of_range_in_one_board_writes_nothing() {
    let (_s, mut c) = with_board("RANK.CREATE lb MIN 0 MAX 10 PERIODS day week KEEP 0");
    let c = &mut c;
    // 10 points long ago: on the all-time board only (KEEP 0: expired boards).
    ok(c, &["RANK.INCR", "lb", "a", "10", "AT", "1700000000"]);
    let before = snapshot(c);
    assert_eq!(before.len(), 2, "board and layout only");
    // The all-time board could go to 7, the period boards cannot go to -3.
    let want = "ERR score -3 is out of range [0, 10] of this board";
    assert_eq!(err(c, &["RANK.INCR", "lb", "a", "-3"]), want);
    assert_eq!(err(c, &["RANK.MINCR", "lb", "-3", "a"]), want);
    assert_eq!(snapshot(c), before);
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "a"]), int(10));
    // Now the period boards hold 10 and the all-time board loses a (REM is
    // all-time only): INCR 1 fits there (1) but not in the period boards (11).
    ok(c, &["RANK.SET", "lb", "a", "10"]);
    ok(c, &["RANK.REM", "lb", "a"]);
    let before = snapshot(c);
    let want = "ERR score 11 is out of range [0, 10] of this board";
    assert_eq!(err(c, &["RANK.INCR", "lb", "a", "1"]), want);
    assert_eq!(err(c, &["RANK.MINCR", "lb", "1", "b", "a"]), want);
    assert_eq!(snapshot(c), before);
    // A period key of the wrong type refuses the write too, writing nothing.
    let day = Period::Day.containing(now_ms(), Tz::UTC).id();
    bcmd(&[b"DEL", &pkey("lb", &day)])
        .query::<i64>(c)
        .expect("DEL");
    bcmd(&[b"SET", &pkey("lb", &day), b"x"])
        .query::<()>(c)
        .expect("SET");
    let before = snapshot(c);
    assert!(err(c, &["RANK.INCR", "lb", "n", "1"]).starts_with("WRONGTYPE"));
    assert!(err(c, &["RANK.SET", "lb", "n", "1"]).starts_with("WRONGTYPE"));
    assert!(err(c, &["RANK.MINCR", "lb", "1", "n"]).starts_with("WRONGTYPE"));
    assert!(err(c, &["RANK.CARD", "lb", "PERIOD", "day"]).starts_with("WRONGTYPE"));
    assert_eq!(snapshot(c), before);
}

#[test]
fn period_boards_expire_keep_periods_after_their_end() {
    let (_s, mut c) = with_board("RANK.CREATE lb PERIODS day week month TZ +05:30 KEEP 3");
    let c = &mut c;
    let z = tz("+05:30");
    let spec = Spec::new(&Period::ALL, z, 3).unwrap();
    ok(c, &["RANK.INCR", "lb", "a", "1"]);
    let now = now_ms();
    for p in Period::ALL {
        let span = p.containing(now, z);
        let k = pkey("lb", &span.id());
        assert_eq!(pexpiretime(c, &k), spec.expiry(span), "{}", span.id());
        assert!(spec.expiry(span) > span.end_ms(z));
    }
    assert_eq!(
        pexpiretime(c, &pkey("lb", &Period::Day.containing(now, z).id())),
        Period::Day.containing(now, z).end_ms(z) + 3 * DAY_MS
    );
    // The all-time board and the layout never expire.
    assert_eq!(pexpiretime(c, b"lb"), -1);
    assert_eq!(pexpiretime(c, &keys::derived(b"lb", Kind::Layout, &[])), -1);
    // Later writes keep the expiry; a board that lost it gets it back.
    let day = pkey("lb", &Period::Day.containing(now, z).id());
    let e = pexpiretime(c, &day);
    ok(c, &["RANK.INCR", "lb", "a", "1"]);
    assert_eq!(pexpiretime(c, &day), e);
    bcmd(&[b"PERSIST", &day]).query::<i64>(c).expect("PERSIST");
    ok(c, &["RANK.SET", "lb", "b", "4"]);
    assert_eq!(pexpiretime(c, &day), e);
    // A write whose period board has already expired skips that board: 5
    // days ago (KEEP 3) writes the week and month boards only.
    let old = now - 5 * DAY_MS;
    incr_at(c, "lb", "old", 1, old);
    assert!(!exists(
        c,
        &pkey("lb", &Period::Day.containing(old, z).id())
    ));
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "old"]), int(1));
    assert_eq!(
        ok(c, &["RANK.SCORE", "lb", "old", "PERIOD", "day", "AGO", "5"]),
        Value::Nil
    );
    for p in [Period::Week, Period::Month] {
        assert_eq!(pscore(c, "lb", "old", p, z, old), int(1));
    }
}

#[test]
fn ago_reads_previous_periods() {
    let (_s, mut c) = with_board("RANK.CREATE lb PERIODS day KEEP 1");
    let c = &mut c;
    let now = now_ms();
    incr_at(c, "lb", "a", 1, now - 2 * DAY_MS);
    incr_at(c, "lb", "a", 2, now - DAY_MS);
    incr_at(c, "lb", "b", 3, now - DAY_MS);
    ok(c, &["RANK.INCR", "lb", "a", "4"]);
    assert_eq!(ok(c, &["RANK.SCORE", "lb", "a"]), int(7));
    let n =
        |c: &mut Connection, ago: &str| ok(c, &["RANK.CARD", "lb", "PERIOD", "day", "AGO", ago]);
    assert_eq!(ok(c, &["RANK.CARD", "lb", "PERIOD", "day"]), int(1));
    assert_eq!(n(c, "0"), int(1));
    assert_eq!(n(c, "1"), int(2));
    // Two days ago had already expired with KEEP 1 when it was written.
    assert_eq!(n(c, "2"), int(0));
    assert_eq!(n(c, "3"), int(0));
    assert_eq!(n(c, "9223372036854775807"), int(0));
    assert_eq!(
        ok(c, &words("RANK.RANGE lb 0 -1 PERIOD day AGO 1 WITHSCORES")),
        ranged(&[("b", 3), ("a", 2)])
    );
    assert_eq!(
        ok(c, &words("RANK.RANK lb a TIES PERIOD day AGO 1")),
        int(1)
    );
    assert_eq!(
        ok(c, &["RANK.SCORE", "lb", "b", "PERIOD", "day"]),
        Value::Nil
    );
    assert_eq!(
        ok(c, &words("RANK.RANGE lb 0 -1 PERIOD day AGO 2")),
        arr(vec![])
    );
    assert_eq!(
        ok(c, &words("RANK.AROUND lb a 5 PERIOD day AGO 3")),
        arr(vec![])
    );
    assert_eq!(
        ok(c, &words("RANK.RANGEBYSCORE lb -inf +inf PERIOD day AGO 2")),
        arr(vec![])
    );
}
