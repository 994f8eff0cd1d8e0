//! Live-server fuzzer of every `HOT.*` and `RANK.*` command.
//!
//! `fuzz_every_command_keeps_the_server_alive_and_replies_well_formed` sends
//! `HOTRANK_FUZZ_N` (default 1,000,000) random invocations, pipelined in
//! batches of 1000, alternating a RESP2 and a RESP3 connection. Half of them
//! are shaped like the command's syntax (then mutated), half are a random
//! arity (0–10) of random tokens: raw bytes, NaN/inf/1e400/2^63 and other
//! edge numbers, empty and space-padded strings, 64 KiB strings, option
//! words in random places, times in the past and the future, and keys of
//! other types (string, list, hash, set, plain ZSET, stream) or corrupt
//! derived keys (bad counters, bad HyperLogLogs, bad layouts, foreign ZSET
//! scores) under names the fuzzer uses as boards. Now and then it changes a
//! `hotrank.*` config. Checks: every reply parses (errors are fine; a
//! connection or parse error fails the test), the server answers PING after
//! every batch and its process is alive, no reply is the panic-guard error and
//! `INFO hotrank` `panics_caught` stays 0.
//!
//! `failed_and_read_only_commands_write_nothing` runs random invocations one
//! at a time between two `DEBUG DIGEST`s: a failed command and a read-only
//! command must leave the dataset digest unchanged.
//!
//! Seeded: the seed is printed; `HOTRANK_FUZZ_SEED` reruns one. On a failure
//! the offending batch is written to `target/fuzz-failure-<seed>-<batch>.txt`.

mod common;
use common::*;
use hotrank::keys::{derived, Kind};
use redis::{Connection, Value};
use std::collections::BTreeMap;
use std::time::Instant;

// ---------------------------------------------------------------------------
// Generator
// ---------------------------------------------------------------------------

/// xorshift64*.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

fn seed() -> u64 {
    match std::env::var("HOTRANK_FUZZ_SEED") {
        Ok(s) => s
            .trim()
            .trim_start_matches("0x")
            .parse::<u64>()
            .or_else(|_| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16))
            .expect("HOTRANK_FUZZ_SEED: a decimal or 0x-hex u64"),
        Err(_) => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64;
            (t ^ (std::process::id() as u64).rotate_left(32)) | 1
        }
    }
}

const COMMANDS: [&str; 16] = [
    "HOT.PUBLISH",
    "HOT.VIEW",
    "HOT.TOP",
    "HOT.STATS",
    "RANK.CREATE",
    "RANK.INCR",
    "RANK.SET",
    "RANK.SCORE",
    "RANK.RANK",
    "RANK.RANGE",
    "RANK.AROUND",
    "RANK.RANGEBYSCORE",
    "RANK.MINCR",
    "RANK.REM",
    "RANK.CARD",
    "RANK.DROP",
];

const READ_ONLY: [&str; 8] = [
    "HOT.TOP",
    "HOT.STATS",
    "RANK.SCORE",
    "RANK.RANK",
    "RANK.RANGE",
    "RANK.AROUND",
    "RANK.RANGEBYSCORE",
    "RANK.CARD",
];

const OPTIONS: [&str; 27] = [
    "AT",
    "LIMIT",
    "WINDOW",
    "WITHSCORES",
    "RESOLUTION",
    "MIN",
    "MAX",
    "TIES",
    "WITHTIME",
    "at",
    "withScores",
    "s",
    "ms",
    "ORDER",
    "asc",
    "GT",
    "LT",
    "BEST",
    "best",
    "PERIODS",
    "PERIOD",
    "TZ",
    "KEEP",
    "AGO",
    "day",
    "Week",
    "month",
];

/// Edge numbers and strings.
const NUMBERS: [&str; 52] = [
    "NaN",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "+inf",
    "infinity",
    "1e400",
    "-1e400",
    "1e-400",
    "9223372036854775808",
    "-9223372036854775809",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "",
    " 1",
    "1 ",
    "+1",
    "1.2345",
    "1.",
    ".5",
    "0x10",
    "0",
    "-0",
    "00",
    "1",
    "-1",
    "2",
    "3",
    "20",
    "1000",
    "1001",
    "10000",
    "10001",
    "1e3",
    "1.5",
    "0.001",
    "1073741823",
    "1073741824",
    "-1073741824",
    "-1073741825",
    "1048575",
    "4294967296",
    "253402300799",
    "253402300800",
    "253402300799.999",
    "1577836800",
    "1577836799.999",
    "72h",
    "15m",
    "1.5d",
];

const CONFIGS: [&str; 9] = [
    "alpha",
    "beta",
    "base",
    "gamma",
    "dedup-seconds",
    "dedup-shards",
    "visitor-max-views",
    "visitor-window-seconds",
    "retention-seconds",
];

