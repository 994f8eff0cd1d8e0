//! Differential test of `hotrank::hot::hll` against the server's own
//! PFADD/PFCOUNT: every key is kept twice, as local bytes changed by
//! `hll::add`/`hll::count` and as a server key changed by PFADD/PFCOUNT, and
//! the two must stay byte-identical, with the same replies.
//!
//! The server is `HOTRANK_SERVER` (redis-server by default), started bare
//! (the module is not needed). The workload comes from a seeded RNG: the seed
//! is printed, and `HLL_DIFF_SEED` replays one.
mod common;
use common::rng::SplitMix as Rng;

use common::{config_set, Server};
use hotrank::hot::hll::{self, HllError};
use redis::{Connection, Value};
use std::time::Instant;

fn seed() -> u64 {
    let s = std::env::var("HLL_DIFF_SEED")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0x5eed_0001);
    println!("hll_diff seed: {s} (set HLL_DIFF_SEED to replay)");
    s
}

/// How many keys of each kind, and their sizes.
struct Mix {
    /// Keys with 1..=40 elements drawn with repeats from 60 names: stay sparse.
    small: usize,
    /// Keys of crafted elements in a 48-register window with values 1..=5:
    /// VAL splits and merges, ZERO/XZERO boundaries.
    clustered: usize,
    /// (keys, elements each): distinct elements, crossing `hll-sparse-max-bytes`.
    by_size: (usize, usize),
    /// Keys with ~60 elements, a crafted value-32 element (stays sparse) and a
    /// crafted value 33..=51 element (promotes by value).
    by_value: usize,
    /// (keys, elements each): well past promotion, with a few crafted high values.
    dense: (usize, usize),
}

/// The mix of the tests at the default `hll-sparse-max-bytes` (3000): over
/// 1,000 keys, the size keys crossing promotion at about 1,700 elements.
const DEFAULT_MIX: Mix = Mix {
    small: 1000,
    clustered: 40,
    by_size: (30, 2500),
    by_value: 20,
    dense: (12, 8000),
};

/// PFADDs to do: (index of the key, element).
type Ops = Vec<(usize, Vec<u8>)>;

/// The key names, and the operations in a shuffled order.
fn workload(rng: &mut Rng, mix: &Mix) -> (Vec<Vec<u8>>, Ops) {
    let mut keys = Vec::new();
    let mut ops = Vec::new();
    let new_key = |keys: &mut Vec<Vec<u8>>, name: String| {
        keys.push(name.into_bytes());
        keys.len() - 1
    };
    for i in 0..mix.small {
        let k = new_key(&mut keys, format!("small:{i}"));
        for _ in 0..=rng.below(40) {
            ops.push((k, format!("u{}", rng.below(60)).into_bytes()));
        }
    }
    for i in 0..mix.clustered {
        let k = new_key(&mut keys, format!("clustered:{i}"));
        let base = rng.below(hll::REGISTERS as u64 - 48) as usize;
        // Some windows at the very ends of the register range.
        let base = match i % 8 {
            0 => 0,
            1 => hll::REGISTERS - 48,
            _ => base,
        };
        for _ in 0..300 {
            let idx = base + rng.below(48) as usize;
            let count = 1 + rng.below(5) as u8;
            ops.push((k, hll::crafted_element(idx, count, rng.below(4)).to_vec()));
        }
    }
    for i in 0..mix.by_size.0 {
        let k = new_key(&mut keys, format!("size:{i}"));
        for j in 0..mix.by_size.1 {
            ops.push((k, format!("size{i}-e{j}").into_bytes()));
        }
    }
    for i in 0..mix.by_value {
        let k = new_key(&mut keys, format!("value:{i}"));
        for j in 0..60 {
            ops.push((k, format!("value{i}-e{j}").into_bytes()));
        }
        let mut idx = || rng.below(hll::REGISTERS as u64) as usize;
        let (a, b) = (idx(), idx());
        ops.push((k, hll::crafted_element(a, 32, 1).to_vec()));
        let high = 33 + (rng.below(19) as u8);
        ops.push((
            k,
            hll::crafted_element(b, high, rng.below(1 << 10)).to_vec(),
        ));
    }
    for i in 0..mix.dense.0 {
        let k = new_key(&mut keys, format!("dense:{i}"));
        for j in 0..mix.dense.1 {
            ops.push((k, format!("dense{i}-e{j}").into_bytes()));
        }
        for c in [33u8, 40, 51] {
            let idx = rng.below(hll::REGISTERS as u64) as usize;
            ops.push((k, hll::crafted_element(idx, c, 3).to_vec()));
        }
    }
    // Shuffle (Fisher–Yates), so keys interleave and each key's crafted
    // elements land at a random point of its history.
    for i in (1..ops.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        ops.swap(i, j);
    }
    (keys, ops)
}

