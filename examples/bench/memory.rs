//! Section 3: memory of the dedup state and bytes per article.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use hotrank::keys::{derived, Kind};
use redis::Value;

use crate::data::{article, visitor};
use crate::fill::pipelined;
use crate::replies::{describe, view_status};
use crate::util::{connect, info_num, progress};
use crate::{Cfg, Res, BOARD, DD_BOARD, DD_DB};

/// Keys of database `db` whose name starts with `prefix` (binary), by SCAN MATCH.
fn scan_prefix(con: &mut redis::Connection, prefix: &[u8]) -> Res<Vec<Vec<u8>>> {
    let mut pattern = Vec::with_capacity(prefix.len() + 1);
    for &b in prefix {
        if matches!(b, b'*' | b'?' | b'[' | b']' | b'\\') {
            pattern.push(b'\\');
        }
        pattern.push(b);
    }
    pattern.push(b'*');
    let mut keys = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let (next, batch): (String, Vec<Vec<u8>>) = redis::cmd("SCAN")
            .arg(&cursor)
            .arg("MATCH")
            .arg(&pattern[..])
            .arg("COUNT")
            .arg(10_000)
            .query(con)
            .map_err(|e| format!("SCAN MATCH {}: {e}", String::from_utf8_lossy(&pattern)))?;
        keys.extend(batch);
        if next == "0" {
            break;
        }
        cursor = next;
    }
    keys.sort();
    keys.dedup();
    Ok(keys)
}

/// Sum of MEMORY USAGE (SAMPLES 0: exact for aggregates) over `keys` in database `db`.
fn memory_usage(port: u16, db: u32, keys: &[Vec<u8>]) -> Res<u64> {
    let sum = AtomicU64::new(0);
    pipelined(
        port,
        db,
        keys.len(),
        "MEMORY USAGE",
        &|p, i| {
            p.cmd("MEMORY")
                .arg("USAGE")
                .arg(&keys[i][..])
                .arg("SAMPLES")
                .arg(0);
        },
        &|i, v| match v {
            Value::Int(n) => {
                sum.fetch_add(*n as u64, Ordering::Relaxed);
                Ok(())
            }
            Value::Nil => Ok(()), // expired or deleted meanwhile
            other => Err(format!(
                "MEMORY USAGE {}: {}",
                String::from_utf8_lossy(&keys[i]).replace('\0', "\\x00"),
                describe(other)
            )),
        },
    )?;
    Ok(sum.into_inner())
}

/// `<board>\0<kind>:`, the prefix every derived key of `kind` with parts starts with.
fn kind_prefix(board: &str, kind: Kind) -> Vec<u8> {
    let mut k = derived(board.as_bytes(), kind, &[]);
    k.push(b':');
    k
}

/// Each visitor of the dedup board views PER_VISITOR different articles, so no visitor
/// crosses the module's abnormal-traffic limit (hotrank.visitor-max-views, 60 an hour by
/// default); every article still gets `nv` distinct visitors.
const PER_VISITOR: usize = 50;

/// The `i`-th (article, visitor) pair of the dedup board of `na` articles.
fn dd_pair(na: usize, i: usize) -> (String, String) {
    let (v, k) = (i / PER_VISITOR, i % PER_VISITOR);
    (
        article(((v * PER_VISITOR + k) % na) as u32),
        visitor(v as u32),
    )
}