/// Boards the fuzzer writes to, and names it uses as boards.
fn hot_boards() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..4)
        .map(|i| format!("hot:{{f{i}}}").into_bytes())
        .collect();
    v.push(b"hot:f4".to_vec());
    for p in ["hot:{p}", "hot:{p1}", "hot:{p2}", "hot:{p3}"] {
        v.push(p.as_bytes().to_vec());
    }
    v
}

fn rank_boards() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..4)
        .map(|i| format!("lb:{{f{i}}}").into_bytes())
        .collect();
    v.push(b"lb:f4".to_vec());
    for p in ["lb:{p1}", "lb:{p2}", "lb:{p3}", "lb:{p4}", "lb:{p5}"] {
        v.push(p.as_bytes().to_vec());
    }
    v
}

/// Keys of other types, and names that are not valid boards.
fn other_boards() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = ["str", "list", "hash", "set", "zset", "stream"]
        .iter()
        .map(|t| format!("fz:{{t}}{t}").into_bytes())
        .collect();
    v.extend(
        [
            &b""[..],
            b"x{y",
            b"{}",
            b"a}b",
            b"nul\0key",
            b"hot:{f0}\0pv:a0",
            b"{",
            b"hot:{}",
        ]
        .iter()
        .map(|s| s.to_vec()),
    );
    v
}

