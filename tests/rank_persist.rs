//! `RANK.*` persistence (split out of tests/rank.rs): RDB save/reload and AOF
//! rewrite/reload keep the packed scores bit for bit.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
#[path = "common/rank_client.rs"]
mod rank_client;
use rank_client::*;
use redis::Connection;

/// Every packed score of the board, as the exact text Redis holds, plus the
/// DUMP bytes of every key: what must survive persistence bit for bit.
fn persisted_state(
    c: &mut Connection,
    boards: &[&str],
) -> Vec<(String, Vec<String>, Option<Vec<u8>>)> {
    boards
        .iter()
        .map(|b| {
            let scores: Vec<String> = redis::cmd("ZRANGE")
                .arg(*b)
                .arg(0)
                .arg(-1)
                .arg("WITHSCORES")
                .query(c)
                .unwrap();
            let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(*b).query(c).unwrap();
            (b.to_string(), scores, dump)
        })
        .collect()
}

/// RDB save/reload and AOF rewrite/reload give back bit-identical packed
/// scores, at the edges of each layout too.
#[test]
fn rdb_reload_and_aof_rewrite_keep_packed_scores_bit_identical() {
    let mut s = Server::start_with(&["--enable-debug-command", "local"], true);
    let c = &mut s.conn();
    ok(c, &["RANK.CREATE", "lb:{ms}", "RESOLUTION", "ms"]);
    ok(
        c,
        &["RANK.CREATE", "lb:{wide}", "MIN", "0", "MAX", "4294967295"],
    );
    let now = now_s();
    for (i, (b, score)) in [
        ("lb:{s}", S_MIN),
        ("lb:{s}", S_MAX),
        ("lb:{s}", 0),
        ("lb:{ms}", MS_MIN),
        ("lb:{ms}", MS_MAX),
        ("lb:{wide}", 4_294_967_295),
        ("lb:{wide}", 4_000_000_001),
    ]
    .iter()
    .enumerate()
    {
        for (j, at) in [1_577_836_800, now - 1, now].iter().enumerate() {
            let m = format!("m{i}-{j}");
            ok(
                c,
                &["RANK.SET", b, &m, &score.to_string(), "AT", &at.to_string()],
            );
        }
    }
    for i in 0..500 {
        ok(
            c,
            &[
                "RANK.INCR",
                "lb:{s}",
                &format!("p{}", i % 37),
                &((i * 7919) % 1000 - 500).to_string(),
            ],
        );
    }
    let boards = ["lb:{s}", "lb:{ms}", "lb:{wide}"];
    let before = persisted_state(c, &boards);
    ok(c, &["DEBUG", "RELOAD"]);
    assert_eq!(
        persisted_state(c, &boards),
        before,
        "after RDB save and reload"
    );
    ok(c, &["CONFIG", "SET", "appendonly", "yes"]);
    // Enabling AOF writes it by a rewrite; wait until that is done.
    for _ in 0..500 {
        let info: String = redis::cmd("INFO").arg("persistence").query(c).unwrap();
        if info.contains("aof_rewrite_in_progress:0")
            && info.contains("aof_enabled:1")
            && !info.contains("aof_rewrite_scheduled:1")
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    ok(c, &["DEBUG", "LOADAOF"]);
    assert_eq!(
        persisted_state(c, &boards),
        before,
        "after AOF rewrite and reload"
    );
    for b in boards {
        // Decoding still works after both reloads.
        assert_eq!(ok(c, &["RANK.CARD", b]), ok(c, &["ZCARD", b]));
    }
    assert!(s.alive());
}
