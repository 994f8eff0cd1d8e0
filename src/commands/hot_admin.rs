//! `HOT.*` administration: REM (takedown), and the article index
//! (derived ZSET `ix`, [`Kind::Index`]) that the lifecycle commands walk.
//!
//! The article index maps every article the board holds a key for (PV,
//! UV, meta, suspicious counter, takedown tombstone) to a sequence number,
//! given when the article is first seen (1, then the highest + 1). It is
//! what HOT.EXPORT's cursor follows (a cursor is a sequence number, so an
//! article keeps its place whatever happens to the board's scores), what
//! HOT.DROP deletes article keys from, and what HOT.INFO counts.

use super::article::facts;
use super::board::settings_of;
use super::board::{board_record, check_hot_board, dedup_name, dedup_shard_name};
use super::published_and_last_view;
use super::{bulk, counter_of, effect, zadd_effect, Args, BoardCtx, Fail, Res};
use crate::config;
use crate::ffi::{self, Event, KeyKind};
use crate::hot::dedup;
use crate::hot::settings::BoardSettings;
use crate::keys::Kind;
use crate::parse::{
    format_score, format_time_ms, parse_count, parse_i64, parse_time_ms, IntText, ScoreText,
};
use redis_module::{Context, RedisString, RedisValue};

/// The per-article keys a HOT board may hold, with the type each must have.
pub(super) const ARTICLE_KEYS: [(Kind, KeyKind); 5] = [
    (Kind::Pv, KeyKind::String),
    (Kind::Uv, KeyKind::String),
    (Kind::Meta, KeyKind::Hash),
    (Kind::Suspicious, KeyKind::String),
    (Kind::Removed, KeyKind::String),
];

/// Adds `article` to the article index `name` (open for writing as `h`,
/// type checked) unless it is there: its sequence number is the highest
/// in the index + 1 (1 for the first), replicated as `ZADD name seq article`.
/// Returns whether it was added.
pub(super) fn index_add(
    ctx: &Context,
    name: &RedisString,
    h: &mut ffi::Key,
    article: &RedisString,
) -> Res<bool> {
    if h.zset_score(article).is_some() {
        return Ok(false);
    }
    index_append(ctx, name, h, article)?;
    Ok(true)
}

/// [`index_add`] of an article the caller knows the index does not list
/// (it just looked it up through `h`): no second lookup.
pub(super) fn index_append(
    ctx: &Context,
    name: &RedisString,
    h: &mut ffi::Key,
    article: &RedisString,
) -> Res<()> {
    let seq = h.zset_last_score().map_or(1.0, |s| s.floor() + 1.0);
    h.zset_add(seq, article)?;
    zadd_effect(ctx, name, &ScoreText::new(seq), article);
    Ok(())
}

/// Whether a takedown tombstone of `article` lives (the article was removed
/// by HOT.REM and not published since). The name is ACL-checked for reading.
pub(super) fn is_removed(b: &BoardCtx, article: &[u8]) -> Res<bool> {
    let (_, h) = b.open_derived(Kind::Removed, &[article], KeyKind::String, false)?;
    Ok(h.kind() != KeyKind::Empty)
}

/// Deletes the takedown tombstone of `article` if there is one (HOT.PUBLISH:
/// a published article counts again), replicated as `DEL`. The name must be
/// ACL-checked for writing by the caller.
pub(super) fn clear_removed(b: &BoardCtx, name: &RedisString, h: &mut ffi::Key) {
    if h.kind() != KeyKind::Empty {
        b.delete_open(&mut [(name, h)], false);
    }
}

/// One article's keys for HOT.REM: names and handles, open for writing.
struct ArticleKeys {
    names: Vec<RedisString>,
    handles: Vec<ffi::Key>,
}

