//! `HOT.VIEW` glue, built as read → plan → one writer (docs/design.md,
//! "File stays": a steady-state view leaves this file only for the core and
//! its writer):
//! - **read** (this file): name, ACL-check, open and check every key the
//!   view may write ([`read`]), from what [`view::setup`] (the core's first
//!   step) makes of the board record and the arguments, and gather what
//!   they hold into [`view::ViewFacts`];
//! - **plan** ([`view::plan`], pure): everything the view does, or why it
//!   cannot, before anything is written;
//! - **write** ([`write::apply`], the one writer): apply the plan by DMA and
//!   replicate each change as the exact command that makes it (effects
//!   replication), or the view itself (`commands` mode); then board upkeep.
//!
//! The keys and the primitives both steps use (naming, ACL checks,
//! opening, numbers read by the server's rules, each write's replicated
//! effect) live in [`super`] (`mod.rs`).

mod write;

use super::board::{check_hot_board, not_ours, overflow, uv_of, view_error};
use super::identity::{self, Family};
use super::{article_counts_whole, counter_of, published_and_last_view, trailing_at_clock_sparse};
use super::{bulk, Args, BoardCtx, CommandsMode, Res};
use crate::ffi::{self, KeyKind};
use crate::hot::view::{self, DedupFacts, Outcome, Setup, ViewFacts};
use crate::hot::{dedup, hll};
use crate::keys::Kind;
use crate::parse::{IntText, IntsText, ScoreText};
use redis_module::{Context, RedisString, RedisValue};

/// `HOT.VIEW K article visitor [AT t]` → `[pv, uv, score, status]`.
/// Everything it decides comes from the board's settings (see
/// [`super::board::BoardState`], whose checks [`board_state`] makes); in `commands` mode it replicates as
/// `HOT.VIEW K article visitor CLOCK now [AT t] [SPARSE n]`
/// ([`write::replicate_view`]), followed by the effects of its upkeep.
/// Status `removed` (and `[0, 0, "0", "removed"]`, nothing written) for an
/// article taken down by HOT.REM.
pub(super) fn view_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    // The context flags, asked once: `CLOCK c` and `SPARSE n` (four more
    // arguments) only from the master or the AOF.
    let replicated = super::from_master_or_aof(ctx);
    let max = if replicated { 11 } else { 6 };
    let mut args = Args::new(argv, 4, max)?;
    let b = BoardCtx::from_args_replicated(ctx, &mut args, replicated)?;
    let req = view_request(&mut args, replicated)?;
    let (hb, hb_h) = b.load_epoch_and_record(true)?;
    let mode = CommandsMode::enter();
    let board = b.open_board(true)?;
    let setup = board_state(&b, &req, &hb, &hb_h, &board)?;
    let k = ViewKeys::new(&b, &req, &setup, hb)?;
    let h = read(&b, &k, &req, board, hb_h)?;
    // HOT.REM deletes the PV counter with the tombstone it writes, and no
    // view writes one while the tombstone lives: an article with a PV
    // counter has no tombstone, so only a first view looks for one, and
    // only when the article index may list it (see `ViewHandles::unindexed`).
    if h.pv_value.is_none()
        && !h.unindexed
        && super::hot_admin::is_removed(&b, req.article.as_slice())?
    {
        // Taken down by HOT.REM: nothing is written.
        return Ok(RedisValue::Array(vec![
            RedisValue::Integer(0),
            RedisValue::Integer(0),
            bulk("0"),
            bulk(view::REMOVED_STATUS),
        ]));
    }
    let plan = view::plan(&k.setup.formula, &h.facts(&req, &k)).map_err(view_error)?;
    let score = ScoreText::new(plan.score);
    let sus = match plan.outcome {
        Outcome::Suspicious => Some(read_suspicious(&b, &req)?),
        _ => None,
    };
    let written = write::apply(&b, &k, h, &req, &plan, &score, sus);
    drop(mode);
    // Upkeep replicates its own effects in both modes, after the view, and a
    // view from the master or the AOF runs none: what upkeep may do depends
    // on the caller's ACL key patterns, which the replica cannot see.
    if let Some(job) = written? {
        job.run(&b, &k.setup.record.settings.unwrap_or_default(), req.now);
    }
    Ok(ffi::reply_ints_bulks(
        ctx,
        &[plan.pv, plan.uv],
        &[score.as_bytes(), plan.status.as_bytes()],
    ))
}

