//! Command handlers: parse arguments, open keys, call the core, reply.
//! Shared glue lives here: the panic guard, the argument cursor, and
//! [`BoardCtx`], the one way a handler names, ACL-checks, opens, writes
//! (each write with its replicated effect and keyspace event) and deletes
//! a board's keys, and reads its ZSETs through the key API ([`zread`]: no
//! internal command, so SLOWLOG and `INFO commandstats` show only what
//! clients sent), and the reads and writes every HOT handler shares: a
//! number read from a key by the server's rules (counters, the meta hash's
//! fields), and each low-level write with its exact replicated effect
//! (`effect`, `create_effect`, `expire_effect`, `hset_effect`, `zadd_effect`).
//! Apart from the panic guard, which runs the handlers, it calls no handler
//! module (only `migration`'s slot check and the name cache): a view reads
//! and writes through it without leaving its own files (docs/design.md,
//! "File stays", counts it as a leaf layer).

pub mod article;
pub mod board;
pub mod boards;
pub mod hot;
pub mod hot_admin;
pub mod hot_drop;
pub mod hot_settings;
pub mod identity;
pub mod migration;
pub mod name_cache;
pub mod rank;
pub mod rank_admin;
pub mod rank_repl;
pub mod register;
pub mod table;
pub mod trending;
pub mod view;
pub mod zread;

use crate::ffi::{Event, KeyKind};
use crate::parse::{parse_i64, IntText, IntsText};
use crate::{ffi, keys, stats};
use redis_module::{Context, RedisError, RedisResult, RedisString, RedisValue};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A command failure: the standard arity error or a full error message
/// (`ERR …`, `WRONGTYPE …`, `NOPERM …`).
pub enum Fail {
    Arity,
    Msg(String),
}

impl From<String> for Fail {
    fn from(s: String) -> Self {
        Fail::Msg(s)
    }
}

impl Fail {
    /// `ERR <message>`: the one place the pure core's typed errors
    /// ([`crate::parse::ArgError`], [`crate::rank::RankError`],
    /// [`keys::BoardKeyError`]), whose `Display` has no prefix, become wire
    /// text.
    pub fn err(e: impl std::fmt::Display) -> Fail {
        Fail::Msg(format!("ERR {e}"))
    }

    /// `ERR syntax error at '<opt>'`: an option the command does not take.
    pub fn syntax_at(opt: &[u8]) -> Fail {
        Fail::Msg(format!("ERR syntax error at '{}'", opt.escape_ascii()))
    }
}

impl From<crate::parse::ArgError> for Fail {
    fn from(e: crate::parse::ArgError) -> Self {
        Fail::err(e)
    }
}

impl From<crate::rank::RankError> for Fail {
    fn from(e: crate::rank::RankError) -> Self {
        Fail::err(e)
    }
}

impl From<keys::BoardKeyError> for Fail {
    fn from(e: keys::BoardKeyError) -> Self {
        Fail::err(e)
    }
}

pub type Res<T> = Result<T, Fail>;

/// Runs a handler so that a panic becomes an error reply instead of aborting
/// redis-server, and counts errors for INFO.
pub fn guard(ctx: &Context, args: &[RedisString], f: table::Handler) -> RedisResult {
    let out = catch_unwind(AssertUnwindSafe(|| f(ctx, args)));
    match out {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(fail)) => Err(match fail {
            Fail::Arity => {
                stats::count_error(stats::ErrorKind::Arity);
                RedisError::WrongArity
            }
            Fail::Msg(m) => {
                stats::count_error(stats::ErrorKind::of(&m));
                RedisError::String(m)
            }
        }),
        Err(_) => {
            stats::count_error(stats::ErrorKind::Other);
            stats::add(&stats::PANICS, 1);
            Err(RedisError::String(
                "ERR hotrank internal error (caught a panic; please report it)".into(),
            ))
        }
    }
}

/// The standard `WRONGTYPE` error.
pub fn wrong_type() -> Fail {
    Fail::Msg("WRONGTYPE Operation against a key holding the wrong kind of value".into())
}

/// Walks the arguments after the command name.
pub struct Args<'a> {
    args: &'a [RedisString],
    pos: usize,
}

