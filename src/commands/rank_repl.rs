//! `hotrank.replicate commands` for the RANK writes: each write that wrote
//! something replicates as one command, with everything it read from the
//! server's clock spelled out (the effects it ran, ZADD, PEXPIREAT, SET of
//! the layout, ZREM, UNLINK, are not replicated in that mode):
//!
//! | write | replicated as |
//! |---|---|
//! | RANK.INCR | `RANK.INCR K m delta [AT t] CLOCK now` |
//! | RANK.SET | `RANK.SET K m score [GT\|LT\|BEST] [AT t] CLOCK now` |
//! | RANK.MINCR | `RANK.MINCR K CLOCK now delta m …` |
//! | RANK.REM | `RANK.REM K m …` (as sent) |
//! | RANK.DROP | `RANK.DROP K CLOCK now` |
//! | RANK.CREATE | `RANK.CREATE K <every option>` ([`create_args`]) |
//!
//! `t` is the write's time (its `AT`; left out when it is `now`, a write
//! without AT) and `now` the master's clock when it ran the command (unix
//! ms): the period boards a write
//! updates depend on `t`, which of them are already expired (not written)
//! and their expiry on `now`, the period boards RANK.DROP deletes on `now`.
//! A board created on the way by INCR, SET or MINCR replicates a
//! `RANK.CREATE K <every option>` of its default layout first, so a replica
//! or an AOF load stores the master's layout whatever its own defaults. No
//! `hotrank.*` config changes what a RANK write stores.
//!
//! `CLOCK` is taken only from the master or the AOF (context flags
//! REPLICATED / LOADING, [`super::from_master_or_aof`]); a client that sends
//! it gets the syntax or argument error it gets today. COMMAND DOCS do not
//! list it. A write that wrote nothing (RANK.SET GT with a worse score,
//! RANK.INCR by 0 of a member already there, RANK.REM of absent members,
//! RANK.DROP of a missing board) replicates nothing, as in `effects` mode:
//! the cheaper choice, and the replica's data is the same either way.

use super::{from_master_or_aof, replicating_commands, Args, Res};
use crate::ffi;
use crate::parse::{parse_i64, time_text, IntText};
use crate::rank::period::Spec;
use crate::rank::{Layout, Order, Settings};
use redis_module::{Context, RedisString};

/// A leading `CLOCK c` (RANK.MINCR and RANK.DROP: right after the board
/// key), taken only from the master or the AOF: `Some(c)` when present.
/// From a client the argument is left for the command's own parsing (a
/// delta, or an arity error). Error: `ERR CLOCK …` for a bad value.
pub fn leading_clock(ctx: &Context, args: &mut Args) -> Res<Option<i64>> {
    if !args
        .peek()
        .is_some_and(|w| w.eq_ignore_ascii_case(b"CLOCK"))
        || !from_master_or_aof(ctx)
    {
        return Ok(None);
    }
    args.next();
    Ok(Some(parse_i64("CLOCK", args.value_of("CLOCK")?)?))
}

/// The options of a `RANK.CREATE` that stores exactly `settings`' layout
/// text: `RESOLUTION r MIN n MAX n ORDER o`, then for a board with periods
/// `PERIODS p … TZ ±hh:mm KEEP n`.
pub fn create_args(settings: &Settings) -> Vec<Vec<u8>> {
    let (l, spec): (&Layout, Option<&Spec>) = (&settings.0, settings.1.as_ref());
    let mut out: Vec<Vec<u8>> = vec![
        b"RESOLUTION".to_vec(),
        l.resolution.name().as_bytes().to_vec(),
        b"MIN".to_vec(),
        IntText::new(l.min).as_bytes().to_vec(),
        b"MAX".to_vec(),
        IntText::new(l.max).as_bytes().to_vec(),
        b"ORDER".to_vec(),
        match l.order {
            Order::Asc => b"asc".to_vec(),
            Order::Desc => b"desc".to_vec(),
        },
    ];
    if let Some(spec) = spec {
        out.push(b"PERIODS".to_vec());
        out.extend(spec.periods().map(|p| p.name().as_bytes().to_vec()));
        out.extend([
            b"TZ".to_vec(),
            spec.tz.format().into_bytes(),
            b"KEEP".to_vec(),
            IntText::new(spec.keep).as_bytes().to_vec(),
        ]);
    }
    out
}

/// In `commands` mode: replicates `RANK.CREATE key <every option>`
/// ([`create_args`]) for a board created by this command.
pub fn replicate_create(ctx: &Context, key: &RedisString, settings: &Settings) {
    if !replicating_commands() {
        return;
    }
    let opts = create_args(settings);
    let args: Vec<&[u8]> = opts.iter().map(|o| o.as_slice()).collect();
    ffi::replicate(ctx, c"RANK.CREATE", key, &args);
}

