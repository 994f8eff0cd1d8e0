//! `HOT.CREATE` and `HOT.ALTER`: a HOT board's settings (see
//! [`crate::hot::settings`]), stored in its record.

use super::article::facts;
use super::board::{board_record, check_hot_board, write_record};
use super::{zadd_effect, Args, BoardCtx, CommandsMode, Fail, Res};
use crate::hot::record::{BoardRecord, Scored};
use crate::hot::settings::{BoardSettings, SettingError};
use crate::keys::Kind;
use crate::parse::{parse_i64, IntText, ScoreText};
use crate::{config, ffi};
use ffi::KeyKind;
use redis_module::{Context, RedisString, RedisValue};

/// Most arguments HOT.CREATE / HOT.ALTER take (with the command name).
const MAX_ARGS: usize = 64;

/// Setting pairs, `ID` and `CLOCK`.
type Pairs<'a> = (Vec<&'a [u8]>, Option<i64>, Option<i64>);

/// The `name value` pairs after the board key, and `ID`/`CLOCK` (taken only
/// from the master or the AOF, as [`super::trailing_at_clock`]).
fn setting_pairs<'a>(ctx: &Context, args: &mut Args<'a>, take_id: bool) -> Res<Pairs<'a>> {
    let replicated = super::from_master_or_aof(ctx);
    let (mut pairs, mut id, mut clock) = (Vec::new(), None, None);
    while let Some(name) = args.next() {
        let upper = name.to_ascii_uppercase();
        let special =
            replicated && (upper == b"CLOCK".as_slice() || (take_id && upper == b"ID".as_slice()));
        if !special && !crate::hot::settings::is_name(name) {
            let n = name.escape_ascii().to_string();
            return Err(setting_error(SettingError::Unknown(n)));
        }
        let value = args
            .next()
            .ok_or_else(|| Fail::Msg(format!("ERR {} needs a value", upper.escape_ascii())))?;
        match upper.as_slice() {
            b"ID" if replicated && take_id => id = Some(parse_i64("ID", value)?),
            b"CLOCK" if replicated => clock = Some(parse_i64("CLOCK", value)?),
            _ => pairs.extend([name, value]),
        }
    }
    Ok((pairs, id, clock))
}

/// The settings a HOT.CREATE, HOT.REPAIR or HOT.ALTER (of a board without
/// stored settings) starts from, before the given `pairs`: the `hotrank.*`
/// configs of this moment, with incarnation id `id`. From the master or the
/// AOF, a command without `TRENDING-HALF-LIFE` was written by a module
/// that predates trending (a replicated one names every setting the module
/// knew), so its half-life is 0, not this server's
/// `hotrank.trending-half-life`: a replica or an AOF load reaches the
/// master's bytes whatever its configs.
fn base_settings(ctx: &Context, id: i64, pairs: &[&[u8]]) -> BoardSettings {
    let mut s = config::board_settings(id);
    let name = crate::hot::settings::TRENDING_HALF_LIFE.name.as_bytes();
    let names_trending = pairs
        .chunks(2)
        .any(|p| p.first().is_some_and(|n| n.eq_ignore_ascii_case(name)));
    if super::from_master_or_aof(ctx) && !names_trending {
        s.trending_ms = 0;
    }
    s
}

fn setting_error(e: SettingError) -> Fail {
    Fail::err(e)
}

/// Replicates `cmd K [ID id] <every setting> [CLOCK now]` in `commands` mode.
fn replicate_settings(
    ctx: &Context,
    cmd: &std::ffi::CStr,
    key: &RedisString,
    s: &BoardSettings,
    id: bool,
    clock: Option<i64>,
) {
    if !super::replicating_commands() {
        return;
    }
    let (id_t, clock_t) = (IntText::new(s.id), IntText::new(clock.unwrap_or(0)));
    let pairs = s.pairs();
    let mut args: Vec<&[u8]> = Vec::with_capacity(4 + 2 * pairs.len());
    if id {
        args.extend([&b"ID"[..], id_t.as_bytes()]);
    }
    for (n, v) in &pairs {
        args.extend([n.as_bytes(), v.as_bytes()]);
    }
    if clock.is_some() {
        args.extend([&b"CLOCK"[..], clock_t.as_bytes()]);
    }
    ffi::replicate(ctx, cmd, key, &args);
}

