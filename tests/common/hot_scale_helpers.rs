//! Helpers of the HOT-at-scale tests split out of tests/hot_scale.rs
//! (tests/hot_scale.rs, hot_scale_retention.rs, hot_scale_top.rs): pipelined
//! views, HOT.TOP and HOT.STATS readers, key inspection, the random tests' seed
//! and a replay checked against the reference model. Included with
//! `#[path = "common/hot_scale_helpers.rs"] mod hot_scale_helpers;` next to
//! `hot_client` and `models`.
#![allow(dead_code)]

use crate::hot_client::*;
use crate::models::Model;
use redis::{Connection, Value};

/// Milliseconds in a minute / an hour / a day.
pub const MIN: i64 = 60_000;

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

/// `HOT.TOP board <opts> WITHSCORES`: (article, score) pairs.
pub fn top_ws(c: &mut Connection, board: &[u8], opts: &[String]) -> Vec<(Vec<u8>, f64)> {
    let mut args: Vec<&[u8]> = vec![b"HOT.TOP", board];
    args.extend(opts.iter().map(|o| o.as_bytes()));
    args.push(b"WITHSCORES");
    match ok(c, &args) {
        Value::Array(items) => {
            assert!(items.len() % 2 == 0, "WITHSCORES reply has an odd length");
            items
                .chunks(2)
                .map(|p| (bytes(&p[0]), score(&p[1])))
                .collect()
        }
        other => panic!("HOT.TOP reply: {other:?}"),
    }
}

pub fn opts(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[derive(Debug, PartialEq)]
pub struct Stats {
    pub pv: i64,
    pub uv: i64,
    pub suspicious: i64,
    pub published_at: Option<String>,
    pub score: f64,
}

/// `HOT.STATS` under RESP2: a flat array of field/value pairs, or nil.
pub fn stats(c: &mut Connection, board: &[u8], article: &[u8], at: i64) -> Option<Stats> {
    match ok(c, &[b"HOT.STATS", board, article, b"AT", ts(at).as_bytes()]) {
        Value::Nil => None,
        Value::Array(a) => {
            let fields: Vec<String> = a.iter().step_by(2).map(text).collect();
            assert_eq!(fields, ["pv", "uv", "suspicious", "published_at", "score"]);
            Some(Stats {
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

/// The publish-time index of a board with a hash tag: `<K>\0pub`.
pub fn pub_index(board: &[u8]) -> Vec<u8> {
    let mut k = board.to_vec();
    k.extend_from_slice(b"\0pub");
    k
}

pub fn exists(c: &mut Connection, key: &[u8]) -> bool {
    int(&ok(c, &[b"EXISTS", key])) == 1
}

pub fn zscore(c: &mut Connection, key: &[u8], member: &[u8]) -> Option<f64> {
    match ok(c, &[b"ZSCORE", key, member]) {
        Value::Nil => None,
        v => Some(score(&v)),
    }
}

pub fn pttl(c: &mut Connection, key: &[u8]) -> i64 {
    int(&ok(c, &[b"PTTL", key]))
}

pub fn zcard(c: &mut Connection, key: &[u8]) -> i64 {
    int(&ok(c, &[b"ZCARD", key]))
}

/// Every key matching a (binary) glob pattern, by SCAN.
pub fn scan(c: &mut Connection, pattern: &[u8]) -> Vec<Vec<u8>> {
    let mut cursor = 0u64;
    let mut out = Vec::new();
    loop {
        let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000)
            .query(c)
            .expect("SCAN");
        out.extend(keys);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    out.sort();
    out.dedup();
    out
}

pub fn base_seed() -> u64 {
    std::env::var("HOTRANK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5CA1_E2024)
}

/// Replays views pipelined and checks every reply against the model.
pub fn replay(
    c: &mut Connection,
    board: &[u8],
    m: &mut Model,
    views: &[(Vec<u8>, Vec<u8>, i64)],
    dedup_ms: i64,
    ctx: &str,
) {
    let got = view_many(c, board, views);
    for ((a, v, t), got) in views.iter().zip(got) {
        let want = m.view(a, v, *t, dedup_ms);
        assert_eq!(
            got,
            want,
            "{ctx}: HOT.VIEW {} {} AT {}",
            String::from_utf8_lossy(a),
            String::from_utf8_lossy(v),
            ts(*t)
        );
    }
}
