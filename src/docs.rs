//! The documentation of every command, as `COMMAND DOCS` serves it: summary,
//! version, complexity and the full argument tree. Plain data, no Redis:
//! `commands::register` hands it to the server (through `ffi::set_command_info`)
//! (`RedisModule_SetCommandInfo`), and redis-cli builds its argument hints
//! from it.
//!
//! Every argument here is one the parsers in `commands::hot` and
//! `commands::rank` accept, in the same order, and the other way round;
//! `tests/docs.rs` checks both directions against a running server.

/// The module version in which the commands first appeared.
pub const SINCE: &str = "0.1.0";

/// The type of an argument, as in `COMMAND DOCS` (`RedisModuleCommandArgType`).
/// (`double` and `pattern` are left out: no command takes them.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    /// A key name (the board key; index 0 of the command's key specs).
    Key,
    /// Any string.
    String,
    /// A signed 64-bit integer.
    Integer,
    /// Unix seconds, with up to three decimals.
    UnixTime,
    /// A keyword alone (`token` is the keyword).
    PureToken,
    /// Exactly one of `args`.
    OneOf,
    /// All of `args`, in order.
    Block,
}

/// One argument of a command.
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    /// Name (lowercase), shown by redis-cli in hints.
    pub name: &'static str,
    pub kind: ArgType,
    /// The keyword that precedes the value (`LIMIT`, `AT`, …), if any.
    pub token: Option<&'static str>,
    /// A short description, when the name alone does not say enough.
    pub summary: Option<&'static str>,
    pub optional: bool,
    /// May be repeated (`member [member …]`).
    pub multiple: bool,
    /// Sub-arguments of a `OneOf` or a `Block` (empty otherwise).
    pub args: &'static [Arg],
}

impl Arg {
    const fn new(name: &'static str, kind: ArgType) -> Arg {
        Arg {
            name,
            kind,
            token: None,
            summary: None,
            optional: false,
            multiple: false,
            args: &[],
        }
    }
    /// This argument, optional.
    const fn optional(self) -> Arg {
        Arg {
            optional: true,
            ..self
        }
    }
    /// This argument, repeatable.
    const fn multiple(self) -> Arg {
        Arg {
            multiple: true,
            ..self
        }
    }
    /// This argument, preceded by the keyword `token`.
    const fn token(self, token: &'static str) -> Arg {
        Arg {
            token: Some(token),
            ..self
        }
    }
    /// This argument, with a description.
    const fn summary(self, summary: &'static str) -> Arg {
        Arg {
            summary: Some(summary),
            ..self
        }
    }
    /// This `OneOf` or `Block`, with its sub-arguments.
    const fn with(self, args: &'static [Arg]) -> Arg {
        Arg { args, ..self }
    }
}

/// The documentation of one command.
#[derive(Clone, Copy, Debug)]
pub struct Command {
    /// The name as registered (lowercase).
    pub name: &'static str,
    pub summary: &'static str,
    /// The module version that added the command.
    pub since: &'static str,
    pub complexity: &'static str,
    pub args: &'static [Arg],
}

const fn key() -> Arg {
    Arg::new("key", ArgType::Key)
}
const fn string(name: &'static str) -> Arg {
    Arg::new(name, ArgType::String)
}
const fn integer(name: &'static str) -> Arg {
    Arg::new(name, ArgType::Integer)
}
const fn flag(name: &'static str, token: &'static str) -> Arg {
    Arg::new(name, ArgType::PureToken).token(token).optional()
}

/// `AT time`: the time of a write (not later than the server clock) or of a
/// query.
const AT: Arg = Arg::new("time", ArgType::UnixTime)
    .token("AT")
    .optional()
    .summary("unix seconds, up to 3 decimals");

const RESOLUTION: &[Arg] = &[
    Arg::new("seconds", ArgType::PureToken).token("s"),
    Arg::new("milliseconds", ArgType::PureToken).token("ms"),
];

const ORDER: &[Arg] = &[
    Arg::new("asc", ArgType::PureToken)
        .token("asc")
        .summary("the lowest score ranks first"),
    Arg::new("desc", ArgType::PureToken)
        .token("desc")
        .summary("the highest score ranks first"),
];