struct Gen {
    rng: Rng,
    now_s: i64,
    hot: Vec<Vec<u8>>,
    rank: Vec<Vec<u8>>,
    other: Vec<Vec<u8>>,
    ids: Vec<Vec<u8>>,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        let mut rng = Rng(seed);
        let mut ids: Vec<Vec<u8>> = (0..10)
            .flat_map(|i| {
                [
                    format!("a{i}").into_bytes(),
                    format!("v{i}").into_bytes(),
                    format!("m{i}").into_bytes(),
                ]
            })
            .collect();
        ids.extend(
            [
                &b""[..],
                b"\0",
                b"{x}",
                b"}{",
                b"a b",
                b"a:b:c",
                "é".as_bytes(),
                b"\xff\xfe",
                b"\r\n",
                b"*3\r\n$3\r\n",
            ]
            .iter()
            .map(|s| s.to_vec()),
        );
        ids.push(vec![b'x'; 300]);
        for _ in 0..20 {
            let n = rng.below(12) as usize;
            ids.push((0..n).map(|_| rng.next() as u8).collect());
        }
        Gen {
            rng,
            now_s: now_s(),
            hot: hot_boards(),
            rank: rank_boards(),
            other: other_boards(),
            ids,
        }
    }

    fn pick<T: Clone>(&mut self, v: &[T]) -> T {
        v[self.rng.below(v.len() as u64) as usize].clone()
    }

    fn any_board(&mut self) -> Vec<u8> {
        match self.rng.below(10) {
            0..=3 => self.pick(&self.hot.clone()),
            4..=7 => self.pick(&self.rank.clone()),
            _ => self.pick(&self.other.clone()),
        }
    }

    /// An article, visitor or member id: mostly a few common ones (so views
    /// repeat, dedup and the abnormal-traffic limit kick in), else any id.
    fn id(&mut self) -> Vec<u8> {
        match self.rng.below(40) {
            0 => self.token(),
            1..=19 => self.ids[self.rng.below(12) as usize].clone(),
            _ => self.pick(&self.ids.clone()),
        }
    }

    /// A unix time: mostly in the past (accepted by writes), sometimes the
    /// future, with 0–4 decimals.
    fn time(&mut self) -> Vec<u8> {
        let s = match self.rng.below(10) {
            0 => self.rng.below(2_000_000_000) as i64,
            1 => self.now_s + self.rng.below(100_000) as i64,
            2 => 1_577_836_800 + self.rng.below(10) as i64 - 5,
            _ => self.now_s - self.rng.below(30 * 86_400) as i64,
        };
        match self.rng.below(6) {
            0 => format!("{s}.{}", self.rng.below(1000)).into_bytes(),
            1 => format!("{s}.{:04}", self.rng.below(10_000)).into_bytes(),
            _ => s.to_string().into_bytes(),
        }
    }

    fn small_int(&mut self) -> Vec<u8> {
        (self.rng.below(40) as i64 - 10).to_string().into_bytes()
    }

    fn big_int(&mut self) -> Vec<u8> {
        let p = self.rng.below(64) as u32;
        let base = 1i128 << p;
        let v = match self.rng.below(4) {
            0 => base,
            1 => base - 1,
            2 => -base,
            _ => -base - 1,
        };
        v.to_string().into_bytes()
    }

    fn duration(&mut self) -> Vec<u8> {
        let n = self.rng.below(200);
        let unit = ["", "s", "m", "h", "d", "w", "ms"][self.rng.below(7) as usize];
        format!("{n}{unit}").into_bytes()
    }

    /// Any token.
    fn token(&mut self) -> Vec<u8> {
        match self.rng.below(100) {
            0..=24 => self.pick(&NUMBERS).as_bytes().to_vec(),
            25..=37 => self.pick(&OPTIONS).as_bytes().to_vec(),
            38..=52 => self.pick(&self.ids.clone()),
            53..=62 => self.any_board(),
            63..=74 => self.time(),
            75..=82 => self.small_int(),
            83..=88 => self.big_int(),
            89..=92 => self.duration(),
            93..=98 => {
                let n = self.rng.below(24) as usize;
                (0..n).map(|_| self.rng.next() as u8).collect()
            }
            _ => {
                if self.rng.chance(150) {
                    // 64 KiB
                    let b = b'a' + self.rng.below(26) as u8;
                    vec![b; 64 * 1024]
                } else {
                    let n = self.rng.below(600) as usize;
                    (0..n).map(|_| self.rng.next() as u8).collect()
                }
            }
        }
    }

    /// `n` random option words with plausible values.
    fn options(&mut self, words: &[&str], out: &mut Vec<Vec<u8>>) {
        for _ in 0..self.rng.below(4) {
            let w = self.pick(words);
            out.push(w.as_bytes().to_vec());
            match w {
                "AT" => out.push(self.time()),
                "LIMIT" if out[0] == b"HOT.TOP" => out.push(match self.rng.below(4) {
                    0 => self.pick(&NUMBERS).as_bytes().to_vec(),
                    _ => (self.rng.below(30) + 1).to_string().into_bytes(),
                }),
                "LIMIT" => {
                    out.push(self.small_int());
                    out.push(self.small_int());
                }
                "WINDOW" => out.push(self.duration()),
                "PERIODS" => {
                    for _ in 0..=self.rng.below(3) {
                        out.push(self.period_name());
                    }
                }
                "PERIOD" => {
                    out.push(self.period_name());
                    if self.rng.chance(2) {
                        out.push(b"AGO".to_vec());
                        out.push(self.small_int());
                    }
                }
                "AGO" => out.push(self.small_int()),
                "TZ" => out.push(
                    self.pick(&[
                        "+00:00", "-14:00", "+14:00", "+05:45", "-03:30", "+14:01", "UTC", "05:00",
                        "",
                    ])
                    .as_bytes()
                    .to_vec(),
                ),
                "KEEP" => out.push(
                    self.pick(&["0", "1", "2", "40", "10000", "10001", "-1", "x"])
                        .as_bytes()
                        .to_vec(),
                ),
                "ORDER" => out.push(
                    self.pick(&["asc", "desc", "ASC", "Desc", "up", ""])
                        .as_bytes()
                        .to_vec(),
                ),
                "RESOLUTION" => out.push(
                    self.pick(&["s", "ms", "S", "MS", "us", ""])
                        .as_bytes()
                        .to_vec(),
                ),
                "MIN" | "MAX" => out.push(match self.rng.below(3) {
                    0 => self.big_int(),
                    _ => self.small_int(),
                }),
                _ => {}
            }
        }
    }

    /// A period name for PERIODS or PERIOD, now and then a wrong one.
    fn period_name(&mut self) -> Vec<u8> {
        self.pick(&["day", "week", "month", "DAY", "Month", "year", ""])
            .as_bytes()
            .to_vec()
    }

    /// An invocation shaped like the command's syntax.
    fn shaped(&mut self, cmd: &str) -> Vec<Vec<u8>> {
        let mut a: Vec<Vec<u8>> = vec![cmd.as_bytes().to_vec()];
        let hot = cmd.starts_with("HOT.");
        let board = if self.rng.chance(6) {
            self.any_board()
        } else if hot {
            self.pick(&self.hot.clone())
        } else {
            self.pick(&self.rank.clone())
        };
        a.push(board);
        let value = |g: &mut Gen| match g.rng.below(6) {
            0 => g.big_int(),
            1 => g.pick(&NUMBERS).as_bytes().to_vec(),
            _ => g.small_int(),
        };
        match cmd {
            "HOT.PUBLISH" => {
                a.push(self.id());
                a.push(self.time());
            }
            "HOT.VIEW" => {
                a.push(self.id());
                a.push(self.id());
                if self.rng.chance(2) {
                    a.push(b"AT".to_vec());
                    a.push(self.time());
                }
            }
            "HOT.TOP" => self.options(&["LIMIT", "WINDOW", "WITHSCORES", "AT"], &mut a),
            "HOT.STATS" => {
                a.push(self.id());
                if self.rng.chance(2) {
                    a.push(b"AT".to_vec());
                    a.push(self.time());
                }
            }
            "RANK.CREATE" => self.options(
                &[
                    "RESOLUTION",
                    "MIN",
                    "MAX",
                    "ORDER",
                    "PERIODS",
                    "PERIODS",
                    "TZ",
                    "KEEP",
                ],
                &mut a,
            ),
            "RANK.SET" => {
                a.push(self.id());
                a.push(value(self));
                self.options(&["GT", "LT", "BEST", "AT"], &mut a);
            }
            "RANK.INCR" => {
                a.push(self.id());
                a.push(value(self));
                if self.rng.chance(2) {
                    a.push(b"AT".to_vec());
                    a.push(self.time());
                }
            }
            "RANK.SCORE" | "RANK.RANK" => {
                a.push(self.id());
                if self.rng.chance(2) {
                    a.push(if cmd == "RANK.SCORE" {
                        b"WITHTIME".to_vec()
                    } else {
                        b"TIES".to_vec()
                    });
                }
            }
            "RANK.RANGE" => {
                a.push(self.small_int());
                a.push(self.small_int());
                if self.rng.chance(2) {
                    a.push(b"WITHSCORES".to_vec());
                }
            }
            "RANK.AROUND" => {
                a.push(self.id());
                a.push(value(self));
            }
            "RANK.RANGEBYSCORE" => {
                for _ in 0..2 {
                    a.push(match self.rng.below(4) {
                        0 => self
                            .pick(&["-inf", "+inf", "inf", "-INF"])
                            .as_bytes()
                            .to_vec(),
                        _ => value(self),
                    });
                }
                self.options(&["LIMIT", "WITHSCORES", "PERIOD"], &mut a);
            }
            "RANK.MINCR" => {
                a.push(value(self));
                for _ in 0..=self.rng.below(4) {
                    a.push(self.id());
                }
            }
            "RANK.REM" => {
                for _ in 0..=self.rng.below(4) {
                    a.push(self.id());
                }
            }
            _ => {} // RANK.CARD, RANK.DROP
        }
        // Reads of a period board.
        if matches!(
            cmd,
            "RANK.SCORE" | "RANK.RANK" | "RANK.RANGE" | "RANK.AROUND" | "RANK.CARD"
        ) && self.rng.chance(3)
        {
            self.options(&["PERIOD"], &mut a);
        }
        // Mutations: replace, insert or drop an argument.
        for i in 1..a.len() {
            if self.rng.chance(12) {
                a[i] = self.token();
            }
        }
        if self.rng.chance(10) {
            let at = 1 + self.rng.below(a.len() as u64) as usize;
            let t = self.token();
            a.insert(at.min(a.len()), t);
        }
        if a.len() > 1 && self.rng.chance(12) {
            let at = 1 + self.rng.below(a.len() as u64 - 1) as usize;
            a.remove(at);
        }
        a
    }

    /// One invocation: shaped or raw (random arity 0–10), now and then a config change.
    fn invocation(&mut self) -> Vec<Vec<u8>> {
        if self.rng.chance(2000) {
            let name = self.pick(&CONFIGS);
            let v = match self.rng.below(3) {
                // Redis echoes a refused config value in its own error: keep it
                // ASCII, since that error is not the module's.
                0 => Some(self.token())
                    .filter(|t| t.is_ascii() && t.len() < 100)
                    .unwrap_or_default(),
                _ => (self.rng.below(5000) + 1).to_string().into_bytes(),
            };
            return vec![
                b"CONFIG".to_vec(),
                b"SET".to_vec(),
                format!("hotrank.{name}").into_bytes(),
                v,
            ];
        }
        let mut cmd = self.pick(&COMMANDS).to_string();
        if self.rng.chance(20) {
            cmd = cmd.to_lowercase();
        }
        if self.rng.below(3) < 2 {
            return self.shaped(&cmd.to_uppercase());
        }
        let n = self.rng.below(11) as usize;
        let mut a = vec![cmd.into_bytes()];
        for i in 0..n {
            a.push(if i == 0 && self.rng.below(10) < 7 {
                self.any_board()
            } else {
                self.token()
            });
        }
        a
    }
}

