//! `RANK.*` handlers: CREATE, INCR, SET, SCORE, RANK, RANGE, REM, CARD,
//! AROUND, RANGEBYSCORE, MINCR, DROP.

use super::{
    bulk, call, derived, expect_type, guard, open_typed, reply_array, reply_int, write_time,
    zadd_effect, Args, Fail, Res,
};
use crate::ffi::{self, KeyKind};
use crate::keys::Kind;
use crate::parse::{format_score, format_time_ms, parse_i64, ScoreText};
use crate::rank::{parse_order, parse_resolution, Layout, Order, Resolution};
use redis_module::{raw::KeyType, Context, RedisResult, RedisString, RedisValue};
use std::collections::HashMap;

fn not_rank() -> Fail {
    Fail::Msg(
        "ERR key holds a ZSET that was not made by RANK (no board layout); use another key".into(),
    )
}

/// The board's layout; `None` for a missing board (a write gives it the
/// default layout, stored only once the write is known to succeed). `write`
/// asks for write access to the layout key.
fn layout(ctx: &Context, board: &RedisString, write: bool) -> Res<Option<Layout>> {
    let lk = derived(ctx, board, Kind::Layout, &[], write)?;
    let has_zset = expect_type(ctx, board, KeyType::ZSet)?;
    expect_type(ctx, &lk, KeyType::String)?;
    let stored = ctx.open_key(&lk).read().ok().flatten().map(|b| b.to_vec());
    match stored {
        Some(raw) => Ok(Some(Layout::deserialize_cached(&raw)?)),
        None if has_zset => Err(not_rank()),
        None => Ok(None),
    }
}

/// Current (score, time_ms) of a member, decoded.
fn current(
    ctx: &Context,
    board: &RedisString,
    l: &Layout,
    member: &RedisString,
) -> Res<Option<(i64, i64)>> {
    match ffi::Key::open(ctx, board, false).zset_score(member) {
        None => Ok(None),
        Some(v) => Ok(Some(l.decode(v)?)),
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

/// `RANK.CREATE K [RESOLUTION s|ms] [MIN n] [MAX n] [ORDER asc|desc]` → OK.
/// `ORDER asc`: the lowest score ranks first (default `desc`: the highest).
/// Errors: `ERR board already exists`, `ERR ORDER must be asc or desc`, the
/// layout's range errors, `ERR syntax error at '…'`.
pub fn create(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, create_impl)
}

fn create_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 10)?;
    let board = super::board(&mut args)?;
    let (mut res, mut min, mut max, mut order) = (Resolution::Seconds, None, None, Order::Desc);
    while let Some(opt) = args.next() {
        match opt.to_ascii_uppercase().as_slice() {
            b"RESOLUTION" => res = parse_resolution(args.value_of("RESOLUTION")?)?,
            b"MIN" => min = Some(parse_i64("MIN", args.value_of("MIN")?)?),
            b"MAX" => max = Some(parse_i64("MAX", args.value_of("MAX")?)?),
            b"ORDER" => order = parse_order(args.value_of("ORDER")?)?,
            _ => {
                return Err(Fail::Msg(format!(
                    "ERR syntax error at '{}'",
                    opt.escape_ascii()
                )))
            }
        }
    }
    let d = Layout::default_for(res);
    let l = Layout::new(res, min.unwrap_or(d.min), max.unwrap_or(d.max))?.with_order(order);
    let lk = derived(ctx, board, Kind::Layout, &[], true)?;
    // The layout outlives an emptied or deleted ZSET: the board still exists.
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

/// `RANK.SET K member score [GT|LT|BEST] [AT t]` (options in any order) →
/// the score; with GT, LT or BEST, `[score, written]`.
///
/// - GT writes only if `score` is higher than the member's current score,
///   LT only if lower (as ZADD GT/LT); a missing member is always written.
///   BEST is GT on a desc board and LT on an asc board (a missing board is
///   desc).
/// - `[score, written]`: the member's score after the command, and 1 if this
///   command wrote it (a new member, or a better score), 0 if not.
/// - An equal score is never written, so the time it was reached stays.
///
/// Errors: `ERR GT and LT options at the same time are not compatible`,
/// `ERR BEST and GT/LT options at the same time are not compatible`,
/// `ERR syntax error at '…': expected GT, LT, BEST or AT t`, the layout's
/// score and time range errors
/// (checked even when the score would not be written).
pub fn set(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, |ctx, argv| write_score(ctx, argv, false))
}

