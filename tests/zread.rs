//! The module's reads of its ZSETs go through the key API, not
//! `RedisModule_Call`: after HOT.TOP, HOT.STATS, a trimming HOT.VIEW and
//! every RANK read (RANK, RANK TIES, RANGE, AROUND, CARD, RANGEBYSCORE, with
//! and without PERIOD), `INFO commandstats` and SLOWLOG list no ZSET command
//! (zrank, zrange, zcount, zcard, zscore, zrangebyscore, …), and the replies
//! equal what the server's own ZRANK/ZRANGE/ZCARD say on the board ZSETs,
//! on a small (listpack) and a large (skiplist) board, desc and asc, with
//! many tied scores.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::*;
use redis::{Connection, Value};

/// Runs a command that must succeed.
fn ok(c: &mut Connection, args: &[&str]) -> Value {
    q(c, args).unwrap_or_else(|e| panic!("{args:?} failed: {e}"))
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Nil => None,
        other => panic!("not an integer: {other:?}"),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        other => panic!("not a string: {other:?}"),
    }
}

fn items(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a,
        other => panic!("not an array: {other:?}"),
    }
}

fn strings(v: Value) -> Vec<String> {
    items(v).iter().map(text).collect()
}

/// The command names `INFO commandstats` lists (lower case, subcommands
/// as `config|set`).
fn commandstats(c: &mut Connection) -> Vec<String> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(c)
        .expect("INFO");
    info.lines()
        .filter_map(|l| l.strip_prefix("cmdstat_"))
        .filter_map(|l| l.split(':').next())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The command names in SLOWLOG (every command is logged: slower than 0).
fn slowlog(c: &mut Connection) -> Vec<String> {
    let entries = items(ok(c, &["SLOWLOG", "GET", "-1"]));
    entries
        .into_iter()
        .map(|e| {
            let fields = items(e);
            let argv = items(fields[3].clone());
            text(&argv[0]).to_ascii_lowercase()
        })
        .collect()
}

/// Neither INFO commandstats nor SLOWLOG shows a ZSET command (a `z…`
/// name) since the last reset.
fn assert_no_zset_commands(c: &mut Connection, what: &str) {
    let stats = commandstats(c);
    let z: Vec<&String> = stats.iter().filter(|n| n.starts_with('z')).collect();
    assert!(
        z.is_empty(),
        "{what}: commandstats lists {z:?} (all: {stats:?})"
    );
    let log = slowlog(c);
    let z: Vec<&String> = log.iter().filter(|n| n.starts_with('z')).collect();
    assert!(z.is_empty(), "{what}: SLOWLOG lists {z:?}");
    assert!(
        stats
            .iter()
            .any(|n| n.starts_with("rank.") || n.starts_with("hot.")),
        "{what}: the module's commands are counted: {stats:?}"
    );
}

fn reset(c: &mut Connection) {
    ok(c, &["CONFIG", "RESETSTAT"]);
    ok(c, &["SLOWLOG", "RESET"]);
}

fn start() -> (Server, Connection) {
    let s = Server::start();
    let mut c = s.conn();
    config_set(&mut c, "slowlog-log-slower-than", "0");
    config_set(&mut c, "slowlog-max-len", "1000000");
    (s, c)
}

/// A board of `n` members with scores in 0..17 set at one time, so most
/// scores tie (ties rank by member bytes); member names of several lengths.
fn fill(c: &mut Connection, board: &str, n: usize, create: &[&str]) -> Vec<String> {
    let mut args = vec!["RANK.CREATE", board];
    args.extend_from_slice(create);
    ok(c, &args);
    let t = (now_s() - 3600).to_string();
    let mut members = Vec::new();
    let mut p = redis::pipe();
    for i in 0..n {
        let m = match i % 4 {
            0 => format!("m{i}"),
            1 => format!("m{}", i * 7919 % 1000),
            2 => format!("m{i}x"),
            _ => format!("{}", i * 31 % 97),
        };
        if members.contains(&m) {
            continue;
        }
        let score = ((i * 13) % 17) as i64 - 5;
        p.cmd("RANK.SET")
            .arg(board)
            .arg(&m)
            .arg(score)
            .arg("AT")
            .arg(&t);
        members.push(m);
    }
    let _: Vec<Value> = p.query(c).expect("fill");
    members
}

/// A RANGEBYSCORE query: min, max and LIMIT.
type ByScore<'a> = (&'a str, &'a str, Option<(i64, i64)>);

