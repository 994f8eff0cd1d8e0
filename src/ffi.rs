//! The one place with `unsafe` and raw Redis module API calls, behind small
//! safe wrappers. Every `unsafe` block says why it is sound.

use redis_module::{raw, AclPermissions, Context, RedisString};
use std::alloc::{GlobalAlloc, Layout, System};

/// Global allocator: Redis's allocator (so `used_memory` and `maxmemory`
/// account for the module) once redis-server has loaded the module, the
/// system allocator before that — in unit tests, examples and benches, which
/// link the library without a server.
///
/// Redis fills `RedisModule_Alloc` in `RedisModule_OnLoad` before any Rust
/// code of the module allocates (the `redis_module!` macro takes care of
/// that), and never clears it, so a block is always freed by the allocator
/// that made it.
///
/// For memory checking only: with `HOTRANK_SYSTEM_ALLOC=1` in the server's
/// environment, the module uses the system allocator even when loaded, so
/// valgrind sees every Rust allocation of the module (Redis's jemalloc hides
/// them). Decided once, at the first allocation, with `getenv`, which does
/// not allocate.
pub struct ModuleAlloc;

/// 0: undecided, 1: Redis's allocator when loaded, 2: always the system allocator.
static ALLOC_MODE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

fn use_redis_alloc() -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    let mut mode = ALLOC_MODE.load(Relaxed);
    if mode == 0 {
        // SAFETY: getenv reads the environment without allocating; the name
        // is a NUL-terminated literal.
        let forced = unsafe { !libc::getenv(c"HOTRANK_SYSTEM_ALLOC".as_ptr()).is_null() };
        mode = if forced { 2 } else { 1 };
        ALLOC_MODE.store(mode, Relaxed);
    }
    // SAFETY: the API table is written once at load time and only read afterwards.
    mode == 1 && unsafe { raw::RedisModule_Alloc }.is_some()
}

// SAFETY: both branches delegate to a correct allocator; the choice cannot
// change between an allocation and its free (see above).
unsafe impl GlobalAlloc for ModuleAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if use_redis_alloc() {
            redis_module::alloc::RedisAlloc.alloc(layout)
        } else {
            System.alloc(layout)
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if use_redis_alloc() {
            redis_module::alloc::RedisAlloc.dealloc(ptr, layout)
        } else {
            System.dealloc(ptr, layout)
        }
    }
}

/// The server clock, milliseconds since the unix epoch (`RedisModule_Milliseconds`).
pub fn now_ms() -> i64 {
    // SAFETY: the API table is written once at load time, before any command
    // runs, and only read afterwards; the call has no preconditions.
    match unsafe { raw::RedisModule_Milliseconds } {
        Some(f) => unsafe { f() },
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0),
    }
}

/// One field of the `INFO hotrank` section.
pub enum InfoValue {
    Int(i64),
    Text(String),
}

/// What fills the `INFO hotrank` section: (field, value) pairs, in order.
pub type InfoFields = fn() -> Vec<(String, InfoValue)>;

/// The provider [`register_info`] installed (set once per process).
static INFO_FIELDS: std::sync::OnceLock<InfoFields> = std::sync::OnceLock::new();

extern "C" fn info_callback(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: i32) {
    raw::add_info_section(ctx, None);
    let Some(fields) = INFO_FIELDS.get() else {
        return;
    };
    for (name, value) in fields() {
        match value {
            InfoValue::Int(v) => raw::add_info_field_long_long(ctx, &name, v),
            InfoValue::Text(v) => raw::add_info_field_str(ctx, &name, &v),
        };
    }
}

/// Registers the `INFO hotrank` section (replacing the crate's empty
/// default), filled by `fields` each time INFO asks.
pub fn register_info(ctx: &Context, fields: InfoFields) {
    let _ = INFO_FIELDS.set(fields);
    raw::register_info_function(ctx.ctx, Some(info_callback));
}

/// Replies an array of `ints` (integers) then `bulks` (bulk strings),
/// written directly (no `RedisValue` vectors built and walked). Returns
/// `NoReply` for the handler to pass on, since the reply is already written.
pub fn reply_ints_bulks(ctx: &Context, ints: &[i64], bulks: &[&[u8]]) -> redis_module::RedisValue {
    // SAFETY: the API table is written once at load time and only read
    // afterwards; ctx is the live context of the running command, the array
    // length matches the replies written after it, and each buffer is live
    // for its call (the server copies it).
    unsafe {
        raw::RedisModule_ReplyWithArray.expect("ReplyWithArray exists on every server")(
            ctx.ctx,
            (ints.len() + bulks.len()) as libc::c_long,
        );
        let int = raw::RedisModule_ReplyWithLongLong.expect("ReplyWithLongLong exists");
        for &n in ints {
            int(ctx.ctx, n);
        }
        let buf = raw::RedisModule_ReplyWithStringBuffer.expect("ReplyWithStringBuffer exists");
        for b in bulks {
            buf(ctx.ctx, b.as_ptr().cast::<libc::c_char>(), b.len());
        }
    }
    redis_module::RedisValue::NoReply
}

/// Replies an array of `items`' strings, each followed by its score's
/// text (`score_text`) when `withscores`, written directly: each string
/// is replied as it is (no copy, no `RedisValue` vector built and walked).
/// Returns `NoReply` for the handler to pass on, since the reply is
/// already written.
pub fn reply_strings_scores(
    ctx: &Context,
    items: &[(RedisString, f64)],
    withscores: bool,
    score_text: impl Fn(f64) -> String,
) -> redis_module::RedisValue {
    let per = if withscores { 2 } else { 1 };
    // SAFETY: the API table is written once at load time and only read
    // afterwards; ctx is the live context of the running command, the array
    // length matches the replies written after it, each string is a live
    // RedisModuleString owned by `items`, and each buffer is live for its
    // call (the server copies both).
    unsafe {
        raw::RedisModule_ReplyWithArray.expect("ReplyWithArray exists on every server")(
            ctx.ctx,
            (per * items.len()) as libc::c_long,
        );
        let string = raw::RedisModule_ReplyWithString.expect("ReplyWithString exists");
        let buf = raw::RedisModule_ReplyWithStringBuffer.expect("ReplyWithStringBuffer exists");
        for (s, score) in items {
            string(ctx.ctx, s.inner);
            if withscores {
                let t = score_text(*score);
                buf(ctx.ctx, t.as_ptr().cast::<libc::c_char>(), t.len());
            }
        }
    }
    redis_module::RedisValue::NoReply
}

/// Replies a map with fields in the given order (a RESP3 map, a flat array
/// of field/value pairs under RESP2). Returns `NoReply` for the handler to
/// pass on, since the reply is already written.
pub fn reply_map(
    ctx: &Context,
    pairs: Vec<(&'static str, redis_module::RedisValue)>,
) -> redis_module::RedisValue {
    // SAFETY: ctx is the live context of the running command and the map
    // length matches the number of key/value replies written below.
    unsafe {
        if let Some(map) = raw::RedisModule_ReplyWithMap {
            map(ctx.ctx, pairs.len() as libc::c_long);
        } else {
            raw::RedisModule_ReplyWithArray.expect("ReplyWithArray exists on every server")(
                ctx.ctx,
                2 * pairs.len() as libc::c_long,
            );
        }
    }
    for (k, v) in pairs {
        ctx.reply(Ok(redis_module::RedisValue::SimpleStringStatic(k)));
        ctx.reply(Ok(v));
    }
    redis_module::RedisValue::NoReply
}

/// The calling user, fetched once per command, for checking many derived
/// keys against its ACL. `None` inside when no user is attached (AOF
/// loading, replication stream): then every check passes, as in Redis.
pub struct AclUser {
    user: *mut raw::RedisModuleUser,
}

impl AclUser {
    /// No user: every check passes. For commands from the master or the
    /// AOF, which must never look up a user (none exists on Redis 7.0).
    pub fn none() -> AclUser {
        AclUser {
            user: std::ptr::null_mut(),
        }
    }

    /// The user of the running command.
    pub fn current(ctx: &Context) -> AclUser {
        // SAFETY: the API table is written once at load time and only read afterwards.
        let api = unsafe {
            (
                raw::RedisModule_GetCurrentUserName,
                raw::RedisModule_GetModuleUserFromUserName,
            )
        };
        let (Some(get_name), Some(get_user)) = api else {
            return AclUser {
                user: std::ptr::null_mut(),
            };
        };
        // SAFETY: ctx is the live context of the running command.
        let name = unsafe { get_name(ctx.ctx) };
        if name.is_null() {
            return AclUser {
                user: std::ptr::null_mut(),
            };
        }
        // Owns the name so it is freed on every path.
        let name = RedisString::from_redis_module_string(ctx.ctx, name);
        // SAFETY: name is a valid string; a null result means "no such user".
        AclUser {
            user: unsafe { get_user(name.inner) },
        }
    }

    /// Checks read (`write` false) or write access to `key`. Error: a
    /// `NOPERM` message naming the key.
    pub fn check(&self, key: &RedisString, write: bool) -> Result<(), String> {
        // SAFETY: the API table is written once at load time and only read afterwards.
        let Some(check) = (unsafe { raw::RedisModule_ACLCheckKeyPermissions }) else {
            return Ok(());
        };
        if self.user.is_null() {
            return Ok(());
        }
        let perm = if write {
            AclPermissions::INSERT | AclPermissions::UPDATE | AclPermissions::DELETE
        } else {
            AclPermissions::ACCESS
        };
        // SAFETY: user is a live module user (freed only in Drop); key is a live string.
        if unsafe { check(self.user, key.inner, perm.bits()) } == raw::REDISMODULE_OK as i32 {
            Ok(())
        } else {
            Err(format!(
                "NOPERM this user has no permissions to access the '{}' key",
                key.as_slice().escape_ascii()
            ))
        }
    }
}

impl Drop for AclUser {
    fn drop(&mut self) {
        // SAFETY: user came from GetModuleUserFromUserName and is freed once.
        if let (false, Some(free)) = (self.user.is_null(), unsafe {
            raw::RedisModule_FreeModuleUser
        }) {
            unsafe { free(self.user) };
        }
    }
}

/// A raw key handle opened for reading, closed on drop.
struct RawKey {
    ctx: *mut raw::RedisModuleCtx,
    key: *mut raw::RedisModuleKey,
}

impl RawKey {
    fn open(ctx: &Context, name: &RedisString) -> Option<RawKey> {
        Self::open_mode(ctx, name, raw::REDISMODULE_READ as i32)
    }

    fn open_mode(ctx: &Context, name: &RedisString, mode: i32) -> Option<RawKey> {
        // SAFETY: ctx and name are live; OpenKey with READ never creates the
        // key, with WRITE it returns a handle that creates it on first write.
        let key = unsafe {
            raw::RedisModule_OpenKey.expect("OpenKey exists on every server")(
                ctx.ctx, name.inner, mode,
            )
        };
        (!key.is_null()).then_some(RawKey {
            ctx: ctx.ctx,
            key: key.cast(),
        })
    }
}

impl Drop for RawKey {
    fn drop(&mut self) {
        // SAFETY: key was opened by OpenKey and is closed once.
        unsafe { raw::RedisModule_CloseKey.expect("CloseKey exists on every server")(self.key) };
    }
}

// ---------------------------------------------------------------------------
// ZSET reads through the key API (no `RedisModule_Call`): walks over a score
// range that can count and skip members without fetching them, so that
// SLOWLOG and `INFO commandstats` show only what clients sent.
// ---------------------------------------------------------------------------

/// One end of a score range: the score and whether it is excluded (`(s`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    /// The score (may be infinite).
    pub score: f64,
    /// Whether members with exactly this score are left out.
    pub excluded: bool,
}