/// `HOT.REM K article [article …]` → the number of articles removed: those
/// on the board or with any key (counters, meta). Each named article is
/// taken off the board and the publish index, its PV, UV, meta and
/// suspicious keys are deleted, and a tombstone (`rm`, expiring after
/// `hotrank.retention-seconds`) makes later views of it uncounted (status
/// `removed`) until HOT.PUBLISH publishes it again. All keys are named,
/// ACL-checked for writing and type-checked before the first write.
pub(super) fn rem_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, usize::MAX)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    b.load_epoch(true)?;
    let mut articles: Vec<&RedisString> = Vec::new();
    while let Ok(a) = args.next_rs() {
        if !articles.iter().any(|x| x.as_slice() == a.as_slice()) {
            articles.push(a);
        }
    }
    // Read: every key named, ACL-checked and type-checked first.
    let hb = b.derived(Kind::HotBoard, &[], true)?;
    let pubidx = b.derived(Kind::PubIndex, &[], true)?;
    let ix = b.derived(Kind::Index, &[], true)?;
    let mut board_h = b.open_board(true)?;
    let hb_h = b.open(&hb, KeyKind::String, true)?;
    let record = board_record(&hb, &hb_h)?;
    check_hot_board(&b, &board_h, record.is_some())?;
    let mut pub_h = b.open(&pubidx, KeyKind::ZSet, true)?;
    let mut ix_h = b.open(&ix, KeyKind::ZSet, true)?;
    let kept = record
        .and_then(|r| r.settings)
        .is_some_and(|s| s.trending());
    let (tr, mut tr_h) = super::trending::open_maybe(&b, true, kept)?;
    let mut per_article = Vec::with_capacity(articles.len());
    for a in &articles {
        let mut k = ArticleKeys {
            names: Vec::with_capacity(ARTICLE_KEYS.len()),
            handles: Vec::with_capacity(ARTICLE_KEYS.len()),
        };
        for (kind, want) in ARTICLE_KEYS {
            let name = b.derived(kind, &[a.as_slice()], true)?;
            k.handles.push(b.open(&name, want, true)?);
            k.names.push(name);
        }
        per_article.push(k);
    }

    // Write.
    b.claim_epoch()?;
    let now = ffi::now_ms();
    let at = now + settings_of(record).retention_ms();
    let (now_s, at_s) = (IntText::new(now), IntText::new(at));
    let members: Vec<&[u8]> = articles.iter().map(|a| a.as_slice()).collect();
    let mut removed = 0i64;
    for (a, k) in articles.iter().zip(per_article.iter_mut()) {
        let on_board = board_h.zset_score(a).is_some();
        // Every key but the tombstone (the last).
        let n = k.names.len() - 1;
        let had_keys = k.handles[..n].iter().any(|h| h.kind() != KeyKind::Empty);
        if on_board || had_keys {
            removed += 1;
        }
        let mut keys: Vec<(&RedisString, &mut ffi::Key)> =
            k.names[..n].iter().zip(k.handles[..n].iter_mut()).collect();
        b.delete_open(&mut keys, false);
        let (rm, rm_h) = (&k.names[n], &mut k.handles[n]);
        rm_h.write(now_s.as_bytes())?;
        rm_h.expire_at(at, now);
        let args = [now_s.as_bytes(), b"PXAT", at_s.as_bytes()];
        effect(ctx, rm, Event::String, c"set", c"SET", &args);
        ffi::notify(ctx, Event::Generic, c"expire", rm);
        // The tombstone is an article key: the index lists it for HOT.DROP.
        index_add(ctx, &ix, &mut ix_h, a)?;
    }
    b.zrem(b.key, &mut board_h, &members);
    b.zrem(&pubidx, &mut pub_h, &members);
    b.zrem(&tr, &mut tr_h, &members);
    Ok(RedisValue::Integer(removed))
}

