//! `HOT.*` handlers: PUBLISH, VIEW, TOP, STATS, and the board upkeep that
//! HOT.VIEW does on the way (trimming to `max-articles`, forgetting expired
//! articles).

use super::article::{facts, Facts};
use super::board::{
    board_record, check_hot_board, note_board_write, read_settings_from, refresh_retention, uv_of,
    BoardState,
};
use super::{
    article_counts_whole, bulk, counter_of, hset_effect, published_at, trailing_at_clock,
    zadd_score_effect, Args, BoardCtx, CommandsMode, Fail, Res,
};
use crate::ffi::KeyKind;
use crate::hot::settings::BoardSettings;
use crate::hot::{in_window, Formula, TopN};
use crate::keys::Kind;
use crate::parse::IntText;
use crate::parse::{format_score, format_time_ms, parse_count, parse_duration_ms, parse_time_ms};
use crate::{ffi, stats};
use redis_module::{Context, RedisString, RedisValue};

/// Most results one HOT.TOP may return.
pub const MAX_LIMIT: i64 = 10_000;

/// `HOT.PUBLISH K article published_at` → 1 if the publish time is new, 0 if updated.
/// In `commands` mode it replicates as `HOT.PUBLISH K article ms CLOCK now`.
pub(super) fn publish_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, 6)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    b.load_epoch(true)?;
    let article_rs = args.next_rs()?;
    let article = article_rs.as_slice();
    let published = parse_time_ms("published_at", args.next_rs()?.as_slice())?;
    let clock = match args.peek() {
        Some(_) if super::from_master_or_aof(ctx) => {
            let (_, now) = trailing_at_clock(ctx, &mut args)?;
            Some(now)
        }
        Some(_) => return Err(Fail::Arity),
        None => None,
    };
    let mode = CommandsMode::enter();
    // Read: every key is named, ACL-checked, opened and checked first.
    let (pv, uv, meta) = (
        b.derived(Kind::Pv, &[article], true)?,
        b.derived(Kind::Uv, &[article], true)?,
        b.derived(Kind::Meta, &[article], true)?,
    );
    let hb = b.derived(Kind::HotBoard, &[], true)?;
    let pubidx = b.derived(Kind::PubIndex, &[], true)?;
    let mut board_h = b.open_board(true)?;
    let mut hb_h = b.open(&hb, KeyKind::String, true)?;
    let now = clock.unwrap_or_else(ffi::now_ms);
    let st = BoardState::read(&b, &hb, &hb_h, &board_h)?;
    let f = st.settings.formula;
    let mut meta_h = b.open(&meta, KeyKind::Hash, true)?;
    let old_published = published_at(&meta_h)?;
    let mut pub_h = b.open(&pubidx, KeyKind::ZSet, true)?;
    let mut pv_h = b.open(&pv, KeyKind::String, true)?;
    let mut uv_h = b.open(&uv, KeyKind::String, true)?;
    // Counters that eviction separated are forgotten (see `facts`): the
    // publish time does not bring them back.
    let stale = !article_counts_whole(&pv_h, &uv_h, old_published);
    let pv_now = counter_of(&pv_h)?;
    if stale {
        // Checked before it is deleted: a value hotrank did not write is
        // refused (PFCOUNT's error), never deleted.
        uv_of(&uv_h)?;
    }
    let pv_now = if stale { 0 } else { pv_now };
    let (rm, mut rm_h) = b.open_derived(Kind::Removed, &[article], KeyKind::String, true)?;
    let (ix, mut ix_h) = b.open_derived(Kind::Index, &[], KeyKind::ZSet, true)?;

    // Decide: an article on the board is rescored now, so its stored score
    // stays an upper bound of its later scores, and its publish-index entry
    // follows the new time whatever happened to its other keys (retention).
    let on_board = board_h.zset_score(article_rs).is_some();
    let rescore = Some(pv_now)
        .filter(|&pv| on_board && pv > 0)
        .map(|pv| uv_of(&uv_h).map(|uv| f.score(pv, uv, published, now)))
        .transpose()?;
    let reindex = on_board && pub_h.zset_score(article_rs) != Some(published as f64);

    // Write.
    b.claim_epoch()?;
    st.replicate_settings(ctx, b.key);
    if stale {
        b.delete_open(&mut [(&pv, &mut pv_h), (&uv, &mut uv_h)], false);
    }
    let p = IntText::new(published);
    let fields = [(&*super::PUBLISHED_AT, p.as_bytes())];
    meta_h.hash_set(&fields);
    hset_effect(ctx, &meta, &fields);
    refresh_retention(
        ctx,
        now,
        st.settings.retention_ms(),
        &mut [(&pv, &mut pv_h), (&uv, &mut uv_h), (&meta, &mut meta_h)],
    );
    let mut wrote_record = false;
    if let Some(score) = rescore {
        board_h.zset_add(score, article_rs)?;
        zadd_score_effect(ctx, b.key, score, article_rs);
        wrote_record = note_board_write(ctx, &hb, &mut hb_h, &st.record, &f, now)?;
    }
    if !wrote_record {
        st.store_settings(ctx, &hb, &mut hb_h)?;
    }
    if reindex {
        pub_h.zset_add(published as f64, article_rs)?;
        zadd_score_effect(ctx, &pubidx, published as f64, article_rs);
    }
    super::hot_admin::index_add(ctx, &ix, &mut ix_h, article_rs)?;
    // Published again: a takedown (HOT.REM) ends.
    super::hot_admin::clear_removed(&b, &rm, &mut rm_h);
    if super::replicating_commands() {
        let (n, p) = (IntText::new(now), format_time_ms(published));
        let args = [article, p.as_bytes(), b"CLOCK", n.as_bytes()];
        ffi::replicate(ctx, c"HOT.PUBLISH", b.key, &args);
    }
    drop(mode);
    Ok(RedisValue::Integer(i64::from(old_published.is_none())))
}