impl Bound {
    /// `s`, included.
    pub fn incl(score: f64) -> Bound {
        Bound {
            score,
            excluded: false,
        }
    }

    /// `(s`, excluded.
    pub fn excl(score: f64) -> Bound {
        Bound {
            score,
            excluded: true,
        }
    }
}

/// A walk over the members of a ZSET whose score lies between two bounds,
/// in the ZSET's order (score, then member bytes) from the lowest
/// (`RedisModule_ZsetFirstInScoreRange` / `ZsetRangeNext`) or, reversed,
/// from the highest (`ZsetLastInScoreRange` / `ZsetRangePrev`). Each step is
/// one skiplist or listpack hop; [`ZsetWalk::pass`] and [`ZsetWalk::remaining`]
/// fetch no member. The key must not be modified while the walk lives
/// (read paths only).
pub struct ZsetWalk {
    key: RawKey,
    /// Whether the walk stands on a member.
    more: bool,
    rev: bool,
}

impl ZsetWalk {
    /// Starts a walk over the members of ZSET `name` with a score in
    /// `[min, max]` (each bound maybe excluded), from the lowest (`rev`
    /// false) or the highest. `None` when the key is missing or not a ZSET;
    /// an empty range gives an empty walk.
    pub fn open(
        ctx: &Context,
        name: &RedisString,
        min: Bound,
        max: Bound,
        rev: bool,
    ) -> Option<ZsetWalk> {
        let key = RawKey::open(ctx, name)?;
        Some(Self::start(key, min, max, rev))
    }

    /// [`ZsetWalk::open`] on a handle already open (consumed: the walk
    /// closes it), saving a second open of the key. `None` when the key
    /// is missing or not a ZSET.
    pub fn over(key: Key, min: Bound, max: Bound, rev: bool) -> Option<ZsetWalk> {
        if key.raw.key.is_null() || key.kind() != KeyKind::ZSet {
            return None;
        }
        Some(Self::start(key.raw, min, max, rev))
    }

    /// Starts the range on an open key (see [`ZsetWalk::open`]).
    fn start(key: RawKey, min: Bound, max: Bound, rev: bool) -> ZsetWalk {
        // SAFETY: the API table is written once at load time and only read
        // afterwards; key is an open handle. The call fails (ERR) on a
        // non-ZSET or an empty range, reported as no members.
        let ok = unsafe {
            let start = if rev {
                raw::RedisModule_ZsetLastInScoreRange
            } else {
                raw::RedisModule_ZsetFirstInScoreRange
            };
            start.expect("zset range API exists on every server")(
                key.key,
                min.score,
                max.score,
                i32::from(min.excluded),
                i32::from(max.excluded),
            )
        };
        // An empty range still starts (OK) with the end already reached.
        // SAFETY: as above; EndReached only reads the handle's range state.
        let more = ok == raw::REDISMODULE_OK as i32
            && unsafe { raw::RedisModule_ZsetRangeEndReached.expect("zset range API")(key.key) }
                == 0;
        ZsetWalk { key, more, rev }
    }

    /// Moves past the current member; whether the walk still stands on one.
    fn step(&mut self) -> bool {
        // SAFETY: a range is active on this open key (`more`); the calls
        // return 0 once the end of the range is passed.
        self.more = unsafe {
            if self.rev {
                raw::RedisModule_ZsetRangePrev.expect("zset range API")(self.key.key)
            } else {
                raw::RedisModule_ZsetRangeNext.expect("zset range API")(self.key.key)
            }
        } != 0;
        self.more
    }

    /// Steps over up to `n` members without fetching them; how many it
    /// stepped over (fewer at the end of the range).
    pub fn pass(&mut self, n: usize) -> usize {
        let mut done = 0;
        while done < n && self.more {
            done += 1;
            self.step();
        }
        done
    }

    /// The number of members left in the walk, without fetching them.
    pub fn remaining(mut self) -> usize {
        self.pass(usize::MAX)
    }
}

impl Iterator for ZsetWalk {
    type Item = (RedisString, f64);

    /// The current member (a new string, freed on drop) and its score,
    /// then one step on.
    fn next(&mut self) -> Option<Self::Item> {
        if !self.more {
            return None;
        }
        let mut score = 0.0;
        // SAFETY: a range is active on this open key; the returned string is
        // new and owned by the RedisString, which frees it on drop.
        let ele = unsafe {
            raw::RedisModule_ZsetRangeCurrentElement.expect("zset range API")(
                self.key.key,
                &mut score,
            )
        };
        if ele.is_null() {
            self.more = false;
            return None;
        }
        let member = RedisString::from_redis_module_string(self.key.ctx, ele);
        self.step();
        Some((member, score))
    }
}

impl Drop for ZsetWalk {
    fn drop(&mut self) {
        // SAFETY: stopping a range on an open key is always allowed (no-op if none).
        unsafe { raw::RedisModule_ZsetRangeStop.expect("zset range API")(self.key.key) };
    }
}

// ---------------------------------------------------------------------------
// Keyspace walk with the module scan API (HOT.BOARDS, RANK.BOARDS), resumable
// at a client's SCAN-like cursor. No `RedisModule_Call("SCAN")`: an internal
// call would show in INFO commandstats and SLOWLOG.
// ---------------------------------------------------------------------------

/// The layout of `RedisModuleScanCursor`, which the servers keep private
/// (`module.c`) and the module API cannot set: `RedisModule_ScanCursorCreate`
/// starts at 0 and `RedisModule_ScanCursorRestart` goes back to 0, so a walk
/// cannot be resumed at a cursor a client sends back without writing the
/// field. The assumption, checked for both servers the project supports:
///
/// - Redis 7.0 (`src/module.c`): `typedef struct { unsigned long cursor;
///   int done; } RedisModuleScanCursor;` — `unsigned long` is 64-bit on
///   the LP64 targets Redis runs on (the assertion below refuses to build
///   elsewhere);
/// - Valkey (`src/module.c`, 8.0 source: `unsigned long long cursor; int
///   done;`), and the valkey-server 9.1.2 binary disassembled:
///   `VM_ScanCursorCreate` allocates 16 bytes and zeroes a 64-bit word at
///   offset 0 and an `int` at offset 8; `VM_Scan` tests the `int` at
///   offset 8 (`done`), reads the 64-bit cursor at offset 0 and stores the
///   next one there.
///
/// In both, `RM_Scan` does one step of the keyspace table's scan
/// (`dictScan` on Redis 7.0; the kvstore/hashtable scan on Valkey, whose
/// cursor also encodes the slot table in cluster mode) from `cursor`, calls
/// the callback for each key of the step, stores the next cursor, and
/// returns 0 (setting `done`) once that is 0. The cursor is the same
/// number the server's own SCAN takes and returns, so any value a client
/// sends is as safe as it is for SCAN.
#[repr(C)]
struct ScanCursorLayout {
    cursor: u64,
    done: libc::c_int,
}

const _: () = assert!(
    std::mem::size_of::<libc::c_ulong>() == 8,
    "RedisModuleScanCursor's cursor is an unsigned long: 64-bit targets only"
);

/// Owns a `RedisModuleScanCursor`; destroyed on drop.
struct ScanCursor(*mut raw::RedisModuleScanCursor);

impl Drop for ScanCursor {
    fn drop(&mut self) {
        // SAFETY: the pointer came from ScanCursorCreate and is destroyed once.
        if let Some(destroy) = unsafe { raw::RedisModule_ScanCursorDestroy } {
            unsafe { destroy(self.0) };
        }
    }
}

/// What the scan callback works with: the caller's function on each key
/// name, the keys visited so far, and a panic caught in the function (it
/// must not unwind through the server's C frames).
struct ScanState<'a> {
    on_key: &'a mut dyn FnMut(&[u8]),
    visited: usize,
    panic: Option<Box<dyn std::any::Any + Send>>,
}

extern "C" fn scan_callback(
    _ctx: *mut raw::RedisModuleCtx,
    keyname: *mut raw::RedisModuleString,
    _key: *mut raw::RedisModuleKey,
    privdata: *mut libc::c_void,
) {
    // SAFETY: privdata is the `ScanState` that `scan_from` passed to this
    // very RM_Scan call; nothing else touches it during the call.
    let state = unsafe { &mut *privdata.cast::<ScanState>() };
    state.visited += 1;
    if state.panic.is_some() || keyname.is_null() {
        return;
    }
    let mut len = 0usize;
    // SAFETY: keyname is a live string the server owns for the duration of
    // the callback; the bytes are copied by the caller's function if kept.
    let bytes = unsafe {
        let p = raw::RedisModule_StringPtrLen.expect("StringPtrLen")(keyname, &mut len);
        if p.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    };
    let f = &mut state.on_key;
    if let Err(e) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(bytes))) {
        state.panic = Some(e);
    }
}

