//! `HOT.*` handlers: PUBLISH, VIEW, TOP, STATS, and the board upkeep that
//! HOT.VIEW does on the way (trimming to `max-articles`, forgetting expired
//! articles).

use super::{
    bulk, counter_of, effect, reply_array, reply_int, zadd_effect, Args, BoardCtx, Fail, Res,
};
use crate::ffi::{Event, KeyKind};
use crate::hot::record::BoardRecord;
use crate::hot::view;
use crate::hot::{hll, in_window, Formula, TopN};
use crate::keys::Kind;
use crate::parse::{
    format_score, format_time_ms, parse_count, parse_duration_ms, parse_i64, parse_time_ms,
};
use crate::parse::{IntText, ScoreText};
use crate::{config, ffi, stats};
use redis_module::{Context, RedisString, RedisValue};

/// Most results one HOT.TOP may return.
pub const MAX_LIMIT: i64 = 10_000;

/// What HOT.TOP needs of an article.
pub(super) struct Facts {
    pub pv: i64,
    pub uv: i64,
    pub published: Option<i64>,
}

/// An error for a derived key whose value hotrank did not write: it is
/// refused, never misread or overwritten.
pub(super) fn not_ours(name: &RedisString, what: &str) -> Fail {
    Fail::Msg(format!(
        "ERR hotrank key '{}' {what}: it holds a value hotrank did not write; delete it",
        name.as_slice().escape_ascii()
    ))
}

/// An integer field of a hash hotrank writes (`None` when missing), read by
/// the server's rule for a hash field (HINCRBY's); else HINCRBY's error,
/// `ERR hash value is not an integer`.
pub(super) fn int_field(v: Option<RedisString>) -> Res<Option<i64>> {
    match v {
        None => Ok(None),
        Some(s) => parse_i64("field", s.as_slice())
            .map(Some)
            .map_err(|_| Fail::Msg("ERR hash value is not an integer".into())),
    }
}

/// The meta hash's `publishedAt` (HGET), checked to be an integer. The
/// meta hash holds only that: PV and UV live in their counter and HyperLogLog.
pub(super) fn published_at(h: &ffi::Key) -> Res<Option<i64>> {
    int_field(h.hash_get(c"publishedAt"))
}

/// The meta hash's `lastView` (unix ms of the article's last counted view),
/// checked to be an integer as [`published_at`] is.
pub(super) fn last_view_at(h: &ffi::Key) -> Res<Option<i64>> {
    int_field(h.hash_get(c"lastView"))
}

/// The UV of an open HyperLogLog handle: the count cached in its header,
/// or, when that is stale, the estimate computed on a copy (a read writes
/// nothing); 0 when missing. Error as PFCOUNT gives for a bad value.
fn uv_of(h: &ffi::Key) -> Res<i64> {
    if h.kind() == KeyKind::Empty {
        return Ok(0);
    }
    let n = hll::estimate_of(h.read()).map_err(hll_error)?;
    Ok(i64::try_from(n).unwrap_or(i64::MAX))
}

/// An article's PV (its counter), UV (its HyperLogLog) and publish time
/// (its meta hash): the one source of each. `None` for an unknown article
/// (no PV and no publish time).
pub(super) fn facts(b: &BoardCtx, article: &[u8]) -> Res<Option<Facts>> {
    let (_, meta) = b.open_derived(Kind::Meta, &[article], KeyKind::Hash, false)?;
    let published = published_at(&meta)?;
    let (_, pv_h) = b.open_derived(Kind::Pv, &[article], KeyKind::String, false)?;
    let pv = counter_of(&pv_h)?;
    if pv == 0 && published.is_none() {
        return Ok(None);
    }
    let (_, uv_h) = b.open_derived(Kind::Uv, &[article], KeyKind::String, false)?;
    let uv = uv_of(&uv_h)?;
    Ok(Some(Facts { pv, uv, published }))
}

