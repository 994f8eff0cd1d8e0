//! `RANK.*` handlers: CREATE, INCR, SET, SCORE, RANK, RANGE, REM, CARD,
//! AROUND, RANGEBYSCORE, MINCR, DROP.

use super::identity::{self, Family};
use super::rank_repl::{self, leading_clock};
use super::{bulk, from_master_or_aof, write_time_at, zadd_effect, Args, BoardCtx, CommandsMode};
use super::{Fail, Res};
use crate::ffi::{self, KeyKind};
use crate::keys::Kind;
use crate::parse::{format_time_ms, parse_i64, IntText, ScoreText};
use crate::rank::period::{self, parse_period, Period, Spec, Tz};
use crate::rank::{
    parse_order, parse_resolution, parse_settings_cached, plan_update, plan_update_into, Layout,
    Order, Resolution, Settings, Update,
};
use redis_module::{Context, RedisString, RedisValue};
use std::collections::HashMap;

/// The error of a ZSET without a RANK layout: a HOT board's, or the one
/// error of a board whose layout is gone ([`identity::lost`]).
fn not_rank(b: &BoardCtx) -> Fail {
    if identity::has_hot_record(b) {
        identity::other_family(b, Family::Hot)
    } else {
        identity::lost(b, Family::Rank)
    }
}

/// The board's settings; `None` for a missing board (a write gives it the
/// default layout, stored only once the write is known to succeed). `write`
/// asks for write access to the layout key.
pub(super) fn settings(b: &BoardCtx, write: bool) -> Res<Option<Settings>> {
    let lk = b.derived(Kind::Layout, &[], write)?;
    let board_h = b.open_board(false)?;
    stored_settings(b, &lk, &board_h)
}

/// A key a command reads or writes: the board itself or one of its
/// derived keys.
enum Name<'a> {
    Board(&'a RedisString),
    Derived(RedisString),
}

impl std::ops::Deref for Name<'_> {
    type Target = RedisString;
    fn deref(&self) -> &RedisString {
        match self {
            Name::Board(b) => b,
            Name::Derived(d) => d,
        }
    }
}

/// `PERIOD day|week|month [AGO n]` of a read: the period and how many
/// periods back (0 = the current one).
type PeriodArg = Option<(Period, i64)>;

/// Parses the rest of `PERIOD day|week|month [AGO n]` (PERIOD was read).
/// Errors: `ERR PERIOD must be day, week or month`, `ERR AGO must be an
/// integer >= 0`.
fn period_opt(args: &mut Args) -> Res<(Period, i64)> {
    let p = parse_period("PERIOD", args.value_of("PERIOD")?)?;
    let mut ago = 0;
    if args.peek().is_some_and(|w| w.eq_ignore_ascii_case(b"AGO")) {
        args.next();
        ago = parse_i64("AGO", args.value_of("AGO")?)
            .ok()
            .filter(|n| *n >= 0)
            .ok_or_else(|| Fail::Msg("ERR AGO must be an integer >= 0".into()))?;
    }
    Ok((p, ago))
}

/// A read's options, in any order: `PERIOD p [AGO n]` and, when `flag` is
/// given, that flag (WITHTIME, TIES, WITHSCORES). Returns whether the flag
/// was given, and the period. Error: `ERR syntax error: expected <flag> or
/// PERIOD`.
fn read_options(args: &mut Args, flag: Option<&[u8]>) -> Res<(bool, PeriodArg)> {
    let (mut set, mut period) = (false, None);
    while let Some(o) = args.next() {
        if flag.is_some_and(|f| o.eq_ignore_ascii_case(f)) {
            set = true;
        } else if o.eq_ignore_ascii_case(b"PERIOD") {
            period = Some(period_opt(args)?);
        } else {
            return Err(Fail::Msg(match flag {
                Some(f) => format!("ERR syntax error: expected {} or PERIOD", f.escape_ascii()),
                None => "ERR syntax error: expected PERIOD".into(),
            }));
        }
    }
    Ok((set, period))
}

/// What a read reads: the board's layout and the ZSET holding the members
/// (the board, or with `PERIOD p AGO n` the board of the period `n` periods
/// before the one containing the server clock, in the board's TZ). `None`:
/// nothing to read (a missing board, or a period board that has certainly
/// expired). Error `ERR board has no <p> period` for a period the board
/// was not created with.
fn read_target<'a>(b: &BoardCtx<'a>, period: PeriodArg) -> Res<Option<(Layout, Name<'a>)>> {
    let board = b.key;
    let Some((l, spec)) = settings(b, false)? else {
        return Ok(None);
    };
    let Some((p, ago)) = period else {
        return Ok(Some((l, Name::Board(board))));
    };
    let Some(spec) = spec.filter(|s| s.has(p)) else {
        return Err(Fail::Msg(format!("ERR board has no {} period", p.name())));
    };
    // Beyond the live list every period board has expired.
    if ago > spec.keep + 1 {
        return Ok(None);
    }
    let span = p.containing(ffi::now_ms(), spec.tz).ago(ago);
    let (name, _) = b.open_derived(
        Kind::Period,
        &[span.id_text().as_bytes()],
        KeyKind::ZSet,
        false,
    )?;
    Ok(Some((l, Name::Derived(name))))
}