fn get(c: &mut Connection, key: &[u8]) -> Vec<u8> {
    match redis::cmd("GET").arg(key).query(c).expect("GET") {
        Value::BulkString(b) => b,
        other => panic!("GET {}: {other:?}", String::from_utf8_lossy(key)),
    }
}

fn pfcount(c: &mut Connection, key: &[u8]) -> u64 {
    redis::cmd("PFCOUNT").arg(key).query(c).expect("PFCOUNT")
}

/// The error code of a failing command (`WRONGTYPE`, `INVALIDOBJ`, …).
fn fail_code(c: &mut Connection, cmd: &mut redis::Cmd) -> String {
    match cmd.query::<Value>(c) {
        Ok(v) => panic!("the command should fail, got {v:?}"),
        Err(e) => e.code().unwrap_or("?").to_string(),
    }
}

fn code_of(e: HllError) -> &'static str {
    e.message().split(' ').next().expect("code")
}

/// GET, our count against PFCOUNT, and GET again: bytes and counts equal.
fn check_key(c: &mut Connection, key: &[u8], local: &mut [u8], what: &str) {
    let k = String::from_utf8_lossy(key);
    assert!(
        get(c, key) == local,
        "{what}: {k}: GET differs before PFCOUNT"
    );
    let theirs = pfcount(c, key);
    let (ours, _) = hll::count(local).expect("local count");
    assert_eq!(ours, theirs, "{what}: {k}: count");
    assert!(
        get(c, key) == local,
        "{what}: {k}: GET differs after PFCOUNT"
    );
}

struct Stats {
    keys: usize,
    elements: usize,
    changed: usize,
    sampled: usize,
    dense: usize,
}

