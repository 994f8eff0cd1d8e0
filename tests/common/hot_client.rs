//! Client-side helpers shared by the HOT integration tests (tests/hot*.rs,
//! tests/hot_scale*.rs, tests/defects.rs, tests/hostile.rs): binary-safe
//! command runners, reply parsers, the reference formula and the pieces of
//! Redis's HyperLogLog the models use.
#![allow(dead_code)]

use redis::{Connection, Value};
use std::collections::{BTreeMap, HashMap};

/// Milliseconds in an hour / a day.
pub const H: i64 = 3_600_000;

pub const DAY: i64 = 24 * H;

/// A fixed instant in the past (2023-11-14T22:13:20Z), so writes with AT are accepted.
pub const T0: i64 = 1_700_000_000_000;

/// The default dedup window (900 s).
pub const DEDUP: i64 = 900_000;

pub const HLL_P: u32 = 14;

pub const HLL_Q: usize = 50;

pub const HLL_M: usize = 1 << HLL_P;

/// Runs a binary-safe command.
pub fn run(c: &mut Connection, args: &[&[u8]]) -> redis::RedisResult<Value> {
    let mut cmd = redis::cmd(std::str::from_utf8(args[0]).expect("command name"));
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(c)
}

/// Runs a command that must succeed.
pub fn ok(c: &mut Connection, args: &[&[u8]]) -> Value {
    run(c, args).unwrap_or_else(|e| panic!("{:?} failed: {e}", show(args)))
}

pub fn show(args: &[&[u8]]) -> Vec<String> {
    args.iter()
        .map(|a| {
            let s = String::from_utf8_lossy(a);
            if s.len() > 60 {
                format!(
                    "{}…({} bytes)",
                    s.chars().take(60).collect::<String>(),
                    a.len()
                )
            } else {
                s.into_owned()
            }
        })
        .collect()
}

/// Milliseconds as unix seconds with the fewest decimals (at most 3).
pub fn ts(ms: i64) -> String {
    if ms % 1000 == 0 {
        (ms / 1000).to_string()
    } else {
        let frac = format!("{:03}", ms % 1000);
        format!("{}.{}", ms / 1000, frac.trim_end_matches('0'))
    }
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

/// The default formula, written exactly as the brief states it, with the
/// module's own `pow` (the same bits on every machine, unlike the
/// platform's: docs/determinism.md).
pub fn hot(pv: i64, uv: i64, published_ms: i64, at_ms: i64) -> f64 {
    (1.0 * pv as f64 + 1.2 * uv as f64)
        / hotrank::detmath::pow(
            ((at_ms - published_ms) as f64 / 3_600_000.0).max(0.0) + 2.0,
            1.5,
        )
}

pub fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("expected an integer, got {other:?}"),
    }
}

pub fn bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::BulkString(b) => b.clone(),
        Value::SimpleString(s) => s.as_bytes().to_vec(),
        other => panic!("expected a string, got {other:?}"),
    }
}

pub fn text(v: &Value) -> String {
    String::from_utf8(bytes(v)).expect("utf-8")
}

/// A score reply: a bulk string that must parse to an f64.
pub fn score(v: &Value) -> f64 {
    let s = text(v);
    s.parse()
        .unwrap_or_else(|_| panic!("score {s:?} is not a number"))
}

#[derive(Debug, Clone, PartialEq)]
pub struct ViewReply {
    pub pv: i64,
    pub uv: i64,
    pub score: f64,
    pub status: String,
}

/// `HOT.TOP … WITHSCORES` items as (article, score) pairs.
pub fn pairs(items: &[Value]) -> Vec<(Vec<u8>, f64)> {
    assert!(
        items.len().is_multiple_of(2),
        "WITHSCORES reply has an odd length"
    );
    items
        .chunks(2)
        .map(|p| (bytes(&p[0]), score(&p[1])))
        .collect()
}

/// A `HOT.STATS` reply.
#[derive(Debug, PartialEq)]
pub struct StatsReply {
    pub pv: i64,
    pub uv: i64,
    pub suspicious: i64,
    pub published_at: Option<String>,
    pub score: f64,
}

