//! The one writer of HOT.VIEW ([`apply`]): applies the [`Plan`] that
//! [`crate::hot::view::plan`] made from what the read step (`super`) found,
//! by DMA, each change replicated as the exact command that makes it
//! (effects replication) or, in `commands` mode, as the view itself
//! ([`replicate_view`]); then the board upkeep it calls for. It decides
//! nothing the plan has not (dedup entry, `lastView`, expiries, record).

use super::super::board::{refresh_retention, write_record, BoardState};
use super::super::hot::{expired_fronts, upkeep};
use super::super::hot_admin::{index_add, index_append};
use super::super::{create_effect, effect, expire_effect, hset_effect, zadd_effect};
use super::super::{zadd_score_effect, BoardCtx, Res};
use super::super::{LAST_VIEW, PUBLISHED_AT};
use super::{Request, ViewHandles, ViewKeys};
use crate::ffi::{self, Event, KeyKind};
use crate::hot::settings::BoardSettings;
use crate::hot::view::{Bump, Counted, Plan};
use crate::hot::{dedup, Formula};
use crate::parse::{IntText, ScoreText};
use crate::stats;
use redis_module::{Context, RedisString};

/// Applies the view's plan: in `commands` mode the board's settings first
/// when this view stores them ([`BoardState::replicate_settings`]), then
/// the writes, then the view itself ([`replicate_view`]: sent even when a
/// write failed part way, a key that changed type under it, so the replica
/// stops at the same point, since it holds the same data, as effects
/// replication would leave it). Returns the board upkeep a counted view of
/// an article new to the board calls for, to run once the view is written
/// and replicated. `sus`: for a suspicious view, its counter (name, handle
/// open for writing, new value), opened and checked by the caller before
/// anything was written.
pub(super) fn apply(
    b: &BoardCtx,
    k: &ViewKeys,
    mut h: ViewHandles,
    r: &Request,
    plan: &Plan,
    score: &ScoreText,
    sus: Option<(RedisString, ffi::Key, i64)>,
) -> Res<Option<Upkeep>> {
    let s = &k.setup;
    if s.new_settings {
        let st = BoardState {
            record: s.record,
            settings: s.record.settings.unwrap_or_default(),
            new_settings: true,
            created: !s.stored,
        };
        st.replicate_settings(b.ctx, b.key);
    }
    // The settings of a board that had none are stored with the first write,
    // which cannot fail any more (a counted view stores them in its record).
    let store = s.new_settings && plan.counted.as_ref().is_none_or(|c| c.record.is_none());
    let written = b.claim_epoch().and_then(|()| {
        if store {
            write_record(b.ctx, &k.hb, &mut h.hb, &s.record)?;
        }
        match &plan.counted {
            Some(c) => write_counted(b, k, h, r, c, plan, score, &s.formula),
            None => write_other(b.ctx, k, &mut h, r, plan, sus).map(|()| None),
        }
    });
    if super::super::replicating_commands() {
        let keep = plan.counted.as_ref().is_some_and(|c| c.keep_moved);
        replicate_view(b.ctx, b, r, keep);
    }
    written
}

/// Replicates the view as `HOT.VIEW K article visitor CLOCK now [AT t]
/// [SPARSE n] [KEEP]` (`commands` mode): the view time (left out when it is the
/// clock, which is what a view without `AT` takes), the master's clock and,
/// when it is not the default, the master's `hll-sparse-max-bytes`, so a
/// replica or an AOF load writes the same bytes with its own clock and
/// configs; `KEEP` when the view moved the board record's `trending-keep`
/// (`keep`, see [`crate::hot::view::ViewFacts::keep_moves`]).
pub(super) fn replicate_view(ctx: &Context, b: &BoardCtx, req: &Request, keep: bool) {
    let now = IntText::new(req.now);
    // The view time's and `SPARSE n`'s texts only when they are sent.
    let t = (req.t != req.now).then(|| crate::parse::time_text(req.t));
    let default_sparse = req.sparse_max == crate::hot::hll::DEFAULT_SPARSE_MAX_BYTES;
    let sparse = (!default_sparse).then(|| IntText::new(req.sparse_max as i64));
    // CLOCK first: it marks this version's format (see
    // [`super::super::ViewOptions::clock_first`]); then the optional pairs in place.
    // The key, article and visitor go as the strings they are (no copy).
    let mut args: [&[u8]; 7] = [b"CLOCK", now.as_bytes(), b"", b"", b"", b"", b""];
    let mut n = 2;
    if let Some(t) = &t {
        args[n..n + 2].copy_from_slice(&[b"AT", t.as_bytes()]);
        n += 2;
    }
    if let Some(sparse) = &sparse {
        args[n..n + 2].copy_from_slice(&[b"SPARSE", sparse.as_bytes()]);
        n += 2;
    }
    if keep {
        args[n] = b"KEEP";
        n += 1;
    }
    let strs = [b.key, req.article, req.visitor_rs];
    ffi::replicate_mixed(ctx, c"HOT.VIEW", &strs, &args[..n]);
}

