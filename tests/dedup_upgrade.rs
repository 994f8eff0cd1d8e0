//! The dedup layout change (issue 31, step 3): one string per dedup shard,
//! holding sections of both generations, instead of one string per
//! (generation, shard).
//!
//! - After an upgrade, the strings the old layout wrote keep deduplicating:
//!   views after the upgrade dedup with views before it, in any order,
//!   as the two-sided model (`|t - counted| < window`) says; the old
//!   strings are only read, and expire as they did.
//! - Sections that ended are dropped by a rewrite that a replica without
//!   the module (effects) and one with it (`commands`) reach byte for byte.
//!
//! The old layout's strings are written here with raw commands, exactly as
//! the old code wrote them: the first counted view of a (generation, shard)
//! made it with `SET name entry PXAT now+2·window`, the next ones
//! `APPEND name entry`, where `entry = fingerprint (8 bytes LE) | t - g·W
//! (4 bytes LE)` ([`dedup::entry`]).

mod common;
use common::*;
#[path = "common/hot_client.rs"]
mod hot_client;
use common::repl::{digest, replica_of, DEBUG_LOCAL};
use common::rng::Rng;
use hot_client::*;
use hotrank::hot::dedup;
use hotrank::keys::{self, Kind};
use redis::Connection;
use std::collections::HashMap;

const W: i64 = 900_000;
const SHARDS: u32 = 4;
const B: &[u8] = b"hot:{up}";

/// The old layout's string of (generation, shard) for board `B` (id 0).
fn old_name(g: i64, shard: u32) -> Vec<u8> {
    keys::derived(B, Kind::Dedup, &[format!("900:{g}:{shard}").as_bytes()])
}

/// The new layout's string of `shard` for board `B` (id 0).
fn new_name(shard: u32) -> Vec<u8> {
    keys::derived(B, Kind::Dedup, &[format!("900:{shard}").as_bytes()])
}

/// The status of a view (`counted`, `duplicate`, …).
fn status(c: &mut Connection, a: &[u8], v: &[u8], t: i64) -> String {
    view(c, B, a, v, t).status
}

/// The two-sided model: whether a view at `t` repeats a counted view of
/// its pair, and if not, records it.
fn model(counted: &mut HashMap<(Vec<u8>, Vec<u8>), Vec<i64>>, a: &[u8], v: &[u8], t: i64) -> bool {
    let c = counted.entry((a.to_vec(), v.to_vec())).or_default();
    let dup = c.iter().any(|x| (t - x).abs() < W);
    if !dup {
        c.push(t);
    }
    dup
}

fn setup(c: &mut Connection) {
    config_set(c, "hotrank.dedup-seconds", "900");
    config_set(c, "hotrank.dedup-shards", &SHARDS.to_string());
    config_set(c, "hotrank.visitor-max-views", "0");
}

