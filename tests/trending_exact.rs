//! Issue 32's "Must show" for trending, against a real server:
//!
//! - `trending_scores_and_order_equal_brute_force_across_a_landmark_move`:
//!   a seeded random stream of 20,000+ views over 2,000+ articles, with
//!   `AT` times spread over 650 half-lives of 60 s (a little out of order),
//!   duplicates within the dedup window and suspicious visitors over
//!   `VISITOR-MAX-VIEWS`. Which views counted and how much UV rose come from
//!   HOT.VIEW's replies; the brute force sums `(alpha + beta·ΔUV) ·
//!   2^(−(q − t)/H)` over each article's counted views (terms sorted,
//!   compensated sum, `f64::exp2` of the fractional part). At random query
//!   times q, every article's HOT.STATS `trending` and HOT.TOP BY trending
//!   WITHSCORES equal it within 1e-12 relative, and the order is the brute
//!   force's, ties by article id (twin articles with identical views tie
//!   exactly). The stream moves the landmark once (more than 512
//!   half-lives): just before and just after the view that moves it, no
//!   other article's score at several q changes by more than 1e-15 relative
//!   and no order changes, and HOT.INFO `trending-landmark` moves by whole
//!   half-lives to within one half-life of the view.
//! - `trending_on_and_off`: the errors and fields of a board without
//!   trending, HOT.ALTER adding and removing it.
//!
//! `HOTRANK_SEED` reruns one seed.

mod common;
use common::rng::Rng;
use common::*;
#[path = "common/hot_client.rs"]
mod hot_client;
use hot_client::{bytes, now_ms, ok, run, text, ts};
use redis::{Connection, Value};
use std::collections::{BTreeMap, HashMap};

/// The half-life, ms.
const HL: i64 = 60_000;
const ALPHA: f64 = 0.7;
const BETA: f64 = 1.3;
/// Relative tolerance against the brute force.
const EXACT: f64 = 1e-12;
/// Relative tolerance across a landmark move.
const MOVE: f64 = 1e-15;
const BOARD: &[u8] = b"hot:{trend}";