// ---------------------------------------------------------------------------
// Server-side setup
// ---------------------------------------------------------------------------

fn cmd_of(args: &[Vec<u8>]) -> redis::Cmd {
    let mut c = redis::cmd(std::str::from_utf8(&args[0]).unwrap_or("INVALID"));
    for a in &args[1..] {
        c.arg(a.as_slice());
    }
    c
}

fn s(v: &str) -> Vec<u8> {
    v.as_bytes().to_vec()
}

/// Keys of other types under board names, and corrupt derived keys.
fn plant(c: &mut Connection) {
    let now_ms = now_s() * 1000;
    let mut cmds: Vec<Vec<Vec<u8>>> = Vec::new();
    let mut add = |parts: Vec<Vec<u8>>| cmds.push(parts);
    let other = other_boards();
    for k in &other[..6] {
        add(vec![s("DEL"), k.clone()]);
    }
    add(vec![s("SET"), s("fz:{t}str"), s("hello")]);
    add(vec![s("RPUSH"), s("fz:{t}list"), s("a"), s("b")]);
    add(vec![s("HSET"), s("fz:{t}hash"), s("f"), s("v")]);
    add(vec![s("SADD"), s("fz:{t}set"), s("a"), s("b")]);
    add(vec![
        s("ZADD"),
        s("fz:{t}zset"),
        s("1"),
        s("a0"),
        s("2"),
        s("m1"),
        s("-inf"),
        s("v0"),
    ]);
    add(vec![s("XADD"), s("fz:{t}stream"), s("*"), s("f"), s("v")]);

    // hot:{p}: article-level corruption.
    let p = b"hot:{p}";
    let d = |kind: Kind, parts: &[&[u8]]| derived(p, kind, parts);
    add(vec![
        s("ZADD"),
        p.to_vec(),
        s("5"),
        s("a0"),
        s("3"),
        s("a1"),
        s("1e308"),
        s("a2"),
        s("-inf"),
        s("a3"),
        s("inf"),
        s("a4"),
        s("0"),
        s("a5"),
    ]);
    add(vec![s("SET"), d(Kind::Pv, &[b"a0"]), s("notanumber")]);
    add(vec![s("SET"), d(Kind::Uv, &[b"a1"]), s("HYLL\x01junk")]);
    add(vec![s("SET"), d(Kind::Uv, &[b"a2"]), s("garbage")]);
    add(vec![s("DEL"), d(Kind::Meta, &[b"a3"])]);
    add(vec![s("RPUSH"), d(Kind::Meta, &[b"a3"]), s("x")]);
    add(vec![
        s("HSET"),
        d(Kind::Meta, &[b"a4"]),
        s("pv"),
        s("9223372036854775807"),
        s("uv"),
        s("-5"),
        s("publishedAt"),
        s("-9223372036854775808"),
    ]);
    add(vec![
        s("HSET"),
        d(Kind::Meta, &[b"a5"]),
        s("pv"),
        s("abc"),
        s("publishedAt"),
        s("253402300799999"),
    ]);
    add(vec![
        s("SET"),
        d(Kind::Pv, &[b"a6"]),
        s("9223372036854775807"),
    ]);
    add(vec![
        s("SET"),
        d(Kind::Suspicious, &[b"a7"]),
        s("9223372036854775807"),
    ]);
    add(vec![
        s("SET"),
        d(Kind::Pv, &[b"a8"]),
        s("-9223372036854775808"),
    ]);
    let vwin = format!("3600:{}", now_ms.div_euclid(3_600_000));
    add(vec![
        s("SET"),
        d(Kind::VisitorViews, &[vwin.as_bytes(), b"v9"]),
        s("9223372036854775807"),
    ]);
    add(vec![
        s("SET"),
        d(Kind::VisitorViews, &[vwin.as_bytes(), b"v8"]),
        s("nope"),
    ]);
    let gen = now_ms.div_euclid(900_000);
    for (article, visitor, list) in [
        (&b"a0"[..], &b"v1"[..], true),
        (b"a1", b"v1", false),
        (b"a9", b"v9", false),
    ] {
        let fp = hotrank::hot::dedup::fingerprint(article, visitor);
        let shard = hotrank::hot::dedup::shard(fp, 4096);
        for g in [gen, gen - 1] {
            let name = d(Kind::Dedup, &[format!("900:{g}:{shard}").as_bytes()]);
            add(vec![s("DEL"), name.clone()]);
            if list {
                add(vec![s("RPUSH"), name, s("x")]);
            } else {
                // Not a whole number of 12-byte entries, with the pair's fingerprint.
                let mut v = fp.to_le_bytes().to_vec();
                v.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3]);
                add(vec![s("SET"), name, v]);
            }
        }
    }
    // hot:{p1}: board hash of the wrong type; hot:{p2}: garbage in it; hot:{p3}: publish index of the wrong type.
    add(vec![
        s("SET"),
        derived(b"hot:{p1}", Kind::HotBoard, &[]),
        s("x"),
    ]);
    add(vec![
        s("HSET"),
        derived(b"hot:{p2}", Kind::HotBoard, &[]),
        s("maxViewAt"),
        s("-9223372036854775808"),
        s("fp"),
        s("junk"),
    ]);
    add(vec![
        s("SET"),
        derived(b"hot:{p3}", Kind::PubIndex, &[]),
        s("x"),
    ]);

    // RANK boards with bad layouts, and foreign scores under a valid layout.
    let layout = |b: &[u8]| derived(b, Kind::Layout, &[]);
    add(vec![s("SET"), layout(b"lb:{p1}"), s("garbage")]);
    add(vec![s("DEL"), layout(b"lb:{p2}")]);
    add(vec![s("HSET"), layout(b"lb:{p2}"), s("v1"), s("s")]);
    add(vec![
        s("SET"),
        layout(b"lb:{p3}"),
        s("v1 s -9223372036854775808 9223372036854775807"),
    ]);
    add(vec![s("SET"), layout(b"lb:{p4}"), s("v1 ms -5 5")]);
    add(vec![
        s("ZADD"),
        s("lb:{p4}"),
        s("inf"),
        s("m0"),
        s("-inf"),
        s("m1"),
        s("0"),
        s("m2"),
        s("5e-324"),
        s("m3"),
        s("2.2250738585072014e-308"),
        s("m4"),
        s("1e308"),
        s("m5"),
        s("-1"),
        s("m6"),
        s("4.5"),
        s("m7"),
    ]);
    add(vec![s("SET"), layout(b"lb:{p5}"), s("v1 s 0 1")]);
    add(vec![
        s("ZADD"),
        s("lb:{p5}"),
        s("2.2250738585072014e-308"),
        s("m0"),
    ]);

    let mut pipe = redis::pipe();
    for c in &cmds {
        pipe.add_command(cmd_of(c));
    }
    let r: Vec<Value> = pipe.ignore_errors().query(c).expect("plant");
    for (v, c) in r.iter().zip(&cmds) {
        assert!(
            !matches!(v, Value::ServerError(_)),
            "plant {:?}: {v:?}",
            show(c)
        );
    }
}