/// Current (score, time_ms) of a member of `zset` (the board or a period
/// board), decoded.
fn current(
    b: &BoardCtx,
    zset: &RedisString,
    l: &Layout,
    member: &RedisString,
) -> Res<Option<(i64, i64)>> {
    match b.open(zset, KeyKind::ZSet, false)?.zset_score(member) {
        None => Ok(None),
        Some(v) => Ok(Some(l.decode(v)?)),
    }
}

/// `RANK.CREATE K [RESOLUTION s|ms] [MIN n] [MAX n] [ORDER asc|desc]
/// [PERIODS day|week|month … [TZ ±hh:mm] [KEEP n]]` → OK.
/// `ORDER asc`: the lowest score ranks first (default `desc`: the highest).
/// PERIODS: also keep a board per day, ISO week and/or calendar month in
/// time zone TZ (default +00:00), each readable for KEEP whole periods after
/// it ends (default 2, 0..=10000).
/// Errors: `ERR board already exists`, `ERR ORDER must be asc or desc`, the
/// layout's range errors, `ERR PERIODS must be day, week or month`, `ERR TZ
/// …`, `ERR KEEP …`, `ERR TZ and KEEP need PERIODS`, `ERR syntax error at '…'`.
pub(super) fn create_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 24)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let text = create_layout(&mut args)?;
    let lk = b.derived(Kind::Layout, &[], true)?;
    // The layout outlives an emptied or deleted ZSET: the board still exists.
    let exists = || Fail::Msg("ERR board already exists".into());
    if b.open_board(false)?.kind() != KeyKind::Empty {
        return Err(exists());
    }
    let mut lk_h = b.open(&lk, KeyKind::String, true)?;
    if lk_h.kind() != KeyKind::Empty {
        return Err(exists());
    }
    let settings = crate::rank::parse_settings(text.as_bytes())?;
    let _mode = CommandsMode::enter();
    b.set_new(&lk, &mut lk_h, text.as_bytes())?;
    rank_repl::replicate_create(ctx, b.key, &settings);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// Parses RANK.CREATE's options into the layout key's text.
pub(super) fn create_layout(args: &mut Args) -> Res<String> {
    let (mut res, mut min, mut max, mut order) = (Resolution::Seconds, None, None, Order::Desc);
    let (mut periods, mut tz, mut keep) = (Vec::new(), None, None);
    while let Some(opt) = args.next() {
        match opt.to_ascii_uppercase().as_slice() {
            b"RESOLUTION" => res = parse_resolution(args.value_of("RESOLUTION")?)?,
            b"MIN" => min = Some(parse_i64("MIN", args.value_of("MIN")?)?),
            b"MAX" => max = Some(parse_i64("MAX", args.value_of("MAX")?)?),
            b"ORDER" => order = parse_order(args.value_of("ORDER")?)?,
            b"PERIODS" => {
                // One or more period names (repeats are ignored).
                periods.push(parse_period("PERIODS", args.value_of("PERIODS")?)?);
                while let Some(p) = args.peek().and_then(|w| parse_period("PERIODS", w).ok()) {
                    args.next();
                    periods.push(p);
                }
            }
            b"TZ" => tz = Some(Tz::parse(args.value_of("TZ")?)?),
            b"KEEP" => keep = Some(parse_keep(args.value_of("KEEP")?)?),
            _ => return Err(Fail::syntax_at(opt)),
        }
    }
    let d = Layout::default_for(res);
    let l = Layout::new(res, min.unwrap_or(d.min), max.unwrap_or(d.max))?.with_order(order);
    let mut text = l.serialize();
    if periods.is_empty() {
        if tz.is_some() || keep.is_some() {
            return Err(Fail::Msg("ERR TZ and KEEP need PERIODS".into()));
        }
    } else {
        let keep = keep.unwrap_or(period::DEFAULT_KEEP);
        let spec = Spec::new(&periods, tz.unwrap_or(Tz::UTC), keep)?;
        text.push(' ');
        text.push_str(&spec.serialize());
    }
    Ok(text)
}

/// Parses KEEP's value: 0 ..= [`period::MAX_KEEP`]. Error:
/// [`crate::rank::RankError::BadKeep`].
fn parse_keep(raw: &[u8]) -> Res<i64> {
    let n = parse_i64("KEEP", raw)
        .ok()
        .filter(|n| (0..=period::MAX_KEEP).contains(n));
    Ok(n.ok_or(crate::rank::RankError::BadKeep)?)
}

/// `RANK.INCR K member delta [AT t]` → the new score.
pub(super) fn incr_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    write_score(ctx, argv, true)
}

