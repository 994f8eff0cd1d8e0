//! `RANK.*` handlers: CREATE, INCR, SET, SCORE, RANK, RANGE, REM, CARD.

use super::{
    bulk, call, derived, expect_type, guard, reply_array, reply_bytes, reply_int, write_time, Args,
    Fail, Res,
};
use crate::keys::Kind;
use crate::parse::{format_score, format_time_ms, parse_i64};
use crate::rank::{parse_resolution, Layout, Resolution};
use redis_module::{raw::KeyType, Context, RedisResult, RedisString, RedisValue};

fn not_rank() -> Fail {
    Fail::Msg(
        "ERR key holds a ZSET that was not made by RANK (no board layout); use another key".into(),
    )
}

/// The board's layout. For writes, a board with no layout gets the default
/// one (stored at once); reads of a missing board give `None`.
fn layout(ctx: &Context, board: &RedisString, write: bool) -> Res<Option<Layout>> {
    let lk = derived(ctx, board, Kind::Layout, &[], write)?;
    let has_zset = expect_type(ctx, board, KeyType::ZSet)?;
    expect_type(ctx, &lk, KeyType::String)?;
    let stored = ctx.open_key(&lk).read().ok().flatten().map(|b| b.to_vec());
    match stored {
        Some(raw) => Ok(Some(Layout::deserialize(&raw)?)),
        None if has_zset => Err(not_rank()),
        None if write => {
            let l = Layout::default_for(Resolution::Seconds);
            call(ctx, true, "SET", &[lk.as_slice(), l.serialize().as_bytes()])?;
            Ok(Some(l))
        }
        None => Ok(None),
    }
}

/// Current (score, time_ms) of a member, decoded.
fn current(
    ctx: &Context,
    board: &RedisString,
    l: &Layout,
    member: &[u8],
) -> Res<Option<(i64, i64)>> {
    let r = call(ctx, false, "ZSCORE", &[board.as_slice(), member])?;
    match reply_bytes(&r) {
        None => Ok(None),
        Some(b) => {
            let v: f64 = std::str::from_utf8(&b)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(not_rank)?;
            Ok(Some(l.decode(v)?))
        }
    }
}

/// Parses the optional trailing `AT t`.
fn opt_at<'a>(args: &mut Args<'a>) -> Res<Option<&'a [u8]>> {
    let at = match args.next() {
        None => None,
        Some(o) if o.eq_ignore_ascii_case(b"AT") => Some(args.value_of("AT")?),
        Some(_) => return Err(Fail::Msg("ERR syntax error: expected AT t".into())),
    };
    if args.next().is_some() {
        return Err(Fail::Msg("ERR syntax error".into()));
    }
    Ok(at)
}

/// `RANK.CREATE K [RESOLUTION s|ms] [MIN n] [MAX n]` → OK.
pub fn create(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, create_impl)
}

fn create_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 8)?;
    let board = super::board(&mut args)?;
    let (mut res, mut min, mut max) = (Resolution::Seconds, None, None);
    while let Some(opt) = args.next() {
        match opt.to_ascii_uppercase().as_slice() {
            b"RESOLUTION" => res = parse_resolution(args.value_of("RESOLUTION")?)?,
            b"MIN" => min = Some(parse_i64("MIN", args.value_of("MIN")?)?),
            b"MAX" => max = Some(parse_i64("MAX", args.value_of("MAX")?)?),
            _ => {
                return Err(Fail::Msg(format!(
                    "ERR syntax error at '{}'",
                    String::from_utf8_lossy(opt)
                )))
            }
        }
    }
    let d = Layout::default_for(res);
    let l = Layout::new(res, min.unwrap_or(d.min), max.unwrap_or(d.max))?;
    let lk = derived(ctx, board, Kind::Layout, &[], true)?;
    if expect_type(ctx, board, KeyType::ZSet)? || expect_type(ctx, &lk, KeyType::String)? {
        return Err(Fail::Msg("ERR board already exists".into()));
    }
    call(ctx, true, "SET", &[lk.as_slice(), l.serialize().as_bytes()])?;
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `RANK.INCR K member delta [AT t]` → the new score.
pub fn incr(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, |ctx, argv| write_score(ctx, argv, true))
}

/// `RANK.SET K member score [AT t]` → the score.
pub fn set(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, |ctx, argv| write_score(ctx, argv, false))
}

fn write_score(ctx: &Context, argv: &[RedisString], add: bool) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, 6)?;
    let board = super::board(&mut args)?;
    let member = args.next_rs()?.as_slice();
    let value = parse_i64(
        if add { "delta" } else { "score" },
        args.next_rs()?.as_slice(),
    )?;
    let (t, _) = write_time(opt_at(&mut args)?)?;
    let l = layout(ctx, board, true)?.ok_or_else(not_rank)?;
    let old = current(ctx, board, &l, member)?;
    let new = if add {
        old.map_or(0, |o| o.0)
            .checked_add(value)
            .ok_or_else(|| Fail::Msg(format!("ERR delta {value} would overflow the score")))?
    } else {
        value
    };
    // Same score: nothing changes, and the time it was reached stays.
    if old.is_some_and(|o| o.0 == new) {
        return Ok(RedisValue::Integer(new));
    }
    let packed = l.encode(new, t)?;
    call(
        ctx,
        true,
        "ZADD",
        &[board.as_slice(), format_score(packed).as_bytes(), member],
    )?;
    Ok(RedisValue::Integer(new))
}