#[test]
fn views_after_the_upgrade_dedup_with_the_old_layouts_views() {
    let s = Server::start();
    let mut c = s.conn();
    setup(&mut c);
    let now = now_ms();
    // Two whole generations, well in the past: every view then reads the
    // old strings of both (its own, the one before, the one after).
    let g0 = now.div_euclid(W) - 8;
    let t0 = g0 * W;
    // The board exists before the upgrade (its record, id 0).
    publish(&mut c, B, b"seed", t0);
    let mut rng = Rng::new(31);
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = (0..6)
        .flat_map(|a| {
            (0..5).map(move |v| (format!("a{a}").into_bytes(), format!("v{v}").into_bytes()))
        })
        .collect();
    let mut counted = HashMap::new();
    // Before the upgrade: 150 views in random time order, their counted
    // ones written as the old code wrote them.
    let mut old_keys: HashMap<Vec<u8>, ()> = HashMap::new();
    for _ in 0..150 {
        let (a, v) = &pairs[rng.below(pairs.len() as u64) as usize];
        let t = t0 + rng.below(2 * W as u64) as i64;
        if model(&mut counted, a, v, t) {
            continue;
        }
        let fp = dedup::fingerprint(a, v);
        let name = old_name(dedup::generation(t, W), dedup::shard(fp, SHARDS));
        let e = dedup::entry(fp, t, W);
        if old_keys.insert(name.clone(), ()).is_none() {
            let at = (now + 2 * W).to_string();
            ok(&mut c, &[b"SET", &name, &e[..], b"PXAT", at.as_bytes()]);
        } else {
            ok(&mut c, &[b"APPEND", &name, &e[..]]);
        }
    }
    assert!(
        old_keys.len() > SHARDS as usize,
        "old strings of both generations"
    );
    // After the upgrade: 300 more views in random time order, over the
    // same two generations; each decides as the model.
    let mut mismatches = Vec::new();
    let mut results = HashMap::new();
    for i in 0..300 {
        let (a, v) = &pairs[rng.below(pairs.len() as u64) as usize];
        let t = t0 + rng.below(2 * W as u64) as i64;
        let want = if model(&mut counted, a, v, t) {
            "duplicate"
        } else {
            "counted"
        };
        *results.entry(want).or_insert(0) += 1;
        let got = status(&mut c, a, v, t);
        if got != want {
            mismatches.push(format!(
                "view #{i} {} {} AT {t}: {got}, want {want}",
                String::from_utf8_lossy(a),
                String::from_utf8_lossy(v)
            ));
        }
    }
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    assert!(
        results.get("duplicate").copied().unwrap_or(0) > 50
            && results.get("counted").copied().unwrap_or(0) > 5,
        "both outcomes exercised: {results:?}"
    );
    // The old strings were only read: their values and expiries stand.
    for name in old_keys.keys() {
        let pttl: i64 = redis::cmd("PTTL").arg(name).query(&mut c).expect("PTTL");
        assert!(
            pttl > 0 && pttl <= 2 * W,
            "old string keeps its expiry: {pttl}"
        );
    }
    // A shard's new string, made by its first counted view after the
    // upgrade while old strings existed, says so in its first section
    // (its marker has UPGRADED_BIT), and expires at most two windows from now
    // (rounded up to a second).
    let mut made = 0;
    for shard in 0..SHARDS {
        let name = new_name(shard);
        let v: Vec<u8> = redis::cmd("GET").arg(&name).query(&mut c).expect("GET");
        if v.is_empty() {
            continue;
        }
        made += 1;
        assert!(
            v.len() >= dedup::MARKER + dedup::ENTRY,
            "shard {shard}: {v:?}"
        );
        let head = u64::from_le_bytes(v[..8].try_into().unwrap());
        assert!(dedup::is_marker(head), "shard {shard}");
        assert_ne!(head & dedup::UPGRADED_BIT, 0, "shard {shard}");
        let pttl: i64 = redis::cmd("PTTL").arg(&name).query(&mut c).expect("PTTL");
        assert!(
            pttl > 0 && pttl <= 2 * W + 1000,
            "new string's expiry: {pttl}"
        );
    }
    assert!(made > 0, "no view after the upgrade was counted");
}

#[test]
fn a_new_board_never_reads_the_old_layout_once_its_strings_exist() {
    let s = Server::start();
    let mut c = s.conn();
    setup(&mut c);
    let t = (now_ms().div_euclid(W) - 4) * W + 1000;
    // One counted view per shard makes every new string (no old strings:
    // unmarked).
    let mut shards_seen = HashMap::new();
    let mut i = 0;
    while shards_seen.len() < SHARDS as usize {
        let v = format!("v{i}").into_bytes();
        shards_seen
            .entry(dedup::shard(dedup::fingerprint(b"a", &v), SHARDS))
            .or_insert(v.clone());
        assert_eq!(status(&mut c, b"a", &v, t), "counted");
        i += 1;
    }
    for shard in 0..SHARDS {
        let v: Vec<u8> = redis::cmd("GET")
            .arg(new_name(shard))
            .query(&mut c)
            .expect("GET");
        let head = u64::from_le_bytes(v[..8].try_into().unwrap());
        assert!(dedup::is_marker(head) && head & dedup::UPGRADED_BIT == 0);
    }
    // An old string planted now, of the pair's generation, holding a view
    // of a new pair: not read, since the board's new strings say no old
    // string existed when they were made. A string hotrank did not write
    // under an old name is not read either.
    let v = b"fresh";
    let fp = dedup::fingerprint(b"a", v);
    let shard = dedup::shard(fp, SHARDS);
    let g = dedup::generation(t, W);
    ok(
        &mut c,
        &[b"SET", &old_name(g, shard), &dedup::entry(fp, t, W)[..]],
    );
    ok(&mut c, &[b"SET", &old_name(g - 1, shard), b"not entries"]);
    assert_eq!(status(&mut c, b"a", v, t + 1), "counted");
    assert_eq!(status(&mut c, b"a", v, t + 2), "duplicate");
}

