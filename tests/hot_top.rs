//! `HOT.TOP` against a brute-force reference on seeded random boards (split
//! out of tests/hot.rs). Times are milliseconds since the epoch inside the
//! tests and unix seconds (with up to 3 decimals) on the wire; set
//! `HOTRANK_SEED` to rerun one seed.

mod common;
use common::rng::Rng;
use common::*;
#[path = "common/hot_client.rs"]
mod hot_client;
use hot_client::*;
#[path = "common/models.rs"]
mod models;
use models::*;
#[path = "common/hot_helpers.rs"]
mod hot_helpers;
use hot_helpers::*;
use redis::Connection;

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
