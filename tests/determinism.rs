//! Scores with the same bits on every machine (docs/determinism.md): a
//! `commands`-mode replica and an AOF load compute every score again, so
//! they must not depend on their math library. Here both run under a
//! preloaded libm shim (built with `cc`) that moves `pow`, `exp2`, `exp`,
//! `log` and `log2` by one ulp on about one call in eight from the module,
//! as another libm, glibc version or CPU path would; the digest must stay
//! the master's after views with `AT`, HOT.PUBLISH rescoring and HOT.ALTER
//! rescoring, and on a board that keeps trending (issue 32: forward-decay
//! sums with landmark moves, `exp2` from `src/detmath`).
//!
//! `effects_and_commands_replicas_and_aof_match_across_trending_landmark_moves`
//! (both servers): a trending board whose views span more than 1,000
//! half-lives, so its landmark moves twice, reaches the master's DEBUG
//! DIGEST and trending scores on a replica without the module (`effects`),
//! a replica with it (`commands`) and an AOF replay after `kill -9` in both
//! modes.
//!
//! `a_replayed_command_without_trending_half_life_means_none` (both
//! servers): an AOF from a module before trending, loaded by a server whose
//! `hotrank.trending-half-life` is not 0, makes boards without trending.
//!
//! The libm test is redis-server only: Valkey loads modules with `RTLD_DEEPBIND`, so a
//! preloaded library does not reach the module there (the test says so
//! and returns).

mod common;
use common::node::Node;
use common::repl::*;
use common::*;
use redis::Connection;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The shim: each wrapped function calls the real one (`RTLD_NEXT`) and,
/// for a call from the module (`dladdr` of the return address names
/// `hotrank`) whose arguments hash into one eighth, returns the next
/// double up. `pow(3, 0.1234)` from anywhere returns 42, so a test can see
/// the shim is in place (Lua's `math.pow` calls the server's `pow`).
const SHIM_C: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static int from_module(void *ret) {
    Dl_info i;
    return dladdr(ret, &i) && i.dli_fname && strstr(i.dli_fname, "hotrank");
}