/// A suspicious view's counter (`sus`), named (ACL-checked), opened
/// and read before anything is written or replicated: a refusal (NOPERM,
/// WRONGTYPE, a value that is not a counter) then writes nothing, and the
/// replicated command, which a replica runs without ACL, is not sent.
/// Returns its name, handle (open for writing) and new value.
fn read_suspicious(b: &BoardCtx, r: &Request) -> Res<(RedisString, ffi::Key, i64)> {
    let article = r.article.as_slice();
    let (name, h) = b.open_derived(Kind::Suspicious, &[article], KeyKind::String, true)?;
    let value = counter_of(&h)?.checked_add(1).ok_or_else(overflow)?;
    Ok((name, h, value))
}

/// The board's record and settings ([`view::setup`], the core's first
/// step), checked as [`super::board::BoardState::read`] checks a write's, in its order: a
/// record hotrank did not write, a ZSET that is not a HOT board's
/// ([`check_hot_board`]; a non-empty board with its record, every view but
/// a board's first, needs no look further), a board a write may not
/// create, a formula out of range.
fn board_state(
    b: &BoardCtx,
    r: &Request,
    hb: &RedisString,
    hb_h: &ffi::Key,
    board: &ffi::Key,
) -> Res<Setup> {
    let stored = (hb_h.kind() != KeyKind::Empty).then(|| hb_h.read());
    let defaults = || crate::config::board_settings(0);
    let s = view::setup(stored, defaults, r.article.as_slice(), r.visitor, r.t)
        .map_err(|()| not_ours(hb, "is not a hotrank board record"))?;
    if !(s.stored && board.kind() == KeyKind::ZSet && board.len() > 0) {
        check_hot_board(b, board, s.stored)?;
    }
    if !s.stored {
        identity::refuse_without_identity(b, Family::Hot)?;
    }
    if !s.formula.is_valid() {
        return Err(view_error(view::ViewError::BadFormula));
    }
    Ok(s)
}

/// The arguments after the board key.
struct Request<'a> {
    article: &'a RedisString,
    visitor: &'a [u8],
    /// The visitor argument itself (replicated without a copy).
    visitor_rs: &'a RedisString,
    /// View time (`AT t`, else the clock) and the server clock, unix ms.
    t: i64,
    now: i64,
    /// `hll-sparse-max-bytes` for this view: the server's, or for a view
    /// from the master or the AOF its `SPARSE n` (default 3000, whatever
    /// this server's config says; a view of the older replicated format,
    /// see [`super::ViewOptions::clock_first`], takes this server's, as
    /// that version did).
    sparse_max: usize,
    /// Whether this server runs the view's board upkeep: yes for a client's
    /// view, no for one from the master or the AOF (its upkeep follows as
    /// effects), except one of the older replicated format, which left
    /// upkeep to the replica or the AOF load.
    run_upkeep: bool,
    /// Whether the view may move the record's `trending-keep`: a client's
    /// view, or a replicated one marked `KEEP` ([`view::ViewFacts::keep_moves`]).
    keep_moves: bool,
}