/// `RANK.SET K member score [GT|LT|BEST] [AT t]` (options in any order) →
/// the score; with GT, LT or BEST, `[score, written]`.
///
/// - GT writes only if `score` is higher than the member's current score,
///   LT only if lower (as ZADD GT/LT); a missing member is always written.
///   BEST is GT on a desc board and LT on an asc board (a missing board is
///   desc).
/// - On a board with periods, the condition applies to each board (the
///   all-time board and each current period board) separately, against
///   that board's current score.
/// - `[score, written]`: the member's score on the all-time board after the
///   command, and 1 if this command wrote it there (a new member, or a
///   better score), 0 if not.
/// - An equal score is never written, so the time it was reached stays.
///
/// Errors: `ERR GT and LT options at the same time are not compatible`,
/// `ERR BEST and GT/LT options at the same time are not compatible`,
/// `ERR syntax error at '…': expected GT, LT, BEST or AT t`, the layout's
/// score and time range errors
/// (checked even when the score would not be written).
pub(super) fn set_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    write_score(ctx, argv, false)
}

/// RANK.SET's write condition.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cond {
    Gt,
    Lt,
    Best,
}

impl Cond {
    /// The option's name, as RANK.SET takes it.
    fn word(self) -> &'static [u8] {
        match self {
            Cond::Gt => b"GT",
            Cond::Lt => b"LT",
            Cond::Best => b"BEST",
        }
    }
}

/// RANK.SET's options: the condition, `AT t` and `CLOCK c` (only from the
/// master or the AOF).
type SetOptions<'a> = (Option<Cond>, Option<&'a [u8]>, Option<i64>);

/// Parses RANK.SET's options after the score: `GT`, `LT`, `BEST` and `AT t`,
/// in any order (a flag may repeat, as in ZADD), and with `replicated`
/// (from the master or the AOF) `CLOCK c`.
fn set_options<'a>(args: &mut Args<'a>, replicated: bool) -> Res<SetOptions<'a>> {
    let (mut gt, mut lt, mut best, mut at, mut clock) = (false, false, false, None, None);
    while let Some(opt) = args.next() {
        if replicated && opt.eq_ignore_ascii_case(b"CLOCK") {
            clock = Some(parse_i64("CLOCK", args.value_of("CLOCK")?)?);
        } else if opt.eq_ignore_ascii_case(b"GT") {
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
    Ok((cond, at, clock))
}

/// A board a write updates, open for writing: the all-time board, or a
/// period board with the instant (unix ms) it expires at.
struct Dest<'a> {
    name: Name<'a>,
    h: ffi::Key,
    expiry: Option<i64>,
}

/// Most boards one write updates: the board and one per period (day, week,
/// month).
const MAX_DESTS: usize = 1 + Period::ALL.len();

/// Up to [`MAX_DESTS`] items kept on the stack (the write path allocates
/// nothing for its boards).
struct Few<T> {
    items: [Option<T>; MAX_DESTS],
    len: usize,
}

impl<T> Few<T> {
    fn new() -> Self {
        Few {
            items: std::array::from_fn(|_| None),
            len: 0,
        }
    }

    /// Adds an item. Panics past [`MAX_DESTS`] (a board has at most three
    /// periods).
    fn push(&mut self, t: T) {
        self.items[self.len] = Some(t);
        self.len += 1;
    }

    fn len(&self) -> usize {
        self.len
    }

    fn iter(&self) -> impl Iterator<Item = &T> {
        self.items[..self.len].iter().flatten()
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.items[..self.len].iter_mut().flatten()
    }

    fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.items.get_mut(i)?.as_mut()
    }
}

/// The boards a write at `t_ms` updates: the board itself (open as
/// `board_h`), then the board of the period containing `t_ms` for each
/// period of `spec`, except those already expired at `now_ms` (an old AT):
/// they are not written. Period boards are ACL-checked for writing and
/// type-checked.
fn dests<'a>(
    b: &BoardCtx<'a>,
    board_h: ffi::Key,
    spec: Option<&Spec>,
    t_ms: i64,
    now_ms: i64,
) -> Res<Few<Dest<'a>>> {
    let board = b.key;
    let mut out = Few::new();
    out.push(Dest {
        name: Name::Board(board),
        h: board_h,
        expiry: None,
    });
    if let Some(spec) = spec {
        for p in spec.periods() {
            let span = p.containing(t_ms, spec.tz);
            let expiry = spec.expiry(span);
            if expiry <= now_ms {
                continue;
            }
            let (name, h) = b.open_derived(
                Kind::Period,
                &[span.id_text().as_bytes()],
                KeyKind::ZSet,
                true,
            )?;
            out.push(Dest {
                name: Name::Derived(name),
                h,
                expiry: Some(expiry),
            });
        }
    }
    Ok(out)
}

/// Gives a period board written through `h` its expiry `at` (unix ms) if
/// it has none (a board just created), replicated as `PEXPIREAT name at`.
/// Where the server cannot set an absolute expiry (Redis 7.0), the relative
/// one is taken against this server's own clock, not the write's `CLOCK`,
/// so a replica or an AOF load also expires the board at `at`.
fn period_expiry(ctx: &Context, name: &RedisString, h: &mut ffi::Key, at: i64) {
    if h.ttl().is_some() {
        return;
    }
    crate::stats::add(&crate::stats::RANK_PERIODS_ROLLED, 1);
    h.expire_at(at, ffi::now_ms());
    let at_s = IntText::new(at);
    super::effect(
        ctx,
        name,
        ffi::Event::Generic,
        c"expire",
        c"PEXPIREAT",
        &[at_s.as_bytes()],
    );
}

