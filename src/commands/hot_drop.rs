//! `HOT.DROP K`: removes a HOT board and every key it derived, without
//! blocking the server on a large board.
//!
//! How (issue 22): the command itself deletes the board's own keys (the
//! board ZSET, freed in the background as UNLINK does, the board record,
//! the publish index and the trending ZSET) and moves the board to a new **epoch**: the epoch key
//! `K\0ep` holds `e + 1`, and every HOT key of epoch `e + 1` has another
//! name (`K\0~<e+1>:pv:…`, see [`crate::keys::derived_epoch_into`]). So a
//! new board under the same name starts at once with nothing: no dedup
//! entry, no visitor counter, no counters. The article keys of epoch `e`
//! (PV, UV, meta, suspicious counter, tombstone: 5 keys per tracked
//! article at most) are deleted **in steps** by a timer: every
//! [`STEP_MS`] ms, [`STEP_ARTICLES`] articles of the old article index
//! (which is the to-do list, itself removed by the last step), each step a
//! replicated `DEL` and `ZREM`. Dedup shards and visitor counters of epoch
//! `e` are not walked: they expire by themselves (within
//! 2 × `dedup-seconds` and `visitor-window-seconds` of their last write)
//! and no later board reads them. When the last step is done and no new
//! board was written meanwhile, the epoch key is set to expire after that
//! same guard time ([`guard_ms`], from the dropped board's own settings);
//! then `DBSIZE` is back to what it was before the board existed. A new
//! board written before it expires makes it permanent.
//!
//! The steps are not persisted as such: the old index is. A restart (or a
//! failover) during the steps leaves the rest of the old index; the next
//! HOT.DROP of that name resumes it.

use super::board::{board_record, check_hot_board};
use super::expire_effect;
use super::hot_admin::ARTICLE_KEYS;
use super::{effect, Args, BoardCtx, Res};
use crate::config;
use crate::ffi::{self, Event, KeyKind};
use crate::keys::Kind;
use crate::parse::IntText;
use redis_module::{Context, ContextFlags, RedisString, RedisValue};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Articles whose keys one step deletes (up to 5 keys each): about 1,000
/// key deletions, well under a millisecond.
pub const STEP_ARTICLES: usize = 200;
/// Milliseconds between steps.
pub const STEP_MS: u64 = 1;
/// Milliseconds between checks while a pending drop's slot moves.
pub const WAIT_MS: u64 = 100;
/// Index entries HOT.DROP looks at to count the article keys it removes
/// (exact up to this many tracked articles, else scaled from them).
pub const COUNT_SAMPLE: usize = 1000;

/// A dropped board whose article keys of `epoch` are still being deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Job {
    /// The database the board is in.
    db: i32,
    board: Vec<u8>,
    epoch: i64,
    /// The epoch key's expiry after the last step ([`guard_ms`]).
    guard_ms: i64,
}

/// Pending drops, oldest first (this node's memory only: see the module doc).
static JOBS: Mutex<Vec<Job>> = Mutex::new(Vec::new());
/// Whether a step timer is armed.
static ARMED: AtomicBool = AtomicBool::new(false);

fn jobs() -> std::sync::MutexGuard<'static, Vec<Job>> {
    JOBS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Milliseconds the keys of a dropped board that are not walked may still
/// live: the longest a dedup shard (two dedup windows) or a visitor counter
/// (one visitor window) lives, for the board's own settings `s` or for the
/// server's configs, whichever is longer (the configs alone cover the
/// older epochs a restart left, whose settings are gone).
fn guard_ms(s: Option<&crate::hot::settings::BoardSettings>) -> i64 {
    let configs = (2 * config::DEDUP_SECONDS.value() * 1000)
        .max(config::VISITOR_WINDOW_SECONDS.value() * 1000);
    let own = s.map_or(0, |s| (2 * s.dedup_ms()).max(s.visitor_window_ms()));
    configs.max(own)
}

/// Article keys the index `ix` (open as `ix_h`) lists, counted on up to
/// [`COUNT_SAMPLE`] entries and scaled to all of them.
fn count_article_keys(b: &BoardCtx, ix: &RedisString, tracked: i64) -> Res<i64> {
    let (mut walked, mut found) = (0i64, 0i64);
    if let Some(iter) = b.walk(
        ix,
        ffi::Bound::incl(f64::NEG_INFINITY),
        ffi::Bound::incl(f64::INFINITY),
        false,
    ) {
        for (article, _) in iter.take(COUNT_SAMPLE) {
            walked += 1;
            for (kind, _) in ARTICLE_KEYS {
                found += i64::from(b.exists(&b.derived(kind, &[article.as_slice()], true)?)?);
            }
        }
    }
    Ok(if walked == 0 {
        0
    } else {
        (found as f64 * tracked as f64 / walked as f64).round() as i64
    })
}

