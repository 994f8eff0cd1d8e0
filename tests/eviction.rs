//! Boards under memory pressure (issue 36, docs/eviction.md), against a real
//! server with a small `maxmemory` and competing plain keys, under each
//! `maxmemory-policy` of the issue:
//!
//! - a HOT board (GAMMA 1.1) and an `asc ms` leaderboard are written all
//!   along;
//! - no reply says a board hotrank made was "not made by" HOT or RANK;
//! - every board keeps its own settings (HOT.INFO, RANK.INFO), or refuses
//!   with the one documented error (`ERR board identity missing: …`), and
//!   then REPAIR (or CREATE, for a board evicted whole) with its settings
//!   brings it back;
//! - HOT.TOP equals a brute force over the articles whose keys remain;
//! - INFO, HOT.INFO and RANK.INFO show the warning exactly under the
//!   `allkeys-*` policies, from load time and after CONFIG SET.

mod common;
use common::*;
use redis::{Connection, Value};

const IDENTITY_MISSING: &str = "ERR board identity missing:";
const HOT_KEY: &str = "hot:{ev}";
const LAP_KEY: &str = "lap:{ev}";
/// The HOT board's own settings (GAMMA differs from the config default).
const HOT_SETTINGS: [&str; 4] = ["GAMMA", "1.1", "MAX-ARTICLES", "1000"];
/// The leaderboard's layout (ORDER and RESOLUTION differ from the default).
const LAP_LAYOUT: [&str; 8] = [
    "ORDER",
    "asc",
    "RESOLUTION",
    "ms",
    "MIN",
    "0",
    "MAX",
    "3600000",
];

/// A tiny deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        Value::Nil => String::new(),
        Value::Okay => "OK".into(),
        other => format!("{other:?}"),
    }
}

/// A field/value reply (RESP2 flat array) as pairs.
fn fields(v: &Value) -> Vec<(String, String)> {
    match v {
        Value::Array(a) => a.chunks(2).map(|p| (text(&p[0]), text(&p[1]))).collect(),
        Value::Map(m) => m.iter().map(|(k, v)| (text(k), text(v))).collect(),
        other => panic!("expected a map: {other:?}"),
    }
}

fn field(f: &[(String, String)], name: &str) -> String {
    f.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("no field {name}: {f:?}"))
}

/// The error text of a reply, or `None` for a success.
fn error_of(r: &redis::RedisResult<Value>) -> Option<String> {
    r.as_ref().err().map(|e| {
        format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""))
            .trim()
            .to_string()
    })
}

/// What the run saw, for the final assertions.
#[derive(Default, Debug)]
struct Seen {
    refusals: usize,
    repairs: usize,
    recreated: usize,
    top_checks: usize,
    oom: usize,
}

/// Checks an error reply of a hotrank command on a board it made: the one
/// documented error (then the board is brought back with its own settings:
/// REPAIR when its ZSET remains, CREATE when it is gone), or OOM under
/// `noeviction`. Anything else, "not made by" above all, fails the test.
fn on_error(c: &mut Connection, e: &str, hot: bool, seen: &mut Seen) {
    assert!(!e.contains("not made by"), "a board hotrank made: {e}");
    if e.starts_with("OOM") {
        seen.oom += 1;
        return;
    }
    assert!(e.starts_with(IDENTITY_MISSING), "unexpected error: {e}");
    seen.refusals += 1;
    let (key, settings): (&str, &[&str]) = if hot {
        (HOT_KEY, &HOT_SETTINGS)
    } else {
        (LAP_KEY, &LAP_LAYOUT)
    };
    let fam = if hot { "HOT" } else { "RANK" };
    let verb = if e.contains("holds a ZSET") {
        seen.repairs += 1;
        "REPAIR"
    } else {
        seen.recreated += 1;
        "CREATE"
    };
    let cmd = format!("{fam}.{verb}");
    let mut args = vec![cmd.as_str(), key];
    args.extend_from_slice(settings);
    // A repair may itself meet OOM under memory pressure: then it is retried
    // by the next refusal.
    match q(c, &args) {
        Ok(_) => {}
        Err(err) => {
            let t = format!("{err}");
            assert!(t.contains("OOM"), "{args:?}: {t}");
        }
    }
}

