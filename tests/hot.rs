//! Integration tests of the `HOT.*` commands against a real server: every
//! command and option, the dedup window, the decay formula, `HOT.TOP` against
//! a brute-force reference on random boards, bad input (and that a failed
//! command writes nothing), the derived-key layout, binary ids, the INFO
//! counters and a replay of a real access log.
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
use std::collections::{BTreeMap, HashMap};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Runs a command that must fail; returns "CODE detail" as `common::err` does.
fn fail(c: &mut Connection, args: &[&[u8]]) -> String {
    match run(c, args) {
        Ok(v) => panic!("{:?} should fail, got {v:?}", show(args)),
        Err(e) => format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""))
            .trim()
            .to_string(),
    }
}

fn top_args(board: &[u8], opts: &[&str]) -> Vec<Vec<u8>> {
    let mut v = vec![b"HOT.TOP".to_vec(), board.to_vec()];
    v.extend(opts.iter().map(|o| o.as_bytes().to_vec()));
    v
}

fn top_raw(c: &mut Connection, args: &[Vec<u8>]) -> Vec<Value> {
    let refs: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
    match ok(c, &refs) {
        Value::Array(a) => a,
        other => panic!("HOT.TOP reply: {other:?}"),
    }
}

/// `HOT.TOP` without scores: the article ids.
fn top(c: &mut Connection, board: &[u8], opts: &[&str]) -> Vec<Vec<u8>> {
    top_raw(c, &top_args(board, opts))
        .iter()
        .map(bytes)
        .collect()
}

/// `HOT.TOP … WITHSCORES`: (article, score) pairs.
fn top_ws(c: &mut Connection, board: &[u8], opts: &[&str]) -> Vec<(Vec<u8>, f64)> {
    let mut o = opts.to_vec();
    o.push("WITHSCORES");
    pairs(&top_raw(c, &top_args(board, &o)))
}

fn pairs(items: &[Value]) -> Vec<(Vec<u8>, f64)> {
    assert!(items.len() % 2 == 0, "WITHSCORES reply has an odd length");
    items
        .chunks(2)
        .map(|p| (bytes(&p[0]), score(&p[1])))
        .collect()
}

fn ids(v: &[&str]) -> Vec<Vec<u8>> {
    v.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[derive(Debug, PartialEq)]
struct Stats {
    pv: i64,
    uv: i64,
    published_at: Option<String>,
    score: f64,
}

/// `HOT.STATS` under RESP2: a flat array of field/value pairs, or nil.
fn stats(c: &mut Connection, board: &[u8], article: &[u8], at: Option<i64>) -> Option<Stats> {
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
fn snapshot(c: &mut Connection) -> BTreeMap<Vec<u8>, (Vec<u8>, bool)> {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    keys.into_iter()
        .map(|k| {
            let dump: Vec<u8> = redis::cmd("DUMP").arg(&k).query(c).expect("DUMP");
            let pttl: i64 = redis::cmd("PTTL").arg(&k).query(c).expect("PTTL");
            (k, (dump, pttl > 0))
        })
        .collect()
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
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.range(0, v.len() as i64 - 1) as usize]
    }
}

