//! Helpers of the RANK integration tests split out of tests/rank.rs
//! (tests/rank.rs, rank_model.rs, rank_input.rs, rank_persist.rs, rank_game.rs,
//! and rank_period*.rs through tests/common/period.rs): the layouts'
//! bounds, the exact error texts, binary-safe command runners, reply builders,
//! snapshots and the checks that a refused command wrote nothing. Included
//! with `mod common; #[path = "common/rank_client.rs"] mod rank_client;` and
//! used with `use rank_client::*;` in place of `use common::*;` (it re-exports
//! `common`, and its `ok`, `int` and `now_ms` take the place of common's).
#![allow(dead_code)]

pub use crate::common::*;
use redis::{Connection, RedisError, Value};

/// 2020-01-01T00:00:00Z, the start of every board's time range.
pub const EPOCH_S: i64 = 1_577_836_800;
pub const EPOCH_MS: i64 = EPOCH_S * 1000;
/// A fixed instant in the past (2023-11-14T22:13:20Z) for exact time checks.
pub const T: i64 = 1_700_000_000;
/// Default seconds layout.
pub const S_MIN: i64 = -(1 << 30);
pub const S_MAX: i64 = (1 << 30) - 1;
/// Default milliseconds layout.
pub const MS_MIN: i64 = -(1 << 20);
pub const MS_MAX: i64 = (1 << 20) - 1;

/// The one error of a ZSET without a RANK layout (docs/eviction.md), for
/// the key `plain` on a server under `noeviction`.
pub const NOT_RANK: &str = "ERR board identity missing: 'plain' holds a ZSET but no RANK layout: evicted (maxmemory-policy is noeviction) or deleted, or never written by RANK; nothing was written. Rebuild it with RANK.REPAIR plain [layout] giving the board's own settings, or use another key (docs/eviction.md)";
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const BAD_AT: &str = "ERR AT must be unix seconds (an integer or a decimal with up to 3 digits) between 0 and 253402300799";
pub const FUTURE_AT: &str = "ERR AT is later than the server clock: writes cannot be in the future";

// ---------------------------------------------------------------- helpers

pub fn bcmd(args: &[&[u8]]) -> redis::Cmd {
    let mut c = redis::cmd(std::str::from_utf8(args[0]).expect("command name"));
    for a in &args[1..] {
        c.arg(*a);
    }
    c
}

pub fn to_bytes<'a>(args: &[&'a str]) -> Vec<&'a [u8]> {
    args.iter().map(|a| a.as_bytes()).collect()
}

/// Runs a command that must succeed.
pub fn ok(c: &mut Connection, args: &[&str]) -> Value {
    q(c, args).unwrap_or_else(|e| panic!("{args:?} failed: {e}"))
}

/// Runs a binary-safe command that must succeed.
pub fn okb(c: &mut Connection, args: &[&[u8]]) -> Value {
    bcmd(args)
        .query(c)
        .unwrap_or_else(|e| panic!("{:?} failed: {e}", lossy(args)))
}

pub fn lossy(args: &[&[u8]]) -> Vec<String> {
    args.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// "CODE detail" of a server error, as `common::err` gives it.
pub fn err_text(e: &RedisError) -> String {
    format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""))
        .trim()
        .to_string()
}

pub fn int(v: i64) -> Value {
    Value::Int(v)
}

pub fn bulk(s: impl AsRef<[u8]>) -> Value {
    Value::BulkString(s.as_ref().to_vec())
}

pub fn arr(v: Vec<Value>) -> Value {
    Value::Array(v)
}

/// `[member, score, …]` as RANK.RANGE WITHSCORES replies it.
pub fn ranged(pairs: &[(&str, i64)]) -> Value {
    arr(pairs.iter().flat_map(|(m, s)| [bulk(m), int(*s)]).collect())
}

pub fn members(names: &[&str]) -> Value {
    arr(names.iter().map(bulk).collect())
}

/// `[score, time]` as RANK.SCORE WITHTIME replies it.
pub fn withtime(score: i64, time: &str) -> Value {
    arr(vec![int(score), bulk(time)])
}

/// Every key with its DUMP payload and whether it has a TTL.
pub type Snapshot = Vec<(Vec<u8>, Option<Vec<u8>>, bool)>;

pub fn snapshot(c: &mut Connection) -> Snapshot {
    let mut keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    keys.sort();
    keys.into_iter()
        .map(|k| {
            let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(&k).query(c).expect("DUMP");
            let pttl: i64 = redis::cmd("PTTL").arg(&k).query(c).expect("PTTL");
            (k, dump, pttl >= 0)
        })
        .collect()
}

pub fn dbsize(c: &mut Connection) -> i64 {
    redis::cmd("DBSIZE").query(c).expect("DBSIZE")
}

/// Runs a binary-safe command that must fail without writing anything;
/// returns the error text.
pub fn refusedb(c: &mut Connection, args: &[&[u8]]) -> String {
    let (before, size) = (snapshot(c), dbsize(c));
    let text = match bcmd(args).query::<Value>(c) {
        Ok(v) => panic!("{:?} should fail, got {v:?}", lossy(args)),
        Err(e) => err_text(&e),
    };
    assert_eq!(dbsize(c), size, "{:?} ({text}) changed DBSIZE", lossy(args));
    assert!(
        snapshot(c) == before,
        "{:?} ({text}) changed the data",
        lossy(args)
    );
    text
}

/// Runs a command that must fail with exactly `want`, writing nothing.
pub fn refused(c: &mut Connection, args: &[&str], want: &str) {
    let got = refusedb(c, &to_bytes(args));
    assert_eq!(got, want, "{args:?}");
}

/// The server still answers, is alive and caught no panic.
pub fn assert_healthy(s: &mut Server, c: &mut Connection) {
    assert_eq!(ok(c, &["PING"]), Value::SimpleString("PONG".into()));
    assert!(s.alive(), "server process died");
    let info: String = redis::cmd("INFO").arg("hotrank").query(c).expect("INFO");
    assert!(
        info.lines().any(|l| l.trim() == "hotrank_panics_caught:0"),
        "a panic was caught:\n{info}"
    );
}

/// Unix seconds with the fewest decimals that keep them exact.
pub fn fmt_ms(ms: i64) -> String {
    let (s, m) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    if m == 0 {
        s.to_string()
    } else {
        format!("{s}.{}", format!("{m:03}").trim_end_matches('0'))
    }
}

/// Parses "1700000000" / "1700000000.12" into milliseconds.
pub fn parse_ms(s: &str) -> i64 {
    let (i, f) = s.split_once('.').unwrap_or((s, ""));
    assert!(f.len() <= 3, "{s}");
    let frac: i64 = format!("{f:0<3}").parse().expect("fraction");
    i.parse::<i64>().expect("seconds") * 1000 + frac
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

pub fn out_of_range(v: i64, min: i64, max: i64) -> String {
    format!("ERR score {v} is out of range [{min}, {max}] of this board")
}

pub fn arity(cmd: &str) -> String {
    format!("ERR wrong number of arguments for '{cmd}' command")
}