/// Removes articles whose counters retention has expired from the board and
/// its index and drops what is left of their counters, a batch of up to 256
/// per command (one ZREM for the board, one for the index, one for the
/// trending ZSET when the board keeps one (`trending`), one DEL for all
/// counters). Their meta hashes (publish time) stay until retention expires
/// them, so an article that comes back keeps its age. Every key is
/// ACL-checked before the first write.
fn forget<A: AsRef<[u8]>>(
    b: &BoardCtx,
    pubidx: &RedisString,
    trending: bool,
    articles: &[A],
) -> Res<()> {
    let tr = if trending {
        Some(super::trending::open(b, true)?.0)
    } else {
        None
    };
    for batch in articles.chunks(256) {
        let mut counters = Vec::with_capacity(3 * batch.len());
        for a in batch {
            let a = a.as_ref();
            for kind in [Kind::Pv, Kind::Uv, Kind::Suspicious] {
                counters.push(b.derived(kind, &[a], true)?);
            }
        }
        let members: Vec<&[u8]> = batch.iter().map(|a| a.as_ref()).collect();
        for zset in [Some(b.key), Some(pubidx), tr.as_ref()]
            .into_iter()
            .flatten()
        {
            let mut h = b.open(zset, KeyKind::ZSet, true)?;
            b.zrem(zset, &mut h, &members);
        }
        b.delete(&counters, false);
    }
    Ok(())
}

/// Takes articles off the board ZSET only, a batch of up to 256 per `ZREM`.
/// Their counters, HyperLogLog, meta hash and publish-index entry stay until
/// retention expires them (as the seed keeps 90 days of activity), so an
/// article viewed again comes back with every view and visitor it counted.
fn trim<A: AsRef<[u8]>>(b: &BoardCtx, articles: &[A]) -> Res<()> {
    let mut h = b.open(b.key, KeyKind::ZSet, true)?;
    for batch in articles.chunks(256) {
        let members: Vec<&[u8]> = batch.iter().map(|a| a.as_ref()).collect();
        b.zrem(b.key, &mut h, &members);
    }
    Ok(())
}

/// The article with the lowest score, the one published first and, on a
/// board with trending, the one with the lowest trending sum (`tr_h`), when
/// retention has expired their counters: what [`upkeep`] forgets.
pub(super) fn expired_fronts(
    b: &BoardCtx,
    board_h: &ffi::Key,
    pub_h: &ffi::Key,
    tr_h: Option<&ffi::Key>,
) -> Res<Vec<RedisString>> {
    let mut out: Vec<RedisString> = Vec::new();
    for h in [Some(board_h), Some(pub_h), tr_h].into_iter().flatten() {
        let Some(article) = h.zset_first() else {
            continue;
        };
        if out.iter().any(|a| a.as_slice() == article.as_slice()) {
            continue;
        }
        if !b.exists(&b.derived(Kind::Pv, &[article.as_slice()], false)?)? {
            out.push(article);
        }
    }
    Ok(out)
}

