//! Helpers of the HOT integration tests split out of tests/hot.rs
//! (tests/hot.rs, hot_top.rs, hot_input.rs, hot_keys.rs, hot_nasa.rs): HOT.TOP
//! and HOT.STATS readers, a whole-dataset snapshot, the random tests' seed and
//! a pipelined replay checked against the reference model. Included with
//! `#[path = "common/hot_helpers.rs"] mod hot_helpers;` next to `hot_client`
//! and `models`.
#![allow(dead_code)]

use crate::hot_client::*;
use crate::models::Model;
use redis::{Connection, Value};
use std::collections::BTreeMap;

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
    match ok(c, &args) {
        Value::Nil => None,
        Value::Array(a) => {
            let fields: Vec<String> = a.iter().step_by(2).map(text).collect();
            assert_eq!(fields, ["pv", "uv", "suspicious", "published_at", "score"]);
            Some(Stats {
                pv: int(&a[1]),
                uv: int(&a[3]),
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

pub fn base_seed() -> u64 {
    std::env::var("HOTRANK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_2024)
}

/// Sends views in pipelined batches and checks every reply against the model.
pub fn replay_views(
    c: &mut Connection,
    board: &[u8],
    model: &mut Model,
    views: &[(Vec<u8>, Vec<u8>, i64)],
    ctx: &str,
) {
    for batch in views.chunks(1000) {
        let mut p = redis::pipe();
        for (a, v, t) in batch {
            p.cmd("HOT.VIEW")
                .arg(board)
                .arg(a)
                .arg(v)
                .arg("AT")
                .arg(ts(*t));
        }
        let replies: Vec<Value> = p
            .query(c)
            .unwrap_or_else(|e| panic!("{ctx}: pipeline: {e}"));
        for ((a, v, t), r) in batch.iter().zip(&replies) {
            let want = model.view(a, v, *t, DEDUP);
            let got = parse_view(r);
            assert_eq!(
                got,
                want,
                "{ctx}: HOT.VIEW {:?} {:?} AT {}",
                String::from_utf8_lossy(a),
                String::from_utf8_lossy(v),
                ts(*t)
            );
        }
    }
}