/// RANK.INCR (`add`) and RANK.SET: read → plan ([`plan_update`], pure) →
/// write. Every board's new score is decided and checked against the layout
/// before anything is written, so a refused write changes no board.
fn write_score(ctx: &Context, argv: &[RedisString], add: bool) -> Res<RedisValue> {
    // SET takes its options in any order, a flag given twice counting
    // once (as ZADD's): no upper bound, so GT with LT gets its own error.
    // `CLOCK c` (two more arguments) only from the master or the AOF.
    let replicated = from_master_or_aof(ctx);
    let max = match (add, replicated) {
        (false, _) => usize::MAX,
        (true, false) => 6,
        (true, true) => 8,
    };
    let mut args = Args::new(argv, 4, max)?;
    let b = BoardCtx::from_args_replicated(ctx, &mut args, replicated)?;
    let member = args.next_rs()?;
    let name = if add { "delta" } else { "score" };
    let raw_value = args.next_rs()?;
    let value = parse_i64(name, raw_value.as_slice())?;
    let (cond, (t, now)) = if add {
        (
            None,
            super::trailing_at_clock_replicated(&mut args, replicated)?,
        )
    } else {
        let (cond, at, clock) = set_options(&mut args, replicated)?;
        (cond, write_time_at(at, clock.unwrap_or_else(ffi::now_ms))?)
    };
    let mode = CommandsMode::enter();
    // Read: the layout, the board and the current board of each period.
    let lk = b.derived(Kind::Layout, &[], true)?;
    let board_h = b.open_board(true)?;
    let stored = stored_settings(&b, &lk, &board_h)?;
    if stored.is_none() {
        identity::refuse_without_identity(&b, Family::Rank)?;
    }
    let (l, spec) = stored.unwrap_or((Layout::default_for(Resolution::Seconds), None));
    let mut dests = dests(&b, board_h, spec.as_ref(), t, now)?;
    // Plan.
    let update = match cond {
        None if add => Update::Add(value),
        None => Update::Set(value, None),
        Some(c) => {
            // The score and time must fit the board even when not written.
            l.encode(value, t)?;
            let higher = c == Cond::Gt || (c == Cond::Best && l.order == Order::Desc);
            Update::Set(value, Some(higher))
        }
    };
    // Plan, on the stack: one entry per board.
    let n = dests.len();
    let mut olds = [None; MAX_DESTS];
    for (o, d) in olds.iter_mut().zip(dests.iter()) {
        *o =
            d.h.zset_score(member)
                .map(|v| l.decode(v).map(|s| s.0))
                .transpose()?;
    }
    let mut plan = [(0i64, false); MAX_DESTS];
    plan_update_into(&olds[..n], update, &mut plan[..n])?;
    let mut writes = [(0usize, 0f64); MAX_DESTS];
    let mut nw = 0;
    for (i, &(score, write)) in plan[..n].iter().enumerate() {
        if write {
            writes[nw] = (i, l.encode(score, t)?);
            nw += 1;
        }
    }
    // Write: a new board's layout is stored with its first member. The
    // command is replicated whenever it may have written, even if a write
    // failed half-way: the replica runs it to the same point.
    let wrote = match stored {
        None => store_layout(&b, &lk, &l),
        Some(_) => Ok(()),
    }
    .and_then(|()| write_members(ctx, &mut dests, &writes[..nw], member));
    if nw > 0 || stored.is_none() {
        let c = cond.map(Cond::word);
        rank_repl::replicate_score(ctx, add, b.key, member, raw_value, c, t, now);
    }
    drop(mode);
    wrote?;
    let (score, written) = plan[0];
    Ok(match cond {
        None => RedisValue::Integer(score),
        Some(_) => RedisValue::Array(vec![
            RedisValue::Integer(score),
            RedisValue::Integer(i64::from(written)),
        ]),
    })
}

/// The settings in the layout key `lk` (open read-only here); `None` for a
/// new board. Error: a ZSET at `board_h` without a layout is not RANK's.
pub(super) fn stored_settings(
    b: &BoardCtx,
    lk: &RedisString,
    board_h: &ffi::Key,
) -> Res<Option<Settings>> {
    let lk_h = b.open(lk, KeyKind::String, false)?;
    match lk_h.kind() {
        KeyKind::Empty if board_h.kind() == KeyKind::ZSet => Err(not_rank(b)),
        KeyKind::Empty => Ok(None),
        _ => Ok(Some(parse_settings_cached(lk_h.read())?)),
    }
}

/// Stores a new board's layout `l` in its layout key `lk` (missing): the
/// first write of a board, once it is known to succeed. In `commands` mode
/// replicated as the `RANK.CREATE` of that layout, ahead of the write.
fn store_layout(b: &BoardCtx, lk: &RedisString, l: &Layout) -> Res<()> {
    let mut h = b.open(lk, KeyKind::String, true)?;
    b.set_new(lk, &mut h, l.serialize().as_bytes())?;
    rank_repl::replicate_create(b.ctx, b.key, &(*l, None));
    Ok(())
}

