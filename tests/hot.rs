//! Integration tests of the `HOT.*` commands against a real server: every
//! command and option, the dedup window and the decay formula. The other HOT
//! tests: `HOT.TOP` against a brute-force reference on random boards
//! (tests/hot_top.rs), bad input and that a failed command writes nothing
//! (tests/hot_input.rs), the derived-key layout, binary ids, the INFO counters,
//! keyspace events and WATCH (tests/hot_keys.rs), a replay of a real access log
//! (tests/hot_nasa.rs) and boards at scale (tests/hot_scale*.rs).
//!
//! Times are milliseconds since the epoch inside the tests and unix seconds
//! (with up to 3 decimals) on the wire. Random tests use a seeded xorshift
//! generator; set `HOTRANK_SEED` to rerun one seed.

mod common;
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
use redis::Value;

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
    // CONFIG gives only new boards their settings: this board keeps 60 s.
    config_set(&mut c, "hotrank.dedup-seconds", "3600");
    assert_eq!(view(&mut c, b, b"a", b"v", T0 + 60_000).status, "duplicate");
    // A new window (HOT.ALTER) starts a fresh dedup state (documented): the
    // next view counts, and repeats within the new window are duplicates.
    alter(&mut c, b, &["DEDUP-SECONDS", "3600"]);
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
    alter(&mut c, b, &["DEDUP-SECONDS", "900"]);
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
    alter(&mut c, b, &["GAMMA", "0"]);
    assert_eq!(
        stats(&mut c, b, b"a", Some(T0 + 1000 * H)).unwrap().score,
        20.0
    );
    // alpha 0, beta 1: UV only; fractional gamma and base.
    alter(
        &mut c,
        b,
        &["ALPHA", "0", "BETA", "1", "BASE", "0.5", "GAMMA", "1.8"],
    );
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
    alter(&mut c, b, &["GAMMA", "0"]);
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
    alter(&mut c, b, &["GAMMA", "1.5"]);
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

/// `HOT.ALTER b pairs…`, which must succeed.
fn alter(c: &mut redis::Connection, b: &[u8], pairs: &[&str]) {
    let mut cmd = redis::cmd("HOT.ALTER");
    cmd.arg(b);
    for p in pairs {
        cmd.arg(*p);
    }
    let r: String = cmd.query(c).expect("HOT.ALTER");
    assert_eq!(r, "OK");
}
