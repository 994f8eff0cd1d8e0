//! Shared glue of the HOT board commands (PUBLISH, VIEW, CREATE, ALTER,
//! TOP, STATS): the board record and settings, the checks of what a derived
//! key holds, and the writes with their replicated effects. Handlers live in
//! `hot.rs`, `view.rs` and `hot_settings.rs`.

use super::identity::{self, Family};
use super::{effect, expire_effect, BoardCtx, Fail, Res};
use crate::config;
use crate::ffi::{self, Event, KeyKind};
use crate::hot::record::BoardRecord;
use crate::hot::settings::BoardSettings;
use crate::hot::{hll, view, Formula};
use crate::keys::Kind;
use crate::parse::IntText;
use redis_module::{Context, RedisString};

/// An error for a derived key whose value hotrank did not write: it is
/// refused, never misread or overwritten.
pub(super) fn not_ours(name: &RedisString, what: &str) -> Fail {
    Fail::Msg(format!(
        "ERR hotrank key '{}' {what}: it holds a value hotrank did not write; delete it",
        name.as_slice().escape_ascii()
    ))
}

/// The UV of an open HyperLogLog handle: the count cached in its header,
/// or, when that is stale, the estimate computed on a copy (a read writes
/// nothing); 0 when missing. Error as PFCOUNT gives for a bad value.
pub(super) fn uv_of(h: &ffi::Key) -> Res<i64> {
    if h.kind() == KeyKind::Empty {
        return Ok(0);
    }
    let n = hll::estimate_of(h.read()).map_err(hll_error)?;
    Ok(i64::try_from(n).unwrap_or(i64::MAX))
}

/// The board record (derived string `board`, [`BoardRecord`]), checked;
/// `None` when the board has none. `h` is open with its type checked
/// (string).
pub(super) fn board_record(name: &RedisString, h: &ffi::Key) -> Res<Option<BoardRecord>> {
    if h.kind() == KeyKind::Empty {
        return Ok(None);
    }
    match BoardRecord::parse_cached(h.read()) {
        Some(r) => Ok(Some(r)),
        None => Err(not_ours(name, "is not a hotrank board record")),
    }
}

/// How a HOT board is recognised: its ZSET is missing or empty, or it has a
/// board record (the derived `board` string that every counted view writes),
/// and it is not a RANK board (no RANK layout). A non-empty ZSET without a
/// record gets the one error of a board whose identity is gone
/// ([`identity::lost`]: its record was evicted, or HOT never made it), or,
/// when it has a RANK layout, the error of a RANK board: its members are
/// never rescored or trimmed away.
pub(super) fn check_hot_board(b: &BoardCtx, board: &ffi::Key, has_record: bool) -> Res<()> {
    if board.kind() == KeyKind::ZSet && board.len() > 0 {
        if has_record {
            return Ok(());
        }
        if identity::has_rank_layout(b) {
            return Err(identity::other_family(b, Family::Rank));
        }
        return Err(identity::lost(b, Family::Hot));
    }
    if b.exists(&b.derived(Kind::Layout, &[], false)?)? {
        return Err(identity::other_family(b, Family::Rank));
    }
    Ok(())
}

/// The error PFADD/PFCOUNT would give for a value that is not a valid
/// HyperLogLog (`WRONGTYPE …`) or a corrupt one (`INVALIDOBJ …`).
pub(super) fn hll_error(e: hll::HllError) -> Fail {
    Fail::Msg(e.message().into())
}