fn seed() -> u64 {
    std::env::var("HOTRANK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7E4D_0032)
}

/// A reply's field/value pairs (flat array under RESP2) as text.
fn fields(v: &Value) -> BTreeMap<String, String> {
    match v {
        Value::Array(a) => a
            .chunks(2)
            .map(|p| (text(&p[0]), reply_text(&p[1])))
            .collect(),
        other => panic!("field/value reply: {other:?}"),
    }
}

/// A number sent as a bulk string (a score) or an integer.
fn num(s: &str) -> f64 {
    s.parse()
        .unwrap_or_else(|_| panic!("{s:?} is not a number"))
}

/// Unix seconds (up to 3 decimals) as ms.
fn secs_to_ms(s: &str) -> i64 {
    (num(s) * 1000.0).round() as i64
}

/// `2^-k` for `0 <= k <= 1022`, exactly.
fn pow2_neg(k: i64) -> f64 {
    assert!((0..=1022).contains(&k), "2^-{k} is subnormal");
    f64::from_bits(((1023 - k) as u64) << 52)
}

/// `2^(−d/H)` for `d >= 0` ms: the whole half-lives exactly, the rest by
/// std's `exp2` (within an ulp or so).
fn decay(d: i64) -> f64 {
    assert!(d >= 0, "query before a view: {d} ms");
    pow2_neg(d.div_euclid(HL)) * (-(d.rem_euclid(HL) as f64) / HL as f64).exp2()
}

/// Sum of `terms`, smallest first, with Neumaier's compensation.
fn accurate_sum(mut terms: Vec<f64>) -> f64 {
    terms.sort_by(f64::total_cmp);
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for x in terms {
        let t = s + x;
        c += if s.abs() >= x.abs() {
            (s - t) + x
        } else {
            (x - t) + s
        };
        s = t;
    }
    s + c
}

/// The counted views of every article: (view time ms, weight factor
/// `alpha + beta·ΔUV`).
#[derive(Default)]
struct Reference {
    views: BTreeMap<Vec<u8>, Vec<(i64, f64)>>,
}

impl Reference {
    /// The brute-force trending score of `article` at `q`.
    fn score(&self, article: &[u8], q: i64) -> f64 {
        self.views.get(article).map_or(0.0, |v| {
            accurate_sum(v.iter().map(|&(t, c)| c * decay(q - t)).collect())
        })
    }

    /// Every article with a counted view, best first at `q`, ties by id.
    fn order(&self, q: i64) -> Vec<(Vec<u8>, f64)> {
        let mut all: Vec<(Vec<u8>, f64)> = self
            .views
            .keys()
            .map(|a| (a.clone(), self.score(a, q)))
            .collect();
        all.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
        all
    }
}

/// One view of the stream.
#[derive(Clone, Debug)]
struct View {
    article: Vec<u8>,
    visitor: Vec<u8>,
    t: i64,
}

/// Views to send. Article `art:<i>` for i < `articles`; the first `twins`
/// articles have a twin `art:<i>:twin` that gets each of their views right
/// after them (same visitor and time), so the two tie exactly. Times: a
/// sorted spread over `span_hl` half-lives from `t0`, each moved back by up
/// to 3 half-lives (out of order). About 10% repeat a recent pair within
/// ±100 s (duplicates in a 120 s window); 3 bots make 120 views each
/// (suspicious past 40).
fn stream(
    rng: &mut Rng,
    t0: i64,
    span_hl: i64,
    n: usize,
    articles: usize,
    twins: usize,
) -> Vec<View> {
    let mut base: Vec<i64> = (0..n).map(|_| t0 + rng.range(0, span_hl * HL)).collect();
    base.sort_unstable();
    let mut bot_views: Vec<usize> = (0..360)
        .map(|_| rng.range(0, n as i64 - 1) as usize)
        .collect();
    bot_views.sort_unstable();
    let mut out: Vec<View> = Vec::with_capacity(n + n / 10);
    for (i, &b) in base.iter().enumerate() {
        // The first view is an ordinary one: it sets the landmark.
        let t = if i == 0 {
            b
        } else {
            (b - rng.range(0, 3 * HL)).max(t0)
        };
        let v = if i > 0 && bot_views.binary_search(&i).is_ok() {
            View {
                article: format!("art:{}", rng.range(twins as i64, articles as i64 - 1))
                    .into_bytes(),
                visitor: format!("bot:{}", rng.below(3)).into_bytes(),
                t,
            }
        } else if i > 50 && rng.pct(10) {
            let mut j = out.len() - 1 - rng.below(40) as usize;
            if out[j].article.ends_with(b":twin") {
                // Its original: a duplicate of both, as a view of the original makes.
                j -= 1;
            }
            let prev = out[j].clone();
            View {
                t: (prev.t + rng.range(-100_000, 100_000)).max(t0),
                ..prev
            }
        } else {
            View {
                article: format!("art:{}", rng.skewed(articles)).into_bytes(),
                visitor: format!("v:{}", rng.below(6000)).into_bytes(),
                t,
            }
        };
        let twin = v.article.strip_prefix(b"art:").and_then(|n| {
            std::str::from_utf8(n)
                .ok()?
                .parse::<usize>()
                .ok()
                .filter(|&n| n < twins)
        });
        if let Some(k) = twin {
            out.push(v.clone());
            out.push(View {
                article: format!("art:{k}:twin").into_bytes(),
                ..v
            });
        } else {
            out.push(v);
        }
    }
    out
}

/// Sends `views` in one pipeline and records every counted one in `r`
/// (`uv` holds each article's last UV). Returns (counted, duplicate,
/// suspicious).
fn send(
    c: &mut Connection,
    views: &[View],
    r: &mut Reference,
    uv: &mut HashMap<Vec<u8>, i64>,
) -> [usize; 3] {
    let mut pipe = redis::pipe();
    for v in views {
        pipe.cmd("HOT.VIEW")
            .arg(BOARD)
            .arg(&v.article)
            .arg(&v.visitor)
            .arg("AT")
            .arg(ts(v.t));
    }
    let replies: Vec<Value> = pipe.query(c).expect("HOT.VIEW pipeline");
    let mut seen = [0; 3];
    for (v, reply) in views.iter().zip(&replies) {
        let Value::Array(a) = reply else {
            panic!("HOT.VIEW reply: {reply:?}")
        };
        let (new_uv, status) = (num(&reply_text(&a[1])), text(&a[3]));
        let before = uv.insert(v.article.clone(), new_uv as i64).unwrap_or(0);
        match status.as_str() {
            "counted" => {
                seen[0] += 1;
                let rise = new_uv - before as f64;
                r.views
                    .entry(v.article.clone())
                    .or_default()
                    .push((v.t, ALPHA + BETA * rise));
            }
            "duplicate" | "suspicious" => {
                assert_eq!(new_uv as i64, before, "UV moved on a {status} view {v:?}");
                seen[if status == "duplicate" { 1 } else { 2 }] += 1;
            }
            other => panic!("status {other} for {v:?}"),
        }
    }
    seen
}

/// `HOT.TOP BY trending LIMIT 10000 WITHSCORES AT q [WINDOW w]`.
fn top_trending(c: &mut Connection, q: i64, window: Option<&str>) -> Vec<(Vec<u8>, f64)> {
    let at = ts(q);
    let mut args: Vec<&[u8]> = vec![
        b"HOT.TOP",
        BOARD,
        b"BY",
        b"trending",
        b"LIMIT",
        b"10000",
        b"WITHSCORES",
        b"AT",
        at.as_bytes(),
    ];
    if let Some(w) = window {
        args.extend_from_slice(&[b"WINDOW", w.as_bytes()]);
    }
    match ok(c, &args) {
        Value::Array(a) => a
            .chunks(2)
            .map(|p| (bytes(&p[0]), num(&text(&p[1]))))
            .collect(),
        other => panic!("HOT.TOP reply: {other:?}"),
    }
}

/// HOT.STATS of every article at `q`: article → (trending, published_at ms).
fn stats_at(c: &mut Connection, articles: &[Vec<u8>], q: i64) -> HashMap<Vec<u8>, (f64, i64)> {
    let mut pipe = redis::pipe();
    for a in articles {
        pipe.cmd("HOT.STATS").arg(BOARD).arg(a).arg("AT").arg(ts(q));
    }
    let replies: Vec<Value> = pipe.query(c).expect("HOT.STATS pipeline");
    articles
        .iter()
        .zip(&replies)
        .map(|(a, v)| {
            if *v == Value::Nil {
                // Never counted nor seen (only suspicious views, or none).
                return (a.clone(), (0.0, i64::MIN));
            }
            let f = fields(v);
            let keys: Vec<&str> = f.keys().map(String::as_str).collect();
            let trending = f.get("trending").unwrap_or_else(|| {
                panic!(
                    "HOT.STATS {} has no trending: {keys:?}",
                    String::from_utf8_lossy(a)
                )
            });
            let published = match f["published_at"].as_str() {
                "nil" | "" => i64::MIN,
                p => secs_to_ms(p),
            };
            (a.clone(), (num(trending), published))
        })
        .collect()
}

/// What the stream has done so far: the brute force's views, each
/// article's last UV, the (counted, duplicate, suspicious) totals, the
/// latest view time, and the exact ties and near-tie swaps the checks saw.
struct Run {
    r: Reference,
    uv: HashMap<Vec<u8>, i64>,
    seen: [usize; 3],
    tmax: i64,
    ties: usize,
    swaps: usize,
    ctx: String,
}

impl Run {
    /// Sends `views` in one pipeline and records them.
    fn send(&mut self, c: &mut Connection, views: &[View]) {
        let got = send(c, views, &mut self.r, &mut self.uv);
        for (s, a) in self.seen.iter_mut().zip(got) {
            *s += a;
        }
        self.tmax = views.iter().map(|v| v.t).fold(self.tmax, i64::max);
    }

    /// [`check_at`] at `q`, adding up its ties and swaps.
    fn check(&mut self, c: &mut Connection, all: &[Vec<u8>], q: i64, when: &str) {
        let ctx = format!("{}, {when}", self.ctx);
        let (t, w) = check_at(c, &self.r, all, q, &ctx);
        self.ties += t;
        self.swaps += w;
    }
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / a.abs().max(b.abs())
    }
}