/// Parses `article visitor [AT t] [CLOCK c] [SPARSE n]` (`replicated`:
/// the view comes from the master or the AOF).
fn view_request<'a>(args: &mut Args<'a>, replicated: bool) -> Res<Request<'a>> {
    let article = args.next_rs()?;
    let visitor_rs = args.next_rs()?;
    let visitor = visitor_rs.as_slice();
    let o = trailing_at_clock_sparse(args, replicated)?;
    let legacy = replicated && !o.clock_first;
    let sparse_max = match o.sparse {
        Some(n) => n,
        None if replicated && !legacy => crate::hot::hll::DEFAULT_SPARSE_MAX_BYTES,
        None => ffi::hll_sparse_max_bytes(),
    };
    Ok(Request {
        article,
        visitor,
        visitor_rs,
        t: o.t,
        now: o.now,
        sparse_max,
        run_upkeep: !replicated || legacy,
        keep_moves: !replicated || o.keep,
    })
}

/// Names of the keys one view may touch, each ACL-checked for writing
/// (the old layout's dedup strings, read only, are named and checked for
/// reading in [`read_old_dedup`]). The publish index is named in [`read`],
/// only when the view may write it.
struct ViewKeys<'s> {
    pv: RedisString,
    uv: RedisString,
    meta: RedisString,
    hb: RedisString,
    /// Visitor-views counter, when the abnormal-traffic check is on.
    vv: Option<RedisString>,
    /// The pair's dedup shard string, when dedup is on.
    dedup: Option<RedisString>,
    /// What the core's first step gave: settings, the pair's shard, windows
    /// (borrowed: a large value, not copied).
    setup: &'s Setup,
}

impl<'s> ViewKeys<'s> {
    /// The names, from the board's settings ([`Setup`]): the dedup and
    /// visitor names carry the board's incarnation id (when not 0) first.
    fn new(b: &BoardCtx, r: &Request, s: &'s Setup, hb: RedisString) -> Res<Self> {
        let id = s.id;
        let dedup = if s.dedup_window > 0 {
            Some(b.dedup_derived(id, &[s.dedup_window_s(), s.dedup_shard], true)?)
        } else {
            None
        };
        let vv = if s.visitor_max > 0 {
            let w = IntsText::new(&[s.visitor_window_s(), s.visitor_index]);
            Some(if id == 0 {
                b.derived(Kind::VisitorViews, &[w.as_bytes(), r.visitor], true)?
            } else {
                let id = IntText::new(id);
                b.derived(
                    Kind::VisitorViews,
                    &[id.as_bytes(), w.as_bytes(), r.visitor],
                    true,
                )?
            })
        } else {
            None
        };
        let article = r.article.as_slice();
        Ok(ViewKeys {
            pv: b.derived(Kind::Pv, &[article], true)?,
            uv: b.derived(Kind::Uv, &[article], true)?,
            meta: b.derived(Kind::Meta, &[article], true)?,
            hb,
            vv,
            dedup,
            setup: s,
        })
    }
}

/// The open handles of one view and what was read through them (the read
/// step); closed before upkeep.
struct ViewHandles {
    board: ffi::Key,
    hb: ffi::Key,
    meta: ffi::Key,
    pv: ffi::Key,
    /// The article's HyperLogLog (header checked).
    uv: ffi::Key,
    /// This view created the HyperLogLog with its retention expiry (one
    /// `SET … PXAT`): the writer leaves its expiry alone.
    uv_created: bool,
    /// The publish index, open only when the view may write it: the article
    /// is new to the board or has no publish time.
    pubidx: Option<(RedisString, ffi::Key)>,
    vv: Option<ffi::Key>,
    /// The article index, open when the article has no PV counter yet (its
    /// first counted or suspicious view may be its first key).
    ix: Option<(RedisString, ffi::Key)>,
    /// The article index exists and does not list the article, and the
    /// board's slot is not moving: the article has no key, so no takedown
    /// tombstone (HOT.REM lists every article it writes one for, and the
    /// index sweep drops an entry only once all of its keys are gone). Its
    /// tombstone is then not looked up. Decided from the data alone, so a
    /// replica or an AOF load decides the same.
    unindexed: bool,
    /// The pair's dedup shard string (written by a counted view).
    dedup: Option<DedupRead>,
    /// The trending ZSET, open on a board that keeps one.
    trending: Option<(RedisString, ffi::Key)>,
    /// Whether the article is on the board before this view.
    on_board: bool,
    record: crate::hot::record::BoardRecord,
    published: Option<i64>,
    /// The meta hash's `lastView` (unix ms of the last counted view).
    last_view: Option<i64>,
    pv_value: Option<i64>,
    visitor_views: Option<i64>,
    duplicate: bool,
    /// The article's PV counter and HyperLogLog are not whole (eviction
    /// took one of them, or its publish time): they read as missing, and a
    /// counted view deletes what is left of them before it writes.
    stale: bool,
}