const CONDITION: &[Arg] = &[
    Arg::new("gt", ArgType::PureToken)
        .token("GT")
        .summary("only if higher than the current score"),
    Arg::new("lt", ArgType::PureToken)
        .token("LT")
        .summary("only if lower than the current score"),
    Arg::new("best", ArgType::PureToken)
        .token("BEST")
        .summary("only if better: GT on a desc board, LT on an asc board"),
];

const OFFSET_COUNT: &[Arg] = &[integer("offset"), integer("count")];

/// `day`, `week` or `month`.
const PERIOD_UNITS: &[Arg] = &[
    Arg::new("day", ArgType::PureToken).token("day"),
    Arg::new("week", ArgType::PureToken).token("week"),
    Arg::new("month", ArgType::PureToken).token("month"),
];

/// `PERIODS day|week|month … [TZ ±hh:mm] [KEEP n]` of RANK.CREATE.
const PERIODS: &[Arg] = &[
    Arg::new("unit", ArgType::OneOf)
        .multiple()
        .summary("one or more of day, week (ISO, from Monday), month")
        .with(PERIOD_UNITS),
    string("offset")
        .token("TZ")
        .optional()
        .summary("fixed UTC offset of the periods, -14:00 to +14:00, default +00:00"),
    integer("keep").token("KEEP").optional().summary(
        "whole periods a period board stays readable after it ends, 0 to 10000, default 2",
    ),
];

/// `PERIOD day|week|month [AGO n]` of the reads.
const PERIOD_AGO: &[Arg] = &[
    Arg::new("unit", ArgType::OneOf).with(PERIOD_UNITS),
    integer("ago")
        .token("AGO")
        .optional()
        .summary("periods back, 0 (the current one, the default) or more"),
];

/// `[PERIOD day|week|month [AGO n]]`: read a period board instead of the
/// all-time board.
const PERIOD: Arg = Arg::new("period", ArgType::Block)
    .token("PERIOD")
    .optional()
    .summary("read the board of this period (server clock, the board's TZ) instead of the all-time board")
    .with(PERIOD_AGO);

/// The settings of a HOT board (HOT.CREATE, HOT.ALTER), as `src/hot/settings.rs` names them.
const HOT_SETTINGS: [Arg; 11] = [
    string("alpha")
        .token("ALPHA")
        .summary("weight of a page view, 0 to 1e6 (default hotrank.alpha)"),
    string("beta")
        .token("BETA")
        .summary("weight of a unique visitor, 0 to 1e6 (default hotrank.beta)"),
    string("base")
        .token("BASE")
        .summary("hours added to an article's age, 0.001 to 1e6 (default hotrank.base)"),
    string("gamma")
        .token("GAMMA")
        .summary("gravity exponent, 0 to 10 (default hotrank.gamma)"),
    integer("seconds")
        .token("DEDUP-SECONDS")
        .summary("repeat views of a pair within this many seconds count once, 0 (off) to 4294967"),
    integer("shards")
        .token("DEDUP-SHARDS")
        .summary("dedup strings (shards) of the board, 1 to 65536"),
    integer("views")
        .token("VISITOR-MAX-VIEWS")
        .summary("views of a visitor per window above which they are suspicious, 0 (off) to 1e9"),
    integer("seconds")
        .token("VISITOR-WINDOW-SECONDS")
        .summary("window of the visitor limit, 1 to 2592000"),
    integer("count")
        .token("MAX-ARTICLES")
        .summary("articles the board keeps ranked, 0 (no limit) to 1e8"),
    integer("retention").token("RETENTION-SECONDS").summary(
        "an article's counters live this long after its last counted view, 60 to 315360000",
    ),
    string("duration").token("TRENDING-HALF-LIFE").summary(
        "half-life of the board's trending ranking: 0 (none, the default hotrank.trending-half-life) or 60 to 315360000 seconds, or with a unit s, m, h or d (6h)",
    ),
];

