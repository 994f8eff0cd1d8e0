//! `RANK.INFO`: what a leaderboard is made of (issue 22 item 4).

use super::rank::settings;
use super::{bulk, Args, BoardCtx, Res};
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
/// yet written). A missing board reports the default layout a first write
/// would store, with 0 members. Errors as every RANK command: a ZSET that
/// is not RANK's, WRONGTYPE, NOPERM.
pub(super) fn info_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 2)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let (layout, spec) =
        settings(&b, false)?.unwrap_or((Layout::default_for(Resolution::Seconds), None));
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
        ],
    ))
}