/// The read step: every key this view may write is opened once and checked
/// (type, and the format of what hotrank stores in it) before anything is
/// written.
fn read(
    b: &BoardCtx,
    k: &ViewKeys,
    r: &Request,
    board: ffi::Key,
    hb: ffi::Key,
) -> Res<ViewHandles> {
    let s = &k.setup;
    let on_board = board.zset_score(r.article).is_some();
    let record = s.record;
    let meta = b.open(&k.meta, KeyKind::Hash, true)?;
    let (published, last_view) = published_and_last_view(&meta)?;
    let pv = b.open(&k.pv, KeyKind::String, true)?;
    let uv = open_hll(b, &k.uv)?;
    // Counters that eviction separated read as forgotten (see `facts`).
    let stale = !article_counts_whole(&pv, &uv, published);
    if stale {
        // A leftover HyperLogLog is read whole before a counted view deletes
        // it (as HOT.PUBLISH does): one hotrank did not write is refused
        // (PFCOUNT's error), never deleted.
        uv_of(&uv)?;
    }
    // A leftover is still checked: a value hotrank did not write is
    // refused, never deleted.
    let pv_value = match pv.kind() {
        KeyKind::Empty => None,
        _ => Some(counter_of(&pv)?).filter(|_| !stale),
    };
    let ix = if pv_value.is_none() {
        Some(b.open_derived(Kind::Index, &[], KeyKind::ZSet, true)?)
    } else {
        None
    };
    let unindexed = !b.moving()
        && ix
            .as_ref()
            .is_some_and(|(_, h)| h.kind() == KeyKind::ZSet && h.zset_score(r.article).is_none());
    let pubidx = if on_board && published.is_some() {
        None
    } else {
        Some(b.open_derived(Kind::PubIndex, &[], KeyKind::ZSet, true)?)
    };
    let vv = match &k.vv {
        Some(name) => Some(b.open(name, KeyKind::String, true)?),
        None => None,
    };
    let visitor_views = vv.as_ref().map(counter_of).transpose()?;
    let (duplicate, dedup) = read_dedup(b, k, r)?;
    // The trending ZSET (`super::trending::open`'s key and check).
    let trending = if s.trending {
        Some(b.open_derived(Kind::Trending, &[], KeyKind::ZSet, true)?)
    } else {
        None
    };
    Ok(ViewHandles {
        board,
        hb,
        meta,
        pv,
        uv,
        uv_created: false,
        pubidx,
        vv,
        ix,
        unindexed,
        dedup,
        trending,
        on_board,
        record,
        published,
        last_view,
        pv_value,
        visitor_views,
        duplicate,
        stale,
    })
}

/// The pair's dedup shard string, open for writing, and what was read.
struct DedupRead {
    key: ffi::Key,
    /// What [`dedup::scan`] found in it; `None` when it is missing.
    found: Option<dedup::Found>,
    /// Strings of the old layout (of the view's generations) exist: a new
    /// string is made with a section that says so.
    upgraded: bool,
}

