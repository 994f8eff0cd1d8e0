//! `HOT.*` handlers: PUBLISH, VIEW, TOP, STATS.

use super::{
    bulk, call, derived, expect_type, guard, hash_field, read_int, reply_array, reply_int,
    write_time, Args, Fail, Res,
};
use crate::hot::{in_window, is_duplicate, TopN};
use crate::keys::Kind;
use crate::parse::{format_score, format_time_ms, parse_count, parse_duration_ms, parse_time_ms};
use crate::{config, ffi, stats};
use redis_module::{raw::KeyType, Context, RedisResult, RedisString, RedisValue};

const F_PUBLISHED: &str = "publishedAt";
const F_UV: &str = "uv";
const F_MAX_VIEW: &str = "maxViewAt";
const F_FINGERPRINT: &str = "fp";
const MIXED: &[u8] = b"mixed";
/// Most results one HOT.TOP may return.
pub const MAX_LIMIT: i64 = 10_000;

/// Per-article keys, ACL-checked.
struct ArticleKeys {
    pv: RedisString,
    uv: RedisString,
    meta: RedisString,
}

impl ArticleKeys {
    fn open(ctx: &Context, board: &RedisString, article: &[u8], write: bool) -> Res<Self> {
        Ok(ArticleKeys {
            pv: derived(ctx, board, Kind::Pv, &[article], write)?,
            uv: derived(ctx, board, Kind::Uv, &[article], write)?,
            meta: derived(ctx, board, Kind::Meta, &[article], write)?,
        })
    }

    /// (pv, uv, published_ms) as stored; `None` when the article is unknown.
    fn read(&self, ctx: &Context) -> Res<Option<(i64, i64, Option<i64>)>> {
        let pv = read_int(ctx, &self.pv)?;
        let published = hash_field(ctx, &self.meta, F_PUBLISHED)?;
        let uv = hash_field(ctx, &self.meta, F_UV)?;
        if pv == 0 && published.is_none() {
            return Ok(None);
        }
        let num = |v: Option<Vec<u8>>| v.and_then(|b| crate::parse::parse_i64("field", &b).ok());
        Ok(Some((pv, num(uv).unwrap_or(0), num(published))))
    }
}

/// Records the latest instant a stored score was computed for and the
/// formula it used, so HOT.TOP knows when stored scores are upper bounds.
fn note_board_write(ctx: &Context, hb: &RedisString, at_ms: i64) -> Res<()> {
    let fp = config::formula().fingerprint();
    let old_max =
        hash_field(ctx, hb, F_MAX_VIEW)?.and_then(|b| crate::parse::parse_i64("f", &b).ok());
    let old_fp = hash_field(ctx, hb, F_FINGERPRINT)?;
    let new_fp: &[u8] = match &old_fp {
        None => fp.as_bytes(),
        Some(old) if old.as_slice() == fp.as_bytes() => fp.as_bytes(),
        Some(_) => MIXED,
    };
    let max = old_max.map_or(at_ms, |m| m.max(at_ms)).to_string();
    if old_max.map(|m| m.to_string()) != Some(max.clone()) || old_fp.as_deref() != Some(new_fp) {
        call(
            ctx,
            true,
            "HSET",
            &[
                hb.as_slice(),
                F_MAX_VIEW.as_bytes(),
                max.as_bytes(),
                F_FINGERPRINT.as_bytes(),
                new_fp,
            ],
        )?;
    }
    Ok(())
}

/// `HOT.PUBLISH K article published_at` → 1 if the publish time is new, 0 if updated.
pub fn publish(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, publish_impl)
}

fn publish_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, 4)?;
    let board = super::board(&mut args)?;
    let article = args.next_rs()?.as_slice();
    let published = parse_time_ms("published_at", args.next_rs()?.as_slice())?;
    let keys = ArticleKeys::open(ctx, board, article, true)?;
    let hb = derived(ctx, board, Kind::HotBoard, &[], true)?;
    expect_type(ctx, board, KeyType::ZSet)?;
    expect_type(ctx, &keys.meta, KeyType::Hash)?;
    expect_type(ctx, &hb, KeyType::Hash)?;
    let existing = keys.read(ctx)?;
    let now = ffi::now_ms();
    let p = published.to_string();
    let r = call(
        ctx,
        true,
        "HSET",
        &[keys.meta.as_slice(), F_PUBLISHED.as_bytes(), p.as_bytes()],
    )?;
    // An article already on the board is rescored now, so its stored score
    // stays an upper bound of its later scores.
    if let Some((pv, uv, _)) = existing {
        if pv > 0 {
            let score = config::formula().score(pv, uv, published, now);
            call(
                ctx,
                true,
                "ZADD",
                &[board.as_slice(), format_score(score).as_bytes(), article],
            )?;
            note_board_write(ctx, &hb, now)?;
        }
    }
    Ok(RedisValue::Integer(reply_int(&r).unwrap_or(0)))
}