impl<'a> Args<'a> {
    /// Checks the count (including the command name) is within `min..=max`.
    pub fn new(args: &'a [RedisString], min: usize, max: usize) -> Res<Self> {
        if args.len() < min || args.len() > max {
            return Err(Fail::Arity);
        }
        Ok(Args { args, pos: 1 })
    }
    pub fn next(&mut self) -> Option<&'a [u8]> {
        let v = self.args.get(self.pos).map(|s| s.as_slice());
        self.pos += 1;
        v
    }
    /// The next argument, without moving past it.
    pub fn peek(&self) -> Option<&'a [u8]> {
        self.args.get(self.pos).map(|s| s.as_slice())
    }
    pub fn next_rs(&mut self) -> Res<&'a RedisString> {
        let v = self.args.get(self.pos).ok_or(Fail::Arity)?;
        self.pos += 1;
        Ok(v)
    }
    /// The optional trailing `AT t` (the last arguments of the command).
    /// Errors: `ERR syntax error: expected AT t`, `ERR syntax error` for
    /// anything after it.
    pub fn trailing_at(&mut self) -> Res<Option<&'a [u8]>> {
        let at = match self.next() {
            None => None,
            Some(o) if o.eq_ignore_ascii_case(b"AT") => Some(self.value_of("AT")?),
            Some(_) => return Err(Fail::Msg("ERR syntax error: expected AT t".into())),
        };
        if self.next().is_some() {
            return Err(Fail::Msg("ERR syntax error".into()));
        }
        Ok(at)
    }

    /// The value after an option name.
    pub fn value_of(&mut self, option: &str) -> Res<&'a [u8]> {
        self.next()
            .ok_or_else(|| Fail::Msg(format!("ERR {option} needs a value")))
    }
}

/// Whether the running command comes from the master's replication stream
/// or the AOF: it is then neither ACL-checked (the master's client has no
/// ACL user on Redis 7.0) nor judged by this server's clock.
pub fn from_master_or_aof(ctx: &Context) -> bool {
    let f = ctx.get_flags();
    f.contains(redis_module::ContextFlags::REPLICATED)
        || f.contains(redis_module::ContextFlags::LOADING)
}

thread_local! {
    /// Set while a write runs in `commands` mode: its effects are not
    /// replicated, the command itself is (see [`CommandsMode`]).
    static COMMANDS_MODE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the running write replicates as one command (`hotrank.replicate
/// commands`) instead of its effects.
pub fn replicating_commands() -> bool {
    COMMANDS_MODE.with(|c| c.get())
}

/// For the duration of one HOT or RANK write: `hotrank.replicate` as it was when
/// the write started (effects are not replicated in `commands` mode).
pub struct CommandsMode;

impl CommandsMode {
    pub fn enter() -> CommandsMode {
        let on = crate::config::replicate() == crate::config::Replicate::Commands;
        COMMANDS_MODE.with(|c| c.set(on));
        CommandsMode
    }
}

impl Drop for CommandsMode {
    fn drop(&mut self) {
        COMMANDS_MODE.with(|c| c.set(false));
    }
}

/// Parses the trailing `[AT t] [CLOCK c]` of a HOT write or RANK.INCR. `CLOCK c` (unix ms,
/// the master's clock when it ran the command) is taken only from the master
/// or the AOF, where it replaces this server's clock. Returns (write time,
/// clock), as [`write_time_at`].
pub fn trailing_at_clock(ctx: &Context, args: &mut Args) -> Res<(i64, i64)> {
    trailing_at_clock_replicated(args, from_master_or_aof(ctx))
}

/// [`trailing_at_clock`] for a handler that already asked
/// [`from_master_or_aof`] (`replicated`).
pub fn trailing_at_clock_replicated(args: &mut Args, replicated: bool) -> Res<(i64, i64)> {
    let o = trailing_options(args, replicated, false)?;
    Ok((o.t, o.now))
}

/// The trailing options of HOT.VIEW ([`trailing_at_clock_sparse`]).
pub struct ViewOptions {
    /// View time and clock, unix ms, as [`trailing_at_clock`] gives them.
    pub t: i64,
    pub now: i64,
    /// `SPARSE n`: the master's `hll-sparse-max-bytes` (bytes, 0 or more).
    pub sparse: Option<usize>,
    /// Whether `CLOCK` came first. This version replicates a view as
    /// `HOT.VIEW K a v CLOCK c [AT t] [SPARSE n]`, CLOCK first, and its
    /// board upkeep as effects after it; the version before sent `AT t CLOCK
    /// c` and left upkeep to the replica or the AOF load. A replicated view
    /// that does not start with CLOCK is of that older format.
    pub clock_first: bool,
    /// `KEEP` (no value, from the master or the AOF): the master's view
    /// moved the board record's `trending-keep`, so the replica or the AOF
    /// load moves it too. A view without it leaves the field as it is,
    /// since it may come from hotrank 0.3.0, which has no such field (see
    /// [`crate::hot::view::ViewFacts::keep_moves`]).
    pub keep: bool,
}

/// [`trailing_at_clock`] for HOT.VIEW, which also takes `SPARSE n` (the
/// master's `hll-sparse-max-bytes`, bytes, 0 or more) from the master or
/// the AOF (`replicated`: [`from_master_or_aof`], asked once by the caller).
pub fn trailing_at_clock_sparse(args: &mut Args, replicated: bool) -> Res<ViewOptions> {
    trailing_options(args, replicated, true)
}

fn trailing_options(args: &mut Args, replicated: bool, sparse_ok: bool) -> Res<ViewOptions> {
    let (mut at, mut clock, mut sparse) = (None, None, None);
    let (mut clock_first, mut keep) = (false, false);
    let mut first = true;
    while let Some(opt) = args.next() {
        match opt.to_ascii_uppercase().as_slice() {
            b"AT" if at.is_none() => at = Some(args.value_of("AT")?),
            b"CLOCK" if clock.is_none() && replicated => {
                clock_first = first;
                clock = Some(crate::parse::parse_i64("CLOCK", args.value_of("CLOCK")?)?)
            }
            b"SPARSE" if sparse.is_none() && replicated && sparse_ok => {
                let n = crate::parse::parse_i64("SPARSE", args.value_of("SPARSE")?)?;
                if n < 0 {
                    return Err(Fail::Msg("ERR SPARSE must be 0 or more".into()));
                }
                sparse = Some(n as usize)
            }
            b"KEEP" if !keep && replicated && sparse_ok => keep = true,
            _ if at.is_some() => return Err(Fail::Msg("ERR syntax error".into())),
            _ => return Err(Fail::Msg("ERR syntax error: expected AT t".into())),
        }
        first = false;
    }
    let (t, now) = write_time_at(at, clock.unwrap_or_else(ffi::now_ms))?;
    Ok(ViewOptions {
        t,
        now,
        sparse,
        clock_first,
        keep,
    })
}

/// Parses the optional `AT t` of a write command against the clock `now`
/// (unix ms): refused when later than `now`. Returns (write time, `now`).
pub fn write_time_at(at: Option<&[u8]>, now: i64) -> Res<(i64, i64)> {
    match at {
        None => Ok((now, now)),
        Some(raw) => {
            let t = crate::parse::parse_time_ms("AT", raw)?;
            if t > now {
                return Err(Fail::Msg(
                    "ERR AT is later than the server clock: writes cannot be in the future".into(),
                ));
            }
            Ok((t, now))
        }
    }
}

/// The board key, checked for the derived-key layout.
pub fn board<'a>(args: &mut Args<'a>) -> Res<&'a RedisString> {
    let k = args.next_rs()?;
    keys::check_board(k.as_slice())?;
    Ok(k)
}