const fn optional_all<const N: usize>(a: [Arg; N]) -> [Arg; N] {
    let mut out = a;
    let mut i = 0;
    while i < N {
        out[i] = out[i].optional();
        i += 1;
    }
    out
}

const HOT_CREATE_ARGS: [Arg; 12] = {
    let opt = optional_all(HOT_SETTINGS);
    let mut out = [key(); 12];
    let mut i = 0;
    while i < 11 {
        out[i + 1] = opt[i];
        i += 1;
    }
    out
};

const HOT_ALTER_ARGS: [Arg; 2] = [
    key(),
    Arg::new("setting", ArgType::OneOf)
        .multiple()
        .summary("a setting and its new value (as HOT.CREATE takes them)")
        .with(&HOT_SETTINGS),
];

/// RANK.CREATE's arguments (RANK.REPAIR takes the same).
const RANK_LAYOUT_ARGS: &[Arg] = &[
    key(),
    Arg::new("resolution", ArgType::OneOf)
        .token("RESOLUTION")
        .optional()
        .summary("time resolution of ties, default s")
        .with(RESOLUTION),
    integer("min")
        .token("MIN")
        .optional()
        .summary("lowest score"),
    integer("max")
        .token("MAX")
        .optional()
        .summary("highest score"),
    Arg::new("order", ArgType::OneOf)
        .token("ORDER")
        .optional()
        .summary("which scores rank first, default desc")
        .with(ORDER),
    Arg::new("periods", ArgType::Block)
        .token("PERIODS")
        .optional()
        .summary("also keep a board per period, updated by every write")
        .with(PERIODS),
];

/// `hot` or `trending`: the ranking HOT.TOP reads.
const RANKINGS: &[Arg] = &[
    Arg::new("hot", ArgType::PureToken)
        .token("hot")
        .summary("the hot score: page views and visitors decayed by the article's age (the default)"),
    Arg::new("trending", ArgType::PureToken)
        .token("trending")
        .summary("the trending score: each counted view decayed by its own age (a board with TRENDING-HALF-LIFE)"),
];