/// RANK.SET's write condition.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cond {
    Gt,
    Lt,
    Best,
}

/// Parses RANK.SET's options after the score: `GT`, `LT`, `BEST` and `AT t`,
/// in any order (a flag may repeat, as in ZADD).
fn set_options<'a>(args: &mut Args<'a>) -> Res<(Option<Cond>, Option<&'a [u8]>)> {
    let (mut gt, mut lt, mut best, mut at) = (false, false, false, None);
    while let Some(opt) = args.next() {
        if opt.eq_ignore_ascii_case(b"GT") {
            gt = true;
        } else if opt.eq_ignore_ascii_case(b"LT") {
            lt = true;
        } else if opt.eq_ignore_ascii_case(b"BEST") {
            best = true;
        } else if opt.eq_ignore_ascii_case(b"AT") {
            at = Some(args.value_of("AT")?);
        } else {
            return Err(Fail::Msg(format!(
                "ERR syntax error at '{}': expected GT, LT, BEST or AT t",
                opt.escape_ascii()
            )));
        }
    }
    let cond = match (gt, lt, best) {
        (true, true, _) => {
            return Err(Fail::Msg(
                "ERR GT and LT options at the same time are not compatible".into(),
            ))
        }
        (_, _, true) if gt || lt => {
            return Err(Fail::Msg(
                "ERR BEST and GT/LT options at the same time are not compatible".into(),
            ))
        }
        (true, _, _) => Some(Cond::Gt),
        (_, true, _) => Some(Cond::Lt),
        (_, _, true) => Some(Cond::Best),
        _ => None,
    };
    Ok((cond, at))
}

fn write_score(ctx: &Context, argv: &[RedisString], add: bool) -> Res<RedisValue> {
    // SET takes its options in any order, a flag given twice counting
    // once (as ZADD's): no upper bound, so GT with LT gets its own error.
    let mut args = Args::new(argv, 4, if add { 6 } else { usize::MAX })?;
    let board = super::board(&mut args)?;
    let member = args.next_rs()?;
    let value = parse_i64(
        if add { "delta" } else { "score" },
        args.next_rs()?.as_slice(),
    )?;
    let (cond, at) = if add {
        (None, opt_at(&mut args)?)
    } else {
        set_options(&mut args)?
    };
    let (t, _) = write_time(at)?;
    // One handle on the board for the type check, the read and the write.
    let lk = derived(ctx, board, Kind::Layout, &[], true)?;
    let mut board_h = open_typed(ctx, board, KeyKind::ZSet, true)?;
    let stored = {
        let lk_h = open_typed(ctx, &lk, KeyKind::String, false)?;
        match lk_h.kind() {
            KeyKind::Empty if board_h.kind() == KeyKind::ZSet => return Err(not_rank()),
            KeyKind::Empty => None,
            _ => Some(Layout::deserialize_cached(lk_h.read())?),
        }
    };
    let l = stored.unwrap_or_else(|| Layout::default_for(Resolution::Seconds));
    let old = match board_h.zset_score(member) {
        None => None,
        Some(v) => Some(l.decode(v)?),
    };
    let new = if add {
        old.map_or(0, |o| o.0)
            .checked_add(value)
            .ok_or_else(|| Fail::Msg(format!("ERR delta {value} would overflow the score")))?
    } else {
        value
    };
    let reply = |score: i64, written: bool| match cond {
        None => RedisValue::Integer(score),
        Some(_) => RedisValue::Array(vec![
            RedisValue::Integer(score),
            RedisValue::Integer(written as i64),
        ]),
    };
    if let Some(c) = cond {
        // The score and time must fit the board even when not written.
        l.encode(new, t)?;
        let higher = match c {
            Cond::Gt => true,
            Cond::Lt => false,
            Cond::Best => l.order == Order::Desc,
        };
        if let Some((o, _)) = old {
            if !(if higher { new > o } else { new < o }) {
                return Ok(reply(o, false));
            }
        }
    }
    // Same score: nothing changes, and the time it was reached stays.
    if old.is_some_and(|o| o.0 == new) {
        return Ok(reply(new, false));
    }
    let packed = l.encode(new, t)?;
    // Every check passed: a new board's layout is stored with its first member.
    if stored.is_none() {
        call(ctx, true, "SET", &[lk.as_slice(), l.serialize().as_bytes()])?;
    }
    board_h.zset_add(packed, member)?;
    zadd_effect(ctx, board, &ScoreText::new(packed), member);
    Ok(reply(new, true))
}