fn base_seed() -> u64 {
    std::env::var("HOTRANK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_2024)
}

// ---------------------------------------------------------------------------
// A model of Redis's HyperLogLog (PFADD/PFCOUNT), so reference UVs equal the
// server's exactly: MurmurHash64A with seed 0xadc83b19, 2^14 registers, and
// Ertl's estimator as in hyperloglog.c (`hllCount`).
// ---------------------------------------------------------------------------

#[derive(Clone)]
struct Hll {
    regs: Vec<u8>,
    histo: [u32; 64],
}

impl Hll {
    fn new() -> Hll {
        let mut histo = [0; 64];
        histo[0] = HLL_M as u32;
        Hll {
            regs: vec![0; HLL_M],
            histo,
        }
    }

    fn add(&mut self, ele: &[u8]) {
        let h = murmur64a(ele, 0xadc8_3b19);
        let idx = (h & (HLL_M as u64 - 1)) as usize;
        let rest = (h >> HLL_P) | (1u64 << HLL_Q);
        let count = (rest.trailing_zeros() + 1) as u8;
        let old = self.regs[idx];
        if count > old {
            self.histo[old as usize] -= 1;
            self.histo[count as usize] += 1;
            self.regs[idx] = count;
        }
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
        let m = HLL_M as f64;
        let mut z = m * tau((m - self.histo[HLL_Q + 1] as f64) / m);
        for j in (1..=HLL_Q).rev() {
            z += self.histo[j] as f64;
            z *= 0.5;
        }
        z += m * sigma(self.histo[0] as f64 / m);
        (0.721_347_520_444_481_703_680 * m * m / z).round() as i64
    }
}

// ---------------------------------------------------------------------------
// A model of one board: counted views per (article, visitor), PV, UV and the
// publish time of each article.
// ---------------------------------------------------------------------------

#[derive(Clone)]
struct ModelArticle {
    pv: i64,
    uv: i64,
    hll: Hll,
    visitors: std::collections::HashSet<Vec<u8>>,
    published: Option<i64>,
}

impl ModelArticle {
    fn new() -> ModelArticle {
        ModelArticle {
            pv: 0,
            uv: 0,
            hll: Hll::new(),
            visitors: Default::default(),
            published: None,
        }
    }
}

#[derive(Default)]
struct Model {
    arts: BTreeMap<Vec<u8>, ModelArticle>,
    /// Last counted view time per (article, visitor).
    seen: HashMap<(Vec<u8>, Vec<u8>), i64>,
    last_view: i64,
}

impl Model {
    /// Applies a view and returns the reply the server must give.
    fn view(&mut self, article: &[u8], visitor: &[u8], t: i64, dedup_ms: i64) -> ViewReply {
        self.last_view = self.last_view.max(t);
        let key = (article.to_vec(), visitor.to_vec());
        let dup = self
            .seen
            .get(&key)
            .is_some_and(|&last| (0..dedup_ms).contains(&(t - last)));
        let a = self
            .arts
            .entry(article.to_vec())
            .or_insert_with(ModelArticle::new);
        if !dup {
            a.pv += 1;
            a.hll.add(visitor);
            a.uv = a.hll.count();
            a.visitors.insert(visitor.to_vec());
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

    /// Applies a publish and returns the server's reply (1 new, 0 updated).
    fn publish(&mut self, article: &[u8], t: i64) -> i64 {
        let a = self
            .arts
            .entry(article.to_vec())
            .or_insert_with(ModelArticle::new);
        let new = a.published.is_none();
        a.published = Some(t);
        i64::from(new)
    }

    /// The brute-force hot list at `at`: every article on the board (one
    /// with at least one view), scored at `at`, filtered by the window,
    /// sorted by score descending then id ascending, cut at `limit`.
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

/// Sends views in pipelined batches and checks every reply against the model.
fn replay_views(
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

// ---------------------------------------------------------------------------
// 1. Commands and options
// ---------------------------------------------------------------------------

#[test]
fn publish_replies_1_for_a_new_publish_time_then_0_on_update() {
    let s = Server::start();
    let mut c = s.conn();
    assert_eq!(publish(&mut c, b"hot:{p}", b"a1", T0), 1);
    assert_eq!(publish(&mut c, b"hot:{p}", b"a1", T0 + H), 0);
    assert_eq!(publish(&mut c, b"hot:{p}", b"a1", T0 + H), 0);
    assert_eq!(publish(&mut c, b"hot:{p}", b"a2", T0), 1);
    // The update took effect: the latest publish time is the one reported.
    let st = stats(&mut c, b"hot:{p}", b"a1", Some(T0 + 2 * H)).expect("a1 is known");
    assert_eq!(st.published_at.as_deref(), Some(ts(T0 + H).as_str()));
    // Decimals round-trip exactly.
    assert_eq!(publish(&mut c, b"hot:{p}", b"a3", T0 + 123), 1);
    let st = stats(&mut c, b"hot:{p}", b"a3", None).expect("a3 is known");
    assert_eq!(st.published_at.as_deref(), Some("1700000000.123"));
}

#[test]
fn publish_before_first_view_is_the_age_origin_of_the_score() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{p}";
    publish(&mut c, b, b"pub", T0);
    // Viewed 2 h after publication: 2.2 / (2 + 2)^1.5 = 2.2 / 8.
    let r = view(&mut c, b, b"pub", b"v1", T0 + 2 * H);
    assert_eq!(
        r,
        ViewReply {
            pv: 1,
            uv: 1,
            score: 0.275,
            status: "counted".into()
        }
    );
    // An unpublished article gets its first view's time: age 0 at that view.
    let r = view(&mut c, b, b"nopub", b"v1", T0 + 2 * H);
    assert_eq!(r.score, 2.2 / 2f64.powf(1.5));
    let st = stats(&mut c, b, b"nopub", Some(T0 + 4 * H)).unwrap();
    assert_eq!(st.published_at.as_deref(), Some(ts(T0 + 2 * H).as_str()));
    assert_eq!(st.score, 0.275);
    // A later view does not move the publish time of either.
    view(&mut c, b, b"nopub", b"v2", T0 + 3 * H);
    let st = stats(&mut c, b, b"nopub", Some(T0 + 4 * H)).unwrap();
    assert_eq!(st.published_at.as_deref(), Some(ts(T0 + 2 * H).as_str()));
    assert_eq!(st.score, hot(2, 2, T0 + 2 * H, T0 + 4 * H));
}

#[test]
fn republish_after_views_changes_the_score_and_the_top_order() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{p}";
    config_set(&mut c, "hotrank.dedup-seconds", "0");
    let t = now_ms() - 10 * DAY;
    publish(&mut c, b, b"a", t);
    for _ in 0..10 {
        view(&mut c, b, b"a", b"v", t);
    }
    // b was published long before its views, so its stored score is tiny.
    publish(&mut c, b, b"b", t - 1000 * H);
    for _ in 0..5 {
        view(&mut c, b, b"b", b"v", t);
    }
    let q = now_ms() + H;
    assert_eq!(top(&mut c, b, &["LIMIT", "1", "AT", &ts(q)]), ids(&["a"]));
    // Republishing b now makes it the hottest at q, also with LIMIT 1 (where
    // a stale stored score would let HOT.TOP stop before reaching b).
    let p = now_ms();
    assert_eq!(publish(&mut c, b, b"b", p), 0);
    assert_eq!(
        top_ws(&mut c, b, &["LIMIT", "1", "AT", &ts(q)]),
        vec![(b"b".to_vec(), hot(5, 1, p, q))]
    );
    assert_eq!(
        stats(&mut c, b, b"b", Some(q)).unwrap().score,
        hot(5, 1, p, q)
    );
}

#[test]
fn view_without_at_uses_the_server_clock() {
    let s = Server::start();
    let mut c = s.conn();
    let before = now_ms();
    let v: Value = q(&mut c, &["HOT.VIEW", "hot:{c}", "a", "v"]).unwrap();
    let after = now_ms();
    assert_eq!(parse_view(&v).status, "counted");
    let st = stats(&mut c, b"hot:{c}", b"a", None).unwrap();
    let p = (st.published_at.unwrap().parse::<f64>().unwrap() * 1000.0).round() as i64;
    assert!(
        before - 1000 <= p && p <= after + 1000,
        "{before} <= {p} <= {after}"
    );
    // Without AT, HOT.STATS and HOT.TOP score at the server clock too: the
    // score lies between the scores at instants taken before and after.
    let t1 = now_ms();
    let st = stats(&mut c, b"hot:{c}", b"a", None).unwrap();
    let top = top_ws(&mut c, b"hot:{c}", &[]);
    let t2 = now_ms();
    for got in [st.score, top[0].1] {
        assert!(
            hot(1, 1, p, t2 + 1000) <= got && got <= hot(1, 1, p, t1 - 1000),
            "{got} not between the scores at {t1} and {t2}"
        );
    }
}

#[test]
fn stats_reports_pv_uv_publish_time_and_score_at_the_query_instant() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{s}";
    publish(&mut c, b, b"a", T0 + 500);
    view(&mut c, b, b"a", b"v1", T0 + H);
    view(&mut c, b, b"a", b"v2", T0 + H);
    view(&mut c, b, b"a", b"v1", T0 + H + 1); // duplicate
    for at in [T0, T0 + H, T0 + 7 * H + 500, now_ms() + 100 * DAY] {
        let st = stats(&mut c, b, b"a", Some(at)).unwrap();
        assert_eq!(
            st,
            Stats {
                pv: 2,
                uv: 2,
                published_at: Some("1700000000.5".into()),
                score: hot(2, 2, T0 + 500, at)
            }
        );
    }
    // 7 h after publication: (2 + 2.4) / 9^1.5 = 4.4 / 27.
    let st = stats(&mut c, b, b"a", Some(T0 + 500 + 7 * H)).unwrap();
    assert!((st.score - 4.4 / 27.0).abs() < 1e-15);
    // A published article with no views: known, zero counts, score 0.
    publish(&mut c, b, b"quiet", T0);
    let st = stats(&mut c, b, b"quiet", Some(T0 + H)).unwrap();
    assert_eq!(
        st,
        Stats {
            pv: 0,
            uv: 0,
            published_at: Some(ts(T0)),
            score: 0.0
        }
    );
    // ... and it is not on the hot list.
    assert_eq!(top(&mut c, b, &["AT", &ts(T0 + H)]), ids(&["a"]));
}

#[test]
fn stats_is_nil_for_an_unknown_article_or_board() {
    let s = Server::start();
    let mut c = s.conn();
    assert_eq!(stats(&mut c, b"hot:{s}", b"nope", None), None);
    view(&mut c, b"hot:{s}", b"a", b"v", T0);
    assert_eq!(stats(&mut c, b"hot:{s}", b"nope", Some(T0)), None);
    assert_eq!(stats(&mut c, b"hot:{s}", b"A", Some(T0)), None);
    assert!(stats(&mut c, b"hot:{s}", b"a", Some(T0)).is_some());
    assert_eq!(stats(&mut c, b"hot:{other}", b"a", Some(T0)), None);
}

#[test]
fn stats_is_a_map_under_resp3() {
    let s = Server::start();
    let mut c = redis::Client::open(format!("{}?protocol=resp3", s.url()))
        .unwrap()
        .get_connection()
        .unwrap();
    view(&mut c, b"hot:{s}", b"a", b"v", T0);
    let v = ok(
        &mut c,
        &[
            b"HOT.STATS",
            b"hot:{s}",
            b"a",
            b"AT",
            ts(T0 + 2 * H).as_bytes(),
        ],
    );
    let Value::Map(m) = v else {
        panic!("expected a map, got {v:?}")
    };
    let m: Vec<(String, Value)> = m.into_iter().map(|(k, v)| (text(&k), v)).collect();
    assert_eq!(m[0], ("pv".into(), Value::Int(1)));
    assert_eq!(m[1], ("uv".into(), Value::Int(1)));
    assert_eq!(m[2], ("suspicious".into(), Value::Int(0)));
    assert_eq!(text(&m[3].1), ts(T0));
    assert_eq!((m[4].0.as_str(), score(&m[4].1)), ("score", 0.275));
    assert_eq!(ok(&mut c, &[b"HOT.STATS", b"hot:{s}", b"zz"]), Value::Nil);
}

#[test]
fn top_ranks_by_score_at_the_query_instant_not_the_stored_score() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{t}";
    config_set(&mut c, "hotrank.dedup-seconds", "0");
    // old: published at T0 with 20 views at T0. new: published 10 h later, 5 views then.
    publish(&mut c, b, b"old", T0);
    for _ in 0..20 {
        view(&mut c, b, b"old", b"v", T0);
    }
    publish(&mut c, b, b"new", T0 + 10 * H);
    for _ in 0..5 {
        view(&mut c, b, b"new", b"v", T0 + 10 * H);
    }
    let exp = |q: i64| {
        let mut v = vec![
            (b"old".to_vec(), hot(20, 1, T0, q)),
            (b"new".to_vec(), hot(5, 1, T0 + 10 * H, q)),
        ];
        v.sort_by(|x, y| y.1.total_cmp(&x.1));
        v
    };
    // At T0 old leads; 10 h later new leads; 100 h later old leads again.
    // 5 h in, new is not yet published: it scores at age 0 and leads.
    for (q, first) in [
        (T0, "old"),
        (T0 + 10 * H, "new"),
        (T0 + 100 * H, "old"),
        (T0 + 5 * H, "new"),
    ] {
        let got = top_ws(&mut c, b, &["AT", &ts(q)]);
        assert_eq!(got, exp(q), "at {}", ts(q));
        assert_eq!(got[0].0, first.as_bytes());
        assert_eq!(top(&mut c, b, &["LIMIT", "1", "AT", &ts(q)]), ids(&[first]));
    }
}

#[test]
fn top_breaks_score_ties_by_article_id_ascending() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{t}";
    for a in ["b", "aa", "c", "a", "B", "ab"] {
        publish(&mut c, b, a.as_bytes(), T0);
        view(&mut c, b, a.as_bytes(), b"v", T0 + H);
    }
    // One clearly hotter and one clearly colder article around the tie.
    publish(&mut c, b, b"zhot", T0);
    view(&mut c, b, b"zhot", b"v", T0 + H);
    view(&mut c, b, b"zhot", b"w", T0 + H);
    publish(&mut c, b, b"0cold", T0 - 50 * H);
    view(&mut c, b, b"0cold", b"v", T0 + H);
    let at = ts(T0 + 3 * H);
    assert_eq!(
        top(&mut c, b, &["AT", &at]),
        ids(&["zhot", "B", "a", "aa", "ab", "b", "c", "0cold"])
    );
    for n in 1..=8 {
        let got = top(&mut c, b, &["LIMIT", &n.to_string(), "AT", &at]);
        assert_eq!(
            got,
            ids(&["zhot", "B", "a", "aa", "ab", "b", "c", "0cold"][..n])
        );
    }
    let ws = top_ws(&mut c, b, &["LIMIT", "3", "AT", &at]);
    assert_eq!(ws[1].1, ws[2].1);
    assert_eq!(ws[1].1, hot(1, 1, T0, T0 + 3 * H));
}

#[test]
fn top_limit_defaults_to_20_and_caps_the_reply() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{l}";
    let mut m = Model::default();
    let mut views = Vec::new();
    for i in 0..25i64 {
        let a = format!("a{i:02}").into_bytes();
        for v in 0..=i {
            views.push((a.clone(), format!("v{v}").into_bytes(), T0 + i * 1000));
        }
    }
    replay_views(&mut c, b, &mut m, &views, "limit");
    let at = T0 + DAY;
    let all = m.top(at, None, usize::MAX);
    assert_eq!(all.len(), 25);
    assert_eq!(top_ws(&mut c, b, &["AT", &ts(at)]), all[..20]);
    for n in [1, 5, 19, 20, 21, 25, 26, 10_000] {
        let got = top_ws(&mut c, b, &["LIMIT", &n.to_string(), "AT", &ts(at)]);
        assert_eq!(got, all[..n.min(25)], "LIMIT {n}");
    }
    // Options in any order and any case.
    let got = top_ws(&mut c, b, &["at", &ts(at), "limit", "3"]);
    assert_eq!(got, all[..3]);
    let got = top_raw(
        &mut c,
        &top_args(b, &["Limit", "2", "withScores", "At", &ts(at)]),
    );
    assert_eq!(pairs(&got), all[..2]);
    // The last option wins when one is repeated.
    let got = top(&mut c, b, &["LIMIT", "7", "LIMIT", "2", "AT", &ts(at)]);
    assert_eq!(got.len(), 2);
}

