//! `HOT.VIEW` glue, built as read → plan → write:
//! - **read** ([`read`]): name, ACL-check, open and check every key the view
//!   may write, and gather what they hold into [`crate::hot::view::ViewFacts`];
//! - **plan** ([`crate::hot::view::plan`], pure): what the view does, or why
//!   it cannot, before anything is written;
//! - **write** ([`write`]): apply the plan by DMA and replicate each change as
//!   the exact command that makes it (effects replication), then board upkeep.

use super::article::article_counts_whole;
use super::board::{
    create_effect, dedup_name, dedup_shard_name, expire_effect, hset_effect, not_ours, open_hll,
    overflow, published_and_last_view, refresh_retention, uv_of, view_error, write_record,
    BoardState, LAST_VIEW, PUBLISHED_AT,
};
use super::hot::{expired_fronts, upkeep};
use super::hot_admin::{index_add, index_append};
use super::{bulk, counter_of, effect, trailing_at_clock_sparse, zadd_effect, zadd_score_effect};
use super::{Args, BoardCtx, CommandsMode, Res};
use crate::ffi::{self, Event, KeyKind};
use crate::hot::settings::BoardSettings;
use crate::hot::view::{self, Bump, Counted, Outcome, Plan, ViewFacts};
use crate::hot::{dedup, Formula};
use crate::keys::Kind;
use crate::parse::{IntText, IntsText, ScoreText};
use crate::stats;
use redis_module::{Context, RedisString, RedisValue};

/// `HOT.VIEW K article visitor [AT t]` → `[pv, uv, score, status]`.
/// Everything it decides comes from the board's settings (see
/// [`BoardState`]); in `commands` mode it replicates as
/// `HOT.VIEW K article visitor CLOCK now [AT t] [SPARSE n]`
/// ([`replicate_view`]), followed by the effects of its upkeep. Status
/// `removed` (and `[0, 0, "0", "removed"]`, nothing written) for an
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
    let st = BoardState::read(&b, &hb, &hb_h, &board)?;
    let f = st.settings.formula;
    let k = ViewKeys::new(&b, &req, &st.settings, hb)?;
    let h = read(&b, &k, &req, board, hb_h, &st)?;
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
    let plan = view::plan(&f, &h.facts(&req, &st.settings)).map_err(view_error)?;
    let score = ScoreText::new(plan.score);
    // A suspicious view's counter is named (ACL-checked), opened and read
    // before anything is written or replicated: a refusal (NOPERM,
    // WRONGTYPE, a value that is not a counter) then writes nothing, and
    // the replicated command, which a replica runs without ACL, is not sent.
    let sus = if plan.outcome == Outcome::Suspicious {
        let (name, h) = b.open_derived(
            Kind::Suspicious,
            &[req.article.as_slice()],
            KeyKind::String,
            true,
        )?;
        let value = counter_of(&h)?.checked_add(1).ok_or_else(overflow)?;
        Some((name, h, value))
    } else {
        None
    };
    st.replicate_settings(ctx, b.key);
    let written = write(&b, &k, h, &req, &plan, &score, &st, sus);
    if super::replicating_commands() {
        // Replicated even when the write failed part way (a key that changed
        // type under it): the replica then stops at the same point, since it
        // holds the same data, as effects replication would leave it.
        let keep = plan.counted.as_ref().is_some_and(|c| c.keep_moved);
        replicate_view(ctx, &b, &req, keep);
    }
    drop(mode);
    // Upkeep replicates its own effects in both modes, after the view, and a
    // view from the master or the AOF runs none: what upkeep may do depends
    // on the caller's ACL key patterns, which the replica cannot see.
    if let Some(job) = written? {
        job.run(&b, &k.settings, req.now);
    }
    Ok(ffi::reply_ints_bulks(
        ctx,
        &[plan.pv, plan.uv],
        &[score.as_bytes(), plan.outcome.status().as_bytes()],
    ))
}

/// Replicates the view as `HOT.VIEW K article visitor CLOCK now [AT t]
/// [SPARSE n] [KEEP]` (`commands` mode): the view time (left out when it is the
/// clock, which is what a view without `AT` takes), the master's clock and,
/// when it is not the default, the master's `hll-sparse-max-bytes`, so a
/// replica or an AOF load writes the same bytes with its own clock and
/// configs; `KEEP` when the view moved the board record's `trending-keep`
/// (`keep`, see [`view::ViewFacts::keep_moves`]).
fn replicate_view(ctx: &Context, b: &BoardCtx, req: &Request, keep: bool) {
    let now = IntText::new(req.now);
    // The view time's and `SPARSE n`'s texts only when they are sent.
    let t = (req.t != req.now).then(|| crate::parse::time_text(req.t));
    let default_sparse = req.sparse_max == crate::hot::hll::DEFAULT_SPARSE_MAX_BYTES;
    let sparse = (!default_sparse).then(|| IntText::new(req.sparse_max as i64));
    // CLOCK first: it marks this version's format (see
    // [`super::ViewOptions::clock_first`]); then the optional pairs in place.
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

/// The arguments after the board key.
struct Request<'a> {
    article: &'a RedisString,
    visitor: &'a [u8],
    /// The visitor argument itself (replicated without a copy).
    visitor_rs: &'a RedisString,
    /// View time (`AT t`, else the clock) and the server clock, unix ms.
    t: i64,
    now: i64,
    /// The pair's dedup fingerprint.
    fp: u64,
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
    let fp = dedup::fingerprint(article.as_slice(), visitor);
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
        fp,
        sparse_max,
        run_upkeep: !replicated || legacy,
        keep_moves: !replicated || o.keep,
    })
}