/// `RANK.SCORE K member [WITHTIME]` → score, or `[score, time]`; nil if absent.
pub fn score(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, score_impl)
}

fn score_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, 4)?;
    let board = super::board(&mut args)?;
    let member = args.next_rs()?;
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
/// With TIES: the competition rank (members with a strictly better score:
/// higher on a desc board, lower on an asc one).
pub fn rank(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, rank_impl)
}

fn rank_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, 4)?;
    let board = super::board(&mut args)?;
    let member = args.next_rs()?;
    let ties = match args.next() {
        None => false,
        Some(o) if o.eq_ignore_ascii_case(b"TIES") => true,
        Some(_) => return Err(Fail::Msg("ERR syntax error: expected TIES".into())),
    };
    let Some(l) = layout(ctx, board, false)? else {
        return Ok(RedisValue::Null);
    };
    if !ties {
        let r = call(ctx, false, "ZRANK", &[board.as_slice(), member.as_slice()])?;
        return Ok(reply_int(&r).map_or(RedisValue::Null, RedisValue::Integer));
    }
    let Some((s, _)) = current(ctx, board, &l, member)? else {
        return Ok(RedisValue::Null);
    };
    // Every member with a better score packs below (s, earliest time).
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

/// Most neighbours RANK.AROUND returns on each side.
pub const MAX_AROUND: i64 = 1000;

/// `RANK.AROUND K member n` → `[[rank, member, score], …]`: the member and up
/// to `n` neighbours on each side, best first, clamped at the ends; empty if
/// the member is absent.
pub fn around(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, around_impl)
}

fn around_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, 4)?;
    let board = super::board(&mut args)?;
    let member = args.next_rs()?.as_slice();
    let n = parse_i64("n", args.next_rs()?.as_slice())?;
    if !(0..=MAX_AROUND).contains(&n) {
        return Err(Fail::Msg(format!(
            "ERR n must be an integer between 0 and {MAX_AROUND}"
        )));
    }
    let Some(l) = layout(ctx, board, false)? else {
        return Ok(RedisValue::Array(vec![]));
    };
    let Some(r) = reply_int(&call(ctx, false, "ZRANK", &[board.as_slice(), member])?) else {
        return Ok(RedisValue::Array(vec![]));
    };
    let first = (r - n).max(0);
    let (s, e) = (first.to_string(), (r + n).to_string());
    let items = reply_array(&call(
        ctx,
        false,
        "ZRANGE",
        &[board.as_slice(), s.as_bytes(), e.as_bytes(), b"WITHSCORES"],
    )?);
    let mut out = Vec::with_capacity(items.len() / 2);
    for (i, pair) in items.chunks(2).enumerate() {
        let [m, packed] = pair else { break };
        out.push(RedisValue::Array(vec![
            RedisValue::Integer(first + i as i64),
            bulk(m.clone()),
            RedisValue::Integer(decode_text(&l, packed)?.0),
        ]));
    }
    Ok(RedisValue::Array(out))
}

/// Decodes a ZSET score given as text.
fn decode_text(l: &Layout, packed: &[u8]) -> Res<(i64, i64)> {
    let v: f64 = std::str::from_utf8(packed)
        .ok()
        .and_then(|s| s.parse().ok())
        .ok_or_else(not_rank)?;
    Ok(l.decode(v)?)
}

