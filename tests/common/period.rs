//! Helpers shared by the period-board tests (tests/rank_period*.rs), included
//! with `#[path = "common/period.rs"] mod period;` after `rank_client`, whose
//! helpers (`ok`, `bcmd`, `int`, `ranged`, `members`, `now_ms`, …) it re-exports.
#![allow(dead_code)]

pub use crate::rank_client::*;
use hotrank::keys::{self, Kind};
use hotrank::rank::period::{days_from_civil, Period, Span, Tz, DAY_MS};
use redis::{Connection, Value};

/// Unix ms of `y-m-d hh:mm:ss` UTC.
pub fn utc(y: i64, m: u32, d: u32, hh: i64, mm: i64, ss: i64) -> i64 {
    days_from_civil(y, m, d) * DAY_MS + ((hh * 60 + mm) * 60 + ss) * 1000
}

/// `AT` text of an instant in ms.
pub fn at(ms: i64) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

pub fn tz(s: &str) -> Tz {
    Tz::parse(s.as_bytes()).expect("tz")
}

/// A server with the module and a connection to it, on which `create` (a
/// `RANK.CREATE …` line, split with `words`) has made the board.
pub fn with_board(create: &str) -> (Server, Connection) {
    let s = Server::start();
    let mut c = s.conn();
    ok(&mut c, &words(create));
    (s, c)
}

/// One hour into the month before the one of `now_ms` (UTC): a write there
/// lands on last month's board while the board is still kept (KEEP 2).
pub fn in_last_month(now_ms: i64) -> i64 {
    Period::Month
        .containing(now_ms, Tz::UTC)
        .ago(1)
        .start_ms(Tz::UTC)
        + 3_600_000
}

/// The text of `board`'s layout key.
pub fn layout_text(c: &mut Connection, board: &str) -> String {
    let key = keys::derived(board.as_bytes(), Kind::Layout, &[]);
    let layout: Vec<u8> = bcmd(&[b"GET", &key]).query(c).expect("GET");
    String::from_utf8(layout).expect("layout text")
}

/// The words of `line` followed by `PERIOD <p>`.
pub fn in_period(line: &str, p: Period) -> Vec<&str> {
    let mut args = words(line);
    args.extend(["PERIOD", p.name()]);
    args
}

/// `RANK.INCR board member delta AT t_ms`.
pub fn incr_at(c: &mut Connection, board: &str, member: &str, delta: i64, t_ms: i64) -> Value {
    ok(
        c,
        &[
            "RANK.INCR",
            board,
            member,
            &delta.to_string(),
            "AT",
            &at(t_ms),
        ],
    )
}

/// The name of a period board of `board`.
pub fn pkey(board: &str, id: &str) -> Vec<u8> {
    keys::derived(board.as_bytes(), Kind::Period, &[id.as_bytes()])
}

pub fn exists(c: &mut Connection, key: &[u8]) -> bool {
    let n: i64 = bcmd(&[b"EXISTS", key]).query(c).expect("EXISTS");
    n == 1
}

/// `PEXPIRETIME key` (-1: no expiry, -2: missing).
pub fn pexpiretime(c: &mut Connection, key: &[u8]) -> i64 {
    bcmd(&[b"PEXPIRETIME", key]).query(c).expect("PEXPIRETIME")
}

/// How many periods before the current one (server clock = this clock)
/// the period of `p` containing `t_ms` is.
pub fn ago(p: Period, z: Tz, t_ms: i64) -> i64 {
    p.containing(now_ms(), z).index - p.containing(t_ms, z).index
}

/// `RANK.SCORE board member PERIOD p AGO n` for the period containing `t_ms`.
pub fn pscore(c: &mut Connection, board: &str, member: &str, p: Period, z: Tz, t_ms: i64) -> Value {
    let n = ago(p, z, t_ms).to_string();
    ok(
        c,
        &["RANK.SCORE", board, member, "PERIOD", p.name(), "AGO", &n],
    )
}

/// The members and scores of a period board, read through its key: `[(member, score)]`.
pub fn board_of(c: &mut Connection, board: &str, id: &str) -> Vec<(String, i64)> {
    let s = Span::parse_id(id).expect("an id");
    // A period that is not current: read it by AGO in UTC boards only.
    let n = s.period.containing(now_ms(), Tz::UTC).index - s.index;
    let v: Vec<(String, i64)> = redis::cmd("RANK.RANGE")
        .arg(board)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .arg("PERIOD")
        .arg(s.period.name())
        .arg("AGO")
        .arg(n)
        .query(c)
        .expect("RANK.RANGE PERIOD");
    v
}

pub fn pairs(v: &[(&str, i64)]) -> Vec<(String, i64)> {
    v.iter().map(|(m, s)| (m.to_string(), *s)).collect()
}