/// Writes `member`'s packed score on each board of `writes` (index into
/// `dests`, packed score), replicated as its exact ZADD; a period board
/// gets its expiry.
fn write_members(
    ctx: &Context,
    dests: &mut Few<Dest>,
    writes: &[(usize, f64)],
    member: &RedisString,
) -> Res<()> {
    for &(i, packed) in writes {
        let Some(d) = dests.get_mut(i) else {
            continue;
        };
        d.h.zset_add(packed, member)?;
        if super::replicating_commands() {
            // The command is replicated instead: no score text to make.
            ffi::notify(ctx, ffi::Event::ZSet, c"zadd", &d.name);
            ffi::signal_modified(ctx, &d.name);
        } else {
            zadd_effect(ctx, &d.name, &ScoreText::new(packed), member);
        }
        if let Some(at) = d.expiry {
            period_expiry(ctx, &d.name, &mut d.h, at);
        }
    }
    Ok(())
}

/// `RANK.SCORE K member [WITHTIME] [PERIOD day|week|month [AGO n]]` →
/// score, or `[score, time]`; nil if absent.
pub(super) fn score_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, 8)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let member = args.next_rs()?;
    let (withtime, period) = read_options(&mut args, Some(b"WITHTIME"))?;
    let Some((l, key)) = read_target(&b, period)? else {
        return Ok(RedisValue::Null);
    };
    Ok(match current(&b, &key, &l, member)? {
        None => RedisValue::Null,
        Some((s, _)) if !withtime => RedisValue::Integer(s),
        Some((s, t)) => RedisValue::Array(vec![RedisValue::Integer(s), bulk(format_time_ms(t))]),
    })
}

/// `RANK.RANK K member [TIES] [PERIOD day|week|month [AGO n]]` → 0-based
/// rank, best first; nil if absent.
/// With TIES: the competition rank (members with a strictly better score:
/// higher on a desc board, lower on an asc one).
pub(super) fn rank_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, 8)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let member = args.next_rs()?;
    let (ties, period) = read_options(&mut args, Some(b"TIES"))?;
    let Some((l, key)) = read_target(&b, period)? else {
        return Ok(RedisValue::Null);
    };
    let board: &RedisString = &key;
    if !ties {
        return Ok(b
            .zrank(board, member)?
            .map_or(RedisValue::Null, |r| RedisValue::Integer(r as i64)));
    }
    let Some((s, _)) = current(&b, board, &l, member)? else {
        return Ok(RedisValue::Null);
    };
    // Every member with a better score packs below (s, earliest time).
    let floor = ffi::Bound::excl(l.encode(s, crate::rank::EPOCH_MS)?);
    let below = b.zcount(board, ffi::Bound::incl(f64::NEG_INFINITY), floor);
    Ok(RedisValue::Integer(below as i64))
}

/// `RANK.RANGE K start stop [WITHSCORES] [WITHTIME] [PERIOD day|week|month
/// [AGO n]]` → members by rank (ZRANGE indexes), each followed by its score
/// (WITHSCORES) and the time it was reached (WITHTIME, unix seconds as text,
/// as RANK.SCORE … WITHTIME gives it): `[member, score, time, …]` with both.
pub(super) fn range_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, 10)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let start = parse_i64("start", args.next_rs()?.as_slice())?;
    let stop = parse_i64("stop", args.next_rs()?.as_slice())?;
    // WITHSCORES, WITHTIME and PERIOD p [AGO n], in any order.
    let (mut withscores, mut withtime, mut period) = (false, false, None);
    while let Some(o) = args.next() {
        if o.eq_ignore_ascii_case(b"WITHSCORES") {
            withscores = true;
        } else if o.eq_ignore_ascii_case(b"WITHTIME") {
            withtime = true;
        } else if o.eq_ignore_ascii_case(b"PERIOD") {
            period = Some(period_opt(&mut args)?);
        } else {
            return Err(Fail::Msg(
                "ERR syntax error: expected WITHSCORES, WITHTIME or PERIOD".into(),
            ));
        }
    }
    let Some((l, key)) = read_target(&b, period)? else {
        return Ok(RedisValue::Array(vec![]));
    };
    let board: &RedisString = &key;
    let items = b.zrange(board, start, stop)?;
    if !withtime {
        return members_reply(&l, items, withscores);
    }
    let mut out = Vec::with_capacity(items.len() * (2 + usize::from(withscores)));
    for (m, packed) in items {
        let (score, time_ms) = l.decode(packed)?;
        out.push(RedisValue::BulkRedisString(m));
        if withscores {
            out.push(RedisValue::Integer(score));
        }
        out.push(bulk(format_time_ms(time_ms)));
    }
    Ok(RedisValue::Array(out))
}