/// Parses a score bound: an integer, `-inf` or `+inf`.
fn score_bound(name: &str, raw: &[u8], l: &Layout) -> Res<i64> {
    match raw.to_ascii_lowercase().as_slice() {
        b"-inf" => Ok(l.min),
        b"+inf" | b"inf" => Ok(l.max),
        _ => Ok(parse_i64(name, raw)
            .map_err(|_| Fail::Msg(format!("ERR {name} must be an integer, -inf or +inf")))?),
    }
}

/// `RANK.RANGEBYSCORE K min max [LIMIT offset count] [WITHSCORES]` → members
/// whose score is in `[min, max]` (inclusive, exact; `min` is the lower
/// number on every board), best first: highest first on a desc board,
/// lowest first on an asc one.
pub fn rangebyscore(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, rangebyscore_impl)
}

fn rangebyscore_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, 8)?;
    let board = super::board(&mut args)?;
    let (raw_min, raw_max) = (args.next_rs()?.as_slice(), args.next_rs()?.as_slice());
    let (mut limit, mut withscores) = (None, false);
    while let Some(opt) = args.next() {
        match opt.to_ascii_uppercase().as_slice() {
            b"LIMIT" => {
                let off = parse_i64("offset", args.value_of("LIMIT")?)?;
                let cnt = parse_i64("count", args.value_of("LIMIT")?)?;
                if off < 0 {
                    return Err(Fail::Msg("ERR offset must be >= 0".into()));
                }
                limit = Some((off, cnt));
            }
            b"WITHSCORES" => withscores = true,
            _ => {
                return Err(Fail::Msg(format!(
                    "ERR syntax error at '{}'",
                    opt.escape_ascii()
                )))
            }
        }
    }
    let Some(l) = layout(ctx, board, false)? else {
        return Ok(RedisValue::Array(vec![]));
    };
    let (min, max) = (
        score_bound("min", raw_min, &l)?.max(l.min),
        score_bound("max", raw_max, &l)?.min(l.max),
    );
    if min > max {
        return Ok(RedisValue::Array(vec![]));
    }
    // Best first = ascending packed values: from the better bound at the
    // earliest time to the worse bound at the latest time.
    let (better, worse) = l.better_worse(min, max);
    let lo = format_score(l.encode(better, crate::rank::EPOCH_MS)?);
    let hi = format_score(l.encode(worse, l.last_time_ms())?);
    let mut zargs: Vec<Vec<u8>> = vec![
        board.as_slice().to_vec(),
        lo.into_bytes(),
        hi.into_bytes(),
        b"WITHSCORES".to_vec(),
    ];
    if let Some((off, cnt)) = limit {
        zargs.extend([
            b"LIMIT".to_vec(),
            off.to_string().into_bytes(),
            cnt.to_string().into_bytes(),
        ]);
    }
    let refs: Vec<&[u8]> = zargs.iter().map(|v| v.as_slice()).collect();
    let items = reply_array(&call(ctx, false, "ZRANGEBYSCORE", &refs)?);
    let mut out = Vec::with_capacity(items.len());
    for pair in items.chunks(2) {
        let [m, packed] = pair else { break };
        out.push(bulk(m.clone()));
        if withscores {
            out.push(RedisValue::Integer(decode_text(&l, packed)?.0));
        }
    }
    Ok(RedisValue::Array(out))
}

/// `RANK.MINCR K delta member [member …]` → the new score of each member, in
/// argument order. All or nothing: if any new score is out of range, nothing
/// is written. Uses the server clock. It takes no GT/LT: the sign of `delta`
/// already decides whether every score goes up or down.
pub fn mincr(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, mincr_impl)
}

