//! Server-side setup and checks of tests/fuzz.rs: planted keys of other types
//! and corrupt derived keys, default configs, trimming, INFO, failure dumps and
//! whole-dataset snapshots. Included with
//! `#[path = "common/fuzz_server.rs"] mod fuzz_server;` next to `fuzz_gen`.
#![allow(dead_code)]

use crate::common::{now_s, Keyspace};
use crate::fuzz_gen::*;
use hotrank::keys::{derived, Kind};
use redis::{Connection, Value};
use std::collections::BTreeMap;

pub fn cmd_of(args: &[Vec<u8>]) -> redis::Cmd {
    let mut c = redis::cmd(std::str::from_utf8(&args[0]).unwrap_or("INVALID"));
    for a in &args[1..] {
        c.arg(a.as_slice());
    }
    c
}

pub fn s(v: &str) -> Vec<u8> {
    v.as_bytes().to_vec()
}

/// Keys of other types under board names, and corrupt derived keys.
pub fn plant(c: &mut Connection) {
    let now_ms = now_s() * 1000;
    let mut cmds: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut add = |parts: Vec<Vec<u8>>| cmds.push(parts);
    let other = other_boards();
    for k in &other[..6] {
        add(vec![s("DEL"), k.clone()]);
    }
    add(vec![s("SET"), s("fz:{t}str"), s("hello")]);
    add(vec![s("RPUSH"), s("fz:{t}list"), s("a"), s("b")]);
    add(vec![s("HSET"), s("fz:{t}hash"), s("f"), s("v")]);
    add(vec![s("SADD"), s("fz:{t}set"), s("a"), s("b")]);
    add(vec![
        s("ZADD"),
        s("fz:{t}zset"),
        s("1"),
        s("a0"),
        s("2"),
        s("m1"),
        s("-inf"),
        s("v0"),
    ]);
    add(vec![s("XADD"), s("fz:{t}stream"), s("*"), s("f"), s("v")]);

    // hot:{p}: article-level corruption.
    let p = b"hot:{p}";
    let d = |kind: Kind, parts: &[&[u8]]| derived(p, kind, parts);
    add(vec![
        s("ZADD"),
        p.to_vec(),
        s("5"),
        s("a0"),
        s("3"),
        s("a1"),
        s("1e308"),
        s("a2"),
        s("-inf"),
        s("a3"),
        s("inf"),
        s("a4"),
        s("0"),
        s("a5"),
    ]);
    add(vec![s("SET"), d(Kind::Pv, &[b"a0"]), s("notanumber")]);
    add(vec![s("SET"), d(Kind::Uv, &[b"a1"]), s("HYLL\x01junk")]);
    add(vec![s("SET"), d(Kind::Uv, &[b"a2"]), s("garbage")]);
    add(vec![s("DEL"), d(Kind::Meta, &[b"a3"])]);
    add(vec![s("RPUSH"), d(Kind::Meta, &[b"a3"]), s("x")]);
    add(vec![
        s("HSET"),
        d(Kind::Meta, &[b"a4"]),
        s("pv"),
        s("9223372036854775807"),
        s("uv"),
        s("-5"),
        s("publishedAt"),
        s("-9223372036854775808"),
    ]);
    add(vec![
        s("HSET"),
        d(Kind::Meta, &[b"a5"]),
        s("pv"),
        s("abc"),
        s("publishedAt"),
        s("253402300799999"),
    ]);
    add(vec![
        s("SET"),
        d(Kind::Pv, &[b"a6"]),
        s("9223372036854775807"),
    ]);
    add(vec![
        s("SET"),
        d(Kind::Suspicious, &[b"a7"]),
        s("9223372036854775807"),
    ]);
    add(vec![
        s("SET"),
        d(Kind::Pv, &[b"a8"]),
        s("-9223372036854775808"),
    ]);
    let vwin = format!("3600:{}", now_ms.div_euclid(3_600_000));
    add(vec![
        s("SET"),
        d(Kind::VisitorViews, &[vwin.as_bytes(), b"v9"]),
        s("9223372036854775807"),
    ]);
    add(vec![
        s("SET"),
        d(Kind::VisitorViews, &[vwin.as_bytes(), b"v8"]),
        s("nope"),
    ]);
    let gen = now_ms.div_euclid(900_000);
    for (article, visitor, list) in [
        (&b"a0"[..], &b"v1"[..], true),
        (b"a1", b"v1", false),
        (b"a9", b"v9", false),
    ] {
        let fp = hotrank::hot::dedup::fingerprint(article, visitor);
        let shard = hotrank::hot::dedup::shard(fp, 4096);
        // The pair's shard string, and the old layout's strings of the
        // generations a view reads while it is missing.
        let names = [
            format!("900:{shard}"),
            format!("900:{gen}:{shard}"),
            format!("900:{}:{shard}", gen - 1),
        ];
        for part in &names {
            let name = d(Kind::Dedup, &[part.as_bytes()]);
            add(vec![s("DEL"), name.clone()]);
            if list {
                add(vec![s("RPUSH"), name, s("x")]);
            } else {
                // Not a whole number of 12-byte entries, with the pair's fingerprint.
                let mut v = fp.to_le_bytes().to_vec();
                v.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3]);
                add(vec![s("SET"), name, v]);
            }
        }
    }
    // hot:{p1}: board hash of the wrong type; hot:{p2}: garbage in it; hot:{p3}: publish index of the wrong type.
    add(vec![
        s("SET"),
        derived(b"hot:{p1}", Kind::HotBoard, &[]),
        s("x"),
    ]);
    add(vec![
        s("HSET"),
        derived(b"hot:{p2}", Kind::HotBoard, &[]),
        s("maxViewAt"),
        s("-9223372036854775808"),
        s("fp"),
        s("junk"),
    ]);
    add(vec![
        s("SET"),
        derived(b"hot:{p3}", Kind::PubIndex, &[]),
        s("x"),
    ]);

    // RANK boards with bad layouts, and foreign scores under a valid layout.
    let layout = |b: &[u8]| derived(b, Kind::Layout, &[]);
    add(vec![s("SET"), layout(b"lb:{p1}"), s("garbage")]);
    add(vec![s("DEL"), layout(b"lb:{p2}")]);
    add(vec![s("HSET"), layout(b"lb:{p2}"), s("v1"), s("s")]);
    add(vec![
        s("SET"),
        layout(b"lb:{p3}"),
        s("v1 s -9223372036854775808 9223372036854775807"),
    ]);
    add(vec![s("SET"), layout(b"lb:{p4}"), s("v1 ms -5 5")]);
    add(vec![
        s("ZADD"),
        s("lb:{p4}"),
        s("inf"),
        s("m0"),
        s("-inf"),
        s("m1"),
        s("0"),
        s("m2"),
        s("5e-324"),
        s("m3"),
        s("2.2250738585072014e-308"),
        s("m4"),
        s("1e308"),
        s("m5"),
        s("-1"),
        s("m6"),
        s("4.5"),
        s("m7"),
    ]);
    add(vec![s("SET"), layout(b"lb:{p5}"), s("v1 s 0 1")]);
    add(vec![
        s("ZADD"),
        s("lb:{p5}"),
        s("2.2250738585072014e-308"),
        s("m0"),
    ]);

    let mut pipe = redis::pipe();
    for c in &cmds {
        pipe.add_command(cmd_of(c));
    }
    let r: Vec<Value> = pipe.ignore_errors().query(c).expect("plant");
    for (v, c) in r.iter().zip(&cmds) {
        assert!(
            !matches!(v, Value::ServerError(_)),
            "plant {:?}: {v:?}",
            show(c)
        );
    }
}