/// BoardCtx upkeep after a counted view:
/// - forgets the lowest-scored and the oldest-published article if retention
///   has expired its counter;
/// - trims the board to its `MAX-ARTICLES` once it holds half as many more
///   (at least 16): it keeps exactly the top `MAX-ARTICLES` by exact score
///   now (found by the same pruned selection as HOT.TOP) and takes the rest
///   off the board ZSET only ([`trim`]: their counters stay until
///   retention), so nothing that is in the top now is lost, and the cost of a trim
///   is spread over the new articles that trigger the next one (see
///   [`crate::hot::trim_slack`]).
///
/// `ix`: the article index as the view opened it, when it did (see
/// [`super::hot_admin::sweep_index`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn upkeep(
    b: &BoardCtx,
    pubidx: &RedisString,
    ix: Option<(RedisString, ffi::Key)>,
    f: &Formula,
    s: &BoardSettings,
    now: i64,
    expired: Vec<RedisString>,
    card: i64,
) -> Res<()> {
    for article in expired {
        forget(b, pubidx, s.trending(), &[article.as_slice()])?;
        stats::add(&stats::ARTICLES_SWEPT, 1);
    }
    // The view's clock and the board's size (upkeep runs only where the
    // view came from a client; a replica gets its effects).
    let seed = (now as u64) ^ (card as u64).rotate_left(32);
    super::hot_admin::sweep_index(b, seed, ix)?;
    let trimmed = super::trending::trim(b, s)?;
    if trimmed > 0 {
        stats::add(&stats::TRIMS, 1);
    }
    let max = s.max_articles();
    if max <= 0 {
        return Ok(());
    }
    if card <= max + crate::hot::trim_slack(max) {
        return Ok(());
    }
    let (best, _) = select(
        b,
        f,
        now,
        max as usize,
        None,
        prune_ok(b, f, now, true)?,
        None,
    )?
    .unwrap_or_default();
    // Keep exactly the top `max` by exact score now; forget the rest.
    let keep: std::collections::HashSet<&[u8]> = best.iter().map(|(a, _)| a.as_slice()).collect();
    let all = b.zmembers(b.key);
    let gone: Vec<&Vec<u8>> = all
        .iter()
        .filter(|a| !keep.contains(a.as_slice()))
        .collect();
    trim(b, &gone)?;
    stats::add(&stats::TRIMS, 1);
    stats::add(&stats::ARTICLES_TRIMMED, gone.len() as u64);
    Ok(())
}

/// Whether the stored scores of the board bound its scores at `q`: they
/// were all computed with the current formula, and no later than `q`, by a
/// formula that decays monotonically (any gamma but one in `(0, 2^-40)`).
/// A query at the server clock (`at_clock`) always is no earlier than every
/// view, since views cannot be later than the clock; a query with AT is
/// compared with the board's recorded bound.
fn prune_ok(b: &BoardCtx, f: &Formula, q: i64, at_clock: bool) -> Res<bool> {
    if !f.decays_monotonically() {
        return Ok(false);
    }
    let (hb, h) = b.open_derived(Kind::HotBoard, &[], KeyKind::String, false)?;
    Ok(board_record(&hb, &h)?.is_some_and(|r| r.bounds_scores_at(f.fingerprint(), q, at_clock)))
}

type Selection = (Vec<(Vec<u8>, f64)>, u64);

/// Scores one candidate at `q` and offers it when it is in the window.
fn offer(
    b: &BoardCtx,
    f: &Formula,
    q: i64,
    window: Option<i64>,
    article: &[u8],
    best: &mut TopN,
) -> Res<()> {
    if let Some(a) = facts(b, article)? {
        let published = a.published.unwrap_or(i64::MIN / 2);
        if a.pv > 0 && in_window(published, q, window) {
            best.offer(article, f.score(a.pv, a.uv, published, q));
        }
    }
    Ok(())
}

