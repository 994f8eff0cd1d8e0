//! What a HOT board costs in memory, measured on a real server: bytes per
//! tracked article at 1, 100, 1,000, 10,000 and 100,000 visitors, bytes per
//! active dedup pair, bytes per active visitor, and a worked example. The
//! README's capacity section is this test's output:
//!
//! ```text
//! HOTRANK_SERVER=redis-server cargo test --release --test capacity -- --nocapture
//! ```
//!
//! Method: `MEMORY USAGE key SAMPLES 0` (the whole key: value, key name and
//! the keyspace entry) summed over the keys of each kind, after sending the
//! views; the board ZSET and the publish index are shared by all articles, so
//! their cost is measured per entry on a board of 10,000 articles. The
//! server's `used_memory` delta over the 100,000-visitor run is printed as a
//! cross-check (it also holds allocator slack and the keyspace's own tables).
//! The checks are loose bounds (the numbers depend on the server's encodings
//! and allocator), so the test guards the order of magnitude, not the bytes.

mod common;
use common::*;
use std::collections::BTreeMap;

/// Views are sent at `T0 + 60`, articles published at `T0`: an hour ago.
fn t0() -> i64 {
    now_s() - 3600
}

/// `MEMORY USAGE key SAMPLES 0`, 0 for a missing key.
fn usage(c: &mut redis::Connection, key: &[u8]) -> i64 {
    let v: Option<i64> = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(key)
        .arg("SAMPLES")
        .arg(0)
        .query(c)
        .expect("MEMORY USAGE");
    v.unwrap_or(0)
}

fn used_memory(c: &mut redis::Connection) -> i64 {
    let text: String = redis::cmd("INFO").arg("memory").query(c).expect("INFO");
    text.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .expect("used_memory")
        .trim()
        .parse()
        .expect("integer")
}

/// The kind of a key of `board` (`board`, or the derived kind: `pv`, `uv`,
/// `meta`, `dd`, `vv`, `pub`, …).
fn kind_of(board: &[u8], key: &[u8]) -> String {
    if key == board {
        return "board".into();
    }
    let rest = &key[board.len() + 1..];
    let end = rest.iter().position(|&b| b == b':').unwrap_or(rest.len());
    String::from_utf8_lossy(&rest[..end]).into_owned()
}

/// (keys, bytes) by kind over every key of the database.
fn by_kind(c: &mut redis::Connection, board: &[u8]) -> BTreeMap<String, (i64, i64)> {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    let mut out: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for k in keys {
        let e = out.entry(kind_of(board, &k)).or_default();
        e.0 += 1;
        e.1 += usage(c, &k);
    }
    out
}

/// Sends `HOT.VIEW board article visitor AT at` for each pair, pipelined;
/// every view must be counted.
fn views(c: &mut redis::Connection, board: &str, pairs: impl Iterator<Item = (String, String)>) {
    let at = (t0() + 60).to_string();
    let pairs: Vec<(String, String)> = pairs.collect();
    for batch in pairs.chunks(5000) {
        let mut p = redis::pipe();
        for (a, v) in batch {
            p.cmd("HOT.VIEW")
                .arg(board)
                .arg(a)
                .arg(v)
                .arg("AT")
                .arg(&at);
        }
        let replies: Vec<(i64, i64, String, String)> = p.query(c).expect("HOT.VIEW");
        assert!(
            replies.iter().all(|r| r.3 == "counted"),
            "a view not counted"
        );
    }
}

fn visitor(i: usize) -> String {
    // A realistic visitor id: 16 bytes, like a session or cookie id.
    format!("v:{i:014}")
}

fn article(i: usize) -> String {
    // A realistic article id: a 16-byte slug.
    format!("article-{i:08}")
}

/// Bytes of one article's own keys (pv, uv, meta) on a board where it has
/// `n` distinct visitors, one view each.
fn article_keys(c: &mut redis::Connection, n: usize) -> (i64, BTreeMap<String, (i64, i64)>) {
    let _: () = redis::cmd("FLUSHALL").query(c).unwrap();
    let board = "hot:{cap}";
    q(c, &["HOT.PUBLISH", board, &article(0), &t0().to_string()]).unwrap();
    views(c, board, (0..n).map(|i| (article(0), visitor(i))));
    let kinds = by_kind(c, board.as_bytes());
    let own: i64 = ["pv", "uv", "meta"]
        .iter()
        .map(|k| kinds.get(*k).map_or(0, |e| e.1))
        .sum();
    (own, kinds)
}

struct Row {
    label: String,
    bytes: f64,
    note: String,
}