/// Sends `pairs_n` HOT.VIEW of distinct pairs to the dedup board; returns the time it
/// took and the replies `counted` and other (duplicate or suspicious).
fn fill_dedup_board(port: u16, na: usize, pairs_n: usize) -> Res<(f64, u64, u64)> {
    let (counted, other) = (AtomicU64::new(0), AtomicU64::new(0));
    let t = Instant::now();
    pipelined(
        port,
        DD_DB,
        pairs_n,
        "HOT.VIEW",
        &|p, i| {
            let (a, v) = dd_pair(na, i);
            p.cmd("HOT.VIEW").arg(DD_BOARD).arg(a).arg(v);
        },
        &|i, v| match view_status(v) {
            Ok(s) if s == "counted" => {
                counted.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Ok(_) => {
                other.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                let (a, v) = dd_pair(na, i);
                Err(format!("HOT.VIEW {DD_BOARD} {a} {v}: {e}"))
            }
        },
    )?;
    Ok((
        t.elapsed().as_secs_f64(),
        counted.into_inner(),
        other.into_inner(),
    ))
}

pub fn dedup_memory(port: u16, cfg: &Cfg, problems: &mut Vec<String>) -> Res<()> {
    let (na, nv) = (cfg.dd_articles, cfg.dd_visitors);
    let pairs_n = na * nv;
    progress(&format!(
        "dedup memory: {pairs_n} distinct pairs on {DD_BOARD}"
    ));
    let mut con = connect(port, DD_DB)?;
    let used_before = info_num(&mut con, "memory", "used_memory")?;
    let (fill_s, counted, other) = fill_dedup_board(port, na, pairs_n)?;
    let used_after = info_num(&mut con, "memory", "used_memory")?;
    if counted != pairs_n as u64 {
        problems.push(format!(
            "dedup board: {pairs_n} distinct pairs sent, {counted} counted, {other} duplicate or \
             suspicious"
        ));
    }
    println!(
        "Dedup state: {pairs_n} HOT.VIEW with distinct (article, visitor) pairs ({na} articles × \
         {nv} distinct visitors each; {} visitors viewing {PER_VISITOR} articles each, under \
         the abnormal-traffic limit; view time = now, so every pair is active) on `{DD_BOARD}` \
         (database {DD_DB}), sent in {fill_s:.1} s; {counted} counted. Module defaults \
         (hotrank.dedup-shards etc.).",
        pairs_n / PER_VISITOR
    );
    println!();
    dedup_table(port, &mut con, pairs_n, problems)?;
    println!();
    let board_bytes = used_after.saturating_sub(used_before);
    println!(
        "Cross-check: INFO used_memory grew by {board_bytes} bytes ({:.1} per pair) during this \
         fill; that counts the whole board (also {na} pv/uv/meta triples, whose {na} \
         HyperLogLogs of {nv} visitors are dense, ~12 KB each, and the abnormal-traffic keys) \
         and the keyspace dictionaries' and expires dictionary's own overhead, which MEMORY \
         USAGE leaves out.",
        board_bytes as f64 / pairs_n as f64
    );
    Ok(())
}

/// The table of dedup keys on the dedup board: count, MEMORY USAGE, bytes per pair.
fn dedup_table(
    port: u16,
    con: &mut redis::Connection,
    pairs_n: usize,
    problems: &mut Vec<String>,
) -> Res<()> {
    println!("| dedup keys | count | MEMORY USAGE sum | bytes per active pair |");
    println!("|---|---:|---:|---:|");
    // `seen:` has no `keys::Kind`: it is the per-pair dedup key of the first module
    // version (one key per pair), replaced by the compact `dd:` shards. Kept, as an
    // independent probe, so a build that still used it would show up in this table.
    let mut seen = DD_BOARD.as_bytes().to_vec();
    seen.extend_from_slice(b"\0seen:");
    let mut total = 0u64;
    let mut found_any = false;
    for (suffix, prefix) in [("seen:", seen), ("dd:", kind_prefix(DD_BOARD, Kind::Dedup))] {
        let keys = scan_prefix(con, &prefix)?;
        let bytes = memory_usage(port, DD_DB, &keys)?;
        total += bytes;
        found_any |= !keys.is_empty();
        println!(
            "| `{DD_BOARD}\\x00{suffix}*` | {} | {bytes} | {:.1} |",
            keys.len(),
            bytes as f64 / pairs_n as f64
        );
    }
    println!(
        "| **total dedup** | | {total} | **{:.1}** |",
        total as f64 / pairs_n as f64
    );
    // Not dedup: the abnormal-traffic counters (one key per visitor and window).
    let vv = scan_prefix(con, &kind_prefix(DD_BOARD, Kind::VisitorViews))?;
    if !vv.is_empty() {
        let bytes = memory_usage(port, DD_DB, &vv)?;
        println!(
            "| (not dedup) abnormal-traffic state `{DD_BOARD}\\x00vv:*` | {} | {bytes} | {:.1} |",
            vv.len(),
            bytes as f64 / pairs_n as f64
        );
    }
    if !found_any {
        problems.push(format!(
            "dedup memory: no key matched {DD_BOARD}\\x00seen:* nor {DD_BOARD}\\x00dd:* (dedup \
             off, or key naming changed)"
        ));
    }
    Ok(())
}

/// Per-article derived keys, in the order of the report's rows.
const ARTICLE_KINDS: [(&str, Kind); 4] = [
    ("pv:", Kind::Pv),
    ("uv:", Kind::Uv),
    ("meta:", Kind::Meta),
    ("sus:", Kind::Suspicious),
];

pub fn article_memory(
    port: u16,
    con: &mut redis::Connection,
    cfg: &Cfg,
    problems: &mut Vec<String>,
) -> Res<()> {
    progress(&format!("bytes per article on {BOARD}"));
    let n = cfg.articles;
    let board = BOARD.as_bytes();
    let probe = derived(board, Kind::Pv, &[article(0).as_bytes()]);
    let exists: i64 = redis::cmd("EXISTS")
        .arg(&probe[..])
        .query(con)
        .map_err(|e| format!("EXISTS: {e}"))?;
    if exists == 0 {
        problems.push(format!(
            "bytes per article: key {}\\x00pv:art:0 does not exist (derived key naming changed?)",
            BOARD
        ));
    }
    let mut rows = Vec::new();
    for (suffix, kind) in ARTICLE_KINDS {
        let keys: Vec<Vec<u8>> = (0..n)
            .map(|i| derived(board, kind, &[article(i as u32).as_bytes()]))
            .collect();
        rows.push((
            format!("`{BOARD}\\x00{suffix}<article>`"),
            memory_usage(port, 0, &keys)?,
        ));
    }
    let zset = memory_usage(port, 0, &[board.to_vec()])?;
    rows.push((format!("ZSET `{BOARD}` (share per article)"), zset));
    let pubidx = memory_usage(port, 0, &[derived(board, Kind::PubIndex, &[])])?;
    if pubidx > 0 {
        rows.push((
            format!("ZSET `{BOARD}\\x00pub` publish index (share)"),
            pubidx,
        ));
    }
    let hb = memory_usage(port, 0, &[derived(board, Kind::HotBoard, &[])])?;
    rows.push((format!("`{BOARD}\\x00board` (share)"), hb));
    println!(
        "Bytes per article on `{BOARD}` ({n} articles, every one viewed at least once): MEMORY \
         USAGE … SAMPLES 0 summed over each kind of per-article key, divided by the number of \
         articles (dedup keys not included)."
    );
    println!();
    println!("| key | MEMORY USAGE sum | bytes per article |");
    println!("|---|---:|---:|");
    let mut total = 0.0;
    for (k, b) in rows {
        total += b as f64 / n as f64;
        println!("| {k} | {b} | {:.1} |", b as f64 / n as f64);
    }
    println!("| **total** | | **{total:.1}** |");
    Ok(())
}
