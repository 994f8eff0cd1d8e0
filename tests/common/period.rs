//! Helpers shared by the period-board tests (tests/rank_period*.rs).
#![allow(dead_code)]

use crate::common::q;
use hotrank::keys::{self, Kind};
use hotrank::rank::period::{days_from_civil, Period, Span, Tz, DAY_MS};
use redis::{Connection, Value};

/// Unix ms of `y-m-d hh:mm:ss` UTC.
pub fn utc(y: i64, m: u32, d: u32, hh: i64, mm: i64, ss: i64) -> i64 {
    days_from_civil(y, m, d) * DAY_MS + ((hh * 60 + mm) * 60 + ss) * 1000
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

/// `AT` text of an instant in ms.
pub fn at(ms: i64) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

pub fn tz(s: &str) -> Tz {
    Tz::parse(s.as_bytes()).expect("tz")
}

pub fn bcmd(args: &[&[u8]]) -> redis::Cmd {
    let mut c = redis::cmd(std::str::from_utf8(args[0]).expect("command name"));
    for a in &args[1..] {
        c.arg(*a);
    }
    c
}

pub fn ok(c: &mut Connection, args: &[&str]) -> Value {
    q(c, args).unwrap_or_else(|e| panic!("{args:?} failed: {e}"))
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

/// A key and its ZSET members with their packed scores.
pub type KeyDump = (Vec<u8>, Vec<(Vec<u8>, String)>);

pub fn int(v: i64) -> Value {
    Value::Int(v)
}
