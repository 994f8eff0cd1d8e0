//! A hostile property test of the `HOT.*` commands: random steps against
//! several boards (with and without a hash tag) that mix views with AT times
//! in and out of order, publishes and re-publishes, formula changes (valid
//! and invalid), trimming, dedup changes, forced retention expiry, DEL and
//! expiry of a board, and foreign values planted under derived key names.
//!
//! Checks:
//! - `HOT.TOP K LIMIT n WITHSCORES [WINDOW w] AT q` equals a brute force
//!   built from the server's own state: the members of `K` (ZRANGE), each
//!   scored by `HOT.STATS K a AT q`, kept when pv > 0 (and, with WINDOW,
//!   published within `[q - w, q]`), ordered by score descending then id
//!   ascending. Ids and score texts must match exactly.
//! - every error reply leaves DBSIZE unchanged (no short expiry is pending
//!   when it is read: dedup windows are at least 300 s, forced expiries are
//!   waited out);
//! - a view that meets a planted foreign value fails, and writes nothing;
//! - an invalid config value is refused;
//! - no empty ZSET is ever left behind, and the server survives DEBUG DIGEST.
//!
//! Seeded: the seed is printed; `HOTRANK_SEED` reruns one. On a mismatch the
//! test prints the seed, the step and the tail of the board's command
//! history, and writes the whole history to a file.

mod common;
use common::rng::Rng;
use common::*;
#[path = "common/hot_client.rs"]
mod hot_client;
use hot_client::*;
use hotrank::hot::dedup;
use hotrank::keys::{self, Kind};
use redis::{Connection, Value};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Checks each server run must reach.
const MIN_CHECKS: u64 = 20_000;
/// Stop adding steps after this long (the checks are normally reached well before).
const TIME_BUDGET: Duration = Duration::from_secs(80);

const BOARDS: [&str; 4] = ["hot:{h1}", "hot:{h2}", "hotplain", "news:feed"];
/// A board name used only for foreign ZSETs and RANK boards.
const FOREIGN: &str = "hot:{foreign}";

/// A command as its words.
type Command = Vec<Vec<u8>>;
fn seed() -> u64 {
    std::env::var("HOTRANK_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_251_123)
}

fn articles() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..26).map(|i| format!("a{i:02}").into_bytes()).collect();
    v.extend([
        b"a:b".to_vec(),
        b"x y".to_vec(),
        b"{z}".to_vec(),
        b"\xffbin\x00".to_vec(),
    ]);
    v
}

fn visitors() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..38).map(|i| format!("v{i:02}").into_bytes()).collect();
    v.extend([b"u:1".to_vec(), b"u 2".to_vec()]);
    v
}

fn err_text(v: &Value) -> Option<String> {
    match v {
        Value::ServerError(e) => Some(
            format!("{} {}", e.code(), e.details().unwrap_or(""))
                .trim()
                .to_string(),
        ),
        _ => None,
    }
}

fn short(v: &Value) -> String {
    match v {
        Value::Array(a) if a.len() == 4 => format!(
            "[{}, {}, {}, {}]",
            int(&a[0]),
            int(&a[1]),
            text(&a[2]),
            text(&a[3])
        ),
        Value::ServerError(_) => format!("error: {}", err_text(v).unwrap_or_default()),
        Value::Int(i) => i.to_string(),
        Value::Okay => "OK".into(),
        other => format!("{other:?}"),
    }
}

/// Unix seconds with up to 3 decimals (as HOT.STATS writes them) to ms.
fn time_text_ms(s: &str) -> i64 {
    let (int_part, frac) = s.split_once('.').unwrap_or((s, ""));
    let i: i64 = int_part.parse().unwrap_or_else(|_| panic!("time {s:?}"));
    let mut f = frac.to_string();
    assert!(f.len() <= 3, "time {s:?}");
    while f.len() < 3 {
        f.push('0');
    }
    let f: i64 = f.parse().unwrap_or(0);
    if i < 0 || s.starts_with('-') {
        i * 1000 - f
    } else {
        i * 1000 + f
    }
}

#[derive(Debug)]
struct Stat {
    pv: i64,
    published: Option<i64>,
    score: String,
}

fn parse_stats(v: &Value) -> Option<Stat> {
    match v {
        Value::Nil => None,
        Value::Array(a) if a.len() == 10 => Some(Stat {
            pv: int(&a[1]),
            published: match &a[7] {
                Value::Nil => None,
                x => Some(time_text_ms(&text(x))),
            },
            score: text(&a[9]),
        }),
        other => panic!("HOT.STATS reply: {other:?}"),
    }
}