/// Every RANK read on `board`, checked against the server's own ZSET
/// commands on the board ZSET (run after the commandstats check).
fn check_rank_reads(c: &mut Connection, board: &str, members: &[String], desc: bool) {
    let samples: Vec<&String> = members
        .iter()
        .step_by(if members.len() > 50 { 7 } else { 1 })
        .collect();
    let ranges: [(i64, i64); 9] = [
        (0, -1),
        (0, 9),
        (-5, -1),
        (7, 12),
        (5, 2),
        (-1000, 3),
        (i64::MIN, i64::MAX),
        (members.len() as i64 - 3, members.len() as i64 + 10),
        (members.len() as i64, -1),
    ];
    let bounds: [ByScore; 6] = [
        ("-inf", "+inf", None),
        ("-2", "6", None),
        ("3", "3", None),
        ("-inf", "+inf", Some((2, 5))),
        ("0", "+inf", Some((0, -1))),
        ("-inf", "4", Some((1000, 1))),
    ];

    reset(c);
    let mut ranks = Vec::new();
    for m in &samples {
        let r = int(&ok(c, &["RANK.RANK", board, m]));
        let t = int(&ok(c, &["RANK.RANK", board, m, "TIES"]));
        let a3 = items(ok(c, &["RANK.AROUND", board, m, "3"]));
        let a0 = items(ok(c, &["RANK.AROUND", board, m, "0"]));
        ranks.push((m.to_string(), r, t, a3, a0));
    }
    assert_eq!(ok(c, &["RANK.RANK", board, "absent"]), Value::Nil);
    assert_eq!(
        ok(c, &["RANK.AROUND", board, "absent", "2"]),
        Value::Array(vec![])
    );
    let mut got_ranges = Vec::new();
    for (s, e) in ranges {
        let (s, e) = (s.to_string(), e.to_string());
        let plain = strings(ok(c, &["RANK.RANGE", board, &s, &e]));
        let with = strings(ok(c, &["RANK.RANGE", board, &s, &e, "WITHSCORES"]));
        got_ranges.push((s, e, plain, with));
    }
    let card = int(&ok(c, &["RANK.CARD", board])).unwrap();
    let mut got_bounds = Vec::new();
    for (lo, hi, limit) in bounds {
        let mut args = vec!["RANK.RANGEBYSCORE", board, lo, hi, "WITHSCORES"];
        let lim;
        if let Some((o, n)) = limit {
            lim = (o.to_string(), n.to_string());
            args.extend(["LIMIT", lim.0.as_str(), lim.1.as_str()]);
        }
        got_bounds.push(strings(ok(c, &args)));
    }
    assert_no_zset_commands(c, board);

    // The server's own answers on the board ZSET.
    assert_eq!(
        card,
        int(&ok(c, &["ZCARD", board])).unwrap(),
        "{board}: card"
    );
    let order = strings(ok(c, &["ZRANGE", board, "0", "-1"]));
    let score_of = |c: &mut Connection, m: &str| -> i64 {
        int(&ok(c, &["RANK.SCORE", board, m])).expect("a member's score")
    };
    let scores: Vec<i64> = order.iter().map(|m| score_of(c, m)).collect();
    for (m, r, t, a3, a0) in ranks {
        let want = int(&ok(c, &["ZRANK", board, &m])).expect("member");
        assert_eq!(r, Some(want), "{board}: RANK.RANK {m}");
        let s = score_of(c, &m);
        let better = scores
            .iter()
            .filter(|&&x| if desc { x > s } else { x < s })
            .count() as i64;
        assert_eq!(t, Some(better), "{board}: RANK.RANK {m} TIES");
        for (n, got) in [(3i64, a3), (0, a0)] {
            let first = (want - n).max(0);
            let last = (want + n).min(order.len() as i64 - 1);
            let expect: Vec<Value> = (first..=last)
                .map(|i| {
                    Value::Array(vec![
                        Value::Int(i),
                        Value::BulkString(order[i as usize].clone().into_bytes()),
                        Value::Int(scores[i as usize]),
                    ])
                })
                .collect();
            assert_eq!(got, expect, "{board}: RANK.AROUND {m} {n}");
        }
    }
    for (s, e, plain, with) in got_ranges {
        let want = strings(ok(c, &["ZRANGE", board, &s, &e]));
        assert_eq!(plain, want, "{board}: RANK.RANGE {s} {e}");
        let want_with: Vec<String> = want
            .iter()
            .flat_map(|m| {
                let i = order.iter().position(|x| x == m).unwrap();
                [m.clone(), scores[i].to_string()]
            })
            .collect();
        assert_eq!(with, want_with, "{board}: RANK.RANGE {s} {e} WITHSCORES");
    }
    for ((lo, hi, limit), got) in bounds.iter().zip(got_bounds) {
        let parse = |b: &str, inf: i64| match b {
            "-inf" => -inf,
            "+inf" => inf,
            x => x.parse().unwrap(),
        };
        let (lo, hi) = (parse(lo, i64::MAX), parse(hi, i64::MAX));
        let mut want: Vec<String> = Vec::new();
        let inside = order
            .iter()
            .zip(&scores)
            .filter(|(_, &s)| (lo..=hi).contains(&s));
        let picked: Vec<_> = match limit {
            None => inside.collect(),
            Some((o, n)) => {
                let n = if *n < 0 { usize::MAX } else { *n as usize };
                inside.skip(*o as usize).take(n).collect()
            }
        };
        for (m, s) in picked {
            want.push(m.clone());
            want.push(s.to_string());
        }
        assert_eq!(got, want, "{board}: RANK.RANGEBYSCORE {lo} {hi} {limit:?}");
    }
}