/// Walks the keys of the selected database from the SCAN cursor `cursor`
/// (0 starts a walk) with the module scan API, calling `on_key` with each
/// key name (valid only during the call: copy what you keep). Steps until
/// about `budget` keys were visited, or `10 × budget` table buckets (empty
/// ones included) were stepped over, as the server's SCAN does for its
/// `COUNT`, or the walk is done. Returns the cursor to resume from, 0 when
/// the walk is done.
///
/// Guarantees are SCAN's: a key present during the whole walk (over any
/// number of calls, resuming each at the cursor the previous returned) is
/// passed at least once; a key may be passed more than once; the order is
/// the table's. Keys whose expiry has passed but that the server has not
/// yet deleted may be passed too (SCAN filters those; the caller must open
/// the key to know). `on_key` must not change the keyspace. A panic in
/// `on_key` is caught at the callback and resumed here, after the walk
/// stopped. Error: the server has no module scan API (before Redis 6.0).
pub fn scan_from(
    ctx: &Context,
    cursor: u64,
    budget: usize,
    mut on_key: impl FnMut(&[u8]),
) -> Result<u64, String> {
    // SAFETY: the API table is written once at load time and only read afterwards.
    let api = unsafe {
        (
            raw::RedisModule_ScanCursorCreate,
            raw::RedisModule_Scan,
            raw::RedisModule_ScanCursorDestroy,
        )
    };
    let (Some(create), Some(scan), Some(_)) = api else {
        return Err("ERR this server has no module scan API".into());
    };
    // SAFETY: ScanCursorCreate has no preconditions.
    let c = ScanCursor(unsafe { create() });
    if c.0.is_null() {
        return Err("ERR could not create a scan cursor".into());
    }
    let layout = c.0.cast::<ScanCursorLayout>();
    // SAFETY: a fresh cursor has the layout of `ScanCursorLayout` (see
    // there), `done` 0; setting the cursor field is what RM_Scan itself
    // does between steps.
    unsafe { (*layout).cursor = cursor };
    let mut state = ScanState {
        on_key: &mut on_key,
        visited: 0,
        panic: None,
    };
    let budget = budget.max(1);
    let max_steps = budget.saturating_mul(10);
    let mut steps = 0usize;
    let next = loop {
        // SAFETY: ctx is the running command's context (its client's
        // database is walked); the cursor is live; the callback matches
        // `RedisModuleScanCB` and privdata is `state`, live for the call.
        let more = unsafe {
            scan(
                ctx.ctx,
                c.0,
                Some(scan_callback),
                (&raw mut state).cast::<libc::c_void>(),
            )
        };
        steps += 1;
        // SAFETY: as above; RM_Scan stored the next cursor in the field.
        let at = unsafe { (*layout).cursor };
        if more == 0 || at == 0 {
            break 0;
        }
        if state.visited >= budget || steps >= max_steps || state.panic.is_some() {
            break at;
        }
    };
    drop(c);
    if let Some(p) = state.panic {
        std::panic::resume_unwind(p);
    }
    Ok(next)
}

/// The database the context works on (`RedisModule_GetSelectedDb`).
pub fn selected_db(ctx: &Context) -> i32 {
    // SAFETY: ctx is a live context.
    unsafe { raw::RedisModule_GetSelectedDb.expect("GetSelectedDb")(ctx.ctx) }
}

/// Makes the context work on database `db` (`RedisModule_SelectDb`);
/// whether it exists.
pub fn select_db(ctx: &Context, db: i32) -> bool {
    // SAFETY: ctx is a live context (a timer's: its own client).
    unsafe {
        raw::RedisModule_SelectDb.expect("SelectDb")(ctx.ctx, db) == raw::REDISMODULE_OK as i32
    }
}

/// The server's command callback type (`RedisModuleCmdFunc`).
pub type CmdFunc = extern "C" fn(
    *mut raw::RedisModuleCtx,
    *mut *mut raw::RedisModuleString,
    std::os::raw::c_int,
) -> std::os::raw::c_int;

/// Arguments [`dispatch`] wraps on the stack; a command with more (RANK.MINCR
/// of many members, HOT.REM of many articles) gets them in a `Vec`.
const STACK_ARGS: usize = 16;

/// Runs one command: wraps the arguments and sends the reply `run` returns.
/// Up to [`STACK_ARGS`] arguments are wrapped in an array on the stack, so
/// the common commands allocate nothing on the Rust heap for them. The
/// caller (the command table's callbacks) puts its panic guard inside `run`,
/// so `run` returns. The stack wrappers do not retain the strings (the
/// server owns them for the call), so nothing is retained or released.
pub fn dispatch(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: std::os::raw::c_int,
    run: impl FnOnce(&Context, &[RedisString]) -> redis_module::RedisResult,
) -> std::os::raw::c_int {
    let context = Context::new(ctx);
    let n = if argv.is_null() {
        0
    } else {
        usize::try_from(argc).unwrap_or(0)
    };
    let reply = if n <= STACK_ARGS {
        let mut buf: [std::mem::MaybeUninit<RedisString>; STACK_ARGS] =
            [const { std::mem::MaybeUninit::uninit() }; STACK_ARGS];
        for (i, slot) in buf.iter_mut().enumerate().take(n) {
            // SAFETY: argv holds argc live strings for the call (i < n = argc).
            // Wrapped without retaining them: the server owns them for the
            // whole call, and the wrappers are never dropped (no release),
            // only lent to `run` as a slice, which outlives no borrow of it.
            slot.write(RedisString::from_redis_module_string(ctx, unsafe {
                *argv.add(i)
            }));
        }
        // SAFETY: the first n slots were written just above; MaybeUninit<T>
        // has T's layout, so they read as a slice of n RedisStrings.
        let args = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<RedisString>(), n) };
        // The slots are MaybeUninit: leaving scope drops (releases) none.
        run(&context, args)
    } else {
        let args = redis_module::decode_args(ctx, argv, argc);
        run(&context, &args)
    };
    context.reply(reply) as std::os::raw::c_int
}

/// Creates one command (`RedisModule_CreateCommand`). `keyed`: first, last
/// and step key 1 (the board key at `argv[1]`); else 0, 0, 0 (a keyless
/// command, such as HOT.BOARDS). Error: the server refused it.
pub fn create_command(
    ctx: &Context,
    name: &str,
    func: CmdFunc,
    flags: &std::ffi::CStr,
    keyed: bool,
) -> Result<(), String> {
    // SAFETY: the API table is written once at load time and only read afterwards.
    let Some(create) = (unsafe { raw::RedisModule_CreateCommand }) else {
        return Err("the server has no RedisModule_CreateCommand".into());
    };
    let cname = std::ffi::CString::new(name).map_err(|_| "bad command name")?;
    // SAFETY: the load-time context; name and flags are NUL-terminated,
    // the server copies both; func is a static function.
    let k = i32::from(keyed);
    let rc = unsafe { create(ctx.ctx, cname.as_ptr(), Some(func), flags.as_ptr(), k, k, k) };
    if rc != raw::REDISMODULE_OK as i32 {
        return Err(format!("failed to create command {name}"));
    }
    Ok(())
}

/// `RedisModule_SetCommandInfo`, as the bindings type it.
type SetInfoFn =
    unsafe extern "C" fn(*mut raw::RedisModuleCommand, *const raw::RedisModuleCommandInfo) -> i32;

/// Sets one command's info (`RedisModule_SetCommandInfo`, Redis 7.0+, in
/// one call: the server refuses a second one): the key spec of its board
/// key (`key_flags`, `KeySpecFlags` bits; `None`: a keyless command, no
/// key spec), its `tips` (`COMMAND INFO`, e.g. `nondeterministic_output`),
/// and `docs` (summary, since, complexity, arguments) that `COMMAND DOCS`
/// serves and redis-cli builds its hints from. Also the ACL `categories`
/// where the server can set them.
///
/// Before 7.0 (no API) it does nothing. If a server refuses the docs, the
/// key spec is set alone and a warning logged: docs are a convenience,
/// key specs are not. Error: the command is missing or its key spec refused.
pub fn set_command_info(
    ctx: &Context,
    name: &str,
    key_flags: Option<u32>,
    tips: Option<&std::ffi::CStr>,
    docs: Option<&crate::docs::Command>,
    categories: &std::ffi::CStr,
) -> Result<(), String> {
    // SAFETY: the API table is written once at load time and only read afterwards.
    let api = unsafe { (raw::RedisModule_GetCommand, raw::RedisModule_SetCommandInfo) };
    let (Some(get), Some(set)) = api else {
        return Ok(()); // before 7.0: no key specs, no docs
    };
    // SAFETY: as above.
    let set_categories = unsafe { raw::RedisModule_SetCommandACLCategories };
    let cname = std::ffi::CString::new(name).map_err(|_| "bad command name")?;
    // SAFETY: ctx is the load-time context and the name NUL-terminated;
    // a null result means no such command.
    let cmd = unsafe { get(ctx.ctx, cname.as_ptr()) };
    if cmd.is_null() {
        return Err(format!("no command {name}"));
    }
    if !set_info(set, cmd, key_flags, tips, docs) {
        if docs.is_none() || !set_info(set, cmd, key_flags, tips, None) {
            return Err(format!("SetCommandInfo {name} failed"));
        }
        ctx.log_warning(&format!(
            "the server refused the docs of {name}; its key spec is set without them"
        ));
    }
    if let Some(set_cat) = set_categories {
        // SAFETY: cmd is a live command of this module; the string is
        // NUL-terminated and outlives the call (the server copies it).
        if unsafe { set_cat(cmd, categories.as_ptr()) } != raw::REDISMODULE_OK as i32 {
            return Err(format!("SetCommandACLCategories {name} failed"));
        }
    }
    Ok(())
}