fn name(a: &[u8]) -> String {
    String::from_utf8_lossy(a).into_owned()
}

/// Checks `got` (the module's list) against the brute force at `q`: the same
/// articles, each score within [`EXACT`], and the brute-force order, ties by
/// id. Two articles may swap only when their brute-force scores are
/// distinct and within [`EXACT`] (counted, returned). Returns (exact ties
/// seen, near-tie swaps).
fn check_order(got: &[(Vec<u8>, f64)], want: &[(Vec<u8>, f64)], ctx: &str) -> (usize, usize) {
    assert_eq!(
        got.len(),
        want.len(),
        "{ctx}: HOT.TOP lists {} articles, brute force {}",
        got.len(),
        want.len()
    );
    let refs: HashMap<&[u8], f64> = want.iter().map(|(a, s)| (a.as_slice(), *s)).collect();
    for (a, s) in got {
        let r = *refs
            .get(a.as_slice())
            .unwrap_or_else(|| panic!("{ctx}: HOT.TOP lists {} (no counted view)", name(a)));
        assert!(
            rel(*s, r) <= EXACT,
            "{ctx}: {} scores {s:e}, brute force {r:e} (rel {:e})",
            name(a),
            rel(*s, r)
        );
    }
    let (mut ties, mut swaps) = (0, 0);
    for (i, w) in got.windows(2).enumerate() {
        let (a, b) = (&w[0].0, &w[1].0);
        let (ra, rb) = (refs[a.as_slice()], refs[b.as_slice()]);
        if ra == rb {
            ties += 1;
            assert!(
                a < b,
                "{ctx}: tie at {i}: {} before {} (ties go by id, ascending)",
                name(a),
                name(b)
            );
        } else if ra < rb {
            assert!(
                rel(ra, rb) <= EXACT,
                "{ctx}: at {i}, {} ({ra:e}) before {} ({rb:e})",
                name(a),
                name(b)
            );
            swaps += 1;
        }
    }
    (ties, swaps)
}