/// `RANK.REM K member [member …]` → number removed.
pub(super) fn rem_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, usize::MAX)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    // The board is opened once, for writing, and its settings read through it.
    let lk = b.derived(Kind::Layout, &[], false)?;
    let mut h = b.open_board(true)?;
    if stored_settings(&b, &lk, &h)?.is_none() {
        return Ok(RedisValue::Integer(0));
    }
    let mut members: Vec<&[u8]> = Vec::with_capacity(argv.len() - 2);
    while let Some(m) = args.next() {
        members.push(m);
    }
    let _mode = CommandsMode::enter();
    let removed = b.zrem(b.key, &mut h, &members);
    if removed > 0 {
        rank_repl::replicate_verbatim(ctx, c"RANK.REM", argv);
    }
    Ok(RedisValue::Integer(removed))
}

/// `RANK.CARD K [PERIOD day|week|month [AGO n]]` → number of members.
pub(super) fn card_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 6)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let (_, period) = read_options(&mut args, None)?;
    let Some((_, key)) = read_target(&b, period)? else {
        return Ok(RedisValue::Integer(0));
    };
    Ok(RedisValue::Integer(b.zcard(&key)? as i64))
}

/// Most neighbours RANK.AROUND returns on each side.
pub const MAX_AROUND: i64 = 1000;

/// `RANK.AROUND K member n [PERIOD day|week|month [AGO n]]` → `[[rank,
/// member, score], …]`: the member and up to `n` neighbours on each side,
/// best first, clamped at the ends; empty if the member is absent.
pub(super) fn around_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, 8)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let member = args.next_rs()?;
    let n = parse_i64("count", args.next_rs()?.as_slice())?;
    if !(0..=MAX_AROUND).contains(&n) {
        return Err(Fail::Msg(format!(
            "ERR count must be an integer between 0 and {MAX_AROUND}"
        )));
    }
    let (_, period) = read_options(&mut args, None)?;
    let Some((l, key)) = read_target(&b, period)? else {
        return Ok(RedisValue::Array(vec![]));
    };
    let board: &RedisString = &key;
    let Some((r, items)) = b.zaround(board, member, n as usize)? else {
        return Ok(RedisValue::Array(vec![]));
    };
    let first = r as i64 - (r as i64).min(n);
    let mut out = Vec::with_capacity(items.len());
    for (i, (m, packed)) in items.into_iter().enumerate() {
        out.push(RedisValue::Array(vec![
            RedisValue::Integer(first + i as i64),
            RedisValue::BulkRedisString(m),
            RedisValue::Integer(l.decode(packed)?.0),
        ]));
    }
    Ok(RedisValue::Array(out))
}

/// The reply of a range read: each member, and with `withscores` its
/// decoded score after it. Error: a score that is not a packed one.
fn members_reply(l: &Layout, items: Vec<(RedisString, f64)>, withscores: bool) -> Res<RedisValue> {
    let mut out = Vec::with_capacity(items.len() * (1 + usize::from(withscores)));
    for (m, packed) in items {
        out.push(RedisValue::BulkRedisString(m));
        if withscores {
            out.push(RedisValue::Integer(l.decode(packed)?.0));
        }
    }
    Ok(RedisValue::Array(out))
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

/// RANK.RANGEBYSCORE's options after `min max`: `LIMIT offset count`,
/// `WITHSCORES` and `PERIOD p [AGO n]`, in any order.
#[allow(clippy::type_complexity)]
fn byscore_options(args: &mut Args) -> Res<(Option<(i64, i64)>, bool, PeriodArg)> {
    let (mut limit, mut withscores, mut period) = (None, false, None);
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
            b"PERIOD" => period = Some(period_opt(args)?),
            _ => return Err(Fail::syntax_at(opt)),
        }
    }
    Ok((limit, withscores, period))
}

/// `RANK.RANGEBYSCORE K min max [LIMIT offset count] [WITHSCORES] [PERIOD
/// day|week|month [AGO n]]` → members whose score is in `[min, max]`
/// (inclusive, exact; `min` is the lower number on every board), best
/// first: highest first on a desc board, lowest first on an asc one.
pub(super) fn rangebyscore_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, 12)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let (raw_min, raw_max) = (args.next_rs()?.as_slice(), args.next_rs()?.as_slice());
    let (limit, withscores, period) = byscore_options(&mut args)?;
    let Some((l, key)) = read_target(&b, period)? else {
        return Ok(RedisValue::Array(vec![]));
    };
    let board: &RedisString = &key;
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
    let lo = ffi::Bound::incl(l.encode(better, crate::rank::EPOCH_MS)?);
    let hi = ffi::Bound::incl(l.encode(worse, l.last_time_ms())?);
    // LIMIT offset count: offset >= 0 (checked), count < 0 for all the rest.
    let limit = limit.map(|(off, cnt)| (usize::try_from(off).unwrap_or(usize::MAX), cnt));
    let items = b.zrange_by_score(board, lo, hi, limit);
    members_reply(&l, items, withscores)
}