/// One `SetCommandInfo` call: the board key's spec (first key at index 1,
/// one key; none for a keyless command), with `tips` and `docs` if given.
/// Returns whether the server took it. It validates the whole info before
/// changing anything, so a refused call leaves the command as it was.
fn set_info(
    set: SetInfoFn,
    cmd: *mut raw::RedisModuleCommand,
    key_flags: Option<u32>,
    tips: Option<&std::ffi::CStr>,
    docs: Option<&crate::docs::Command>,
) -> bool {
    use redis_module::commands::{BeginSearch, FindKeys, KeySpec, KeySpecFlags};
    static VERSION: raw::RedisModuleCommandInfoVersion = raw::RedisModuleCommandInfoVersion {
        version: 1,
        sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
        sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
        sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
    };
    let specs: Vec<KeySpec> = key_flags
        .map(|flags| {
            KeySpec::new(
                None,
                KeySpecFlags::from_bits_truncate(flags),
                BeginSearch::new_index(1),
                FindKeys::new_range(0, 1, 0),
            )
        })
        .into_iter()
        .collect();
    // Zero-terminated; no strings inside (no notes, an index search). A
    // keyless command passes no array at all.
    let mut key_specs = redis_module::commands::get_redis_key_spec(specs);
    let key_specs_ptr = if key_flags.is_some() {
        key_specs.as_mut_ptr()
    } else {
        std::ptr::null_mut()
    };
    let mut tree = RawDocs::default();
    let null = std::ptr::null();
    let mut info = raw::RedisModuleCommandInfo {
        version: &VERSION,
        summary: null,
        complexity: null,
        since: null,
        history: std::ptr::null_mut(),
        tips: tips.map_or(null, |t| t.as_ptr()),
        arity: 0, // keep the arity of the registration
        key_specs: key_specs_ptr,
        args: std::ptr::null_mut(),
    };
    if let Some(d) = docs {
        info.summary = tree.text(d.summary);
        info.complexity = tree.text(d.complexity);
        info.since = tree.text(d.since);
        info.args = tree.args(d.args);
    }
    // SAFETY: cmd is a live command of this module, at load time. `info`,
    // the zero-terminated key-spec array and every string and
    // zero-terminated argument array it points to (owned by `key_specs` and
    // `tree`) live until this call returns; the server copies them all.
    // The version struct says the sizes of this crate's structs, which the
    // server uses to step through the arrays.
    unsafe { set(cmd, &info) == raw::REDISMODULE_OK as i32 }
}

/// Owns the C strings and argument arrays behind one command's docs, for
/// the raw pointers handed to `SetCommandInfo`. Moving a `CString` or a
/// `Vec` into the lists does not move its heap buffer, so the pointers
/// stay valid while this lives.
#[derive(Default)]
struct RawDocs {
    strings: Vec<std::ffi::CString>,
    lists: Vec<Vec<raw::RedisModuleCommandArg>>,
}

impl RawDocs {
    /// A NUL-terminated copy of `s` (empty if `s` holds a NUL, which the
    /// static docs never do).
    fn text(&mut self, s: &str) -> *const libc::c_char {
        let c = std::ffi::CString::new(s).unwrap_or_default();
        let p = c.as_ptr();
        self.strings.push(c);
        p
    }

    fn opt_text(&mut self, s: Option<&str>) -> *const libc::c_char {
        s.map_or(std::ptr::null(), |s| self.text(s))
    }

    /// The zero-terminated raw array of `args`, sub-arguments included.
    fn args(&mut self, args: &[crate::docs::Arg]) -> *mut raw::RedisModuleCommandArg {
        use crate::docs::ArgType as T;
        let mut list = Vec::with_capacity(args.len() + 1);
        for a in args {
            let type_ = match a.kind {
                T::Key => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY,
                T::String => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
                T::Integer => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
                T::UnixTime => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_UNIX_TIME,
                T::PureToken => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN,
                T::OneOf => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_ONEOF,
                T::Block => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_BLOCK,
            };
            let mut flags = raw::REDISMODULE_CMD_ARG_NONE;
            if a.optional {
                flags |= raw::REDISMODULE_CMD_ARG_OPTIONAL;
            }
            if a.multiple {
                flags |= raw::REDISMODULE_CMD_ARG_MULTIPLE;
            }
            let subargs = if a.args.is_empty() {
                std::ptr::null_mut()
            } else {
                self.args(a.args)
            };
            list.push(raw::RedisModuleCommandArg {
                name: self.text(a.name),
                type_,
                // The board key is key spec 0; -1 for every other argument.
                key_spec_index: if a.kind == T::Key { 0 } else { -1 },
                token: self.opt_text(a.token),
                summary: self.opt_text(a.summary),
                since: std::ptr::null(),
                flags: flags as libc::c_int,
                deprecated_since: std::ptr::null(),
                subargs,
                display_text: std::ptr::null(),
            });
        }
        list.push(END_OF_ARGS);
        let p = list.as_mut_ptr();
        self.lists.push(list);
        p
    }
}

/// The all-zero entry that ends an argument array.
const END_OF_ARGS: raw::RedisModuleCommandArg = raw::RedisModuleCommandArg {
    name: std::ptr::null(),
    type_: 0,
    key_spec_index: 0,
    token: std::ptr::null(),
    summary: std::ptr::null(),
    since: std::ptr::null(),
    flags: 0,
    deprecated_since: std::ptr::null(),
    subargs: std::ptr::null_mut(),
    display_text: std::ptr::null(),
};

/// The string a string config's get callback returns. Redis does not free
/// that string, and the redis-module crate hands it over with `take()`, so
/// the module keeps the last one in `slot` and frees it on the next call
/// (Redis has copied the value by then: CONFIG GET replies at once).
pub fn config_string(
    slot: &std::sync::atomic::AtomicPtr<raw::RedisModuleString>,
    text: &str,
) -> RedisString {
    // SAFETY: CreateString copies `len` bytes from a live buffer; a null
    // context makes a string that is freed explicitly (below, next time).
    let fresh = unsafe {
        raw::RedisModule_CreateString.expect("CreateString exists on every server")(
            std::ptr::null_mut(),
            text.as_ptr().cast(),
            text.len(),
        )
    };
    let old = slot.swap(fresh, std::sync::atomic::Ordering::AcqRel);
    if !old.is_null() {
        // SAFETY: `old` was created above by an earlier call and handed to
        // Redis, which finished with it when that call returned.
        unsafe {
            raw::RedisModule_FreeString.expect("FreeString exists on every server")(
                std::ptr::null_mut(),
                old,
            )
        };
    }
    RedisString::from_redis_module_string(std::ptr::null_mut(), fresh)
}

// ---------------------------------------------------------------------------
// Low-level key access for the write paths (HOT.VIEW, RANK.INCR/SET).
//
// `RedisModule_Call` costs about 5,000 instructions a call (argv objects,
// command lookup, a fake client, a RESP reply parsed back), so the hot paths
// open each key once and use the key API instead, then replicate the exact
// effect with `RedisModule_Replicate` and fire the keyspace event the
// equivalent command would fire.
// ---------------------------------------------------------------------------

/// A hash field name made once, at its first use, and kept for the
/// module's life: passed to the hash API as the string it is, where a C
/// field name (`REDISMODULE_HASH_CFIELDS`) makes and frees a string object
/// at every call. Declare one with `lazy_static!`.
pub struct Field {
    name: &'static std::ffi::CStr,
    s: *mut raw::RedisModuleString,
}

// SAFETY: the string is created once (by `lazy_static`'s one-time
// initialisation), never freed, written or refcounted afterwards: the hash
// API only reads it (`REDISMODULE_HASH_NONE` copies a field it stores).
unsafe impl Sync for Field {}
// SAFETY: as above.
unsafe impl Send for Field {}

impl Field {
    /// Makes the field's string (no context: it is never auto-freed).
    /// Called at a field's first use, inside a command, once the API table
    /// is filled.
    pub fn new(name: &'static std::ffi::CStr) -> Field {
        let b = name.to_bytes();
        // SAFETY: the API table is filled before any command runs; a NULL
        // context makes a string the caller owns (here: forever).
        let s = unsafe {
            raw::RedisModule_CreateString.expect("CreateString exists on every server")(
                std::ptr::null_mut(),
                b.as_ptr().cast::<libc::c_char>(),
                b.len(),
            )
        };
        Field { name, s }
    }

    /// The field's name.
    pub fn name(&self) -> &'static [u8] {
        self.name.to_bytes()
    }
}

/// The type of an open key, as the key API reports it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum KeyKind {
    Empty,
    String,
    Hash,
    ZSet,
    Other,
}

/// A key handle, open for reading or for reading and writing, closed on
/// drop. Closing it signals nothing for WATCH (the module sets
/// `NO_IMPLICIT_SIGNAL_MODIFIED`, see [`set_explicit_signals`]): each write
/// path calls [`signal_modified`] for the keys it changed. Keys that are only
/// read are still opened read-only, so a missing key is not created.
pub struct Key {
    raw: RawKey,
}

impl Key {
    /// Opens `name` for reading (`write` false) or for reading and writing.
    /// Opening never creates the key; a write does.
    pub fn open(ctx: &Context, name: &RedisString, write: bool) -> Key {
        let mode = if write {
            raw::REDISMODULE_READ | raw::REDISMODULE_WRITE
        } else {
            raw::REDISMODULE_READ
        };
        let raw = RawKey::open_mode(ctx, name, mode as i32).unwrap_or(RawKey {
            ctx: ctx.ctx,
            key: std::ptr::null_mut(),
        });
        Key { raw }
    }

    /// Opens `name` for reading without touching its LRU/LFU and, where
    /// the server can (Redis 7.2+, Valkey), without counting a keyspace hit
    /// or miss: for looking at keys the client did not name (HOT.BOARDS,
    /// RANK.BOARDS). Like every read, a key whose expiry has passed reads as
    /// missing (and the master deletes it, as SCAN does).
    pub fn open_peek(ctx: &Context, name: &RedisString) -> Key {
        // A server that predates a flag ignores it (Redis 7.0's OpenKey
        // only tests NOTOUCH).
        let mode = raw::REDISMODULE_READ
            | raw::REDISMODULE_OPEN_KEY_NOTOUCH
            | raw::REDISMODULE_OPEN_KEY_NOSTATS;
        let raw = RawKey::open_mode(ctx, name, mode as i32).unwrap_or(RawKey {
            ctx: ctx.ctx,
            key: std::ptr::null_mut(),
        });
        Key { raw }
    }