/// The keyspace's article facts → the exact top by brute force: every
/// article on the board whose PV counter, HyperLogLog and publish time all
/// remain, scored at `q` (unix ms) with the board's formula.
fn brute_top(c: &mut Connection, q_ms: i64) -> Option<(Vec<(String, f64)>, Value)> {
    let members: Vec<String> = redis::cmd("ZRANGE")
        .arg(HOT_KEY)
        .arg(0)
        .arg(-1)
        .query(c)
        .expect("ZRANGE");
    // One transaction: no eviction between the top and the facts read.
    let mut p = redis::pipe();
    p.atomic();
    p.cmd("HOT.TOP")
        .arg(HOT_KEY)
        .arg("LIMIT")
        .arg(10000)
        .arg("WITHSCORES")
        .arg("AT")
        .arg(format!("{}.{:03}", q_ms / 1000, q_ms % 1000));
    p.cmd("ZRANGE").arg(HOT_KEY).arg(0).arg(-1);
    for m in &members {
        let k = |kind: &str| format!("{HOT_KEY}\0{kind}:{m}");
        p.cmd("GET").arg(k("pv"));
        p.cmd("EXISTS").arg(k("uv"));
        p.cmd("PFCOUNT").arg(k("uv"));
        p.cmd("HGET").arg(k("meta")).arg("publishedAt");
    }
    let out: Vec<Value> = match p.query(c) {
        Ok(v) => v,
        Err(e) => {
            let t = format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""));
            assert!(!t.contains("not made by"), "{t}");
            return None;
        }
    };
    if let Value::ServerError(_) = &out[0] {
        return None;
    }
    let again: Vec<String> = match &out[1] {
        Value::Array(a) => a.iter().map(text).collect(),
        other => panic!("{other:?}"),
    };
    if again != members {
        return None; // the board changed in between: try again later
    }
    let f = hotrank::hot::Formula {
        alpha: 1.0,
        beta: 1.2,
        base: 2.0,
        gamma: 1.1,
    };
    let mut best = Vec::new();
    for (i, m) in members.iter().enumerate() {
        let r = &out[2 + 4 * i..2 + 4 * i + 4];
        let (pv, uv_exists, uv, published) = (&r[0], &r[1], &r[2], &r[3]);
        if matches!(pv, Value::Nil) || text(uv_exists) == "0" || matches!(published, Value::Nil) {
            continue;
        }
        let pv: i64 = text(pv).parse().expect("pv");
        let uv: i64 = text(uv).parse().expect("uv");
        let p: i64 = text(published).parse().expect("publishedAt");
        if pv > 0 {
            best.push((m.clone(), f.score(pv, uv, p, q_ms)));
        }
    }
    Some((best, out[0].clone()))
}

/// Sorts a top by score (highest first), then by name.
fn canonical(mut v: Vec<(String, f64)>) -> Vec<(String, f64)> {
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

fn check_top(c: &mut Connection, seen: &mut Seen) {
    let q_ms = hotrank_now_ms(c);
    let Some((want, got)) = brute_top(c, q_ms) else {
        return;
    };
    let got: Vec<(String, f64)> = match got {
        Value::Array(a) => a
            .chunks(2)
            .map(|p| (text(&p[0]), text(&p[1]).parse().expect("score")))
            .collect(),
        other => panic!("HOT.TOP: {other:?}"),
    };
    let (want, got) = (canonical(want), canonical(got));
    assert_eq!(
        want.len(),
        got.len(),
        "HOT.TOP vs brute force: {got:?} / {want:?}"
    );
    for (w, g) in want.iter().zip(&got) {
        assert_eq!(w.0, g.0, "HOT.TOP vs brute force: {got:?} / {want:?}");
        assert!(
            (w.1 - g.1).abs() <= 1e-12 * w.1.abs().max(1e-300),
            "{}: {} vs {}",
            w.0,
            g.1,
            w.1
        );
    }
    seen.top_checks += 1;
}

/// The server's clock (`TIME`), unix ms.
fn hotrank_now_ms(c: &mut Connection) -> i64 {
    let t: Vec<String> = redis::cmd("TIME").query(c).expect("TIME");
    t[0].parse::<i64>().expect("s") * 1000 + t[1].parse::<i64>().expect("us") / 1000
}

/// INFO hotrank's `hotrank_eviction_unsafe` and `hotrank_maxmemory_policy`.
fn info_eviction(c: &mut Connection) -> (String, String) {
    let info: String = redis::cmd("INFO").arg("hotrank").query(c).expect("INFO");
    let get = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("hotrank_{name}:")))
            .unwrap_or_else(|| panic!("no {name} in {info}"))
            .trim()
            .to_string()
    };
    (get("eviction_unsafe"), get("maxmemory_policy"))
}

