//! Helpers of the HOT-at-scale tests split out of tests/hot_scale.rs
//! (tests/hot_scale.rs, hot_scale_retention.rs, hot_scale_top.rs): pipelined
//! views, HOT.TOP and HOT.STATS readers, key inspection, the random tests' seed
//! and a replay checked against the reference model. Included with
//! `#[path = "common/hot_scale_helpers.rs"] mod hot_scale_helpers;` next to
//! `hot_client` and `models`.
#![allow(dead_code)]

use crate::hot_client::*;
use redis::{Connection, Value};

/// Milliseconds in a minute / an hour / a day.
pub const MIN: i64 = 60_000;

/// `HOT.TOP board <opts> WITHSCORES`: (article, score) pairs.
pub fn top_ws(c: &mut Connection, board: &[u8], opts: &[String]) -> Vec<(Vec<u8>, f64)> {
    let mut args: Vec<&[u8]> = vec![b"HOT.TOP", board];
    args.extend(opts.iter().map(|o| o.as_bytes()));
    args.push(b"WITHSCORES");
    match ok(c, &args) {
        Value::Array(items) => pairs(&items),
        other => panic!("HOT.TOP reply: {other:?}"),
    }
}

pub fn opts(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

pub use crate::hot_client::StatsReply as Stats;

/// `HOT.STATS board article AT at`, or `None` when nil.
pub fn stats(c: &mut Connection, board: &[u8], article: &[u8], at: i64) -> Option<Stats> {
    parse_stats(&ok(
        c,
        &[b"HOT.STATS", board, article, b"AT", ts(at).as_bytes()],
    ))
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