    /// The key's type (`Empty` when it does not exist).
    pub fn kind(&self) -> KeyKind {
        if self.raw.key.is_null() {
            return KeyKind::Empty;
        }
        // SAFETY: an open key handle.
        let t = unsafe {
            raw::RedisModule_KeyType.expect("KeyType exists on every server")(self.raw.key)
        };
        match t as isize {
            x if x == raw::REDISMODULE_KEYTYPE_EMPTY => KeyKind::Empty,
            x if x == raw::REDISMODULE_KEYTYPE_STRING => KeyKind::String,
            x if x == raw::REDISMODULE_KEYTYPE_HASH => KeyKind::Hash,
            x if x == raw::REDISMODULE_KEYTYPE_ZSET => KeyKind::ZSet,
            _ => KeyKind::Other,
        }
    }

    /// A string value's bytes (`RedisModule_StringDMA`, read mode; empty
    /// for a missing key). Like every module read, it turns an int-encoded
    /// value into a plain one. The caller has checked the type. The slice is
    /// valid until the key is written or closed.
    pub fn read(&self) -> &[u8] {
        if self.raw.key.is_null() {
            return &[];
        }
        let mut len = 0usize;
        // SAFETY: an open key holding a string (checked by the caller) or
        // empty; the pointer is valid for `len` bytes while the handle lives
        // and the key is not modified, which `&self` ensures here.
        unsafe {
            let p = raw::RedisModule_StringDMA.expect("StringDMA exists on every server")(
                self.raw.key,
                &mut len,
                raw::REDISMODULE_READ as i32,
            );
            if p.is_null() || len == 0 {
                return &[];
            }
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        }
    }

    /// Replaces a string value in place (or creates the key) with `bytes`,
    /// keeping its expiry (`StringTruncate` + `StringDMA`, write mode).
    ///
    /// A value that grows to more than twice its size and at least 4 KiB
    /// (a HyperLogLog promoted from sparse to dense: under 3 KB to 12,304
    /// bytes) is first deleted and made again at its exact size: grown in
    /// place, the server's string keeps the spare room of a doubling (a
    /// dense HyperLogLog took 28.7 KB instead of PFADD's 14.4 KB).
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        let cur = self.read().len();
        if cur > 0 && bytes.len() >= 4096 && bytes.len() > 2 * cur {
            self.clear_keeping_expiry(bytes)?;
            return Ok(());
        }
        self.resize_and_fill(0, bytes)
    }

    /// Deletes the value and writes `bytes` as a new string of exactly that
    /// size (`StringTruncate` on an empty key allocates no spare room), with
    /// the old absolute expiry put back.
    fn clear_keeping_expiry(&mut self, bytes: &[u8]) -> Result<(), String> {
        // SAFETY: the API table is written once at load time and only read afterwards.
        let get_abs = unsafe { raw::RedisModule_GetAbsExpire };
        // SAFETY: see inside.
        let expire_ms = unsafe {
            // An open, writable key holding a string (the caller read it);
            // DeleteKey leaves the handle open on an empty key.
            let ttl = raw::RedisModule_GetExpire.expect("GetExpire")(self.raw.key);
            let abs = match get_abs {
                Some(get) => get(self.raw.key),
                None => ttl,
            };
            if raw::RedisModule_DeleteKey.expect("DeleteKey")(self.raw.key)
                != raw::REDISMODULE_OK as i32
            {
                return Err("ERR cannot write the string value".into());
            }
            (ttl != raw::REDISMODULE_NO_EXPIRE as i64).then_some((abs, ttl))
        };
        self.resize_and_fill(0, bytes)?;
        if let Some((abs, ttl)) = expire_ms {
            // SAFETY: the key exists again (written above), open for writing.
            unsafe {
                match raw::RedisModule_SetAbsExpire {
                    Some(set) if get_abs.is_some() => {
                        set(self.raw.key, abs);
                    }
                    _ => {
                        raw::RedisModule_SetExpire.expect("SetExpire")(self.raw.key, ttl.max(1));
                    }
                }
            }
        }
        Ok(())
    }

    /// Appends `bytes` to a string value (or creates the key), keeping its expiry.
    pub fn append(&mut self, bytes: &[u8]) -> Result<(), String> {
        let old = self.read().len();
        self.resize_and_fill(old, bytes)
    }

    fn resize_and_fill(&mut self, at: usize, bytes: &[u8]) -> Result<(), String> {
        let fail = || "ERR cannot write the string value".to_string();
        if self.raw.key.is_null() {
            return Err(fail());
        }
        let new_len = at + bytes.len();
        let mut len = 0usize;
        // SAFETY: an open key, writable (StringTruncate refuses otherwise);
        // after the resize DMA returns a buffer of `new_len` bytes, of which
        // `[at, new_len)` is written.
        unsafe {
            if raw::RedisModule_StringTruncate.expect("StringTruncate")(self.raw.key, new_len)
                != raw::REDISMODULE_OK as i32
            {
                return Err(fail());
            }
            let p = raw::RedisModule_StringDMA.expect("StringDMA")(
                self.raw.key,
                &mut len,
                raw::REDISMODULE_WRITE as i32,
            );
            if p.is_null() || len != new_len {
                return Err(fail());
            }
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.cast::<u8>().add(at), bytes.len());
        }
        Ok(())
    }

    /// Milliseconds to expiry; `None` if missing or without expiry.
    pub fn ttl(&self) -> Option<i64> {
        if self.raw.key.is_null() || self.kind() == KeyKind::Empty {
            return None;
        }
        // SAFETY: an open key handle.
        let ms = unsafe { raw::RedisModule_GetExpire.expect("GetExpire")(self.raw.key) };
        (ms != raw::REDISMODULE_NO_EXPIRE as i64).then_some(ms)
    }

    /// Milliseconds from `now_ms` (unix ms: the command's clock, which is
    /// the master's `CLOCK` on a replica or an AOF load) to the key's
    /// expiry; `None` if missing or without expiry. Read as the absolute
    /// expiry (`RedisModule_GetAbsExpire`, 6.2.2+), so the answer does not
    /// depend on when this server runs the command; where the server lacks
    /// it, the server's own remaining time.
    pub fn ttl_at(&self, now_ms: i64) -> Option<i64> {
        if self.raw.key.is_null() || self.kind() == KeyKind::Empty {
            return None;
        }
        // SAFETY: the API table is written once at load time and only read
        // afterwards; an open key handle.
        match unsafe { raw::RedisModule_GetAbsExpire } {
            Some(get) => {
                let at = unsafe { get(self.raw.key) };
                (at != raw::REDISMODULE_NO_EXPIRE as i64).then(|| at.saturating_sub(now_ms))
            }
            None => self.ttl(),
        }
    }

    /// Sets the key to expire at `at_ms` (unix ms), exactly: with
    /// `RedisModule_SetAbsExpire` where the server has it (6.2.2+), else
    /// relative to `now_ms`.
    pub fn expire_at(&mut self, at_ms: i64, now_ms: i64) {
        if self.raw.key.is_null() {
            return;
        }
        // SAFETY: an open, writable key that exists (callers write it first).
        unsafe {
            match raw::RedisModule_SetAbsExpire {
                Some(set) => {
                    set(self.raw.key, at_ms);
                }
                None => {
                    raw::RedisModule_SetExpire.expect("SetExpire")(
                        self.raw.key,
                        (at_ms - now_ms).max(1),
                    );
                }
            }
        }
    }

    /// Removes the key's expiry (as PERSIST does); no-op on a missing key.
    pub fn persist(&mut self) {
        if self.raw.key.is_null() || self.kind() == KeyKind::Empty {
            return;
        }
        // SAFETY: an open, writable key that exists; NO_EXPIRE removes the TTL.
        unsafe {
            raw::RedisModule_SetExpire.expect("SetExpire")(
                self.raw.key,
                raw::REDISMODULE_NO_EXPIRE as i64,
            );
        }
    }

    /// A hash field by name; `None` when the field (or key) is missing. The
    /// caller has checked the type.
    pub fn hash_get(&self, field: &Field) -> Option<RedisString> {
        if self.raw.key.is_null() || self.kind() != KeyKind::Hash {
            return None;
        }
        let mut out: *mut raw::RedisModuleString = std::ptr::null_mut();
        // SAFETY: an open hash key; HASH_NONE takes a live field string
        // (only read) followed by where to store its value, and the list
        // ends with NULL. The returned string is new and owned by the caller
        // (wrapped below, freed on drop).
        unsafe {
            raw::RedisModule_HashGet.expect("HashGet")(
                self.raw.key,
                raw::REDISMODULE_HASH_NONE as i32,
                field.s,
                &mut out,
                std::ptr::null_mut::<libc::c_void>(),
            );
        }
        (!out.is_null()).then(|| RedisString::from_redis_module_string(self.raw.ctx, out))
    }

    /// Two hash fields in one lookup of the key: (`a`'s value, `b`'s value),
    /// each `None` when missing (or the key is not a hash).
    pub fn hash_get2(&self, a: &Field, b: &Field) -> (Option<RedisString>, Option<RedisString>) {
        if self.raw.key.is_null() || self.kind() != KeyKind::Hash {
            return (None, None);
        }
        let (mut va, mut vb): (*mut raw::RedisModuleString, *mut raw::RedisModuleString) =
            (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: as in `hash_get`, with two (field, out) pairs before the
        // NULL that ends the list; each returned string is new and owned by
        // the caller (wrapped below, freed on drop).
        unsafe {
            raw::RedisModule_HashGet.expect("HashGet")(
                self.raw.key,
                raw::REDISMODULE_HASH_NONE as i32,
                a.s,
                &mut va,
                b.s,
                &mut vb,
                std::ptr::null_mut::<libc::c_void>(),
            );
        }
        let wrap = |p: *mut raw::RedisModuleString| {
            (!p.is_null()).then(|| RedisString::from_redis_module_string(self.raw.ctx, p))
        };
        (wrap(va), wrap(vb))
    }

    /// Sets hash fields (copies the names and values): two at a time, in one
    /// call of the server's HashSet. The caller has checked the type;
    /// replication and the keyspace event are the caller's.
    pub fn hash_set(&mut self, fields: &[(&Field, &[u8])]) {
        // SAFETY: the API table is written once at load time and only read afterwards.
        let set = unsafe { raw::RedisModule_HashSet }.expect("HashSet");
        let ctx = self.raw.ctx;
        for pair in fields.chunks(2) {
            let (f1, v1) = pair[0];
            let v1 = RedisString::create_from_slice(ctx, v1);
            match pair.get(1) {
                // SAFETY: an open, writable key; HASH_NONE takes live field
                // strings (copied, never taken), each followed by a live
                // value string that HashSet copies; the list ends with NULL.
                Some((f2, v2)) => unsafe {
                    let v2 = RedisString::create_from_slice(ctx, v2);
                    set(
                        self.raw.key,
                        raw::REDISMODULE_HASH_NONE as i32,
                        f1.s,
                        v1.inner,
                        f2.s,
                        v2.inner,
                        std::ptr::null_mut::<libc::c_void>(),
                    );
                },
                // SAFETY: as above, with one field.
                None => unsafe {
                    set(
                        self.raw.key,
                        raw::REDISMODULE_HASH_NONE as i32,
                        f1.s,
                        v1.inner,
                        std::ptr::null_mut::<libc::c_void>(),
                    );
                },
            }
        }
    }

    /// The member with the lowest score of a ZSET (`None` if missing or empty).
    pub fn zset_first(&self) -> Option<RedisString> {
        self.zset_first_from(f64::NEG_INFINITY).map(|(m, _)| m)
    }

    /// The first member (lowest score, then lowest member) whose score is
    /// at least `min`, with its score; `None` if there is none (or the key
    /// is missing or not a ZSET).
    pub fn zset_first_from(&self, min: f64) -> Option<(RedisString, f64)> {
        self.zset_end(false, min)
    }

    /// The highest score of a ZSET (`None` if missing or empty).
    pub fn zset_last_score(&self) -> Option<f64> {
        self.zset_end(true, f64::NEG_INFINITY)
            .map(|(_, score)| score)
    }

    /// One end of the ZSET's score range `[min, +inf]`: the first member
    /// (`last` false) or the last, with its score; `None` if the range is
    /// empty (or the key is missing or not a ZSET).
    fn zset_end(&self, last: bool, min: f64) -> Option<(RedisString, f64)> {
        if self.raw.key.is_null() || self.kind() != KeyKind::ZSet {
            return None;
        }
        let key = self.raw.key;
        // SAFETY: an open ZSET key; the range is stopped before returning,
        // and the element is a new string owned by the returned RedisString.
        unsafe {
            let start = if last {
                raw::RedisModule_ZsetLastInScoreRange
            } else {
                raw::RedisModule_ZsetFirstInScoreRange
            };
            let ok = start.expect("zset range API")(key, min, f64::INFINITY, 0, 0);
            let mut score = 0.0;
            let ele = if ok == raw::REDISMODULE_OK as i32 {
                raw::RedisModule_ZsetRangeCurrentElement.expect("zset range API")(key, &mut score)
            } else {
                std::ptr::null_mut()
            };
            raw::RedisModule_ZsetRangeStop.expect("zset range API")(key);
            (!ele.is_null()).then(|| {
                (
                    RedisString::from_redis_module_string(self.raw.ctx, ele),
                    score,
                )
            })
        }
    }

    /// Elements of a ZSET or hash, length of a string; 0 when missing.
    pub fn len(&self) -> usize {
        if self.raw.key.is_null() {
            return 0;
        }
        // SAFETY: an open key handle.
        unsafe { raw::RedisModule_ValueLength.expect("ValueLength")(self.raw.key) }
    }

    /// The score of `member` in a ZSET; `None` when missing.
    pub fn zset_score(&self, member: &RedisString) -> Option<f64> {
        if self.raw.key.is_null() {
            return None;
        }
        let mut score = 0.0;
        // SAFETY: an open key; ERR on a missing member or a non-ZSET.
        let ok = unsafe {
            raw::RedisModule_ZsetScore.expect("zset API")(self.raw.key, member.inner, &mut score)
        };
        (ok == raw::REDISMODULE_OK as i32).then_some(score)
    }

    /// Adds or updates `member` with `score` in a ZSET (created if missing).
    /// Returns whether the member is new. Replication is the caller's.
    pub fn zset_add(&mut self, score: f64, member: &RedisString) -> Result<bool, String> {
        if self.raw.key.is_null() {
            return Err("ERR cannot open the ZSET".into());
        }
        let mut flags: i32 = 0;
        // SAFETY: an open, writable key; ZsetAdd copies the member.
        let ok = unsafe {
            raw::RedisModule_ZsetAdd.expect("zset API")(
                self.raw.key,
                score,
                member.inner,
                &mut flags,
            )
        };
        if ok != raw::REDISMODULE_OK as i32 {
            return Err("ERR could not add to the ZSET".into());
        }
        Ok(flags & raw::REDISMODULE_ZADD_ADDED as i32 != 0)
    }

    /// Adds `incr` to `member`'s score in a ZSET (the member and the ZSET
    /// are created when missing, from 0), as `ZINCRBY` does: one lookup
    /// instead of [`Key::zset_score`] then [`Key::zset_add`]. Returns the
    /// new score, `old + incr` (the same bits as that sum). Errors: the key
    /// is not open, or the result is NaN (nothing written). Replication is
    /// the caller's.
    pub fn zset_incrby(&mut self, incr: f64, member: &RedisString) -> Result<f64, String> {
        if self.raw.key.is_null() {
            return Err("ERR cannot open the ZSET".into());
        }
        let mut flags: i32 = 0;
        let mut new = 0.0;
        // SAFETY: an open, writable key; ZsetIncrby copies the member and
        // writes the new score to `new`.
        let ok = unsafe {
            raw::RedisModule_ZsetIncrby.expect("zset API")(
                self.raw.key,
                incr,
                member.inner,
                &mut flags,
                &mut new,
            )
        };
        if ok != raw::REDISMODULE_OK as i32 {
            return Err("ERR could not add to the ZSET".into());
        }
        Ok(new)
    }

    /// Removes `member` from a ZSET; whether it was there. A ZSET left empty
    /// is deleted (by the server, as ZREM does). Replication and keyspace
    /// events are the caller's.
    pub fn zset_rem(&mut self, member: &RedisString) -> bool {
        if self.raw.key.is_null() || self.kind() != KeyKind::ZSet {
            return false;
        }
        let mut deleted: i32 = 0;
        // SAFETY: an open, writable ZSET key; the member is a live string.
        let ok = unsafe {
            raw::RedisModule_ZsetRem.expect("zset API")(self.raw.key, member.inner, &mut deleted)
        };
        ok == raw::REDISMODULE_OK as i32 && deleted != 0
    }

    /// Deletes the key (`unlink`: its value is freed in the background, as
    /// UNLINK does); whether it existed. Replication and keyspace events are
    /// the caller's.
    pub fn delete(&mut self, unlink: bool) -> bool {
        if self.raw.key.is_null() || self.kind() == KeyKind::Empty {
            return false;
        }
        // SAFETY: an open, writable key that exists.
        let ok = unsafe {
            if unlink {
                raw::RedisModule_UnlinkKey.expect("UnlinkKey")(self.raw.key)
            } else {
                raw::RedisModule_DeleteKey.expect("DeleteKey")(self.raw.key)
            }
        };
        ok == raw::REDISMODULE_OK as i32
    }
}