/// The exact top `n` at `q`.
///
/// Threshold scan: walk the board by stored score, highest first; with
/// `prune` each stored score bounds the article's score at `q`, so the walk
/// stops as soon as the n-th best exact score found beats the next stored
/// score. `budget` caps the articles examined (`None` when exceeded).
fn select(
    b: &BoardCtx,
    f: &Formula,
    q: i64,
    n: usize,
    window: Option<i64>,
    prune: bool,
    budget: Option<u64>,
) -> Res<Option<Selection>> {
    let mut best = TopN::new(n);
    let mut examined = 0u64;
    if let Some(iter) = b.board_rev_iter()? {
        for (article, stored) in iter {
            if prune && best.is_closed_below(stored) {
                break;
            }
            examined += 1;
            if budget.is_some_and(|cap| examined > cap) {
                return Ok(None);
            }
            offer(b, f, q, window, article.as_slice(), &mut best)?;
        }
    }
    Ok(Some((best.into_sorted(), examined)))
}

/// The publish-time bounds of the window `[q - w, q]` (ms, as the scores
/// of the publish index; an integer text the server would parse to the
/// same double).
fn window_bounds(q: i64, w: i64) -> (ffi::Bound, ffi::Bound) {
    (
        ffi::Bound::incl(q.saturating_sub(w) as f64),
        ffi::Bound::incl(q as f64),
    )
}

/// The exact top `n` among articles published in `[q - w, q]`, by scoring
/// every one of them through the publish-time index.
fn select_window(b: &BoardCtx, f: &Formula, q: i64, n: usize, w: i64) -> Res<Selection> {
    let pubidx = b.derived(Kind::PubIndex, &[], false)?;
    let (lo, hi) = window_bounds(q, w);
    let ids = b.zrange_by_score(&pubidx, lo, hi, None);
    // The board decides membership: an index entry whose article is no
    // longer on the board (the board was deleted or expired) is not offered.
    let board = b.open_board(false)?;
    let mut best = TopN::new(n);
    for (member, _) in &ids {
        if board.zset_score(member).is_some() {
            offer(b, f, q, Some(w), member.as_slice(), &mut best)?;
        }
    }
    Ok((best.into_sorted(), ids.len() as u64))
}

/// The exact top `n` at `q` among articles published in `[q - w, q]`: a
/// walk by stored score (with `prune`) while that costs less than scoring
/// the whole window, else the window scored through the publish index.
fn select_in_window(
    b: &BoardCtx,
    f: &Formula,
    q: i64,
    n: usize,
    w: i64,
    prune: bool,
) -> Res<Selection> {
    let (pubidx, _) = b.open_derived(Kind::PubIndex, &[], KeyKind::ZSet, false)?;
    let (lo, hi) = window_bounds(q, w);
    let in_win = b.zcount(&pubidx, lo, hi) as i64;
    let tried = if prune {
        select(b, f, q, n, Some(w), true, Some(in_win as u64))?
    } else {
        None
    };
    Ok(match tried {
        Some(sel) => sel,
        None => {
            let (sel, scanned) = select_window(b, f, q, n, w)?;
            (sel, scanned + if prune { in_win as u64 } else { 0 })
        }
    })
}

