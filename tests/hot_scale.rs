//! Integration tests of HOT boards at scale ("Hot ranking at scale"): the
//! compact dedup store (memory, generation boundaries), suspicious-visitor
//! isolation, trimming to `hotrank.max-articles`, retention and the sweep of
//! expired articles, and HOT.TOP (pruned walk and publish-index path) against
//! a brute-force reference on large random boards.
//!
//! Times are milliseconds since the epoch inside the tests and unix seconds
//! (with up to 3 decimals) on the wire. Random tests use a seeded xorshift
//! generator; set `HOTRANK_SEED` to rerun one seed.

mod common;
use common::*;
#[path = "common/hot_client.rs"]
mod hot_client;
use hot_client::*;
use redis::{Connection, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Milliseconds in a minute / an hour / a day.
const MIN: i64 = 60_000;

// ---------------------------------------------------------------------------
// Helpers (small copies of tests/hot.rs helpers)
// ---------------------------------------------------------------------------

/// Sends views `(article, visitor, at)` pipelined in batches; the replies in order.
fn view_many(
    c: &mut Connection,
    board: &[u8],
    views: &[(Vec<u8>, Vec<u8>, i64)],
) -> Vec<ViewReply> {
    let mut out = Vec::with_capacity(views.len());
    for batch in views.chunks(5000) {
        let mut p = redis::pipe();
        for (a, v, t) in batch {
            p.cmd("HOT.VIEW")
                .arg(board)
                .arg(a)
                .arg(v)
                .arg("AT")
                .arg(ts(*t));
        }
        let replies: Vec<Value> = p.query(c).expect("HOT.VIEW pipeline");
        out.extend(replies.iter().map(parse_view));
    }
    out
}

/// `HOT.TOP board <opts> WITHSCORES`: (article, score) pairs.
fn top_ws(c: &mut Connection, board: &[u8], opts: &[String]) -> Vec<(Vec<u8>, f64)> {
    let mut args: Vec<&[u8]> = vec![b"HOT.TOP", board];
    args.extend(opts.iter().map(|o| o.as_bytes()));
    args.push(b"WITHSCORES");
    match ok(c, &args) {
        Value::Array(items) => {
            assert!(items.len() % 2 == 0, "WITHSCORES reply has an odd length");
            items
                .chunks(2)
                .map(|p| (bytes(&p[0]), score(&p[1])))
                .collect()
        }
        other => panic!("HOT.TOP reply: {other:?}"),
    }
}

fn opts(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[derive(Debug, PartialEq)]
struct Stats {
    pv: i64,
    uv: i64,
    suspicious: i64,
    published_at: Option<String>,
    score: f64,
}

/// `HOT.STATS` under RESP2: a flat array of field/value pairs, or nil.
fn stats(c: &mut Connection, board: &[u8], article: &[u8], at: i64) -> Option<Stats> {
    match ok(c, &[b"HOT.STATS", board, article, b"AT", ts(at).as_bytes()]) {
        Value::Nil => None,
        Value::Array(a) => {
            let fields: Vec<String> = a.iter().step_by(2).map(text).collect();
            assert_eq!(fields, ["pv", "uv", "suspicious", "published_at", "score"]);
            Some(Stats {
                pv: int(&a[1]),
                uv: int(&a[3]),
                suspicious: int(&a[5]),
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

/// The publish-time index of a board with a hash tag: `<K>\0pub`.
fn pub_index(board: &[u8]) -> Vec<u8> {
    let mut k = board.to_vec();
    k.extend_from_slice(b"\0pub");
    k
}

fn exists(c: &mut Connection, key: &[u8]) -> bool {
    int(&ok(c, &[b"EXISTS", key])) == 1
}

fn zscore(c: &mut Connection, key: &[u8], member: &[u8]) -> Option<f64> {
    match ok(c, &[b"ZSCORE", key, member]) {
        Value::Nil => None,
        v => Some(score(&v)),
    }
}

fn pttl(c: &mut Connection, key: &[u8]) -> i64 {
    int(&ok(c, &[b"PTTL", key]))
}

fn zcard(c: &mut Connection, key: &[u8]) -> i64 {
    int(&ok(c, &[b"ZCARD", key]))
}

/// Every key matching a (binary) glob pattern, by SCAN.
fn scan(c: &mut Connection, pattern: &[u8]) -> Vec<Vec<u8>> {
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

/// A seeded xorshift64* generator: failures reproduce from the printed seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % ((hi - lo) as u64 + 1)) as i64
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.range(0, i as i64) as usize;
            v.swap(i, j);
        }
    }
}

fn base_seed() -> u64 {
    std::env::var("HOTRANK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5CA1_E2024)
}

// ---------------------------------------------------------------------------
// A model of Redis's HyperLogLog (PFADD/PFCOUNT), so reference UVs equal the
// server's exactly: MurmurHash64A with seed 0xadc83b19, 2^14 registers, and
// Ertl's estimator as in hyperloglog.c (`hllCount`). Copied from tests/hot.rs.
// ---------------------------------------------------------------------------

/// Registers kept sparsely (index → value): boards here hold thousands of
/// articles with a few visitors each.
#[derive(Clone, Default)]
struct Hll {
    regs: HashMap<usize, u8>,
}

impl Hll {
    fn add(&mut self, ele: &[u8]) {
        let h = murmur64a(ele, 0xadc8_3b19);
        let idx = (h & (HLL_M as u64 - 1)) as usize;
        let rest = (h >> HLL_P) | (1u64 << HLL_Q);
        let count = (rest.trailing_zeros() + 1) as u8;
        let r = self.regs.entry(idx).or_insert(0);
        *r = (*r).max(count);
    }

    fn count(&self) -> i64 {
        fn sigma(mut x: f64) -> f64 {
            if x == 1.0 {
                return f64::INFINITY;
            }
            let (mut y, mut z) = (1.0, x);
            loop {
                x *= x;
                let zp = z;
                z += x * y;
                y += y;
                if zp == z {
                    return z;
                }
            }
        }
        fn tau(mut x: f64) -> f64 {
            if x == 0.0 || x == 1.0 {
                return 0.0;
            }
            let (mut y, mut z) = (1.0, 1.0 - x);
            loop {
                x = x.sqrt();
                let zp = z;
                y *= 0.5;
                z -= (1.0 - x).powf(2.0) * y;
                if zp == z {
                    return z / 3.0;
                }
            }
        }
        let mut histo = [0u32; 64];
        histo[0] = (HLL_M - self.regs.len()) as u32;
        for &v in self.regs.values() {
            histo[v as usize] += 1;
        }
        let m = HLL_M as f64;
        let mut z = m * tau((m - histo[HLL_Q + 1] as f64) / m);
        for j in (1..=HLL_Q).rev() {
            z += histo[j] as f64;
            z *= 0.5;
        }
        z += m * sigma(histo[0] as f64 / m);
        (0.721_347_520_444_481_703_680 * m * m / z).round() as i64
    }
}

// ---------------------------------------------------------------------------
// A model of one board: counted views per (article, visitor), PV, UV and the
// publish time of each article.
// ---------------------------------------------------------------------------

#[derive(Clone, Default)]
struct ModelArticle {
    pv: i64,
    uv: i64,
    hll: Hll,
    published: Option<i64>,
}

#[derive(Default)]
struct Model {
    arts: BTreeMap<Vec<u8>, ModelArticle>,
    /// Last counted view time per (article, visitor).
    seen: HashMap<(Vec<u8>, Vec<u8>), i64>,
    last_view: i64,
}

impl Model {
    /// Applies a view (no visitor limit) and returns the reply the server must give.
    fn view(&mut self, article: &[u8], visitor: &[u8], t: i64, dedup_ms: i64) -> ViewReply {
        self.last_view = self.last_view.max(t);
        let key = (article.to_vec(), visitor.to_vec());
        let dup = self
            .seen
            .get(&key)
            .is_some_and(|&last| (0..dedup_ms).contains(&(t - last)));
        let a = self.arts.entry(article.to_vec()).or_default();
        if !dup {
            a.pv += 1;
            a.hll.add(visitor);
            a.uv = a.hll.count();
            a.published.get_or_insert(t);
            if dedup_ms > 0 {
                self.seen.insert(key, t);
            }
        }
        ViewReply {
            pv: a.pv,
            uv: a.uv,
            score: hot(a.pv, a.uv, a.published.unwrap_or(t), t),
            status: if dup { "duplicate" } else { "counted" }.into(),
        }
    }

    fn publish(&mut self, article: &[u8], t: i64) -> i64 {
        let a = self.arts.entry(article.to_vec()).or_default();
        let new = a.published.is_none();
        a.published = Some(t);
        i64::from(new)
    }

    /// Viewed articles published in `[at - w, at]` (all viewed ones without a window).
    fn in_window(&self, at: i64, window: Option<i64>) -> usize {
        self.arts
            .values()
            .filter(|a| a.pv > 0)
            .filter(|a| window.is_none_or(|w| (at - w..=at).contains(&a.published.unwrap())))
            .count()
    }

    /// The brute-force hot list at `at`: every viewed article scored at
    /// `at`, filtered by the window, by score descending then id ascending.
    fn top(&self, at: i64, window: Option<i64>, limit: usize) -> Vec<(Vec<u8>, f64)> {
        let mut v: Vec<(Vec<u8>, f64)> = self
            .arts
            .iter()
            .filter(|(_, a)| a.pv > 0)
            .filter(|(_, a)| {
                let p = a.published.expect("viewed articles have a publish time");
                window.is_none_or(|w| p <= at && p >= at - w)
            })
            .map(|(id, a)| (id.clone(), hot(a.pv, a.uv, a.published.unwrap(), at)))
            .collect();
        v.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
        v.truncate(limit);
        v
    }
}

/// Replays views pipelined and checks every reply against the model.
fn replay(
    c: &mut Connection,
    board: &[u8],
    m: &mut Model,
    views: &[(Vec<u8>, Vec<u8>, i64)],
    dedup_ms: i64,
    ctx: &str,
) {
    let got = view_many(c, board, views);
    for ((a, v, t), got) in views.iter().zip(got) {
        let want = m.view(a, v, *t, dedup_ms);
        assert_eq!(
            got,
            want,
            "{ctx}: HOT.VIEW {} {} AT {}",
            String::from_utf8_lossy(a),
            String::from_utf8_lossy(v),
            ts(*t)
        );
    }
}

// ---------------------------------------------------------------------------
// 1. Dedup memory
// ---------------------------------------------------------------------------

#[test]
fn dedup_state_of_100k_pairs_uses_at_most_40_bytes_per_pair_and_expires_within_2_windows() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{mem}";
    // The store is sized by `hotrank.dedup-shards` at about active pairs / 200
    // per shard (the config's documented rule): 100,000 pairs / 200 = 500, so
    // 512 shards of ~195 twelve-byte entries (~2.3 KB strings). With the
    // default 4096 shards, ~24 entries per shard, the per-key overhead would
    // be measured instead of the entries.
    config_set(&mut c, "hotrank.dedup-shards", "512");
    // Each visitor views 100 articles within the hour: not abnormal here.
    config_set(&mut c, "hotrank.visitor-max-views", "0");
    let (articles, visitors) = (100, 1000);
    let pairs = articles * visitors;
    // All views in one dedup generation (g·W .. (g+1)·W).
    let g = T0 / DEDUP + 1;
    let t = g * DEDUP + MIN;
    let mut views = Vec::with_capacity(pairs);
    for v in 0..visitors {
        for a in 0..articles {
            // Spread over 100 s of view time, still inside the generation.
            let at = t + (v as i64 % 100) * 1000;
            views.push((
                format!("art{a}").into_bytes(),
                format!("visitor-{v}").into_bytes(),
                at,
            ));
        }
    }
    let start = std::time::Instant::now();
    let replies = view_many(&mut c, b, &views);
    let elapsed = start.elapsed();
    assert!(
        replies.iter().all(|r| r.status == "counted"),
        "every distinct pair is counted"
    );
    assert_eq!(info(&mut c)["views_counted"], pairs as i64);

    let mut pattern = b.to_vec();
    pattern.extend_from_slice(b"\0dd:*");
    let keys = scan(&mut c, &pattern);
    assert!(!keys.is_empty(), "no dedup keys found with {pattern:?}");
    assert!(
        keys.len() <= 512,
        "{} dedup strings for one generation and 512 shards",
        keys.len()
    );
    let (mut mem, mut len) = (0i64, 0i64);
    for k in &keys {
        let name = String::from_utf8_lossy(k).into_owned();
        let ttl = pttl(&mut c, k);
        assert!(
            ttl > 0 && ttl <= 2 * DEDUP,
            "{name:?}: PTTL {ttl} not in (0, 2·window]"
        );
        let usage: i64 = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(k)
            .arg("SAMPLES")
            .arg(0)
            .query(&mut c)
            .expect("MEMORY USAGE");
        mem += usage;
        len += int(&ok(&mut c, &[b"STRLEN", k]));
    }
    let per_pair = mem as f64 / pairs as f64;
    println!(
        "{pairs} pairs in {} dedup strings: {mem} bytes, {per_pair:.1} B/pair, \
         {len} bytes of entries; views took {elapsed:?}",
        keys.len()
    );
    assert_eq!(len, 12 * pairs as i64, "12-byte entries, one per pair");
    assert!(
        per_pair <= 40.0,
        "dedup state takes {per_pair:.1} bytes per pair (> 40)"
    );

    // Dedup still works: a sample of the pairs again, half in the same
    // generation and half in the next one (both within 900 s of the first view).
    let mut rng = Rng::new(base_seed());
    let mut again = Vec::new();
    for i in 0..2000 {
        let (a, v, at) = &views[rng.range(0, pairs as i64 - 1) as usize];
        let later = if i % 2 == 0 {
            at + 200_000
        } else {
            (g + 1) * DEDUP + 10_000
        };
        assert!(later - at < DEDUP && later > *at);
        again.push((a.clone(), v.clone(), later));
    }
    let dup_before = info(&mut c)["views_duplicate"];
    let replies = view_many(&mut c, b, &again);
    for ((a, v, at), r) in again.iter().zip(&replies) {
        assert_eq!(
            r.status,
            "duplicate",
            "{} {} AT {}",
            String::from_utf8_lossy(a),
            String::from_utf8_lossy(v),
            ts(*at)
        );
        assert_eq!(r.pv, visitors as i64);
    }
    assert_eq!(info(&mut c)["views_duplicate"] - dup_before, 2000);
    // A new pair is still counted.
    let r = view(&mut c, b, b"art0", b"newcomer", t + 300_000);
    assert_eq!((r.pv, r.status.as_str()), (visitors as i64 + 1, "counted"));
}

// ---------------------------------------------------------------------------
// 2. Dedup across generation boundaries
// ---------------------------------------------------------------------------

#[test]
fn repeat_views_straddling_a_generation_boundary_are_duplicates_within_the_window() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{gen}";
    let w = DEDUP;
    let k = T0 / w + 1; // k·W is a generation boundary
    let cases: &[(&str, i64, &[(i64, &str)])] = &[
        // First view 1 ms before the boundary: repeats just after it, and up
        // to W - 1 ms later (in generation k), are duplicates; W later is counted.
        (
            "before",
            k * w - 1,
            &[
                (1, "duplicate"),
                (2, "duplicate"),
                (w / 2, "duplicate"),
                (w - 1, "duplicate"),
                (w, "counted"),
                (w + 1, "duplicate"),
                (2 * w - 1, "duplicate"),
                (2 * w, "counted"),
            ],
        ),
        // First view exactly on the boundary: W - 1 later is the last
        // millisecond of generation k; W later is the first of k + 1.
        ("on", k * w, &[(w - 1, "duplicate"), (w, "counted")]),
        // First view mid-generation: the repeat in the next generation finds
        // the entry in the previous one.
        (
            "mid",
            k * w + w / 2,
            &[
                (w / 2 - 1, "duplicate"),
                (w / 2, "duplicate"),
                (w - 1, "duplicate"),
                (w, "counted"),
            ],
        ),
        // A repeat more than a generation later (entry two generations back) is counted.
        (
            "skip",
            k * w - 1,
            &[(w + w / 2, "counted"), (w + w / 2 + 1, "duplicate")],
        ),
    ];
    for (name, first, repeats) in cases {
        let article = format!("a-{name}").into_bytes();
        let r = view(&mut c, b, &article, b"v", *first);
        assert_eq!(r.status, "counted", "{name}: first view");
        let mut pv = 1;
        for (off, want) in repeats.iter() {
            let r = view(&mut c, b, &article, b"v", first + off);
            if *want == "counted" {
                pv += 1;
            }
            assert_eq!(
                (r.status.as_str(), r.pv),
                (*want, pv),
                "{name}: first at {} (boundary {}), repeat +{off} ms",
                ts(*first),
                ts(k * w)
            );
        }
    }

    // Randomized: views clustered around generation boundaries of an odd
    // window (7 s), with every pair in ONE shard (so entries of other pairs
    // share the string), against one-key-per-pair semantics.
    config_set(&mut c, "hotrank.dedup-seconds", "7");
    config_set(&mut c, "hotrank.dedup-shards", "1");
    config_set(&mut c, "hotrank.visitor-max-views", "0");
    let w = 7_000;
    let b: &[u8] = b"hot:{gen7}";
    let mut rng = Rng::new(base_seed() ^ 0x6e6);
    let mut times: Vec<i64> = (0..3000)
        .map(|_| {
            let g = T0 / w + rng.range(1, 40);
            g * w + rng.range(-30, 30)
        })
        .collect();
    times.sort();
    let views: Vec<(Vec<u8>, Vec<u8>, i64)> = times
        .iter()
        .map(|&t| {
            (
                format!("a{}", rng.range(0, 4)).into_bytes(),
                format!("v{}", rng.range(0, 4)).into_bytes(),
                t,
            )
        })
        .collect();
    let mut m = Model::default();
    replay(&mut c, b, &mut m, &views, w, "window 7 s, 1 shard");
    let i = info(&mut c);
    println!(
        "boundary replay: {} counted, {} duplicate",
        i["views_counted"], i["views_duplicate"]
    );
}

// ---------------------------------------------------------------------------
// 3. Suspicious visitors
// ---------------------------------------------------------------------------

#[test]
fn views_past_the_visitor_limit_are_suspicious_and_change_no_ranking() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{sus}";
    config_set(&mut c, "hotrank.visitor-max-views", "3");
    config_set(&mut c, "hotrank.visitor-window-seconds", "3600");
    let vw = H;
    let base = (T0 / vw + 1) * vw; // start of a visitor window
                                   // Humans make "c" known, and "x" for the top list.
    view(&mut c, b, b"c", b"h1", base + 1000);
    view(&mut c, b, b"c", b"h2", base + 1000);
    view(&mut c, b, b"x", b"h1", base + 1000);
    // The bot: 1 counted view of "a", a duplicate of it, a counted view of
    // "b": 3 views (duplicates count toward the limit).
    assert_eq!(view(&mut c, b, b"a", b"bot", base + 2000).status, "counted");
    assert_eq!(
        view(&mut c, b, b"a", b"bot", base + 2500).status,
        "duplicate"
    );
    assert_eq!(view(&mut c, b, b"b", b"bot", base + 3000).status, "counted");
    let q = base + 10_000;
    let top_before = top_ws(&mut c, b, &opts(&["LIMIT", "10", "AT", &ts(q)]));
    assert_eq!(top_before.len(), 4);
    let c_before = stats(&mut c, b, b"c", q).expect("c");
    let zc_before = zscore(&mut c, b, b"c");
    let i0 = info(&mut c);

    // The 4th view in the window: suspicious; the article's counters stay.
    let r = view(&mut c, b, b"c", b"bot", base + 4000);
    assert_eq!(r.status, "suspicious");
    assert_eq!((r.pv, r.uv), (2, 2));
    assert_eq!(r.score, hot(2, 2, base + 1000, base + 4000));
    // Later in the same window (last millisecond): still suspicious, on any article.
    let r = view(&mut c, b, b"d", b"bot", base + vw - 1);
    assert_eq!((r.status.as_str(), r.pv, r.uv), ("suspicious", 0, 0));
    assert_eq!(r.score, 0.0);

    let c_after = stats(&mut c, b, b"c", q).expect("c");
    assert_eq!(
        (c_after.pv, c_after.uv, c_after.score),
        (c_before.pv, c_before.uv, c_before.score)
    );
    assert_eq!((c_before.suspicious, c_after.suspicious), (0, 1));
    assert_eq!(zscore(&mut c, b, b"c"), zc_before, "stored score unchanged");
    let d = stats(&mut c, b, b"d", q).expect("d has a suspicious count");
    assert_eq!((d.pv, d.uv, d.suspicious, d.score), (0, 0, 1, 0.0));
    assert_eq!(zscore(&mut c, b, b"d"), None, "d is not on the board");
    assert_eq!(zscore(&mut c, &pub_index(b), b"d"), None);
    assert_eq!(
        top_ws(&mut c, b, &opts(&["LIMIT", "10", "AT", &ts(q)])),
        top_before,
        "HOT.TOP unchanged by suspicious views"
    );
    let i1 = info(&mut c);
    assert_eq!(i1["views_suspicious"] - i0["views_suspicious"], 2);
    assert_eq!(i1["views_counted"], i0["views_counted"]);
    assert_eq!(i1["views_duplicate"], i0["views_duplicate"]);

    // Other visitors are unaffected, in the same window.
    let r = view(&mut c, b, b"c", b"h3", base + 5000);
    assert_eq!((r.status.as_str(), r.pv, r.uv), ("counted", 3, 3));
    // The same visitor on another board is unaffected (the limit is per board).
    let r = view(&mut c, b"hot:{other}", b"c", b"bot", base + 5000);
    assert_eq!(r.status, "counted");
    // In the next window the visitor counts again.
    let r = view(&mut c, b, b"c", b"bot", base + vw);
    assert_eq!((r.status.as_str(), r.pv, r.uv), ("counted", 4, 4));
    let c_now = stats(&mut c, b, b"c", base + vw).expect("c");
    assert_eq!(c_now.suspicious, 1);
    // ... up to the limit again: 3 views in that window, then suspicious.
    assert_eq!(
        view(&mut c, b, b"e", b"bot", base + vw + 1).status,
        "counted"
    );
    assert_eq!(
        view(&mut c, b, b"f", b"bot", base + vw + 2).status,
        "counted"
    );
    assert_eq!(
        view(&mut c, b, b"g", b"bot", base + vw + 3).status,
        "suspicious"
    );

    // visitor-max-views 0 turns the limit off.
    config_set(&mut c, "hotrank.visitor-max-views", "0");
    let i2 = info(&mut c);
    for (i, art) in [b"g", b"h", b"i", b"j", b"k"].iter().enumerate() {
        let r = view(&mut c, b, *art, b"bot", base + vw + 10 + i as i64);
        assert_eq!(r.status, "counted", "limit off: view {i}");
    }
    let i3 = info(&mut c);
    assert_eq!(i3["views_suspicious"], i2["views_suspicious"]);
    assert_eq!(i3["views_counted"] - i2["views_counted"], 5);
}

// ---------------------------------------------------------------------------
// 4. Trimming
// ---------------------------------------------------------------------------

#[test]
fn trimming_keeps_the_board_near_max_articles_and_never_drops_the_current_top() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{trim}";
    let max = 50usize;
    let slack = (max / 2).max(16); // 25, as hotrank's trim_slack
    config_set(&mut c, "hotrank.max-articles", &max.to_string());
    let mut rng = Rng::new(base_seed() ^ 0x7219);
    // All current views at one instant a little before the server clock, so
    // stored scores (computed at view time) are the scores of now, up to
    // the few seconds the test takes.
    let t = now_ms() - 2000;
    let mut m = Model::default();
    let mut plan: Vec<(Vec<u8>, i64, usize, i64)> = Vec::new(); // (id, published, views, view time)
                                                                // Why the data has this shape: trimming runs when a NEW article arrives
                                                                // (one view so far) and may remove it if it is below the current top
                                                                // max-articles then; it would then restart from zero and the final
                                                                // counts would differ from the model. That is allowed for articles that
                                                                // end outside the top 50, so the design guarantees that every article of
                                                                // the final top 50 scores, with its first view alone, at least the
                                                                // final 50th-best score (checked below): none of them may ever be trimmed.
                                                                //
                                                                // Young group (the top 50): published 0..73.5 min before t, 1..40 views;
                                                                // the oldest has exactly 1 view and is the 50th best.
    for i in 0..50 {
        let views = if i == 49 {
            1
        } else {
            rng.range(1, 40) as usize
        };
        plan.push((format!("y{i:02}").into_bytes(), t - i * 90_000, views, t));
    }
    // Old group: published 3..48 h before t, views such that the final score
    // stays at most 0.9 × the 50th best (0.380).
    for i in 0..140 {
        let age = 3 * H + i * (45 * H / 140);
        let hours = age as f64 / H as f64;
        let cap = ((0.9 * 0.380 * (hours + 2.0).powf(1.5)) / 2.2).floor() as i64;
        let views = rng.range(1, cap.max(1)) as usize;
        plan.push((format!("o{i:03}").into_bytes(), t - age, views, t));
    }
    rng.shuffle(&mut plan);
    // Stale group, first: viewed 3 days ago right after publication, so their
    // stored scores are far above every current score, while their scores
    // now are far below the top 50. A trim that went by stored rank alone
    // would drop current top articles to make room.
    let mut stale = Vec::new();
    for j in 0..10 {
        let p = t - 3 * DAY;
        stale.push((
            format!("s{j}").into_bytes(),
            p,
            30 + j as usize,
            p + 10 * MIN,
        ));
    }
    let plan: Vec<_> = stale.into_iter().chain(plan).collect();
    assert_eq!(plan.len(), 200);

    // Publish times first (no board entry without a view), then each
    // article's views in one go, each from its own visitors.
    let mut p = redis::pipe();
    for (id, published, _, _) in &plan {
        p.cmd("HOT.PUBLISH").arg(b).arg(id).arg(ts(*published));
        m.publish(id, *published);
    }
    let _: Vec<i64> = p.query(&mut c).expect("publish");
    let mut views = Vec::new();
    for (id, _, k, at) in &plan {
        for j in 0..*k {
            let mut v = id.clone();
            v.extend_from_slice(format!(":v{j}").as_bytes());
            views.push((id.clone(), v, *at));
        }
    }
    let i0 = info(&mut c);
    let replies = view_many(&mut c, b, &views);
    assert!(replies.iter().all(|r| r.status == "counted"));
    for (a, v, at) in &views {
        m.view(a, v, *at, DEDUP);
    }

    // The test's own precondition (see above).
    let q = now_ms();
    let want = m.top(q, None, max);
    let theta = want[max - 1].1;
    let young: HashSet<Vec<u8>> = (0..50).map(|i| format!("y{i:02}").into_bytes()).collect();
    let top_ids: HashSet<Vec<u8>> = want.iter().map(|x| x.0.clone()).collect();
    assert_eq!(top_ids, young, "test design: the young group is the top 50");
    for (id, published, _, at) in &plan {
        if young.contains(id) {
            assert!(
                hot(1, 1, *published, *at) >= theta,
                "test design: first view of {id:?}"
            );
        } else {
            let a = &m.arts[id];
            assert!(
                hot(a.pv, a.uv, *published, q) < 0.95 * theta,
                "test design: {id:?}"
            );
        }
    }

    let card = zcard(&mut c, b);
    println!("{} views, board holds {card}", views.len());
    assert!(
        card >= max as i64 && card <= (max + slack) as i64,
        "ZCARD {card} not in [{max}, {}]",
        max + slack
    );
    let got = top_ws(&mut c, b, &opts(&["LIMIT", "50", "AT", &ts(q)]));
    assert_eq!(
        lossy(&got),
        lossy(&want),
        "HOT.TOP LIMIT 50 vs all 200 articles"
    );

    // Removed articles: counters and index entry gone, publish time kept.
    let on_board: Vec<Vec<u8>> = redis::cmd("ZRANGE")
        .arg(b)
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .expect("ZRANGE");
    let on_board: HashSet<Vec<u8>> = on_board.into_iter().collect();
    let trimmed: Vec<&Vec<u8>> = m.arts.keys().filter(|a| !on_board.contains(*a)).collect();
    assert_eq!(trimmed.len() as i64, 200 - card);
    assert_eq!(
        zcard(&mut c, &pub_index(b)),
        card,
        "publish index follows the board"
    );
    for a in &trimmed {
        let name = String::from_utf8_lossy(a).into_owned();
        assert!(!exists(&mut c, &derived(b, "pv", a)), "{name}: pv key kept");
        assert!(!exists(&mut c, &derived(b, "uv", a)), "{name}: uv key kept");
        assert_eq!(
            zscore(&mut c, &pub_index(b), a),
            None,
            "{name}: in the publish index"
        );
        let published = m.arts[*a].published.unwrap();
        let st = stats(&mut c, b, a, q).unwrap_or_else(|| panic!("{name}: meta hash lost"));
        assert_eq!(
            st.published_at,
            Some(ts(published)),
            "{name}: publish time kept"
        );
        assert_eq!(
            (st.pv, st.uv, st.score),
            (0, 0, 0.0),
            "{name}: counters lost"
        );
    }
    for a in &on_board {
        assert!(exists(&mut c, &derived(b, "pv", a)));
        assert!(zscore(&mut c, &pub_index(b), a).is_some());
    }
    let i1 = info(&mut c);
    assert!(i1["trims"] > i0["trims"], "trims did not move");
    assert!(
        i1["articles_trimmed"] - i0["articles_trimmed"] >= trimmed.len() as i64,
        "articles_trimmed {} < {}",
        i1["articles_trimmed"] - i0["articles_trimmed"],
        trimmed.len()
    );
    assert_eq!(i1["articles_swept"], i0["articles_swept"]);

    // A removed article republished stays off the board (no counted view);
    // viewed again, it starts from zero with its publish time.
    let gone = trimmed[0].clone();
    let published = m.arts[&gone].published.unwrap();
    publish(&mut c, b, &gone, published);
    assert_eq!(
        zscore(&mut c, b, &gone),
        None,
        "republished removed article is back"
    );
    let r = view(&mut c, b, &gone, b"fresh", t);
    assert_eq!((r.pv, r.uv, r.status.as_str()), (1, 1, "counted"));
    assert_eq!(r.score, hot(1, 1, published, t));

    // max-articles 0: no trimming.
    config_set(&mut c, "hotrank.max-articles", "0");
    let b2: &[u8] = b"hot:{notrim}";
    let views: Vec<_> = (0..100)
        .map(|i| {
            let a = format!("n{i}").into_bytes();
            (a.clone(), a, t - i * MIN)
        })
        .collect();
    let i2 = info(&mut c);
    view_many(&mut c, b2, &views);
    assert_eq!(zcard(&mut c, b2), 100);
    let i3 = info(&mut c);
    assert_eq!(i3["trims"], i2["trims"]);
    assert_eq!(i3["articles_trimmed"], i2["articles_trimmed"]);
}

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

// ---------------------------------------------------------------------------
// 6. HOT.TOP against brute force on large random boards
// ---------------------------------------------------------------------------

struct BoardRun {
    articles: usize,
    /// (examined, board size) of unwindowed queries (LIMIT ≤ 60) at the
    /// last view time (rounded up to the minute).
    at_last: Vec<(i64, usize)>,
    windowed_walk: usize,
    windowed_index: usize,
}

fn large_random_board(c: &mut Connection, seed: u64, case: usize, n: usize) -> BoardRun {
    let mut rng = Rng::new(seed);
    let ctx = format!("seed {seed} (HOTRANK_SEED={} case {case})", base_seed());
    let board = format!("hot:{{big{case}}}").into_bytes();
    let mut m = Model::default();
    let span = 4 * DAY;
    // Zipf-like popularity: the article of popularity rank r gets about
    // K / r^0.9 views (at least 1); a few articles are published and never viewed.
    let k = rng.range(1000, 1500) as f64;
    let mut ranks: Vec<usize> = (1..=n).collect();
    rng.shuffle(&mut ranks);
    let pool = (3 * n).max(2000) as i64;
    let mut publishes = Vec::new();
    let mut views: Vec<(Vec<u8>, Vec<u8>, i64)> = Vec::new();
    for (i, &rank) in ranks.iter().enumerate() {
        let id = format!("art{:05}", (i * 7919) % 100_000).into_bytes();
        let p = T0 + rng.range(0, span);
        let explicit = rng.chance(0.6);
        if explicit {
            publishes.push((id.clone(), p));
        }
        if rng.chance(0.03) {
            if !explicit {
                publishes.push((id.clone(), p));
            }
            continue;
        }
        let count = ((k / (rank as f64).powf(0.9)) as usize).max(1);
        // Interest decays after publication: exponential delays, mean 6 h.
        // The log ends at T0 + span: later views never happen, so at the
        // last view the newest articles are the hot ones, as on a live board.
        for _ in 0..count {
            let delay = (-(1.0 - rng.unit()).ln() * 6.0 * H as f64) as i64;
            let t = if explicit && rng.chance(0.05) {
                p - rng.range(0, H) // a view before the announced publish time
            } else {
                p + delay.min(2 * DAY)
            };
            let v = format!("u{}", rng.range(0, pool)).into_bytes();
            if rng.chance(0.1) {
                // The same visitor again, often within the dedup window.
                views.push((id.clone(), v.clone(), t + rng.range(0, 30 * MIN)));
            }
            views.push((id.clone(), v, t));
        }
    }
    views.retain(|v| v.2 <= T0 + span);
    views.sort_by_key(|v| v.2);
    let mut p = redis::pipe();
    for (a, t) in &publishes {
        p.cmd("HOT.PUBLISH").arg(&board).arg(a).arg(ts(*t));
    }
    let r: Vec<i64> = p.query(c).expect("publish");
    for ((a, t), got) in publishes.iter().zip(r) {
        assert_eq!(got, m.publish(a, *t), "{ctx}: HOT.PUBLISH");
    }
    replay(c, &board, &mut m, &views, DEDUP, &ctx);
    let last = m.last_view;
    let viewed = m.in_window(last, None);
    assert_eq!(zcard(c, &board), viewed as i64, "{ctx}: board size");

    let mut run = BoardRun {
        articles: viewed,
        at_last: Vec::new(),
        windowed_walk: 0,
        windowed_index: 0,
    };
    // The board records a bound of its view times rounded up to a whole
    // minute (so a busy board rewrites it at most once a minute): from that
    // instant on, a query with AT knows every stored score bounds the score
    // at AT, and prunes. That is "the last view time" for the pruning check.
    let bound = (last.div_euclid(MIN) + 1) * MIN;
    let mut examined_before = info(c)["top_articles_examined"];
    for qi in 0..60 {
        let at = match rng.range(0, 9) {
            0..=1 => last,
            2..=3 => bound,
            4..=5 => last + rng.range(0, H),
            6..=8 => last + rng.range(0, 3 * DAY),
            _ => now_ms() + rng.range(0, DAY),
        };
        let window = match rng.range(0, 9) {
            0..=3 => None,
            // A few articles: the last 1–6 hours before the query (or less).
            4..=6 => Some(rng.range(10 * MIN, 6 * H)),
            // Most of the board.
            7 => Some(rng.range(span / 2, span)),
            // All of it (and more).
            _ => Some((at - T0) + rng.range(0, DAY)),
        };
        let limit = match rng.range(0, 4) {
            0 | 1 => None,
            2 | 3 => Some(rng.range(1, 60)),
            _ => Some(rng.range(1, n as i64)),
        };
        let mut o = vec!["AT".to_string(), ts(at)];
        if let Some(l) = limit {
            o.extend(["LIMIT".to_string(), l.to_string()]);
        }
        if let Some(w) = window {
            o.extend(["WINDOW".to_string(), ts(w)]);
        }
        let want = m.top(at, window, limit.unwrap_or(20) as usize);
        let got = top_ws(c, &board, &o);
        assert_eq!(
            lossy(&got),
            lossy(&want),
            "{ctx}: query {qi}: HOT.TOP {} {o:?} (last view {}, {viewed} articles)",
            String::from_utf8_lossy(&board),
            ts(last)
        );
        let examined_now = info(c)["top_articles_examined"];
        let examined = examined_now - examined_before;
        examined_before = examined_now;
        match window {
            None if at == bound && limit.is_none_or(|l| l <= 60) => {
                run.at_last.push((examined, viewed))
            }
            None => {}
            Some(_) if at < bound => {}
            Some(w) => {
                // The pruned walk examines at most the window's article count;
                // past that it gives up and scores the window through the
                // index (both counted): never more than twice the window.
                let in_win = m.in_window(at, Some(w)) as i64;
                assert!(
                    examined <= 2 * in_win.max(1),
                    "{ctx}: query {qi}: {o:?} examined {examined} articles for \
                     {in_win} in the window"
                );
                if examined > in_win {
                    run.windowed_index += 1;
                } else if in_win > 0 {
                    run.windowed_walk += 1;
                }
            }
        }
    }
    run
}

#[test]
fn top_matches_brute_force_on_large_zipf_boards_and_prunes_most_of_the_board() {
    let s = Server::start();
    let mut c = s.conn();
    config_set(&mut c, "hotrank.visitor-max-views", "0");
    config_set(&mut c, "hotrank.max-articles", "0");
    let start = std::time::Instant::now();
    let mut rng = Rng::new(base_seed() ^ 0xb16);
    let (mut examined, mut held, mut queries_at_last) = (0i64, 0usize, 0);
    let (mut walk, mut index) = (0, 0);
    let mut sizes = Vec::new();
    for case in 0..8 {
        let n = match case {
            0 => 2000,
            1 => 200,
            _ => rng.range(200, 2000) as usize,
        };
        let seed = base_seed().wrapping_add(case as u64 * 104_729);
        let r = large_random_board(&mut c, seed, case, n);
        sizes.push(r.articles);
        for (e, size) in &r.at_last {
            examined += e;
            held += size;
            queries_at_last += 1;
        }
        walk += r.windowed_walk;
        index += r.windowed_index;
    }
    let ratio = examined as f64 / held.max(1) as f64;
    println!(
        "boards {sizes:?}: {queries_at_last} unwindowed queries at the last view \
         examined {:.1}% of the board on average; windowed: {walk} by walk, \
         {index} by publish index; {:?}",
        100.0 * ratio,
        start.elapsed()
    );
    assert!(
        queries_at_last >= 8,
        "too few unwindowed queries at the last view"
    );
    assert!(
        ratio < 0.25,
        "unwindowed HOT.TOP at the last view examined {:.1}% of the board",
        100.0 * ratio
    );
    assert!(index > 0, "the publish-index path never ran");
    assert!(walk > 0, "the windowed walk never ran");
}

// ---------------------------------------------------------------------------
// 7. Republish
// ---------------------------------------------------------------------------

#[test]
fn top_stays_exact_after_publish_moves_an_article_later_with_and_without_window() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{repub}";
    let mut rng = Rng::new(base_seed() ^ 0x9e9);
    let mut m = Model::default();
    let base = now_ms() - 3 * DAY;
    let mut views = Vec::new();
    for i in 0..60 {
        let id = format!("a{i:02}").into_bytes();
        let p = base + rng.range(0, 2 * DAY);
        assert_eq!(publish(&mut c, b, &id, p), m.publish(&id, p));
        for j in 0..rng.range(1, 30) {
            views.push((
                id.clone(),
                format!("v{j}").into_bytes(),
                p + rng.range(0, 6 * H),
            ));
        }
    }
    views.sort_by_key(|v| v.2);
    replay(&mut c, b, &mut m, &views, DEDUP, "setup");
    let last = m.last_view;

    let check = |c: &mut Connection, m: &Model, at: i64, what: &str| {
        let windows = [
            None,
            Some(2 * H),
            Some(12 * H),
            Some(DAY),
            Some(now_ms() + DAY - base),
        ];
        for w in windows {
            for limit in [1usize, 5, 20, 60] {
                let mut o = opts(&["AT", &ts(at), "LIMIT", &limit.to_string()]);
                if let Some(w) = w {
                    o.extend(["WINDOW".to_string(), ts(w)]);
                }
                let want = m.top(at, w, limit);
                let got = top_ws(c, b, &o);
                assert_eq!(lossy(&got), lossy(&want), "{what}: HOT.TOP {o:?}");
            }
        }
    };
    check(&mut c, &m, last, "before");
    // In the past, stored scores (computed at later views) are no bounds.
    check(&mut c, &m, last - 12 * H, "before, in the past");
    // The weakest article is moved to a minute ago: its score now is above
    // everyone's (2.2 / 2^1.5 ≈ 0.78 at least, while every other article is
    // a day old or more: at most 29 × 2.2 / 26^1.5 ≈ 0.48).
    let q0 = now_ms();
    let weakest = m.top(q0, None, 60).last().expect("articles").0.clone();
    let before = m.arts[&weakest].published.unwrap();
    let moved = q0 - MIN;
    assert_eq!(publish(&mut c, b, &weakest, moved), 0);
    m.publish(&weakest, moved);
    let q = now_ms();
    let first = m.top(q, None, 1);
    assert_eq!(first[0].0, weakest, "test design: the moved article leads");
    for at in [q, q + 10 * MIN, q + DAY] {
        check(&mut c, &m, at, "after moving later");
    }
    // Queries before the republish instant (stored scores are not bounds
    // there) are exact too.
    check(&mut c, &m, last, "after moving later, at the last view");
    // A window holding only the new publish time has it; one ending before it does not.
    let only_new = top_ws(&mut c, b, &opts(&["AT", &ts(q), "WINDOW", "2h"]));
    assert_eq!(only_new.first().map(|x| x.0.clone()), Some(weakest.clone()));
    let around_old = top_ws(
        &mut c,
        b,
        &opts(&["AT", &ts(before + MIN), "WINDOW", "1h", "LIMIT", "100"]),
    );
    assert!(
        !around_old.iter().any(|x| x.0 == weakest),
        "moved article still in a window around its old publish time"
    );
    // Moving another article earlier (its score goes down) keeps it exact.
    let strongest = m.top(q, None, 2)[1].0.clone();
    let earlier = base - DAY;
    publish(&mut c, b, &strongest, earlier);
    m.publish(&strongest, earlier);
    let q = now_ms();
    for at in [q, q + H] {
        check(&mut c, &m, at, "after moving earlier");
    }
    // Before the republish instant its stored score (computed then) is below
    // its score: exact all the same.
    for at in [last - 12 * H, last, (last + q) / 2] {
        check(&mut c, &m, at, "after moving earlier, before the republish");
    }
}
