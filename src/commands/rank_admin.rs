//! `RANK.INFO`: what a leaderboard is made of (issue 22 item 4), and
//! `RANK.REPAIR`: a leaderboard's layout rebuilt after eviction (issue 36).

use super::rank::settings;
use super::{bulk, Args, BoardCtx, CommandsMode, Fail, Res};
use crate::ffi::{self, KeyKind};
use crate::keys::Kind;
use crate::rank::{Layout, Order, Resolution};
use redis_module::{Context, RedisString, RedisValue};

/// `RANK.INFO K` → field/value pairs (a map under RESP3): the layout
/// (`resolution` s|ms, `min`, `max`, `order` asc|desc), the periods
/// (`periods`: an array of day/week/month, empty without periods; `tz`
/// `±hh:mm` and `keep`, nil without periods), `members` (of the all-time
/// board) and `period_boards`: a flat array `[id, members, …]` of the
/// current period boards (server clock, the board's TZ; 0 members when not
/// yet written), then `eviction_unsafe` and `maxmemory_policy`
/// (docs/eviction.md). A missing board reports the default layout a first
/// write would store, with 0 members, except under a policy that may evict
/// board identity keys (the board identity error). Errors as every RANK
/// command: a ZSET without a layout (the board identity error), WRONGTYPE,
/// NOPERM.
pub(super) fn info_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 2)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let (layout, spec) = match settings(&b, false)? {
        Some(s) => s,
        None => {
            // The default layout is shown only where no board can have been
            // evicted whole.
            super::identity::refuse_without_identity(&b, super::identity::Family::Rank)?;
            (Layout::default_for(Resolution::Seconds), None)
        }
    };
    let members = b.open_board(false)?.len() as i64;
    let mut boards = Vec::new();
    if let Some(spec) = &spec {
        let now = ffi::now_ms();
        for p in spec.periods() {
            let id = p.containing(now, spec.tz).id();
            let (_, h) = b.open_derived(Kind::Period, &[id.as_bytes()], KeyKind::ZSet, false)?;
            boards.push(bulk(id));
            boards.push(RedisValue::Integer(h.len() as i64));
        }
    }
    let resolution = match layout.resolution {
        Resolution::Seconds => "s",
        Resolution::Millis => "ms",
    };
    let order = match layout.order {
        Order::Asc => "asc",
        Order::Desc => "desc",
    };
    let periods = spec.map_or(vec![], |s| s.periods().map(|p| bulk(p.name())).collect());
    Ok(ffi::reply_map(
        ctx,
        vec![
            ("resolution", bulk(resolution)),
            ("min", RedisValue::Integer(layout.min)),
            ("max", RedisValue::Integer(layout.max)),
            ("order", bulk(order)),
            ("periods", RedisValue::Array(periods)),
            ("tz", spec.map_or(RedisValue::Null, |s| bulk(s.tz.format()))),
            (
                "keep",
                spec.map_or(RedisValue::Null, |s| RedisValue::Integer(s.keep)),
            ),
            ("members", RedisValue::Integer(members)),
            ("period_boards", RedisValue::Array(boards)),
        ]
        .into_iter()
        .chain(super::hot_admin::eviction_fields())
        .collect(),
    ))
}

/// `RANK.REPAIR K [RESOLUTION s|ms] [MIN n] [MAX n] [ORDER asc|desc]
/// [PERIODS day|week|month … [TZ ±hh:mm] [KEEP n]]` → `OK`: stores the
/// layout of a leaderboard whose layout key is gone while its ZSET remains
/// (evicted under an `allkeys-*` policy, see docs/eviction.md), with the
/// options of RANK.CREATE (the board's own: RANK.REPAIR cannot know them).
/// Every member's packed score must decode under the layout given, at a
/// time no later than the server clock, or nothing is written (a check
/// that catches many a wrong RESOLUTION, MIN or MAX, not every one).
/// Replicated as `SET` of the layout key (`RANK.REPAIR` as sent in
/// `commands` mode). Errors: `ERR board is not damaged …` (it has its
/// layout), `ERR no board data to repair …` (no ZSET: use RANK.CREATE), a
/// HOT board, WRONGTYPE, RANK.CREATE's option errors, a member that does
/// not fit the layout.
pub(super) fn repair_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 24)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let text = super::rank::create_layout(&mut args)?;
    let settings = crate::rank::parse_settings(text.as_bytes())?;
    let lk = b.derived(Kind::Layout, &[], true)?;
    let board_h = b.open_board(true)?;
    let mut lk_h = b.open(&lk, KeyKind::String, true)?;
    if lk_h.kind() != KeyKind::Empty {
        return Err(Fail::Msg(
            "ERR board is not damaged: it has its RANK layout; nothing to repair".into(),
        ));
    }
    if board_h.kind() == KeyKind::Empty {
        return Err(Fail::Msg(
            "ERR no board data to repair: the board ZSET is missing; create the board with RANK.CREATE".into(),
        ));
    }
    if super::identity::has_hot_record(&b) {
        return Err(super::identity::other_family(
            &b,
            super::identity::Family::Hot,
        ));
    }
    drop(board_h);
    // The master or the AOF already checked: a replica stores what it stored.
    if !super::from_master_or_aof(ctx) {
        check_members_fit(&b, &settings.0)?;
    }
    let _mode = CommandsMode::enter();
    b.set_new(&lk, &mut lk_h, text.as_bytes())?;
    super::rank_repl::replicate_verbatim(ctx, c"RANK.REPAIR", argv);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// Checks that every member's packed score decodes under `l` at a time no
/// later than the server clock. Error: `ERR member '…' has a score this
/// layout cannot decode …`.
fn check_members_fit(b: &BoardCtx, l: &Layout) -> Res<()> {
    let now = ffi::now_ms();
    for (m, packed) in b.zrange(b.key, 0, -1)? {
        let fits = l.decode(packed).is_ok_and(|(_, t)| t <= now);
        if !fits {
            return Err(Fail::Msg(format!(
                "ERR member '{}' has a score this layout cannot decode: give the board's own RESOLUTION, MIN, MAX and ORDER; nothing was written",
                m.as_slice().escape_ascii()
            )));
        }
    }
    Ok(())
}