#[test]
fn rank_reads_use_no_zset_command_and_match_the_server() {
    let (_s, mut c) = start();
    let c = &mut c;
    // Small boards stay listpacks, large ones are skiplists.
    for (board, n, create, desc) in [
        ("lb:{small}", 40, &[][..], true),
        ("lb:{large}", 400, &[][..], true),
        ("lb:{asc}", 300, &["ORDER", "asc"][..], false),
        (
            "lb:{asc-small}",
            30,
            &["ORDER", "asc", "RESOLUTION", "ms"][..],
            false,
        ),
    ] {
        let members = fill(c, board, n, create);
        check_rank_reads(c, board, &members, desc);
    }
}

#[test]
fn period_reads_use_no_zset_command() {
    let (_s, mut c) = start();
    let c = &mut c;
    ok(c, &["RANK.CREATE", "lb:{p}", "PERIODS", "day", "week"]);
    for i in 0..200 {
        ok(
            c,
            &[
                "RANK.INCR",
                "lb:{p}",
                &format!("m{}", i % 150),
                &(i % 9).to_string(),
            ],
        );
    }
    reset(c);
    let day = strings(ok(c, &["RANK.RANGE", "lb:{p}", "0", "-1", "PERIOD", "day"]));
    let week = strings(ok(
        c,
        &["RANK.RANGE", "lb:{p}", "0", "-1", "PERIOD", "week"],
    ));
    let card = int(&ok(c, &["RANK.CARD", "lb:{p}", "PERIOD", "day"])).unwrap();
    let mut ranks = Vec::new();
    for m in day.iter().step_by(11) {
        ranks.push((
            m.clone(),
            int(&ok(c, &["RANK.RANK", "lb:{p}", m, "PERIOD", "day"])),
            items(ok(c, &["RANK.AROUND", "lb:{p}", m, "2", "PERIOD", "day"])),
        ));
    }
    let all = strings(ok(
        c,
        &[
            "RANK.RANGEBYSCORE",
            "lb:{p}",
            "-inf",
            "+inf",
            "PERIOD",
            "day",
        ],
    ));
    let ago = strings(ok(
        c,
        &[
            "RANK.RANGE",
            "lb:{p}",
            "0",
            "-1",
            "PERIOD",
            "day",
            "AGO",
            "1",
        ],
    ));
    assert_no_zset_commands(c, "PERIOD");
    // One day of writes: the day and week boards hold the same order as the
    // board itself; the day before is empty.
    let board = strings(ok(c, &["ZRANGE", "lb:{p}", "0", "-1"]));
    assert_eq!(day, board);
    assert_eq!(week, board);
    assert_eq!(all, board);
    assert_eq!(card, board.len() as i64);
    assert!(ago.is_empty());
    for (m, r, around) in ranks {
        let i = board.iter().position(|x| *x == m).unwrap() as i64;
        assert_eq!(r, Some(i), "{m}");
        let first = (i - 2).max(0);
        let last = (i + 2).min(board.len() as i64 - 1);
        let names: Vec<String> = around.into_iter().map(|e| text(&items(e)[1])).collect();
        assert_eq!(names, board[first as usize..=last as usize].to_vec(), "{m}");
    }
}

