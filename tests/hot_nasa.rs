//! A replay of a real access log (split out of tests/hot.rs): the NASA log's
//! article views against the reference model, and its crawler isolated by the
//! visitor limit. Skipped, with a message, when the log
//! (`data/nasa_19950801.tsv.gz`) is absent.

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
#[path = "common/nasa.rs"]
mod nasa;

// ---------------------------------------------------------------------------
// 9. Real traffic
// ---------------------------------------------------------------------------

#[test]
fn nasa_log_replay_matches_the_model() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nasa_19950801.tsv.gz");
    if !path.exists() {
        println!("skipping: data/nasa_19950801.tsv.gz not found");
        return;
    }
    let (views, lines, last_time) = nasa::views(&path);
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
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/nasa_19950801.tsv.gz");
    if !path.exists() {
        println!("skipping: data/nasa_19950801.tsv.gz not found");
        return;
    }
    let (views, _, _) = nasa::views(&path);
    let s = Server::start();
    let mut c = s.conn();
    let b = "hot:{nasa}";
    let mut p = redis::pipe();
    let mut sent = Vec::new();
    for (url, host, t) in &views {
        p.cmd("HOT.VIEW")
            .arg(b)
            .arg(url)
            .arg(host)
            .arg("AT")
            .arg(ts(*t));
        sent.push(String::from_utf8_lossy(host).into_owned());
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