/// Index upkeep, run by HOT.VIEW's board upkeep (when an article is added to
/// the board): removes index entries whose article keys are all gone
/// (retention expired them), so the index stays about as long as the
/// number of articles with keys.
///
/// It probes [`SWEEP_PROBES`] place of the index, at a sequence number
/// drawn from `seed` between 0 and the highest, and walks forwards from
/// there while the entries are stale (articles first seen together expire
/// together), removing at most [`SWEEP_MAX_REMOVED`]. Entries never move, so
/// HOT.EXPORT's cursor (a sequence number) returns every entry present
/// throughout a scan. Each add makes one entry; with a fraction `s` of the
/// index stale (even scattered at random), a probe removes `s / (1 - s)`
/// entries on average, more than one once `s` passes one half: so at most
/// about half the index is stale (each stale entry costs its ZSET entry,
/// about 60 bytes plus the article id, until then). One probe costs about
/// 4,000 instructions (the seek, and one key lookup for a live article).
///
/// `seed` must come from the command's own inputs (the master's clock and
/// the board's size): a replica running the replicated command probes the
/// same places, and in `effects` mode each removal replicates as a `ZREM`.
/// `open`: the index's name and a handle the caller opened for writing
/// (ACL- and type-checked, as [`BoardCtx::open_derived`] does), else it is
/// opened here.
pub(super) fn sweep_index(
    b: &BoardCtx,
    seed: u64,
    open: Option<(RedisString, ffi::Key)>,
) -> Res<()> {
    let (ix, mut h) = match open {
        Some(o) => o,
        None => b.open_derived(Kind::Index, &[], KeyKind::ZSet, true)?,
    };
    let Some(last) = h.zset_last_score() else {
        return Ok(());
    };
    // Sequence numbers are small integers; a hand-written score must not
    // overflow the span (at most 2^53, where f64 still counts by one).
    let span = (last.clamp(0.0, 9_007_199_254_740_992.0) as u64) + 1;
    let (mut x, mut removed) = (seed, 0);
    for _ in 0..SWEEP_PROBES {
        x = crate::hot::dedup::mix(x);
        let mut from = (x % span) as f64;
        while let Some((a, seq)) = h.zset_first_from(from) {
            if article_alive(b, a.as_slice())? {
                break;
            }
            b.zrem(&ix, &mut h, &[a.as_slice()]);
            removed += 1;
            if removed >= SWEEP_MAX_REMOVED {
                return Ok(());
            }
            from = seq;
        }
    }
    Ok(())
}

/// Places of the article index [`sweep_index`] probes per added article
/// (two cost about 4,000 more instructions per add, for a stale part below a
/// third instead of a half).
pub const SWEEP_PROBES: usize = 1;
/// Most stale index entries one [`sweep_index`] removes.
pub const SWEEP_MAX_REMOVED: usize = 16;