#[test]
fn hot_reads_and_trims_use_no_zset_command() {
    let (_s, mut c) = start();
    let c = &mut c;
    const T0: i64 = 1_700_000_000_000;
    let at = |ms: i64| format!("{}.{:03}", ms / 1000, ms % 1000);
    for i in 0..60i64 {
        let a = format!("a{i}");
        ok(c, &["HOT.PUBLISH", "hot:{b}", &a, &at(T0 + i * 60_000)]);
        for v in 0..(i % 7 + 1) {
            let t = at(T0 + i * 60_000 + v * 1000 + 500);
            ok(c, &["HOT.VIEW", "hot:{b}", &a, &format!("v{v}"), "AT", &t]);
        }
    }
    let q_at = at(T0 + 3_600_000 + 1);
    reset(c);
    let top = items(ok(c, &["HOT.TOP", "hot:{b}", "LIMIT", "10", "AT", &q_at]));
    assert_eq!(top.len(), 10);
    let win = items(ok(
        c,
        &[
            "HOT.TOP",
            "hot:{b}",
            "LIMIT",
            "5",
            "WINDOW",
            "1200",
            "WITHSCORES",
            "AT",
            &q_at,
        ],
    ));
    assert_eq!(win.len(), 10);
    let all = items(ok(c, &["HOT.TOP", "hot:{b}", "LIMIT", "1000", "AT", &q_at]));
    assert_eq!(all.len(), 60);
    let stats = items(ok(c, &["HOT.STATS", "hot:{b}", "a5", "AT", &q_at]));
    assert!(!stats.is_empty());
    assert_no_zset_commands(c, "HOT.TOP/HOT.STATS");

    // A trim: fewer articles allowed than the board holds.
    // Settings live with the board (HOT.ALTER), not in CONFIG.
    ok(c, &["HOT.ALTER", "hot:{b}", "MAX-ARTICLES", "10"]);
    reset(c);
    let t = at(T0 + 3_600_000 + 2);
    // Upkeep runs when an article new to the board is viewed.
    ok(c, &["HOT.VIEW", "hot:{b}", "new", "vx", "AT", &t]);
    assert_no_zset_commands(c, "HOT.VIEW trim");
    // 60 articles > 10 + the slack of 16: trimmed to the 10 best.
    let card = int(&ok(c, &["ZCARD", "hot:{b}"])).unwrap();
    assert_eq!(card, 10);
    let kept = items(ok(c, &["HOT.TOP", "hot:{b}", "LIMIT", "1000", "AT", &t]));
    assert_eq!(
        kept,
        items(ok(c, &["HOT.TOP", "hot:{b}", "LIMIT", "10", "AT", &t]))
    );
    assert_eq!(kept.len(), 10);
}

/// Past the walk budget (1,000 members) a count, rank or range by index is
/// answered by the server's own O(log n) ZCOUNT / ZRANGE: the replies stay
/// equal to ZRANK / ZRANGE on the board ZSET, and only those deep reads
/// show up in commandstats (as `zcount` / `zrange`, never `zrank`).
#[test]
fn deep_reads_match_the_server_and_only_they_call_it() {
    let (_s, mut c) = start();
    let c = &mut c;
    let board = "lb:{deep}";
    let members = fill(c, board, 6000, &[]);
    let n = members.len() as i64;
    assert!(n > 3000, "{n} members");
    // Near the top: walks only.
    let top = strings(ok(c, &["ZRANGE", board, "5", "5"])).remove(0);
    reset(c);
    let r = int(&ok(c, &["RANK.RANK", board, &top])).unwrap();
    assert_eq!(r, 5);
    let first: Vec<String> = strings(ok(c, &["RANK.RANGE", board, "0", "9"]));
    assert_eq!(first.len(), 10);
    let stats = commandstats(c);
    assert!(
        !stats.iter().any(|s| s == "zcount" || s == "zrange"),
        "shallow reads called the server: {stats:?} (rank {r})"
    );
    // Every 97th member: RANK.RANK equals the server's ZRANK on the packed
    // ZSET (the module packs best first, lowest score).
    for m in members.iter().step_by(97) {
        let got = int(&ok(c, &["RANK.RANK", board, m]));
        let want = int(&ok(c, &["ZRANK", board, m]));
        assert_eq!(got, want, "rank of {m}");
    }
    // Deep ranges by index equal ZRANGE, from the middle.
    for start in [1500, n / 2, n - 1500] {
        let (a, b) = (start.to_string(), (start + 20).to_string());
        let got = strings(ok(c, &["RANK.RANGE", board, &a, &b]));
        let want = strings(ok(c, &["ZRANGE", board, &a, &b]));
        assert_eq!(got, want, "range {a}..{b}");
    }
    // A deep member's neighbours.
    let mid = strings(ok(
        c,
        &["ZRANGE", board, &(n / 2).to_string(), &(n / 2).to_string()],
    ));
    let around = items(ok(c, &["RANK.AROUND", board, &mid[0], "2"]));
    assert_eq!(around.len(), 5);
}