/// `RANK.SCORE K member [WITHTIME]` → score, or `[score, time]`; nil if absent.
pub fn score(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, score_impl)
}

fn score_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, 4)?;
    let board = super::board(&mut args)?;
    let member = args.next_rs()?.as_slice();
    let withtime = match args.next() {
        None => false,
        Some(o) if o.eq_ignore_ascii_case(b"WITHTIME") => true,
        Some(_) => return Err(Fail::Msg("ERR syntax error: expected WITHTIME".into())),
    };
    let Some(l) = layout(ctx, board, false)? else {
        return Ok(RedisValue::Null);
    };
    Ok(match current(ctx, board, &l, member)? {
        None => RedisValue::Null,
        Some((s, _)) if !withtime => RedisValue::Integer(s),
        Some((s, t)) => RedisValue::Array(vec![RedisValue::Integer(s), bulk(format_time_ms(t))]),
    })
}

/// `RANK.RANK K member [TIES]` → 0-based rank, best first; nil if absent.
/// With TIES: the competition rank (members with a strictly higher score).
pub fn rank(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, rank_impl)
}

fn rank_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, 4)?;
    let board = super::board(&mut args)?;
    let member = args.next_rs()?.as_slice();
    let ties = match args.next() {
        None => false,
        Some(o) if o.eq_ignore_ascii_case(b"TIES") => true,
        Some(_) => return Err(Fail::Msg("ERR syntax error: expected TIES".into())),
    };
    let Some(l) = layout(ctx, board, false)? else {
        return Ok(RedisValue::Null);
    };
    if !ties {
        let r = call(ctx, false, "ZRANK", &[board.as_slice(), member])?;
        return Ok(reply_int(&r).map_or(RedisValue::Null, RedisValue::Integer));
    }
    let Some((s, _)) = current(ctx, board, &l, member)? else {
        return Ok(RedisValue::Null);
    };
    // Every member with a higher score packs below (s, earliest time).
    let floor = format!("({}", format_score(l.encode(s, crate::rank::EPOCH_MS)?));
    let r = call(
        ctx,
        false,
        "ZCOUNT",
        &[board.as_slice(), b"-inf", floor.as_bytes()],
    )?;
    Ok(RedisValue::Integer(reply_int(&r).unwrap_or(0)))
}

/// `RANK.RANGE K start stop [WITHSCORES]` → members by rank (ZRANGE indexes).
pub fn range(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, range_impl)
}

fn range_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, 5)?;
    let board = super::board(&mut args)?;
    let start = parse_i64("start", args.next_rs()?.as_slice())?.to_string();
    let stop = parse_i64("stop", args.next_rs()?.as_slice())?.to_string();
    let withscores = match args.next() {
        None => false,
        Some(o) if o.eq_ignore_ascii_case(b"WITHSCORES") => true,
        Some(_) => return Err(Fail::Msg("ERR syntax error: expected WITHSCORES".into())),
    };
    let Some(l) = layout(ctx, board, false)? else {
        return Ok(RedisValue::Array(vec![]));
    };
    let r = call(
        ctx,
        false,
        "ZRANGE",
        &[
            board.as_slice(),
            start.as_bytes(),
            stop.as_bytes(),
            b"WITHSCORES",
        ],
    )?;
    let items = reply_array(&r);
    let mut out = Vec::with_capacity(items.len());
    for pair in items.chunks(2) {
        let [member, packed] = pair else { break };
        out.push(bulk(member.clone()));
        if withscores {
            let v: f64 = std::str::from_utf8(packed)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(not_rank)?;
            out.push(RedisValue::Integer(l.decode(v)?.0));
        }
    }
    Ok(RedisValue::Array(out))
}

/// `RANK.REM K member [member …]` → number removed.
pub fn rem(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, rem_impl)
}

fn rem_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, usize::MAX)?;
    let board = super::board(&mut args)?;
    if layout(ctx, board, false)?.is_none() {
        return Ok(RedisValue::Integer(0));
    }
    let mut zrem: Vec<&[u8]> = vec![board.as_slice()];
    while let Some(m) = args.next() {
        zrem.push(m);
    }
    Ok(RedisValue::Integer(
        reply_int(&call(ctx, true, "ZREM", &zrem)?).unwrap_or(0),
    ))
}

/// `RANK.CARD K` → number of members.
pub fn card(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, card_impl)
}

fn card_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 2)?;
    let board = super::board(&mut args)?;
    if layout(ctx, board, false)?.is_none() {
        return Ok(RedisValue::Integer(0));
    }
    Ok(RedisValue::Integer(
        reply_int(&call(ctx, false, "ZCARD", &[board.as_slice()])?).unwrap_or(0),
    ))
}