/// Whether `article` still has one of its keys ([`ARTICLE_KEYS`]).
fn article_alive(b: &BoardCtx, article: &[u8]) -> Res<bool> {
    for (kind, _) in ARTICLE_KEYS {
        if b.exists(&b.derived(kind, &[article], false)?)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Most index entries one HOT.EXPORT call may walk (`COUNT`).
pub const EXPORT_MAX_COUNT: i64 = 10_000;

/// One HOT.EXPORT row: `[article, [pv, …, score, …, last_view, …]]`, or
/// `None` when the article holds no counters and no meta (only a takedown
/// tombstone, or an index entry whose keys retention expired).
fn export_row(b: &BoardCtx, article: &[u8], q: i64, s: &BoardSettings) -> Res<Option<RedisValue>> {
    let f = &s.formula;
    let (_, meta) = b.open_derived(Kind::Meta, &[article], KeyKind::Hash, false)?;
    let (published, last_view) = published_and_last_view(&meta)?;
    let (_, sus_h) = b.open_derived(Kind::Suspicious, &[article], KeyKind::String, false)?;
    let suspicious = counter_of(&sus_h)?;
    let (pv, uv) = match facts(b, article)? {
        Some(a) => (a.pv, a.uv),
        None => (0, 0),
    };
    if pv == 0 && published.is_none() && suspicious == 0 && last_view.is_none() {
        return Ok(None);
    }
    let score = match published {
        Some(p) if pv > 0 => f.score(pv, uv, p, q),
        _ => 0.0,
    };
    let time = |t: Option<i64>| t.map_or(RedisValue::Null, |t| bulk(format_time_ms(t)));
    let mut fields = vec![
        bulk("pv"),
        RedisValue::Integer(pv),
        bulk("uv"),
        RedisValue::Integer(uv),
        bulk("suspicious"),
        RedisValue::Integer(suspicious),
        bulk("published_at"),
        time(published),
        bulk("score"),
        bulk(format_score(score)),
    ];
    if s.trending() {
        let t = super::trending::score_of(b, s, article, q)?;
        fields.extend([bulk("trending"), bulk(format_score(t))]);
    }
    fields.extend([bulk("last_view"), time(last_view)]);
    Ok(Some(RedisValue::Array(vec![
        bulk(article),
        RedisValue::Array(fields),
    ])))
}

/// `HOT.EXPORT K cursor [COUNT n] [AT t]` → `[next-cursor, [[article, [field,
/// value, …]], …]]`: a cursor over the article index (every article the
/// board holds counters or meta for, on the board or not), SCAN-shaped.
/// The cursor is a sequence number of the index: `0` starts, and the reply
/// cursor is `0` when the walk is done. One call walks up to `n` entries
/// (default 10, 1 to [`EXPORT_MAX_COUNT`]) and may return fewer rows (an
/// entry without counters or meta is skipped). Fields as HOT.STATS (pv, uv,
/// suspicious, published_at, score at `t`, the server clock by default,
/// and `trending` at `t` on a board that keeps trending) plus `last_view`
/// (unix seconds of the last counted view, nil if none recorded). An
/// article keeps its sequence number while it lives, so every article
/// present for the whole walk is returned at least once, whatever views,
/// trims and rescoring happen in between (index upkeep may move an entry to
/// the end: it is then returned twice). Errors: `ERR invalid cursor`.
pub(super) fn export_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 3, 7)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    b.load_epoch(false)?;
    let cursor = match parse_i64("cursor", args.next_rs()?.as_slice()) {
        Ok(c) if c >= 0 => c,
        _ => return Err(Fail::Msg("ERR invalid cursor".into())),
    };
    let (mut count, mut at) = (10, None);
    while let Some(opt) = args.next() {
        match opt.to_ascii_uppercase().as_slice() {
            b"COUNT" => count = parse_count("COUNT", args.value_of("COUNT")?, EXPORT_MAX_COUNT)?,
            b"AT" => at = Some(parse_time_ms("AT", args.value_of("AT")?)?),
            _ => return Err(Fail::syntax_at(opt)),
        }
    }
    let board = b.open_board(false)?;
    let (hb, hb_h) = b.open_derived(Kind::HotBoard, &[], KeyKind::String, false)?;
    let record = board_record(&hb, &hb_h)?;
    check_hot_board(&b, &board, record.is_some())?;
    let (ix, _) = b.open_derived(Kind::Index, &[], KeyKind::ZSet, false)?;
    let (q, mut s) = (at.unwrap_or_else(ffi::now_ms), settings_of(record));
    if record.and_then(|r| r.settings).is_none() {
        // Trending is the board's own: a board without settings keeps none.
        s.trending_ms = 0;
    }
    let mut rows = Vec::new();
    let mut next = 0i64;
    if let Some(iter) = b.walk(
        &ix,
        ffi::Bound::incl(cursor as f64),
        ffi::Bound::incl(f64::INFINITY),
        false,
    ) {
        for (walked, (article, seq)) in iter.enumerate() {
            if walked as i64 == count {
                next = seq as i64;
                break;
            }
            if let Some(row) = export_row(&b, article.as_slice(), q, &s)? {
                rows.push(row);
            }
        }
    }
    Ok(RedisValue::Array(vec![
        bulk(IntText::new(next).as_bytes()),
        RedisValue::Array(rows),
    ]))
}

/// The board's settings as HOT.INFO reports them, by config name: its
/// own (HOT.CREATE / HOT.ALTER, or the configs stored at its first write),
/// else the configs a first write would store now.
fn board_settings(settings: &BoardSettings) -> Vec<(&'static str, RedisValue)> {
    let (floats, ints) = settings.fields();
    let mut out = Vec::new();
    for (name, v) in floats {
        out.push((name, bulk(format_score(v))));
    }
    for (name, v) in ints {
        out.push((name, RedisValue::Integer(v)));
    }
    out
}