/// Opens the pair's dedup shard string: whether it (or, while it is missing
/// or says so, the old layout's strings) holds a counted view of the pair
/// within the window. A string that is not sections of 12-byte records is
/// refused, never read misaligned.
fn read_dedup(b: &BoardCtx, k: &ViewKeys, r: &Request) -> Res<(bool, Option<DedupRead>)> {
    let Some(name) = &k.dedup else {
        return Ok((false, None));
    };
    let key = b.open(name, KeyKind::String, true)?;
    let found = match key.kind() {
        KeyKind::Empty => None,
        _ => Some(
            dedup::scan(key.read(), k.setup.fp, r.t, k.setup.dedup_window, r.now).ok_or_else(
                || {
                    not_ours(
                        name,
                        "is not a hotrank dedup shard (sections of 12-byte records)",
                    )
                },
            )?,
        ),
    };
    let mut duplicate = found.is_some_and(|f| f.duplicate);
    let mut upgraded = false;
    if !duplicate && found.is_none_or(|f| f.upgraded) {
        (duplicate, upgraded) = read_old_dedup(b, k, r)?;
    }
    let d = DedupRead {
        key,
        found,
        upgraded,
    };
    Ok((duplicate, Some(d)))
}

/// The old layout's dedup strings of the view's generations (see
/// [`dedup`]; read only, ACL-checked for reading): whether one holds a
/// counted view of the pair within the window, and whether any exists.
fn read_old_dedup(b: &BoardCtx, k: &ViewKeys, r: &Request) -> Res<(bool, bool)> {
    let s = &k.setup;
    let (gens, n) = dedup::generations(r.t, s.dedup_window, r.now);
    let (mut duplicate, mut any) = (false, false);
    for g in &gens[..n] {
        let nums = [s.dedup_window_s(), *g, s.dedup_shard];
        let name = b.dedup_derived(s.id, &nums, false)?;
        let h = b.open(&name, KeyKind::String, false)?;
        if h.kind() == KeyKind::Empty {
            continue;
        }
        if !dedup::well_formed(h.read()) {
            return Err(not_ours(
                &name,
                "is not a hotrank dedup shard (12-byte entries)",
            ));
        }
        any = true;
        duplicate = duplicate || dedup::seen_near(&[(*g, h.read())], s.fp, r.t, s.dedup_window);
    }
    Ok((duplicate, any))
}

/// Opens an article's HyperLogLog for writing: missing, or a string that
/// passes the server's HyperLogLog check ([`hll::validate`]); else the
/// error PFADD would give, before anything is written.
fn open_hll(b: &BoardCtx, name: &RedisString) -> Res<ffi::Key> {
    let h = b.open(name, KeyKind::String, true)?;
    if h.kind() != KeyKind::Empty {
        hll::validate(h.read()).map_err(super::board::hll_error)?;
    }
    Ok(h)
}

impl ViewHandles {
    /// The facts [`view::plan`] decides from.
    fn facts<'a>(&'a self, r: &Request<'a>, k: &ViewKeys) -> ViewFacts<'a> {
        let s = &k.setup;
        ViewFacts {
            t: r.t,
            now: r.now,
            pv: self.pv_value,
            pv_ttl: if self.stale {
                None
            } else {
                self.pv.ttl_at(r.now)
            },
            published: self.published,
            visitor_views: self.visitor_views,
            visitor_max: s.visitor_max,
            visitor_window: s.visitor_window,
            duplicate: self.duplicate,
            dedup: self.dedup.as_ref().map(|d| DedupFacts {
                fp: s.fp,
                window: s.dedup_window,
                existing: d.found.map(|f| (d.key.read(), f)),
                upgraded: d.upgraded,
            }),
            last_view: self.last_view,
            visitor: r.visitor,
            hll: (self.uv.kind() != KeyKind::Empty && !self.stale).then(|| self.uv.read()),
            hll_sparse_max: r.sparse_max,
            retention: s.retention,
            record: Some(self.record),
            keep_moves: r.keep_moves,
        }
    }
}
