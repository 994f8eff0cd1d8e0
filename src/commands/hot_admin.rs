//! `HOT.*` administration: REM (takedown), and the article index
//! (derived ZSET `ix`, [`Kind::Index`]) that the lifecycle commands walk.
//!
//! The article index maps every article the board holds a key for (PV,
//! UV, meta, suspicious counter, takedown tombstone) to a sequence number,
//! given when the article is first seen (1, then the highest + 1). It is
//! what HOT.EXPORT's cursor follows (a cursor is a sequence number, so an
//! article keeps its place whatever happens to the board's scores), what
//! HOT.DROP deletes article keys from, and what HOT.INFO counts.

use super::hot::{board_record, check_hot_board, retention_ms};
use super::{effect, zadd_effect, Args, BoardCtx, Res};
use crate::ffi::{self, Event, KeyKind};
use crate::keys::Kind;
use crate::parse::{IntText, ScoreText};
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
    let seq = h.zset_last_score().map_or(1.0, |s| s.floor() + 1.0);
    h.zset_add(seq, article)?;
    zadd_effect(ctx, name, &ScoreText::new(seq), article);
    Ok(true)
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
    let now = ffi::now_ms();
    let at = now + retention_ms();
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
    Ok(RedisValue::Integer(removed))
}

/// Index upkeep, run by HOT.VIEW's board upkeep (when an article is added to
/// the board): looks at up to 2 entries at the front of the article index
/// (lowest sequence number). One whose article keys are all gone (retention
/// expired them) is removed; a live one is moved to the back (the highest
/// number + 1), so the front keeps turning over and every stale entry is
/// reached. Moving an entry never makes HOT.EXPORT miss it: a cursor past
/// its old place returns it again at its new one.
pub(super) fn sweep_index(b: &BoardCtx) -> Res<()> {
    let (ix, mut h) = b.open_derived(Kind::Index, &[], KeyKind::ZSet, true)?;
    for _ in 0..2 {
        let Some(a) = h.zset_first() else {
            break;
        };
        let mut alive = false;
        for (kind, _) in ARTICLE_KEYS {
            alive = alive || b.exists(&b.derived(kind, &[a.as_slice()], false)?);
        }
        if !alive {
            b.zrem(&ix, &mut h, &[a.as_slice()]);
        } else if h.len() > 1 {
            let seq = h.zset_last_score().map_or(1.0, |s| s.floor() + 1.0);
            h.zset_add(seq, &a)?;
            zadd_effect(b.ctx, &ix, &ScoreText::new(seq), &a);
        }
    }
    Ok(())
}