/// Replicates `cmd key args…` (effects replication, inside this command's
/// MULTI/EXEC), any number of arguments. The key is passed as the string it
/// is (no copy). Up to 6 other arguments (every hot-path effect: INCRBY,
/// APPEND, PEXPIREAT, SET … PXAT, HSET) go as binary-safe buffers (format
/// `b`), which the server copies; more (the ZREM, DEL and UNLINK of many
/// names) as a vector of strings (format `v`, whose argument vector the
/// server has to grow: measured dearer for the short effects).
pub fn replicate(ctx: &Context, cmd: &std::ffi::CStr, key: &RedisString, args: &[&[u8]]) {
    // SAFETY: the API table is written once at load time and only read afterwards.
    let rep = unsafe { raw::RedisModule_Replicate }.expect("Replicate exists on every server");
    let (c, k, name) = (ctx.ctx, key.inner, cmd.as_ptr());
    let p = |i: usize| args[i].as_ptr().cast::<libc::c_char>();
    /// One call per argument count: the format has one `s` (a live string,
    /// whose refcount Replicate takes) then one `b` (pointer, length) per
    /// argument, each buffer live for the call (Replicate copies it).
    macro_rules! by_count {
        ($($n:literal => $fmt:literal [$($i:literal)*]),*) => {
            match args.len() {
                // SAFETY: as above, for each arm.
                $($n => {
                    unsafe { rep(c, name, $fmt.as_ptr(), k $(, p($i), args[$i].len())*) };
                })*
                _ => {
                    let owned: Vec<RedisString> = args
                        .iter()
                        .map(|a| RedisString::create_from_slice(std::ptr::null_mut(), a))
                        .collect();
                    let argv: Vec<&RedisString> = std::iter::once(key).chain(&owned).collect();
                    replicate_strings(ctx, cmd, &argv);
                }
            }
        };
    }
    by_count!(
        0 => c"s" [], 1 => c"sb" [0], 2 => c"sbb" [0 1], 3 => c"sbbb" [0 1 2],
        4 => c"sbbbb" [0 1 2 3], 5 => c"sbbbbb" [0 1 2 3 4], 6 => c"sbbbbbb" [0 1 2 3 4 5]
    );
}

/// Replicates `cmd argv…` where every argument is already a string (the
/// ZREM, DEL and UNLINK of many names): format `v`, which takes a reference
/// to each string, so none is copied.
pub fn replicate_strings(ctx: &Context, cmd: &std::ffi::CStr, argv: &[&RedisString]) {
    let ptrs: Vec<*mut raw::RedisModuleString> = argv.iter().map(|s| s.inner).collect();
    // SAFETY: format `v` takes (RedisModuleString **, size_t): `ptrs` holds
    // `ptrs.len()` strings kept alive by `argv` for the call.
    unsafe {
        raw::RedisModule_Replicate.expect("Replicate exists on every server")(
            ctx.ctx,
            cmd.as_ptr(),
            c"v".as_ptr(),
            ptrs.as_ptr(),
            ptrs.len(),
        );
    }
}