/// Every command, in the order of registration.
pub static COMMANDS: &[Command] = &[
    Command {
        name: "hot.publish",
        summary: "Sets the publish time of an article on a hot-articles board; an article already on the board is rescored now.",
        since: SINCE,
        complexity: "O(log(N)) where N is the number of articles on the board.",
        args: &[
            key(),
            string("article"),
            Arg::new("published_at", ArgType::UnixTime).summary("unix seconds, up to 3 decimals"),
        ],
    },
    Command {
        name: "hot.view",
        summary: "Records one page view of an article: counts its page views and unique visitors, skips duplicate and suspicious views, and updates its time-decayed score.",
        since: SINCE,
        complexity: "O(log(N)+D) where N is the number of articles on the board and D the number of dedup entries in the pair's shard (about the pairs counted in the last two dedup windows divided by hotrank.dedup-shards). A view that adds an article to the board may also trim the board or forget expired articles: amortized O(log(N)) per added article.",
        args: &[key(), string("article"), string("visitor"), AT],
    },
    Command {
        name: "hot.top",
        summary: "Returns the hottest articles of a board, ranked by their hot score at query time, or BY trending by their trending score.",
        since: SINCE,
        complexity: "O(M*log(N)) where N is the number of articles on the board and M the number examined: the scan stops once no later article can enter the top, usually soon after LIMIT articles; at worst every article on the board or in the WINDOW. BY trending: O(log(N)+M) where M is LIMIT plus the articles tied with the last one or outside the WINDOW.",
        args: &[
            key(),
            Arg::new("ranking", ArgType::OneOf)
                .token("BY")
                .optional()
                .summary("the ranking to read, default hot")
                .with(RANKINGS),
            integer("count").token("LIMIT").optional().summary("1 to 10000, default 20"),
            string("duration")
                .token("WINDOW")
                .optional()
                .summary("only articles published in the last duration: seconds, or with a unit s, m, h or d (72h)"),
            flag("withscores", "WITHSCORES"),
            AT,
        ],
    },
    Command {
        name: "hot.create",
        summary: "Creates a hot-articles board with its own settings (formula, dedup window, visitor limit, size, retention, trending half-life); settings not given take the hotrank.* configs.",
        since: SINCE,
        complexity: "O(1)",
        args: &HOT_CREATE_ARGS,
    },
    Command {
        name: "hot.alter",
        summary: "Changes settings of a hot-articles board, all or none; a new formula rescores every article on the board; TRENDING-HALF-LIFE adds, removes (0) or, while it is empty, changes the trending ranking.",
        since: SINCE,
        complexity: "O(1), or O(N*log(N)) when the formula changes, where N is the number of articles on the board; O(T) when TRENDING-HALF-LIFE 0 deletes a trending ranking of T articles.",
        args: &HOT_ALTER_ARGS,
    },
    Command {
        name: "hot.stats",
        summary: "Returns an article's page views, unique visitors, suspicious views, publish time and score, and its trending score on a board with trending.",
        since: SINCE,
        complexity: "O(1)",
        args: &[key(), string("article"), AT],
    },
    Command {
        name: "rank.create",
        summary: "Creates a leaderboard with a chosen time resolution, score range and order, optionally with day, week and month boards.",
        since: SINCE,
        complexity: "O(1)",
        args: RANK_LAYOUT_ARGS,
    },
    Command {
        name: "rank.incr",
        summary: "Adds an integer to a member's score, and to its score in the current period boards; equal scores rank by who reached them first.",
        since: SINCE,
        complexity: "O(P*log(N)) where N is the number of members and P the number of boards written: 1, plus one per period of the board.",
        args: &[key(), string("member"), integer("delta"), AT],
    },
    Command {
        name: "rank.set",
        summary: "Sets a member's score, or with GT, LT or BEST only if it improves it, on the board and on the current period boards; equal scores rank by who reached them first.",
        since: SINCE,
        complexity: "O(P*log(N)) where N is the number of members and P the number of boards written: 1, plus one per period of the board.",
        args: &[
            key(),
            string("member"),
            integer("score"),
            Arg::new("condition", ArgType::OneOf)
                .optional()
                .summary("write only if the score improves; replies [score, written]")
                .with(CONDITION),
            AT,
        ],
    },
    Command {
        name: "rank.score",
        summary: "Returns a member's score, and with WITHTIME the time it was reached.",
        since: SINCE,
        complexity: "O(1)",
        args: &[key(), string("member"), flag("withtime", "WITHTIME"), PERIOD],
    },
    Command {
        name: "rank.rank",
        summary: "Returns a member's 0-based rank, best first; with TIES, the number of members with a strictly better score.",
        since: SINCE,
        complexity: "O(R) where R is the member's rank (with TIES: the number of members with a better score): the members above it are counted through the key API, about 63 instructions each.",
        args: &[key(), string("member"), flag("ties", "TIES"), PERIOD],
    },
    Command {
        name: "rank.range",
        summary: "Returns the members in a range of 0-based ranks, best first.",
        since: SINCE,
        complexity: "O(S+M) where S is the distance of the range from the nearer end of the board and M the number returned.",
        args: &[
            key(),
            integer("start"),
            integer("stop"),
            flag("withscores", "WITHSCORES"),
            flag("withtime", "WITHTIME"),
            PERIOD,
        ],
    },
    Command {
        name: "rank.rem",
        summary: "Removes members from a leaderboard.",
        since: SINCE,
        complexity: "O(M*log(N)) where N is the number of members and M the number removed.",
        args: &[key(), string("member").multiple()],
    },
    Command {
        name: "rank.card",
        summary: "Returns the number of members of a leaderboard.",
        since: SINCE,
        complexity: "O(1)",
        args: &[key(), PERIOD],
    },
    Command {
        name: "rank.around",
        summary: "Returns a member and up to count neighbours on each side, as [rank, member, score], best first.",
        since: SINCE,
        complexity: "O(R+M) where R is the member's rank and M the number returned.",
        args: &[
            key(),
            string("member"),
            integer("count").summary("neighbours on each side, 0 to 1000"),
            PERIOD,
        ],
    },
    Command {
        name: "rank.rangebyscore",
        summary: "Returns the members whose score is between min and max (inclusive), best first.",
        since: SINCE,
        complexity: "O(log(N)+M) where N is the number of members and M the number returned.",
        args: &[
            key(),
            string("min").summary("an integer, -inf or +inf"),
            string("max").summary("an integer, -inf or +inf"),
            Arg::new("limit", ArgType::Block)
                .token("LIMIT")
                .optional()
                .with(OFFSET_COUNT),
            flag("withscores", "WITHSCORES"),
            PERIOD,
        ],
    },
    Command {
        name: "rank.mincr",
        summary: "Adds the same integer to the scores of several members, on the board and the current period boards, all or nothing.",
        since: SINCE,
        complexity: "O(P*M*log(N)) where N is the number of members, M the number of members given and P the number of boards written: 1, plus one per period of the board.",
        args: &[key(), integer("delta"), string("member").multiple()],
    },
    Command {
        name: "rank.drop",
        summary: "Deletes a leaderboard: its ZSET and every key RANK derived from it, such as its layout and its period boards.",
        since: SINCE,
        complexity: "O(N+P*K) where N is the number of members (the ZSETs are freed in the background), P the number of periods of the board and K its KEEP.",
        args: &[key()],
    },
    // Sharded leaderboards (issue 24).
    Command {
        name: "rank.count",
        summary: "Returns the number of members ranked ahead of a score (and a time, and a member name): summed over the shards of a sharded leaderboard, a member's exact rank.",
        since: SINCE,
        complexity: "O(log(N)) where N is the number of members, plus O(M) with MEMBER where M is the number of members with the same score reached in the same time unit.",
        args: &[
            key(),
            integer("score"),
            Arg::new("position", ArgType::Block)
                .optional()
                .with(TIME_MEMBER),
            PERIOD,
        ],
    },
    // Board lifecycle (issue 22).
    Command {
        name: "hot.rem",
        summary: "Takes articles down: removes them from a hot-articles board with their counters and publish time; their later views are not counted (status removed) until HOT.PUBLISH publishes them again or the retention ends.",
        since: SINCE,
        complexity: "O(M*log(N)) where N is the number of articles on the board and M the number of articles given.",
        args: &[key(), string("article").multiple()],
    },
    Command {
        name: "hot.export",
        summary: "Iterates over every article a hot-articles board holds counters for, on the board or not, with the fields of HOT.STATS and the time of its last counted view; SCAN-shaped, the cursor is 0 when done.",
        since: SINCE,
        complexity: "O(C*log(N)) per call where C is COUNT and N the number of articles tracked; O(N*log(N)) for a complete iteration.",
        args: &[
            key(),
            integer("cursor").summary("0 to start, then the cursor of the previous reply"),
            integer("count")
                .token("COUNT")
                .optional()
                .summary("index entries to walk, 1 to 10000, default 10"),
            Arg::new("time", ArgType::UnixTime)
                .token("AT")
                .optional()
                .summary("the time of the scores, unix seconds (default: the server clock)"),
        ],
    },
    Command {
        name: "hot.info",
        summary: "Returns a hot-articles board's settings (with its trending half-life, landmark and size), article counts, number of keys, memory in bytes and replication mode.",
        since: SINCE,
        complexity: "O(S) where S is the number of dedup shards (hotrank.dedup-shards): article keys are counted on up to 1000 articles and measured on up to 32.",
        args: &[key()],
    },
    Command {
        name: "hot.drop",
        summary: "Deletes a hot-articles board and every key it derived; a new board under the same name starts empty at once, the article keys are deleted in background steps.",
        since: SINCE,
        complexity: "O(S) for the command, where S is the number of articles counted (at most 1000); the article keys, O(N) for N tracked articles, are deleted afterwards in steps of 200 articles every millisecond.",
        args: &[key()],
    },
    Command {
        name: "rank.info",
        summary: "Returns a leaderboard's layout (resolution, min, max, order, periods, TZ, KEEP), its number of members and its current period boards with their sizes.",
        since: SINCE,
        complexity: "O(P) where P is the number of periods of the board.",
        args: &[key()],
    },
    // Listing a node's boards (issue 22): keyless, as SCAN.
    Command {
        name: "hot.boards",
        summary: "Iterates over the hot-articles boards of this node's selected database (by their board records), SCAN-shaped: the cursor is 0 when done; keyless, so in a cluster each node lists its own boards.",
        since: SINCE,
        complexity: "O(1) for every call. O(N) for a complete iteration, where N is the number of keys in the database.",
        args: BOARDS_ARGS,
    },
    Command {
        name: "rank.boards",
        summary: "Iterates over the leaderboards of this node's selected database (by their layout keys), SCAN-shaped: the cursor is 0 when done; keyless, so in a cluster each node lists its own boards.",
        since: SINCE,
        complexity: "O(1) for every call. O(N) for a complete iteration, where N is the number of keys in the database.",
        args: BOARDS_ARGS,
    },
    // Boards under memory pressure (issue 36).
    Command {
        name: "hot.repair",
        summary: "Rebuilds the board record of a hot-articles board whose record was evicted (or deleted) while its ZSET remains, with the settings given (others from the hotrank.* configs), and rescores its articles; refused on a board that has its record.",
        since: SINCE,
        complexity: "O(N*log(N)) where N is the number of articles on the board.",
        args: &HOT_CREATE_ARGS,
    },
    Command {
        name: "rank.repair",
        summary: "Rebuilds the layout of a leaderboard whose layout key was evicted (or deleted) while its ZSET remains, with RANK.CREATE's options; refused on a board that has its layout, or when a member's score does not fit the layout.",
        since: SINCE,
        complexity: "O(N) where N is the number of members: each score is checked against the layout.",
        args: RANK_LAYOUT_ARGS,
    },
];