/// HOT.INFO's trending fields: `trending-half-life` (seconds, 0 when the
/// board keeps no trending ranking) and, when it does, `trending-landmark`
/// (unix seconds, 0 before the first counted view) and `trending-articles`
/// (`tr_len`, the articles in the trending ZSET).
fn trending_fields(settings: &BoardSettings, tr_len: i64) -> Vec<(&'static str, RedisValue)> {
    let mut out = vec![(
        "trending-half-life",
        RedisValue::Integer(settings.trending_ms / 1000),
    )];
    if settings.trending() {
        let l = settings.landmark.map_or(0, |l| l.div_euclid(1000));
        out.push(("trending-landmark", RedisValue::Integer(l)));
        out.push(("trending-articles", RedisValue::Integer(tr_len)));
    }
    out
}

/// HOT.INFO's and RANK.INFO's last fields: `eviction_unsafe` (1 when the
/// server's `maxmemory-policy` may evict the board's identity keys apart
/// from its data, see docs/eviction.md; else 0) and `maxmemory_policy`.
pub(super) fn eviction_fields() -> [(&'static str, RedisValue); 2] {
    [
        (
            "eviction_unsafe",
            RedisValue::Integer(i64::from(crate::eviction::is_unsafe())),
        ),
        ("maxmemory_policy", bulk(crate::eviction::policy())),
    ]
}

/// Index entries HOT.INFO looks at to count article keys (exact up to this
/// many tracked articles, else scaled from them).
pub const INFO_KEY_SAMPLE: usize = 1000;
/// Articles whose keys HOT.INFO measures with `MEMORY USAGE`.
pub const INFO_MEMORY_SAMPLE: usize = 32;

/// `MEMORY USAGE name` (`SAMPLES 5`, the default) in bytes, 0 when missing.
fn memory_usage(b: &BoardCtx, name: &RedisString) -> i64 {
    use redis_module::{CallOptionsBuilder, CallReply, CallResult};
    // The one internal call left: the key API has no memory measure. It
    // shows up as `memory|usage` in INFO commandstats.
    let opts = CallOptionsBuilder::new().errors_as_replies().build();
    let args: [&[u8]; 2] = [b"USAGE", name.as_slice()];
    let res: CallResult<'static> = b.ctx.call_ext("MEMORY", &opts, &args[..]);
    match res {
        Ok(CallReply::I64(v)) => v.to_i64(),
        _ => 0,
    }
}

/// The dedup shard strings of the board that exist now (the current dedup
/// window and shard count): one per shard, and the old layout's of the
/// generations a view may still read after an upgrade.
fn dedup_shard_names(b: &BoardCtx, settings: &BoardSettings, now: i64) -> Res<Vec<RedisString>> {
    let window = settings.dedup_ms();
    let mut out = Vec::new();
    if window <= 0 {
        return Ok(out);
    }
    let g = dedup::generation(now, window);
    let shards = settings.dedup_shards();
    for s in 0..shards {
        let name = dedup_shard_name(b, settings, s, false)?;
        if b.exists(&name)? {
            out.push(name);
        }
        for gen in [g - 2, g - 1, g, g + 1] {
            let name = dedup_name(b, settings, gen, s, false)?;
            if b.exists(&name)? {
                out.push(name);
            }
        }
    }
    Ok(out)
}

/// `HOT.INFO K` → field/value pairs (a map under RESP3): the settings
/// ([`board_settings`]), `articles` (on the board), `articles_tracked`
/// (entries of the article index), `keys` (board keys + article keys +
/// live dedup shards; article keys counted exactly up to
/// [`INFO_KEY_SAMPLE`] tracked articles, else scaled from the first
/// ones; visitor counters, one per visitor and visitor window that expire
/// by themselves, are not counted), `memory_bytes` (`MEMORY USAGE` of the
/// board keys and dedup shards, plus the article keys of up to
/// [`INFO_MEMORY_SAMPLE`] articles scaled to all tracked ones),
/// `memory_method`, `replication` (`effects`), then [`eviction_fields`]
/// (`eviction_unsafe`, `maxmemory_policy`). A board without keys reports
/// the settings and zeros, except under a policy that may evict board
/// identity keys: then it is refused with the board identity error, since
/// it may be a board evicted whole (docs/eviction.md).
pub(super) fn info_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 2)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    b.load_epoch(false)?;
    let board = b.open_board(false)?;
    let (hb, hb_h) = b.open_derived(Kind::HotBoard, &[], KeyKind::String, false)?;
    let record = board_record(&hb, &hb_h)?;
    check_hot_board(&b, &board, record.is_some())?;
    if record.is_none() {
        // The configs' settings are shown only where no board can have
        // been evicted whole.
        super::identity::refuse_without_identity(&b, super::identity::Family::Hot)?;
    }
    let settings = settings_of(record);
    let (pubidx, _) = b.open_derived(Kind::PubIndex, &[], KeyKind::ZSet, false)?;
    let (ix, ix_h) = b.open_derived(Kind::Index, &[], KeyKind::ZSet, false)?;
    let on_board = board.len() as i64;
    let tracked = ix_h.len() as i64;
    drop((board, hb_h, ix_h));
    let mut keys = 0i64;
    let mut memory = 0i64;
    for name in [b.key, &hb, &pubidx, &ix] {
        if b.exists(name)? {
            keys += 1;
            memory += memory_usage(&b, name);
        }
    }
    // The trending ZSET: missing on a board without trending whatever the
    // slot's state, so no TRYAGAIN for it there.
    let (tr, tr_h) = super::trending::open_maybe(&b, false, settings.trending())?;
    let tr_len = tr_h.len() as i64;
    if tr_h.kind() != KeyKind::Empty {
        keys += 1;
        memory += memory_usage(&b, &tr);
    }
    drop(tr_h);
    let shards = dedup_shard_names(&b, &settings, ffi::now_ms())?;
    keys += shards.len() as i64;
    for s in &shards {
        memory += memory_usage(&b, s);
    }
    // Article keys, from the front of the index.
    let (mut walked, mut art_keys, mut measured, mut art_mem) = (0i64, 0i64, 0i64, 0i64);
    if let Some(iter) = b.walk(
        &ix,
        ffi::Bound::incl(f64::NEG_INFINITY),
        ffi::Bound::incl(f64::INFINITY),
        false,
    ) {
        for (article, _) in iter.take(INFO_KEY_SAMPLE) {
            walked += 1;
            let measure = (measured as usize) < INFO_MEMORY_SAMPLE;
            for (kind, _) in ARTICLE_KEYS {
                let name = b.derived(kind, &[article.as_slice()], false)?;
                if b.exists(&name)? {
                    art_keys += 1;
                    if measure {
                        art_mem += memory_usage(&b, &name);
                    }
                }
            }
            measured += i64::from(measure);
        }
    }
    let scale = |v: i64, n: i64| {
        if n == 0 {
            0
        } else {
            (v as f64 * tracked as f64 / n as f64).round() as i64
        }
    };
    keys += scale(art_keys, walked);
    memory += scale(art_mem, measured);
    let method = if tracked <= measured {
        "summed"
    } else {
        "sampled"
    };
    let mut out = board_settings(&settings);
    out.extend(trending_fields(&settings, tr_len));
    out.extend([
        ("articles", RedisValue::Integer(on_board)),
        ("articles_tracked", RedisValue::Integer(tracked)),
        ("keys", RedisValue::Integer(keys)),
        ("memory_bytes", RedisValue::Integer(memory)),
        ("memory_method", bulk(method)),
        (
            "replication",
            bulk(match config::replicate() {
                config::Replicate::Effects => "effects",
                config::Replicate::Commands => "commands",
            }),
        ),
    ]);
    out.extend(eviction_fields());
    Ok(ffi::reply_map(ctx, out))
}
