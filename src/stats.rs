//! Counters for the `INFO hotrank` section.

use std::sync::atomic::{AtomicU64, Ordering};

pub static VIEWS_COUNTED: AtomicU64 = AtomicU64::new(0);
pub static VIEWS_DUPLICATE: AtomicU64 = AtomicU64::new(0);
pub static VIEWS_SUSPICIOUS: AtomicU64 = AtomicU64::new(0);
pub static TRIMS: AtomicU64 = AtomicU64::new(0);
pub static ARTICLES_TRIMMED: AtomicU64 = AtomicU64::new(0);
pub static ARTICLES_SWEPT: AtomicU64 = AtomicU64::new(0);
pub static UPKEEP_ERRORS: AtomicU64 = AtomicU64::new(0);
pub static TOP_CALLS: AtomicU64 = AtomicU64::new(0);
pub static TOP_EXAMINED: AtomicU64 = AtomicU64::new(0);
/// Articles HOT.TOP BY trending looked up (their PV counter opened) because
/// their score did not prove that retention kept their counters.
pub static TOP_TRENDING_CHECKS: AtomicU64 = AtomicU64::new(0);
pub static ERRORS: AtomicU64 = AtomicU64::new(0);
/// Errors by kind ([`ErrorKind`]); their sum is `ERRORS`.
pub static ERRORS_ARITY: AtomicU64 = AtomicU64::new(0);
pub static ERRORS_BAD_VALUE: AtomicU64 = AtomicU64::new(0);
pub static ERRORS_WRONGTYPE: AtomicU64 = AtomicU64::new(0);
pub static ERRORS_NOPERM: AtomicU64 = AtomicU64::new(0);
pub static ERRORS_OTHER: AtomicU64 = AtomicU64::new(0);
/// RANK commands that succeeded: writes (RANK.CREATE/INCR/SET/MINCR/REM/DROP
/// and any other RANK command not flagged `readonly`) and reads.
pub static RANK_WRITES: AtomicU64 = AtomicU64::new(0);
pub static RANK_READS: AtomicU64 = AtomicU64::new(0);
/// Period boards started: the first write into a day, week or month.
pub static RANK_PERIODS_ROLLED: AtomicU64 = AtomicU64::new(0);
pub static PANICS: AtomicU64 = AtomicU64::new(0);

/// What kind of error a command replied, for the `errors_*` INFO counters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Wrong number of arguments.
    Arity,
    /// An argument's value or the syntax: not a number, out of range, an
    /// unknown option, options that do not go together, a write later than
    /// the clock, an overflow.
    BadValue,
    /// `WRONGTYPE …`: a key holds another type.
    WrongType,
    /// `NOPERM …`: the user's ACL refuses a key.
    NoPerm,
    /// Anything else (a ZSET hotrank did not make, a board that already
    /// exists, a corrupt derived key, a caught panic, …).
    Other,
}

impl ErrorKind {
    /// The kind of an error reply `msg` (with its `ERR `/`WRONGTYPE `
    /// prefix); the arity error is counted by its caller as [`Self::Arity`].
    pub fn of(msg: &str) -> ErrorKind {
        if msg.starts_with("WRONGTYPE") {
            return ErrorKind::WrongType;
        }
        if msg.starts_with("NOPERM") {
            return ErrorKind::NoPerm;
        }
        let Some(text) = msg.strip_prefix("ERR ") else {
            return ErrorKind::Other;
        };
        const VALUE_PHRASES: &[&str] = &[
            "syntax error",
            " must ",
            " is not a",
            " is not an",
            "needs ",
            " need ",
            "not compatible",
            "would overflow",
            "out of range",
            "is outside",
            "later than the server clock",
            "too wide",
        ];
        if VALUE_PHRASES.iter().any(|p| text.contains(p)) {
            ErrorKind::BadValue
        } else {
            ErrorKind::Other
        }
    }

    fn counter(self) -> &'static AtomicU64 {
        match self {
            ErrorKind::Arity => &ERRORS_ARITY,
            ErrorKind::BadValue => &ERRORS_BAD_VALUE,
            ErrorKind::WrongType => &ERRORS_WRONGTYPE,
            ErrorKind::NoPerm => &ERRORS_NOPERM,
            ErrorKind::Other => &ERRORS_OTHER,
        }
    }
}