/// The writes of a counted view.
#[allow(clippy::too_many_arguments)]
fn write_counted(
    b: &BoardCtx,
    k: &ViewKeys,
    mut h: ViewHandles,
    r: &Request,
    c: &Counted,
    plan: &Plan,
    score: &ScoreText,
    f: &Formula,
) -> Res<Option<Upkeep>> {
    if h.stale {
        // What eviction left of the counters goes first (one DEL), so
        // the view starts them afresh on a replica as here.
        b.delete_open(&mut [(&k.pv, &mut h.pv), (&k.uv, &mut h.uv)], false);
    }
    write_article(b.ctx, k, &mut h, r, plan, c)?;
    write_board(b, k, &mut h, r, c, plan.score, score)?;
    let job = finish_counted(b, k, h, r, c, f)?;
    stats::add(&stats::VIEWS_COUNTED, 1);
    Ok(job)
}

/// The writes of a suspicious view (`sus`: its counter) or a duplicate one.
fn write_other(
    ctx: &Context,
    k: &ViewKeys,
    h: &mut ViewHandles,
    r: &Request,
    plan: &Plan,
    sus: Option<(RedisString, ffi::Key, i64)>,
) -> Res<()> {
    let Some((sus, mut sus_h, value)) = sus else {
        write_visitor(ctx, k, h, plan, r.now)?;
        stats::add(&stats::VIEWS_DUPLICATE, 1);
        return Ok(());
    };
    let ret = k.setup.retention;
    let created = sus_h.kind() == KeyKind::Empty;
    let expire_at = created.then(|| r.now + ret);
    write_visitor(ctx, k, h, plan, r.now)?;
    add_to_index(ctx, h, r)?;
    let bump = Bump { value, expire_at };
    put_counter(ctx, &sus, &mut sus_h, bump, c"incrby", r.now)?;
    refresh_retention(ctx, r.now, ret, &mut [(&sus, &mut sus_h)]);
    stats::add(&stats::VIEWS_SUSPICIOUS, 1);
    Ok(())
}

/// A counted view's article keys: the HyperLogLog (replicated as `PFADD`
/// when a register changed or the key is new, and `PFCOUNT` when the count
/// cached in its header was rewritten), the PV counter (and the visitor's),
/// and, at the first counted view, the publish time in the meta hash.
fn write_article(
    ctx: &Context,
    k: &ViewKeys,
    h: &mut ViewHandles,
    r: &Request,
    plan: &Plan,
    c: &Counted,
) -> Res<()> {
    match (&c.hll.value, c.expire_at) {
        // A new HyperLogLog (missing, or deleted above as stale) is made
        // with its retention expiry in one effect, `SET uv bytes PXAT at`
        // (event `pfadd`, as PFADD's, and `expire`), instead of `PFADD` +
        // `PEXPIREAT`: the exact bytes written here, which are PFADD's
        // (cached count included), whatever a replica's configs.
        (Some(bytes), Some(at)) if h.uv.kind() == KeyKind::Empty => {
            let (e, ev) = (Event::String, c"pfadd");
            create_effect(ctx, &k.uv, &mut h.uv, bytes, at, r.now, e, ev)?;
            h.uv_created = true;
        }
        (value, _) => {
            if let Some(bytes) = value {
                h.uv.write(bytes)?;
            }
            if c.hll.pfadd {
                effect(ctx, &k.uv, Event::String, c"pfadd", c"PFADD", &[r.visitor]);
            }
            if c.hll.pfcount {
                if !super::super::replicating_commands() {
                    ffi::replicate(ctx, c"PFCOUNT", &k.uv, &[]);
                }
                ffi::signal_modified(ctx, &k.uv);
            }
        }
    }
    put_counter(ctx, &k.pv, &mut h.pv, c.pv, c"incrby", r.now)?;
    write_visitor(ctx, k, h, plan, r.now)?;
    // The publish time (first counted view) and the last counted view's
    // time (`lastView`, the latest view time, AT or clock, at minute grain:
    // see [`crate::hot::view::last_view_due`]), in one HSET.
    let pub_s = c.publish.map(IntText::new);
    // The view time's text only when `lastView` is written.
    let t_s = c.last_view.then(|| IntText::new(r.t));
    let mut fields: [(&ffi::Field, &[u8]); 2] = [(&PUBLISHED_AT, &[]), (&LAST_VIEW, &[])];
    let mut n = 0;
    if let Some(p) = &pub_s {
        fields[n] = (&PUBLISHED_AT, p.as_bytes());
        n += 1;
    }
    if let Some(t_s) = &t_s {
        fields[n] = (&LAST_VIEW, t_s.as_bytes());
        n += 1;
    }
    if n > 0 {
        h.meta.hash_set(&fields[..n]);
        hset_effect(ctx, &k.meta, &fields[..n]);
    }
    add_to_index(ctx, h, r)
}