/// The board record (derived string `board`, [`BoardRecord`]), checked;
/// `None` when the board has none. `h` is open with its type checked
/// (string).
pub(super) fn board_record(name: &RedisString, h: &ffi::Key) -> Res<Option<BoardRecord>> {
    if h.kind() == KeyKind::Empty {
        return Ok(None);
    }
    match BoardRecord::parse(h.read()) {
        Some(r) => Ok(Some(r)),
        None => Err(not_ours(name, "is not a hotrank board record")),
    }
}

/// How a HOT board is recognised: its ZSET is missing or empty, or it has a
/// board record (the derived `board` string that every counted view writes),
/// and it is not a RANK board (no RANK layout). Anything else is a ZSET
/// hotrank's HOT commands did not make: refused, so its members are never
/// rescored or trimmed away.
pub(super) fn check_hot_board(b: &BoardCtx, board: &ffi::Key, has_record: bool) -> Res<()> {
    let foreign = if board.kind() == KeyKind::ZSet && board.len() > 0 {
        !has_record
    } else {
        b.exists(&b.derived(Kind::Layout, &[], false)?)
    };
    if foreign {
        return Err(Fail::Msg(
            "ERR key holds a ZSET that was not made by HOT (no board record, or a RANK board); use another key"
                .into(),
        ));
    }
    Ok(())
}

/// The error PFADD/PFCOUNT would give for a value that is not a valid
/// HyperLogLog (`WRONGTYPE …`) or a corrupt one (`INVALIDOBJ …`).
pub(super) fn hll_error(e: hll::HllError) -> Fail {
    Fail::Msg(e.message().into())
}

/// Opens an article's HyperLogLog for writing: missing, or a string that
/// passes the server's HyperLogLog check; else the error PFADD would give,
/// before anything is written.
pub(super) fn open_hll(b: &BoardCtx, name: &RedisString) -> Res<ffi::Key> {
    let h = b.open(name, KeyKind::String, true)?;
    if h.kind() != KeyKind::Empty {
        hll::validate(h.read()).map_err(hll_error)?;
    }
    Ok(h)
}

/// `hotrank.retention-seconds`, in milliseconds.
pub(super) fn retention_ms() -> i64 {
    config::get(&config::RETENTION_SECONDS) * 1000
}

/// Records an upper bound of the instants stored scores were computed for
/// (rounded up to a minute) and the formula they used, so HOT.TOP knows when
/// stored scores are upper bounds of scores at its query time. `hb_h` is
/// the board record, open for writing and type-checked. Written (by DMA,
/// replicated as `SET … KEEPTTL`) only when it changes: at most once a
/// minute on a busy board.
fn note_board_write(
    ctx: &Context,
    hb: &RedisString,
    hb_h: &mut ffi::Key,
    record: &Option<BoardRecord>,
    f: &Formula,
    at_ms: i64,
) -> Res<()> {
    match BoardRecord::after_write(record.as_ref(), f.fingerprint(), at_ms) {
        Some(new) => write_record(ctx, hb, hb_h, &new),
        None => Ok(()),
    }
}

/// Writes the board record `new` by DMA, replicated as `SET hb text KEEPTTL`.
pub(super) fn write_record(
    ctx: &Context,
    hb: &RedisString,
    hb_h: &mut ffi::Key,
    new: &BoardRecord,
) -> Res<()> {
    let text = new.text();
    hb_h.write(text.as_bytes())?;
    let args = [text.as_bytes(), b"KEEPTTL"];
    effect(ctx, hb, Event::String, c"set", c"SET", &args);
    Ok(())
}

/// Sets the keys to expire `hotrank.retention-seconds` from now when the
/// first one's expiry is missing or more than a tenth of the retention (at
/// most a day) older than that, so a busy article refreshes it at most
/// daily. Each is replicated as PEXPIREAT with the exact time; missing keys
/// are skipped.
pub(super) fn refresh_retention(
    ctx: &Context,
    now: i64,
    keys: &mut [(&RedisString, &mut ffi::Key)],
) {
    let ret = retention_ms();
    if !view::retention_fresh(keys.first().and_then(|(_, h)| h.ttl()), ret) {
        for (name, h) in keys.iter_mut() {
            if h.kind() != KeyKind::Empty {
                expire_effect(ctx, name, h, now + ret, now);
            }
        }
    }
}