/// Counts one error reply of kind `k` (in `errors` and its kind's counter).
pub fn count_error(k: ErrorKind) {
    add(&ERRORS, 1);
    add(k.counter(), 1);
}

/// Adds `n` to a counter.
pub fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

/// All counters as (INFO field, value).
pub fn snapshot() -> Vec<(&'static str, u64)> {
    let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
    let calls = g(&TOP_CALLS);
    let examined = g(&TOP_EXAMINED);
    vec![
        ("views_counted", g(&VIEWS_COUNTED)),
        ("views_duplicate", g(&VIEWS_DUPLICATE)),
        ("views_suspicious", g(&VIEWS_SUSPICIOUS)),
        ("trims", g(&TRIMS)),
        ("articles_trimmed", g(&ARTICLES_TRIMMED)),
        ("articles_swept", g(&ARTICLES_SWEPT)),
        ("top_calls", calls),
        ("top_articles_examined", examined),
        (
            "top_articles_examined_per_call",
            examined.checked_div(calls).unwrap_or(0),
        ),
        ("top_trending_checks", g(&TOP_TRENDING_CHECKS)),
        ("rank_writes", g(&RANK_WRITES)),
        ("rank_reads", g(&RANK_READS)),
        ("rank_periods_rolled", g(&RANK_PERIODS_ROLLED)),
        ("errors", g(&ERRORS)),
        ("errors_arity", g(&ERRORS_ARITY)),
        ("errors_bad_value", g(&ERRORS_BAD_VALUE)),
        ("errors_wrongtype", g(&ERRORS_WRONGTYPE)),
        ("errors_noperm", g(&ERRORS_NOPERM)),
        ("errors_other", g(&ERRORS_OTHER)),
        ("upkeep_errors", g(&UPKEEP_ERRORS)),
        ("panics_caught", g(&PANICS)),
    ]
}

#[cfg(test)]
mod tests {
    use super::ErrorKind::{self, *};

    #[test]
    fn error_kinds_of_the_module_s_messages() {
        let cases: &[(&str, ErrorKind)] = &[
            ("WRONGTYPE Operation against a key holding the wrong kind of value", WrongType),
            ("WRONGTYPE Key is not a valid HyperLogLog string value.", WrongType),
            ("NOPERM this user has no permissions to access the 'k' key", NoPerm),
            ("ERR syntax error at 'FOO'", BadValue),
            ("ERR syntax error: expected AT t", BadValue),
            ("ERR LIMIT must be an integer between 1 and 10000", BadValue),
            ("ERR delta is not an integer or out of range", BadValue),
            ("ERR gamma is not a number", BadValue),
            ("ERR AT needs a value", BadValue),
            ("ERR TZ and KEEP need PERIODS", BadValue),
            ("ERR GT and LT options at the same time are not compatible", BadValue),
            ("ERR AT is later than the server clock: writes cannot be in the future", BadValue),
            ("ERR score 5 is out of range [0, 3] of this board", BadValue),
            ("ERR board already exists", Other),
            ("ERR board identity missing: 'k' holds a ZSET but no HOT board record: evicted (maxmemory-policy is allkeys-lru) or deleted, or never written by HOT; nothing was written. Rebuild it with HOT.REPAIR k [settings] giving the board's own settings, or use another key (docs/eviction.md)", Other),
            ("ERR board identity missing: 'k' has no RANK layout, and maxmemory-policy allkeys-lru may have evicted it whole, so it is not created with default settings; nothing was written. Create it with RANK.CREATE k [layout], or use noeviction or a volatile-* policy (docs/eviction.md)", Other),
            ("ERR 'k' is a RANK board (it has a RANK layout), not a HOT board; use RANK commands or another key", Other),
            ("ERR hotrank internal error (caught a panic; please report it)", Other),
            ("ERR corrupt RANK layout key", Other),
        ];
        for (msg, kind) in cases {
            assert_eq!(ErrorKind::of(msg), *kind, "{msg}");
        }
    }
}