/// Runs a workload against the server with `hll-sparse-max-bytes` = `max`.
fn run(c: &mut Connection, rng: &mut Rng, mix: &Mix, max: usize) -> Stats {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("hll-sparse-max-bytes")
        .arg(max)
        .query(c)
        .expect("CONFIG SET");
    let (keys, ops) = workload(rng, mix);
    let mut local: Vec<Option<Vec<u8>>> = vec![None; keys.len()];
    let mut want = Vec::with_capacity(1000);
    let mut pipe = redis::pipe();
    let mut changed = 0;
    let mut sampled = 0;
    let flush = |c: &mut Connection, pipe: &mut redis::Pipeline, want: &mut Vec<i64>| {
        if want.is_empty() {
            return;
        }
        let got: Vec<i64> = pipe.query(c).expect("PFADD pipeline");
        assert_eq!(&got, want, "PFADD replies");
        pipe.clear();
        want.clear();
    };
    for (n, (k, e)) in ops.iter().enumerate() {
        let v = &mut local[*k];
        let created = v.is_none();
        let bytes = v.get_or_insert_with(hll::create);
        // The one-walk add and count (what HOT.VIEW runs) on a twin of a
        // sparse value: same reply, and the bytes of add, then count when
        // it says it recounted.
        let twin = (bytes[4] == 1).then(|| {
            let mut t = bytes.clone();
            (
                hll::add_counted(&mut t, e, max).expect("local add_counted"),
                t,
            )
        });
        let r = hll::add(bytes, e, max).expect("local add");
        if let Some((a, t)) = twin {
            assert_eq!(a.changed, r, "add_counted reply");
            assert_eq!(a.count, hll::estimate_of(bytes).expect("estimate"));
            let mut want = bytes.clone();
            if a.recounted {
                hll::count(&mut want).expect("count");
            }
            assert!(t == want, "add_counted bytes");
        }
        changed += usize::from(r || created);
        want.push(i64::from(r || created));
        pipe.cmd("PFADD").arg(&keys[*k]).arg(e);
        if want.len() == 1000 || (n + 1) % 500 == 0 {
            flush(c, &mut pipe, &mut want);
        }
        if (n + 1) % 500 == 0 {
            check_key(c, &keys[*k], bytes, &format!("element {n}"));
            sampled += 1;
        }
    }
    flush(c, &mut pipe, &mut want);
    // Every key at the end: GET, PFCOUNT, GET, pipelined.
    let mut p = redis::pipe();
    for k in &keys {
        p.cmd("GET").arg(k).cmd("PFCOUNT").arg(k).cmd("GET").arg(k);
    }
    let replies: Vec<Value> = p.query(c).expect("final pipeline");
    let mut dense = 0;
    for (i, k) in keys.iter().enumerate() {
        let name = String::from_utf8_lossy(k);
        let v = local[i].as_mut().expect("every key had an element");
        let [before, count, after] = &replies[3 * i..3 * i + 3] else {
            unreachable!()
        };
        assert!(
            matches!(before, Value::BulkString(b) if b == v),
            "final: {name}: GET before PFCOUNT"
        );
        let (ours, _) = hll::count(v).expect("local count");
        assert_eq!(count, &Value::Int(ours as i64), "final: {name}: count");
        assert!(
            matches!(after, Value::BulkString(b) if b == v),
            "final: {name}: GET after PFCOUNT"
        );
        dense += usize::from(v.len() == hll::DENSE_LEN);
    }
    // The kinds did what they are for.
    for (i, k) in keys.iter().enumerate() {
        let v = local[i].as_ref().expect("bytes");
        if k.starts_with(b"small:") || k.starts_with(b"clustered:") {
            assert_eq!(v[4], 1, "{} should be sparse", String::from_utf8_lossy(k));
        }
        if k.starts_with(b"value:") || k.starts_with(b"dense:") {
            assert_eq!(v[4], 0, "{} should be dense", String::from_utf8_lossy(k));
        }
    }
    Stats {
        keys: keys.len(),
        elements: ops.len(),
        changed,
        sampled,
        dense,
    }
}

fn report(name: &str, max: usize, s: &Stats, t: Instant) {
    println!(
        "{name}: server {}, hll-sparse-max-bytes {max}: {} keys ({} dense at the end), \
         {} elements ({} changed a key), {} sampled checks, {:.1}s",
        common::server_bin(),
        s.keys,
        s.dense,
        s.elements,
        s.changed,
        s.sampled,
        t.elapsed().as_secs_f64()
    );
}

#[test]
fn local_hll_matches_server_byte_for_byte_at_default_sparse_max() {
    let t = Instant::now();
    let s = Server::start_with(&[], false);
    let mut c = s.conn();
    let mut rng = Rng(seed());
    let st = run(
        &mut c,
        &mut rng,
        &DEFAULT_MIX,
        hll::DEFAULT_SPARSE_MAX_BYTES,
    );
    assert!(
        st.keys >= 1000 && st.elements >= 200_000,
        "{} keys, {} elements",
        st.keys,
        st.elements
    );
    // Size keys cross promotion at 3000 bytes (about 1,700 elements).
    assert!(st.dense >= 30 + 20 + 12, "{} dense keys", st.dense);
    report("default", 3000, &st, t);
}

#[test]
fn local_hll_matches_server_with_other_sparse_max_bytes() {
    for (max, by_size) in [(500usize, (20usize, 600usize)), (10_000, (6, 10_000))] {
        let t = Instant::now();
        let s = Server::start_with(&[], false);
        let mut c = s.conn();
        let mut rng = Rng(seed() ^ max as u64);
        let mix = Mix {
            small: 150,
            clustered: 16,
            by_size,
            by_value: 8,
            dense: (2, 12_000),
        };
        let st = run(&mut c, &mut rng, &mix, max);
        assert!(st.dense >= by_size.0 + 8 + 2, "{} dense keys", st.dense);
        report("other", max, &st, t);
    }
}