/// `HOT.DROP K` → the number of keys removed: the board's own keys, its
/// article index and the article keys (counted exactly up to
/// [`COUNT_SAMPLE`] tracked articles, else estimated from that many),
/// the article keys being deleted in steps after the reply (see the module
/// doc). 0 when the board has no keys. Every key is ACL-checked for
/// writing first (NOPERM: nothing is written).
pub(super) fn drop_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, 2)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    b.load_epoch(true)?;
    let e = b.epoch();
    // The epoch key can be ahead of the board's epoch: a record restored
    // from before an earlier drop makes the board epoch 0 again. The next
    // epoch is past both, and the other epoch's own keys go too.
    let stored = b.stored_epoch(true)?;
    let top = e.max(stored);
    let ep = b.epoch_name(true)?;
    let hb = b.derived(Kind::HotBoard, &[], true)?;
    let pubidx = b.derived(Kind::PubIndex, &[], true)?;
    let ix = b.derived(Kind::Index, &[], true)?;
    let tr = b.derived(Kind::Trending, &[], true)?;
    let mut board_h = b.open_board(true)?;
    let mut hb_h = b.open(&hb, KeyKind::String, true)?;
    let record = board_record(&hb, &hb_h)?;
    check_hot_board(&b, &board_h, record.is_some())?;
    // A board without trending has no trending ZSET (a leftover is still
    // deleted): missing, it says nothing about a slot move.
    let kept = record
        .and_then(|r| r.settings)
        .is_some_and(|s| s.trending());
    let mut tr_h = if kept {
        b.open(&tr, KeyKind::ZSet, true)?
    } else {
        b.open_here(&tr, KeyKind::ZSet, true)?
    };
    let guard = guard_ms(record.and_then(|r| r.settings).as_ref());
    let mut pub_h = b.open(&pubidx, KeyKind::ZSet, true)?;
    let ix_h = b.open(&ix, KeyKind::ZSet, true)?;
    let tracked = ix_h.len() as i64;
    drop(ix_h);
    // Other epochs' indexes that a restart (or a restored record) left
    // behind: resumed.
    let mut older = Vec::new();
    for old in (0..=top).rev().filter(|&x| x != e).take(64) {
        let old_ix = b.derived_at(old, Kind::Index, &[], true)?;
        if b.exists(&old_ix)? {
            older.push(old);
        }
    }
    // The stored epoch's own record and publish index, when the board
    // resolved to another epoch.
    let mut other_own = Vec::new();
    if stored != e {
        for kind in [Kind::HotBoard, Kind::PubIndex, Kind::Trending] {
            let name = b.derived_at(stored, kind, &[], true)?;
            if b.exists(&name)? {
                other_own.push(name);
            }
        }
    }
    let article_keys = count_article_keys(&b, &ix, tracked)?;
    let own = [&board_h, &hb_h, &pub_h, &tr_h]
        .iter()
        .filter(|h| h.kind() != KeyKind::Empty)
        .count() as i64
        + other_own.len() as i64;
    if own == 0 && tracked == 0 && older.is_empty() {
        return Ok(RedisValue::Integer(0));
    }

    // Write: the board's own keys at once, then the new epoch.
    b.delete_open(
        &mut [
            (b.key, &mut board_h),
            (&hb, &mut hb_h),
            (&pubidx, &mut pub_h),
            (&tr, &mut tr_h),
        ],
        true,
    );
    if !other_own.is_empty() {
        b.delete(&other_own, true);
    }
    let next = IntText::new(top + 1);
    let mut ep_h = b.open(&ep, KeyKind::String, true)?;
    ep_h.write(next.as_bytes())?;
    effect(ctx, &ep, Event::String, c"set", c"SET", &[next.as_bytes()]);
    let mut queued = older;
    if tracked > 0 {
        queued.push(e);
    }
    if queued.is_empty() {
        expire_epoch(ctx, &ep, &mut ep_h, guard);
    } else {
        let mut j = jobs();
        for epoch in queued {
            let job = Job {
                db: ffi::selected_db(ctx),
                board: b.bytes().to_vec(),
                epoch,
                guard_ms: guard,
            };
            match j
                .iter_mut()
                .find(|o| (o.db, &o.board, o.epoch) == (job.db, &job.board, job.epoch))
            {
                Some(o) => o.guard_ms = o.guard_ms.max(job.guard_ms),
                None => j.push(job),
            }
        }
        drop(j);
        arm(ctx);
    }
    Ok(RedisValue::Integer(
        own + i64::from(tracked > 0) + article_keys,
    ))
}