struct Cfg {
    dedup_s: i64,
    shards: u32,
    vmax: i64,
}

struct Hostile {
    c: Connection,
    rng: Rng,
    seed: u64,
    step: u64,
    arts: Vec<Vec<u8>>,
    vis: Vec<Vec<u8>>,
    /// (step, board index or None for a global command, text).
    history: Vec<(u64, Option<usize>, String)>,
    checks: u64,
    mismatches: u64,
    reports: Vec<String>,
    cfg: Cfg,
    counts: std::collections::BTreeMap<&'static str, u64>,
    /// Mismatches by kind.
    categories: std::collections::BTreeMap<String, u64>,
}

fn board_bytes(i: usize) -> &'static [u8] {
    BOARDS[i].as_bytes()
}

impl Hostile {
    fn log(&mut self, board: Option<usize>, s: String) {
        self.history.push((self.step, board, s));
    }

    fn count(&mut self, what: &'static str) {
        *self.counts.entry(what).or_default() += 1;
    }

    /// Records a mismatch with the tail of the board's history, and writes
    /// the whole history of the board to a file.
    fn mismatch(&mut self, board: Option<usize>, category: String, what: String) {
        self.mismatches += 1;
        let n = self.categories.entry(category).or_default();
        *n += 1;
        // The first mismatch of each kind is reported in full.
        if *n > 1 || self.reports.len() >= 24 {
            return;
        }
        let server = server_bin();
        let tag = server.rsplit('/').next().unwrap_or("server").to_string();
        let path = std::env::temp_dir().join(format!(
            "hotrank-hostile-{}-{}-step{}.log",
            self.seed, tag, self.step
        ));
        let lines: Vec<String> = self
            .history
            .iter()
            .filter(|(_, b, _)| b.is_none() || *b == board)
            .map(|(s, b, t)| {
                format!(
                    "step {s} [{}] {t}",
                    b.map_or("global".to_string(), |i| BOARDS[i].to_string())
                )
            })
            .collect();
        let _ = std::fs::write(&path, lines.join("\n"));
        let tail = lines[lines.len().saturating_sub(40)..].join("\n");
        self.reports.push(format!(
            "seed {} step {} board {}: {what}\n  (HOTRANK_SEED={} HOTRANK_SERVER={server}; full history of the board: {})\n  last commands of the board:\n{tail}",
            self.seed,
            self.step,
            board.map_or("-", |i| BOARDS[i]),
            self.seed,
            path.display()
        ));
    }

    /// Runs a command between two DBSIZE reads. An error reply must leave
    /// DBSIZE unchanged. Returns the reply (errors as `Value::ServerError`).
    fn cmd(&mut self, board: Option<usize>, args: &[&[u8]]) -> Value {
        let mut p = redis::pipe();
        p.ignore_errors();
        p.cmd("DBSIZE");
        let mut c = redis::cmd(std::str::from_utf8(args[0]).expect("name"));
        for a in &args[1..] {
            c.arg(*a);
        }
        p.add_command(c);
        p.cmd("DBSIZE");
        let mut r: Vec<Value> = p.query(&mut self.c).expect("pipeline");
        let after = int(&r[2]);
        let before = int(&r[0]);
        let reply = r.swap_remove(1);
        self.log(
            board,
            format!("{} -> {}", show(args).join(" "), short(&reply)),
        );
        if let Some(e) = err_text(&reply) {
            self.count("error replies");
            if before != after {
                let cat = format!("{} error reply changed DBSIZE", show(&args[..1])[0]);
                self.mismatch(
                    board,
                    cat,
                    format!(
                        "{} failed ({e}) but DBSIZE went {before} -> {after}",
                        show(args).join(" ")
                    ),
                );
            }
        }
        reply
    }

    fn raw(&mut self, args: &[&[u8]]) -> Value {
        run(&mut self.c, args).unwrap_or_else(|e| panic!("{:?}: {e}", show(args)))
    }