thread_local! {
    /// Where derived key names are built ([`BoardCtx::derived`]): one buffer
    /// per thread, reused by every command, so naming a key allocates
    /// nothing on the Rust heap once it has grown to the names in use.
    static NAME_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Most bytes [`NAME_BUF`] keeps between commands: a longer name (a huge
/// article id) is built, then the buffer gives the memory back.
const NAME_BUF_KEEP: usize = 4096;

/// Runs `f` on the cleared name buffer ([`NAME_BUF`]).
fn with_name_buf<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    NAME_BUF.with(|cell| {
        let mut buf = cell.borrow_mut();
        buf.clear();
        let out = f(&mut buf);
        if buf.capacity() > NAME_BUF_KEEP {
            *buf = Vec::new();
        }
        out
    })
}

/// A board within one command: its key and the caller's ACL user (looked up
/// once per command); derived key names are built in [`NAME_BUF`]. The one
/// way the handlers name and ACL-check derived keys.
pub struct BoardCtx<'a> {
    pub ctx: &'a Context,
    /// The board key (checked by [`board`]).
    pub key: &'a RedisString,
    acl: ffi::AclUser,
    /// The HOT board's epoch ([`keys::Kind::Epoch`]): 0 until
    /// [`BoardCtx::load_epoch`] reads it.
    epoch: std::cell::Cell<i64>,
    /// A client's command on a board whose slot this node is migrating or
    /// importing ([`migration`]): every key it opens must be here, else
    /// `TRYAGAIN`. Never for a command from the master or the AOF.
    moving: bool,
}

impl<'a> BoardCtx<'a> {
    /// Takes the board key from `args` (see [`board`]).
    pub fn from_args(ctx: &'a Context, args: &mut Args<'a>) -> Res<Self> {
        Self::from_args_replicated(ctx, args, from_master_or_aof(ctx))
    }