/// Sets the epoch key to expire after `guard` ms ([`guard_ms`]), replicated
/// as `PEXPIREAT`.
fn expire_epoch(ctx: &Context, ep: &RedisString, h: &mut ffi::Key, guard: i64) {
    let now = ffi::now_ms();
    expire_effect(ctx, ep, h, now + guard, now);
}

/// Arms the step timer unless it is armed.
fn arm(ctx: &Context) {
    if !ARMED.swap(true, Ordering::SeqCst) {
        ctx.create_timer(Duration::from_millis(STEP_MS), tick, ());
    }
}

/// The timer callback: one step, then re-arms while work is left. A panic
/// is caught (the job is dropped, never the server).
fn tick(ctx: &Context, _: ()) {
    ARMED.store(false, Ordering::SeqCst);
    // Only a master deletes; a replica gets the effects.
    let master = ctx.get_flags().contains(ContextFlags::MASTER);
    let job = jobs().first().cloned();
    let Some(job) = job else {
        return;
    };
    // While the board's slot moves, its old keys may be half here, half on
    // the other node: the steps wait (checked again every WAIT_MS).
    if master && super::migration::board_moving(ctx, &job.board) {
        ARMED.store(true, Ordering::SeqCst);
        ctx.create_timer(Duration::from_millis(WAIT_MS), tick, ());
        return;
    }
    let done = if master {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| step(ctx, &job)))
            .unwrap_or(Ok(true))
            .unwrap_or(true)
    } else {
        true
    };
    if done {
        jobs().retain(|j| j != &job);
    }
    if !jobs().is_empty() {
        arm(ctx);
    }
}

/// Deletes the keys of up to [`STEP_ARTICLES`] articles of the job's index;
/// whether the job is done (its index is gone).
fn step(ctx: &Context, job: &Job) -> Res<bool> {
    if !ffi::select_db(ctx, job.db) {
        return Ok(true);
    }
    let key = RedisString::create_from_slice(ctx.ctx, &job.board);
    let cur = BoardCtx::internal(ctx, &key, 0);
    cur.load_epoch(false)?;
    if cur.epoch() == job.epoch {
        // The board lives at this epoch again (a user restored its record
        // from before the drop): none of its keys is deleted.
        return Ok(true);
    }
    let b = BoardCtx::internal(ctx, &key, job.epoch);
    let ix = b.derived(Kind::Index, &[], true)?;
    let mut batch: Vec<RedisString> = Vec::with_capacity(STEP_ARTICLES);
    if let Some(iter) = ffi::ZsetWalk::open(
        ctx,
        &ix,
        ffi::Bound::incl(f64::NEG_INFINITY),
        ffi::Bound::incl(f64::INFINITY),
        false,
    ) {
        batch.extend(iter.take(STEP_ARTICLES).map(|(a, _)| a));
    }
    if !batch.is_empty() {
        let mut names = Vec::with_capacity(ARTICLE_KEYS.len() * batch.len());
        for a in &batch {
            for (kind, _) in ARTICLE_KEYS {
                names.push(b.derived(kind, &[a.as_slice()], true)?);
            }
        }
        b.delete(&names, false);
        let members: Vec<&[u8]> = batch.iter().map(|a| a.as_slice()).collect();
        let mut ix_h = b.open(&ix, KeyKind::ZSet, true)?;
        b.zrem(&ix, &mut ix_h, &members);
        if ix_h.kind() != KeyKind::Empty {
            return Ok(false);
        }
    }
    // Done: unless a new board was written meanwhile (or another drop of
    // this name is pending), the epoch key may go after the guard time.
    let pending = jobs()
        .iter()
        .any(|j| j.db == job.db && j.board == job.board && j.epoch != job.epoch);
    let live = b.exists(&key)?
        || [Kind::HotBoard, Kind::PubIndex, Kind::Index, Kind::Trending]
            .iter()
            .map(|k| cur.derived(*k, &[], false))
            .collect::<Res<Vec<_>>>()?
            .iter()
            .any(|n| matches!(cur.exists(n), Ok(true)));
    if !pending && !live {
        let ep = cur.epoch_name(true)?;
        let mut h = cur.open(&ep, KeyKind::String, true)?;
        if h.kind() != KeyKind::Empty && h.ttl().is_none() {
            expire_epoch(ctx, &ep, &mut h, job.guard_ms);
        }
    }
    Ok(true)
}