/// RANK.COUNT's `TIME t [MEMBER m]`.
const TIME_MEMBER: &[Arg] = &[
    Arg::new("time", ArgType::UnixTime).token("TIME").summary(
        "when the score was reached: members with the same score reached earlier are ahead",
    ),
    string("member")
        .token("MEMBER")
        .optional()
        .summary("members with the same score and time whose name sorts before it are ahead"),
];

/// `cursor [COUNT n]` of HOT.BOARDS and RANK.BOARDS (no key: keyless).
const BOARDS_ARGS: &[Arg] = &[
    integer("cursor").summary("0 to start, then the cursor of the previous reply"),
    integer("count").token("COUNT").optional().summary(
        "keys of the keyspace to walk per call (a hint, as SCAN's), 1 to 100000, default 10",
    ),
];

/// The documentation of command `name` (lowercase), if it has one.
pub fn find(name: &str) -> Option<&'static Command> {
    COMMANDS.iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(args: &[Arg], f: &mut impl FnMut(&Arg)) {
        for a in args {
            f(a);
            walk(a.args, f);
        }
    }

    #[test]
    fn the_table_is_well_formed() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            crate::commands::table::COMMANDS.len(),
            "one entry per command"
        );
        for c in COMMANDS {
            assert!(
                !c.summary.is_empty() && !c.complexity.is_empty(),
                "{}",
                c.name
            );
            let keyless = crate::commands::table::COMMANDS
                .iter()
                .any(|t| t.name == c.name && t.key == crate::commands::table::KeyAccess::Keyless);
            if keyless {
                walk(c.args, &mut |a| {
                    assert_ne!(a.kind, ArgType::Key, "{}: keyless", c.name)
                });
            } else {
                assert_eq!(
                    c.args[0].kind,
                    ArgType::Key,
                    "{}: the board key comes first",
                    c.name
                );
            }
            walk(c.args, &mut |a| {
                let grouped = matches!(a.kind, ArgType::OneOf | ArgType::Block);
                assert_eq!(grouped, !a.args.is_empty(), "{}: {}", c.name, a.name);
                if a.kind == ArgType::PureToken {
                    assert!(a.token.is_some(), "{}: {}", c.name, a.name);
                }
                assert!(a.name.bytes().all(|b| !b.is_ascii_uppercase() && b != 0));
            });
        }
    }
}