pub fn set_defaults(c: &mut Connection) {
    for (k, v) in [
        ("alpha", "1.0"),
        ("beta", "1.2"),
        ("base", "2"),
        ("gamma", "1.5"),
        ("dedup-seconds", "900"),
        ("dedup-shards", "4096"),
        // Low, so the abnormal-traffic path runs often.
        ("visitor-max-views", "20"),
        ("visitor-window-seconds", "3600"),
        ("retention-seconds", "7776000"),
        // Small boards: trimming runs often (past 8 + a slack of 16), and
        // HOT.TOP stays cheap.
        ("max-articles", "8"),
    ] {
        let () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(format!("hotrank.{k}"))
            .arg(v)
            .query(c)
            .unwrap_or_else(|e| panic!("CONFIG SET hotrank.{k} {v}: {e}"));
    }
}

/// Keeps the boards small so the random reads stay cheap.
pub fn trim_boards(c: &mut Connection) {
    let mut pipe = redis::pipe();
    for b in hot_boards().iter().chain(rank_boards().iter()) {
        pipe.cmd("ZREMRANGEBYRANK")
            .arg(b.as_slice())
            .arg(200)
            .arg(-1)
            .ignore();
    }
    for b in hot_boards() {
        let idx = derived(&b, Kind::PubIndex, &[]);
        pipe.cmd("ZREMRANGEBYRANK")
            .arg(idx)
            .arg(300)
            .arg(-1)
            .ignore();
    }
    let _: Value = pipe.ignore_errors().query(c).expect("trim");
}