#[test]
fn pfadd_without_elements_creates_the_empty_hll() {
    let s = Server::start_with(&[], false);
    let mut c = s.conn();
    let r: i64 = redis::cmd("PFADD").arg("k").query(&mut c).expect("PFADD");
    assert_eq!(r, 1);
    assert_eq!(get(&mut c, b"k"), hll::create());
    let r: i64 = redis::cmd("PFADD").arg("k").query(&mut c).expect("PFADD");
    assert_eq!(r, 0, "an existing key with no element is unchanged");
    assert_eq!(pfcount(&mut c, b"k"), 0);
    let mut v = hll::create();
    assert_eq!(
        hll::count(&mut v),
        Ok((0, true)),
        "the new key's cache is stale"
    );
    assert_eq!(get(&mut c, b"k"), v, "after PFCOUNT");
}

#[test]
fn strings_that_are_not_hlls_are_refused_like_the_server() {
    let s = Server::start_with(&[], false);
    let mut c = s.conn();
    let mut dense = hll::create();
    for i in 0..40 {
        hll::add(&mut dense, format!("e{i}").as_bytes(), 0).expect("add");
    }
    assert_eq!(dense.len(), hll::DENSE_LEN, "a limit of 0 promotes at once");
    let mut long_dense = dense.clone();
    long_dense.push(0);
    let mut bad_encoding = hll::create();
    bad_encoding[4] = 2;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("text", b"garbage".to_vec()),
        ("short header", b"HYLL\x01\0\0\0\0\0\0\0\0\0\0".to_vec()),
        ("wrong magic", [&b"HYLx"[..], &hll::create()[4..]].concat()),
        ("encoding 2", bad_encoding),
        ("dense too short", dense[..dense.len() - 1].to_vec()),
        ("dense too long", long_dense),
    ];
    for (name, v) in cases {
        let _: () = redis::cmd("SET")
            .arg("k")
            .arg(&v)
            .query(&mut c)
            .expect("SET");
        let code = fail_code(&mut c, redis::cmd("PFADD").arg("k").arg("x"));
        assert_eq!(code, "WRONGTYPE", "{name}: server PFADD");
        let code = fail_code(&mut c, redis::cmd("PFCOUNT").arg("k"));
        assert_eq!(code, "WRONGTYPE", "{name}: server PFCOUNT");
        assert_eq!(get(&mut c, b"k"), v, "{name}: the server wrote");
        assert_eq!(hll::validate(&v), Err(HllError::NotHll), "{name}");
        let mut ours = v.clone();
        assert_eq!(
            hll::add(&mut ours, b"x", 3000),
            Err(HllError::NotHll),
            "{name}"
        );
        assert_eq!(hll::count(&mut ours), Err(HllError::NotHll), "{name}");
        assert_eq!(ours, v, "{name}: we wrote");
        assert_eq!(code_of(HllError::NotHll), "WRONGTYPE");
    }
}

#[test]
fn corrupt_sparse_values_are_refused_and_left_alone() {
    let s = Server::start_with(&[], false);
    let mut c = s.conn();
    let stale_head = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80";
    // An element that lands in the last register, past a body covering 16,383.
    let last = hll::crafted_element(hll::REGISTERS - 1, 2, 0);
    let cases: Vec<(&str, &[u8], Vec<u8>, bool)> = vec![
        // (name, body, element, does the server's PFADD notice?)
        ("header only", b"", b"x".to_vec(), true),
        (
            "16,383 registers, add to the last",
            b"\x7f\xfe",
            last.to_vec(),
            true,
        ),
        (
            "16,383 registers, add to the first",
            b"\x7f\xfe",
            hll::crafted_element(0, 2, 0).to_vec(),
            false,
        ),
        ("16,385 registers", b"\x7f\xff\x00", b"x".to_vec(), false),
        (
            "a stray opcode at the end",
            b"\x7f\xf5\x84\x08\x55",
            b"x".to_vec(),
            false,
        ),
        (
            "16,383 registers, promoted by value",
            b"\x7f\xfe",
            hll::crafted_element(0, 40, 0).to_vec(),
            true,
        ),
    ];
    for (name, body, element, server_notices) in cases {
        let v = [&stale_head[..], body].concat();
        let _: () = redis::cmd("SET")
            .arg("k")
            .arg(&v)
            .query(&mut c)
            .expect("SET");
        // PFCOUNT reads the registers (the cache is stale) and refuses.
        let code = fail_code(&mut c, redis::cmd("PFCOUNT").arg("k"));
        assert_eq!(code, "INVALIDOBJ", "{name}: server PFCOUNT");
        assert_eq!(get(&mut c, b"k"), v, "{name}: server PFCOUNT wrote");
        let mut ours = v.clone();
        assert_eq!(hll::count(&mut ours), Err(HllError::Corrupt), "{name}");
        assert_eq!(
            hll::add(&mut ours, &element, 3000),
            Err(HllError::Corrupt),
            "{name}"
        );
        assert_eq!(ours, v, "{name}: we wrote");
        // The server's PFADD notices only when it reaches the damage; we are stricter.
        let r = redis::cmd("PFADD")
            .arg("k")
            .arg(&element)
            .query::<i64>(&mut c);
        if server_notices {
            let e = r.expect_err(name);
            assert_eq!(e.code(), Some(code_of(HllError::Corrupt)), "{name}");
            assert_eq!(get(&mut c, b"k"), v, "{name}: server PFADD wrote");
        } else {
            assert!(r.is_ok(), "{name}: the server's PFADD accepts it: {r:?}");
        }
    }
    // A valid cache is returned without reading the body, by both.
    let mut v = b"HYLL\x01\0\0\0\x2a\0\0\0\0\0\0\0".to_vec();
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg(&v)
        .query(&mut c)
        .expect("SET");
    assert_eq!(pfcount(&mut c, b"k"), 42);
    assert_eq!(hll::count(&mut v), Ok((42, false)));
}