/// `HOT.VIEW K article visitor [AT t]` → `[pv, uv, score, status]`.
pub fn view(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, view_impl)
}

fn view_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, 6)?;
    let board = super::board(&mut args)?;
    let article = args.next_rs()?.as_slice();
    let visitor = args.next_rs()?.as_slice();
    let at = match args.next() {
        None => None,
        Some(opt) if opt.eq_ignore_ascii_case(b"AT") => Some(args.value_of("AT")?),
        Some(_) => return Err(Fail::Msg("ERR syntax error: expected AT t".into())),
    };
    if args.next().is_some() {
        return Err(Fail::Msg("ERR syntax error".into()));
    }
    let (t, now) = write_time(at)?;
    let f = config::formula();
    let keys = ArticleKeys::open(ctx, board, article, true)?;
    let seen = derived(ctx, board, Kind::Seen, &[article, visitor], true)?;
    let hb = derived(ctx, board, Kind::HotBoard, &[], true)?;
    expect_type(ctx, board, KeyType::ZSet)?;
    expect_type(ctx, &keys.pv, KeyType::String)?;
    expect_type(ctx, &keys.uv, KeyType::String)?;
    expect_type(ctx, &keys.meta, KeyType::Hash)?;
    expect_type(ctx, &seen, KeyType::String)?;
    expect_type(ctx, &hb, KeyType::Hash)?;
    let pv_before = read_int(ctx, &keys.pv)?;

    let window = config::dedup_ms();
    let last = ctx
        .open_key(&seen)
        .read()
        .ok()
        .flatten()
        .and_then(|b| crate::parse::parse_i64("seen", b).ok());
    if is_duplicate(last, t, window) {
        stats::add(&stats::VIEWS_DUPLICATE, 1);
        let (pv, uv, published) = keys.read(ctx)?.unwrap_or((pv_before, 0, None));
        let score = f.score(pv, uv, published.unwrap_or(t), t);
        return Ok(view_reply(pv, uv, score, "duplicate"));
    }

    // PFADD first: it is the only write that can still fail (a corrupt HyperLogLog).
    call(ctx, true, "PFADD", &[keys.uv.as_slice(), visitor])?;
    let pv = reply_int(&call(ctx, true, "INCRBY", &[keys.pv.as_slice(), b"1"])?)
        .unwrap_or(pv_before + 1);
    let uv = reply_int(&call(ctx, false, "PFCOUNT", &[keys.uv.as_slice()])?).unwrap_or(0);
    let published = hash_field(ctx, &keys.meta, F_PUBLISHED)?
        .and_then(|b| crate::parse::parse_i64("p", &b).ok());
    let (published, new_pub) = match published {
        Some(p) => (p, None),
        None => (t, Some(t.to_string())),
    };
    let uv_s = uv.to_string();
    let mut hset: Vec<&[u8]> = vec![keys.meta.as_slice(), F_UV.as_bytes(), uv_s.as_bytes()];
    if let Some(p) = &new_pub {
        hset.extend_from_slice(&[F_PUBLISHED.as_bytes(), p.as_bytes()]);
    }
    call(ctx, true, "HSET", &hset)?;
    let score = f.score(pv, uv, published, t);
    call(
        ctx,
        true,
        "ZADD",
        &[board.as_slice(), format_score(score).as_bytes(), article],
    )?;
    if window > 0 {
        let (ts, exp) = (t.to_string(), (now + window).to_string());
        call(
            ctx,
            true,
            "SET",
            &[seen.as_slice(), ts.as_bytes(), b"PXAT", exp.as_bytes()],
        )?;
    }
    note_board_write(ctx, &hb, t)?;
    stats::add(&stats::VIEWS_COUNTED, 1);
    Ok(view_reply(pv, uv, score, "counted"))
}

fn view_reply(pv: i64, uv: i64, score: f64, status: &str) -> RedisValue {
    RedisValue::Array(vec![
        RedisValue::Integer(pv),
        RedisValue::Integer(uv),
        bulk(format_score(score)),
        bulk(status),
    ])
}

/// `HOT.TOP K [LIMIT n] [WINDOW w] [WITHSCORES] [AT t]`.
pub fn top(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, top_impl)
}