    fn wait_gone(&mut self, key: &[u8]) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while int(&self.raw(&[b"EXISTS", key])) == 1 {
            assert!(
                Instant::now() < deadline,
                "{} did not expire",
                key.escape_ascii()
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// A view time no later than the server clock, in or out of order.
    fn view_time(&mut self) -> i64 {
        let now = now_ms();
        let back = match self.rng.range(0, 99) {
            0..=69 => self.rng.range(20, 2 * H),
            70..=94 => self.rng.range(20, 3 * DAY),
            _ => self.rng.range(20, 10_000),
        };
        now - back
    }

    fn view(&mut self) {
        let b = self.rng.range(0, BOARDS.len() as i64 - 1) as usize;
        let a = self.arts[self.rng.skewed(self.arts.len())].clone();
        let v = self.rng.pick(&self.vis).clone();
        let r = if self.rng.chance(0.1) {
            self.cmd(Some(b), &[b"HOT.VIEW", board_bytes(b), &a, &v])
        } else {
            let t = ts(self.view_time());
            self.cmd(
                Some(b),
                &[b"HOT.VIEW", board_bytes(b), &a, &v, b"AT", t.as_bytes()],
            )
        };
        self.count("views");
        match &r {
            Value::Array(x) if x.len() == 4 => {
                let sc = text(&x[2]);
                if !sc.parse::<f64>().is_ok_and(f64::is_finite) {
                    self.mismatch(
                        Some(b),
                        "HOT.VIEW non-finite score".into(),
                        format!("HOT.VIEW replied a non-finite score {sc}"),
                    );
                }
            }
            other => {
                let s = short(other);
                self.mismatch(
                    Some(b),
                    "HOT.VIEW unexpected reply".into(),
                    format!("HOT.VIEW: unexpected reply {s}"),
                )
            }
        }
    }

    fn publish(&mut self) {
        let b = self.rng.range(0, BOARDS.len() as i64 - 1) as usize;
        let a = self.arts[self.rng.skewed(self.arts.len())].clone();
        let p = if self.rng.chance(0.9) {
            now_ms() - self.rng.range(0, 5 * DAY)
        } else {
            now_ms() + self.rng.range(0, H)
        };
        let p = ts(p);
        let r = self.cmd(Some(b), &[b"HOT.PUBLISH", board_bytes(b), &a, p.as_bytes()]);
        self.count("publishes");
        if !matches!(r, Value::Int(0 | 1)) {
            let s = short(&r);
            self.mismatch(
                Some(b),
                "HOT.PUBLISH unexpected reply".into(),
                format!("HOT.PUBLISH: unexpected reply {s}"),
            );
        }
    }

    fn config(&mut self, name: &str, value: &str, valid: bool) {
        let n = format!("hotrank.{name}");
        let r = self.cmd(None, &[b"CONFIG", b"SET", n.as_bytes(), value.as_bytes()]);
        let accepted = err_text(&r).is_none();
        if accepted && valid {
            // Configs give only new boards their settings: the model's configs
            // are global, so every existing board follows them by HOT.ALTER
            // (which also exercises HOT.ALTER and its rescoring here).
            let setting = name.to_ascii_uppercase();
            for i in 0..BOARDS.len() {
                let b = board_bytes(i);
                self.cmd(
                    Some(i),
                    &[b"HOT.ALTER", b, setting.as_bytes(), value.as_bytes()],
                );
            }
        }
        if accepted != valid {
            let cat = format!(
                "CONFIG SET {n} {value} {}",
                if valid { "refused" } else { "accepted" }
            );
            self.mismatch(
                None,
                cat,
                format!(
                    "CONFIG SET {n} {value}: {} but it is {}",
                    short(&r),
                    if valid { "valid" } else { "invalid" }
                ),
            );
            if accepted {
                // Put a sane value back so the run goes on.
                let d = match name {
                    "alpha" => "1",
                    "beta" => "1.2",
                    "base" => "2",
                    "gamma" => "1.5",
                    "dedup-seconds" => "900",
                    _ => "1000",
                };
                self.cmd(None, &[b"CONFIG", b"SET", n.as_bytes(), d.as_bytes()]);
            }
        }
    }

    fn formula_config(&mut self) {
        let name = *self.rng.pick(&["alpha", "beta", "base", "gamma"]);
        let u = self.rng.unit();
        let v = match (name, self.rng.range(0, 5)) {
            ("alpha" | "beta", 0) => "0".to_string(),
            ("alpha" | "beta", 1) => "1000000".to_string(),
            ("alpha" | "beta", 2) => "1".to_string(),
            ("alpha" | "beta", _) => format!("{}", u * 10.0),
            ("base", 0) => "0.001".to_string(),
            ("base", 1) => "1000000".to_string(),
            ("base", 2) => "2".to_string(),
            ("base", _) => format!("{}", 0.001 + u * 100.0),
            (_, 0) => "0".to_string(),
            (_, 1) => "10".to_string(),
            (_, 2) => "1.5".to_string(),
            (_, _) => format!("{}", u * 10.0),
        };
        self.config(name, &v, true);
        self.count("formula configs");
    }

    fn invalid_config(&mut self) {
        let (name, v) = *self.rng.pick(&[
            ("alpha", "-1"),
            ("alpha", "nan"),
            ("alpha", "inf"),
            ("alpha", "1000001"),
            ("beta", "-0.5"),
            ("beta", "abc"),
            ("base", "0"),
            ("base", "-2"),
            ("base", "1e-300"),
            ("base", "0.0009"),
            ("base", "5e-324"),
            ("gamma", "10.5"),
            ("gamma", "-1"),
            ("gamma", "-inf"),
            ("max-articles", "-1"),
            ("dedup-seconds", "-5"),
        ]);
        self.config(name, v, false);
        self.count("invalid configs");
    }

    fn other_config(&mut self) {
        match self.rng.range(0, 3) {
            0 | 1 => {
                let v = *self.rng.pick(&["0", "1", "2", "5", "10", "20", "1000"]);
                self.config("max-articles", v, true);
            }
            2 => {
                let v = *self.rng.pick(&[0i64, 300, 900]);
                self.config("dedup-seconds", &v.to_string(), true);
                self.cfg.dedup_s = v;
            }
            _ => {
                if self.rng.chance(0.5) {
                    let v = *self.rng.pick(&[0i64, 5, 60]);
                    self.config("visitor-max-views", &v.to_string(), true);
                    self.cfg.vmax = v;
                } else {
                    let v = *self.rng.pick(&[1u32, 7, 4096]);
                    self.config("dedup-shards", &v.to_string(), true);
                    self.cfg.shards = v;
                }
            }
        }
        self.count("other configs");
    }

    /// Expires an article's pv, uv and meta keys, as retention does.
    fn retention(&mut self) {
        let b = self.rng.range(0, BOARDS.len() as i64 - 1) as usize;
        let a = self.arts[self.rng.skewed(self.arts.len())].clone();
        let pexpire = self.rng.chance(0.3);
        let ks: Vec<Vec<u8>> = [Kind::Pv, Kind::Uv, Kind::Meta]
            .iter()
            .map(|k| keys::derived(board_bytes(b), *k, &[&a]))
            .collect();
        for k in &ks {
            if pexpire {
                self.raw(&[b"PEXPIRE", k, b"1"]);
            } else {
                self.raw(&[b"DEL", k]);
            }
        }
        if pexpire {
            for k in &ks {
                self.wait_gone(k);
            }
        }
        let how = if pexpire { "PEXPIRE 1" } else { "DEL" };
        self.log(
            Some(b),
            format!(
                "retention ({how}) of {}'s pv, uv and meta",
                a.escape_ascii()
            ),
        );
        self.count("forced retention");
    }

    fn drop_board(&mut self) {
        let b = self.rng.range(0, BOARDS.len() as i64 - 1) as usize;
        let k = board_bytes(b);
        if self.rng.chance(0.5) {
            self.raw(&[b"DEL", k]);
            self.log(Some(b), "DEL board".into());
        } else {
            self.raw(&[b"PEXPIRE", k, b"1"]);
            self.wait_gone(k);
            self.log(Some(b), "PEXPIRE board 1 (waited until gone)".into());
        }
        self.count("board deleted");
    }

    /// DUMP and PTTL of a key (None when absent).
    fn save(&mut self, key: &[u8]) -> Option<(Vec<u8>, i64)> {
        match self.raw(&[b"DUMP", key]) {
            Value::Nil => None,
            v => {
                let pttl = int(&self.raw(&[b"PTTL", key]));
                Some((bytes(&v), pttl.max(0)))
            }
        }
    }

    fn restore(&mut self, key: &[u8], saved: &Option<(Vec<u8>, i64)>) {
        self.raw(&[b"DEL", key]);
        if let Some((dump, pttl)) = saved {
            let p = pttl.to_string();
            self.raw(&[b"RESTORE", key, p.as_bytes(), dump]);
        }
    }

    /// Plants a foreign value under a derived name a fresh view will read,
    /// expects the view to fail and write nothing, then puts things back.
    fn trap(&mut self) {
        let b = self.rng.range(0, BOARDS.len() as i64 - 1) as usize;
        let bk = board_bytes(b);
        let a = self.arts[self.rng.skewed(self.arts.len())].clone();
        let visitor = format!("trap{}", self.step).into_bytes();
        let t = now_ms() - self.rng.range(20, H);
        let mut kinds = vec!["pv", "uv", "meta-field", "meta-list"];
        if self.cfg.dedup_s > 0 {
            kinds.extend(["dedup", "dedup-prev"]);
        }
        if self.cfg.vmax > 0 {
            kinds.extend(["vv", "sus"]);
        }
        let kind = *self.rng.pick(&kinds);
        let vv_part = format!("3600:{}", t.div_euclid(3_600_000));
        let vv_key = keys::derived(bk, Kind::VisitorViews, &[vv_part.as_bytes(), &visitor]);
        let shard = |dg: i64, cfg: &Cfg| {
            let w = cfg.dedup_s * 1000;
            let g = dedup::generation(t, w) + dg;
            let s = dedup::shard(dedup::fingerprint(&a, &visitor), cfg.shards);
            let part = format!("{}:{g}:{s}", cfg.dedup_s);
            keys::derived(bk, Kind::Dedup, &[part.as_bytes()])
        };
        let new_shard = |cfg: &Cfg| {
            let s = dedup::shard(dedup::fingerprint(&a, &visitor), cfg.shards);
            let part = format!("{}:{s}", cfg.dedup_s);
            keys::derived(bk, Kind::Dedup, &[part.as_bytes()])
        };
        // (key, plant commands)
        let plants: Vec<(Vec<u8>, Vec<Command>)> = match kind {
            "pv" => {
                let k = keys::derived(bk, Kind::Pv, &[&a]);
                vec![(k.clone(), vec![vec![b"SET".to_vec(), k, b"12x".to_vec()]])]
            }
            "uv" => {
                let k = keys::derived(bk, Kind::Uv, &[&a]);
                vec![(
                    k.clone(),
                    vec![vec![b"SET".to_vec(), k, b"not a hyperloglog".to_vec()]],
                )]
            }
            "meta-field" => {
                let k = keys::derived(bk, Kind::Meta, &[&a]);
                vec![(
                    k.clone(),
                    vec![vec![
                        b"HSET".to_vec(),
                        k,
                        b"publishedAt".to_vec(),
                        b"abc".to_vec(),
                    ]],
                )]
            }
            "meta-list" => {
                let k = keys::derived(bk, Kind::Meta, &[&a]);
                vec![(
                    k.clone(),
                    vec![
                        vec![b"DEL".to_vec(), k.clone()],
                        vec![b"RPUSH".to_vec(), k, b"x".to_vec()],
                    ],
                )]
            }
            // The pair's shard string; or, with it gone, the old layout's
            // string of the generation before, which a view then reads.
            "dedup" => {
                let k = new_shard(&self.cfg);
                vec![(
                    k.clone(),
                    vec![vec![b"SET".to_vec(), k, b"0123456789abc".to_vec()]],
                )]
            }
            "dedup-prev" => {
                let n = new_shard(&self.cfg);
                let k = shard(-1, &self.cfg);
                vec![
                    (n.clone(), vec![vec![b"DEL".to_vec(), n]]),
                    (
                        k.clone(),
                        vec![vec![b"SET".to_vec(), k, b"0123456789abc".to_vec()]],
                    ),
                ]
            }
            "vv" => vec![(
                vv_key.clone(),
                vec![vec![b"SET".to_vec(), vv_key.clone(), b"abc".to_vec()]],
            )],
            _ => {
                let sus = keys::derived(bk, Kind::Suspicious, &[&a]);
                let n = self.cfg.vmax.to_string().into_bytes();
                vec![
                    (
                        vv_key.clone(),
                        vec![vec![b"SET".to_vec(), vv_key.clone(), n]],
                    ),
                    (
                        sus.clone(),
                        vec![vec![b"SET".to_vec(), sus, b"abc".to_vec()]],
                    ),
                ]
            }
        };
        let saved: Vec<Option<(Vec<u8>, i64)>> = plants
            .iter()
            .map(|(k, _)| k.clone())
            .collect::<Vec<_>>()
            .iter()
            .map(|k| self.save(k))
            .collect();
        for (_, cmds) in &plants {
            for c in cmds {
                let refs: Vec<&[u8]> = c.iter().map(|x| x.as_slice()).collect();
                self.raw(&refs);
            }
        }
        self.log(
            Some(b),
            format!(
                "planted {kind} for {} / {}",
                a.escape_ascii(),
                visitor.escape_ascii()
            ),
        );
        // The keys the view would write, to prove nothing was.
        let watched: Vec<Vec<u8>> = vec![
            bk.to_vec(),
            keys::derived(bk, Kind::HotBoard, &[]),
            keys::derived(bk, Kind::PubIndex, &[]),
            keys::derived(bk, Kind::Pv, &[&a]),
            keys::derived(bk, Kind::Uv, &[&a]),
            keys::derived(bk, Kind::Meta, &[&a]),
            keys::derived(bk, Kind::Suspicious, &[&a]),
            vv_key.clone(),
        ];
        let before: Vec<Option<Vec<u8>>> = watched
            .iter()
            .map(|k| match self.raw(&[b"DUMP", k]) {
                Value::Nil => None,
                v => Some(bytes(&v)),
            })
            .collect();
        let at = ts(t);
        let r = self.cmd(
            Some(b),
            &[b"HOT.VIEW", bk, &a, &visitor, b"AT", at.as_bytes()],
        );
        self.count("traps");
        match err_text(&r) {
            None => self.mismatch(
                Some(b),
                format!("planted {kind}: view succeeded"),
                format!(
                    "planted {kind}: HOT.VIEW {} replied {}",
                    a.escape_ascii(),
                    short(&r)
                ),
            ),
            Some(e) => {
                if !(e.starts_with("ERR")
                    || e.starts_with("WRONGTYPE")
                    || e.starts_with("INVALIDOBJ"))
                {
                    self.mismatch(
                        Some(b),
                        "planted: error code".into(),
                        format!("planted {kind}: error {e:?}"),
                    );
                }
            }
        }
        for (k, old) in watched.iter().zip(&before) {
            let now = match self.raw(&[b"DUMP", k]) {
                Value::Nil => None,
                v => Some(bytes(&v)),
            };
            if &now != old {
                self.mismatch(
                    Some(b),
                    format!("planted {kind}: failed view wrote"),
                    format!(
                        "planted {kind}: the failed view changed {}",
                        k.escape_ascii()
                    ),
                );
                break;
            }
        }
        for ((k, _), s) in plants.iter().zip(&saved) {
            self.restore(k, s);
        }
        self.log(Some(b), format!("removed the planted {kind}"));
        if err_text(&r).is_none() {
            // The view read a foreign value as its own and wrote from it:
            // start the board afresh, so later checks test HOT.TOP, not
            // the fallout of this mismatch.
            self.delete_board_keys(b);
        }
    }

    /// Deletes the board and every key derived from it.
    fn delete_board_keys(&mut self, b: usize) {
        let pattern = [board_bytes(b), b"*"].concat();
        let ks: Vec<Vec<u8>> = redis::cmd("KEYS")
            .arg(&pattern)
            .query(&mut self.c)
            .expect("KEYS");
        for key in &ks {
            self.raw(&[b"DEL", key]);
        }
        self.log(
            Some(b),
            format!("deleted the board and its {} keys", ks.len()),
        );
    }

    /// A ZSET the module did not make, or a RANK board, under a board name:
    /// HOT.VIEW and HOT.PUBLISH must refuse it and write nothing.
    fn foreign_board(&mut self) {
        let k = FOREIGN.as_bytes();
        let rank = self.rng.chance(0.5);
        if rank {
            self.raw(&[b"RANK.CREATE", k]);
            if self.rng.chance(0.7) {
                self.raw(&[b"RANK.SET", k, b"a00", b"5"]);
            }
        } else {
            self.raw(&[b"ZADD", k, b"1", b"a00", b"2", b"m"]);
        }
        self.log(
            None,
            format!("foreign board ({})", if rank { "RANK" } else { "ZSET" }),
        );
        for cmd in [&b"HOT.VIEW"[..], b"HOT.PUBLISH"] {
            let r = if cmd == b"HOT.VIEW" {
                self.cmd(None, &[cmd, k, b"a00", b"v00"])
            } else {
                self.cmd(None, &[cmd, k, b"a00", b"1700000000"])
            };
            match err_text(&r) {
                // A plain ZSET: the one error of a board without its record
                // (docs/eviction.md); a RANK board: named as such.
                Some(e)
                    if e.starts_with("ERR board identity missing:")
                        || (e.starts_with("ERR") && e.contains("is a RANK board")) => {}
                _ => {
                    let s = short(&r);
                    let cmd = String::from_utf8_lossy(cmd).into_owned();
                    self.mismatch(
                        None,
                        format!(
                            "{cmd} on a foreign {}",
                            if rank { "RANK board" } else { "ZSET" }
                        ),
                        format!("{cmd} on a foreign board: {s}"),
                    );
                }
            }
        }
        // Remove it and anything written next to it.
        let pattern = [k, b"*"].concat();
        let ks: Vec<Vec<u8>> = redis::cmd("KEYS")
            .arg(&pattern)
            .query(&mut self.c)
            .expect("KEYS");
        for key in ks {
            self.raw(&[b"DEL", &key]);
        }
        self.count("foreign boards");
    }

    /// HOT.TOP against the brute force built from the server's state.
    fn check(&mut self) {
        let b = self.rng.range(0, BOARDS.len() as i64 - 1) as usize;
        let bk = board_bytes(b);
        let now = now_ms();
        let q = match self.rng.range(0, 9) {
            0..=3 => now,
            4..=7 => now - self.rng.range(0, 3 * DAY),
            _ => now + self.rng.range(0, 2 * DAY),
        };
        let n = *self.rng.pick(&[1usize, 2, 3, 5, 10, 20, 50]);
        let w: Option<(&str, i64)> = *self.rng.pick(&[
            None,
            None,
            Some(("90", 90_000)),
            Some(("30m", 1_800_000)),
            Some(("1h", H)),
            Some(("6h", 6 * H)),
            Some(("1d", DAY)),
            Some(("3d", 3 * DAY)),
            Some(("7d", 7 * DAY)),
        ]);
        let qs = ts(q);
        let ns = n.to_string();
        let mut top: Vec<&[u8]> = vec![b"HOT.TOP", bk, b"LIMIT", ns.as_bytes()];
        if let Some((ws, _)) = w {
            top.extend([&b"WINDOW"[..], ws.as_bytes()]);
        }
        top.extend([&b"WITHSCORES"[..], b"AT", qs.as_bytes()]);
        let pubidx = keys::derived(bk, Kind::PubIndex, &[]);
        let mut p = redis::pipe();
        p.ignore_errors();
        p.cmd("ZRANGE").arg(bk).arg(0).arg(-1);
        p.cmd("EXISTS").arg(bk);
        p.cmd("EXISTS").arg(&pubidx);
        p.cmd("ZCARD").arg(&pubidx);
        let mut tc = redis::cmd("HOT.TOP");
        for a in &top[1..] {
            tc.arg(*a);
        }
        p.add_command(tc);
        for a in &self.arts {
            p.cmd("HOT.STATS").arg(bk).arg(a).arg("AT").arg(&qs);
        }
        let r: Vec<Value> = p.query(&mut self.c).expect("check pipeline");
        self.checks += 1;
        let what = show(&top).join(" ");
        let members: Vec<Vec<u8>> = match &r[0] {
            Value::Array(a) => a.iter().map(bytes).collect(),
            other => panic!("ZRANGE: {other:?}"),
        };
        if int(&r[1]) == 1 && members.is_empty() {
            self.mismatch(
                Some(b),
                "empty ZSET".into(),
                "the board is an empty ZSET".into(),
            );
        }
        if int(&r[2]) == 1 && int(&r[3]) == 0 {
            self.mismatch(
                Some(b),
                "empty ZSET".into(),
                "the publish index is an empty ZSET".into(),
            );
        }
        let got: Vec<(Vec<u8>, String)> = match &r[4] {
            Value::Array(a) => a.chunks(2).map(|x| (bytes(&x[0]), text(&x[1]))).collect(),
            other => {
                let s = short(other);
                self.mismatch(Some(b), "HOT.TOP error".into(), format!("{what}: {s}"));
                return;
            }
        };
        let mut want: Vec<(Vec<u8>, String, f64)> = Vec::new();
        for m in &members {
            let st = match self.arts.iter().position(|a| a == m) {
                Some(i) => parse_stats(&r[5 + i]),
                None => parse_stats(&self.raw(&[b"HOT.STATS", bk, m, b"AT", qs.as_bytes()])),
            };
            let Some(st) = st else { continue };
            if st.pv <= 0 {
                continue;
            }
            if let Some((_, wms)) = w {
                match st.published {
                    Some(p) if p <= q && p >= q - wms => {}
                    _ => continue,
                }
            }
            let f: f64 = st.score.parse().unwrap_or(f64::NAN);
            want.push((m.clone(), st.score, f));
        }
        want.sort_by(|x, y| y.2.total_cmp(&x.2).then_with(|| x.0.cmp(&y.0)));
        want.truncate(n);
        let want: Vec<(Vec<u8>, String)> = want.into_iter().map(|(a, s, _)| (a, s)).collect();
        if got != want {
            let fmt = |v: &[(Vec<u8>, String)]| {
                v.iter()
                    .map(|(a, s)| format!("{} {s}", a.escape_ascii()))
                    .collect::<Vec<_>>()
            };
            let mut detail = String::new();
            let _ = write!(
                detail,
                "{what}:\n  got  {:?}\n  want {:?}\n  members {:?}",
                fmt(&got),
                fmt(&want),
                members
                    .iter()
                    .map(|m| m.escape_ascii().to_string())
                    .collect::<Vec<_>>()
            );
            let cat = format!(
                "HOT.TOP differs ({})",
                if w.is_some() { "WINDOW" } else { "no WINDOW" }
            );
            self.mismatch(Some(b), cat, detail);
        }
    }

    fn step(&mut self) {
        self.step += 1;
        let r = self.rng.unit();
        match r {
            x if x < 0.62 => self.view(),
            x if x < 0.68 => self.publish(),
            x if x < 0.715 => self.formula_config(),
            x if x < 0.725 => self.invalid_config(),
            x if x < 0.745 => self.other_config(),
            x if x < 0.760 => self.retention(),
            x if x < 0.764 => self.drop_board(),
            x if x < 0.780 => self.trap(),
            x if x < 0.783 => self.foreign_board(),
            _ => {}
        }
        if self.rng.chance(0.65) {
            self.check();
        }
    }
}

/// Empty ZSETs crash Redis 7.0 on ZRANDMEMBER and DEBUG DIGEST: none may exist.
fn keyspace_is_sound(s: &mut Server, c: &mut Connection) -> Vec<String> {
    let mut bad = Vec::new();
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    for k in &keys {
        let t: String = redis::cmd("TYPE").arg(k).query(c).expect("TYPE");
        if t == "zset" && int(&ok(c, &[b"ZCARD", k])) == 0 {
            bad.push(format!("empty ZSET {}", k.escape_ascii()));
        }
    }
    if bad.is_empty() {
        if let Err(e) = run(c, &[b"DEBUG", b"DIGEST"]) {
            bad.push(format!("DEBUG DIGEST: {e}"));
        }
    }
    if !s.alive() {
        bad.push("the server died".into());
    }
    bad
}

#[test]
fn random_hostile_steps_keep_top_exact_and_failed_commands_write_nothing() {
    let seed = seed();
    println!(
        "seed {seed} (set HOTRANK_SEED={seed} to rerun), server {}",
        server_bin()
    );
    let mut s = Server::start_with(&["--enable-debug-command", "yes"], true);
    let c = s.conn();
    let mut h = Hostile {
        c,
        rng: Rng::new(seed),
        seed,
        step: 0,
        arts: articles(),
        vis: visitors(),
        history: Vec::new(),
        checks: 0,
        mismatches: 0,
        reports: Vec::new(),
        cfg: Cfg {
            dedup_s: 900,
            shards: 4096,
            vmax: 60,
        },
        counts: Default::default(),
        categories: Default::default(),
    };
    h.config("dedup-seconds", "900", true);
    h.config("dedup-shards", "4096", true);
    h.config("max-articles", "10", true);
    let start = Instant::now();
    while h.checks < MIN_CHECKS + 2_000 && start.elapsed() < TIME_BUDGET {
        h.step();
    }
    let elapsed = start.elapsed();
    let mut c2 = s.conn();
    let sound = keyspace_is_sound(&mut s, &mut c2);
    println!(
        "seed {seed}: {} steps, {} checks, {} mismatches in {elapsed:?}; {:?}",
        h.step, h.checks, h.mismatches, h.counts
    );
    for (cat, n) in &h.categories {
        println!("  mismatches: {n} × {cat}");
    }
    for r in &h.reports {
        println!("\n{r}");
    }
    assert!(sound.is_empty(), "seed {seed}: {sound:?}");
    assert_eq!(
        h.mismatches,
        0,
        "seed {seed}: {} mismatches; the first of each kind:\n{}",
        h.mismatches,
        h.reports.join("\n\n")
    );
    assert!(
        h.checks >= MIN_CHECKS,
        "seed {seed}: only {} checks in {elapsed:?}",
        h.checks
    );
}
