//! Helpers of the HOT integration tests split out of tests/hot.rs
//! (tests/hot.rs, hot_top.rs, hot_input.rs, hot_keys.rs, hot_nasa.rs): HOT.TOP
//! and HOT.STATS readers, a whole-dataset snapshot, the random tests' seed and
//! a pipelined replay checked against the reference model. Included with
//! `#[path = "common/hot_helpers.rs"] mod hot_helpers;` next to `hot_client`
//! and `models`.
#![allow(dead_code)]

use crate::hot_client::*;
use crate::models::{replay, Model};
use redis::{Connection, Value};

/// Runs a command that must fail; returns "CODE detail" as `common::err` does.
pub fn fail(c: &mut Connection, args: &[&[u8]]) -> String {
    match run(c, args) {
        Ok(v) => panic!("{:?} should fail, got {v:?}", show(args)),
        Err(e) => format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""))
            .trim()
            .to_string(),
    }
}

pub fn top_args(board: &[u8], opts: &[&str]) -> Vec<Vec<u8>> {
    let mut v = vec![b"HOT.TOP".to_vec(), board.to_vec()];
    v.extend(opts.iter().map(|o| o.as_bytes().to_vec()));
    v
}

pub fn top_raw(c: &mut Connection, args: &[Vec<u8>]) -> Vec<Value> {
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    match ok(c, &refs) {
        Value::Array(a) => a,
        other => panic!("HOT.TOP reply: {other:?}"),
    }
}

/// `HOT.TOP` without scores: the article ids.
pub fn top(c: &mut Connection, board: &[u8], opts: &[&str]) -> Vec<Vec<u8>> {
    top_raw(c, &top_args(board, opts))
        .iter()
        .map(bytes)
        .collect()
}

/// `HOT.TOP … WITHSCORES`: (article, score) pairs.
pub fn top_ws(c: &mut Connection, board: &[u8], opts: &[&str]) -> Vec<(Vec<u8>, f64)> {
    let mut o = opts.to_vec();
    o.push("WITHSCORES");
    pairs(&top_raw(c, &top_args(board, &o)))
}

pub fn ids(v: &[&str]) -> Vec<Vec<u8>> {
    v.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[derive(Debug, PartialEq)]
pub struct Stats {
    pub pv: i64,
    pub uv: i64,
    pub published_at: Option<String>,
    pub score: f64,
}

/// `HOT.STATS` under RESP2: a flat array of field/value pairs, or nil.
pub fn stats(c: &mut Connection, board: &[u8], article: &[u8], at: Option<i64>) -> Option<Stats> {
    let at_s = at.map(ts);
    let mut args: Vec<&[u8]> = vec![b"HOT.STATS", board, article];
    if let Some(a) = &at_s {
        args.extend_from_slice(&[b"AT", a.as_bytes()]);
    }
    parse_stats(&ok(c, &args)).map(|s| Stats {
        pv: s.pv,
        uv: s.uv,
        published_at: s.published_at,
        score: s.score,
    })
}

pub fn base_seed() -> u64 {
    std::env::var("HOTRANK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_2024)
}

/// Sends views in pipelined batches and checks every reply against the model
/// (the default dedup window).
pub fn replay_views(
    c: &mut Connection,
    board: &[u8],
    model: &mut Model,
    views: &[(Vec<u8>, Vec<u8>, i64)],
    ctx: &str,
) {
    replay(c, board, model, views, DEDUP, ctx)
}