/// `HOT.STATS` under RESP2: a flat array of field/value pairs, or nil.
pub fn parse_stats(v: &Value) -> Option<StatsReply> {
    match v {
        Value::Nil => None,
        Value::Array(a) => {
            let fields: Vec<String> = a.iter().step_by(2).map(text).collect();
            assert_eq!(fields, ["pv", "uv", "suspicious", "published_at", "score"]);
            Some(StatsReply {
                pv: int(&a[1]),
                uv: int(&a[3]),
                suspicious: int(&a[5]),
                published_at: match &a[7] {
                    Value::Nil => None,
                    v => Some(text(v)),
                },
                score: score(&a[9]),
            })
        }
        other => panic!("HOT.STATS reply: {other:?}"),
    }
}

pub fn parse_view(v: &Value) -> ViewReply {
    match v {
        Value::Array(a) if a.len() == 4 => ViewReply {
            pv: int(&a[0]),
            uv: int(&a[1]),
            score: score(&a[2]),
            status: text(&a[3]),
        },
        other => panic!("HOT.VIEW reply: {other:?}"),
    }
}

pub fn view(
    c: &mut Connection,
    board: &[u8],
    article: &[u8],
    visitor: &[u8],
    at: i64,
) -> ViewReply {
    parse_view(&ok(
        c,
        &[
            b"HOT.VIEW",
            board,
            article,
            visitor,
            b"AT",
            ts(at).as_bytes(),
        ],
    ))
}

pub fn publish(c: &mut Connection, board: &[u8], article: &[u8], at: i64) -> i64 {
    int(&ok(c, &[b"HOT.PUBLISH", board, article, ts(at).as_bytes()]))
}

/// The `INFO hotrank` counters, without the `hotrank_` prefix.
pub fn info(c: &mut Connection) -> HashMap<String, i64> {
    let s: String = redis::cmd("INFO").arg("hotrank").query(c).expect("INFO");
    s.lines()
        .filter_map(|l| l.strip_prefix("hotrank_"))
        .filter_map(|l| l.split_once(':'))
        // The counters only, not the version, formula fingerprint, config
        // values and the server's eviction policy.
        .filter(|(k, _)| {
            !k.starts_with("config_")
                && !k.starts_with("formula_")
                && *k != "version"
                && *k != "maxmemory_policy"
        })
        .map(|(k, v)| (k.to_string(), v.trim().parse().expect("INFO value")))
        .collect()
}

/// A derived key name, spelled out independently of `src/keys.rs` from the
/// documented layout, for tests that plant bad values in derived keys.
pub fn derived(board: &[u8], kind: &str, article: &[u8]) -> Vec<u8> {
    let mut k = board.to_vec();
    k.push(0);
    k.extend_from_slice(kind.as_bytes());
    k.push(b':');
    k.extend_from_slice(article);
    k
}

pub fn lossy(v: &[(Vec<u8>, f64)]) -> Vec<(String, f64)> {
    v.iter()
        .map(|(a, s)| (String::from_utf8_lossy(a).into_owned(), *s))
        .collect()
}

/// The server's MurmurHash64A: the crate's own, which `tests/hll_diff.rs`
/// checks against the server byte for byte.
pub fn murmur64a(key: &[u8], seed: u64) -> u64 {
    hotrank::hot::hll::murmur64a(key, seed)
}

/// Sends views `(article, visitor, at)` pipelined in batches; the replies in order.
pub fn view_many(
    c: &mut Connection,
    board: &[u8],
    views: &[(Vec<u8>, Vec<u8>, i64)],
) -> Vec<ViewReply> {
    let mut out = Vec::with_capacity(views.len());
    for batch in views.chunks(5000) {
        let mut p = redis::pipe();
        for (a, v, t) in batch {
            p.cmd("HOT.VIEW")
                .arg(board)
                .arg(a)
                .arg(v)
                .arg("AT")
                .arg(ts(*t));
        }
        let replies: Vec<Value> = p.query(c).expect("HOT.VIEW pipeline");
        out.extend(replies.iter().map(parse_view));
    }
    out
}

/// Every key with its DUMP and whether it has a TTL: equal snapshots mean
/// nothing was written.
pub fn snapshot(c: &mut Connection) -> BTreeMap<Vec<u8>, (Vec<u8>, bool)> {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    keys.into_iter()
        .map(|k| {
            let dump: Vec<u8> = redis::cmd("DUMP").arg(&k).query(c).expect("DUMP");
            let pttl: i64 = redis::cmd("PTTL").arg(&k).query(c).expect("PTTL");
            (k, (dump, pttl > 0))
        })
        .collect()
}