    /// [`BoardCtx::from_args`] for a handler that already asked
    /// [`from_master_or_aof`] (`replicated`): no ACL user is looked up then.
    pub fn from_args_replicated(
        ctx: &'a Context,
        args: &mut Args<'a>,
        replicated: bool,
    ) -> Res<Self> {
        let key = board(args)?;
        Ok(BoardCtx {
            ctx,
            key,
            acl: if replicated {
                ffi::AclUser::none()
            } else {
                ffi::AclUser::current(ctx)
            },
            epoch: std::cell::Cell::new(0),
            moving: !replicated && migration::board_moving(ctx, key.as_slice()),
        })
    }

    /// The board `key` of epoch `epoch` for the module's own background
    /// work (no ACL user: every check passes).
    pub fn internal(ctx: &'a Context, key: &'a RedisString, epoch: i64) -> Self {
        BoardCtx {
            ctx,
            key,
            acl: ffi::AclUser::none(),
            epoch: std::cell::Cell::new(epoch),
            moving: false,
        }
    }

    /// Whether this is a client's command on a board whose slot moves
    /// ([`migration`]): keys it needs that are not here get `TRYAGAIN`, and
    /// it runs no board upkeep.
    pub fn moving(&self) -> bool {
        self.moving
    }

    /// A derived key of the board at another epoch ([`BoardCtx::derived`]).
    pub fn derived_at(
        &self,
        epoch: i64,
        kind: keys::Kind,
        parts: &[&[u8]],
        write: bool,
    ) -> Res<RedisString> {
        let saved = self.epoch.replace(epoch);
        let out = self.derived(kind, parts, write);
        self.epoch.set(saved);
        out
    }

    /// The name of the board's epoch key (never epoch-named), ACL-checked.
    pub fn epoch_name(&self, write: bool) -> Res<RedisString> {
        self.derived(keys::Kind::Epoch, &[], write)
    }

    /// Reads the HOT board's epoch, which names every HOT derived key from
    /// then on. Every HOT handler calls it first (`write`: the keys are
    /// ACL-checked for writing). The epoch-0 board record `K\0board` is
    /// looked up first: when it exists (whatever its type) the epoch is 0,
    /// else the epoch key's value (0 when missing). HOT.DROP deletes the
    /// epoch-0 record at once and no command writes it while it resolves
    /// to another epoch, so both agree; a record that a user restores from
    /// before a drop makes every command see that board again, at epoch 0.
    ///
    /// While the board's slot moves, both keys are probed as they are here
    /// (either may legitimately be missing: a board never dropped has no
    /// epoch key, a board made again after HOT.DROP no epoch-0 record).
    /// Only when both are missing while the board ZSET is here is the
    /// epoch unknown (one of them has moved): `TRYAGAIN`.
    /// Errors: NOPERM, WRONGTYPE, `TRYAGAIN`, or an epoch key hotrank did
    /// not write.
    pub fn load_epoch(&self, write: bool) -> Res<()> {
        self.load_epoch_record(write).map(|_| ())
    }

    /// [`BoardCtx::load_epoch`], which also hands back the epoch-0 board
    /// record's name (ACL-checked as `write` says) and its handle, open for
    /// reading, when that record exists (the epoch is then 0): a read-only
    /// command reads the record from it instead of naming, checking and
    /// opening the same key again ([`super::board::read_settings_from`]).
    /// Errors: those of [`BoardCtx::load_epoch`].
    pub fn load_epoch_record(&self, write: bool) -> Res<Option<(RedisString, ffi::Key)>> {
        self.epoch.set(0);
        let name0 = self.derived(keys::Kind::HotBoard, &[], write)?;
        let h0 = ffi::Key::open(self.ctx, &name0, false);
        if h0.kind() != ffi::KeyKind::Empty {
            return Ok(Some((name0, h0)));
        }
        drop(h0);
        let e = self.stored_epoch(write)?;
        if e == 0 && self.epoch_moved() {
            return Err(migration::try_again());
        }
        self.epoch.set(e);
        Ok(None)
    }

    /// Whether the board's epoch cannot be known here: its slot moves and
    /// its ZSET is here (so the board exists) while neither its epoch-0
    /// record nor its epoch key is (the caller found both missing): one of
    /// them has moved.
    fn epoch_moved(&self) -> bool {
        self.moving && ffi::Key::open(self.ctx, self.key, false).kind() != ffi::KeyKind::Empty
    }