/// Adds the article to the article index when the view opened it (the
/// article had no PV counter): without looking it up again when the read step
/// found the index does not list it.
fn add_to_index(ctx: &Context, h: &mut ViewHandles, r: &Request) -> Res<()> {
    match &mut h.ix {
        Some((name, ix)) if h.unindexed => index_append(ctx, name, ix, r.article),
        Some((name, ix)) => index_add(ctx, name, ix, r.article).map(|_| ()),
        None => Ok(()),
    }
}

/// Adds this view to the visitor's view count (abnormal-traffic check).
fn write_visitor(
    ctx: &Context,
    k: &ViewKeys,
    h: &mut ViewHandles,
    plan: &Plan,
    now: i64,
) -> Res<()> {
    if let (Some(name), Some(vh), Some(bump)) = (&k.vv, &mut h.vv, plan.visitor) {
        put_counter(ctx, name, vh, bump, c"set", now)?;
    }
    Ok(())
}

/// A counted view's board keys: the board's ZADD, the publish index (for an
/// article new to it) and the pair's dedup entry.
fn write_board(
    b: &BoardCtx,
    k: &ViewKeys,
    h: &mut ViewHandles,
    r: &Request,
    c: &Counted,
    score: f64,
    score_text: &ScoreText,
) -> Res<()> {
    let ctx = b.ctx;
    // A board that is gone (DEL, expiry) leaves its publish index behind:
    // the index of a new board starts empty, so the two always agree.
    if let Some((name, p)) = &mut h.pubidx {
        if h.board.kind() == KeyKind::Empty {
            b.delete_open(&mut [(&*name, p)], false);
        }
    }
    h.board.zset_add(score, r.article)?;
    zadd_effect(ctx, b.key, score_text, r.article);
    if let (Some(step), Some((name, th))) = (&c.trend, &mut h.trending) {
        let first = h.record.settings.is_none_or(|s| s.landmark.is_none());
        super::super::trending::apply_step(b, name, th, r.article, step, first)?;
    }
    if let Some((name, p)) = &mut h.pubidx {
        p.zset_add(c.published as f64, r.article)?;
        zadd_score_effect(ctx, name, c.published as f64, r.article);
    }
    if let (Some(name), Some(d), Some(write)) = (&k.dedup, &mut h.dedup, &c.dedup) {
        write_dedup(ctx, name, &mut d.key, write, r.now)?;
    }
    Ok(())
}

/// Writes a counted view's dedup entry as the plan made it
/// ([`dedup::plan_write`]): a new string or a rewrite is one replicated
/// `SET … PXAT`, an entry one `APPEND`, followed by `PEXPIREAT` when it
/// opened a section that ends after the others (the string's expiry is the
/// latest end).
fn write_dedup(
    ctx: &Context,
    name: &RedisString,
    key: &mut ffi::Key,
    write: &dedup::Write,
    now: i64,
) -> Res<()> {
    match write {
        dedup::Write::Create { value, expire_at } | dedup::Write::Rewrite { value, expire_at } => {
            let (at, e) = (*expire_at, Event::String);
            create_effect(ctx, name, key, value, at, now, e, c"set")?;
        }
        dedup::Write::Append {
            bytes,
            len,
            expire_at,
        } => {
            key.append(&bytes[..*len])?;
            effect(
                ctx,
                name,
                Event::String,
                c"append",
                c"APPEND",
                &[&bytes[..*len]],
            );
            if let Some(at) = expire_at {
                expire_effect(ctx, name, key, *at, now);
            }
        }
    }
    Ok(())
}

