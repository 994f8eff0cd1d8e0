//! Keys of HOT boards (split out of tests/hot.rs): the derived-key layout and
//! cluster slots, binary ids, the INFO counters, keyspace events and WATCH.
//! Times are milliseconds since the epoch inside the tests and unix seconds
//! (with up to 3 decimals) on the wire.

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
use redis::{Connection, Value};

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
// Keyspace events and WATCH: HOT.VIEW writes through the low-level key API,
// so it fires the events and WATCH signals itself.
// ---------------------------------------------------------------------------

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