    /// The value of the board's epoch key (0 when missing, also while the
    /// board's slot moves: a board never dropped has none), whatever the
    /// board record says. Errors: NOPERM, WRONGTYPE, or an epoch key
    /// hotrank did not write.
    pub fn stored_epoch(&self, write: bool) -> Res<i64> {
        let name = self.epoch_name(write)?;
        let h = self.open_here(&name, ffi::KeyKind::String, false)?;
        if h.kind() == ffi::KeyKind::Empty {
            return Ok(0);
        }
        match crate::parse::parse_i64("epoch", h.read()) {
            Ok(e) if e >= 1 => Ok(e),
            _ => Err(Fail::Msg(format!(
                "ERR hotrank key '{}' is not a hotrank board epoch: it holds a value hotrank did not write; delete it",
                name.as_slice().escape_ascii()
            ))),
        }
    }

    /// [`BoardCtx::load_epoch`] and the board record ([`keys::Kind::HotBoard`])
    /// of that epoch, opened (`write`: for writing, all ACL-checked so). As
    /// in `load_epoch`, an existing epoch-0 record means epoch 0, and it is
    /// kept open here: a board that was never dropped, the common case,
    /// costs one key open instead of two (the epoch key is not opened).
    /// While the board's slot moves, `TRYAGAIN` when the record of the
    /// board's epoch is missing here (or the epoch cannot be known, see
    /// [`BoardCtx::load_epoch`]).
    pub fn load_epoch_and_record(&self, write: bool) -> Res<(RedisString, ffi::Key)> {
        self.epoch.set(0);
        let name0 = self.derived(keys::Kind::HotBoard, &[], write)?;
        let h0 = self.open_here(&name0, ffi::KeyKind::String, write)?;
        if h0.kind() == ffi::KeyKind::Empty {
            let e = self.stored_epoch(write)?;
            if e == 0 && self.moving {
                // The epoch-0 record is needed, and missing here.
                return Err(migration::try_again());
            }
            self.epoch.set(e);
        }
        if self.epoch.get() == 0 {
            return Ok((name0, h0));
        }
        drop(h0);
        self.open_derived(keys::Kind::HotBoard, &[], ffi::KeyKind::String, write)
    }

    /// Called by a HOT write before its first write (after
    /// [`BoardCtx::load_epoch`] with `write`): an epoch key that HOT.DROP
    /// left to expire is made permanent, replicated as `PERSIST`, since a
    /// new board now lives under that epoch.
    pub fn claim_epoch(&self) -> Res<()> {
        if self.epoch.get() == 0 {
            return Ok(());
        }
        let name = self.epoch_name(true)?;
        let mut h = self.open(&name, ffi::KeyKind::String, true)?;
        if h.ttl().is_some() {
            h.persist();
            effect(
                self.ctx,
                &name,
                ffi::Event::Generic,
                c"persist",
                c"PERSIST",
                &[],
            );
        }
        Ok(())
    }

    /// Builds the name of a derived key ([`keys::derived_epoch_into`]) in
    /// [`NAME_BUF`], as a new string.
    #[inline]
    fn build_name(&self, kind: keys::Kind, parts: &[&[u8]]) -> RedisString {
        with_name_buf(|buf| {
            keys::derived_epoch_into(buf, self.key.as_slice(), self.epoch.get(), kind, parts);
            // Binary-safe (Context::create_string would refuse the zero byte).
            RedisString::create_from_slice(self.ctx.ctx, buf)
        })
    }

    /// The epoch [`BoardCtx::load_epoch`] read (0 before).
    pub fn epoch(&self) -> i64 {
        self.epoch.get()
    }

    /// A derived key of the board ([`keys::derived`]), ACL-checked for the
    /// calling user (`write`: write access, else read), hit or miss. A name
    /// without parts (the board's own keys: record, epoch key, indexes,
    /// trending ZSET, RANK layout) comes from [`name_cache`] once built.
    /// Error: `NOPERM …`.
    #[inline]
    pub fn derived(&self, kind: keys::Kind, parts: &[&[u8]], write: bool) -> Res<RedisString> {
        let name = if parts.is_empty() {
            name_cache::board_name(self.key.as_slice(), self.epoch.get(), kind, || {
                self.build_name(kind, parts)
            })
        } else {
            self.build_name(kind, parts)
        };
        self.acl.check(&name, write)?;
        Ok(name)
    }