/// Replicates `cmd strs… bufs…`: the first arguments passed as the strings
/// they are (format `s`: the server takes a reference, no copy), then the
/// others as buffers (format `b`, copied). Shapes: 3 strings and 1 to 5
/// buffers (the RANK writes replicated as commands); others go through
/// [`replicate_strings`].
pub fn replicate_mixed(
    ctx: &Context,
    cmd: &std::ffi::CStr,
    strs: &[&RedisString; 3],
    bufs: &[&[u8]],
) {
    // SAFETY: the API table is written once at load time and only read afterwards.
    let rep = unsafe { raw::RedisModule_Replicate }.expect("Replicate exists on every server");
    let (c, name) = (ctx.ctx, cmd.as_ptr());
    let (s0, s1, s2) = (strs[0].inner, strs[1].inner, strs[2].inner);
    let p = |i: usize| bufs[i].as_ptr().cast::<libc::c_char>();
    let l = |i: usize| bufs[i].len();
    // SAFETY: each arm's format has three `s` (live strings, whose refcount
    // Replicate takes) then one `b` (pointer, length) per buffer, each live
    // for the call (Replicate copies it).
    unsafe {
        match bufs.len() {
            1 => rep(c, name, c"sssb".as_ptr(), s0, s1, s2, p(0), l(0)),
            2 => rep(
                c,
                name,
                c"sssbb".as_ptr(),
                s0,
                s1,
                s2,
                p(0),
                l(0),
                p(1),
                l(1),
            ),
            3 => rep(
                c,
                name,
                c"sssbbb".as_ptr(),
                s0,
                s1,
                s2,
                p(0),
                l(0),
                p(1),
                l(1),
                p(2),
                l(2),
            ),
            4 => rep(
                c,
                name,
                c"sssbbbb".as_ptr(),
                s0,
                s1,
                s2,
                p(0),
                l(0),
                p(1),
                l(1),
                p(2),
                l(2),
                p(3),
                l(3),
            ),
            5 => rep(
                c,
                name,
                c"sssbbbbb".as_ptr(),
                s0,
                s1,
                s2,
                p(0),
                l(0),
                p(1),
                l(1),
                p(2),
                l(2),
                p(3),
                l(3),
                p(4),
                l(4),
            ),
            _ => {
                let owned: Vec<RedisString> = bufs
                    .iter()
                    .map(|a| RedisString::create_from_slice(std::ptr::null_mut(), a))
                    .collect();
                let argv: Vec<&RedisString> = strs.iter().copied().chain(&owned).collect();
                replicate_strings(ctx, cmd, &argv);
                0
            }
        };
    }
}

/// Replicates `ZADD key score member` with the key and member passed as the
/// strings they are (no copies) and the score as text.
pub fn replicate_zadd(ctx: &Context, key: &RedisString, score: &[u8], member: &RedisString) {
    // SAFETY: format `sbs`: a live string, a (pointer, length) buffer live
    // for the call, a live string.
    unsafe {
        raw::RedisModule_Replicate.expect("Replicate exists on every server")(
            ctx.ctx,
            c"ZADD".as_ptr(),
            c"sbs".as_ptr(),
            key.inner,
            score.as_ptr().cast::<libc::c_char>(),
            score.len(),
            member.inner,
        );
    }
}

/// Whether the key `name` exists, as a read sees it (a key whose expiry
/// has passed is missing, and the master deletes it), without opening a
/// key handle and without touching the key's LRU/LFU (a probe is not a
/// use): `RedisModule_KeyExists` (Redis 7.0+, Valkey); where the server
/// lacks it, an open for reading.
pub fn key_exists(ctx: &Context, name: &RedisString) -> bool {
    // SAFETY: the API table is written once at load time and only read afterwards.
    let api = unsafe { raw::RedisModule_KeyExists };
    match api {
        // SAFETY: ctx is the running command's context; name is live.
        Some(exists) => unsafe { exists(ctx.ctx, name.inner) != 0 },
        None => Key::open(ctx, name, false).kind() != KeyKind::Empty,
    }
}

/// Keyspace event classes the write paths fire.
#[derive(Clone, Copy)]
pub enum Event {
    String,
    Hash,
    ZSet,
    Generic,
}

/// Fires keyspace event `event` on `key`, as the equivalent command would.
pub fn notify(ctx: &Context, class: Event, event: &std::ffi::CStr, key: &RedisString) {
    let t = match class {
        Event::String => raw::REDISMODULE_NOTIFY_STRING,
        Event::Hash => raw::REDISMODULE_NOTIFY_HASH,
        Event::ZSet => raw::REDISMODULE_NOTIFY_ZSET,
        Event::Generic => raw::REDISMODULE_NOTIFY_GENERIC,
    };
    // SAFETY: ctx is the running command's context; event is NUL-terminated.
    unsafe {
        if let Some(n) = raw::RedisModule_NotifyKeyspaceEvent {
            n(ctx.ctx, t, event.as_ptr(), key.inner);
        }
    }
}

/// Marks `name` as modified for WATCH and client-side caching. The module
/// runs with `REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED` (set in
/// `init`), so closing a key opened for writing signals nothing by itself,
/// and each write path signals exactly the keys it changed.
pub fn signal_modified(ctx: &Context, name: &RedisString) {
    // SAFETY: ctx is the running command's context; name is live.
    unsafe {
        if let Some(s) = raw::RedisModule_SignalModifiedKey {
            s(ctx.ctx, name.inner);
        }
    }
}

/// Turns off the implicit WATCH signal on closing a key opened for writing
/// (see [`signal_modified`]). Redis 6.2+; older servers keep the implicit one.
pub fn set_explicit_signals(ctx: &Context) {
    // SAFETY: the load-time context; the option is a plain flag set.
    unsafe {
        if let Some(set) = raw::RedisModule_SetModuleOptions {
            set(
                ctx.ctx,
                raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as i32,
            );
        }
    }
}

// ---------------------------------------------------------------------------
// The server's `hll-sparse-max-bytes`, which the native HyperLogLog needs to
// promote a sparse value to dense exactly where PFADD would. Read at load
// time and again whenever CONFIG SET changes it (the config-change server
// event), so HOT.VIEW never pays for a CONFIG GET.
// ---------------------------------------------------------------------------

static HLL_SPARSE_MAX: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(3000);

/// The server's current `hll-sparse-max-bytes` (bytes of a whole sparse
/// HyperLogLog string, header included).
pub fn hll_sparse_max_bytes() -> usize {
    HLL_SPARSE_MAX.load(std::sync::atomic::Ordering::Relaxed)
}

fn read_hll_sparse_max(ctx: &Context) {
    if let Some(n) = config_get(ctx, "hll-sparse-max-bytes").and_then(|s| s.parse().ok()) {
        HLL_SPARSE_MAX.store(n, std::sync::atomic::Ordering::Relaxed);
    }
}

/// The value of server config `name` (`CONFIG GET name`) as text; `None`
/// when the server gives none. For load time and config-change callbacks,
/// never a command's hot path.
pub fn config_get(ctx: &Context, name: &str) -> Option<String> {
    let v = ctx.call("CONFIG", &["GET", name]);
    let value = match v {
        Ok(redis_module::RedisValue::Array(a)) => a.into_iter().nth(1),
        _ => None,
    };
    match value {
        Some(redis_module::RedisValue::SimpleString(s)) => Some(s),
        Some(redis_module::RedisValue::BulkString(s)) => Some(s),
        Some(redis_module::RedisValue::BulkRedisString(s)) => {
            std::str::from_utf8(s.as_slice()).ok().map(str::to_owned)
        }
        Some(redis_module::RedisValue::StringBuffer(b)) => String::from_utf8(b).ok(),
        _ => None,
    }
}

/// A server config the module follows: its name and what to run (with a
/// context that may call `CONFIG GET`) at load time and after each CONFIG
/// SET that changes it.
pub type ConfigWatch = (&'static [&'static str], fn(&Context));

/// The configs [`follow_configs`] follows (set once, at load time).
static WATCHED: std::sync::OnceLock<&'static [ConfigWatch]> = std::sync::OnceLock::new();

extern "C" fn on_config_change(
    ctx: *mut raw::RedisModuleCtx,
    _eid: raw::RedisModuleEvent,
    _subevent: u64,
    data: *mut libc::c_void,
) {
    let Some(watched) = WATCHED.get() else {
        return;
    };
    // SAFETY: for REDISMODULE_EVENT_CONFIG the server passes a
    // RedisModuleConfigChange (version 1) whose `config_names` holds
    // `num_changes` NUL-terminated names, valid during the callback.
    let changed = |name: &str| unsafe {
        let d = &*(data as *const raw::RedisModuleConfigChange);
        (0..d.num_changes as usize)
            .any(|i| std::ffi::CStr::from_ptr(*d.config_names.add(i)).to_bytes() == name.as_bytes())
    };
    let ctx = Context::new(ctx);
    for (names, run) in watched.iter() {
        if names.iter().any(|n| changed(n)) {
            run(&ctx);
        }
    }
}

/// Reads `hll-sparse-max-bytes` now and follows it, with the other
/// `watched` configs (each callback runs now, then after every CONFIG SET
/// of one of its names: the config-change server event, so no command
/// pays for a CONFIG GET). Called once at load time.
pub fn follow_configs(ctx: &Context, watched: &'static [ConfigWatch]) {
    static ALL: std::sync::OnceLock<Vec<ConfigWatch>> = std::sync::OnceLock::new();
    let all = ALL.get_or_init(|| {
        let mut v: Vec<ConfigWatch> = vec![(&["hll-sparse-max-bytes"], read_hll_sparse_max)];
        v.extend_from_slice(watched);
        v
    });
    let _ = WATCHED.set(all.as_slice());
    for (_, run) in all.iter() {
        run(ctx);
    }
    // SAFETY: the load-time context; the callback is a plain function that
    // lives as long as the module.
    unsafe {
        if let Some(sub) = raw::RedisModule_SubscribeToServerEvent {
            sub(
                ctx.ctx,
                raw::RedisModuleEvent {
                    id: raw::REDISMODULE_EVENT_CONFIG,
                    dataver: 1,
                },
                Some(on_config_change),
            );
        }
    }
}

