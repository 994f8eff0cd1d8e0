//! The generator of tests/fuzz.rs: the seed, the command and token tables,
//! the board names and [`Gen`], which makes random (syntax-shaped or raw)
//! invocations. Included with `#[path = "common/fuzz_gen.rs"] mod fuzz_gen;`.
#![allow(dead_code)]

use crate::common::now_s;
use crate::common::rng::Rng;

pub fn seed() -> u64 {
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

pub const COMMANDS: [&str; 25] = [
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
    "HOT.CREATE",
    "HOT.ALTER",
    "HOT.REM",
    "HOT.EXPORT",
    "HOT.INFO",
    "HOT.BOARDS",
    "RANK.INFO",
    "RANK.COUNT",
    "RANK.BOARDS",
];

pub const READ_ONLY: [&str; 14] = [
    "HOT.TOP",
    "HOT.STATS",
    "RANK.SCORE",
    "RANK.RANK",
    "RANK.RANGE",
    "RANK.AROUND",
    "RANK.RANGEBYSCORE",
    "RANK.CARD",
    "HOT.EXPORT",
    "HOT.INFO",
    "HOT.BOARDS",
    "RANK.INFO",
    "RANK.COUNT",
    "RANK.BOARDS",
];

pub const OPTIONS: [&str; 27] = [
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
pub const NUMBERS: [&str; 52] = [
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

pub const CONFIGS: [&str; 9] = [
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
pub fn hot_boards() -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..4)
        .map(|i| format!("hot:{{f{i}}}").into_bytes())
        .collect();
    v.push(b"hot:f4".to_vec());
    for p in ["hot:{p}", "hot:{p1}", "hot:{p2}", "hot:{p3}"] {
        v.push(p.as_bytes().to_vec());
    }
    v
}

pub fn rank_boards() -> Vec<Vec<u8>> {
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
pub fn other_boards() -> Vec<Vec<u8>> {
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

pub struct Gen {
    pub rng: Rng,
    pub now_s: i64,
    pub hot: Vec<Vec<u8>>,
    pub rank: Vec<Vec<u8>>,
    pub other: Vec<Vec<u8>>,
    pub ids: Vec<Vec<u8>>,
}

impl Gen {
    pub fn new(seed: u64) -> Gen {
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
            let n = rng.below_any(12) as usize;
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

    pub fn pick<T: Clone>(&mut self, v: &[T]) -> T {
        v[self.rng.below_any(v.len() as u64) as usize].clone()
    }

    pub fn any_board(&mut self) -> Vec<u8> {
        match self.rng.below_any(10) {
            0..=3 => self.pick(&self.hot.clone()),
            4..=7 => self.pick(&self.rank.clone()),
            _ => self.pick(&self.other.clone()),
        }
    }

    /// An article, visitor or member id: mostly a few common ones (so views
    /// repeat, dedup and the abnormal-traffic limit kick in), else any id.
    pub fn id(&mut self) -> Vec<u8> {
        match self.rng.below_any(40) {
            0 => self.token(),
            1..=19 => self.ids[self.rng.below_any(12) as usize].clone(),
            _ => self.pick(&self.ids.clone()),
        }
    }

    /// A unix time: mostly in the past (accepted by writes), sometimes the
    /// future, with 0–4 decimals.
    pub fn time(&mut self) -> Vec<u8> {
        let s = match self.rng.below_any(10) {
            0 => self.rng.below_any(2_000_000_000) as i64,
            1 => self.now_s + self.rng.below_any(100_000) as i64,
            2 => 1_577_836_800 + self.rng.below_any(10) as i64 - 5,
            _ => self.now_s - self.rng.below_any(30 * 86_400) as i64,
        };
        match self.rng.below_any(6) {
            0 => format!("{s}.{}", self.rng.below_any(1000)).into_bytes(),
            1 => format!("{s}.{:04}", self.rng.below_any(10_000)).into_bytes(),
            _ => s.to_string().into_bytes(),
        }
    }

    pub fn small_int(&mut self) -> Vec<u8> {
        (self.rng.below_any(40) as i64 - 10)
            .to_string()
            .into_bytes()
    }

    pub fn big_int(&mut self) -> Vec<u8> {
        let p = self.rng.below_any(64) as u32;
        let base = 1i128 << p;
        let v = match self.rng.below_any(4) {
            0 => base,
            1 => base - 1,
            2 => -base,
            _ => -base - 1,
        };
        v.to_string().into_bytes()
    }

    pub fn duration(&mut self) -> Vec<u8> {
        let n = self.rng.below_any(200);
        let unit = ["", "s", "m", "h", "d", "w", "ms"][self.rng.below_any(7) as usize];
        format!("{n}{unit}").into_bytes()
    }

    /// Any token.
    pub fn token(&mut self) -> Vec<u8> {
        match self.rng.below_any(100) {
            0..=24 => self.pick(&NUMBERS).as_bytes().to_vec(),
            25..=37 => self.pick(&OPTIONS).as_bytes().to_vec(),
            38..=52 => self.pick(&self.ids.clone()),
            53..=62 => self.any_board(),
            63..=74 => self.time(),
            75..=82 => self.small_int(),
            83..=88 => self.big_int(),
            89..=92 => self.duration(),
            93..=98 => {
                let n = self.rng.below_any(24) as usize;
                (0..n).map(|_| self.rng.next() as u8).collect()
            }
            _ => {
                if self.rng.one_in(150) {
                    // 64 KiB
                    let b = b'a' + self.rng.below_any(26) as u8;
                    vec![b; 64 * 1024]
                } else {
                    let n = self.rng.below_any(600) as usize;
                    (0..n).map(|_| self.rng.next() as u8).collect()
                }
            }
        }
    }

    /// `n` random option words with plausible values.
    pub fn options(&mut self, words: &[&str], out: &mut Vec<Vec<u8>>) {
        for _ in 0..self.rng.below_any(4) {
            let w = self.pick(words);
            out.push(w.as_bytes().to_vec());
            match w {
                "AT" => out.push(self.time()),
                "LIMIT" if out[0] == b"HOT.TOP" => out.push(match self.rng.below_any(4) {
                    0 => self.pick(&NUMBERS).as_bytes().to_vec(),
                    _ => (self.rng.below_any(30) + 1).to_string().into_bytes(),
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
                    if self.rng.one_in(2) {
                        out.push(b"AGO".to_vec());
                        out.push(self.small_int());
                    }
                }
                "AGO" => out.push(self.small_int()),
                "COUNT" => out.push(match self.rng.below_any(3) {
                    0 => self.pick(&NUMBERS).as_bytes().to_vec(),
                    _ => (self.rng.below_any(50) + 1).to_string().into_bytes(),
                }),
                "TIME" => out.push(self.time()),
                "MEMBER" => out.push(self.id()),
                "ALPHA" | "BETA" | "BASE" | "GAMMA" => out.push(match self.rng.below_any(3) {
                    0 => self.pick(&NUMBERS).as_bytes().to_vec(),
                    _ => {
                        format!("{}.{}", self.rng.below_any(3), self.rng.below_any(10)).into_bytes()
                    }
                }),
                "DEDUP-SECONDS"
                | "VISITOR-MAX-VIEWS"
                | "VISITOR-WINDOW-SECONDS"
                | "MAX-ARTICLES"
                | "RETENTION-SECONDS" => out.push(match self.rng.below_any(3) {
                    0 => self.pick(&NUMBERS).as_bytes().to_vec(),
                    _ => (self.rng.below_any(5000) + 1).to_string().into_bytes(),
                }),
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
                "MIN" | "MAX" => out.push(match self.rng.below_any(3) {
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
    pub fn shaped(&mut self, cmd: &str) -> Vec<Vec<u8>> {
        let mut a: Vec<Vec<u8>> = vec![cmd.as_bytes().to_vec()];
        if cmd.ends_with(".BOARDS") {
            // Keyless: a cursor, not a board.
            a.push(match self.rng.below_any(4) {
                0 => self.pick(&NUMBERS).as_bytes().to_vec(),
                1 => self.big_int(),
                _ => b"0".to_vec(),
            });
            self.options(&["COUNT"], &mut a);
            return a;
        }
        let hot = cmd.starts_with("HOT.");
        let board = if self.rng.one_in(6) {
            self.any_board()
        } else if hot {
            self.pick(&self.hot.clone())
        } else {
            self.pick(&self.rank.clone())
        };
        a.push(board);
        let value = |g: &mut Gen| match g.rng.below_any(6) {
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
                if self.rng.one_in(2) {
                    a.push(b"AT".to_vec());
                    a.push(self.time());
                }
            }
            "HOT.TOP" => self.options(&["LIMIT", "WINDOW", "WITHSCORES", "AT"], &mut a),
            "HOT.STATS" => {
                a.push(self.id());
                if self.rng.one_in(2) {
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
                if self.rng.one_in(2) {
                    a.push(b"AT".to_vec());
                    a.push(self.time());
                }
            }
            "RANK.SCORE" | "RANK.RANK" => {
                a.push(self.id());
                if self.rng.one_in(2) {
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
                if self.rng.one_in(2) {
                    a.push(b"WITHSCORES".to_vec());
                }
            }
            "RANK.AROUND" => {
                a.push(self.id());
                a.push(value(self));
            }
            "RANK.RANGEBYSCORE" => {
                for _ in 0..2 {
                    a.push(match self.rng.below_any(4) {
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
                for _ in 0..=self.rng.below_any(4) {
                    a.push(self.id());
                }
            }
            "RANK.REM" => {
                for _ in 0..=self.rng.below_any(4) {
                    a.push(self.id());
                }
            }
            "HOT.CREATE" | "HOT.ALTER" => self.options(
                &[
                    "ALPHA",
                    "BETA",
                    "BASE",
                    "GAMMA",
                    "DEDUP-SECONDS",
                    "VISITOR-MAX-VIEWS",
                    "VISITOR-WINDOW-SECONDS",
                    "MAX-ARTICLES",
                    "RETENTION-SECONDS",
                ],
                &mut a,
            ),
            "HOT.REM" => {
                for _ in 0..=self.rng.below_any(3) {
                    a.push(self.id());
                }
            }
            "HOT.EXPORT" => {
                a.push(match self.rng.below_any(4) {
                    0 => self.pick(&NUMBERS).as_bytes().to_vec(),
                    1 => self.small_int(),
                    _ => b"0".to_vec(),
                });
                self.options(&["COUNT", "AT"], &mut a);
            }
            "RANK.COUNT" => {
                a.push(value(self));
                self.options(&["TIME", "MEMBER", "PERIOD"], &mut a);
            }
            _ => {} // RANK.CARD, RANK.DROP, HOT.INFO, RANK.INFO
        }
        // Reads of a period board.
        if matches!(
            cmd,
            "RANK.SCORE" | "RANK.RANK" | "RANK.RANGE" | "RANK.AROUND" | "RANK.CARD"
        ) && self.rng.one_in(3)
        {
            self.options(&["PERIOD"], &mut a);
        }
        // Mutations: replace, insert or drop an argument.
        for arg in a.iter_mut().skip(1) {
            if self.rng.one_in(12) {
                *arg = self.token();
            }
        }
        if self.rng.one_in(10) {
            let at = 1 + self.rng.below_any(a.len() as u64) as usize;
            let t = self.token();
            a.insert(at.min(a.len()), t);
        }
        if a.len() > 1 && self.rng.one_in(12) {
            let at = 1 + self.rng.below_any(a.len() as u64 - 1) as usize;
            a.remove(at);
        }
        a
    }

    /// One invocation: shaped or raw (random arity 0–10), now and then a config change.
    pub fn invocation(&mut self) -> Vec<Vec<u8>> {
        if self.rng.one_in(2000) {
            let name = self.pick(&CONFIGS);
            let v = match self.rng.below_any(3) {
                // Redis echoes a refused config value in its own error: keep it
                // ASCII, since that error is not the module's.
                0 => Some(self.token())
                    .filter(|t| t.is_ascii() && t.len() < 100)
                    .unwrap_or_default(),
                _ => (self.rng.below_any(5000) + 1).to_string().into_bytes(),
            };
            return vec![
                b"CONFIG".to_vec(),
                b"SET".to_vec(),
                format!("hotrank.{name}").into_bytes(),
                v,
            ];
        }
        let mut cmd = self.pick(&COMMANDS).to_string();
        if self.rng.one_in(20) {
            cmd = cmd.to_lowercase();
        }
        if self.rng.below_any(3) < 2 {
            return self.shaped(&cmd.to_uppercase());
        }
        let n = self.rng.below_any(11) as usize;
        let mut a = vec![cmd.into_bytes()];
        for i in 0..n {
            a.push(if i == 0 && self.rng.below_any(10) < 7 {
                self.any_board()
            } else {
                self.token()
            });
        }
        a
    }
}