#[test]
fn capacity_table() {
    let s = Server::start();
    let mut c = s.conn();
    config_set(&mut c, "hotrank.max-articles", "0"); // never trim here
    let mut rows = Vec::new();

    // Board entries: 10,000 articles, one view each.
    let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
    let board = "hot:{cap}";
    let n_articles = 10_000usize;
    views(
        &mut c,
        board,
        (0..n_articles).map(|i| (article(i), visitor(i))),
    );
    let kinds = by_kind(&mut c, board.as_bytes());
    let get = |k: &str| kinds.get(k).copied().unwrap_or((0, 0));
    let entry = (get("board").1 + get("pub").1) as f64 / n_articles as f64;
    let one_article = (get("pv").1 + get("uv").1 + get("meta").1) as f64 / n_articles as f64;
    println!("10,000 articles, 1 view each: {kinds:?}");
    rows.push(Row {
        label: "board entry (ZSET + publish index), per article".into(),
        bytes: entry,
        note: "while the article is on the board".into(),
    });
    rows.push(Row {
        label: "tracked article, 1 visitor".into(),
        bytes: one_article + entry,
        note: "pv string, uv HyperLogLog (sparse), meta hash, board entry".into(),
    });
    let mut per_article = BTreeMap::new();
    per_article.insert(1usize, one_article + entry);

    for n in [100usize, 1_000, 10_000] {
        let (own, kinds) = article_keys(&mut c, n);
        let uv = kinds.get("uv").map_or(0, |e| e.1);
        per_article.insert(n, own as f64 + entry);
        rows.push(Row {
            label: format!("tracked article, {n} visitors"),
            bytes: own as f64 + entry,
            note: format!("of which the uv HyperLogLog {uv}"),
        });
    }

    // 100,000 visitors of one article: also the dedup pairs and visitor keys.
    let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
    let before = used_memory(&mut c);
    let n = 100_000usize;
    q(
        &mut c,
        &["HOT.PUBLISH", board, &article(0), &t0().to_string()],
    )
    .unwrap();
    views(&mut c, board, (0..n).map(|i| (article(0), visitor(i))));
    let after = used_memory(&mut c);
    let kinds = by_kind(&mut c, board.as_bytes());
    println!("1 article, 100,000 visitors: {kinds:?}");
    let get = |k: &str| kinds.get(k).copied().unwrap_or((0, 0));
    let own = get("pv").1 + get("uv").1 + get("meta").1;
    per_article.insert(n, own as f64 + entry);
    rows.push(Row {
        label: format!("tracked article, {n} visitors"),
        bytes: own as f64 + entry,
        note: format!("of which the uv HyperLogLog {}", get("uv").1),
    });
    let (dd_keys, dd_bytes) = get("dd");
    let pair = dd_bytes as f64 / n as f64;
    rows.push(Row {
        label: "active dedup pair (visitor, article)".into(),
        bytes: pair,
        note: format!(
            "{dd_keys} dedup shard strings for {n} pairs; a pair lives 1 to 2 dedup windows"
        ),
    });
    let (vv_keys, vv_bytes) = get("vv");
    assert_eq!(
        vv_keys as usize, n,
        "one visitor key per visitor and window"
    );
    let active_visitor = vv_bytes as f64 / n as f64;
    rows.push(Row {
        label: "active visitor (per visitor-window)".into(),
        bytes: active_visitor,
        note: "one counter string per visitor per visitor window".into(),
    });
    // For comparison: the server's own HyperLogLog (PFADD) of as many
    // elements, the same encoding the uv key holds.
    let mut pfadd_dense = 0;
    for m in [1_000usize, 10_000] {
        let key = format!("pf:{{cap}}{m}");
        for chunk in (0..m).collect::<Vec<_>>().chunks(1000) {
            let mut cmd = redis::cmd("PFADD");
            cmd.arg(&key);
            for i in chunk {
                cmd.arg(visitor(*i));
            }
            let _: i64 = cmd.query(&mut c).unwrap();
        }
        let pf = usage(&mut c, key.as_bytes());
        pfadd_dense = pf;
        rows.push(Row {
            label: format!("for comparison: PFADD's HyperLogLog of {m} elements"),
            bytes: pf as f64,
            note: "the server's own encoding of the same data".into(),
        });
    }
    let delta_per_view = (after - before) as f64 / n as f64;
    rows.push(Row {
        label: "cross-check: used_memory delta per view".into(),
        bytes: delta_per_view,
        note: "the 100,000-visitor run: article + dedup + visitor keys, allocator slack".into(),
    });

    println!("\nhotrank capacity ({}):\n", server_bin());
    println!("| what | bytes | notes |");
    println!("|---|---:|---|");
    for r in &rows {
        println!("| {} | {:.0} | {} |", r.label, r.bytes, r.note);
    }

    // Worked example: 1M views a day over 50,000 articles, default configs.
    let views_per_day = 1_000_000f64;
    let articles = 50_000f64;
    let per_art = per_article[&1_000];
    let dedup_seconds = 900f64;
    let pairs_alive = views_per_day * 2.0 * dedup_seconds / 86_400.0;
    let visitors_alive = views_per_day * 3_600.0 / 86_400.0;
    let total = articles * per_art + pairs_alive * pair + visitors_alive * active_visitor;
    println!(
        "\nworked example: 1M views a day over 50,000 articles, default configs:\n\
         - articles: 50,000 x {per_art:.0} B (each with about 1,000 distinct visitors) = {:.1} MB\n\
         - dedup: at most {pairs_alive:.0} pairs alive (views of 2 dedup windows of 900 s) x {pair:.1} B = {:.2} MB\n\
         - visitors: at most {visitors_alive:.0} visitor keys alive (views of one 3600 s window, \
           each from another visitor) x {active_visitor:.0} B = {:.2} MB\n\
         - total: about {:.0} MB",
        articles * per_art / 1e6,
        pairs_alive * pair / 1e6,
        visitors_alive * active_visitor / 1e6,
        total / 1e6
    );

    // Loose bounds: the order of magnitude the README states.
    assert!((20.0..300.0).contains(&entry), "board entry {entry}");
    assert!(per_article[&1] < 1_000.0, "{per_article:?}");
    assert!(per_article[&100_000] < 20_000.0, "{per_article:?}");
    assert!(per_article[&1] < per_article[&100_000]);
    // The module's dense HyperLogLog costs what PFADD's does (no spare room
    // left from growing the string in place; the key names differ a little).
    let uv_dense = get("uv").1;
    assert!(
        (uv_dense - pfadd_dense).abs() < 200,
        "dense HyperLogLog {uv_dense} B, PFADD's {pfadd_dense} B"
    );
    assert!((10.0..40.0).contains(&pair), "dedup pair {pair}");
    assert!(
        (30.0..200.0).contains(&active_visitor),
        "visitor {active_visitor}"
    );
}
