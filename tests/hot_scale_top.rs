//! HOT boards at scale (split out of tests/hot_scale.rs): HOT.TOP (pruned walk
//! and publish-index path) against a brute-force reference on large random
//! boards, and republish moving an article later.
//!
//! Times are milliseconds since the epoch inside the tests and unix seconds
//! (with up to 3 decimals) on the wire. Random tests use a seeded xorshift
//! generator; set `HOTRANK_SEED` to rerun one seed.

mod common;
use common::rng::Rng;
use common::*;
#[path = "common/hot_client.rs"]
mod hot_client;
use hot_client::*;
#[path = "common/models.rs"]
mod models;
use models::*;
#[path = "common/hot_scale_helpers.rs"]
mod hot_scale_helpers;
use hot_scale_helpers::*;
use redis::Connection;

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