/// Records an upper bound of the instants stored scores were computed for
/// (rounded up to a minute) and the formula they used, so HOT.TOP knows when
/// stored scores are upper bounds of scores at its query time. `hb_h` is
/// the board record, open for writing and type-checked. Written (by DMA,
/// replicated as `SET … KEEPTTL`) only when it changes: at most once a
/// minute on a busy board.
pub(super) fn note_board_write(
    ctx: &Context,
    hb: &RedisString,
    hb_h: &mut ffi::Key,
    record: &BoardRecord,
    f: &Formula,
    at_ms: i64,
) -> Res<bool> {
    match BoardRecord::after_write(Some(record), f.fingerprint(), at_ms) {
        Some(new) => write_record(ctx, hb, hb_h, &new).map(|()| true),
        None => Ok(false),
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
    hb_h.write(&text)?;
    let args = [&text[..], b"KEEPTTL"];
    effect(ctx, hb, Event::String, c"set", c"SET", &args);
    Ok(())
}

/// Sets the keys to expire the board's retention `ret` (ms) from now when
/// the first one's expiry is missing or more than a tenth of the retention
/// (at most a day) older than that, so a busy article refreshes it at most
/// daily. Each is replicated as PEXPIREAT with the exact time; missing keys
/// are skipped.
pub(super) fn refresh_retention(
    ctx: &Context,
    now: i64,
    ret: i64,
    keys: &mut [(&RedisString, &mut ffi::Key)],
) {
    // Judged at `now` (the master's clock on a replica or an AOF load), not
    // at this server's: the same decision wherever the command runs.
    if !view::retention_fresh(keys.first().and_then(|(_, h)| h.ttl_at(now)), ret) {
        for (name, h) in keys.iter_mut() {
            if h.kind() != KeyKind::Empty {
                expire_effect(ctx, name, h, now + ret, now);
            }
        }
    }
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

/// The board record and settings a write works with.
pub(super) struct BoardState {
    /// The record the write starts from: the stored one, with settings
    /// attached when it had none, or a new board's ([`BoardRecord::new_board`]).
    pub record: BoardRecord,
    /// The board's settings (`record.settings`).
    pub settings: BoardSettings,
    /// The stored record lacks these settings: the write stores them.
    pub new_settings: bool,
    /// The board had no record and no scores: the write creates it.
    pub created: bool,
}

impl BoardState {
    /// Reads the board record through `hb_h` (open, type-checked), checks the
    /// board ZSET `board` is a HOT board's, and gives the settings: the
    /// record's, else the configs' at this moment (id 0).
    pub fn read(
        b: &BoardCtx,
        hb: &RedisString,
        hb_h: &ffi::Key,
        board: &ffi::Key,
    ) -> Res<BoardState> {
        let stored = board_record(hb, hb_h)?;
        check_hot_board(b, board, stored.is_some())?;
        // A board created by a write keeps today's key names (id 0): two
        // servers given the same writes hold the same names. HOT.CREATE
        // gives a board an incarnation id.
        // Under a policy that may evict records, a board without one
        // is not made on the way: it may be a board evicted whole.
        if stored.is_none() {
            identity::refuse_without_identity(b, Family::Hot)?;
        }
        let created = stored.is_none();
        let (record, new_settings) =
            BoardRecord::with_settings(stored, || config::board_settings(0));
        let settings = record.settings.unwrap_or_default();
        if !settings.formula.is_valid() {
            return Err(view_error(view::ViewError::BadFormula));
        }
        Ok(BoardState {
            record,
            settings,
            new_settings,
            created,
        })
    }

    /// Stores the settings when the record lacked them (and the write did not
    /// store a record of its own).
    pub fn store_settings(&self, ctx: &Context, hb: &RedisString, hb_h: &mut ffi::Key) -> Res<()> {
        if self.new_settings {
            write_record(ctx, hb, hb_h, &self.record)?;
        }
        Ok(())
    }

    /// In `commands` mode, the command that gives a replica these settings
    /// first, when this write stores them: `HOT.CREATE K ID id …` for a new
    /// board, `HOT.ALTER K …` (every setting) for a board from before
    /// settings. Replicated before the write's own command.
    pub fn replicate_settings(&self, ctx: &Context, key: &RedisString) {
        if !self.new_settings || !super::replicating_commands() {
            return;
        }
        let id = IntText::new(self.settings.id);
        let pairs = self.settings.pairs();
        let mut args: Vec<&[u8]> = Vec::with_capacity(2 + 2 * pairs.len());
        if self.created {
            args.extend([&b"ID"[..], id.as_bytes()]);
        }
        for (n, v) in &pairs {
            args.extend([n.as_bytes(), v.as_bytes()]);
        }
        let cmd = if self.created {
            c"HOT.CREATE"
        } else {
            c"HOT.ALTER"
        };
        ffi::replicate(ctx, cmd, key, &args);
    }
}

/// The settings of a board for a read (HOT.TOP, HOT.STATS): the record's,
/// else the configs' (nothing is written). `None` when the record is missing.
pub(super) fn read_settings(b: &BoardCtx) -> Res<(Option<BoardRecord>, BoardSettings)> {
    let (hb, h) = b.open_derived(Kind::HotBoard, &[], KeyKind::String, false)?;
    let rec = board_record(&hb, &h)?;
    Ok((rec, settings_of(rec)))
}

/// [`read_settings`], reading the record from the epoch-0 record's name and
/// handle when [`BoardCtx::load_epoch_record`] found it (the same key
/// `read_settings` would name, check and open: the epoch is then 0), else
/// as `read_settings`. Errors: WRONGTYPE, a record hotrank did not write.
pub(super) fn read_settings_from(
    b: &BoardCtx,
    rec0: Option<(RedisString, ffi::Key)>,
) -> Res<(Option<BoardRecord>, BoardSettings)> {
    let Some((hb, h)) = rec0 else {
        return read_settings(b);
    };
    if h.kind() != KeyKind::String {
        return Err(super::wrong_type());
    }
    let rec = board_record(&hb, &h)?;
    Ok((rec, settings_of(rec)))
}

/// The settings a board record holds, else the configs' of this moment
/// (what a first write would store).
pub(super) fn settings_of(rec: Option<BoardRecord>) -> BoardSettings {
    rec.and_then(|r| r.settings)
        .unwrap_or_else(|| config::board_settings(0))
}

/// The name of dedup shard `shard` for a board with settings `s`:
/// `dd:<window s>:<shard>`, after the board's incarnation id when it is not
/// 0 (the string of [`crate::hot::dedup`]'s sections). ACL-checked for
/// writing when `write`.
pub(super) fn dedup_shard_name(
    b: &BoardCtx,
    s: &BoardSettings,
    shard: i64,
    write: bool,
) -> Res<RedisString> {
    b.dedup_derived(s.id, &[s.dedup_ms() / 1000, shard], write)
}

/// The name of the old layout's dedup shard `shard` of generation `gen`
/// (up to 0.2.0, read for one window after an upgrade) for a board with
/// settings `s`: `dd:<window s>:<gen>:<shard>`, after the board's
/// incarnation id when it is not 0. ACL-checked for writing when `write`.
pub(super) fn dedup_name(
    b: &BoardCtx,
    s: &BoardSettings,
    gen: i64,
    shard: i64,
    write: bool,
) -> Res<RedisString> {
    b.dedup_derived(s.id, &[s.dedup_ms() / 1000, gen, shard], write)
}