    /// A dedup string's name, `dd:` then the board's incarnation `id` when
    /// it is not 0, then `nums` (`window s, shard` for a shard string,
    /// `window s, generation, shard` for the old layout's), ACL-checked for
    /// writing when `write` ([`BoardCtx::derived`]).
    pub fn dedup_derived(&self, id: i64, nums: &[i64], write: bool) -> Res<RedisString> {
        let part = IntsText::new(nums);
        if id == 0 {
            self.derived(keys::Kind::Dedup, &[part.as_bytes()], write)
        } else {
            let id = IntText::new(id);
            self.derived(keys::Kind::Dedup, &[id.as_bytes(), part.as_bytes()], write)
        }
    }

    /// The board key's bytes.
    #[allow(dead_code)] // kept for the handlers of other branches
    pub fn bytes(&self) -> &[u8] {
        self.key.as_slice()
    }

    /// Opens `name` (the board key, or a name from [`BoardCtx::derived`],
    /// which checked it against the ACL) for reading or writing. Error:
    /// WRONGTYPE unless it is missing or of type `want`; `TRYAGAIN` when it
    /// is missing while the board's slot moves ([`BoardCtx::moving`]). The
    /// one way the handlers open a key.
    #[inline]
    pub fn open(&self, name: &RedisString, want: ffi::KeyKind, write: bool) -> Res<ffi::Key> {
        let k = self.open_here(name, want, write)?;
        if self.moving && k.kind() == ffi::KeyKind::Empty {
            return Err(migration::try_again());
        }
        Ok(k)
    }

    /// [`BoardCtx::open`] without the migration check: for a key that may
    /// legitimately be missing whatever the slot's state (the epoch probes
    /// of [`BoardCtx::load_epoch`]). Error: WRONGTYPE.
    #[inline]
    fn open_here(&self, name: &RedisString, want: ffi::KeyKind, write: bool) -> Res<ffi::Key> {
        let k = ffi::Key::open(self.ctx, name, write);
        match k.kind() {
            ffi::KeyKind::Empty => Ok(k),
            t if t == want => Ok(k),
            _ => Err(wrong_type()),
        }
    }

    /// Walks the board ZSET from the highest score down, without copying
    /// it; `None` when it is missing or not a ZSET (read-only commands only).
    /// Error: `TRYAGAIN` when it is missing while the board's slot moves.
    pub fn board_rev_iter(&self) -> Res<Option<ffi::ZsetWalk>> {
        let all = (
            ffi::Bound::incl(f64::NEG_INFINITY),
            ffi::Bound::incl(f64::INFINITY),
        );
        let walk = ffi::ZsetWalk::open(self.ctx, self.key, all.0, all.1, true);
        if walk.is_none() && self.moving {
            self.open_board(false)?;
        }
        Ok(walk)
    }

    /// Opens the board ZSET ([`BoardCtx::open`]).
    pub fn open_board(&self, write: bool) -> Res<ffi::Key> {
        self.open(self.key, ffi::KeyKind::ZSet, write)
    }

    /// Names, ACL-checks and opens a derived key ([`BoardCtx::derived`],
    /// then [`BoardCtx::open`]).
    #[inline]
    pub fn open_derived(
        &self,
        kind: keys::Kind,
        parts: &[&[u8]],
        want: ffi::KeyKind,
        write: bool,
    ) -> Res<(RedisString, ffi::Key)> {
        let name = self.derived(kind, parts, write)?;
        let h = self.open(&name, want, write)?;
        Ok((name, h))
    }

    /// Whether a key (ACL-checked by the caller) exists, whatever its type
    /// ([`ffi::key_exists`]: no key handle, the key's LRU/LFU untouched).
    /// Error: `TRYAGAIN` when it is missing while the board's slot moves.
    pub fn exists(&self, name: &RedisString) -> Res<bool> {
        let found = ffi::key_exists(self.ctx, name);
        if !found && self.moving {
            return Err(migration::try_again());
        }
        Ok(found)
    }

    /// Sets the missing string key `name` (open for writing as `h`) to
    /// `text` as `SET name text` would: replicated as that command, with its
    /// `set` event and WATCH signal.
    pub fn set_new(&self, name: &RedisString, h: &mut ffi::Key, text: &[u8]) -> Res<()> {
        h.write(text)?;
        effect(self.ctx, name, ffi::Event::String, c"set", c"SET", &[text]);
        Ok(())
    }