/// The boards keep their own settings, or refuse with the documented error.
fn check_settings(c: &mut Connection, unsafe_policy: bool, seen: &mut Seen) {
    let want_flag = if unsafe_policy { "1" } else { "0" };
    match q(c, &["HOT.INFO", HOT_KEY]) {
        Ok(v) => {
            let f = fields(&v);
            assert_eq!(field(&f, "gamma"), "1.1", "{f:?}");
            assert_eq!(field(&f, "eviction_unsafe"), want_flag);
        }
        Err(e) => {
            let t = error_of(&Err(e)).unwrap_or_default();
            on_error(c, &t, true, seen);
        }
    }
    match q(c, &["RANK.INFO", LAP_KEY]) {
        Ok(v) => {
            let f = fields(&v);
            assert_eq!(
                (
                    field(&f, "order"),
                    field(&f, "resolution"),
                    field(&f, "min"),
                    field(&f, "max")
                ),
                ("asc".into(), "ms".into(), "0".into(), "3600000".into()),
                "{f:?}"
            );
            assert_eq!(field(&f, "eviction_unsafe"), want_flag);
        }
        Err(e) => {
            let t = error_of(&Err(e)).unwrap_or_default();
            on_error(c, &t, false, seen);
        }
    }
}

/// One policy: boards made, maxmemory lowered under competing plain keys,
/// boards written and checked all along.
fn run_policy(policy: &str) -> Seen {
    let unsafe_policy = policy.starts_with("allkeys-");
    // The policy from load time (maxmemory roomy for now).
    let s = Server::start_with(
        &["--maxmemory-policy", policy, "--maxmemory", "256mb"],
        true,
    );
    let mut c = s.conn();
    let flag = if unsafe_policy { "1" } else { "0" };
    assert_eq!(
        info_eviction(&mut c),
        (flag.to_string(), policy.to_string())
    );
    let mut create = vec!["HOT.CREATE", HOT_KEY];
    create.extend_from_slice(&HOT_SETTINGS);
    q(&mut c, &create).expect("HOT.CREATE");
    let mut create = vec!["RANK.CREATE", LAP_KEY];
    create.extend_from_slice(&LAP_LAYOUT);
    q(&mut c, &create).expect("RANK.CREATE");
    // Lower maxmemory to just above what the server uses now (the change
    // reaches the module through the config-change event).
    let mem: String = redis::cmd("INFO")
        .arg("memory")
        .query(&mut c)
        .expect("INFO");
    let used: u64 = mem
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .expect("used_memory")
        .trim()
        .parse()
        .expect("bytes");
    config_set(&mut c, "maxmemory", &(used + 1_500_000).to_string());
    assert_eq!(info_eviction(&mut c).0, flag);

    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ policy.len() as u64);
    let mut seen = Seen::default();
    let filler = "x".repeat(1000);
    for round in 0..300 {
        for i in 0..12 {
            let key = format!("fill:{round}:{i}");
            let mut args = vec!["SET", key.as_str(), filler.as_str()];
            if i % 2 == 0 {
                args.extend(["EX", "3600"]);
            }
            let _ = q(&mut c, &args); // OOM under noeviction: expected
        }
        for _ in 0..4 {
            let (a, v) = (
                format!("a{}", rng.below(60)),
                format!("v{}", rng.below(500)),
            );
            let r = q(&mut c, &["HOT.VIEW", HOT_KEY, &a, &v]);
            if let Some(e) = error_of(&r) {
                on_error(&mut c, &e, true, &mut seen);
            }
        }
        for _ in 0..3 {
            let (p, t) = (
                format!("p{}", rng.below(40)),
                (60_000 + rng.below(3_000_000)).to_string(),
            );
            let r = q(&mut c, &["RANK.SET", LAP_KEY, &p, &t, "BEST"]);
            if let Some(e) = error_of(&r) {
                on_error(&mut c, &e, false, &mut seen);
            }
        }
        if round % 15 == 14 {
            check_settings(&mut c, unsafe_policy, &mut seen);
            check_top(&mut c, &mut seen);
            assert_eq!(info_eviction(&mut c).0, flag);
        }
    }
    check_settings(&mut c, unsafe_policy, &mut seen);
    check_top(&mut c, &mut seen);
    let stats: String = redis::cmd("INFO").arg("stats").query(&mut c).expect("INFO");
    let evicted: u64 = stats
        .lines()
        .find_map(|l| l.strip_prefix("evicted_keys:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    eprintln!("{policy}: evicted {evicted} keys, {seen:?}");
    if policy == "noeviction" {
        assert_eq!(evicted, 0);
        assert!(
            seen.oom > 0,
            "noeviction: the memory limit was never reached"
        );
        assert_eq!(seen.refusals, 0);
    } else {
        assert!(evicted > 0, "{policy}: nothing was evicted");
    }
    if !unsafe_policy {
        // Identity keys have no TTL: never evicted under volatile-*.
        assert_eq!(seen.refusals, 0, "{policy}: {seen:?}");
    }
    assert!(seen.top_checks > 0, "{policy}: HOT.TOP never compared");
    seen
}

#[test]
fn boards_keep_their_settings_or_refuse_under_every_policy() {
    let mut refusals = 0;
    for policy in [
        "noeviction",
        "volatile-lru",
        "allkeys-lru",
        "allkeys-lfu",
        "allkeys-random",
    ] {
        refusals += run_policy(policy).refusals;
    }
    // allkeys-random evicts identity keys sooner or later: the refusal and
    // its way out were exercised.
    assert!(refusals > 0, "no board identity was ever evicted");
}

#[test]
fn info_follows_config_set_of_the_policy_and_maxmemory() {
    let s = Server::start();
    let mut c = s.conn();
    let (flag, policy) = info_eviction(&mut c);
    assert_eq!((flag.as_str(), policy.as_str()), ("0", "noeviction"));
    config_set(&mut c, "maxmemory-policy", "allkeys-lfu");
    // No maxmemory: nothing is evicted, whatever the policy.
    assert_eq!(info_eviction(&mut c).0, "0");
    config_set(&mut c, "maxmemory", "100mb");
    assert_eq!(
        info_eviction(&mut c),
        ("1".to_string(), "allkeys-lfu".to_string())
    );
    config_set(&mut c, "maxmemory-policy", "volatile-ttl");
    assert_eq!(
        info_eviction(&mut c),
        ("0".to_string(), "volatile-ttl".to_string())
    );
    config_set(&mut c, "maxmemory-policy", "allkeys-random");
    assert_eq!(info_eviction(&mut c).0, "1");
    config_set(&mut c, "maxmemory", "0");
    assert_eq!(info_eviction(&mut c).0, "0");
}

#[test]
fn the_warning_is_logged_once_per_change() {
    let log = std::env::temp_dir().join(format!(
        "hotrank-eviction-{}-{}.log",
        std::process::id(),
        free_port()
    ));
    let path = log.to_string_lossy().into_owned();
    let s = Server::start_with(
        &[
            "--logfile",
            &path,
            "--maxmemory-policy",
            "allkeys-lru",
            "--maxmemory",
            "100mb",
        ],
        true,
    );
    let mut c = s.conn();
    config_set(&mut c, "maxmemory", "200mb"); // same policy: no new warning
    config_set(&mut c, "maxmemory-policy", "allkeys-lfu"); // warned
    config_set(&mut c, "maxmemory-policy", "volatile-lru"); // safe
    config_set(&mut c, "maxmemory-policy", "allkeys-random"); // warned
    let text = std::fs::read_to_string(&log).expect("log");
    let warned: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("may evict a board's identity keys"))
        .collect();
    let _ = std::fs::remove_file(&log);
    assert_eq!(warned.len(), 3, "{warned:#?}");
    for (line, policy) in warned
        .iter()
        .zip(["allkeys-lru", "allkeys-lfu", "allkeys-random"])
    {
        assert!(
            line.contains(&format!("maxmemory-policy {policy} ")),
            "{line}"
        );
        assert!(line.contains(" # "), "not at warning level: {line}");
    }
}
