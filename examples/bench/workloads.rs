//! The redis-benchmark workloads of the throughput section, declared once: command,
//! module configs, setup, and the baselines each one is compared with.
//!
//! To add a workload, add a `Workload` to the group it is measured with (the rows of a
//! group run back to back, so drift hits them alike); give it a `vs` entry to have its
//! ratio to a baseline in the targets table (and its CPU per operation compared in the
//! `srv µs/op` table). For example, the RANK.INCR on a board with periods
//! (in the RANK.INCR group), with a setup command that creates its board.

use crate::{BOARD, LUA_PLAIN_NAME, RB_KEYSPACE};

/// Board of the HOT.VIEW throughput runs: 100,000 articles, as in the issue.
pub const WRITE_BOARD: &str = "hot:{bench2}";
/// Configs that keep the whole 100,000-article write board (no trimming).
pub const KEEP_BOARD: (&str, &str) = ("hotrank.max-articles", "1000000");

/// Filled in at run time in a workload's arguments: the SHA1 of the Lua recipe
/// (`examples/view.lua`), of the seed's plain script, and the dedup window (s).
pub const VIEW_SHA: &str = "$VIEW_SHA";
pub const PLAIN_SHA: &str = "$PLAIN_SHA";
pub const DEDUP_S: &str = "$DEDUP_S";

/// How a workload's rps must compare with its baseline's.
#[derive(Clone, Copy, Debug)]
pub enum Bound {
    /// rps(workload) / rps(baseline) at least this.
    AtLeast(f64),
    /// rps(baseline) / rps(workload) at most this: how many times faster the baseline
    /// may be.
    AtMost(f64),
    /// No target: rps(workload) / rps(baseline), shown for comparison.
    Shown,
}

impl Bound {
    pub fn text(self) -> String {
        match self {
            Bound::AtLeast(v) => format!("≥ {v}x"),
            Bound::AtMost(v) => format!("≤ {v}x"),
            Bound::Shown => "none".to_string(),
        }
    }

    /// Whether `ratio` meets the bound; `None` for [`Bound::Shown`].
    pub fn met(self, ratio: f64) -> Option<bool> {
        match self {
            Bound::AtLeast(v) => Some(ratio >= v),
            Bound::AtMost(v) => Some(ratio <= v),
            Bound::Shown => None,
        }
    }
}

/// A comparison of a workload with another workload of the table (its baseline).
pub struct Vs {
    pub baseline: &'static str,
    /// The row's label in the targets table; `None`: `<workload> / <baseline> (rps)`.
    pub label: Option<&'static str>,
    pub bound: Bound,
    /// Also a row of the `srv µs/op` table (A = workload, B = baseline).
    pub srv: bool,
    /// The replication mode (`hotrank.replicate`) this comparison is for, in the
    /// replication-modes section ([`MODE_GROUPS`]); `None`: every mode.
    pub mode: Option<&'static str>,
}

/// One redis-benchmark workload.
pub struct Workload {
    pub name: &'static str,
    /// The command, `__rand_int__` for redis-benchmark's random numbers and the
    /// placeholders above.
    pub args: &'static [&'static str],
    /// Module configs set for the run (and restored after).
    pub config: &'static [(&'static str, &'static str)],
    /// Commands sent once, before the workload is checked and timed.
    pub setup: &'static [&'static [&'static str]],
    /// What its rps is compared with, in the order of the targets table.
    pub vs: &'static [Vs],
    /// redis-benchmark's `-r`: every `__rand_int__` is a random number below this.
    pub keyspace: u64,
}