fn mincr_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, usize::MAX)?;
    let board = super::board(&mut args)?;
    let delta = parse_i64("delta", args.next_rs()?.as_slice())?;
    let (t, _) = write_time(None)?;
    let stored = layout(ctx, board, true)?;
    let l = stored.unwrap_or_else(|| Layout::default_for(Resolution::Seconds));
    // Plan every write first (a member named twice gets delta twice): one
    // read handle on the board, and each member's latest plan entry found
    // by hash, so the plan costs O(n) lookups, not O(n²).
    let mut plan: Vec<(&RedisString, i64, Option<f64>)> = Vec::with_capacity(argv.len() - 3);
    let mut latest: HashMap<&[u8], usize> = HashMap::with_capacity(argv.len() - 3);
    {
        let board_h = ffi::Key::open(ctx, board, false);
        while let Ok(member) = args.next_rs() {
            let old = match latest.get(member.as_slice()) {
                Some(&i) => Some(plan[i].1),
                None => match board_h.zset_score(member) {
                    None => None,
                    Some(v) => Some(l.decode(v)?.0),
                },
            };
            let new = old
                .unwrap_or(0)
                .checked_add(delta)
                .ok_or_else(|| Fail::Msg(format!("ERR delta {delta} would overflow the score")))?;
            let packed = if old == Some(new) {
                None
            } else {
                Some(l.encode(new, t)?)
            };
            latest.insert(member.as_slice(), plan.len());
            plan.push((member, new, packed));
        }
    }
    if stored.is_none() {
        let lk = derived(ctx, board, Kind::Layout, &[], true)?;
        call(ctx, true, "SET", &[lk.as_slice(), l.serialize().as_bytes()])?;
    }
    // Write each member's final score once, through one write handle (only
    // if something changes: closing a write handle signals the key). Each
    // write is replicated as its exact ZADD; the `zadd` event and the WATCH
    // signal fire once, as for one ZADD of many members.
    let mut out = Vec::with_capacity(plan.len());
    let mut board_w: Option<ffi::Key> = None;
    for (i, (member, new, packed)) in plan.iter().enumerate() {
        if let Some(p) = packed {
            if latest.get(member.as_slice()) == Some(&i) {
                let h = board_w.get_or_insert_with(|| ffi::Key::open(ctx, board, true));
                h.zset_add(*p, member)?;
                let text = crate::parse::ScoreText::new(*p);
                ffi::replicate_zadd(ctx, board, text.as_bytes(), member);
            }
        }
        out.push(RedisValue::Integer(*new));
    }
    if board_w.is_some() {
        ffi::notify(ctx, ffi::Event::ZSet, c"zadd", board);
        ffi::signal_modified(ctx, board);
    }
    Ok(RedisValue::Array(out))
}

/// The keys RANK.DROP deletes besides the board ZSET `K`: every derived key
/// a RANK board owns, as (kind, parts) for [`crate::keys::derived`]. Today
/// only the layout; a new kind of RANK-owned key (period boards…) adds its
/// keys here, from the layout that describes them, and RANK.DROP deletes
/// them with the rest.
fn owned_keys(_l: &Layout) -> Vec<(Kind, Vec<Vec<u8>>)> {
    vec![(Kind::Layout, vec![])]
}

/// `RANK.DROP K` → the number of keys deleted: the board ZSET and every key
/// RANK derived from it (see [`owned_keys`]), atomically, with one UNLINK
/// (replicated as it is); 0 for a missing board.
///
/// Errors: a ZSET without a board layout is not deleted (the error of every
/// RANK command on it); `NOPERM` unless the user may write every key;
/// `WRONGTYPE` if `K` or the layout key holds another type.
pub fn drop_board(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, drop_impl)
}

fn drop_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 2)?;
    let board = super::board(&mut args)?;
    let Some(l) = layout(ctx, board, true)? else {
        return Ok(RedisValue::Integer(0));
    };
    // Every name first, each ACL-checked for writing: nothing is deleted
    // unless all may be.
    let mut names = vec![board.clone()];
    for (kind, parts) in owned_keys(&l) {
        let p: Vec<&[u8]> = parts.iter().map(|v| v.as_slice()).collect();
        names.push(derived(ctx, board, kind, &p, true)?);
    }
    let refs: Vec<&[u8]> = names.iter().map(|n| n.as_slice()).collect();
    Ok(RedisValue::Integer(
        reply_int(&call(ctx, true, "UNLINK", &refs)?).unwrap_or(0),
    ))
}