#[test]
fn top_window_keeps_articles_published_within_it_for_every_unit() {
    let s = Server::start();
    let mut c = s.conn();
    let q = T0 + 10 * DAY;
    // (WINDOW text, milliseconds)
    let cases: [(&str, i64); 9] = [
        ("5400", 5_400_000),
        ("5400.5", 5_400_500),
        ("90s", 90_000),
        ("0.001s", 1),
        ("90m", 5_400_000),
        ("2h", 2 * H),
        ("1.5h", 90 * 60_000),
        ("1d", DAY),
        ("1.5d", 36 * H),
    ];
    for (i, (w, ms)) in cases.iter().enumerate() {
        let b = format!("hot:{{w{i}}}").into_bytes();
        // Published: exactly at the window's start (in), 1 ms before it
        // (out), at the query instant (in), 1 ms after it (out), and in
        // the middle (in).
        let arts = [
            ("edge", q - ms, true),
            ("early", q - ms - 1, false),
            ("now", q, true),
            ("future", q + 1, false),
            ("mid", q - ms / 2, true),
        ];
        for (a, p, _) in arts {
            publish(&mut c, &b, a.as_bytes(), p);
            view(&mut c, &b, a.as_bytes(), b"v", T0);
        }
        let mut want: Vec<(Vec<u8>, f64)> = arts
            .iter()
            .filter(|x| x.2)
            .map(|(a, p, _)| (a.as_bytes().to_vec(), hot(1, 1, *p, q)))
            .collect();
        want.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
        assert_eq!(
            top_ws(&mut c, &b, &["WINDOW", w, "AT", &ts(q)]),
            want,
            "WINDOW {w}"
        );
        // Without a window all five are listed.
        assert_eq!(top(&mut c, &b, &["AT", &ts(q)]).len(), 5);
    }
}

#[test]
fn top_accepts_at_in_the_future_and_scores_at_that_instant() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{f}";
    view(&mut c, b, b"a", b"v", T0);
    view(&mut c, b, b"a", b"w", T0);
    for q in [now_ms() + DAY, now_ms() + 3650 * DAY, 253_402_300_799_999] {
        assert_eq!(
            top_ws(&mut c, b, &["AT", &ts(q)]),
            vec![(b"a".to_vec(), hot(2, 2, T0, q))]
        );
    }
    // An article published in the future scores as age 0 until then.
    let p = now_ms() + 10 * DAY;
    publish(&mut c, b, b"later", p);
    view(&mut c, b, b"later", b"v", T0);
    let st = stats(&mut c, b, b"later", Some(p - DAY)).unwrap();
    assert_eq!(st.score, 2.2 / 2f64.powf(1.5));
    assert_eq!(
        top_ws(&mut c, b, &["AT", &ts(p + 2 * H)]),
        vec![
            (b"later".to_vec(), 0.275),
            (b"a".to_vec(), hot(2, 2, T0, p + 2 * H))
        ]
    );
}

#[test]
fn top_is_read_only() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{r}";
    // A missing board gives an empty list and creates nothing.
    assert!(top(&mut c, b, &[]).is_empty());
    assert!(snapshot(&mut c).is_empty());
    for i in 0..300 {
        view(&mut c, b, format!("a{i}").as_bytes(), b"v", T0 + i * 1000);
    }
    let before = snapshot(&mut c);
    for opts in [
        vec![],
        vec!["LIMIT", "5", "AT", "1700000000"],
        vec!["WINDOW", "1h", "WITHSCORES", "AT", "1700000100"],
        vec!["LIMIT", "10000"],
    ] {
        top(&mut c, b, &opts);
    }
    assert_eq!(snapshot(&mut c), before);
    // The command table declares it read-only.
    let info: Value = redis::cmd("COMMAND")
        .arg("INFO")
        .arg("hot.top")
        .query(&mut c)
        .unwrap();
    assert!(format!("{info:?}").contains("readonly"), "{info:?}");
}

// ---------------------------------------------------------------------------
// 2. Dedup
// ---------------------------------------------------------------------------

#[test]
fn repeat_view_within_900s_of_view_time_is_duplicate_and_counts_at_900s() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{d}";
    assert_eq!(view(&mut c, b, b"a", b"v", T0).status, "counted");
    let r = view(&mut c, b, b"a", b"v", T0);
    assert_eq!((r.pv, r.uv, r.status.as_str()), (1, 1, "duplicate"));
    let r = view(&mut c, b, b"a", b"v", T0 + 899_999);
    assert_eq!((r.pv, r.uv, r.status.as_str()), (1, 1, "duplicate"));
    // A duplicate's reply scores the unchanged counts at its own view time.
    assert_eq!(r.score, hot(1, 1, T0, T0 + 899_999));
    let r = view(&mut c, b, b"a", b"v", T0 + 900_000);
    assert_eq!((r.pv, r.uv, r.status.as_str()), (2, 1, "counted"));
    assert_eq!(r.score, hot(2, 1, T0, T0 + 900_000));
    // Dedup follows view time, not server time: the calls above came within
    // milliseconds of each other.
    assert_eq!(stats(&mut c, b, b"a", Some(T0)).unwrap().pv, 2);
}

#[test]
fn duplicates_do_not_extend_the_dedup_window() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{d}";
    let statuses: Vec<String> = [
        0, 600_000, 899_000, 900_000, 1_000_000, 1_799_000, 1_799_999, 1_800_000,
    ]
    .iter()
    .map(|ms| view(&mut c, b, b"a", b"v", T0 + ms).status)
    .collect();
    assert_eq!(
        statuses,
        [
            "counted",
            "duplicate",
            "duplicate",
            "counted",
            "duplicate",
            "duplicate",
            "duplicate",
            "counted"
        ]
    );
    assert_eq!(stats(&mut c, b, b"a", None).unwrap().pv, 3);
}

#[test]
fn another_visitor_or_article_is_counted_within_the_window() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{d}";
    assert_eq!(view(&mut c, b, b"a", b"v", T0).status, "counted");
    let r = view(&mut c, b, b"a", b"w", T0 + 1);
    assert_eq!((r.pv, r.uv, r.status.as_str()), (2, 2, "counted"));
    let r = view(&mut c, b, b"other", b"v", T0 + 2);
    assert_eq!((r.pv, r.uv, r.status.as_str()), (1, 1, "counted"));
    // Another board has its own dedup state.
    assert_eq!(
        view(&mut c, b"hot:{e}", b"a", b"v", T0 + 3).status,
        "counted"
    );
    assert_eq!(view(&mut c, b, b"a", b"v", T0 + 4).status, "duplicate");
    assert_eq!(view(&mut c, b, b"a", b"w", T0 + 5).status, "duplicate");
}

#[test]
fn config_dedup_seconds_sets_the_window() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{d}";
    assert_eq!(config_get(&mut c, "hotrank.dedup-seconds"), "900");
    config_set(&mut c, "hotrank.dedup-seconds", "60");
    assert_eq!(config_get(&mut c, "hotrank.dedup-seconds"), "60");
    assert_eq!(view(&mut c, b, b"a", b"v", T0).status, "counted");
    assert_eq!(view(&mut c, b, b"a", b"v", T0 + 59_999).status, "duplicate");
    assert_eq!(view(&mut c, b, b"a", b"v", T0 + 60_000).status, "counted");
    // A new window starts a fresh dedup state (documented): the next view
    // counts, and repeats within the new window are duplicates.
    config_set(&mut c, "hotrank.dedup-seconds", "3600");
    assert_eq!(view(&mut c, b, b"a", b"v", T0 + 60_001).status, "counted");
    assert_eq!(
        view(&mut c, b, b"a", b"v", T0 + 60_001 + 3_599_999).status,
        "duplicate"
    );
    assert_eq!(
        view(&mut c, b, b"a", b"v", T0 + 60_001 + 3_600_000).status,
        "counted"
    );
    assert_eq!(stats(&mut c, b, b"a", None).unwrap().pv, 4);
    // Out of range and non-integer values are refused and change nothing.
    for bad in ["-1", "31536001", "abc", "1.5", ""] {
        let e = err(&mut c, &["CONFIG", "SET", "hotrank.dedup-seconds", bad]);
        assert!(e.starts_with("ERR"), "{bad}: {e}");
    }
    assert_eq!(config_get(&mut c, "hotrank.dedup-seconds"), "3600");
}

#[test]
fn dedup_seconds_zero_counts_every_view() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{d}";
    config_set(&mut c, "hotrank.dedup-seconds", "0");
    for i in 1..=5 {
        let r = view(&mut c, b, b"a", b"v", T0);
        assert_eq!((r.pv, r.uv, r.status.as_str()), (i, 1, "counted"));
    }
    // No dedup markers are kept: only the board, its meta and the article's keys.
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(&mut c).unwrap();
    assert!(
        keys.iter().all(|k| !k.windows(5).any(|w| w == b"seen:")),
        "{:?}",
        keys.iter()
            .map(|k| String::from_utf8_lossy(k).into_owned())
            .collect::<Vec<_>>()
    );
    config_set(&mut c, "hotrank.dedup-seconds", "900");
    assert_eq!(view(&mut c, b, b"a", b"v", T0).status, "counted");
    assert_eq!(view(&mut c, b, b"a", b"v", T0).status, "duplicate");
}