pub fn info_hotrank(c: &mut Connection) -> BTreeMap<String, i64> {
    let s: String = redis::cmd("INFO")
        .arg("hotrank")
        .query(c)
        .expect("INFO hotrank");
    s.lines()
        .filter_map(|l| l.strip_prefix("hotrank_"))
        .filter_map(|l| l.split_once(':'))
        .filter_map(|(k, v)| Some((k.to_string(), v.trim().parse().ok()?)))
        .collect()
}

pub fn show(args: &[Vec<u8>]) -> String {
    args.iter()
        .map(|a| {
            if a.len() > 80 {
                format!(
                    "<{} bytes {:?}…>",
                    a.len(),
                    String::from_utf8_lossy(&a[..16])
                )
            } else {
                format!("{:?}", String::from_utf8_lossy(a))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes a batch in a replayable form (one command a line, arguments hex-escaped).
pub fn dump_batch(seed: u64, batch: usize, cmds: &[Vec<Vec<u8>>], why: &str) -> String {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    let path = dir.join(format!("fuzz-failure-{seed}-{batch}.txt"));
    let mut out = format!("# seed {seed} batch {batch}: {}\n", why.replace('\n', " "));
    for c in cmds {
        let line: Vec<String> = c
            .iter()
            .map(|a| a.iter().map(|b| format!("{b:02x}")).collect::<String>())
            .collect();
        out.push_str(&line.join(" "));
        out.push('\n');
    }
    let _ = std::fs::write(&path, out);
    path.display().to_string()
}

pub fn error_code(v: &Value) -> Option<String> {
    match v {
        Value::ServerError(e) => Some(e.code().split_whitespace().next().unwrap_or("").to_string()),
        _ => None,
    }
}

pub fn error_text(v: &Value) -> String {
    match v {
        Value::ServerError(e) => format!("{} {}", e.code(), e.details().unwrap_or("")),
        _ => String::new(),
    }
}

/// Replaces the dataset with `snap` (taken with `common::keyspace`).
pub fn restore_snapshot(c: &mut Connection, snap: &Keyspace) {
    let () = redis::cmd("FLUSHALL").query(c).expect("FLUSHALL");
    let mut pipe = redis::pipe();
    for (k, (dump, exp)) in snap {
        pipe.cmd("RESTORE")
            .arg(k)
            .arg((*exp).max(0))
            .arg(dump)
            .arg("ABSTTL")
            .ignore();
    }
    let () = pipe.query(c).expect("RESTORE");
}

pub fn diff(before: &Keyspace, after: &Keyspace) -> String {
    let name = |k: &[u8]| format!("{}", k.escape_ascii());
    let mut out = Vec::new();
    for (k, v) in after {
        match before.get(k) {
            None => out.push(format!("added {}", name(k))),
            Some(b) if b != v => out.push(format!(
                "changed {}{}",
                name(k),
                if b.0 == v.0 { " (expiry only)" } else { "" }
            )),
            _ => {}
        }
    }
    for k in before.keys().filter(|k| !after.contains_key(*k)) {
        out.push(format!("removed {}", name(k)));
    }
    if out.is_empty() {
        "no change on replay".into()
    } else {
        out.join(", ")
    }
}