/// Sections that ended are dropped (one rewrite replicated as `SET … PXAT`)
/// and a replica reaches the same bytes, with or without the module, in
/// both replication modes. The dedup window is 3 s here, so a section ends
/// 6 s (rounded up to a second) after it is opened.
#[test]
fn ended_sections_are_dropped_alike_on_replicas() {
    for mode in ["effects", "commands"] {
        let m = Server::start_with(&DEBUG_LOCAL, true);
        let mut mc = m.conn();
        config_set(&mut mc, "hotrank.replicate", mode);
        config_set(&mut mc, "hotrank.dedup-seconds", "3");
        config_set(&mut mc, "hotrank.dedup-shards", "1");
        config_set(&mut mc, "hotrank.visitor-max-views", "0");
        let with = replica_of(&m, true);
        // The module-less replica only takes effects.
        let without = (mode == "effects").then(|| replica_of(&m, false));
        let name = keys::derived(B, Kind::Dedup, &[b"3:0"]);
        let get =
            |c: &mut Connection| -> Vec<u8> { redis::cmd("GET").arg(&name).query(c).expect("GET") };
        // At T: the first section, ending in [T+6 s, T+7 s].
        for v in ["v1", "v2"] {
            let r = ok(&mut mc, &[b"HOT.VIEW", B, b"a", v.as_bytes()]);
            assert_eq!(parse_view(&r).status, "counted");
        }
        let first = get(&mut mc);
        assert_eq!(first.len(), dedup::MARKER + 2 * dedup::ENTRY);
        // At T+4 s, a view of another generation (AT a minute earlier):
        // a second section, ending at T+10 s or later, and the string's
        // expiry moves to its end.
        std::thread::sleep(std::time::Duration::from_millis(4_000));
        let past = ts(now_ms() - 60_000);
        let r = ok(
            &mut mc,
            &[b"HOT.VIEW", B, b"a", b"v3", b"AT", past.as_bytes()],
        );
        assert_eq!(parse_view(&r).status, "counted");
        // At T+8 s the first section has ended, not the second: this
        // view's write drops the first (one rewrite).
        std::thread::sleep(std::time::Duration::from_millis(4_000));
        let r = ok(&mut mc, &[b"HOT.VIEW", B, b"a", b"v1"]);
        assert_eq!(parse_view(&r).status, "counted");
        let last = get(&mut mc);
        assert_eq!(
            last.len(),
            2 * dedup::MARKER + 2 * dedup::ENTRY,
            "the second section and a third, without the first"
        );
        assert_ne!(last[..dedup::MARKER], first[..dedup::MARKER]);
        let replicas = 1 + i64::from(without.is_some());
        let n: i64 = redis::cmd("WAIT")
            .arg(replicas)
            .arg(5000)
            .query(&mut mc)
            .expect("WAIT");
        assert_eq!(n, replicas, "replicas did not acknowledge");
        let want = digest(&mut mc);
        let mut wc = with.conn();
        assert_eq!(digest(&mut wc), want, "{mode}: replica with the module");
        if let Some(r) = &without {
            let mut rc = r.conn();
            assert_eq!(digest(&mut rc), want, "{mode}: replica without the module");
        }
    }
}