/// `HOT.PUBLISH K article published_at` → 1 if the publish time is new, 0 if updated.
pub(super) fn publish_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, 4)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    b.load_epoch(true)?;
    let article_rs = args.next_rs()?;
    let article = article_rs.as_slice();
    let published = parse_time_ms("published_at", args.next_rs()?.as_slice())?;
    let f = valid_formula()?;
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
    let record = board_record(&hb, &hb_h)?;
    check_hot_board(&b, &board_h, record.is_some())?;
    let mut meta_h = b.open(&meta, KeyKind::Hash, true)?;
    let old_published = published_at(&meta_h)?;
    let mut pub_h = b.open(&pubidx, KeyKind::ZSet, true)?;
    let mut pv_h = b.open(&pv, KeyKind::String, true)?;
    let pv_now = counter_of(&pv_h)?;
    let mut uv_h = b.open(&uv, KeyKind::String, true)?;
    let (rm, mut rm_h) = b.open_derived(Kind::Removed, &[article], KeyKind::String, true)?;
    let (ix, mut ix_h) = b.open_derived(Kind::Index, &[], KeyKind::ZSet, true)?;
    let now = ffi::now_ms();

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
    let p = IntText::new(published);
    let fields = [(c"publishedAt", p.as_bytes())];
    meta_h.hash_set(&fields);
    hset_effect(ctx, &meta, &fields);
    refresh_retention(
        ctx,
        now,
        &mut [(&pv, &mut pv_h), (&uv, &mut uv_h), (&meta, &mut meta_h)],
    );
    if let Some(score) = rescore {
        board_h.zset_add(score, article_rs)?;
        zadd_effect(ctx, b.key, &ScoreText::new(score), article_rs);
        note_board_write(ctx, &hb, &mut hb_h, &record, &f, now)?;
    }
    if reindex {
        pub_h.zset_add(published as f64, article_rs)?;
        zadd_effect(ctx, &pubidx, &ScoreText::new(published as f64), article_rs);
    }
    super::hot_admin::index_add(ctx, &ix, &mut ix_h, article_rs)?;
    // Published again: a takedown (HOT.REM) ends.
    super::hot_admin::clear_removed(&b, &rm, &mut rm_h);
    Ok(RedisValue::Integer(i64::from(old_published.is_none())))
}

/// The formula of the configs, unless they are out of range (then the
/// error of [`view::ViewError::BadFormula`]).
pub(super) fn valid_formula() -> Res<Formula> {
    let f = config::formula();
    if !f.is_valid() {
        return Err(view_error(view::ViewError::BadFormula));
    }
    Ok(f)
}

/// The standard error of a counter that cannot take one more.
pub(super) fn overflow() -> Fail {
    Fail::Msg("ERR increment or decrement would overflow".into())
}

/// The error of a view that cannot be applied (nothing was written).
pub(super) fn view_error(e: view::ViewError) -> Fail {
    match e {
        view::ViewError::Overflow => overflow(),
        view::ViewError::BadFormula => Fail::Msg(
            "ERR hotrank formula configs are out of range; check CONFIG GET hotrank.*".into(),
        ),
        view::ViewError::Hll(e) => hll_error(e),
    }
}

/// Sets `h` to expire at `at` (unix ms), replicated as `PEXPIREAT name at`.
pub(super) fn expire_effect(
    ctx: &Context,
    name: &RedisString,
    h: &mut ffi::Key,
    at: i64,
    now: i64,
) {
    h.expire_at(at, now);
    let at_s = IntText::new(at);
    effect(
        ctx,
        name,
        Event::Generic,
        c"expire",
        c"PEXPIREAT",
        &[at_s.as_bytes()],
    );
}