/// In `commands` mode: replicates RANK.INCR (`add`) or RANK.SET as `cmd key
/// member value [cond] [AT t] CLOCK now` (`value`: the argument as sent,
/// already parsed by the server's integer rule). `AT t` is left out when
/// `t` is `now` (a write without AT): `CLOCK now` alone gives that time.
#[allow(clippy::too_many_arguments)]
pub fn replicate_score(
    ctx: &Context,
    add: bool,
    key: &RedisString,
    member: &RedisString,
    value: &RedisString,
    cond: Option<&'static [u8]>,
    t: i64,
    now: i64,
) {
    if !replicating_commands() {
        return;
    }
    // The AT text is made only for a write with AT.
    let tt = (t != now).then(|| time_text(t));
    let nt = IntText::new(now);
    let (at, at_t): (&[u8], &[u8]) = match &tt {
        Some(tt) => (b"AT", tt.as_bytes()),
        None => (b"", b""),
    };
    let all: [&[u8]; 5] = [cond.unwrap_or(b""), at, at_t, b"CLOCK", nt.as_bytes()];
    let mut bufs: [&[u8]; 5] = [&[]; 5];
    let mut n = 0;
    // Skips the empty slots (no condition, no AT): no argument is empty.
    for b in all.into_iter().filter(|b| !b.is_empty()) {
        bufs[n] = b;
        n += 1;
    }
    let cmd = if add { c"RANK.INCR" } else { c"RANK.SET" };
    ffi::replicate_mixed(ctx, cmd, &[key, member, value], &bufs[..n]);
}

/// In `commands` mode: replicates `RANK.MINCR key CLOCK now delta members…`.
pub fn replicate_mincr(
    ctx: &Context,
    key: &RedisString,
    delta: &[u8],
    members: &[&RedisString],
    now: i64,
) {
    if !replicating_commands() {
        return;
    }
    let now = IntText::new(now);
    let mut args: Vec<&[u8]> = Vec::with_capacity(3 + members.len());
    args.extend([&b"CLOCK"[..], now.as_bytes(), delta]);
    args.extend(members.iter().map(|m| m.as_slice()));
    ffi::replicate(ctx, c"RANK.MINCR", key, &args);
}

/// In `commands` mode: replicates `RANK.DROP key CLOCK now`.
pub fn replicate_drop(ctx: &Context, key: &RedisString, now: i64) {
    if !replicating_commands() {
        return;
    }
    let now = IntText::new(now);
    ffi::replicate(ctx, c"RANK.DROP", key, &[b"CLOCK", now.as_bytes()]);
}

/// In `commands` mode: replicates the command as sent (`argv`, with its
/// name), for writes that depend on nothing but their arguments and the
/// data (RANK.REM).
pub fn replicate_verbatim(ctx: &Context, cmd: &std::ffi::CStr, argv: &[RedisString]) {
    if !replicating_commands() {
        return;
    }
    let rest: Vec<&RedisString> = argv[1..].iter().collect();
    ffi::replicate_strings(ctx, cmd, &rest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{format_time_ms, parse_time_ms};
    use crate::rank::{parse_settings, Resolution};

    #[test]
    fn time_text_is_format_time_ms_and_parses_back() {
        for ms in [
            0,
            1,
            10,
            100,
            120,
            999,
            1000,
            1_700_000_000_000,
            1_700_000_000_001,
            1_700_000_000_010,
            1_700_000_000_500,
            1_700_000_000_999,
        ] {
            let t = time_text(ms);
            assert_eq!(t.as_bytes(), format_time_ms(ms).as_bytes(), "{ms}");
            assert_eq!(parse_time_ms("AT", t.as_bytes()).unwrap(), ms, "{ms}");
        }
    }

    #[test]
    fn create_args_spell_every_option() {
        let l = Layout::default_for(Resolution::Seconds);
        let words = |s: &Settings| -> Vec<String> {
            create_args(s)
                .into_iter()
                .map(|w| String::from_utf8(w).unwrap())
                .collect()
        };
        assert_eq!(
            words(&(l, None)),
            [
                "RESOLUTION",
                "s",
                "MIN",
                "-1073741824",
                "MAX",
                "1073741823",
                "ORDER",
                "desc"
            ]
        );
        let st = parse_settings(b"v1 ms -5 5 asc periods day,month tz -03:30 keep 4").unwrap();
        assert_eq!(
            words(&st),
            [
                "RESOLUTION",
                "ms",
                "MIN",
                "-5",
                "MAX",
                "5",
                "ORDER",
                "asc",
                "PERIODS",
                "day",
                "month",
                "TZ",
                "-03:30",
                "KEEP",
                "4"
            ]
        );
    }
}
