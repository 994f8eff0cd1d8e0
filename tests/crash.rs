//! Persistence and crash safety.
//!
//! - `acknowledged_writes_survive_kill_9_with_appendfsync_always`: a server
//!   with `--appendonly yes --appendfsync always`; a client thread runs a
//!   mixed write load (HOT.VIEW with and without AT, HOT.PUBLISH, RANK.INCR,
//!   RANK.MINCR, RANK.SET) and records every acknowledged reply; the server is
//!   killed with SIGKILL at a random moment (200–2000 ms), restarted on the
//!   same dir and port, and every acknowledged write must be there. The client
//!   sends one command at a time, so at most one write (the one in flight) is
//!   unacknowledged: a value may differ from the last acknowledged one only
//!   by that write. Three rounds on the same data.
//! - `rdb_save_and_aof_rewrite_reload_every_key_identically`: after
//!   `BGREWRITEAOF` + SIGKILL + restart, and after `SAVE` + SIGKILL + restart
//!   from the RDB file, every key has the same DUMP payload and the same
//!   absolute expiry.
//!
//! The restart needs the same dir and port, so these tests run the server
//! process themselves (`common::node::Node`) instead of `common::Server`.
//! `HOTRANK_CRASH_SEED` reruns a seed.

mod common;
use common::node::Node;
use common::rng::Rng;
use common::*;
use hotrank::keys::{derived, Kind};
use redis::{Connection, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const AOF_ALWAYS: &[&str] = &["--appendonly", "yes", "--appendfsync", "always"];

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn seed() -> u64 {
    std::env::var("HOTRANK_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64;
            t | 1
        })
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("expected an integer, got {other:?}"),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        other => panic!("expected a string, got {other:?}"),
    }
}

fn items(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        other => panic!("expected an array, got {other:?}"),
    }
}

fn assert_same(before: &Keyspace, after: &Keyspace, what: &str) {
    let mut diffs = Vec::new();
    for (k, v) in before {
        match after.get(k) {
            None => diffs.push(format!("lost {}", k.escape_ascii())),
            Some(a) if a.0 != v.0 => diffs.push(format!("DUMP differs: {}", k.escape_ascii())),
            Some(a) if a.1 != v.1 => diffs.push(format!(
                "expiry differs: {} {} -> {}",
                k.escape_ascii(),
                v.1,
                a.1
            )),
            _ => {}
        }
    }
    for k in after.keys().filter(|k| !before.contains_key(*k)) {
        diffs.push(format!("new key {}", k.escape_ascii()));
    }
    assert!(
        diffs.is_empty(),
        "{what}: {} of {} keys differ:\n  {}",
        diffs.len(),
        before.len(),
        diffs
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}

fn info_field(c: &mut Connection, section: &str, field: &str) -> String {
    let s: String = redis::cmd("INFO").arg(section).query(c).expect("INFO");
    s.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("INFO {section} has no {field}"))
        .trim()
        .to_string()
}

// ---------------------------------------------------------------------------
// The write load and what it expects
// ---------------------------------------------------------------------------

const HOT: &str = "hot:{crash}";
const LB: &str = "lb:{crash}";
const LB_SET: &str = "lb:{crashset}";
const ARTICLES: u64 = 20;
const MEMBERS: u64 = 30;
const SET_MEMBERS: u64 = 10;

/// One write of the load.
#[derive(Clone, Debug)]
enum Op {
    /// article, visitor, AT
    View(String, String, Option<i64>),
    /// article, published_at (s)
    Publish(String, i64),
    /// member (+1), AT
    Incr(String, Option<i64>),
    /// +1 to each member (server clock)
    Mincr(Vec<String>),
    /// member, score, AT
    Set(String, i64, Option<i64>),
}