fn set_defaults(c: &mut Connection) {
    for (k, v) in [
        ("alpha", "1.0"),
        ("beta", "1.2"),
        ("base", "2"),
        ("gamma", "1.5"),
        ("dedup-seconds", "900"),
        ("dedup-shards", "4096"),
        // Low, so the abnormal-traffic path runs often.
        ("visitor-max-views", "20"),
        ("visitor-window-seconds", "3600"),
        ("retention-seconds", "7776000"),
        // Small boards: trimming runs often, and HOT.TOP stays cheap.
        ("max-articles", "50"),
    ] {
        let () = redis::cmd("CONFIG")
            .arg("SET")
            .arg(format!("hotrank.{k}"))
            .arg(v)
            .query(c)
            .unwrap_or_else(|e| panic!("CONFIG SET hotrank.{k} {v}: {e}"));
    }
}

/// Keeps the boards small so the random reads stay cheap.
fn trim_boards(c: &mut Connection) {
    let mut pipe = redis::pipe();
    for b in hot_boards().iter().chain(rank_boards().iter()) {
        pipe.cmd("ZREMRANGEBYRANK")
            .arg(b.as_slice())
            .arg(200)
            .arg(-1)
            .ignore();
    }
    for b in hot_boards() {
        let idx = derived(&b, Kind::PubIndex, &[]);
        pipe.cmd("ZREMRANGEBYRANK")
            .arg(idx)
            .arg(300)
            .arg(-1)
            .ignore();
    }
    let _: Value = pipe.ignore_errors().query(c).expect("trim");
}