/// The end of a counted view: retention expiries and the board record.
/// Returns the upkeep to run when the board grew (an article new to it):
/// the board only outgrows max-articles, and retention only leaves dead
/// articles behind to sweep, as fast as articles are added. The view's
/// handles are closed here, since upkeep opens the keys it forgets itself.
fn finish_counted(
    b: &BoardCtx,
    k: &ViewKeys,
    mut h: ViewHandles,
    r: &Request,
    c: &Counted,
    f: &Formula,
) -> Res<Option<Upkeep>> {
    if let Some(at) = c.expire_at {
        let (pv_set, uv_set) = (c.pv.expire_at.is_some(), h.uv_created);
        for (name, key, skip) in [
            (&k.pv, &mut h.pv, pv_set),
            (&k.uv, &mut h.uv, uv_set),
            (&k.meta, &mut h.meta, false),
        ] {
            if !skip && key.kind() != KeyKind::Empty {
                expire_effect(b.ctx, name, key, at, r.now);
            }
        }
    }
    if let Some(new) = &c.record {
        write_record(b.ctx, &k.hb, &mut h.hb, new)?;
    }
    // No upkeep while the board's slot moves: it would open (and forget)
    // other articles' keys, some of which may have left; a later view runs it.
    let upkeep = r.run_upkeep && !b.moving();
    let (false, Some((name, p)), true) = (h.on_board, &h.pubidx, upkeep) else {
        return Ok(None);
    };
    Ok(Some(Upkeep {
        expired: expired_fronts(b, &h.board, p, h.trending.as_ref().map(|(_, k)| k)),
        card: h.board.len() as i64,
        pubidx: name.clone(),
        ix: h.ix.take(),
        formula: *f,
    }))
}

/// Board upkeep after a counted view of an article new to the board
/// ([`upkeep`]: retention fronts, the article index sweep, the trim).
pub(super) struct Upkeep {
    /// The board's expired fronts, read before the view's handles closed.
    expired: Res<Vec<RedisString>>,
    /// The board's size after the view.
    card: i64,
    pubidx: RedisString,
    /// The article index, when the view opened it (for writing, ACL- and
    /// type-checked): the index sweep uses this handle instead of naming,
    /// checking and opening the index again. Upkeep writes the index only
    /// through it.
    ix: Option<(RedisString, ffi::Key)>,
    formula: Formula,
}

impl Upkeep {
    /// Runs the upkeep, replicating its effects (also in `commands` mode).
    /// The view is written: an upkeep failure, even a panic, must not turn
    /// it into an error reply (a retry would count it twice). It is counted
    /// in `upkeep_errors` instead, and what upkeep wrote before it stays,
    /// replicated.
    pub(super) fn run(self, b: &BoardCtx, s: &BoardSettings, now: i64) {
        let Upkeep {
            expired,
            card,
            pubidx,
            ix,
            formula,
        } = self;
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            expired
                .and_then(|e| upkeep(b, &pubidx, ix, &formula, s, now, e, card))
                .is_ok()
        }));
        if !matches!(ok, Ok(true)) {
            stats::add(&stats::UPKEEP_ERRORS, 1);
        }
    }
}

/// Writes a counter's new value `bump.value` through `h`, keeping its
/// expiry, replicated as `INCRBY name 1` (event `incrby`); a counter this
/// write creates with `bump.expire_at` (unix ms) is one replicated
/// `SET name value PXAT ms`, with `event` and `expire`.
fn put_counter(
    ctx: &Context,
    name: &RedisString,
    h: &mut ffi::Key,
    bump: Bump,
    event: &std::ffi::CStr,
    now: i64,
) -> Res<()> {
    let text = IntText::new(bump.value);
    match bump.expire_at {
        None => {
            h.write(text.as_bytes())?;
            effect(ctx, name, Event::String, c"incrby", c"INCRBY", &[b"1"]);
        }
        Some(at) => {
            let (v, e) = (text.as_bytes(), Event::String);
            create_effect(ctx, name, h, v, at, now, e, event)?;
        }
    }
    Ok(())
}