impl Op {
    fn args(&self) -> Vec<String> {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let with_at = |mut v: Vec<String>, at: &Option<i64>| {
            if let Some(t) = at {
                v.push("AT".into());
                v.push(t.to_string());
            }
            v
        };
        match self {
            Op::View(a, v, at) => with_at(s(&["HOT.VIEW", HOT, a, v]), at),
            Op::Publish(a, t) => s(&["HOT.PUBLISH", HOT, a, &t.to_string()]),
            Op::Incr(m, at) => with_at(s(&["RANK.INCR", LB, m, "1"]), at),
            Op::Mincr(ms) => {
                let mut v = s(&["RANK.MINCR", LB, "1"]);
                v.extend(ms.iter().cloned());
                v
            }
            Op::Set(m, score, at) => with_at(s(&["RANK.SET", LB_SET, m, &score.to_string()]), at),
        }
    }
}

/// What the acknowledged replies say the data must be.
#[derive(Default, Clone, Debug)]
struct Expect {
    /// article → (pv, uv) of the last acknowledged HOT.VIEW reply.
    pv_uv: BTreeMap<String, (i64, i64)>,
    /// article → number of acknowledged counted views (over all rounds).
    counted: BTreeMap<String, i64>,
    /// article → last acknowledged HOT.PUBLISH time.
    published: BTreeMap<String, i64>,
    /// member → last acknowledged score (RANK.INCR / RANK.MINCR).
    incr: BTreeMap<String, i64>,
    /// member → last acknowledged RANK.SET score.
    set: BTreeMap<String, i64>,
    /// visitors used per article (to repeat some: duplicates).
    visitors: BTreeMap<String, Vec<String>>,
    acked: u64,
}

fn next_op(rng: &mut Rng, e: &Expect, round: usize, n: u64) -> Op {
    let now = now_s();
    let at = |rng: &mut Rng| (rng.below(2) == 0).then(|| now - 1 - rng.below(600) as i64);
    match rng.below(20) {
        0..=7 => {
            let a = format!("a{}", rng.below(ARTICLES));
            let v = match e.visitors.get(&a) {
                Some(vs) if rng.below(5) == 0 => vs[rng.below(vs.len() as u64) as usize].clone(),
                _ => format!("u{round}-{n}"),
            };
            Op::View(a, v, at(rng))
        }
        8..=9 => Op::Publish(
            format!("a{}", rng.below(ARTICLES)),
            now - 3600 - rng.below(86_400) as i64,
        ),
        10..=14 => Op::Incr(format!("m{}", rng.below(MEMBERS)), at(rng)),
        15..=16 => Op::Mincr(
            (0..1 + rng.below(3))
                .map(|_| format!("m{}", rng.below(MEMBERS)))
                .collect(),
        ),
        _ => Op::Set(
            format!("p{}", rng.below(SET_MEMBERS)),
            rng.below(2_000_001) as i64 - 1_000_000,
            at(rng),
        ),
    }
}

/// Records an acknowledged reply.
fn record(e: &mut Expect, op: &Op, reply: &Value) {
    e.acked += 1;
    match op {
        Op::View(a, v, _) => {
            let r = items(reply);
            let (pv, uv, status) = (int(&r[0]), int(&r[1]), text(&r[3]));
            e.pv_uv.insert(a.clone(), (pv, uv));
            if status == "counted" {
                *e.counted.entry(a.clone()).or_default() += 1;
            }
            let vs = e.visitors.entry(a.clone()).or_default();
            if !vs.contains(v) {
                vs.push(v.clone());
            }
        }
        Op::Publish(a, t) => {
            e.published.insert(a.clone(), *t);
        }
        Op::Incr(m, _) => {
            e.incr.insert(m.clone(), int(reply));
        }
        Op::Mincr(ms) => {
            for (m, v) in ms.iter().zip(items(reply)) {
                e.incr.insert(m.clone(), int(&v));
            }
        }
        Op::Set(m, _, _) => {
            e.set.insert(m.clone(), int(reply));
        }
    }
}

