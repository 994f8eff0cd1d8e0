//! HOT boards at scale (split out of tests/hot_scale.rs): retention and the
//! sweep of expired articles.
//!
//! Times are milliseconds since the epoch inside the tests and unix seconds
//! (with up to 3 decimals) on the wire. Random tests use a seeded xorshift
//! generator; set `HOTRANK_SEED` to rerun one seed.

mod common;
use common::*;
#[path = "common/hot_client.rs"]
mod hot_client;
use hot_client::*;
#[path = "common/hot_scale_helpers.rs"]
mod hot_scale_helpers;
#[path = "common/models.rs"]
mod models;
use hot_scale_helpers::*;

// ---------------------------------------------------------------------------
// 5. Retention
// ---------------------------------------------------------------------------

#[test]
fn retention_expires_article_keys_and_a_view_that_grows_the_board_sweeps_expired_articles() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{ret}";
    config_set(&mut c, "hotrank.retention-seconds", "60");
    let t = now_ms() - 3 * H;
    // "a", "b": recent and popular. "old": oldest publish time, mid score.
    // "low": the lowest score.
    publish(&mut c, b, b"a", t - 2 * H);
    publish(&mut c, b, b"b", t - 2 * H);
    publish(&mut c, b, b"old", t - 30 * H);
    publish(&mut c, b, b"low", t - 10 * H);
    for i in 0..5 {
        view(&mut c, b, b"a", format!("v{i}").as_bytes(), t);
        view(&mut c, b, b"b", format!("v{i}").as_bytes(), t);
    }
    for i in 0..20 {
        view(&mut c, b, b"old", format!("v{i}").as_bytes(), t);
    }
    view(&mut c, b, b"low", b"v0", t);
    let keys = |a: &[u8]| -> Vec<Vec<u8>> {
        ["pv", "uv", "meta"]
            .iter()
            .map(|k| derived(b, k, a))
            .collect()
    };
    for a in [&b"a"[..], b"b", b"old", b"low"] {
        for k in keys(a) {
            let ttl = pttl(&mut c, &k);
            assert!(
                ttl > 0 && ttl <= 60_000,
                "{:?}: PTTL {ttl} not in (0, 60000]",
                String::from_utf8_lossy(&k)
            );
        }
    }
    // The order the sweep relies on.
    let lowest: Vec<Vec<u8>> = redis::cmd("ZRANGE")
        .arg(b)
        .arg(0)
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(lowest, vec![b"low".to_vec()]);
    let oldest: Vec<Vec<u8>> = redis::cmd("ZRANGE")
        .arg(pub_index(b))
        .arg(0)
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(oldest, vec![b"old".to_vec()]);
    assert_eq!(info(&mut c)["articles_swept"], 0);

    // Refresh: an expiry older than a tenth of the retention is renewed by a
    // counted view; a fresh one is left alone.
    for k in keys(b"a") {
        ok(&mut c, &[b"PEXPIRE", &k, b"30000"]);
    }
    view(&mut c, b, b"a", b"v-refresh", t);
    for k in keys(b"a") {
        let ttl = pttl(&mut c, &k);
        assert!(ttl > 54_000 && ttl <= 60_000, "refreshed PTTL {ttl}");
    }
    for k in keys(b"b") {
        ok(&mut c, &[b"PEXPIRE", &k, b"59000"]);
    }
    view(&mut c, b, b"b", b"v-fresh", t);
    for k in keys(b"b") {
        let ttl = pttl(&mut c, &k);
        assert!(
            ttl > 0 && ttl <= 59_000,
            "fresh expiry rewritten: PTTL {ttl}"
        );
    }

    // Simulated expiry of "low" (lowest score) and "old" (oldest publish time).
    for a in [&b"low"[..], b"old"] {
        for k in keys(a) {
            assert_eq!(int(&ok(&mut c, &[b"DEL", &k])), 1);
        }
    }
    // A duplicate view does no upkeep.
    assert_eq!(view(&mut c, b, b"a", b"v0", t + 1000).status, "duplicate");
    assert!(zscore(&mut c, b, b"low").is_some());
    assert_eq!(info(&mut c)["articles_swept"], 0);
    // A counted view of an article already on the board does no upkeep
    // either: the board did not grow.
    assert_eq!(view(&mut c, b, b"a", b"v-new", t + 1000).status, "counted");
    assert!(zscore(&mut c, b, b"low").is_some());
    assert_eq!(info(&mut c)["articles_swept"], 0);
    // A counted view that adds an article forgets both.
    assert_eq!(
        view(&mut c, b, b"new", b"v-new", t + 1000).status,
        "counted"
    );
    for a in [&b"low"[..], b"old"] {
        let name = String::from_utf8_lossy(a).into_owned();
        assert_eq!(zscore(&mut c, b, a), None, "{name} still on the board");
        assert_eq!(
            zscore(&mut c, &pub_index(b), a),
            None,
            "{name} still indexed"
        );
    }
    assert_eq!(info(&mut c)["articles_swept"], 2);
    assert_eq!(zcard(&mut c, b), 3);
    assert_eq!(zcard(&mut c, &pub_index(b)), 3);
    let top = top_ws(&mut c, b, &opts(&["AT", &ts(t + 2000)]));
    let mut ids: Vec<Vec<u8>> = top.into_iter().map(|x| x.0).collect();
    ids.sort();
    assert_eq!(ids, vec![b"a".to_vec(), b"b".to_vec(), b"new".to_vec()]);
}