// ---------------------------------------------------------------------------
// 3. The decay formula
// ---------------------------------------------------------------------------

#[test]
fn score_matches_hand_computed_decay() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{x}";
    publish(&mut c, b, b"a", T0);
    let mut last = None;
    for i in 0..10 {
        last = Some(view(
            &mut c,
            b,
            b"a",
            format!("visitor-{i}").as_bytes(),
            T0 + 2 * H,
        ));
    }
    // (10 + 12) / (2 + 2)^1.5 = 22 / 8
    assert_eq!(
        last.unwrap(),
        ViewReply {
            pv: 10,
            uv: 10,
            score: 2.75,
            status: "counted".into()
        }
    );
    let st = stats(&mut c, b, b"a", Some(T0 + 2 * H)).unwrap();
    assert_eq!((st.pv, st.uv, st.score), (10, 10, 2.75));
    // 7 h: 22 / 9^1.5 = 22 / 27; 14 h: 22 / 16^1.5 = 22 / 64; 0 h: 22 / 2^1.5.
    let mut at = |h: i64| stats(&mut c, b, b"a", Some(T0 + h * H)).unwrap().score;
    assert!((at(7) - 22.0 / 27.0).abs() < 1e-15);
    assert_eq!(at(14), 22.0 / 64.0);
    assert_eq!(at(0), 22.0 / 2f64.powf(1.5));
    // Before publication the age is clamped at 0.
    assert_eq!(
        stats(&mut c, b, b"a", Some(T0 - 5 * H)).unwrap().score,
        22.0 / 2f64.powf(1.5)
    );
    // A view before publication counts at age 0.
    publish(&mut c, b, b"early", T0 + 10 * H);
    let r = view(&mut c, b, b"early", b"v", T0);
    assert_eq!(r.score, 2.2 / 2f64.powf(1.5));
    // PV counts repeat views, UV counts visitors: 3 views by 2 visitors.
    publish(&mut c, b, b"pvuv", T0);
    view(&mut c, b, b"pvuv", b"x", T0);
    view(&mut c, b, b"pvuv", b"y", T0);
    let r = view(&mut c, b, b"pvuv", b"x", T0 + 2 * H);
    // (3 + 2.4) / 8
    assert_eq!((r.pv, r.uv, r.score), (3, 2, hot(3, 2, T0, T0 + 2 * H)));
    assert!((r.score - 5.4 / 8.0).abs() < 1e-15);
}

#[test]
fn score_follows_configured_alpha_beta_base_gamma() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{x}";
    for (k, v) in [("alpha", "2"), ("beta", "3"), ("base", "1"), ("gamma", "2")] {
        config_set(&mut c, &format!("hotrank.{k}"), v);
        assert_eq!(config_get(&mut c, &format!("hotrank.{k}")), v);
    }
    publish(&mut c, b, b"a", T0);
    let mut last = None;
    for v in ["p", "q", "r", "s"] {
        last = Some(view(&mut c, b, b"a", v.as_bytes(), T0 + 3 * H));
    }
    // (2·4 + 3·4) / (3 + 1)^2 = 20 / 16
    assert_eq!(last.unwrap().score, 1.25);
    assert_eq!(
        stats(&mut c, b, b"a", Some(T0 + 3 * H)).unwrap().score,
        1.25
    );
    // 9 h: 20 / 100
    assert_eq!(
        top_ws(&mut c, b, &["AT", &ts(T0 + 9 * H)]),
        vec![(b"a".to_vec(), 0.2)]
    );
    // gamma 0: no decay at all.
    config_set(&mut c, "hotrank.gamma", "0");
    assert_eq!(
        stats(&mut c, b, b"a", Some(T0 + 1000 * H)).unwrap().score,
        20.0
    );
    // alpha 0, beta 1: UV only; fractional gamma and base.
    config_set(&mut c, "hotrank.alpha", "0");
    config_set(&mut c, "hotrank.beta", "1");
    config_set(&mut c, "hotrank.base", "0.5");
    config_set(&mut c, "hotrank.gamma", "1.8");
    let want = 4.0 / (5.5f64).powf(1.8);
    assert_eq!(
        stats(&mut c, b, b"a", Some(T0 + 5 * H)).unwrap().score,
        want
    );
    assert_eq!(
        top_ws(&mut c, b, &["AT", &ts(T0 + 5 * H)]),
        vec![(b"a".to_vec(), want)]
    );
}

#[test]
fn config_refuses_nan_inf_and_out_of_range_formula_values() {
    let s = Server::start();
    let mut c = s.conn();
    let cases: [(&str, &[&str]); 4] = [
        (
            "alpha",
            &[
                "nan", "NaN", "inf", "-inf", "1e400", "-0.5", "1000001", "abc", "", " 1",
            ],
        ),
        ("beta", &["nan", "inf", "1e400", "-1", "1e7", "x1"]),
        (
            "base",
            &[
                "nan",
                "inf",
                "0",
                "-2",
                "1000000.5",
                "1e400",
                "1e-300",
                "0.0009",
            ],
        ),
        ("gamma", &["nan", "inf", "-0.1", "10.5", "11", "1e400"]),
    ];
    for (name, bads) in cases {
        let key = format!("hotrank.{name}");
        let before = config_get(&mut c, &key);
        for bad in bads {
            let e = err(&mut c, &["CONFIG", "SET", &key, bad]);
            assert!(
                e.starts_with("ERR") && e.contains(&key),
                "{key} {bad:?}: {e}"
            );
        }
        assert_eq!(config_get(&mut c, &key), before, "{key} changed");
    }
    // Range ends are accepted.
    for (k, v) in [
        ("alpha", "0"),
        ("alpha", "1000000"),
        ("base", "1000000"),
        ("base", "0.001"),
        ("gamma", "10"),
        ("gamma", "0"),
    ] {
        config_set(&mut c, &format!("hotrank.{k}"), v);
    }
}

#[test]
fn top_is_exact_after_a_formula_change_with_stale_stored_scores() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{x}";
    config_set(&mut c, "hotrank.dedup-seconds", "0");
    // young: 2 views at publication (stored score high). old: 50 views
    // 100 h after publication (stored score low, numerator high).
    publish(&mut c, b, b"young", T0);
    view(&mut c, b, b"young", b"v", T0);
    view(&mut c, b, b"young", b"w", T0);
    publish(&mut c, b, b"old", T0 - 100 * H);
    for _ in 0..50 {
        view(&mut c, b, b"old", b"v", T0);
    }
    let q = ts(T0 + H);
    assert_eq!(top(&mut c, b, &["LIMIT", "1", "AT", &q]), ids(&["young"]));
    // Without decay the numerator decides: old (50 + 1.2) beats young (2 + 2.4).
    config_set(&mut c, "hotrank.gamma", "0");
    let num = |pv: i64, uv: i64| 1.0 * pv as f64 + 1.2 * uv as f64;
    assert_eq!(
        top_ws(&mut c, b, &["LIMIT", "1", "AT", &q]),
        vec![(b"old".to_vec(), num(50, 1))]
    );
    // A write under the new formula leaves the board with mixed stored scores.
    view(&mut c, b, b"third", b"v", T0);
    assert_eq!(
        top_ws(&mut c, b, &["AT", &q]),
        vec![
            (b"old".to_vec(), num(50, 1)),
            (b"young".to_vec(), num(2, 2)),
            (b"third".to_vec(), num(1, 1))
        ]
    );
    // Back to the default formula: exact again.
    config_set(&mut c, "hotrank.gamma", "1.5");
    let qm = T0 + H;
    let mut want = vec![
        (b"young".to_vec(), hot(2, 2, T0, qm)),
        (b"old".to_vec(), hot(50, 1, T0 - 100 * H, qm)),
        (b"third".to_vec(), hot(1, 1, T0, qm)),
    ];
    want.sort_by(|x, y| y.1.total_cmp(&x.1));
    assert_eq!(top_ws(&mut c, b, &["AT", &q]), want);
    assert_eq!(top_ws(&mut c, b, &["LIMIT", "1", "AT", &q]), want[..1]);
}

// ---------------------------------------------------------------------------
// 4. HOT.TOP against a brute-force reference on random boards
// ---------------------------------------------------------------------------