/// Runs the load until the connection fails; returns the expectations and
/// the write that was in flight (sent, not acknowledged).
fn load(url: String, mut e: Expect, seed: u64, round: usize) -> (Expect, Option<Op>) {
    let mut c = redis::Client::open(url)
        .expect("client")
        .get_connection()
        .expect("connect");
    let mut rng = Rng(seed);
    for n in 0.. {
        let op = next_op(&mut rng, &e, round, n);
        let args = op.args();
        let mut cmd = redis::cmd(&args[0]);
        for a in &args[1..] {
            cmd.arg(a);
        }
        match cmd.query::<Value>(&mut c) {
            Ok(reply) => record(&mut e, &op, &reply),
            Err(err)
                if err.is_io_error()
                    || err.is_connection_dropped()
                    || err.is_unrecoverable_error() =>
            {
                return (e, Some(op));
            }
            Err(err) => panic!("{args:?} failed: {err}"),
        }
    }
    unreachable!()
}

/// Checks the restarted server against the acknowledged writes, allowing
/// only the in-flight write to have applied too; returns the expectations
/// updated to what the server holds.
fn verify(c: &mut Connection, mut e: Expect, in_flight: &Option<Op>) -> Expect {
    let mut problems = Vec::new();
    // HOT: pv and uv are those of the last acknowledged view, or of one more
    // view if the write in flight was a view of this article.
    for a in (0..ARTICLES).map(|i| format!("a{i}")) {
        let stats = redis::cmd("HOT.STATS")
            .arg(HOT)
            .arg(&a)
            .query::<Value>(c)
            .expect("HOT.STATS");
        let fields: BTreeMap<String, Value> = match &stats {
            Value::Nil => BTreeMap::new(),
            Value::Array(kv) => kv.chunks(2).map(|p| (text(&p[0]), p[1].clone())).collect(),
            other => panic!("HOT.STATS reply {other:?}"),
        };
        let pv = fields.get("pv").map(int).unwrap_or(0);
        let uv = fields.get("uv").map(int).unwrap_or(0);
        let in_flight_view = matches!(in_flight, Some(Op::View(x, _, _)) if *x == a);
        let (epv, euv) = e.pv_uv.get(&a).copied().unwrap_or((0, 0));
        let pv_ok = pv == epv || (in_flight_view && pv == epv + 1);
        let uv_ok = uv == euv || (in_flight_view && uv >= euv);
        if !pv_ok || !uv_ok {
            problems.push(format!(
                "{a}: pv {pv} uv {uv}, last acknowledged reply pv {epv} uv {euv} (in flight: {in_flight:?})"
            ));
        }
        let counted = e.counted.get(&a).copied().unwrap_or(0);
        if pv < counted {
            problems.push(format!(
                "{a}: pv {pv} < {counted} acknowledged counted views"
            ));
        }
        // The view's effects are atomic: the counter agrees with HOT.STATS.
        let pv_key = derived(HOT.as_bytes(), Kind::Pv, &[a.as_bytes()]);
        let counter: Option<i64> = redis::cmd("GET").arg(pv_key).query(c).expect("GET");
        if counter.unwrap_or(0) != pv {
            problems.push(format!("{a}: pv counter {counter:?} vs HOT.STATS {pv}"));
        }
        if let Some(p) = e.published.get(&a) {
            let got = fields.get("published_at").map(text);
            let in_flight_publish = match in_flight {
                Some(Op::Publish(x, t)) if *x == a => Some(t.to_string()),
                _ => None,
            };
            if got != Some(p.to_string()) && got != in_flight_publish {
                problems.push(format!(
                    "{a}: published_at {got:?}, last acknowledged {p} (in flight: {in_flight:?})"
                ));
            }
        }
        e.pv_uv.insert(a.clone(), (pv, uv));
        if let Some(Value::BulkString(p)) = fields.get("published_at") {
            if let Ok(p) = String::from_utf8_lossy(p).parse::<i64>() {
                if e.published.contains_key(&a) {
                    e.published.insert(a.clone(), p);
                }
            }
        }
    }
    // RANK.INCR / RANK.MINCR: +1 only, so one more if the write in flight touched the member.
    for m in (0..MEMBERS).map(|i| format!("m{i}")) {
        let got: Option<i64> = redis::cmd("RANK.SCORE")
            .arg(LB)
            .arg(&m)
            .query(c)
            .expect("RANK.SCORE");
        let want = e.incr.get(&m).copied();
        let bumps = match in_flight {
            Some(Op::Incr(x, _)) if *x == m => 1,
            Some(Op::Mincr(ms)) => ms.iter().filter(|x| **x == m).count() as i64,
            _ => 0,
        };
        let ok = match (got, want) {
            (g, w) if g == w => true,
            (Some(g), Some(w)) => bumps > 0 && g == w + bumps,
            (Some(g), None) => bumps > 0 && g == bumps,
            _ => false,
        };
        if !ok {
            problems.push(format!(
                "{m}: RANK.SCORE {got:?}, last acknowledged {want:?} (in flight: {in_flight:?})"
            ));
        }
        if let Some(g) = got {
            e.incr.insert(m.clone(), g);
        }
    }
    // RANK.SET: the last acknowledged score, or the one in flight.
    for m in (0..SET_MEMBERS).map(|i| format!("p{i}")) {
        let got: Option<i64> = redis::cmd("RANK.SCORE")
            .arg(LB_SET)
            .arg(&m)
            .query(c)
            .expect("RANK.SCORE");
        let want = e.set.get(&m).copied();
        let pending = match in_flight {
            Some(Op::Set(x, s, _)) if *x == m => Some(*s),
            _ => None,
        };
        if got != want && (pending.is_none() || got != pending) {
            problems.push(format!(
                "{m}: RANK.SCORE {got:?}, last acknowledged RANK.SET {want:?} (in flight: {in_flight:?})"
            ));
        }
        if let Some(g) = got {
            e.set.insert(m.clone(), g);
        }
    }
    assert!(
        problems.is_empty(),
        "after kill -9 and restart:\n  {}",
        problems.join("\n  ")
    );
    e
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn acknowledged_writes_survive_kill_9_with_appendfsync_always() {
    let seed = seed();
    println!("crash seed {seed} (HOTRANK_CRASH_SEED={seed} reruns it)");
    let mut rng = Rng(seed);
    let mut node = Node::new("aof");
    node.start(AOF_ALWAYS);
    let mut e = Expect::default();
    for round in 0..3 {
        let url = node.url();
        let (e_in, s) = (e.clone(), rng.next());
        let worker = std::thread::spawn(move || load(url, e_in, s, round));
        let delay = 200 + rng.below(1800);
        // Kill once the load is running for `delay` ms.
        std::thread::sleep(Duration::from_millis(delay));
        node.kill9();
        let (e_out, in_flight) = worker.join().expect("load thread");
        let acked_this_round = e_out.acked - e.acked;
        println!(
            "round {round}: killed after {delay} ms, {acked_this_round} writes acknowledged, in flight: {in_flight:?}"
        );
        assert!(
            acked_this_round > 0,
            "round {round}: no write was acknowledged"
        );
        node.start(AOF_ALWAYS);
        let mut c = node.conn();
        e = verify(&mut c, e_out, &in_flight);
        // The restarted server takes writes again.
        let v: i64 = redis::cmd("RANK.INCR")
            .arg(LB)
            .arg("m0")
            .arg(1)
            .query(&mut c)
            .expect("RANK.INCR");
        *e.incr.entry("m0".into()).or_default() += 1;
        assert_eq!(Some(&v), e.incr.get("m0"));
        let top: Vec<Vec<u8>> = redis::cmd("HOT.TOP")
            .arg(HOT)
            .query(&mut c)
            .expect("HOT.TOP");
        assert!(!top.is_empty());
    }
    println!("{} writes acknowledged in total", e.acked);
}

#[test]
fn rdb_save_and_aof_rewrite_reload_every_key_identically() {
    let seed = seed() ^ 0xdead;
    let mut node = Node::new("dump");
    node.start(AOF_ALWAYS);
    let mut c = node.conn();
    // A mixed data set: every key kind the module writes, with expiries.
    let mut e = Expect::default();
    let mut rng = Rng(seed);
    for n in 0..3000 {
        let op = next_op(&mut rng, &e, 0, n);
        let args = op.args();
        let mut cmd = redis::cmd(&args[0]);
        for a in &args[1..] {
            cmd.arg(a);
        }
        let reply: Value = cmd
            .query(&mut c)
            .unwrap_or_else(|err| panic!("{args:?}: {err}"));
        record(&mut e, &op, &reply);
    }
    // Other layouts and a suspicious visitor too.
    let _: () = redis::cmd("RANK.CREATE")
        .arg("lb:{ms}")
        .arg("RESOLUTION")
        .arg("ms")
        .query(&mut c)
        .unwrap();
    let _: i64 = redis::cmd("RANK.INCR")
        .arg("lb:{ms}")
        .arg("x")
        .arg(5)
        .query(&mut c)
        .unwrap();
    // The board's own limit (a config gives only new boards their settings).
    let _: () = redis::cmd("HOT.ALTER")
        .arg(HOT)
        .arg("VISITOR-MAX-VIEWS")
        .arg(2)
        .query(&mut c)
        .unwrap();
    for i in 0..4 {
        let _: Value = redis::cmd("HOT.VIEW")
            .arg(HOT)
            .arg(format!("s{i}"))
            .arg("bot")
            .query(&mut c)
            .unwrap();
    }
    let before = keyspace(&mut c);
    let kinds: std::collections::BTreeSet<String> = before
        .keys()
        .filter_map(|k| k.split(|&b| b == 0).nth(1))
        .map(|rest| {
            String::from_utf8_lossy(rest)
                .split(':')
                .next()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    for k in [
        "pv", "uv", "meta", "board", "pub", "dd", "vv", "sus", "layout",
    ] {
        assert!(kinds.contains(k), "no {k} key in the data set: {kinds:?}");
    }
    assert!(before.values().any(|v| v.1 > 0), "no key with an expiry");

    // BGREWRITEAOF, then SIGKILL and restart from the rewritten AOF.
    let r: String = redis::cmd("BGREWRITEAOF")
        .query(&mut c)
        .expect("BGREWRITEAOF");
    assert!(r.to_lowercase().contains("rewriting"), "{r}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let busy = info_field(&mut c, "persistence", "aof_rewrite_in_progress") != "0"
            || info_field(&mut c, "persistence", "aof_rewrite_scheduled") != "0";
        if !busy {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "BGREWRITEAOF did not finish in 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        info_field(&mut c, "persistence", "aof_last_bgrewrite_status"),
        "ok"
    );
    drop(c);
    node.kill9();
    node.start(AOF_ALWAYS);
    let mut c = node.conn();
    assert_same(&before, &keyspace(&mut c), "after BGREWRITEAOF and restart");

    // SAVE, then SIGKILL and restart from the RDB file alone.
    let () = redis::cmd("SAVE").query(&mut c).expect("SAVE");
    drop(c);
    node.kill9();
    node.start(&["--appendonly", "no"]);
    let mut c = node.conn();
    assert_eq!(info_field(&mut c, "persistence", "aof_enabled"), "0");
    assert_same(
        &before,
        &keyspace(&mut c),
        "after SAVE and restart from the RDB",
    );

    // The module reads the reloaded data as before.
    let score: i64 = redis::cmd("RANK.SCORE")
        .arg("lb:{ms}")
        .arg("x")
        .query(&mut c)
        .unwrap();
    assert_eq!(score, 5);
    let top: Vec<Vec<u8>> = redis::cmd("HOT.TOP").arg(HOT).query(&mut c).unwrap();
    assert!(!top.is_empty());
}