/// HOT.INFO's `trending-landmark` in ms (`None` while unset: empty or 0).
fn landmark(c: &mut Connection) -> Option<i64> {
    let f = fields(&ok(c, &[b"HOT.INFO", BOARD]));
    let l = f
        .get("trending-landmark")
        .unwrap_or_else(|| panic!("HOT.INFO has no trending-landmark: {f:?}"));
    match l.as_str() {
        "" | "0" | "nil" => None,
        s => Some(secs_to_ms(s)),
    }
}

/// Every check at query time `q`: HOT.STATS of every article and HOT.TOP
/// (whole board and one WINDOW) against the brute force. Returns (exact
/// ties, near-tie swaps).
fn check_at(
    c: &mut Connection,
    r: &Reference,
    all: &[Vec<u8>],
    q: i64,
    ctx: &str,
) -> (usize, usize) {
    let ctx = format!("{ctx}, q = {}", ts(q));
    let stats = stats_at(c, all, q);
    let mut worst = 0.0f64;
    for a in all {
        let (got, _) = stats[a];
        let want = r.score(a, q);
        if want == 0.0 {
            assert_eq!(
                got,
                0.0,
                "{ctx}: {} has no counted view but trending {got:e}",
                name(a)
            );
            continue;
        }
        worst = worst.max(rel(got, want));
        assert!(
            rel(got, want) <= EXACT,
            "{ctx}: HOT.STATS {} trending {got:e}, brute force {want:e}",
            name(a)
        );
    }
    let want = r.order(q);
    let got = top_trending(c, q, None);
    let (ties, swaps) = check_order(&got, &want, &ctx);
    // WINDOW: the articles published in [q - w, q] (published_at from HOT.STATS).
    // WINDOW: whole minutes that hold about half of the listed articles'
    // publish times (their first counted views).
    let mut published: Vec<i64> = want.iter().map(|(a, _)| stats[a].1).collect();
    published.sort_unstable();
    let minutes = (q - published[published.len() / 2]) / 60_000 + 1;
    let w = minutes * 60_000;
    let want_w: Vec<(Vec<u8>, f64)> = want
        .iter()
        .filter(|(a, _)| (q - w..=q).contains(&stats[a].1))
        .cloned()
        .collect();
    let got_w = top_trending(c, q, Some(&format!("{minutes}m")));
    check_order(&got_w, &want_w, &format!("{ctx} WINDOW {minutes}m"));
    eprintln!(
        "{ctx}: {} articles, worst HOT.STATS error {worst:e}, {} in the window",
        got.len(),
        got_w.len()
    );
    (ties, swaps)
}