/// One random board: publishes, views in time order (checked reply by reply
/// against the model), maybe republishes; then random queries compared with
/// the model's brute-force list. Returns (queries, queries that examined
/// fewer articles than the board holds).
fn random_board(c: &mut Connection, seed: u64, case: usize) -> (usize, usize) {
    let mut rng = Rng::new(seed);
    let ctx = format!("seed {seed} (HOTRANK_SEED={} case {case})", base_seed());
    let board = format!("hot:{{rand{case}}}").into_bytes();
    let mut m = Model::default();
    let n = rng.range(50, 300) as usize;
    let span = 6 * DAY;
    let shared_times: Vec<i64> = (0..4).map(|_| T0 + rng.range(0, 5 * DAY)).collect();
    let pool = rng.range(5, 60);
    let mut publishes = Vec::new();
    let mut views: Vec<(Vec<u8>, Vec<u8>, i64)> = Vec::new();
    let mut names = std::collections::HashSet::new();
    for _ in 0..n {
        // Ids whose byte order differs from creation order.
        let id = loop {
            let id = format!("a{}", rng.range(0, 99_999)).into_bytes();
            if names.insert(id.clone()) {
                break id;
            }
        };
        if rng.chance(0.1) {
            // Tie makers: published at a shared time, one view an hour later.
            let p = *rng.pick(&shared_times);
            publishes.push((id.clone(), p));
            views.push((id, b"v0".to_vec(), p + H));
            continue;
        }
        let published = rng.chance(0.6).then(|| T0 + rng.range(0, 5 * DAY));
        if let Some(p) = published {
            publishes.push((id.clone(), p));
        }
        let k = if rng.chance(0.1) { 0 } else { rng.range(1, 30) };
        for _ in 0..k {
            let t = match published {
                Some(p) if rng.chance(0.1) => p - rng.range(0, 2 * H),
                Some(p) => (p + rng.range(0, 2 * DAY)).min(T0 + span),
                None => T0 + rng.range(0, span),
            };
            let v = format!("v{}", rng.range(0, pool)).into_bytes();
            if rng.chance(0.3) {
                // A burst: the same visitor again, often within the dedup window.
                views.push((id.clone(), v.clone(), t + rng.range(0, 1800 * 1000)));
            }
            views.push((id.clone(), v, t));
        }
    }
    views.sort_by_key(|v| v.2);
    // Publish first (every publish time is new), then replay the views.
    assert!(!publishes.is_empty());
    let mut p = redis::pipe();
    for (a, t) in &publishes {
        p.cmd("HOT.PUBLISH").arg(&board).arg(a).arg(ts(*t));
    }
    let r: Vec<i64> = p.query(c).unwrap();
    for ((a, t), got) in publishes.iter().zip(r) {
        assert_eq!(got, m.publish(a, *t), "{ctx}: HOT.PUBLISH");
    }
    replay_views(c, &board, &mut m, &views, &ctx);
    let last_view = m.last_view;
    if rng.chance(0.3) {
        // Republish some articles (rescored by the server at its clock),
        // and publish a few new ones that never get a view.
        let known: Vec<Vec<u8>> = m.arts.keys().cloned().collect();
        for _ in 0..n / 10 {
            let a = rng.pick(&known).clone();
            let t = T0 + rng.range(0, span);
            assert_eq!(
                publish(c, &board, &a, t),
                m.publish(&a, t),
                "{ctx}: republish"
            );
        }
        for j in 0..3 {
            let a = format!("unviewed{j}").into_bytes();
            let t = T0 + rng.range(0, span);
            assert_eq!(
                publish(c, &board, &a, t),
                m.publish(&a, t),
                "{ctx}: new publish"
            );
        }
    }

    let viewed: Vec<i64> = m
        .arts
        .values()
        .filter(|a| a.pv > 0)
        .map(|a| a.published.unwrap())
        .collect();
    let mut small = 0;
    let queries = 40;
    for qi in 0..queries {
        let at = match rng.range(0, 99) {
            0..=39 => last_view + rng.range(0, 3 * DAY),
            40..=54 => last_view,
            55..=84 => T0 + rng.range(-DAY, last_view - T0),
            _ => now_ms() + rng.range(0, 10 * DAY),
        };
        let limit = match rng.range(0, 9) {
            0 | 1 => None,
            2..=6 => Some(rng.range(1, 10)),
            _ => Some(rng.range(1, n as i64 + 5)),
        };
        let window = match rng.range(0, 9) {
            0..=3 => None,
            4 => {
                // Exactly reaching back to some article's publish time.
                let p = *rng.pick(&viewed);
                (p < at).then(|| (ts(at - p), at - p))
            }
            _ => {
                let (suffix, mult) =
                    *rng.pick(&[("", 1), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]);
                let target = rng.range(60_000, 6 * DAY);
                let mut milli = (target / mult).max(1);
                if rng.chance(0.5) {
                    milli = (milli + 999) / 1000 * 1000;
                }
                let frac = if milli % 1000 == 0 {
                    String::new()
                } else {
                    format!(".{:03}", milli % 1000)
                };
                Some((format!("{}{frac}{suffix}", milli / 1000), milli * mult))
            }
        };
        let withscores = rng.chance(0.5);
        // Options in random order and case.
        let mut opts: Vec<Vec<String>> = vec![vec![
            (if rng.chance(0.5) { "AT" } else { "at" }).into(),
            ts(at),
        ]];
        if let Some(l) = limit {
            opts.push(vec![
                (if rng.chance(0.5) { "LIMIT" } else { "limit" }).into(),
                l.to_string(),
            ]);
        }
        if let Some((w, _)) = &window {
            opts.push(vec![
                (if rng.chance(0.5) { "WINDOW" } else { "Window" }).into(),
                w.clone(),
            ]);
        }
        if withscores {
            opts.push(vec!["WITHSCORES".into()]);
        }
        for i in (1..opts.len()).rev() {
            let j = rng.range(0, i as i64) as usize;
            opts.swap(i, j);
        }
        let flat: Vec<&str> = opts.iter().flatten().map(|s| s.as_str()).collect();
        let want = m.top(
            at,
            window.as_ref().map(|w| w.1),
            limit.unwrap_or(20) as usize,
        );
        let examined_before = info(c)["top_articles_examined"];
        let items = top_raw(c, &top_args(&board, &flat));
        let examined = info(c)["top_articles_examined"] - examined_before;
        if (examined as usize) < m.arts.values().filter(|a| a.pv > 0).count() {
            small += 1;
        }
        let qctx = format!(
            "{ctx}: query {qi}: HOT.TOP {} {flat:?} (last view {})",
            String::from_utf8_lossy(&board),
            ts(last_view)
        );
        if withscores {
            let got = pairs(&items);
            assert_eq!(lossy(&got), lossy(&want), "{qctx}");
        } else {
            let got: Vec<Vec<u8>> = items.iter().map(bytes).collect();
            let want: Vec<Vec<u8>> = want.into_iter().map(|x| x.0).collect();
            assert_eq!(got, want, "{qctx}");
        }
    }
    // HOT.STATS for some articles at random instants.
    let known: Vec<Vec<u8>> = m.arts.keys().cloned().collect();
    for _ in 0..10 {
        let a = rng.pick(&known);
        let at = T0 + rng.range(0, 8 * DAY);
        let ma = &m.arts[a];
        let want = Stats {
            pv: ma.pv,
            uv: ma.uv,
            published_at: ma.published.map(ts),
            score: if ma.pv > 0 {
                hot(ma.pv, ma.uv, ma.published.unwrap(), at)
            } else {
                0.0
            },
        };
        let got = stats(c, &board, a, Some(at));
        assert_eq!(
            got,
            Some(want),
            "{ctx}: HOT.STATS {}",
            String::from_utf8_lossy(a)
        );
    }
    (queries, small)
}

/// Random boards per run (each 50–300 articles, 40 queries).
const BOARDS: usize = 64;

#[test]
fn top_matches_brute_force_reference_on_random_boards() {
    let s = Server::start();
    let mut c = s.conn();
    let start = std::time::Instant::now();
    let (mut queries, mut pruned) = (0, 0);
    for case in 0..BOARDS {
        let seed = base_seed().wrapping_add(case as u64 * 7919);
        let (q, p) = random_board(&mut c, seed, case);
        queries += q;
        pruned += p;
    }
    println!("{queries} queries on {BOARDS} boards, {pruned} examined fewer articles than the board holds, {:?}", start.elapsed());
    // The pruned path (stopping before the end of the board) was exercised.
    assert!(
        pruned > queries / 10,
        "only {pruned} of {queries} queries pruned"
    );
}

// ---------------------------------------------------------------------------
// 5. Bad input
// ---------------------------------------------------------------------------

#[test]
fn wrong_arity_is_the_standard_error_for_every_command() {
    let s = Server::start();
    let mut c = s.conn();
    let cases: [(&str, &[&str]); 13] = [
        ("hot.publish", &["HOT.PUBLISH"]),
        ("hot.publish", &["HOT.PUBLISH", "hot:{a}"]),
        ("hot.publish", &["HOT.PUBLISH", "hot:{a}", "a"]),
        ("hot.publish", &["HOT.PUBLISH", "hot:{a}", "a", "1", "2"]),
        ("hot.view", &["HOT.VIEW"]),
        ("hot.view", &["HOT.VIEW", "hot:{a}"]),
        ("hot.view", &["HOT.VIEW", "hot:{a}", "a"]),
        (
            "hot.view",
            &["HOT.VIEW", "hot:{a}", "a", "v", "AT", "1", "x"],
        ),
        ("hot.top", &["HOT.TOP"]),
        (
            "hot.top",
            &[
                "HOT.TOP",
                "hot:{a}",
                "LIMIT",
                "1",
                "WINDOW",
                "1h",
                "WITHSCORES",
                "AT",
                "1",
                "WITHSCORES",
            ],
        ),
        ("hot.stats", &["HOT.STATS"]),
        ("hot.stats", &["HOT.STATS", "hot:{a}"]),
        ("hot.stats", &["HOT.STATS", "hot:{a}", "a", "AT", "1", "x"]),
    ];
    for (name, args) in cases {
        let e = err(&mut c, args);
        assert_eq!(
            e,
            format!("ERR wrong number of arguments for '{name}' command"),
            "{args:?}"
        );
    }
    assert!(snapshot(&mut c).is_empty());
}