/// The module path: every element goes through `HOT.VIEW board key element`
/// (dedup, the visitor limit and trimming off, so every view is counted and
/// reaches the HyperLogLog) and, on a twin key, through the server's own
/// commands as a replica gets them: `PFADD`, then `PFCOUNT` when the value
/// is worth caching (HOT.VIEW caches the count of a value above
/// `hll::STALE_OK_BYTES` or dense, and leaves a small sparse one stale, as
/// PFADD does); a stale twin is counted on a copy. The UV replies must equal
/// the server's count, and the bytes of every article's HyperLogLog must
/// equal its twin's, at samples and at the end.
/// `max` is set with CONFIG SET after the module loaded, so the module must
/// follow the server's `hll-sparse-max-bytes` as it changes.
/// What a replica does with HOT.VIEW's HyperLogLog effects, on KEYS[1]:
/// PFADD ARGV[1], then PFCOUNT if the value is above ARGV[2] bytes or dense
/// (its 5th byte, the encoding, is 0); else the count of a copy (KEYS[2]),
/// so the twin keeps PFADD's stale cache. Replies the count.
const TWIN_VIEW: &str = r#"
redis.call('PFADD', KEYS[1], ARGV[1])
local v = redis.call('GET', KEYS[1])
if #v > tonumber(ARGV[2]) or string.byte(v, 5) == 0 then
  return redis.call('PFCOUNT', KEYS[1])
end
redis.call('COPY', KEYS[1], KEYS[2], 'REPLACE')
local n = redis.call('PFCOUNT', KEYS[2])
redis.call('DEL', KEYS[2])
return n
"#;

/// Marks an existing HyperLogLog's cached count stale, as PFADD does
/// (the top bit of the header's last byte).
const MARK_STALE: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 1 then
  local b = string.byte(redis.call('GETRANGE', KEYS[1], 15, 15))
  if b < 128 then redis.call('SETRANGE', KEYS[1], 15, string.char(b + 128)) end
end
return 0
"#;