static int moved(double a, double b) {
    uint64_t u, v;
    memcpy(&u, &a, 8);
    memcpy(&v, &b, 8);
    uint64_t h = (u ^ (v * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
    return (h >> 61) == 0;
}

double pow(double a, double b) {
    static double (*real)(double, double);
    if (!real) real = (double (*)(double, double))dlsym(RTLD_NEXT, "pow");
    if (a == 3.0 && b == 0.1234) return 42.0;
    double r = real(a, b);
    return from_module(__builtin_return_address(0)) && moved(a, b) ? nextafter(r, INFINITY) : r;
}

#define WRAP1(name)                                                                 \
    double name(double a) {                                                         \
        static double (*real)(double);                                              \
        if (!real) real = (double (*)(double))dlsym(RTLD_NEXT, #name);              \
        double r = real(a);                                                         \
        return from_module(__builtin_return_address(0)) && moved(a, 0.5)            \
                   ? nextafter(r, INFINITY) : r;                                    \
    }
WRAP1(exp2)
WRAP1(exp)
WRAP1(log)
WRAP1(log2)
"#;

/// Builds the shim into `dir` and returns its path.
fn build_shim(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).expect("mkdir");
    let src = dir.join("libm_shim.c");
    let so = dir.join("libm_shim.so");
    std::fs::write(&src, SHIM_C).expect("write shim source");
    let out = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&so)
        .arg(&src)
        .args(["-ldl", "-lm"])
        .output()
        .expect("run cc");
    assert!(
        out.status.success(),
        "cc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    so
}

fn wait_up(c: &mut Connection) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query(c)
            .expect("INFO");
        if info.lines().any(|l| l.trim() == "master_link_status:up") {
            return;
        }
        assert!(Instant::now() < deadline, "link did not come up:\n{info}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `pow(3, 0.1234)` as Lua's `math.pow` on this server sees it.
fn lua_pow(c: &mut Connection) -> String {
    redis::cmd("EVAL")
        .arg("return tostring(math.pow(3, 0.1234))")
        .arg(0)
        .query(c)
        .expect("EVAL")
}

/// A small deterministic generator (xorshift).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const H: i64 = 3_600_000;

/// Three boards (three formulas) of 120 articles: publications, views with
/// `AT` over two days, HOT.PUBLISH of articles on the board (rescoring),
/// HOT.ALTER of the formula (rescoring at the clock), more views.
fn workload(c: &mut Connection, t0: i64) {
    let boards = [
        ("hot:{d1}", vec!["GAMMA", "1.8"]),
        ("hot:{d2}", vec![]),
        (
            "hot:{d3}",
            vec!["GAMMA", "1.37", "BASE", "0.75", "BETA", "0.3"],
        ),
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (b, settings) in &boards {
        let mut args = vec!["HOT.CREATE", b, "MAX-ARTICLES", "100000"];
        args.extend(settings);
        ok(c, &args);
        let mut pipe = redis::pipe();
        for a in 0..120 {
            let published = t0 + (rng.below(48 * 60) as i64) * 60_000;
            pipe.cmd("HOT.PUBLISH")
                .arg(b)
                .arg(format!("a{a}"))
                .arg(ts(published));
            for v in 0..(1 + rng.below(6)) {
                let at = published + (rng.below(20 * 60) as i64) * 60_000 + 1;
                pipe.cmd("HOT.VIEW")
                    .arg(b)
                    .arg(format!("a{a}"))
                    .arg(format!("v{v}"))
                    .arg("AT")
                    .arg(ts(at));
            }
        }
        let _: redis::Value = pipe.query(c).expect("views");
        // Publishing an article on the board again rescores it.
        for a in (0..120).step_by(7) {
            let at = t0 + (rng.below(48 * 60) as i64) * 60_000;
            ok(c, &["HOT.PUBLISH", b, &format!("a{a}"), &ts(at)]);
        }
    }
    trending_views(c, "hot:{d4}", t0, 0x7E4D_0032);
    ok(c, &["HOT.ALTER", "hot:{d1}", "GAMMA", "1.55"]);
    ok(
        c,
        &["HOT.ALTER", "hot:{d3}", "BASE", "1.25", "ALPHA", "0.7"],
    );
    for (b, _) in &boards {
        for a in (3..120).step_by(11) {
            ok(
                c,
                &[
                    "HOT.VIEW",
                    b,
                    &format!("a{a}"),
                    "late",
                    "AT",
                    &ts(t0 + 50 * H),
                ],
            );
        }
    }
}

/// HOT.TOP of the three boards at `at_ms`.
fn tops(c: &mut Connection, at_ms: i64) -> Vec<(String, String)> {
    let mut all = Vec::new();
    for b in ["hot:{d1}", "hot:{d2}", "hot:{d3}"] {
        let v: Vec<(String, String)> = redis::cmd("HOT.TOP")
            .arg(b)
            .arg("LIMIT")
            .arg(1000)
            .arg("WITHSCORES")
            .arg("AT")
            .arg(ts(at_ms))
            .query(c)
            .map(|v: Vec<String>| {
                v.chunks(2)
                    .map(|p| (format!("{b} {}", p[0]), p[1].clone()))
                    .collect()
            })
            .expect("HOT.TOP");
        all.extend(v);
    }
    all
}

/// Every stored score of every ZSET (the boards' and the trending sums), as
/// text, by key.
fn stored_scores(c: &mut Connection) -> Vec<(String, String)> {
    let mut all = Vec::new();
    let mut zsets: Vec<String> = redis::cmd("SCAN")
        .arg(0)
        .arg("COUNT")
        .arg(1_000_000)
        .arg("TYPE")
        .arg("zset")
        .query::<(String, Vec<String>)>(c)
        .expect("SCAN")
        .1;
    zsets.sort();
    for b in &zsets {
        let v: Vec<(String, String)> = redis::cmd("ZRANGE")
            .arg(b)
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query(c)
            .expect("ZRANGE");
        all.extend(v.into_iter().map(|(m, s)| (format!("{b} {m}"), s)));
    }
    all
}

fn differing<T: PartialEq + Clone>(a: &[T], b: &[T]) -> Vec<(T, T)> {
    a.iter()
        .zip(b)
        .filter(|(x, y)| x != y)
        .map(|(x, y)| (x.clone(), y.clone()))
        .collect()
}

#[test]
fn commands_mode_replica_and_aof_load_match_the_master_under_another_libm() {
    if server_bin().contains("valkey") {
        eprintln!("skipped: Valkey loads modules with RTLD_DEEPBIND, a preloaded libm does not reach them");
        return;
    }
    let shim_dir = std::env::temp_dir().join(format!("hotrank-libm-shim-{}", std::process::id()));
    let shim = build_shim(&shim_dir);
    let shim_env = [("LD_PRELOAD", shim.to_str().expect("utf-8 path"))];

    let mut master = Node::new("det-master");
    master.start(&AOF_ALWAYS);
    let mut m = master.conn();
    config_set(&mut m, "hotrank.replicate", "commands");
    let mut replica = Node::new("det-replica");
    let port = master.port.to_string();
    let mut rargs = vec!["--replicaof", "127.0.0.1", &port];
    rargs.extend_from_slice(&DEBUG_LOCAL);
    replica.start_env(&rargs, &shim_env);
    let mut r = replica.conn();
    wait_up(&mut r);
    // The shim is in place on the replica, not on the master.
    assert_eq!(lua_pow(&mut r), "42", "the shim is not preloaded");
    assert_ne!(lua_pow(&mut m), "42");

    let t0 = (now_s() - 3 * 86_400) * 1000;
    workload(&mut m, t0);
    wait_replica(&mut m);
    let (dm, ds) = (digest(&mut m), stored_scores(&mut m));
    let diff = differing(&ds, &stored_scores(&mut r));
    assert!(
        diff.is_empty() && digest(&mut r) == dm,
        "replica under another libm: {} of {} stored scores differ, e.g. {:?}",
        diff.len(),
        ds.len(),
        diff.iter().take(3).collect::<Vec<_>>()
    );
    assert!(ds.len() >= 300, "only {} scores", ds.len());
    let top = tops(&mut m, t0 + 60 * H);
    assert_eq!(top.len(), 360);
    assert_eq!(differing(&top, &tops(&mut r, t0 + 60 * H)), vec![]);
    // The trending board, at a time its scores have not decayed to 0.
    let q = t0 + (SPAN + 30) * HL;
    let trend = trending_top(&mut m, "hot:{d4}", q);
    assert!(
        (2 * 8..=2 * 24).contains(&trend.len()),
        "{} trending",
        trend.len() / 2
    );
    assert_eq!(trend, trending_top(&mut r, "hot:{d4}", q));
    drop(r);
    drop(replica);

    // The AOF loaded by a server under the shim.
    drop(m);
    master.kill9();
    master.start_env(&AOF_ALWAYS, &shim_env);
    let mut m = master.conn();
    assert_eq!(lua_pow(&mut m), "42", "the shim is not preloaded");
    let diff = differing(&ds, &stored_scores(&mut m));
    assert!(
        diff.is_empty() && digest(&mut m) == dm,
        "AOF load under another libm: {} of {} stored scores differ",
        diff.len(),
        ds.len()
    );
    let _ = std::fs::remove_dir_all(&shim_dir);
}

/// Half-life of the trending boards, ms.
const HL: i64 = 60_000;
/// Half-lives the trending views span: the landmark moves at about 512 and
/// 1024, before the trending is removed (at 8/10) and added again.
const SPAN: i64 = 1700;

/// HOT.INFO's `trending-landmark` of `board` (unix seconds, as sent).
fn landmark(c: &mut Connection, board: &str) -> String {
    let v: Vec<redis::Value> = redis::cmd("HOT.INFO")
        .arg(board)
        .query(c)
        .expect("HOT.INFO");
    v.chunks(2)
        .find(|p| reply_text(&p[0]) == "trending-landmark")
        .map(|p| reply_text(&p[1]))
        .unwrap_or_else(|| panic!("HOT.INFO {board} has no trending-landmark"))
}

/// A board of 60 articles keeping 8 (trimmed past 8 + 16), trending
/// half-life 60 s: 1,500 views (one in ten suspicious or a duplicate) with
/// `AT` times over [`SPAN`] half-lives from `t0`, a little out of order, so
/// the landmark moves every 512 half-lives; HOT.PUBLISH of some articles on the way, and
/// once the trending is removed and added again (it restarts empty, with
/// a new landmark). Returns the landmarks seen after each tenth.
fn trending_views(c: &mut Connection, board: &str, t0: i64, seed: u64) -> Vec<String> {
    ok(
        c,
        &[
            "HOT.CREATE",
            board,
            "MAX-ARTICLES",
            "8",
            "DEDUP-SECONDS",
            "300",
            "VISITOR-MAX-VIEWS",
            "60",
            "TRENDING-HALF-LIFE",
            "60",
        ],
    );
    let mut rng = Rng(seed);
    let n = 1500;
    let mut landmarks = Vec::new();
    for part in 0..10 {
        let mut pipe = redis::pipe();
        for i in 0..n / 10 {
            let k = (part * n / 10 + i) as i64;
            let t = t0 + k * SPAN * HL / n as i64 - rng.below(2 * HL as u64) as i64;
            let a = format!("a{}", rng.below(60));
            let v = match rng.below(10) {
                0 => "bot".to_string(),
                1 => "v0".to_string(),
                _ => format!("v{}", rng.below(500)),
            };
            pipe.cmd("HOT.VIEW")
                .arg(board)
                .arg(&a)
                .arg(&v)
                .arg("AT")
                .arg(ts(t.max(t0)));
            if rng.below(100) == 0 {
                pipe.cmd("HOT.PUBLISH")
                    .arg(board)
                    .arg(&a)
                    .arg(ts(t.max(t0) - 1000));
            }
        }
        let _: redis::Value = pipe.query(c).expect("views");
        if part == 7 {
            ok(c, &["HOT.ALTER", board, "TRENDING-HALF-LIFE", "0"]);
            ok(c, &["HOT.ALTER", board, "TRENDING-HALF-LIFE", "1m"]);
        }
        landmarks.push(landmark(c, board));
    }
    landmarks
}

/// HOT.TOP BY trending of `board` at `at_ms`, every article with its score.
fn trending_top(c: &mut Connection, board: &str, at_ms: i64) -> Vec<String> {
    redis::cmd("HOT.TOP")
        .arg(board)
        .arg("BY")
        .arg("trending")
        .arg("LIMIT")
        .arg(10000)
        .arg("WITHSCORES")
        .arg("AT")
        .arg(ts(at_ms))
        .query(c)
        .expect("HOT.TOP BY trending")
}

#[test]
fn effects_and_commands_replicas_and_aof_match_across_trending_landmark_moves() {
    let t0 = (now_s() - 2 * 86_400) * 1000 + 7_777;
    let q = t0 + (SPAN + 30) * HL;
    for (mode, replica_module) in [("effects", false), ("commands", true)] {
        let (mut master, replica) =
            aof_master_and_replica(&format!("trend-{mode}"), mode, replica_module);
        let (mut m, mut r) = (master.conn(), replica.conn());

        let landmarks = trending_views(&mut m, "hot:{t}", t0, 0x5EED_0032);
        // Two moves before the removal (after the eighth tenth: no
        // landmark), and a new landmark after trending is added again.
        let moves = landmarks[..7].windows(2).filter(|w| w[0] != w[1]).count();
        assert!(
            moves >= 2,
            "{mode}: landmarks {landmarks:?}: fewer than two moves"
        );
        assert!(["", "0"].contains(&landmarks[7].as_str()), "{landmarks:?}");
        assert!(landmarks[9] > landmarks[6], "{landmarks:?}");
        wait_replica(&mut m);
        let (dm, ds) = (digest(&mut m), stored_scores(&mut m));
        let diff = differing(&ds, &stored_scores(&mut r));
        assert!(
            diff.is_empty() && digest(&mut r) == dm,
            "{mode} replica (module: {replica_module}): {} of {} stored scores differ, e.g. {:?}",
            diff.len(),
            ds.len(),
            diff.iter().take(3).collect::<Vec<_>>()
        );
        let top = trending_top(&mut m, "hot:{t}", q);
        assert!(
            (2 * 8..=2 * 24).contains(&top.len()),
            "{mode}: {} trending entries",
            top.len() / 2
        );
        if replica_module {
            assert_eq!(
                top,
                trending_top(&mut r, "hot:{t}", q),
                "{mode}: HOT.TOP BY trending on the replica"
            );
        }
        drop(r);
        drop(replica);
        // The AOF replayed after kill -9.
        drop(m);
        master.kill9();
        master.start(&AOF_ALWAYS);
        let mut m = master.conn();
        let diff = differing(&ds, &stored_scores(&mut m));
        assert!(
            diff.is_empty() && digest(&mut m) == dm,
            "{mode}: AOF replay after kill -9: {} of {} stored scores differ",
            diff.len(),
            ds.len()
        );
        assert_eq!(
            top,
            trending_top(&mut m, "hot:{t}", q),
            "{mode}: HOT.TOP BY trending after the AOF replay"
        );
        eprintln!(
            "{mode}: landmarks {landmarks:?}, {} stored scores, {} trending listed",
            ds.len(),
            top.len() / 2
        );
    }
}

/// `cmd` in RESP, as an AOF holds it.
fn resp(cmd: &[&str]) -> String {
    let mut s = format!("*{}\r\n", cmd.len());
    for a in cmd {
        s.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s
}

/// HOT.INFO's `trending-half-life` of `board` (seconds).
fn half_life_of(c: &mut Connection, board: &str) -> String {
    let info: Vec<redis::Value> = redis::cmd("HOT.INFO")
        .arg(board)
        .query(c)
        .unwrap_or_else(|e| panic!("HOT.INFO {board}: {e}"));
    info.chunks(2)
        .find(|p| reply_text(&p[0]) == "trending-half-life")
        .map(|p| reply_text(&p[1]))
        .unwrap_or_else(|| panic!("HOT.INFO {board} has no trending-half-life"))
}

/// An AOF written by a module that predates trending (issue 32): its
/// `commands`-mode HOT.CREATE and HOT.REPAIR name every setting that module knew, and no
/// `TRENDING-HALF-LIFE`. Loaded by a server whose
/// `hotrank.trending-half-life` is 6 h, the boards keep no trending, as on
/// the master that wrote them; a client's HOT.CREATE on that server still
/// takes the config, and a replayed command that names the half-life keeps
/// it.
#[test]
fn a_replayed_command_without_trending_half_life_means_none() {
    let mut node = Node::new("old-aof");
    let old = [
        "ALPHA",
        "1",
        "BETA",
        "1.2",
        "BASE",
        "2",
        "GAMMA",
        "1.5",
        "DEDUP-SECONDS",
        "86400",
        "DEDUP-SHARDS",
        "1",
        "VISITOR-MAX-VIEWS",
        "0",
        "VISITOR-WINDOW-SECONDS",
        "60",
        "MAX-ARTICLES",
        "1000",
        "RETENTION-SECONDS",
        "2592000",
    ];
    let with = |cmd: &[&str], tail: &[&str]| {
        let mut v: Vec<&str> = cmd.to_vec();
        v.extend_from_slice(&old);
        v.extend_from_slice(tail);
        resp(&v)
    };
    let clock = (now_s() * 1000).to_string();
    let mut aof = resp(&["SELECT", "0"]);
    aof += &with(&["HOT.CREATE", "hot:{c}", "ID", "1700000000000"], &[]);
    // A board without its record: REPAIR rebuilds one from the configs.
    aof += &resp(&["ZADD", "hot:{r}", "0", "art:1"]);
    aof += &with(
        &["HOT.REPAIR", "hot:{r}", "ID", "1700000000001"],
        &["CLOCK", &clock],
    );
    // A newer module's command names the half-life: it is kept.
    aof += &with(
        &["HOT.CREATE", "hot:{n}", "ID", "1700000000002"],
        &["TRENDING-HALF-LIFE", "3600"],
    );
    std::fs::write(node.dir.join("appendonly.aof"), aof).expect("write the AOF");
    node.start(&[
        "--appendonly",
        "yes",
        "--hotrank.trending-half-life",
        "21600",
    ]);
    let mut c = node.conn();
    assert_eq!(config_get(&mut c, "hotrank.trending-half-life"), "21600");
    for board in ["hot:{c}", "hot:{r}"] {
        assert_eq!(
            half_life_of(&mut c, board),
            "0",
            "{board} after the AOF load"
        );
    }
    assert_eq!(half_life_of(&mut c, "hot:{n}"), "3600");
    // A client's command is not from the AOF: the config applies.
    ok(&mut c, &["HOT.CREATE", "hot:{x}"]);
    assert_eq!(half_life_of(&mut c, "hot:{x}"), "21600");
    // The boards replay as they were (no trending) after a restart too.
    drop(c);
    node.kill9();
    node.start(&["--appendonly", "yes", "--hotrank.trending-half-life", "600"]);
    let mut c = node.conn();
    for board in ["hot:{c}", "hot:{r}"] {
        assert_eq!(half_life_of(&mut c, board), "0", "{board} after a restart");
    }
    assert_eq!(half_life_of(&mut c, "hot:{x}"), "21600");
}

/// The board record of `board` as stored (its `trending-keep`, if any, last).
fn record_text(c: &mut Connection, board: &str) -> String {
    let name = format!("{board}\0board");
    let v: Option<Vec<u8>> = redis::cmd("GET")
        .arg(name.as_bytes())
        .query(c)
        .unwrap_or_else(|e| panic!("GET the record of {board}: {e}"));
    String::from_utf8(v.unwrap_or_else(|| panic!("{board} has no record")))
        .expect("a record is text")
}

/// An AOF written in `commands` mode by hotrank 0.3.0 (the release before
/// `trending-keep`): its views of a trending board carry no `KEEP`, and
/// their load writes the record 0.3.0 wrote, with no `trending-keep` (a
/// newer replica of a 0.3.0 master runs the same commands, so it keeps the
/// master's digest). The same views marked `KEEP`, as this version's
/// master sends the view that starts the field, write it. Failed before
/// the marker: the unmarked load started `trending-keep` on its own.
#[test]
fn a_replayed_view_moves_trending_keep_only_when_marked() {
    let mut node = Node::new("keep-aof");
    let settings = [
        "ALPHA",
        "1",
        "BETA",
        "1.2",
        "BASE",
        "2",
        "GAMMA",
        "1.5",
        "DEDUP-SECONDS",
        "900",
        "DEDUP-SHARDS",
        "4096",
        "VISITOR-MAX-VIEWS",
        "60",
        "VISITOR-WINDOW-SECONDS",
        "3600",
        "MAX-ARTICLES",
        "1000",
        "RETENTION-SECONDS",
        "7776000",
        "TRENDING-HALF-LIFE",
        "21600",
    ];
    let clock = now_s() * 1000 - 60_000;
    let mut aof = resp(&["SELECT", "0"]);
    for (board, mark) in [("hot:{k0}", None), ("hot:{k1}", Some("KEEP"))] {
        let mut create = vec!["HOT.CREATE", board, "ID", "1700000000000"];
        create.extend_from_slice(&settings);
        aof += &resp(&create);
        for (i, (article, visitor)) in [("a1", "v1"), ("a1", "v2"), ("a2", "v1")]
            .iter()
            .enumerate()
        {
            let now = (clock + i as i64 * 1000).to_string();
            let mut view = vec!["HOT.VIEW", board, article, visitor, "CLOCK", &now];
            // Only the first view moves the field (it starts it).
            if i == 0 {
                view.extend(mark);
            }
            aof += &resp(&view);
        }
    }
    std::fs::write(node.dir.join("appendonly.aof"), aof).expect("write the AOF");
    node.start(&["--appendonly", "yes"]);
    let mut c = node.conn();
    let old = record_text(&mut c, "hot:{k0}");
    let new = record_text(&mut c, "hot:{k1}");
    assert!(old.contains(" trending-landmark="), "{old}");
    assert!(!old.contains("trending-keep"), "0.3.0's record: {old}");
    let keep = new
        .strip_prefix(old.as_str())
        .and_then(|k| k.strip_prefix(" trending-keep="))
        .unwrap_or_else(|| panic!("{new} is not {old} + trending-keep"));
    // 90 days less the one-day refresh slack, in ms.
    assert_eq!(keep, (89 * 86_400_000i64).to_string());
    // Both answer BY trending (the board without the field checks every article).
    for board in ["hot:{k0}", "hot:{k1}"] {
        let top: Vec<String> = redis::cmd("HOT.TOP")
            .arg(board)
            .arg("BY")
            .arg("trending")
            .query(&mut c)
            .unwrap_or_else(|e| panic!("HOT.TOP {board}: {e}"));
        assert_eq!(top, ["a1", "a2"], "{board}");
    }
    // A client cannot send the marker.
    let err = redis::cmd("HOT.VIEW")
        .arg("hot:{k1}")
        .arg("a1")
        .arg("v3")
        .arg("KEEP")
        .query::<redis::Value>(&mut c)
        .expect_err("KEEP from a client");
    assert!(err.to_string().contains("syntax error"), "{err}");
}