/// `RANK.MINCR K delta member [member …]` → the new score of each member, in
/// argument order. All or nothing: if any new score is out of range, on the
/// board or on one of its period boards, nothing is written. Uses the
/// server clock. It takes no GT/LT: the sign of `delta` already decides
/// whether every score goes up or down.
pub(super) fn mincr_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, usize::MAX)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    // `CLOCK c` first, only from the master or the AOF.
    let clock = leading_clock(ctx, &mut args)?;
    let raw_delta = args.next_rs()?.as_slice();
    let delta = parse_i64("delta", raw_delta)?;
    if args.peek().is_none() {
        return Err(Fail::Arity);
    }
    let (t, now) = write_time_at(None, clock.unwrap_or_else(ffi::now_ms))?;
    // The board is opened once, for writing, and its settings read through it.
    let lk = b.derived(Kind::Layout, &[], true)?;
    let board_h = b.open_board(true)?;
    let stored = stored_settings(&b, &lk, &board_h)?;
    if stored.is_none() {
        identity::refuse_without_identity(&b, Family::Rank)?;
    }
    let (l, spec) = stored.unwrap_or_else(|| (Layout::default_for(Resolution::Seconds), None));
    let mut members: Vec<&RedisString> = Vec::with_capacity(argv.len() - 3);
    while let Ok(m) = args.next_rs() {
        members.push(m);
    }
    let mut dests = dests(&b, board_h, spec.as_ref(), t, now)?;
    // Plan every board first; the reply is the all-time board's scores.
    let mut out = Vec::new();
    let mut writes = Vec::with_capacity(dests.len());
    for (i, d) in dests.iter().enumerate() {
        let (scores, w) = plan_mincr(&d.h, &l, &members, delta, t)?;
        if i == 0 {
            out = scores.into_iter().map(RedisValue::Integer).collect();
        }
        writes.push(w);
    }
    let mode = CommandsMode::enter();
    // Replicated whenever it may have written (see write_score).
    let wrote = match stored {
        None => store_layout(&b, &lk, &l),
        Some(_) => Ok(()),
    }
    .and_then(|()| {
        for (d, w) in dests.iter_mut().zip(&writes) {
            write_mincr(ctx, d, w)?;
        }
        Ok(())
    });
    if stored.is_none() || writes.iter().any(|w| !w.is_empty()) {
        rank_repl::replicate_mincr(ctx, b.key, raw_delta, &members, now);
    }
    drop(mode);
    wrote?;
    Ok(RedisValue::Array(out))
}

/// RANK.MINCR's plan for one board read through `h` (a member named twice
/// gets delta twice; each distinct member's running score is found by hash,
/// so the plan costs O(n) lookups, not O(n²); a member new to a period
/// board starts there at 0): each argument's new score, and each distinct
/// member's final packed score where it changes (a new member is added even
/// at 0). Errors: overflow, a score out of the layout's range.
#[allow(clippy::type_complexity)]
fn plan_mincr<'m>(
    h: &ffi::Key,
    l: &Layout,
    members: &[&'m RedisString],
    delta: i64,
    t: i64,
) -> Res<(Vec<i64>, Vec<(&'m RedisString, f64)>)> {
    // Distinct members in first-seen order: (member, stored score, running score).
    let mut seen: Vec<(&RedisString, Option<i64>, i64)> = Vec::with_capacity(members.len());
    let mut index: HashMap<&[u8], usize> = HashMap::with_capacity(members.len());
    let mut scores = Vec::with_capacity(members.len());
    for &member in members {
        let j = match index.get(member.as_slice()) {
            Some(&j) => j,
            None => {
                let old = h.zset_score(member).map(|v| l.decode(v)).transpose()?;
                index.insert(member.as_slice(), seen.len());
                seen.push((member, old.map(|o| o.0), old.map_or(0, |o| o.0)));
                seen.len() - 1
            }
        };
        let new = plan_update(&[Some(seen[j].2)], Update::Add(delta))?[0].0;
        seen[j].2 = new;
        scores.push(new);
    }
    let mut w = Vec::with_capacity(seen.len());
    for (member, old, new) in seen {
        if old != Some(new) {
            w.push((member, l.encode(new, t)?));
        }
    }
    Ok((scores, w))
}

/// Writes one board's MINCR changes `w` (if any), each replicated as its
/// exact ZADD; the `zadd` event and the WATCH signal fire once per board,
/// as for one ZADD of many members.
fn write_mincr(ctx: &Context, d: &mut Dest, w: &[(&RedisString, f64)]) -> Res<()> {
    if w.is_empty() {
        return Ok(());
    }
    for (member, p) in w {
        d.h.zset_add(*p, member)?;
        if !super::replicating_commands() {
            let text = ScoreText::new(*p);
            ffi::replicate_zadd(ctx, &d.name, text.as_bytes(), member);
        }
    }
    ffi::notify(ctx, ffi::Event::ZSet, c"zadd", &d.name);
    ffi::signal_modified(ctx, &d.name);
    if let Some(at) = d.expiry {
        period_expiry(ctx, &d.name, &mut d.h, at);
    }
    Ok(())
}

/// The keys RANK.DROP deletes besides the board ZSET `K`: every derived key
/// a RANK board owns, as (kind, parts) for [`crate::keys::derived`]: the
/// layout, and for a board with periods every period board that can still
/// be alive at `now_ms` ([`Spec::live_ids`]: writes are never later than
/// the server clock, so no other exists).
fn owned_keys(spec: Option<&Spec>, now_ms: i64) -> Vec<(Kind, Vec<Vec<u8>>)> {
    let mut out = vec![(Kind::Layout, vec![])];
    if let Some(spec) = spec {
        for id in spec.live_ids(now_ms) {
            out.push((Kind::Period, vec![id.into_bytes()]));
        }
    }
    out
}

/// `RANK.DROP K` → the number of keys deleted: the board ZSET and every key
/// RANK derived from it (see [`owned_keys`]), atomically, with one UNLINK
/// (replicated as it is); 0 for a missing board.
///
/// Errors: a ZSET without a board layout is not deleted (the error of every
/// RANK command on it); `NOPERM` unless the user may write every key;
/// `WRONGTYPE` if `K` or the layout key holds another type.
pub(super) fn drop_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    // `CLOCK c` (two more arguments) only from the master or the AOF.
    let max = if from_master_or_aof(ctx) { 4 } else { 2 };
    let mut args = Args::new(argv, 2, max)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let clock = leading_clock(ctx, &mut args)?;
    if args.peek().is_some() {
        return Err(Fail::Arity);
    }
    let board = b.key;
    let Some((_, spec)) = settings(&b, true)? else {
        return Ok(RedisValue::Integer(0));
    };
    let now = clock.unwrap_or_else(ffi::now_ms);
    // Every name first, each ACL-checked for writing: nothing is deleted
    // unless all may be.
    let mut names = vec![board.clone()];
    for (kind, parts) in owned_keys(spec.as_ref(), now) {
        let p: Vec<&[u8]> = parts.iter().map(|v| v.as_slice()).collect();
        names.push(b.derived(kind, &p, true)?);
    }
    let _mode = CommandsMode::enter();
    let deleted = b.delete(&names, true);
    if deleted > 0 {
        rank_repl::replicate_drop(ctx, board, now);
    }
    Ok(RedisValue::Integer(deleted))
}