/// `HOT.CREATE K [ALPHA a] [BETA b] [BASE h] [GAMMA g] [DEDUP-SECONDS s]
/// [DEDUP-SHARDS n] [VISITOR-MAX-VIEWS n] [VISITOR-WINDOW-SECONDS s]
/// [MAX-ARTICLES n] [RETENTION-SECONDS s]` → `OK`. Settings not given take
/// the `hotrank.*` configs of this moment. Errors: `ERR board already
/// exists` (it has a record or articles), a setting's range error; nothing
/// is written on error.
pub(super) fn create_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, MAX_ARGS)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    b.load_epoch(true)?;
    let (pairs, id, _) = setting_pairs(ctx, &mut args, true)?;
    let mut s = base_settings(ctx, id.unwrap_or_else(ffi::now_ms), &pairs);
    s.apply(&pairs).map_err(setting_error)?;
    let _mode = CommandsMode::enter();
    let hb = b.derived(Kind::HotBoard, &[], true)?;
    let board = b.open_board(true)?;
    let mut hb_h = b.open(&hb, KeyKind::String, true)?;
    let record = board_record(&hb, &hb_h)?;
    if record.is_some() || board.kind() != KeyKind::Empty {
        return Err(Fail::Msg("ERR board already exists".into()));
    }
    check_hot_board(&b, &board, false)?;
    b.claim_epoch()?;
    write_record(ctx, &hb, &mut hb_h, &BoardRecord::new_board(s))?;
    replicate_settings(ctx, c"HOT.CREATE", b.key, &s, true, None);
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// `HOT.ALTER K setting value [setting value …]` → `OK`: changes the given
/// settings of an existing board, all or none. When the board has settings
/// and its stored scores were not all computed by the new formula, every
/// article on the board is rescored at the server clock, so HOT.TOP keeps
/// pruning by stored scores (it is exact either way). Errors: `ERR no
/// such HOT board` (no record and no articles), a setting's range error.
pub(super) fn alter_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 4, MAX_ARGS)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    b.load_epoch(true)?;
    let (pairs, _, clock) = setting_pairs(ctx, &mut args, false)?;
    if pairs.is_empty() {
        return Err(Fail::Arity);
    }
    let now = clock.unwrap_or_else(ffi::now_ms);
    let _mode = CommandsMode::enter();
    let hb = b.derived(Kind::HotBoard, &[], true)?;
    let mut board = b.open_board(true)?;
    let mut hb_h = b.open(&hb, KeyKind::String, true)?;
    let stored = board_record(&hb, &hb_h)?;
    check_hot_board(&b, &board, stored.is_some())?;
    let Some(old) = stored.or_else(|| {
        (board.kind() != KeyKind::Empty).then(|| BoardRecord::new_board(BoardSettings::default()))
    }) else {
        return Err(Fail::Msg(
            "ERR no such HOT board; create it with HOT.CREATE".into(),
        ));
    };
    let had = old.settings;
    let mut s = had.unwrap_or_else(|| base_settings(ctx, 0, &pairs));
    s.apply(&pairs).map_err(setting_error)?;
    // Trending: a half-life changes only while the ranking is empty, and
    // a change (to 0, or from 0) starts it afresh.
    let old_ms = had.map_or(0, |h| h.trending_ms);
    let (tr, mut tr_h) = super::trending::open_maybe(&b, true, old_ms > 0 || s.trending())?;
    let before = had.unwrap_or_default();
    if let Some(msg) = before.trending_change_error(&s, tr_h.len() > 0) {
        return Err(Fail::Msg(format!("ERR {msg}")));
    }
    let mut new = BoardRecord {
        settings: Some(s),
        ..old
    };
    // Rescore: every score first (nothing is written if one fails).
    let mut rescored = Vec::new();
    if had.is_some() && old.scored != Scored::By(s.formula.fingerprint()) && board.len() > 0 {
        rescored = rescore_all(&b, &s, now)?;
        new.max_view_at = old.max_view_at.max(view_bound(&s, now));
        new.scored = Scored::By(s.formula.fingerprint());
    }
    b.claim_epoch()?;
    // A half-life set anew (even to the same value, `… 0 … 6h` in one
    // command) resets the landmark: the old sums go with it.
    let reset = old_ms != s.trending_ms || (before.landmark.is_some() && s.landmark.is_none());
    if reset && tr_h.kind() != KeyKind::Empty {
        b.delete_open(&mut [(&tr, &mut tr_h)], false);
    }
    write_scores(&b, &mut board, &rescored)?;
    if stored != Some(new) {
        write_record(ctx, &hb, &mut hb_h, &new)?;
    }
    replicate_settings(ctx, c"HOT.ALTER", b.key, &s, false, Some(now));
    Ok(RedisValue::SimpleStringStatic("OK"))
}