    /// Removes `members` from the ZSET `name` (open for writing as `h`) as
    /// `ZREM name members…` would: the number removed. When any was, that
    /// exact command is replicated, with the `zrem` event (and `del` when the
    /// ZSET is left empty, which deletes it) and the WATCH signal.
    pub fn zrem(&self, name: &RedisString, h: &mut ffi::Key, members: &[&[u8]]) -> i64 {
        // No context: freed on drop, not by automatic memory.
        let members: Vec<RedisString> = members
            .iter()
            .map(|m| RedisString::create_from_slice(std::ptr::null_mut(), m))
            .collect();
        let removed: i64 = members.iter().map(|m| i64::from(h.zset_rem(m))).sum();
        if removed > 0 {
            let argv: Vec<&RedisString> = std::iter::once(name).chain(&members).collect();
            if !replicating_commands() {
                ffi::replicate_strings(self.ctx, c"ZREM", &argv);
            }
            ffi::notify(self.ctx, ffi::Event::ZSet, c"zrem", name);
            if h.kind() == ffi::KeyKind::Empty {
                ffi::notify(self.ctx, ffi::Event::Generic, c"del", name);
            }
            ffi::signal_modified(self.ctx, name);
        }
        removed
    }

    /// Deletes the keys `names` (ACL-checked for writing by the caller) as
    /// `DEL names…` (`UNLINK names…` with `unlink`) would: see
    /// [`BoardCtx::delete_open`].
    pub fn delete(&self, names: &[RedisString], unlink: bool) -> i64 {
        let mut handles: Vec<ffi::Key> = names
            .iter()
            .map(|n| ffi::Key::open(self.ctx, n, true))
            .collect();
        let mut keys: Vec<(&RedisString, &mut ffi::Key)> = names.iter().zip(&mut handles).collect();
        self.delete_open(&mut keys, unlink)
    }

    /// Deletes keys through their handles (open for writing; a handle stays
    /// usable, on a missing key) as `DEL names…` (`UNLINK names…` with
    /// `unlink`) would: the number that existed. When any did, that exact
    /// command is replicated, and each deleted key gets its `del` event and
    /// WATCH signal.
    pub fn delete_open(&self, keys: &mut [(&RedisString, &mut ffi::Key)], unlink: bool) -> i64 {
        let mut deleted = 0;
        for (name, h) in keys.iter_mut() {
            if h.delete(unlink) {
                deleted += 1;
                ffi::notify(self.ctx, ffi::Event::Generic, c"del", name);
                ffi::signal_modified(self.ctx, name);
            }
        }
        if deleted > 0 && !replicating_commands() {
            let argv: Vec<&RedisString> = keys.iter().map(|(n, _)| *n).collect();
            let cmd = if unlink { c"UNLINK" } else { c"DEL" };
            ffi::replicate_strings(self.ctx, cmd, &argv);
        }
        deleted
    }
}

/// A bulk string reply value.
pub fn bulk(b: impl Into<Vec<u8>>) -> RedisValue {
    RedisValue::StringBuffer(b.into())
}

/// Publishes the effect of a low-level write to `name`: replicates `cmd
/// name args…` (the exact command with exact values), fires keyspace event
/// `event` of `class`, and signals the key as modified, as the command
/// itself would.
pub fn effect(
    ctx: &Context,
    name: &RedisString,
    class: ffi::Event,
    event: &std::ffi::CStr,
    cmd: &std::ffi::CStr,
    args: &[&[u8]],
) {
    if !replicating_commands() {
        ffi::replicate(ctx, cmd, name, args);
    }
    ffi::notify(ctx, class, event, name);
    ffi::signal_modified(ctx, name);
}

/// Replicates a low-level `ZADD name score member` (`text`: the score as
/// its shortest exact text, [`crate::parse::ScoreText`]), with its `zadd` event and WATCH signal.
pub fn zadd_effect(
    ctx: &Context,
    name: &RedisString,
    text: &crate::parse::ScoreText,
    member: &RedisString,
) {
    if !replicating_commands() {
        ffi::replicate_zadd(ctx, name, text.as_bytes(), member);
    }
    zset_written(ctx, name);
}

/// [`zadd_effect`] of `score`, whose text ([`crate::parse::ScoreText`]) is
/// built only when the effect is replicated (not in `commands` mode).
pub fn zadd_score_effect(ctx: &Context, name: &RedisString, score: f64, member: &RedisString) {
    if !replicating_commands() {
        let text = crate::parse::ScoreText::new(score);
        ffi::replicate_zadd(ctx, name, text.as_bytes(), member);
    }
    zset_written(ctx, name);
}

/// The `zadd` keyspace event and the modified signal of a ZSET write.
fn zset_written(ctx: &Context, name: &RedisString) {
    ffi::notify(ctx, ffi::Event::ZSet, c"zadd", name);
    ffi::signal_modified(ctx, name);
}