/// Logs `message` at warning level if a module named `name` is already
/// loaded in this server. Called from the version expression of
/// `redis_module!`, which the generated `RedisModule_OnLoad` evaluates
/// before `RedisModule_Init`: a second `loadmodule`/`MODULE LOAD` of the
/// same library finds the API table its first load filled (the same
/// `dlopen` handle, so the same statics), and `RedisModule_Init` then fails
/// without a word. A first load finds the table empty and does nothing.
pub fn log_if_name_busy(name: &std::ffi::CStr, message: &std::ffi::CStr) {
    // SAFETY: the API table is only written by RedisModule_Init on the
    // server's main thread, which is this thread (module loading); a filled
    // entry points at the live server's function.
    let (busy, log) = unsafe { (raw::RedisModule_IsModuleNameBusy, raw::RedisModule_Log) };
    let (Some(busy), Some(log)) = (busy, log) else {
        return;
    };
    // SAFETY: name is NUL-terminated; the server only reads it.
    if unsafe { busy(name.as_ptr()) } == 0 {
        return;
    }
    // SAFETY: a null context logs without a module; level and format are
    // NUL-terminated, and the "%s" format takes exactly the one string given.
    unsafe {
        log(
            std::ptr::null_mut(),
            c"warning".as_ptr(),
            c"%s".as_ptr(),
            message.as_ptr(),
        )
    };
}

/// Keeps the redis-module crate quiet about defrag on servers without
/// `RedisModule_RegisterDefragCallbacks` (Redis 7.0 among them): its
/// load code logs a warning-level line ("Skip register defrag callbacks")
/// on every start there, although this module registers no defrag
/// callback. Fills the missing entry with a stub that refuses, so that
/// line is not logged; the crate calls the entry only when a module
/// registered defrag callbacks, and this one registers none, so the stub
/// is never called. Must run after `RedisModule_Init` and before the
/// crate's defrag registration: `redis_module!` calls it as the
/// `create_data_type` of [`QuietDefrag`].
fn quiet_defrag() {
    unsafe extern "C" fn refuse(
        _ctx: *mut raw::RedisModuleCtx,
        _start: raw::RedisModuleDefragFunc,
        _end: raw::RedisModuleDefragFunc,
    ) -> libc::c_int {
        raw::REDISMODULE_ERR as libc::c_int
    }
    // SAFETY: module loading runs on the server's main thread, which also
    // is the only reader of the API table at this point; the stub has the
    // entry's exact signature.
    unsafe {
        let entry = &raw mut raw::RedisModule_RegisterDefragCallbacks;
        if (*entry).is_none() {
            *entry = Some(refuse);
        }
    }
}

/// The hook `redis_module!` runs right after `RedisModule_Init` (listed
/// under its `data_types`; it creates no type): [`quiet_defrag`].
pub struct QuietDefrag;

impl QuietDefrag {
    /// Called by the `RedisModule_OnLoad` of `redis_module!`; never fails.
    pub fn create_data_type(&self, _ctx: *mut raw::RedisModuleCtx) -> Result<(), &'static str> {
        quiet_defrag();
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Command filter: sees every command before it runs (used to follow this
// node's slot migrations, `CLUSTER SETSLOT …`).

/// What a command filter hook gets: the command's first arguments (the
/// name first), valid only during the call.
pub type FilterHook = fn(&[&[u8]]);

/// The length of the command names the installed filter wants to see (0:
/// none installed), and how many arguments its hook is given.
static FILTER_NAME_LEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static FILTER_MAX_ARGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// The hook [`register_command_filter`] installed last. Replaced, not set
/// once: after `MODULE UNLOAD` and `MODULE LOAD` in one process the library
/// may still be mapped (its statics kept), and the new load registers its
/// filter again.
static FILTER_HOOK: std::sync::RwLock<Option<FilterHook>> = std::sync::RwLock::new(None);

/// The bytes of a string the server owns, valid while it lives.
///
/// # Safety
/// `s` is null or a live `RedisModuleString` that outlives the slice.
unsafe fn string_bytes<'a>(s: *const raw::RedisModuleString) -> &'a [u8] {
    if s.is_null() {
        return &[];
    }
    let mut len = 0usize;
    let p = raw::RedisModule_StringPtrLen.expect("StringPtrLen")(s, &mut len);
    if p.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(p.cast::<u8>(), len)
    }
}

extern "C" fn filter_callback(fctx: *mut raw::RedisModuleCommandFilterCtx) {
    let name_len = FILTER_NAME_LEN.load(std::sync::atomic::Ordering::Relaxed);
    if name_len == 0 {
        return;
    }
    // SAFETY: the server calls this with a live filter context; the
    // arguments it returns (not owned by us: not freed) live until the
    // callback returns, and the slices built from them do not escape it.
    // ArgGet exists wherever RegisterCommandFilter did (checked at
    // registration); a position past the end gives NULL, an empty name.
    let name = unsafe {
        let Some(get) = raw::RedisModule_CommandFilterArgGet else {
            return;
        };
        string_bytes(get(fctx, 0))
    };
    // The cheap pre-check, for every command the server runs.
    if name.len() == name_len {
        filter_hook(fctx, name);
    }
}

/// The rest of [`filter_callback`], out of its fast path: the first
/// `max_args` arguments (the name first) handed to `hook`.
#[cold]
#[inline(never)]
fn filter_hook(fctx: *mut raw::RedisModuleCommandFilterCtx, name: &[u8]) {
    let hook = *FILTER_HOOK.read().unwrap_or_else(|e| e.into_inner());
    let Some(hook) = hook else {
        return;
    };
    let max_args = FILTER_MAX_ARGS.load(std::sync::atomic::Ordering::Relaxed);
    // SAFETY: as in `filter_callback`, whose live filter context this is.
    unsafe {
        let (Some(get), Some(count)) = (
            raw::RedisModule_CommandFilterArgGet,
            raw::RedisModule_CommandFilterArgsCount,
        ) else {
            return;
        };
        let argc = count(fctx).max(0) as usize;
        let mut args: [&[u8]; 8] = [&[]; 8];
        let n = argc.min(max_args).min(args.len());
        args[0] = name;
        for (i, slot) in args.iter_mut().enumerate().take(n).skip(1) {
            *slot = string_bytes(get(fctx, i as std::os::raw::c_int));
        }
        // A panic must not unwind into the server.
        let _ = std::panic::catch_unwind(|| hook(&args[..n]));
    }
}

/// Registers a command filter (`RedisModule_RegisterCommandFilter`, with
/// `NOSELF`: the module's own `RedisModule_Call`s are not shown to it): for
/// every command whose name is `name_len` bytes long (the pre-check that
/// every other command pays: one length compare), `hook` gets its first
/// `max_args` arguments (at most 8, the name included), before the command
/// runs. It cannot change the command. Called once per load; a later load
/// in the same process (`MODULE UNLOAD` then `MODULE LOAD`, which removed
/// the old filter) replaces the hook. False when the server has no command
/// filters.
pub fn register_command_filter(
    ctx: &Context,
    name_len: usize,
    max_args: usize,
    hook: FilterHook,
) -> bool {
    *FILTER_HOOK.write().unwrap_or_else(|e| e.into_inner()) = Some(hook);
    FILTER_MAX_ARGS.store(max_args, std::sync::atomic::Ordering::Relaxed);
    FILTER_NAME_LEN.store(name_len.max(1), std::sync::atomic::Ordering::Relaxed);
    // SAFETY: reading the API table the server filled at load; ctx is the
    // live load context and the callback matches `RedisModuleCommandFilterFunc`.
    unsafe {
        let (Some(register), Some(_), Some(_)) = (
            raw::RedisModule_RegisterCommandFilter,
            raw::RedisModule_CommandFilterArgsCount,
            raw::RedisModule_CommandFilterArgGet,
        ) else {
            return false;
        };
        !register(
            ctx.ctx,
            Some(filter_callback as unsafe extern "C" fn(_)),
            raw::REDISMODULE_CMDFILTER_NOSELF as i32,
        )
        .is_null()
    }
}

/// The hook [`on_role_change`] installed last (replaced by a later load).
static ROLE_HOOK: std::sync::RwLock<Option<fn()>> = std::sync::RwLock::new(None);

extern "C" fn role_changed(
    _ctx: *mut raw::RedisModuleCtx,
    _eid: raw::RedisModuleEvent,
    _subevent: u64,
    _data: *mut libc::c_void,
) {
    if let Some(hook) = *ROLE_HOOK.read().unwrap_or_else(|e| e.into_inner()) {
        let _ = std::panic::catch_unwind(hook);
    }
}

/// Runs `hook` after each replication role change of this server (the
/// `REPLICATION_ROLE_CHANGED` server event: it became a replica or a
/// master). Called at load time.
pub fn on_role_change(ctx: &Context, hook: fn()) {
    *ROLE_HOOK.write().unwrap_or_else(|e| e.into_inner()) = Some(hook);
    // SAFETY: the load-time context; the callback is a plain function that
    // lives as long as the module.
    unsafe {
        if let Some(sub) = raw::RedisModule_SubscribeToServerEvent {
            sub(
                ctx.ctx,
                raw::RedisModuleEvent {
                    id: raw::REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED,
                    dataver: 1,
                },
                Some(role_changed),
            );
        }
    }
}

/// A string kept from one command to the next (a key name a cache holds),
/// released when dropped.
pub struct KeptString(*mut raw::RedisModuleString);

// SAFETY: a module's strings are only touched by the thread that holds the
// server's lock (the main thread, or a module thread while it holds the
// lock), one at a time; the holder (a `Mutex`) keeps it so.
unsafe impl Send for KeptString {}

impl KeptString {
    /// Keeps `s` (one more reference to the same string; no copy).
    pub fn keep(s: &RedisString) -> KeptString {
        // SAFETY: s is a live string; with no context, RetainString only
        // adds a reference, which this value owns.
        unsafe {
            raw::RedisModule_RetainString.expect("RetainString")(std::ptr::null_mut(), s.inner)
        };
        KeptString(s.inner)
    }

    /// The string, as one more reference that the caller owns (released
    /// when the returned value is dropped).
    pub fn share(&self) -> RedisString {
        // SAFETY: self.0 is live while self is; the new reference is owned
        // by the returned value, whose drop frees it with no context.
        unsafe {
            raw::RedisModule_RetainString.expect("RetainString")(std::ptr::null_mut(), self.0)
        };
        RedisString::from_redis_module_string(std::ptr::null_mut(), self.0)
    }
}

impl Drop for KeptString {
    fn drop(&mut self) {
        // SAFETY: the reference taken in `keep`, released once.
        unsafe { raw::RedisModule_FreeString.expect("FreeString")(std::ptr::null_mut(), self.0) };
    }
}