/// A workload with no config, no setup and no comparison, `-r RB_KEYSPACE`.
pub const fn w(name: &'static str, args: &'static [&'static str]) -> Workload {
    Workload {
        name,
        args,
        config: &[],
        setup: &[],
        vs: &[],
        keyspace: RB_KEYSPACE,
    }
}

/// `rps(workload) / rps(baseline) ≥ min`, in both tables, in every mode.
pub const fn at_least(baseline: &'static str, min: f64) -> Vs {
    Vs {
        baseline,
        label: None,
        bound: Bound::AtLeast(min),
        srv: true,
        mode: None,
    }
}

/// `rps(workload) / rps(baseline)` with no target, in every mode.
pub const fn shown(baseline: &'static str) -> Vs {
    Vs {
        baseline,
        label: None,
        bound: Bound::Shown,
        srv: true,
        mode: None,
    }
}

/// `vs` for replication mode `mode` only.
pub const fn in_mode(mode: &'static str, vs: Vs) -> Vs {
    Vs {
        mode: Some(mode),
        ..vs
    }
}

const VIEW_ARGS: &[&str] = &[
    "HOT.VIEW",
    WRITE_BOARD,
    "art:__rand_int__",
    "vis:__rand_int__",
];
/// HOT.VIEW on a board of the module's defaults (trimmed to 1000 articles).
const TRIMMED_ARGS: &[&str] = &[
    "HOT.VIEW",
    "hot:{bench3}",
    "art:__rand_int__",
    "vis:__rand_int__",
];
const NO_ABNORMAL: &str = "HOT.VIEW, abnormal-traffic check off";
const TRIMMED: &str = "HOT.VIEW, defaults (trims to 1000)";
const RANK_INCR_ARGS: &[&str] = &["RANK.INCR", "lb:{b}", "m:__rand_int__", "1"];
const ZINCRBY_ARGS: &[&str] = &["ZINCRBY", "zlb:{b}", "1", "m:__rand_int__"];

/// `EVALSHA` of a Lua view script (`examples/view.lua`, `examples/view_plain.lua`)
/// with `numkeys`: the script's own leading keys `lead`, then the keys both scripts
/// take (pv counter, uv HyperLogLog, meta hash, board), then ARGV article, visitor
/// and the script's own `tail`.
macro_rules! lua_view {
    ($sha:expr, $numkeys:literal, [$($lead:expr),*], [$($tail:expr),*]) => {
        &[
            "EVALSHA",
            $sha,
            $numkeys,
            $($lead,)*
            "lua:{b}:pv:art:__rand_int__",
            "lua:{b}:uv:art:__rand_int__",
            "lua:{b}:meta:art:__rand_int__",
            "lua:{b}",
            "art:__rand_int__",
            "vis:__rand_int__",
            $($tail,)*
        ]
    };
}

/// The Lua recipe with dedup (`examples/view.lua`).
const LUA_DEDUP_ARGS: &[&str] = lua_view!(
    VIEW_SHA,
    "5",
    ["lua:{b}:dd:art:__rand_int__:vis:__rand_int__"],
    [DEDUP_S]
);
/// The seed's plain script (`examples/view_plain.lua`).
const LUA_PLAIN_ARGS: &[&str] = lua_view!(PLAIN_SHA, "4", [], []);

/// The groups of workloads, in the order they run and are reported.
///
/// The Lua recipe's keys (`lua:{b}:…`) are its own names, not the module's derived
/// keys: the recipe is the independent baseline HOT.VIEW replaces, so they are not
/// taken from `hotrank::keys`.
pub const GROUPS: &[&[Workload]] = &[
    &[
        Workload {
            config: &[KEEP_BOARD],
            vs: &[
                at_least("Lua EVALSHA", 2.5),
                Vs {
                    label: Some("HOT.VIEW / seed script without dedup (rps)"),
                    ..at_least(LUA_PLAIN_NAME, 2.0)
                },
                at_least("ZADD", 0.5),
            ],
            ..w("HOT.VIEW", VIEW_ARGS)
        },
        w("Lua EVALSHA", LUA_DEDUP_ARGS),
        w(LUA_PLAIN_NAME, LUA_PLAIN_ARGS),
        Workload {
            config: &[KEEP_BOARD, ("hotrank.visitor-max-views", "0")],
            vs: &[
                at_least("Lua EVALSHA", 2.5),
                Vs {
                    srv: false,
                    ..at_least("ZADD", 0.5)
                },
            ],
            ..w(NO_ABNORMAL, VIEW_ARGS)
        },
        Workload {
            vs: &[at_least("Lua EVALSHA", 2.0)],
            ..w(TRIMMED, TRIMMED_ARGS)
        },
    ],
    &[
        w("ZADD", &["ZADD", "z:{b}", "__rand_int__", "m:__rand_int__"]),
        w("INCR", &["INCR", "c:{b}:__rand_int__"]),
        w(
            "PFADD",
            &["PFADD", "hll:{b}:__rand_int__", "vis:__rand_int__"],
        ),
    ],
    &[
        Workload {
            vs: &[at_least("ZINCRBY", 0.95)],
            ..w("RANK.INCR", RANK_INCR_ARGS)
        },
        // Each RANK.INCR also updates the day, week and month boards: four
        // ZSETs written per command, at most 2x the cost of a plain board's.
        Workload {
            setup: &[&["RANK.CREATE", "plb:{b}", "PERIODS", "day", "week", "month"]],
            vs: &[at_least("RANK.INCR", 0.5)],
            ..w(
                "RANK.INCR, PERIODS day week month",
                &["RANK.INCR", "plb:{b}", "m:__rand_int__", "1"],
            )
        },
        w("ZINCRBY", ZINCRBY_ARGS),
    ],
    // Keep-best writes, with a fixed score: redis-benchmark's `__rand_int__` is
    // zero-padded (000000001234), which RANK.SET refuses as an integer (as INCRBY
    // does). So both rows measure a first write per member, then writes that keep
    // the best score (as `make profile` does).
    &[
        Workload {
            vs: &[at_least("ZADD GT", 0.95)],
            ..w(
                "RANK.SET BEST",
                &["RANK.SET", "lbbest:{b}", "m:__rand_int__", "7", "BEST"],
            )
        },
        w("ZADD GT", &["ZADD", "zgt:{b}", "GT", "7", "m:__rand_int__"]),
    ],
    &[
        Workload {
            vs: &[Vs {
                baseline: "ZREVRANGE",
                label: Some("ZREVRANGE rps / HOT.TOP rps (50 clients)"),
                bound: Bound::AtMost(10.0),
                srv: true,
                mode: None,
            }],
            ..w("HOT.TOP", &["HOT.TOP", BOARD, "LIMIT", "20", "WITHSCORES"])
        },
        w("ZREVRANGE", &["ZREVRANGE", BOARD, "0", "19", "WITHSCORES"]),
    ],
];

/// The replication modes (`hotrank.replicate`) of the modes section, in report order.
pub const MODES: [&str; 2] = ["effects", "commands"];

/// redis-benchmark's `-r` of the steady-state pair: 5,000 articles and visitors.
pub const STEADY_KEYSPACE: u64 = 5000;
/// The abnormal-traffic check stays on, but no visitor goes over its limit: at
/// 5,000 visitors, the default limit (60 views an hour) would flag them all within
/// the section's few hundred thousand views, and a flagged view costs less.
const NOBODY_FLAGGED: (&str, &str) = ("hotrank.visitor-max-views", "1000000000");
const STEADY_VIEW: &str = "HOT.VIEW, 5,000 articles, not trimmed";
const STEADY_LUA: &str = "Lua recipe with dedup, 5,000 articles";
const STEADY_PLAIN: &str = "Lua seed script (no dedup), 5,000 articles";
const TAIL_VIEW: &str = "HOT.VIEW, 100,000 articles, defaults (trims to 1000)";
const TAIL_LUA: &str = "Lua seed script (no dedup), 100,000 articles";

/// The replication-modes section: pairs run on a fresh master with one replica per
/// mode, at pipeline 16, each pair back to back; `vs` with a `mode` hold that mode's
/// target. The keys are those of [`GROUPS`] (each mode has its own servers).
pub const MODE_GROUPS: &[&[Workload]] = &[
    // Steady state: the articles, counters and HyperLogLogs exist (warmed up).
    &[
        Workload {
            config: &[KEEP_BOARD, NOBODY_FLAGGED],
            keyspace: STEADY_KEYSPACE,
            // Issue 31's targets, on the issue's own workload: both scripts and
            // HOT.VIEW on the same 5,000 articles and visitors.
            vs: &[
                in_mode("effects", at_least(STEADY_LUA, 1.6)),
                in_mode("commands", at_least(STEADY_LUA, 2.0)),
                in_mode("effects", at_least(STEADY_PLAIN, 1.0)),
                in_mode("commands", at_least(STEADY_PLAIN, 1.2)),
            ],
            ..w(STEADY_VIEW, VIEW_ARGS)
        },
        Workload {
            keyspace: STEADY_KEYSPACE,
            ..w(STEADY_LUA, LUA_DEDUP_ARGS)
        },
        Workload {
            keyspace: STEADY_KEYSPACE,
            ..w(STEADY_PLAIN, LUA_PLAIN_ARGS)
        },
    ],
    // Long tail: most views bring an article the board does not hold. Shown,
    // with no target: HOT.VIEW does work here the plain script does not
    // (trimming to 1000, retention, the article index, dedup).
    &[
        Workload {
            vs: &[shown(TAIL_LUA)],
            ..w(TAIL_VIEW, TRIMMED_ARGS)
        },
        w(TAIL_LUA, LUA_PLAIN_ARGS),
    ],
    &[
        Workload {
            vs: &[
                in_mode("effects", shown("ZINCRBY")),
                in_mode("commands", at_least("ZINCRBY", 0.95)),
            ],
            ..w("RANK.INCR", RANK_INCR_ARGS)
        },
        w("ZINCRBY", ZINCRBY_ARGS),
    ],
];