/// Parses a counter's value by the server's own rule (`string2ll`, see
/// [`crate::parse::parse_i64`]), so the `INCRBY … 1` that effects replication
/// sends evaluates on a replica or an AOF load to the value written here.
/// Error: INCRBY's own, `ERR value is not an integer or out of range`.
pub fn counter_value(bytes: &[u8]) -> Res<i64> {
    crate::parse::parse_i64("value", bytes)
        .map_err(|_| Fail::Msg("ERR value is not an integer or out of range".into()))
}

/// A counter read through an open handle: 0 when the key is missing.
pub fn counter_of(h: &ffi::Key) -> Res<i64> {
    if h.kind() == ffi::KeyKind::Empty {
        return Ok(0);
    }
    counter_value(h.read())
}

/// An integer field of a hash hotrank writes (`None` when missing), read by
/// the server's rule for a hash field (HINCRBY's); else HINCRBY's error,
/// `ERR hash value is not an integer`.
pub fn int_field(v: Option<RedisString>) -> Res<Option<i64>> {
    match v {
        None => Ok(None),
        Some(s) => parse_i64("field", s.as_slice())
            .map(Some)
            .map_err(|_| Fail::Msg("ERR hash value is not an integer".into())),
    }
}

lazy_static::lazy_static! {
    /// The meta hash's field names, made once ([`ffi::Field`]).
    pub static ref PUBLISHED_AT: ffi::Field = ffi::Field::new(c"publishedAt");
    pub static ref LAST_VIEW: ffi::Field = ffi::Field::new(c"lastView");
}

/// The meta hash's `publishedAt` (HGET), checked to be an integer. The
/// meta hash holds it and `lastView`: PV and UV live in their counter and
/// HyperLogLog.
pub fn published_at(h: &ffi::Key) -> Res<Option<i64>> {
    int_field(h.hash_get(&PUBLISHED_AT))
}

/// [`published_at`] and the meta hash's `lastView` (unix ms of the
/// article's last counted view), checked alike, in one read of the hash.
pub fn published_and_last_view(h: &ffi::Key) -> Res<(Option<i64>, Option<i64>)> {
    let (p, l) = h.hash_get2(&PUBLISHED_AT, &LAST_VIEW);
    Ok((int_field(p)?, int_field(l)?))
}

/// Sets `h` to expire at `at` (unix ms), replicated as `PEXPIREAT name at`.
pub fn expire_effect(ctx: &Context, name: &RedisString, h: &mut ffi::Key, at: i64, now: i64) {
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

/// Writes the string key `name` (open for writing as `h`: missing, or a
/// value replaced whole) as `value`, expiring at `at` (unix ms, the view's clock `now` plus a
/// window or the retention: exactly the time a `PEXPIREAT` would carry),
/// replicated as one `SET name value PXAT at` (Redis 6.2+), with keyspace
/// events `event` (class `class`) and `expire` and the WATCH signal: a new
/// key and its expiry in one effect, where a write and a `PEXPIREAT` took
/// two. Error: the value cannot be written (nothing is replicated).
#[allow(clippy::too_many_arguments)]
pub fn create_effect(
    ctx: &Context,
    name: &RedisString,
    h: &mut ffi::Key,
    value: &[u8],
    at: i64,
    now: i64,
    class: Event,
    event: &std::ffi::CStr,
) -> Res<()> {
    h.write(value)?;
    h.expire_at(at, now);
    let at_s = IntText::new(at);
    let args = [value, b"PXAT", at_s.as_bytes()];
    effect(ctx, name, class, event, c"SET", &args);
    ffi::notify(ctx, Event::Generic, c"expire", name);
    Ok(())
}

/// Replicates a low-level `HSET name f v …` (up to 3 fields).
pub fn hset_effect(ctx: &Context, name: &RedisString, fields: &[(&ffi::Field, &[u8])]) {
    let mut args: [&[u8]; 6] = [&[]; 6];
    let n = 2 * fields.len().min(3);
    for (i, (k, v)) in fields.iter().take(3).enumerate() {
        args[2 * i] = k.name();
        args[2 * i + 1] = v;
    }
    effect(ctx, name, Event::Hash, c"hset", c"HSET", &args[..n]);
}

/// Whether an article's counts are whole: its PV counter, its HyperLogLog
/// and its publish time all exist. Only eviction separates them (see
/// [`facts`]); an article that has none of the counters is whole too
/// (never viewed, or forgotten).
pub fn article_counts_whole(pv: &ffi::Key, uv: &ffi::Key, published: Option<i64>) -> bool {
    let (has_pv, has_uv) = (pv.kind() != KeyKind::Empty, uv.kind() != KeyKind::Empty);
    (has_pv && has_uv && published.is_some()) || (!has_pv && !has_uv)
}