#[test]
fn bad_times_are_refused_naming_the_argument() {
    let s = Server::start();
    let mut c = s.conn();
    view(&mut c, b"hot:{a}", b"a", b"v", T0);
    let before = snapshot(&mut c);
    let bads = [
        "abc",
        "nan",
        "NaN",
        "inf",
        "-inf",
        "1e400",
        "1e9",
        "-1",
        "-0",
        "1.2345",
        "1700000000.0001",
        "",
        " 1",
        "1 ",
        "+1",
        "1.",
        ".5",
        "0x10",
        "253402300800",
        "99999999999999999999",
        "1,5",
    ];
    for bad in bads {
        let checks: [(&str, Vec<&str>); 4] = [
            ("published_at", vec!["HOT.PUBLISH", "hot:{a}", "a", bad]),
            ("AT", vec!["HOT.VIEW", "hot:{a}", "a", "v", "AT", bad]),
            ("AT", vec!["HOT.TOP", "hot:{a}", "AT", bad]),
            ("AT", vec!["HOT.STATS", "hot:{a}", "a", "AT", bad]),
        ];
        for (name, args) in checks {
            let e = err(&mut c, &args);
            assert!(e.starts_with(&format!("ERR {name} ")), "{args:?}: {e}");
        }
    }
    // Up to three decimals and the largest time are accepted.
    for good in [
        "0",
        "0.001",
        "1700000000.5",
        "1700000000.12",
        "1700000000.123",
        "253402300799.999",
    ] {
        assert!(
            run(&mut c, &[b"HOT.TOP", b"hot:{a}", b"AT", good.as_bytes()]).is_ok(),
            "{good}"
        );
        assert!(
            run(
                &mut c,
                &[b"HOT.STATS", b"hot:{a}", b"a", b"AT", good.as_bytes()]
            )
            .is_ok(),
            "{good}"
        );
    }
    assert_eq!(snapshot(&mut c), before, "a failed command wrote");
}

#[test]
fn view_at_later_than_the_server_clock_is_refused() {
    let s = Server::start();
    let mut c = s.conn();
    for at in [
        now_ms() + 60_000,
        now_ms() + 3650 * DAY,
        253_402_300_799_999,
    ] {
        let e = fail(
            &mut c,
            &[
                b"HOT.VIEW",
                b"hot:{a}",
                b"a",
                b"v",
                b"AT",
                ts(at).as_bytes(),
            ],
        );
        assert!(
            e.starts_with("ERR AT ") && e.contains("server clock"),
            "{e}"
        );
    }
    assert!(snapshot(&mut c).is_empty());
    // Now (and the past) is fine; HOT.PUBLISH accepts future publish times.
    assert_eq!(
        view(&mut c, b"hot:{a}", b"a", b"v", now_ms() - 1).status,
        "counted"
    );
    assert_eq!(publish(&mut c, b"hot:{a}", b"b", now_ms() + DAY), 1);
}

#[test]
fn bad_limit_window_and_unknown_options_are_refused() {
    let s = Server::start();
    let mut c = s.conn();
    view(&mut c, b"hot:{a}", b"a", b"v", T0);
    let before = snapshot(&mut c);
    for bad in [
        "0",
        "-1",
        "abc",
        "10001",
        "1.5",
        "",
        "+1",
        "1e3",
        " 1",
        "99999999999999999999",
    ] {
        let e = err(&mut c, &["HOT.TOP", "hot:{a}", "LIMIT", bad]);
        assert!(e.starts_with("ERR LIMIT "), "LIMIT {bad:?}: {e}");
    }
    for bad in [
        "0", "0s", "0.0005d", "abc", "-1h", "1w", "h", "s", "", "1.2345h", "1e3", "nan", "inf",
        "1h30m", "36501d", "1H", " 1h", "1.h", "+1h",
    ] {
        let e = err(&mut c, &["HOT.TOP", "hot:{a}", "WINDOW", bad]);
        assert!(e.starts_with("ERR WINDOW "), "WINDOW {bad:?}: {e}");
    }
    // An option without its value names the option.
    for opt in ["LIMIT", "WINDOW", "AT"] {
        let e = err(&mut c, &["HOT.TOP", "hot:{a}", opt]);
        assert!(e.starts_with("ERR ") && e.contains(opt), "{opt}: {e}");
    }
    let e = err(&mut c, &["HOT.VIEW", "hot:{a}", "a", "v", "AT"]);
    assert!(e.starts_with("ERR ") && e.contains("AT"), "{e}");
    let e = err(&mut c, &["HOT.STATS", "hot:{a}", "a", "AT"]);
    assert!(e.starts_with("ERR ") && e.contains("AT"), "{e}");
    // Unknown options.
    let e = err(&mut c, &["HOT.TOP", "hot:{a}", "FOO"]);
    assert!(e.starts_with("ERR ") && e.contains("FOO"), "{e}");
    let e = err(&mut c, &["HOT.TOP", "hot:{a}", "LIMIT", "1", "BYSCORE"]);
    assert!(e.starts_with("ERR ") && e.contains("BYSCORE"), "{e}");
    for args in [
        vec!["HOT.VIEW", "hot:{a}", "a", "v", "FOO", "1"],
        vec!["HOT.VIEW", "hot:{a}", "a", "v", "LIMIT", "1"],
        vec!["HOT.STATS", "hot:{a}", "a", "FOO"],
        vec!["HOT.STATS", "hot:{a}", "a", "FOO", "1"],
    ] {
        let e = err(&mut c, &args);
        assert!(e.starts_with("ERR syntax error"), "{args:?}: {e}");
    }
    assert_eq!(snapshot(&mut c), before, "a failed command wrote");
}

#[test]
fn wrongtype_board_is_refused_by_every_command_and_nothing_is_written() {
    let s = Server::start();
    let mut c = s.conn();
    let _: () = redis::cmd("SET")
        .arg("hot:{str}")
        .arg("x")
        .query(&mut c)
        .unwrap();
    let _: () = redis::cmd("RPUSH")
        .arg("hot:{list}")
        .arg("x")
        .query(&mut c)
        .unwrap();
    let before = snapshot(&mut c);
    for b in ["hot:{str}", "hot:{list}"] {
        let at = ts(T0);
        for args in [
            vec!["HOT.PUBLISH", b, "a", "1700000000"],
            vec!["HOT.VIEW", b, "a", "v"],
            vec!["HOT.VIEW", b, "a", "v", "AT", &at],
            vec!["HOT.TOP", b],
            vec!["HOT.TOP", b, "LIMIT", "5", "WITHSCORES", "AT", &at],
            vec!["HOT.STATS", b, "a"],
        ] {
            let e = err(&mut c, &args);
            assert!(e.starts_with("WRONGTYPE "), "{args:?}: {e}");
        }
    }
    assert_eq!(snapshot(&mut c), before);
    assert_eq!(int(&ok(&mut c, &[b"DBSIZE"])), 2);
}

#[test]
fn failed_view_writes_nothing() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{n}";
    // A healthy board with one article, so there is something to disturb.
    publish(&mut c, b, b"ok", T0);
    view(&mut c, b, b"ok", b"v", T0);
    let set = |c: &mut Connection, k: &[u8], v: &[u8]| {
        ok(c, &[b"SET", k, v]);
    };
    // Plant broken derived keys, one article each.
    set(&mut c, &derived(b, "uv", b"hll-garbage"), b"garbage");
    // Sparse HyperLogLogs with the cached cardinality marked invalid (so
    // PFCOUNT reads the registers): one with no register runs at all
    // (PFADD refuses it), one with a valid body plus a stray opcode (PFADD
    // accepts it, PFCOUNT refuses it).
    let hll_head = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80";
    set(&mut c, &derived(b, "uv", b"hll-empty"), hll_head);
    set(
        &mut c,
        &derived(b, "uv", b"hll-trailing"),
        &[&hll_head[..], b"\x7f\xf5\x84\x08\x55"].concat(),
    );
    set(&mut c, &derived(b, "pv", b"pv-text"), b"abc");
    set(
        &mut c,
        &derived(b, "pv", b"pv-max"),
        i64::MAX.to_string().as_bytes(),
    );
    ok(&mut c, &[b"RPUSH", &derived(b, "meta", b"meta-list"), b"x"]);
    ok(
        &mut c,
        &[b"HSET", &derived(b, "pv", b"pv-hash"), b"f", b"1"],
    );
    let before = snapshot(&mut c);
    let dbsize = int(&ok(&mut c, &[b"DBSIZE"]));
    for (article, code) in [
        (&b"hll-garbage"[..], "WRONGTYPE"),
        (b"hll-empty", "INVALIDOBJ"),
        (b"pv-text", "ERR"),
        (b"pv-max", "ERR"),
        (b"meta-list", "WRONGTYPE"),
        (b"pv-hash", "WRONGTYPE"),
    ] {
        for visitor in [&b"v"[..], b"new-visitor"] {
            let e = fail(
                &mut c,
                &[
                    b"HOT.VIEW",
                    b,
                    article,
                    visitor,
                    b"AT",
                    ts(T0 + 1000).as_bytes(),
                ],
            );
            assert!(
                e.starts_with(code),
                "{}: {e}",
                String::from_utf8_lossy(article)
            );
            assert_eq!(
                snapshot(&mut c),
                before,
                "HOT.VIEW {} wrote",
                String::from_utf8_lossy(article)
            );
        }
    }
    // PFADD may rewrite a corrupt HyperLogLog before PFCOUNT refuses it;
    // every other key stays as it was.
    let uv_key = derived(b, "uv", b"hll-trailing");
    for visitor in [&b"v"[..], b"new-visitor"] {
        let e = fail(
            &mut c,
            &[
                b"HOT.VIEW",
                b,
                b"hll-trailing",
                visitor,
                b"AT",
                ts(T0 + 1000).as_bytes(),
            ],
        );
        assert!(e.starts_with("INVALIDOBJ"), "{e}");
        let mut after = snapshot(&mut c);
        assert!(after.remove(&uv_key).is_some());
        let mut want = before.clone();
        want.remove(&uv_key);
        assert_eq!(after, want, "HOT.VIEW hll-trailing wrote");
    }
    let before = snapshot(&mut c);
    // HOT.PUBLISH on a broken article writes nothing either.
    for article in [&b"pv-text"[..], b"meta-list", b"pv-hash"] {
        fail(&mut c, &[b"HOT.PUBLISH", b, article, b"1700000000"]);
        assert_eq!(
            snapshot(&mut c),
            before,
            "HOT.PUBLISH {} wrote",
            String::from_utf8_lossy(article)
        );
    }
    // The board key itself of the wrong type.
    let lb: &[u8] = b"hot:{lst}";
    ok(&mut c, &[b"RPUSH", lb, b"x"]);
    let before = snapshot(&mut c);
    fail(&mut c, &[b"HOT.VIEW", lb, b"a", b"v"]);
    fail(&mut c, &[b"HOT.PUBLISH", lb, b"a", b"1"]);
    assert_eq!(snapshot(&mut c), before);
    assert_eq!(int(&ok(&mut c, &[b"DBSIZE"])), dbsize + 1);
    // The healthy article is untouched and still counts.
    assert_eq!(view(&mut c, b, b"ok", b"w", T0 + 1000).pv, 2);
}

