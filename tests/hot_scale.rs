//! Integration tests of HOT boards at scale ("Hot ranking at scale"): the
//! compact dedup store (memory, generation boundaries), suspicious-visitor
//! isolation and trimming to `hotrank.max-articles`. Retention is in
//! tests/hot_scale_retention.rs, HOT.TOP on large boards and republish in
//! tests/hot_scale_top.rs.
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
use std::collections::HashSet;

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
    // One section per shard string (all views in one generation, at once):
    // its 12-byte marker, then 12-byte entries, one per pair.
    assert_eq!(
        len,
        12 * pairs as i64 + 12 * keys.len() as i64,
        "a 12-byte marker per string and 12-byte entries, one per pair"
    );
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
    type Case<'a> = (&'a str, i64, &'a [(i64, &'a str)]);
    let cases: &[Case] = &[
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

    // VISITOR-MAX-VIEWS 0 turns the limit off (the board's setting).
    let _: () = redis::cmd("HOT.ALTER")
        .arg(b)
        .arg("VISITOR-MAX-VIEWS")
        .arg(0)
        .query(&mut c)
        .expect("HOT.ALTER");
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
    let slack = (max * 2).max(16); // 100, as hotrank's trim_slack
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
    // Trimming takes articles off the board ZSET only (issue 21): their
    // counters, HyperLogLog, meta and publish-index entry stay until retention.
    assert_eq!(
        zcard(&mut c, &pub_index(b)),
        200,
        "publish index keeps them"
    );
    for a in &trimmed {
        let name = String::from_utf8_lossy(a).into_owned();
        assert!(exists(&mut c, &derived(b, "pv", a)), "{name}: pv key lost");
        assert!(exists(&mut c, &derived(b, "uv", a)), "{name}: uv key lost");
        let st = stats(&mut c, b, a, q).unwrap_or_else(|| panic!("{name}: lost"));
        assert!(st.pv > 0, "{name}: counters lost");
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
    // viewed again, it comes back with every view it counted.
    let gone = trimmed[0].clone();
    let published = m.arts[&gone].published.unwrap();
    publish(&mut c, b, &gone, published);
    assert_eq!(
        zscore(&mut c, b, &gone),
        None,
        "republished removed article is back"
    );
    let before = stats(&mut c, b, &gone, q).expect("kept");
    let r = view(&mut c, b, &gone, b"fresh", t);
    assert_eq!((r.pv, r.status.as_str()), (before.pv + 1, "counted"));
    assert_eq!(r.score, hot(r.pv, r.uv, published, t));

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