/// Replicates a low-level `HSET name f v …` (up to 3 fields).
pub(super) fn hset_effect(ctx: &Context, name: &RedisString, fields: &[(&std::ffi::CStr, &[u8])]) {
    let mut args: Vec<&[u8]> = Vec::with_capacity(2 * fields.len());
    for (k, v) in fields {
        args.extend([k.to_bytes(), *v]);
    }
    effect(ctx, name, Event::Hash, c"hset", c"HSET", &args);
}

/// Removes articles from the board and its index and drops their counters,
/// a batch of up to 256 per command (one ZREM for the board, one for the
/// index, one DEL for all counters). Their
/// meta hashes (publish time) stay until retention expires them, so an
/// article that comes back keeps its age. Every key is ACL-checked before
/// the first write.
fn forget<A: AsRef<[u8]>>(b: &BoardCtx, pubidx: &RedisString, articles: &[A]) -> Res<()> {
    for batch in articles.chunks(256) {
        let mut counters = Vec::with_capacity(3 * batch.len());
        for a in batch {
            let a = a.as_ref();
            for kind in [Kind::Pv, Kind::Uv, Kind::Suspicious] {
                counters.push(b.derived(kind, &[a], true)?);
            }
        }
        let members: Vec<&[u8]> = batch.iter().map(|a| a.as_ref()).collect();
        for zset in [b.key, pubidx] {
            let mut h = b.open(zset, KeyKind::ZSet, true)?;
            b.zrem(zset, &mut h, &members);
        }
        b.delete(&counters, false);
    }
    Ok(())
}

/// The article with the lowest score and the one published first, when
/// retention has expired their counters: what [`upkeep`] forgets.
pub(super) fn expired_fronts(
    b: &BoardCtx,
    board_h: &ffi::Key,
    pub_h: &ffi::Key,
) -> Res<Vec<RedisString>> {
    let mut out: Vec<RedisString> = Vec::new();
    for h in [board_h, pub_h] {
        let Some(article) = h.zset_first() else {
            continue;
        };
        if out.iter().any(|a| a.as_slice() == article.as_slice()) {
            continue;
        }
        if !b.exists(&b.derived(Kind::Pv, &[article.as_slice()], false)?) {
            out.push(article);
        }
    }
    Ok(out)
}

/// BoardCtx upkeep after a counted view:
/// - forgets the lowest-scored and the oldest-published article if retention
///   has expired its counter;
/// - trims the board to `hotrank.max-articles` once it holds half as many more
///   (at least 16): it keeps exactly the top `max-articles` by exact score
///   now (found by the same pruned selection as HOT.TOP) and forgets the
///   rest, so nothing that is in the top now is lost, and the cost of a trim
///   is spread over the new articles that trigger the next one (see
///   [`crate::hot::trim_slack`]).
pub(super) fn upkeep(
    b: &BoardCtx,
    pubidx: &RedisString,
    f: &Formula,
    now: i64,
    expired: Vec<RedisString>,
    card: i64,
) -> Res<()> {
    for article in expired {
        forget(b, pubidx, &[article.as_slice()])?;
        stats::add(&stats::ARTICLES_SWEPT, 1);
    }
    super::hot_admin::sweep_index(b)?;
    let max = config::get(&config::MAX_ARTICLES);
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
    let all = reply_array(&b.call_read("ZRANGE", &[b.bytes(), b"0", b"-1"])?);
    let gone: Vec<&Vec<u8>> = all
        .iter()
        .filter(|a| !keep.contains(a.as_slice()))
        .collect();
    forget(b, pubidx, &gone)?;
    stats::add(&stats::TRIMS, 1);
    stats::add(&stats::ARTICLES_TRIMMED, gone.len() as u64);
    Ok(())
}