// ---------------------------------------------------------------------------
// 6. Key layout and cluster slots
// ---------------------------------------------------------------------------

/// `CLUSTER KEYSLOT` of each key. Redis 7.0 answers it only with cluster
/// support enabled, so then a bare cluster-enabled server computes it.
fn keyslots(s: &Server, keys: &[Vec<u8>]) -> Vec<i64> {
    let mut c = s.conn();
    let probe = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg("x")
        .query::<i64>(&mut c);
    let helper;
    let mut hc;
    let conn = if probe.is_ok() {
        &mut c
    } else {
        helper = Server::start_with(&["--cluster-enabled", "yes"], false);
        hc = helper.conn();
        &mut hc
    };
    keys.iter()
        .map(|k| {
            redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(k)
                .query(conn)
                .expect("CLUSTER KEYSLOT")
        })
        .collect()
}

fn fill_board(c: &mut Connection, b: &[u8]) {
    for a in [
        &b"a"[..],
        b"{x}",
        b"}",
        b"{",
        b"x{y}z",
        b"sp ace",
        b"nl\n",
        b"\0",
        b"{hot:news}",
    ] {
        view(c, b, a, b"v", T0);
        view(c, b, a, b"{w}", T0);
        publish(c, b, a, T0);
    }
}

#[test]
fn derived_keys_stay_in_the_board_slot_with_or_without_a_hash_tag() {
    let s = Server::start();
    let mut c = s.conn();
    for b in [&b"hot:news"[..], b"hot:{news}", b"{a}b}", b"plain"] {
        ok(&mut c, &[b"FLUSHALL"]);
        fill_board(&mut c, b);
        let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(&mut c).unwrap();
        // board, board meta, publish index, 9 articles × (pv, uv, meta),
        // dedup shards and per-visitor view counters.
        assert!(keys.len() > 3 + 9 * 3, "{}", String::from_utf8_lossy(b));
        assert!(keys.iter().all(|k| k.starts_with(b)));
        let mut all = vec![b.to_vec()];
        all.extend(keys);
        let slots = keyslots(&s, &all);
        assert!(
            slots.iter().all(|&x| x == slots[0]),
            "{}: {:?}",
            String::from_utf8_lossy(b),
            all.iter()
                .zip(&slots)
                .map(|(k, s)| (String::from_utf8_lossy(k).into_owned(), *s))
                .collect::<Vec<_>>()
        );
    }
}

#[test]
fn board_key_with_brace_but_no_hash_tag_is_refused() {
    let s = Server::start();
    let mut c = s.conn();
    for b in [
        "hot:news}",
        "hot:}news",
        "hot:{news",
        "hot:{}news",
        "}{",
        "a\0b",
    ] {
        for args in [
            vec!["HOT.PUBLISH", b, "a", "1"],
            vec!["HOT.VIEW", b, "a", "v"],
            vec!["HOT.TOP", b],
            vec!["HOT.STATS", b, "a"],
        ] {
            let e = err(&mut c, &args);
            assert!(e.starts_with("ERR board key"), "{args:?}: {e}");
        }
    }
    assert!(snapshot(&mut c).is_empty());
}

// ---------------------------------------------------------------------------
// 7. Binary ids
// ---------------------------------------------------------------------------

#[test]
fn arbitrary_byte_ids_work_and_never_collide() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{bin}";
    let big: Vec<u8> = (0..65_536u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let mut big2 = big.clone();
    *big2.last_mut().unwrap() ^= 1;
    let articles: Vec<Vec<u8>> = vec![
        b"plain".to_vec(),
        b"with space".to_vec(),
        b"new\nline\r\n".to_vec(),
        b"a:b".to_vec(),
        b"a".to_vec(),
        b"1:a".to_vec(),
        b"{brace}".to_vec(),
        b"}".to_vec(),
        b"{".to_vec(),
        b"zero\0byte".to_vec(),
        b"zero".to_vec(),
        b"\0".to_vec(),
        b"\xff\xfe\x80".to_vec(),
        big.clone(),
        big2.clone(),
    ];
    let visitors: Vec<Vec<u8>> = vec![
        b"v".to_vec(),
        b"b:v".to_vec(),
        b"b".to_vec(),
        b"v:".to_vec(),
        b":v".to_vec(),
        b"1:v".to_vec(),
        b"\0".to_vec(),
        b"\0\0".to_vec(),
        b" \n{}".to_vec(),
        big.clone(),
        big2.clone(),
    ];
    let mut m = Model::default();
    let mut views = Vec::new();
    for (i, a) in articles.iter().enumerate() {
        // Article i gets the first i % visitors.len() + 1 visitors.
        for v in &visitors[..i % visitors.len() + 1] {
            views.push((a.clone(), v.clone(), T0));
        }
    }
    // Pairs whose naive concatenation collides: ("a:b", "v") vs ("a", "b:v"),
    // ("1:a", "v") vs ("1", "a:v").
    views.push((b"a".to_vec(), b"b:v".to_vec(), T0));
    views.push((b"1".to_vec(), b"a:v".to_vec(), T0));
    replay_views(&mut c, b, &mut m, &views, "binary ids");
    // Every pair is now marked: repeats are duplicates, new pairs count.
    let mut again = views.clone();
    for v in &mut again {
        v.2 = T0 + 1;
    }
    replay_views(&mut c, b, &mut m, &again, "binary ids again");
    assert!(views
        .iter()
        .all(|(a, v, _)| m.seen.contains_key(&(a.clone(), v.clone()))));
    for (id, a) in &m.arts {
        let st = stats(&mut c, b, id, Some(T0 + H)).unwrap();
        assert_eq!(
            st.pv,
            a.pv,
            "{:?}",
            String::from_utf8_lossy(&id[..id.len().min(20)])
        );
        assert_eq!(st.uv, a.visitors.len() as i64);
        assert_eq!(st.score, hot(a.pv, a.uv, T0, T0 + H));
    }
    assert_eq!(stats(&mut c, b, b"zer", Some(T0)), None);
    let all = top_ws(&mut c, b, &["LIMIT", "100", "AT", &ts(T0 + H)]);
    assert_eq!(all, m.top(T0 + H, None, 100));
    assert_eq!(all.len(), articles.len() + 1);
}

// ---------------------------------------------------------------------------
// 8. INFO
// ---------------------------------------------------------------------------

#[test]
fn info_hotrank_counters_move() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{i}";
    let i0 = info(&mut c);
    for k in [
        "views_counted",
        "views_duplicate",
        "top_calls",
        "top_articles_examined",
        "errors",
        "panics_caught",
    ] {
        assert_eq!(i0.get(k), Some(&0), "{k} in {i0:?}");
    }
    view(&mut c, b, b"a", b"v", T0);
    view(&mut c, b, b"a", b"w", T0);
    view(&mut c, b, b"b", b"v", T0);
    view(&mut c, b, b"a", b"v", T0 + 1);
    view(&mut c, b, b"b", b"v", T0 + 2);
    top(&mut c, b, &[]);
    top(&mut c, b, &["LIMIT", "1"]);
    top(&mut c, b"hot:{missing}", &[]);
    err(&mut c, &["HOT.VIEW", "x"]);
    err(&mut c, &["HOT.VIEW", "hot:{i}", "a", "v", "AT", "nan"]);
    err(&mut c, &["HOT.TOP", "hot:{i}", "LIMIT", "0"]);
    err(&mut c, &["HOT.STATS", "hot:}"]);
    let i1 = info(&mut c);
    assert_eq!(i1["views_counted"], 3);
    assert_eq!(i1["views_duplicate"], 2);
    assert_eq!(i1["top_calls"], 3);
    assert_eq!(i1["errors"], 4);
    assert_eq!(i1["panics_caught"], 0);
    assert!(i1["top_articles_examined"] >= 3, "{i1:?}");
}

// ---------------------------------------------------------------------------
// 9. Real traffic
// ---------------------------------------------------------------------------