fn top_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 9)?;
    let board = super::board(&mut args)?;
    let (mut limit, mut window, mut withscores, mut at) = (20i64, None, false, None);
    while let Some(opt) = args.next() {
        match opt.to_ascii_uppercase().as_slice() {
            b"LIMIT" => limit = parse_count("LIMIT", args.value_of("LIMIT")?, MAX_LIMIT)?,
            b"WINDOW" => window = Some(parse_duration_ms("WINDOW", args.value_of("WINDOW")?)?),
            b"WITHSCORES" => withscores = true,
            b"AT" => at = Some(parse_time_ms("AT", args.value_of("AT")?)?),
            _ => {
                return Err(Fail::Msg(format!(
                    "ERR syntax error at '{}'",
                    String::from_utf8_lossy(opt)
                )))
            }
        }
    }
    let q = at.unwrap_or_else(ffi::now_ms);
    stats::add(&stats::TOP_CALLS, 1);
    if !expect_type(ctx, board, KeyType::ZSet)? {
        return Ok(RedisValue::Array(vec![]));
    }
    let hb = derived(ctx, board, Kind::HotBoard, &[], false)?;
    expect_type(ctx, &hb, KeyType::Hash)?;
    // Stored scores bound later scores only if they were computed with the
    // current formula and no later than the query instant.
    let fp = config::formula().fingerprint();
    let max_view =
        hash_field(ctx, &hb, F_MAX_VIEW)?.and_then(|b| crate::parse::parse_i64("f", &b).ok());
    let prune = hash_field(ctx, &hb, F_FINGERPRINT)?.as_deref() == Some(fp.as_bytes())
        && max_view.is_some_and(|m| m <= q);

    let f = config::formula();
    let mut best = TopN::new(limit as usize);
    let mut examined = 0u64;
    const CHUNK: i64 = 256;
    let mut start = 0i64;
    'scan: loop {
        let (s, e) = (start.to_string(), (start + CHUNK - 1).to_string());
        let r = call(
            ctx,
            false,
            "ZREVRANGE",
            &[board.as_slice(), s.as_bytes(), e.as_bytes(), b"WITHSCORES"],
        )?;
        let items = reply_array(&r);
        for pair in items.chunks(2) {
            let [article, stored] = pair else { break };
            let bound: f64 = std::str::from_utf8(stored)
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(f64::INFINITY);
            if prune && best.is_closed_below(bound) {
                break 'scan;
            }
            examined += 1;
            let keys = ArticleKeys::open(ctx, board, article, false)?;
            let Some((pv, uv, published)) = keys.read(ctx)? else {
                continue;
            };
            let published = published.unwrap_or(i64::MIN / 2);
            if !in_window(published, q, window) {
                continue;
            }
            best.offer(article, f.score(pv, uv, published, q));
        }
        if (items.len() as i64) < 2 * CHUNK {
            break;
        }
        start += CHUNK;
    }
    stats::add(&stats::TOP_EXAMINED, examined);
    let mut out = Vec::new();
    for (article, score) in best.into_sorted() {
        out.push(bulk(article));
        if withscores {
            out.push(bulk(format_score(score)));
        }
    }
    Ok(RedisValue::Array(out))
}

/// `HOT.STATS K article [AT t]` → pv, uv, published_at, score (nil if unknown).
pub fn stats(ctx: &Context, args: Vec<RedisString>) -> RedisResult {
    guard(ctx, args, stats_impl)
}

fn stats_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, 5)?;
    let board = super::board(&mut args)?;
    let article = args.next_rs()?.as_slice();
    let at = match args.next() {
        None => None,
        Some(opt) if opt.eq_ignore_ascii_case(b"AT") => {
            Some(parse_time_ms("AT", args.value_of("AT")?)?)
        }
        Some(_) => return Err(Fail::Msg("ERR syntax error: expected AT t".into())),
    };
    let q = at.unwrap_or_else(ffi::now_ms);
    let keys = ArticleKeys::open(ctx, board, article, false)?;
    expect_type(ctx, board, KeyType::ZSet)?;
    expect_type(ctx, &keys.pv, KeyType::String)?;
    expect_type(ctx, &keys.meta, KeyType::Hash)?;
    let Some((pv, uv, published)) = keys.read(ctx)? else {
        return Ok(RedisValue::Null);
    };
    let score = match published {
        Some(p) if pv > 0 => config::formula().score(pv, uv, p, q),
        _ => 0.0,
    };
    let published = published.map_or(RedisValue::Null, |p| bulk(format_time_ms(p)));
    Ok(ffi::reply_map(
        ctx,
        vec![
            ("pv", RedisValue::Integer(pv)),
            ("uv", RedisValue::Integer(uv)),
            ("published_at", published),
            ("score", bulk(format_score(score))),
        ],
    ))
}