#[test]
fn trending_scores_and_order_equal_brute_force_across_a_landmark_move() {
    let seed = seed();
    let mut rng = Rng::new(seed);
    let s = Server::start();
    let mut c = s.conn();
    ok(
        &mut c,
        &[
            b"HOT.CREATE",
            BOARD,
            b"ALPHA",
            b"0.7",
            b"BETA",
            b"1.3",
            b"DEDUP-SECONDS",
            b"120",
            b"VISITOR-MAX-VIEWS",
            b"40",
            b"VISITOR-WINDOW-SECONDS",
            b"86400",
            b"MAX-ARTICLES",
            b"0",
            b"TRENDING-HALF-LIFE",
            b"1m",
        ],
    );
    let span = 650;
    // Every view time is in the past (AT later than the clock is refused),
    // and the stream starts on a whole minute plus 12.345 s.
    let t0 = (now_ms() / HL - span - 5) * HL + 12_345;
    let (n_articles, twins) = (2000, 30);
    let views = stream(&mut rng, t0, span, 20_000, n_articles, twins);
    let mut all: Vec<Vec<u8>> = (0..n_articles)
        .map(|i| format!("art:{i}").into_bytes())
        .collect();
    all.extend((0..twins).map(|i| format!("art:{i}:twin").into_bytes()));

    let l0 = (views[0].t.div_euclid(HL)) * HL;
    // The first view that may move the landmark: past 512 half-lives.
    let first_past = views
        .iter()
        .position(|v| v.t - l0 > 512 * HL)
        .expect("the stream spans more than 512 half-lives");
    let mut run = Run {
        r: Reference::default(),
        uv: HashMap::new(),
        seen: [0; 3],
        tmax: i64::MIN,
        ties: 0,
        swaps: 0,
        ctx: format!("seed {seed}"),
    };
    // Before the move: in four pipelines, checked after each.
    let quarter = first_past / 4 + 1;
    for (i, chunk) in views[..first_past].chunks(quarter).enumerate() {
        run.send(&mut c, chunk);
        if i == 0 {
            assert_eq!(
                landmark(&mut c),
                Some(l0),
                "the landmark is the first view's time floored to a half-life"
            );
        }
        let q = run.tmax + rng.range(0, 20 * HL);
        let n = run.seen.iter().sum::<usize>();
        run.check(&mut c, &all, q, &format!("{n} views"));
    }
    assert_eq!(landmark(&mut c), Some(l0), "no move before 512 half-lives");

    // Up to the move, one view at a time, comparing HOT.TOP at several q
    // just before and just after each view.
    let mut i = first_past;
    let mover = loop {
        assert!(
            i < views.len() && i < first_past + 200,
            "no landmark move by view {i}"
        );
        let v = &views[i];
        let qs: Vec<i64> = (0..4)
            .map(|k| run.tmax.max(v.t) + k * 7 * HL + rng.range(0, HL))
            .collect();
        let before: Vec<_> = qs.iter().map(|&q| top_trending(&mut c, q, None)).collect();
        run.send(&mut c, std::slice::from_ref(v));
        let l = landmark(&mut c).expect("landmark");
        if l == l0 {
            i += 1;
            continue;
        }
        // Moved: by whole half-lives, to within one half-life of the view.
        assert_eq!(
            (l - l0) % HL,
            0,
            "landmark {l} moved by a fraction of a half-life from {l0}"
        );
        assert!(
            l <= v.t && v.t < l + HL,
            "landmark {} not within one half-life of the view at {}",
            ts(l),
            ts(v.t)
        );
        for (q, b) in qs.iter().zip(&before) {
            let after = top_trending(&mut c, *q, None);
            let others = |list: &[(Vec<u8>, f64)]| -> Vec<(Vec<u8>, f64)> {
                list.iter()
                    .filter(|(a, _)| *a != v.article)
                    .cloned()
                    .collect()
            };
            let (b, a) = (others(b), others(&after));
            let order = |l: &[(Vec<u8>, f64)]| l.iter().map(|p| p.0.clone()).collect::<Vec<_>>();
            assert_eq!(
                order(&b),
                order(&a),
                "the order at {} changed across the move",
                ts(*q)
            );
            let worst = b
                .iter()
                .zip(&a)
                .map(|(x, y)| rel(x.1, y.1))
                .fold(0.0, f64::max);
            assert!(
                worst <= MOVE,
                "a score at {} changed by {worst:e} relative across the move",
                ts(*q)
            );
            eprintln!(
                "move at view {i}: q = {}: {} other articles, worst change {worst:e}",
                ts(*q),
                b.len()
            );
            let viewed = after.iter().find(|p| p.0 == v.article);
            if let Some((_, s)) = viewed {
                let want = run.r.score(&v.article, *q);
                assert!(
                    rel(*s, want) <= EXACT,
                    "the moving view's article: {s:e} vs {want:e}"
                );
            }
        }
        break i;
    };
    let q = run.tmax + rng.range(0, 5 * HL);
    run.check(&mut c, &all, q, "right after the move");

    // The rest, in two pipelines.
    let rest = &views[mover + 1..];
    for chunk in rest.chunks(rest.len() / 2 + 1) {
        run.send(&mut c, chunk);
        for _ in 0..2 {
            let q = run.tmax + rng.range(0, 30 * HL);
            let n = run.seen.iter().sum::<usize>();
            run.check(&mut c, &all, q, &format!("{n} views"));
        }
    }
    let l_end = landmark(&mut c).expect("landmark");
    assert!(l_end > l0, "the landmark moved");
    let info = fields(&ok(&mut c, &[b"HOT.INFO", BOARD]));
    assert_eq!(info["trending-half-life"], "60", "HOT.INFO {info:?}");
    assert_eq!(
        num(&info["trending-articles"]) as usize,
        run.r.views.len(),
        "trending-articles"
    );
    let Run {
        r,
        seen,
        ties,
        swaps,
        ..
    } = run;
    eprintln!(
        "seed {seed}: {} views ({} counted, {} duplicate, {} suspicious) over {} articles, \
         landmark {} -> {}, {ties} exact ties ordered by id, {swaps} near-tie swaps",
        views.len(),
        seen[0],
        seen[1],
        seen[2],
        r.views.len(),
        ts(l0),
        ts(l_end)
    );
    assert!(
        views.len() >= 20_000 && r.views.len() >= 2000,
        "stream too small"
    );
    assert!(
        seen[1] >= 1000 && seen[2] >= 100,
        "too few duplicates or suspicious views: {seen:?}"
    );
    assert!(
        ties >= 20,
        "only {ties} exact ties: the tie order is not tested"
    );
}