/// Names of the keys one view may touch, each ACL-checked for writing
/// (the old layout's dedup strings, read only, are named and checked for
/// reading in [`read_old_dedup`]). The publish index is named in [`read`],
/// only when the view may write it.
struct ViewKeys {
    pv: RedisString,
    uv: RedisString,
    meta: RedisString,
    hb: RedisString,
    /// Visitor-views counter, when the abnormal-traffic check is on.
    vv: Option<RedisString>,
    /// The pair's dedup shard string, when dedup is on.
    dedup: Option<RedisString>,
    /// The pair's dedup shard (0 when dedup is off).
    dedup_shard: i64,
    /// The dedup window (ms, 0 = off).
    window: i64,
    /// The board's settings.
    settings: BoardSettings,
}

impl ViewKeys {
    /// The names, from the board's settings: the dedup and visitor names
    /// carry the board's incarnation id (when not 0) first.
    fn new(b: &BoardCtx, r: &Request, s: &BoardSettings, hb: RedisString) -> Res<Self> {
        let window = s.dedup_ms();
        let (dedup, dedup_shard) = if window > 0 {
            let shard = i64::from(dedup::shard(r.fp, s.dedup_shards() as u32));
            (Some(dedup_shard_name(b, s, shard, true)?), shard)
        } else {
            (None, 0)
        };
        let vv = if s.visitor_max_views() > 0 {
            let vwin = s.visitor_window_ms();
            let w = IntsText::new(&[vwin / 1000, r.t.div_euclid(vwin)]);
            Some(if s.id == 0 {
                b.derived(Kind::VisitorViews, &[w.as_bytes(), r.visitor], true)?
            } else {
                let id = IntText::new(s.id);
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
            dedup_shard,
            window,
            settings: *s,
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
    /// `SET … PXAT`): [`finish_counted`] leaves its expiry alone.
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
    st: &BoardState,
) -> Res<ViewHandles> {
    let on_board = board.zset_score(r.article).is_some();
    let record = st.record;
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
    let trending = if st.settings.trending() {
        Some(super::trending::open(b, true)?)
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
            dedup::scan(key.read(), r.fp, r.t, k.window, r.now).ok_or_else(|| {
                not_ours(
                    name,
                    "is not a hotrank dedup shard (sections of 12-byte records)",
                )
            })?,
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
    let (gens, n) = dedup::generations(r.t, k.window, r.now);
    let (mut duplicate, mut any) = (false, false);
    for g in &gens[..n] {
        let name = dedup_name(b, &k.settings, *g, k.dedup_shard, false)?;
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
        duplicate = duplicate || dedup::seen_near(&[(*g, h.read())], r.fp, r.t, k.window);
    }
    Ok((duplicate, any))
}

/// Writes a counted view's dedup entry ([`dedup::plan_write`]): a new
/// string or a rewrite is one replicated `SET … PXAT`, an entry one
/// `APPEND`, followed by `PEXPIREAT` when it opened a section that ends
/// after the others (the string's expiry is the latest end).
fn write_dedup(
    ctx: &Context,
    name: &RedisString,
    d: &mut DedupRead,
    r: &Request,
    window: i64,
) -> Res<()> {
    let existing = d.found.map(|f| (d.key.read(), f));
    match dedup::plan_write(existing, r.fp, r.t, window, r.now, d.upgraded) {
        dedup::Write::Create { value, expire_at } | dedup::Write::Rewrite { value, expire_at } => {
            let (at, e) = (expire_at, Event::String);
            create_effect(ctx, name, &mut d.key, &value, at, r.now, e, c"set")?;
        }
        dedup::Write::Append {
            bytes,
            len,
            expire_at,
        } => {
            d.key.append(&bytes[..len])?;
            effect(
                ctx,
                name,
                Event::String,
                c"append",
                c"APPEND",
                &[&bytes[..len]],
            );
            if let Some(at) = expire_at {
                expire_effect(ctx, name, &mut d.key, at, r.now);
            }
        }
    }
    Ok(())
}

impl ViewHandles {
    /// The facts [`view::plan`] decides from.
    fn facts<'a>(&'a self, r: &Request<'a>, s: &BoardSettings) -> ViewFacts<'a> {
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
            visitor_max: s.visitor_max_views(),
            visitor_window: s.visitor_window_ms(),
            duplicate: self.duplicate,
            visitor: r.visitor,
            hll: (self.uv.kind() != KeyKind::Empty && !self.stale).then(|| self.uv.read()),
            hll_sparse_max: r.sparse_max,
            retention: s.retention_ms(),
            record: Some(self.record),
            keep_moves: r.keep_moves,
        }
    }
}

/// The write step: applies `plan` (decided from what [`read`] found).
/// Returns the board upkeep a counted view of an article new to the board
/// calls for, to run once the view is written and replicated. `sus`: for a
/// suspicious view, its counter (name, handle open for writing, new value),
/// opened and checked by the caller before anything was written.
#[allow(clippy::too_many_arguments)]
fn write(
    b: &BoardCtx,
    k: &ViewKeys,
    mut h: ViewHandles,
    r: &Request,
    plan: &Plan,
    score: &ScoreText,
    st: &BoardState,
    sus: Option<(RedisString, ffi::Key, i64)>,
) -> Res<Option<Upkeep>> {
    let ctx = b.ctx;
    b.claim_epoch()?;
    let f = &st.settings.formula;
    let ret = st.settings.retention_ms();
    // The settings of a board that had none are stored with the first write
    // that cannot fail any more (a counted view stores them in its record).
    if let Some(c) = &plan.counted {
        if c.record.is_none() {
            st.store_settings(ctx, &k.hb, &mut h.hb)?;
        }
        if h.stale {
            // What eviction left of the counters goes first (one DEL), so
            // the view starts them afresh on a replica as here.
            b.delete_open(&mut [(&k.pv, &mut h.pv), (&k.uv, &mut h.uv)], false);
        }
        write_article(ctx, k, &mut h, r, plan, c)?;
        write_board(b, k, &mut h, r, c, plan.score, score)?;
        let job = finish_counted(b, k, h, r, c, f)?;
        stats::add(&stats::VIEWS_COUNTED, 1);
        return Ok(job);
    } else if let Some((sus, mut sus_h, value)) = sus {
        st.store_settings(ctx, &k.hb, &mut h.hb)?;
        let created = sus_h.kind() == KeyKind::Empty;
        let expire_at = created.then(|| r.now + ret);
        write_visitor(ctx, k, &mut h, plan, r.now)?;
        add_to_index(ctx, &mut h, r)?;
        let bump = Bump { value, expire_at };
        put_counter(ctx, &sus, &mut sus_h, bump, c"incrby", r.now)?;
        refresh_retention(ctx, r.now, ret, &mut [(&sus, &mut sus_h)]);
        stats::add(&stats::VIEWS_SUSPICIOUS, 1);
    } else {
        st.store_settings(ctx, &k.hb, &mut h.hb)?;
        write_visitor(ctx, k, &mut h, plan, r.now)?;
        stats::add(&stats::VIEWS_DUPLICATE, 1);
    }
    Ok(None)
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
                if !super::replicating_commands() {
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
    // see [`last_view_due`]), in one HSET.
    let pub_s = c.publish.map(IntText::new);
    // The view time's text only when `lastView` is written.
    let t_s = last_view_due(h.last_view, r.t).then(|| IntText::new(r.t));
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
/// article had no PV counter): without looking it up again when [`read`]
/// found the index does not list it.
fn add_to_index(ctx: &Context, h: &mut ViewHandles, r: &Request) -> Res<()> {
    match &mut h.ix {
        Some((name, ix)) if h.unindexed => index_append(ctx, name, ix, r.article),
        Some((name, ix)) => index_add(ctx, name, ix, r.article).map(|_| ()),
        None => Ok(()),
    }
}

/// How much older than a counted view's time the stored `lastView` must be
/// for the view to write it (ms): a busy article writes it at most once a
/// minute, as the board record's `maxViewAt`.
const LAST_VIEW_GRAIN_MS: i64 = 60_000;

/// Whether a counted view at `t` (unix ms) writes `lastView`: when the
/// meta hash has none, or the stored one is more than
/// [`LAST_VIEW_GRAIN_MS`] older than `t`. Decided from `t` and the stored
/// value only, so a replica and an AOF load decide the same.
fn last_view_due(stored: Option<i64>, t: i64) -> bool {
    stored.is_none_or(|l| t.saturating_sub(l) > LAST_VIEW_GRAIN_MS)
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
        super::trending::apply_step(b, name, th, r.article, step, first)?;
    }
    if let Some((name, p)) = &mut h.pubidx {
        p.zset_add(c.published as f64, r.article)?;
        zadd_score_effect(ctx, name, c.published as f64, r.article);
    }
    if let (Some(name), Some(d)) = (&k.dedup, &mut h.dedup) {
        write_dedup(ctx, name, d, r, k.window)?;
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
struct Upkeep {
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
    fn run(self, b: &BoardCtx, s: &BoardSettings, now: i64) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_view_is_written_at_minute_grain() {
        assert!(last_view_due(None, 0));
        assert!(!last_view_due(Some(1_000), 1_000));
        assert!(!last_view_due(Some(1_000), 500));
        assert!(!last_view_due(Some(1_000), 61_000));
        assert!(last_view_due(Some(1_000), 61_001));
        assert!(!last_view_due(Some(i64::MAX), i64::MIN));
        assert!(last_view_due(Some(i64::MIN), i64::MAX));
    }
}