#[test]
fn nasa_log_replay_matches_the_model() {
    use std::io::BufRead;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/nasa_19950801.tsv.gz");
    if !path.exists() {
        println!("skipping: ../shared/data/nasa_19950801.tsv.gz not found");
        return;
    }
    let file = std::fs::File::open(&path).expect("open log");
    let mut r = std::io::BufReader::new(flate2::read::GzDecoder::new(file));
    let mut line = Vec::new();
    r.read_until(b'\n', &mut line).unwrap();
    assert!(
        line.starts_with(b"host\tlogname\ttime\tmethod\turl\tresponse\tbytes"),
        "header"
    );
    let (mut views, mut lines, mut last_time) = (Vec::new(), 0, 0i64);
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line).unwrap() == 0 {
            break;
        }
        lines += 1;
        let l = line.strip_suffix(b"\n").unwrap_or(&line);
        let cols: Vec<&[u8]> = l.split(|&b| b == b'\t').collect();
        let time: i64 = std::str::from_utf8(cols[2])
            .unwrap()
            .parse()
            .expect("unix seconds");
        assert!(time >= last_time, "log is in time order");
        last_time = time;
        let path = cols[4].split(|&b| b == b'?').next().unwrap();
        if cols[3] == b"GET" && cols[5] == b"200" && path.ends_with(b".html") {
            views.push((path.to_vec(), cols[0].to_vec(), time * 1000));
        }
    }
    let s = Server::start();
    let mut c = s.conn();
    // The model has no abnormal-traffic rule; nasa_log_crawler_is_isolated covers it.
    config_set(&mut c, "hotrank.visitor-max-views", "0");
    let b: &[u8] = b"hot:nasa";
    let mut m = Model::default();
    let start = std::time::Instant::now();
    replay_views(&mut c, b, &mut m, &views, "nasa");
    let replay = start.elapsed();
    let at = last_time * 1000;
    let want = m.top(at, None, 20);
    let got = top_ws(&mut c, b, &["LIMIT", "20", "AT", &ts(at)]);
    assert_eq!(lossy(&got), lossy(&want));
    // The whole board and a few windows, too.
    assert_eq!(
        top_ws(&mut c, b, &["LIMIT", "10000", "AT", &ts(at)]),
        m.top(at, None, 10_000)
    );
    for w in ["15m", "1h", "6h", "1d"] {
        let ms = match w {
            "15m" => 900_000,
            "1h" => H,
            "6h" => 6 * H,
            _ => DAY,
        };
        assert_eq!(
            top_ws(&mut c, b, &["LIMIT", "50", "WINDOW", w, "AT", &ts(at)]),
            m.top(at, Some(ms), 50),
            "WINDOW {w}"
        );
    }
    let counted: i64 = m.arts.values().map(|a| a.pv).sum();
    let hll_off = m
        .arts
        .values()
        .filter(|a| a.uv != a.visitors.len() as i64)
        .count();
    let i = info(&mut c);
    assert_eq!(i["views_counted"], counted);
    assert_eq!(i["views_duplicate"], views.len() as i64 - counted);
    println!(
        "nasa: {lines} log lines, {} article views ({counted} counted), {} articles, replay {replay:?}; \
         {hll_off} articles whose HyperLogLog UV differs from the exact visitor count; top 3: {:?}",
        views.len(),
        m.arts.len(),
        &lossy(&got)[..3]
    );
}

/// With the default limit (60 views per visitor per hour), replaying the NASA
/// log flags the crawler 130.110.74.81 (77 article views in one hour) and no
/// real reader or proxy, and its extra views never reach PV or the ranking.
#[test]
fn nasa_log_crawler_is_isolated() {
    use std::io::BufRead;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/nasa_19950801.tsv.gz");
    if !path.exists() {
        println!("skipping: ../shared/data/nasa_19950801.tsv.gz not found");
        return;
    }
    let r = std::io::BufReader::new(flate2::read::GzDecoder::new(
        std::fs::File::open(&path).unwrap(),
    ));
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{nasa}";
    let mut p = redis::pipe();
    let mut sent = Vec::new();
    for line in r.lines().skip(1) {
        let line = line.unwrap();
        let cols: Vec<&str> = line.split('\t').collect();
        let url = cols[4].split('?').next().unwrap();
        if cols[3] == "GET" && cols[5] == "200" && url.ends_with(".html") {
            p.cmd("HOT.VIEW")
                .arg(b)
                .arg(url)
                .arg(cols[0])
                .arg("AT")
                .arg(cols[2]);
            sent.push(cols[0].to_string());
        }
    }
    let replies: Vec<(i64, i64, String, String)> = p.query(&mut c).unwrap();
    let mut flagged = std::collections::BTreeMap::new();
    for (host, r) in sent.iter().zip(&replies) {
        if r.3 == "suspicious" {
            *flagged.entry(host.clone()).or_insert(0) += 1;
        }
    }
    assert_eq!(flagged.keys().collect::<Vec<_>>(), vec!["130.110.74.81"]);
    let n = flagged["130.110.74.81"];
    assert!(n >= 17, "crawler views past the limit: {n}");
    let i = info(&mut c);
    assert_eq!(i["views_suspicious"], n);
    assert_eq!(
        i["views_counted"] + i["views_duplicate"] + n,
        replies.len() as i64
    );
}

// ---------------------------------------------------------------------------
// Keyspace events and WATCH: HOT.VIEW writes through the low-level key API,
// so it fires the events and WATCH signals itself.
// ---------------------------------------------------------------------------

/// Keyspace events (event name, key) seen while `f` runs.
fn events_during(s: &Server, f: impl FnOnce()) -> Vec<(String, Vec<u8>)> {
    let mut sub = s.conn();
    let mut ps = sub.as_pubsub();
    ps.psubscribe("__keyevent@0__:*").unwrap();
    ps.set_read_timeout(Some(std::time::Duration::from_millis(300)))
        .unwrap();
    f();
    let mut out = Vec::new();
    while let Ok(msg) = ps.get_message() {
        let event = msg
            .get_channel_name()
            .trim_start_matches("__keyevent@0__:")
            .to_string();
        out.push((event, msg.get_payload_bytes().to_vec()));
    }
    out
}

#[test]
fn counted_views_fire_the_commands_keyspace_events_and_duplicates_fire_none_on_the_article() {
    let s = Server::start();
    let mut c = s.conn();
    config_set(&mut c, "notify-keyspace-events", "KEA");
    let b: &[u8] = b"hot:{ev}";
    let t = now_ms() - 1000;
    let (pv, uv, meta) = (
        derived(b, "pv", b"a1"),
        derived(b, "uv", b"a1"),
        derived(b, "meta", b"a1"),
    );
    let seen = events_during(&s, || {
        assert_eq!(view(&mut c, b, b"a1", b"v1", t).status, "counted");
    });
    let has = |event: &str, key: &[u8]| seen.iter().any(|(e, k)| e == event && k == key);
    for (event, key) in [
        ("zadd", b),
        ("incrby", &pv[..]),
        ("pfadd", &uv[..]),
        ("hset", &meta[..]),
        ("expire", &pv[..]),
        ("expire", &uv[..]),
        ("expire", &meta[..]),
    ] {
        assert!(
            has(event, key),
            "no {event} event on {:?}; saw {seen:?}",
            String::from_utf8_lossy(key)
        );
    }
    let seen = events_during(&s, || {
        assert_eq!(view(&mut c, b, b"a1", b"v1", t + 1).status, "duplicate");
    });
    for key in [b, &pv[..], &uv[..], &meta[..]] {
        assert!(
            !seen.iter().any(|(_, k)| k == key),
            "a duplicate view fired an event on {:?}: {seen:?}",
            String::from_utf8_lossy(key)
        );
    }
}

#[test]
fn watch_fails_on_keys_a_write_changed_and_holds_on_keys_it_left_alone() {
    let s = Server::start();
    let mut c = s.conn();
    let mut w = s.conn();
    let b: &[u8] = b"hot:{watch}";
    let t = now_ms() - 1000;
    assert_eq!(view(&mut c, b, b"a1", b"v1", t).status, "counted");
    let watched_exec = |w: &mut Connection, keys: &[&[u8]], between: &mut dyn FnMut()| {
        let mut args: Vec<&[u8]> = vec![b"WATCH"];
        args.extend_from_slice(keys);
        ok(w, &args);
        between();
        ok(w, &[b"MULTI"]);
        ok(w, &[b"PING"]);
        ok(w, &[b"EXEC"])
    };
    let (pv, meta) = (derived(b, "pv", b"a1"), derived(b, "meta", b"a1"));
    // A duplicate view leaves the board and the article's keys alone.
    let r = watched_exec(&mut w, &[b, &pv, &meta], &mut || {
        assert_eq!(view(&mut c, b, b"a1", b"v1", t + 1).status, "duplicate");
    });
    assert!(
        matches!(r, Value::Array(_)),
        "EXEC after a duplicate: {r:?}"
    );
    // A counted view changes the board: the transaction is aborted.
    let r = watched_exec(&mut w, &[b], &mut || {
        assert_eq!(view(&mut c, b, b"a1", b"v2", t + 2).status, "counted");
    });
    assert_eq!(r, Value::Nil, "EXEC after a counted view");
    // RANK.INCR by 0 changes nothing; by 1 it changes the board.
    let lb: &[u8] = b"lb:{watch}";
    ok(&mut c, &[b"RANK.INCR", lb, b"m", b"5"]);
    let r = watched_exec(&mut w, &[lb], &mut || {
        ok(&mut c, &[b"RANK.INCR", lb, b"m", b"0"]);
    });
    assert!(
        matches!(r, Value::Array(_)),
        "EXEC after RANK.INCR by 0: {r:?}"
    );
    let r = watched_exec(&mut w, &[lb], &mut || {
        ok(&mut c, &[b"RANK.INCR", lb, b"m", b"1"]);
    });
    assert_eq!(r, Value::Nil, "EXEC after RANK.INCR by 1");
}