#[test]
fn trending_on_and_off() {
    let s = Server::start();
    let mut c = s.conn();
    let b: &[u8] = b"hot:{plain}";
    ok(&mut c, &[b"HOT.CREATE", b]);
    let at = (now_ms() / 1000 - 3600).to_string();
    ok(
        &mut c,
        &[b"HOT.VIEW", b, b"a1", b"u1", b"AT", at.as_bytes()],
    );
    let e = run(&mut c, &[b"HOT.TOP", b, b"BY", b"trending"])
        .expect_err("BY trending without trending");
    assert_eq!(
        e.detail().map(str::trim),
        Some("board has no trending ranking (HOT.ALTER key TRENDING-HALF-LIFE 6h adds one)"),
        "{e}"
    );
    let st = fields(&ok(&mut c, &[b"HOT.STATS", b, b"a1", b"AT", at.as_bytes()]));
    assert!(!st.contains_key("trending"), "{st:?}");
    let info = fields(&ok(&mut c, &[b"HOT.INFO", b]));
    assert_eq!(info["trending-half-life"], "0");
    assert!(!info.contains_key("trending-landmark"), "{info:?}");
    // BY hot is the default list.
    assert_eq!(
        ok(
            &mut c,
            &[b"HOT.TOP", b, b"BY", b"hot", b"AT", at.as_bytes()]
        ),
        ok(&mut c, &[b"HOT.TOP", b, b"AT", at.as_bytes()])
    );

    // Adding it starts empty; a view counts from then on.
    ok(&mut c, &[b"HOT.ALTER", b, b"TRENDING-HALF-LIFE", b"6h"]);
    let info = fields(&ok(&mut c, &[b"HOT.INFO", b]));
    assert_eq!(info["trending-half-life"], "21600");
    assert_eq!(info["trending-articles"], "0");
    let st = fields(&ok(&mut c, &[b"HOT.STATS", b, b"a1", b"AT", at.as_bytes()]));
    assert_eq!(st["trending"], "0", "{st:?}");
    assert_eq!(
        ok(
            &mut c,
            &[b"HOT.TOP", b, b"BY", b"trending", b"AT", at.as_bytes()]
        ),
        Value::Array(vec![])
    );
    ok(
        &mut c,
        &[b"HOT.VIEW", b, b"a1", b"u2", b"AT", at.as_bytes()],
    );
    let st = fields(&ok(&mut c, &[b"HOT.STATS", b, b"a1", b"AT", at.as_bytes()]));
    // One counted view that raised UV by one, at the query time: alpha + beta.
    assert!(rel(num(&st["trending"]), 1.0 + 1.2) <= MOVE, "{st:?}");

    // A non-empty trending ZSET keeps its half-life.
    let e = run(&mut c, &[b"HOT.ALTER", b, b"TRENDING-HALF-LIFE", b"1h"])
        .expect_err("change with data");
    assert_eq!(
        e.detail().map(str::trim),
        Some("TRENDING-HALF-LIFE cannot change while the board has trending data: set it to 0 first, then to the new value"),
        "{e}"
    );
    assert_eq!(
        fields(&ok(&mut c, &[b"HOT.INFO", b]))["trending-half-life"],
        "21600"
    );
    // 0 removes it (and its ZSET); then the new value starts empty.
    let keys_before: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(&mut c).expect("KEYS");
    ok(&mut c, &[b"HOT.ALTER", b, b"TRENDING-HALF-LIFE", b"0"]);
    let keys_after: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(&mut c).expect("KEYS");
    assert_eq!(
        keys_after.len() + 1,
        keys_before.len(),
        "HOT.ALTER … 0 deletes the trending ZSET"
    );
    assert!(!fields(&ok(&mut c, &[b"HOT.STATS", b, b"a1"])).contains_key("trending"));
    ok(&mut c, &[b"HOT.ALTER", b, b"TRENDING-HALF-LIFE", b"1h"]);
    assert_eq!(
        fields(&ok(&mut c, &[b"HOT.INFO", b]))["trending-articles"],
        "0"
    );
    for bad in [&b"59"[..], b"315360001", b"-1", b"6x"] {
        let e = run(
            &mut c,
            &[b"HOT.CREATE", b"hot:{bad}", b"TRENDING-HALF-LIFE", bad],
        )
        .expect_err("bad half-life");
        assert_eq!(e.code(), Some("ERR"), "{bad:?}: {e}");
    }
    assert_eq!(ok(&mut c, &[b"EXISTS", b"hot:{bad}"]), Value::Int(0));
}