/// Every article on the board with its score at `now` (unix ms) under the
/// settings `s`: the score of its counters and publish time, 0 for an
/// article without counted views (or whose counters were lost, see
/// [`facts`]). Reads only: nothing is written.
fn rescore_all(b: &BoardCtx, s: &BoardSettings, now: i64) -> Res<Vec<(RedisString, f64)>> {
    let mut rescored = Vec::new();
    for (m, _) in b.zrange(b.key, 0, -1)? {
        let score = match facts(b, m.as_slice())? {
            Some(a) if a.pv > 0 => {
                let p = a.published.unwrap_or(i64::MIN / 2);
                s.formula.score(a.pv, a.uv, p, now)
            }
            _ => 0.0,
        };
        rescored.push((m, score));
    }
    Ok(rescored)
}

/// The board record's `maxViewAt` bound for scores computed at `now`.
fn view_bound(s: &BoardSettings, now: i64) -> i64 {
    BoardRecord::after_write(None, s.formula.fingerprint(), now).map_or(now, |r| r.max_view_at)
}

/// Writes the scores of [`rescore_all`] to the board (open for writing),
/// each replicated as its exact ZADD.
fn write_scores(b: &BoardCtx, board: &mut ffi::Key, scores: &[(RedisString, f64)]) -> Res<()> {
    for (m, score) in scores {
        board.zset_add(*score, m)?;
        zadd_effect(b.ctx, b.key, &ScoreText::new(*score), m);
    }
    Ok(())
}

/// `HOT.REPAIR K [ALPHA a] … [RETENTION-SECONDS s]` → `OK`: rebuilds the
/// board record of a board whose record is gone while its ZSET remains
/// (evicted under an `allkeys-*` policy, see docs/eviction.md), with the
/// settings given (the others take the `hotrank.*` configs of this moment,
/// as HOT.CREATE), a new incarnation id (so its dedup history starts
/// afresh) and every article on the board rescored at the server clock, so
/// HOT.TOP prunes again. In `commands` mode replicated as `HOT.REPAIR K ID
/// id <every setting> CLOCK now`. Errors: `ERR board is not damaged …` (it
/// has its record: use HOT.ALTER), `ERR no board data to repair …` (no
/// ZSET: use HOT.CREATE), a RANK board, WRONGTYPE, a setting's range
/// error; nothing is written on error.
pub(super) fn repair_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, MAX_ARGS)?;
    let b = BoardCtx::from_args(ctx, &mut args)?;
    b.load_epoch(true)?;
    let (pairs, id, clock) = setting_pairs(ctx, &mut args, true)?;
    let now = clock.unwrap_or_else(ffi::now_ms);
    let mut s = base_settings(ctx, id.unwrap_or(now), &pairs);
    s.apply(&pairs).map_err(setting_error)?;
    let _mode = CommandsMode::enter();
    let hb = b.derived(Kind::HotBoard, &[], true)?;
    let mut board = b.open_board(true)?;
    let mut hb_h = b.open(&hb, KeyKind::String, true)?;
    if board_record(&hb, &hb_h)?.is_some() {
        return Err(Fail::Msg(
            "ERR board is not damaged: it has its HOT board record; change its settings with HOT.ALTER".into(),
        ));
    }
    if board.kind() == KeyKind::Empty {
        return Err(Fail::Msg(
            "ERR no board data to repair: the board ZSET is missing; create the board with HOT.CREATE".into(),
        ));
    }
    if super::identity::has_rank_layout(&b) {
        return Err(super::identity::other_family(
            &b,
            super::identity::Family::Rank,
        ));
    }
    if !s.formula.is_valid() {
        return Err(super::board::view_error(
            crate::hot::view::ViewError::BadFormula,
        ));
    }
    let rescored = rescore_all(&b, &s, now)?;
    // The trending sums are meaningless without the landmark the lost
    // record held: the ranking starts afresh.
    let (tr, mut tr_h) = super::trending::open(&b, true)?;
    let record = BoardRecord {
        max_view_at: view_bound(&s, now),
        scored: Scored::By(s.formula.fingerprint()),
        settings: Some(s),
    };
    b.claim_epoch()?;
    if tr_h.kind() != KeyKind::Empty {
        b.delete_open(&mut [(&tr, &mut tr_h)], false);
    }
    write_scores(&b, &mut board, &rescored)?;
    write_record(ctx, &hb, &mut hb_h, &record)?;
    replicate_settings(ctx, c"HOT.REPAIR", b.key, &s, true, Some(now));
    Ok(RedisValue::SimpleStringStatic("OK"))
}