fn info_hotrank(c: &mut Connection) -> BTreeMap<String, i64> {
    let s: String = redis::cmd("INFO")
        .arg("hotrank")
        .query(c)
        .expect("INFO hotrank");
    s.lines()
        .filter_map(|l| l.strip_prefix("hotrank_"))
        .filter_map(|l| l.split_once(':'))
        .filter_map(|(k, v)| Some((k.to_string(), v.trim().parse().ok()?)))
        .collect()
}

fn show(args: &[Vec<u8>]) -> String {
    args.iter()
        .map(|a| {
            if a.len() > 80 {
                format!(
                    "<{} bytes {:?}…>",
                    a.len(),
                    String::from_utf8_lossy(&a[..16])
                )
            } else {
                format!("{:?}", String::from_utf8_lossy(a))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes a batch in a replayable form (one command a line, arguments hex-escaped).
fn dump_batch(seed: u64, batch: usize, cmds: &[Vec<Vec<u8>>], why: &str) -> String {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    let path = dir.join(format!("fuzz-failure-{seed}-{batch}.txt"));
    let mut out = format!("# seed {seed} batch {batch}: {}\n", why.replace('\n', " "));
    for c in cmds {
        let line: Vec<String> = c
            .iter()
            .map(|a| a.iter().map(|b| format!("{b:02x}")).collect::<String>())
            .collect();
        out.push_str(&line.join(" "));
        out.push('\n');
    }
    let _ = std::fs::write(&path, out);
    path.display().to_string()
}

fn error_code(v: &Value) -> Option<String> {
    match v {
        Value::ServerError(e) => Some(e.code().split_whitespace().next().unwrap_or("").to_string()),
        _ => None,
    }
}

fn error_text(v: &Value) -> String {
    match v {
        Value::ServerError(e) => format!("{} {}", e.code(), e.details().unwrap_or("")),
        _ => String::new(),
    }
}

type Snapshot = BTreeMap<Vec<u8>, (Vec<u8>, i64)>;

/// Every key: DUMP payload and absolute expiry in ms (0 for none).
fn full_snapshot(c: &mut Connection) -> Snapshot {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    let mut pipe = redis::pipe();
    for k in &keys {
        pipe.cmd("DUMP").arg(k).cmd("PEXPIRETIME").arg(k);
    }
    let r: Vec<Value> = pipe.query(c).expect("DUMP");
    keys.into_iter()
        .zip(r.chunks(2))
        .filter_map(|(k, v)| match (&v[0], &v[1]) {
            (Value::BulkString(d), Value::Int(e)) => Some((k, (d.clone(), (*e).max(0)))),
            _ => None, // expired meanwhile
        })
        .collect()
}

fn restore_snapshot(c: &mut Connection, snap: &Snapshot) {
    let () = redis::cmd("FLUSHALL").query(c).expect("FLUSHALL");
    let mut pipe = redis::pipe();
    for (k, (dump, exp)) in snap {
        pipe.cmd("RESTORE")
            .arg(k)
            .arg(*exp)
            .arg(dump)
            .arg("ABSTTL")
            .ignore();
    }
    let () = pipe.query(c).expect("RESTORE");
}

fn diff(before: &Snapshot, after: &Snapshot) -> String {
    let name = |k: &[u8]| format!("{}", k.escape_ascii());
    let mut out = Vec::new();
    for (k, v) in after {
        match before.get(k) {
            None => out.push(format!("added {}", name(k))),
            Some(b) if b != v => out.push(format!(
                "changed {}{}",
                name(k),
                if b.0 == v.0 { " (expiry only)" } else { "" }
            )),
            _ => {}
        }
    }
    for k in before.keys().filter(|k| !after.contains_key(*k)) {
        out.push(format!("removed {}", name(k)));
    }
    if out.is_empty() {
        "no change on replay".into()
    } else {
        out.join(", ")
    }
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn fuzz_every_command_keeps_the_server_alive_and_replies_well_formed() {
    let total: usize = std::env::var("HOTRANK_FUZZ_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let seed = seed();
    println!("fuzz seed {seed} (HOTRANK_FUZZ_SEED={seed} reruns it), {total} invocations");
    let mut server = Server::start();
    let mut c2 = server.conn();
    let mut c3 = redis::Client::open(format!("{}?protocol=resp3", server.url()))
        .expect("client")
        .get_connection()
        .expect("RESP3 connection");
    set_defaults(&mut c2);
    plant(&mut c2);
    let mut g = Gen::new(seed);

    const BATCH: usize = 1000;
    let started = Instant::now();
    let mut sent = 0usize;
    let mut batch_no = 0usize;
    let mut codes: BTreeMap<String, u64> = BTreeMap::new();
    let mut per_cmd_ok: BTreeMap<String, u64> = BTreeMap::new();
    let mut panics: Vec<String> = Vec::new();
    while sent < total {
        let n = BATCH.min(total - sent);
        let cmds: Vec<Vec<Vec<u8>>> = (0..n).map(|_| g.invocation()).collect();
        let mut pipe = redis::pipe();
        for a in &cmds {
            pipe.add_command(cmd_of(a));
        }
        let conn = if batch_no % 2 == 0 { &mut c2 } else { &mut c3 };
        let replies: Vec<Value> = match pipe.ignore_errors().query(conn) {
            Ok(r) => r,
            Err(e) => {
                let alive = server.alive();
                let path = dump_batch(seed, batch_no, &cmds, &format!("{e}"));
                panic!(
                    "batch {batch_no} (seed {seed}): the pipeline failed: {e}; server alive: {alive}; \
                     batch written to {path}"
                );
            }
        };
        assert_eq!(replies.len(), n, "batch {batch_no}: reply count");
        for (v, a) in replies.iter().zip(&cmds) {
            match error_code(v) {
                Some(code) => {
                    *codes.entry(code).or_default() += 1;
                    if error_text(v).contains("caught a panic") {
                        panics.push(show(a));
                    }
                }
                None => {
                    *per_cmd_ok
                        .entry(String::from_utf8_lossy(&a[0]).to_uppercase())
                        .or_default() += 1
                }
            }
        }
        let pong: String = redis::cmd("PING")
            .query(conn)
            .unwrap_or_else(|e| panic!("batch {batch_no} (seed {seed}): PING failed: {e}"));
        assert_eq!(pong, "PONG");
        assert!(
            server.alive(),
            "batch {batch_no} (seed {seed}): the server died"
        );
        assert!(
            panics.is_empty(),
            "seed {seed}, batch {batch_no}: caught panics on:\n  {}\n(batch written to {})",
            panics.join("\n  "),
            dump_batch(seed, batch_no, &cmds, "caught panic")
        );
        sent += n;
        batch_no += 1;
        trim_boards(&mut c2);
        if batch_no % 100 == 0 {
            assert_eq!(
                info_hotrank(&mut c2).get("panics_caught").copied(),
                Some(0),
                "seed {seed}: panics_caught after batch {batch_no}"
            );
            // A fresh start now and then: boards are created again, layouts too.
            if batch_no % 300 == 0 {
                let () = redis::cmd("FLUSHALL").query(&mut c2).expect("FLUSHALL");
                set_defaults(&mut c2);
                plant(&mut c2);
            }
        }
        if batch_no % 20 == 0 {
            // Back to sane configs after the fuzzer changed them for a while,
            // and the planted keys again (views may have deleted some).
            set_defaults(&mut c2);
            plant(&mut c2);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let info = info_hotrank(&mut c2);
    println!(
        "{sent} invocations in {elapsed:.1} s ({:.0}/s); successes by command: {per_cmd_ok:?}; \
         errors by code: {codes:?}; INFO hotrank: {info:?}",
        sent as f64 / elapsed
    );
    assert_eq!(info.get("panics_caught").copied(), Some(0), "seed {seed}");
    // Every error is one the module documents.
    for code in codes.keys() {
        assert!(
            ["ERR", "WRONGTYPE", "INVALIDOBJ"].contains(&code.as_str()),
            "seed {seed}: unexpected error code {code} ({codes:?})"
        );
    }
    // The fuzzer reached the real work of every command, not only its errors.
    for cmd in COMMANDS {
        assert!(
            per_cmd_ok.get(cmd).copied().unwrap_or(0) > 0,
            "seed {seed}: {cmd} never succeeded ({per_cmd_ok:?})"
        );
    }
    assert!(info.get("views_counted").copied().unwrap_or(0) > 0);
    assert!(
        info.get("trims").copied().unwrap_or(0) > 0,
        "no trim ran: {info:?}"
    );
}

#[test]
fn failed_and_read_only_commands_write_nothing() {
    let n: usize = std::env::var("HOTRANK_FUZZ_N")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map(|v| (v / 50).max(100))
        .unwrap_or(20_000);
    let raw_seed = seed();
    let seed = raw_seed ^ 0x5a5a;
    println!("digest fuzz: HOTRANK_FUZZ_SEED={raw_seed} reruns it, {n} invocations");
    let mut server = Server::start_with(&["--enable-debug-command", "yes"], true);
    let mut c = server.conn();
    set_defaults(&mut c);
    plant(&mut c);
    let mut g = Gen::new(seed);
    let mut done = 0;
    let mut checked_failures = 0;
    let mut checked_reads = 0;
    let mut problems = Vec::new();
    while done < n {
        let k = 200.min(n - done);
        let mut cmds = Vec::with_capacity(k);
        while cmds.len() < k {
            let a = g.invocation();
            if a[0] != b"CONFIG" {
                cmds.push(a);
            }
        }
        let start = full_snapshot(&mut c);
        let mut pipe = redis::pipe();
        pipe.cmd("DEBUG").arg("DIGEST");
        for a in &cmds {
            pipe.add_command(cmd_of(a));
            pipe.cmd("DEBUG").arg("DIGEST");
        }
        let r: Vec<Value> = pipe
            .ignore_errors()
            .query(&mut c)
            .unwrap_or_else(|e| panic!("seed {seed}: pipeline failed: {e}"));
        for (i, a) in cmds.iter().enumerate() {
            let (before, reply, after) = (&r[2 * i], &r[2 * i + 1], &r[2 * i + 2]);
            let name = String::from_utf8_lossy(&a[0]).to_uppercase();
            let failed = matches!(reply, Value::ServerError(_));
            let read_only = READ_ONLY.contains(&name.as_str());
            if failed {
                checked_failures += 1;
            } else if read_only {
                checked_reads += 1;
            }
            if (failed || read_only) && before != after && problems.len() < 10 {
                problems.push((
                    format!(
                        "{} -> {}",
                        show(a),
                        if failed {
                            error_text(reply)
                        } else {
                            format!("{reply:?}")
                        }
                    ),
                    start.clone(),
                    cmds[..=i].to_vec(),
                ));
            }
        }
        assert!(server.alive());
        done += k;
        // A small dataset keeps DEBUG DIGEST cheap.
        if done % 2000 == 0 {
            let () = redis::cmd("FLUSHALL").query(&mut c).expect("FLUSHALL");
            plant(&mut c);
        }
    }
    println!("{checked_failures} failed and {checked_reads} read-only invocations checked");
    assert!(checked_failures > n / 4 && checked_reads > n / 20);
    // Replays each offending invocation from the snapshot taken before its
    // batch, to show which keys it changed.
    let mut report = Vec::new();
    for (what, snap, prefix) in &problems {
        let (last, before_it) = prefix.split_last().unwrap();
        restore_snapshot(&mut c, snap);
        for a in before_it {
            let _: redis::RedisResult<Value> = cmd_of(a).query(&mut c);
        }
        let before = full_snapshot(&mut c);
        let _: redis::RedisResult<Value> = cmd_of(last).query(&mut c);
        let after = full_snapshot(&mut c);
        report.push(format!("{what}\n      replayed: {}", diff(&before, &after)));
    }
    assert!(
        problems.is_empty(),
        "HOTRANK_FUZZ_SEED={raw_seed}: {} invocations changed the dataset although they failed \
         or are read-only:\n  {}",
        problems.len(),
        report.join("\n  ")
    );
}