// ---------------------------------------------------------------------------
// RANK.COUNT (sharded leaderboards: a global rank is the sum over the shards)

/// `RANK.COUNT K score [TIME t [MEMBER m]] [PERIOD day|week|month [AGO n]]`
/// → the number of members ranked ahead of a position: with `score` alone,
/// the members with a strictly better score (RANK.RANK … TIES of a member
/// with that score); with `TIME t`, also those with the same score reached
/// earlier than `t` (in the board's resolution); with `MEMBER m`, also those
/// with the same score reached at the same time whose name sorts before `m`
/// (bytewise), so for a member of the board it equals RANK.RANK. Summed over
/// the shards of a sharded board, it is the member's rank in the union. `m`
/// need not be on this board. 0 for a missing board.
///
/// Errors: `ERR score is not an integer …`, `ERR TIME must be unix seconds
/// …`, `ERR MEMBER needs TIME`, `ERR syntax error: expected TIME, MEMBER or
/// PERIOD`, PERIOD's errors.
pub(super) fn count_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    use crate::rank::count::{ahead, Ahead};
    let mut args = Args::new(argv, 3, 11)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let score = parse_i64("score", args.next_rs()?.as_slice())?;
    let (mut time, mut member, mut period) = (None, None, None);
    while let Some(o) = args.next() {
        if o.eq_ignore_ascii_case(b"TIME") {
            time = Some(crate::parse::parse_time_ms("TIME", args.value_of("TIME")?)?);
        } else if o.eq_ignore_ascii_case(b"MEMBER") {
            member = Some(args.value_of("MEMBER")?);
        } else if o.eq_ignore_ascii_case(b"PERIOD") {
            period = Some(period_opt(&mut args)?);
        } else {
            return Err(Fail::Msg(
                "ERR syntax error: expected TIME, MEMBER or PERIOD".into(),
            ));
        }
    }
    if member.is_some() && time.is_none() {
        return Err(Fail::Msg("ERR MEMBER needs TIME".into()));
    }
    let Some((l, key)) = read_target(&b, period)? else {
        return Ok(RedisValue::Integer(0));
    };
    let board: &RedisString = &key;
    let below = |hi: ffi::Bound| b.zcount(board, ffi::Bound::incl(f64::NEG_INFINITY), hi) as i64;
    let n = match ahead(&l, score, time, member.is_some()) {
        Ahead::Nobody => 0,
        Ahead::Everyone => b.zcard(board)? as i64,
        Ahead::UpTo { packed } => below(ffi::Bound::incl(packed)),
        Ahead::Below { packed, ties } => {
            let mut n = below(ffi::Bound::excl(packed));
            if let (true, Some(m)) = (ties, member) {
                // Members with exactly this packed score sort by name: rare
                // (same score in the same time unit), so they are listed.
                let same = b.zrange_by_score(
                    board,
                    ffi::Bound::incl(packed),
                    ffi::Bound::incl(packed),
                    None,
                );
                n += same.iter().filter(|(x, _)| x.as_slice() < m).count() as i64;
            }
            n
        }
    };
    Ok(RedisValue::Integer(n))
}