/// `trending`: the board (made by its first view, from the configs) keeps
/// a trending ranking, so each view takes the estimate before its add too
/// and derives the one after from it (`hll::add_counted_before`), each
/// view after its HyperLogLog's cached count is marked stale ([`MARK_STALE`]).
fn module_path_matches_server(max: usize, mix: &Mix, trending: bool) -> (usize, usize) {
    let s = Server::start();
    let mut c = s.conn();
    for (name, v) in [
        ("hotrank.dedup-seconds", "0"),
        ("hotrank.visitor-max-views", "0"),
        ("hotrank.max-articles", "0"),
        (
            "hotrank.trending-half-life",
            if trending { "3600" } else { "0" },
        ),
        ("hll-sparse-max-bytes", &max.to_string()),
    ] {
        config_set(&mut c, name, v);
    }
    let board: &[u8] = b"hot:{hll}";
    let mut rng = Rng(seed() ^ max as u64);
    let (keys, ops) = workload(&mut rng, mix);
    let uv_key = |k: &[u8]| hotrank::keys::derived(board, hotrank::keys::Kind::Uv, &[k]);
    let twin = |k: &[u8]| [b"twin:{hll}:".as_slice(), k].concat();
    let compare = |c: &mut Connection, k: &[u8], what: &str| {
        let (a, b) = (get(c, &uv_key(k)), get(c, &twin(k)));
        assert!(
            a == b,
            "{what}: {} differs from its twin",
            String::from_utf8_lossy(k)
        );
    };
    for (batch_no, batch) in ops.chunks(1000).enumerate() {
        let mut p = redis::pipe();
        for (k, e) in batch {
            if trending {
                // The count cached in the header marked stale, as a PFADD
                // leaves it (a replica's or an AOF load's value): the view
                // then takes the estimate before its add from the registers
                // and derives the one after from it, large values included.
                p.cmd("EVAL").arg(MARK_STALE).arg(1).arg(uv_key(&keys[*k]));
            }
            p.cmd("HOT.VIEW").arg(board).arg(&keys[*k]).arg(e);
            p.cmd("EVAL")
                .arg(TWIN_VIEW)
                .arg(2)
                .arg(twin(&keys[*k]))
                .arg("scratch:{hll}")
                .arg(e)
                .arg(hll::STALE_OK_BYTES);
        }
        let replies: Vec<Value> = p.query(&mut c).expect("view pipeline");
        let per = if trending { 3 } else { 2 };
        for (i, pair) in replies.chunks(per).enumerate() {
            let pair = &pair[per - 2..];
            let Value::Array(v) = &pair[0] else {
                panic!("HOT.VIEW reply {:?}", pair[0])
            };
            assert_eq!(
                v[1],
                pair[1],
                "uv of view {} vs PFCOUNT",
                batch_no * 1000 + i
            );
        }
        let (k, _) = &batch[batch.len() - 1];
        compare(&mut c, &keys[*k], &format!("after batch {batch_no}"));
    }
    let mut dense = 0;
    for k in &keys {
        compare(&mut c, k, "final");
        dense += usize::from(get(&mut c, &uv_key(k)).len() == hll::DENSE_LEN);
    }
    (keys.len(), dense)
}

#[test]
fn hot_view_hll_matches_server_pfadd_byte_for_byte() {
    let t = Instant::now();
    let (keys, dense) =
        module_path_matches_server(hll::DEFAULT_SPARSE_MAX_BYTES, &DEFAULT_MIX, false);
    assert!(
        keys >= 1000 && dense >= 30 + 20 + 12,
        "{keys} keys, {dense} dense"
    );
    println!(
        "module path, default sparse max: {keys} keys, {dense} dense, {:.1?}",
        t.elapsed()
    );
}

#[test]
fn hot_view_hll_follows_a_changed_hll_sparse_max_bytes() {
    let mix = Mix {
        small: 100,
        clustered: 10,
        by_size: (10, 1500),
        by_value: 10,
        dense: (2, 4000),
    };
    for max in [500, 10_000] {
        let (keys, dense) = module_path_matches_server(max, &mix, false);
        println!("module path, hll-sparse-max-bytes {max}: {keys} keys, {dense} dense");
    }
}

/// On a board with trending, a view's UV (the estimate after its add,
/// derived from the one before: `hll::add_counted_before`) is PFCOUNT's to
/// the bit after every view, and the bytes are PFADD's, sparse and dense
/// (review of issue 32's one-scan estimates).
#[test]
fn hot_view_hll_on_a_trending_board_matches_server() {
    let mix = Mix {
        small: 150,
        clustered: 20,
        by_size: (8, 2500),
        by_value: 20,
        dense: (3, 6000),
    };
    let (keys, dense) = module_path_matches_server(hll::DEFAULT_SPARSE_MAX_BYTES, &mix, true);
    assert!(
        keys >= 190 && dense >= 8 + 20 + 3,
        "{keys} keys, {dense} dense"
    );
    println!("module path, trending board: {keys} keys, {dense} dense");
}