/// `HOT.TOP K [BY hot|trending] [LIMIT n] [WINDOW w] [WITHSCORES] [AT t]`:
/// `BY hot` (the default) ranks by the hot score at `t`, `BY trending` by
/// the trending score at `t` ([`super::trending::top`]; error on a board
/// without trending).
pub(super) fn top_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 11)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let mut rec0 = b.load_epoch_record(false)?;
    let (mut limit, mut window, mut withscores, mut at) = (20i64, None, false, None);
    let mut by_trending = false;
    while let Some(opt) = args.next() {
        match opt.to_ascii_uppercase().as_slice() {
            b"BY" => {
                let v = args.value_of("BY")?;
                by_trending = match v.to_ascii_lowercase().as_slice() {
                    b"hot" => false,
                    b"trending" => true,
                    _ => {
                        return Err(Fail::Msg(format!(
                            "ERR BY must be hot or trending, not '{}'",
                            v.escape_ascii()
                        )))
                    }
                };
            }
            b"LIMIT" => limit = parse_count("LIMIT", args.value_of("LIMIT")?, MAX_LIMIT)?,
            b"WINDOW" => window = Some(parse_duration_ms("WINDOW", args.value_of("WINDOW")?)?),
            b"WITHSCORES" => withscores = true,
            b"AT" => at = Some(parse_time_ms("AT", args.value_of("AT")?)?),
            _ => return Err(Fail::syntax_at(opt)),
        }
    }
    let q = at.unwrap_or_else(ffi::now_ms);
    stats::add(&stats::TOP_CALLS, 1);
    let board_h = b.open_board(false)?;
    // The board record, read once (BY trending reads it before the empty
    // board's early reply, to refuse a board without trending).
    let early = if by_trending {
        let (rec, settings) = read_settings_from(&b, rec0.take())?;
        let own = rec.and_then(|r| r.settings);
        if rec.is_some() && !own.is_some_and(|s| s.trending()) {
            check_hot_board(&b, &board_h, true)?;
            return Err(super::trending::no_trending());
        }
        Some((rec, settings))
    } else {
        None
    };
    if board_h.kind() == KeyKind::Empty {
        return Ok(RedisValue::Array(vec![]));
    }
    let (rec, settings) = match early {
        Some(read) => read,
        None => read_settings_from(&b, rec0.take())?,
    };
    let own = rec.and_then(|r| r.settings).filter(|s| s.trending());
    // A ZSET that HOT did not make is refused, as HOT.VIEW refuses it.
    check_hot_board(&b, &board_h, rec.is_some())?;
    drop(board_h);
    let n = limit as usize;
    if by_trending {
        let Some(s) = own else {
            return Err(super::trending::no_trending());
        };
        let (best, examined) = super::trending::top(&b, &s, q, at.is_none(), n, window)?;
        stats::add(&stats::TOP_EXAMINED, examined);
        return Ok(ffi::reply_strings_scores(
            ctx,
            &best,
            withscores,
            format_score,
        ));
    }
    let (best, examined) = {
        let f = settings.formula;
        let prune = prune_ok(&b, &f, q, at.is_none())?;
        match window {
            None => select(&b, &f, q, n, None, prune, None)?.unwrap_or_default(),
            Some(w) => select_in_window(&b, &f, q, n, w, prune)?,
        }
    };
    stats::add(&stats::TOP_EXAMINED, examined);
    let mut out = Vec::with_capacity(best.len() * 2);
    for (article, score) in best {
        out.push(bulk(article));
        if withscores {
            out.push(bulk(format_score(score)));
        }
    }
    Ok(RedisValue::Array(out))
}

/// `HOT.STATS K article [AT t]` → pv, uv, suspicious, published_at, score,
/// and on a board that keeps trending `trending` (its trending score at
/// `t`); nil if unknown.
pub(super) fn stats_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, 5)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    let rec0 = b.load_epoch_record(false)?;
    let article = args.next_rs()?.as_slice();
    let q = match args.trailing_at()? {
        Some(raw) => parse_time_ms("AT", raw)?,
        None => ffi::now_ms(),
    };
    let sus = b.derived(Kind::Suspicious, &[article], false)?;
    // A ZSET that HOT did not make, or whose record is gone, is refused:
    // its scores would come from settings that are not the board's.
    let board_h = b.open_board(false)?;
    let (rec, settings) = read_settings_from(&b, rec0)?;
    check_hot_board(&b, &board_h, rec.is_some())?;
    drop(board_h);
    let suspicious = counter_of(&b.open(&sus, KeyKind::String, false)?)?;
    let Some(a) = facts(&b, article)?.or((suspicious > 0).then_some(Facts {
        pv: 0,
        uv: 0,
        published: None,
    })) else {
        return Ok(RedisValue::Null);
    };
    let score = match a.published {
        Some(p) if a.pv > 0 => settings.formula.score(a.pv, a.uv, p, q),
        _ => 0.0,
    };
    let mut fields = vec![
        ("pv", RedisValue::Integer(a.pv)),
        ("uv", RedisValue::Integer(a.uv)),
        ("suspicious", RedisValue::Integer(suspicious)),
        (
            "published_at",
            a.published
                .map_or(RedisValue::Null, |p| bulk(format_time_ms(p))),
        ),
        ("score", bulk(format_score(score))),
    ];
    if let Some(s) = rec.and_then(|r| r.settings).filter(|s| s.trending()) {
        let t = super::trending::score_of(&b, &s, article, q)?;
        fields.push(("trending", bulk(format_score(t))));
    }
    Ok(ffi::reply_map(ctx, fields))
}