/// Whether the stored scores of the board bound its scores at `q`: they
/// were all computed with the current formula, and no later than `q`. A
/// query at the server clock (`at_clock`) always is no earlier than every
/// view, since views cannot be later than the clock; a query with AT is
/// compared with the board's recorded bound.
fn prune_ok(b: &BoardCtx, f: &Formula, q: i64, at_clock: bool) -> Res<bool> {
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
    if let Some(iter) = b.board_rev_iter() {
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

/// The exact top `n` among articles published in `[q - w, q]`, by scoring
/// every one of them through the publish-time index.
fn select_window(b: &BoardCtx, f: &Formula, q: i64, n: usize, w: i64) -> Res<Selection> {
    let pubidx = b.derived(Kind::PubIndex, &[], false)?;
    let (lo, hi) = (q.saturating_sub(w).to_string(), q.to_string());
    let ids = reply_array(&b.call_read(
        "ZRANGEBYSCORE",
        &[pubidx.as_slice(), lo.as_bytes(), hi.as_bytes()],
    )?);
    // The board decides membership: an index entry whose article is no
    // longer on the board (the board was deleted or expired) is not offered.
    let board = b.open_board(false)?;
    let mut best = TopN::new(n);
    for article in &ids {
        let member = RedisString::create_from_slice(b.ctx.ctx, article);
        if board.zset_score(&member).is_some() {
            offer(b, f, q, Some(w), article, &mut best)?;
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
    let (lo, hi) = (q.saturating_sub(w).to_string(), q.to_string());
    let in_win =
        reply_int(&b.call_read("ZCOUNT", &[pubidx.as_slice(), lo.as_bytes(), hi.as_bytes()])?)
            .unwrap_or(0);
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

/// `HOT.TOP K [LIMIT n] [WINDOW w] [WITHSCORES] [AT t]`.
pub(super) fn top_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 9)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    b.load_epoch(false)?;
    let (mut limit, mut window, mut withscores, mut at) = (20i64, None, false, None);
    while let Some(opt) = args.next() {
        match opt.to_ascii_uppercase().as_slice() {
            b"LIMIT" => limit = parse_count("LIMIT", args.value_of("LIMIT")?, MAX_LIMIT)?,
            b"WINDOW" => window = Some(parse_duration_ms("WINDOW", args.value_of("WINDOW")?)?),
            b"WITHSCORES" => withscores = true,
            b"AT" => at = Some(parse_time_ms("AT", args.value_of("AT")?)?),
            _ => return Err(Fail::syntax_at(opt)),
        }
    }
    let q = at.unwrap_or_else(ffi::now_ms);
    stats::add(&stats::TOP_CALLS, 1);
    if b.open_board(false)?.kind() == KeyKind::Empty {
        return Ok(RedisValue::Array(vec![]));
    }
    let f = config::formula();
    let prune = prune_ok(&b, &f, q, at.is_none())?;
    let n = limit as usize;
    let (best, examined) = match window {
        None => select(&b, &f, q, n, None, prune, None)?.unwrap_or_default(),
        Some(w) => select_in_window(&b, &f, q, n, w, prune)?,
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

/// `HOT.STATS K article [AT t]` → pv, uv, suspicious, published_at, score (nil if unknown).
pub(super) fn stats_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, 5)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    b.load_epoch(false)?;
    let article = args.next_rs()?.as_slice();
    let q = match args.trailing_at()? {
        Some(raw) => parse_time_ms("AT", raw)?,
        None => ffi::now_ms(),
    };
    let sus = b.derived(Kind::Suspicious, &[article], false)?;
    b.open_board(false)?;
    let suspicious = counter_of(&b.open(&sus, KeyKind::String, false)?)?;
    let Some(a) = facts(&b, article)?.or((suspicious > 0).then_some(Facts {
        pv: 0,
        uv: 0,
        published: None,
    })) else {
        return Ok(RedisValue::Null);
    };
    let score = match a.published {
        Some(p) if a.pv > 0 => config::formula().score(a.pv, a.uv, p, q),
        _ => 0.0,
    };
    Ok(ffi::reply_map(
        ctx,
        vec![
            ("pv", RedisValue::Integer(a.pv)),
            ("uv", RedisValue::Integer(a.uv)),
            ("suspicious", RedisValue::Integer(suspicious)),
            (
                "published_at",
                a.published
                    .map_or(RedisValue::Null, |p| bulk(format_time_ms(p))),
            ),
            ("score", bulk(format_score(score))),
        ],
    ))
}
