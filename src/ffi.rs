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

/// Checks the calling user's ACL key permissions on one key the command
/// derives itself (Redis checks only the declared board key). See [`AclUser`].
pub fn check_key_acl(ctx: &Context, key: &RedisString, write: bool) -> Result<(), String> {
    AclUser::current(ctx).check(key, write)
}

extern "C" fn info_callback(ctx: *mut raw::RedisModuleInfoCtx, _for_crash_report: i32) {
    raw::add_info_section(ctx, None);
    for (name, value) in crate::stats::snapshot() {
        raw::add_info_field_long_long(ctx, name, value as i64);
    }
}

/// Registers the `INFO hotrank` section (replacing the crate's empty default).
pub fn register_info(ctx: &Context) {
    raw::register_info_function(ctx.ctx, Some(info_callback));
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

/// Milliseconds until `name` expires: `None` if it does not exist or has no expiry.
pub fn pttl(ctx: &Context, name: &RedisString) -> Option<i64> {
    let k = RawKey::open(ctx, name)?;
    // SAFETY: k.key is an open key handle.
    let ms =
        unsafe { raw::RedisModule_GetExpire.expect("GetExpire exists on every server")(k.key) };
    (ms != raw::REDISMODULE_NO_EXPIRE as i64).then_some(ms)
}

/// Walks a ZSET from the highest score down, without copying it
/// (`RedisModule_ZsetLastInScoreRange` / `ZsetRangePrev`). The key must not
/// be modified while the iterator lives (read-only commands only).
pub struct ZsetRevIter {
    key: RawKey,
    more: bool,
}

impl ZsetRevIter {
    /// `None` when the key is missing or not a ZSET.
    pub fn open(ctx: &Context, name: &RedisString) -> Option<ZsetRevIter> {
        let key = RawKey::open(ctx, name)?;
        // SAFETY: key is an open handle; the call fails (ERR) on a non-ZSET
        // or an empty range, which we report as no elements.
        let ok = unsafe {
            raw::RedisModule_ZsetLastInScoreRange.expect("zset range API exists on every server")(
                key.key,
                f64::NEG_INFINITY,
                f64::INFINITY,
                0,
                0,
            )
        };
        Some(ZsetRevIter {
            key,
            more: ok == raw::REDISMODULE_OK as i32,
        })
    }
}

impl Iterator for ZsetRevIter {
    type Item = (RedisString, f64);

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
        // SAFETY: as above; returns 0 once the start of the range is passed.
        self.more =
            unsafe { raw::RedisModule_ZsetRangePrev.expect("zset range API")(self.key.key) } != 0;
        Some((member, score))
    }
}

impl Drop for ZsetRevIter {
    fn drop(&mut self) {
        // SAFETY: stopping a range on an open key is always allowed (no-op if none).
        unsafe { raw::RedisModule_ZsetRangeStop.expect("zset range API")(self.key.key) };
    }
}

/// The member with the lowest score of a ZSET (`None` if missing or empty).
pub fn zset_first(ctx: &Context, name: &RedisString) -> Option<RedisString> {
    let key = RawKey::open(ctx, name)?;
    // SAFETY: key is an open handle; the range call fails on a non-ZSET or an
    // empty ZSET, and the range is stopped before the key is closed.
    unsafe {
        let ok = raw::RedisModule_ZsetFirstInScoreRange.expect("zset range API")(
            key.key,
            f64::NEG_INFINITY,
            f64::INFINITY,
            0,
            0,
        );
        let mut score = 0.0;
        let ele = if ok == raw::REDISMODULE_OK as i32 {
            raw::RedisModule_ZsetRangeCurrentElement.expect("zset range API")(key.key, &mut score)
        } else {
            std::ptr::null_mut()
        };
        raw::RedisModule_ZsetRangeStop.expect("zset range API")(key.key);
        (!ele.is_null()).then(|| RedisString::from_redis_module_string(ctx.ctx, ele))
    }
}

/// Elements of a ZSET (or length of any value); 0 when the key is missing.
pub fn value_length(ctx: &Context, name: &RedisString) -> usize {
    let Some(key) = RawKey::open(ctx, name) else {
        return 0;
    };
    // SAFETY: key is an open handle.
    unsafe { raw::RedisModule_ValueLength.expect("ValueLength exists on every server")(key.key) }
}

/// Declares each command's key spec (`RedisModule_SetCommandInfo`, Redis
/// 7.0+): read-only commands read their board key (RO ACCESS), so a user
/// with read-only key permissions (`%R~`) may run them; without it the
/// server derives RW ACCESS UPDATE from first/last/step for every command.
pub fn declare_key_specs(ctx: &Context) -> Result<(), String> {
    use redis_module::commands::{BeginSearch, FindKeys, KeySpec, KeySpecFlags};
    // SAFETY: the API table is written once at load time and only read afterwards.
    let (Some(get), Some(set)) = (unsafe { raw::RedisModule_GetCommand }, unsafe {
        raw::RedisModule_SetCommandInfo
    }) else {
        return Ok(()); // before 7.0: no key specs
    };
    static VERSION: raw::RedisModuleCommandInfoVersion = raw::RedisModuleCommandInfoVersion {
        version: 1,
        sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
        sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
        sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
    };
    let read = (KeySpecFlags::READ_ONLY | KeySpecFlags::ACCESS).bits();
    let write = (KeySpecFlags::READ_WRITE | KeySpecFlags::ACCESS | KeySpecFlags::UPDATE).bits();
    let remove = (KeySpecFlags::READ_WRITE | KeySpecFlags::DELETE).bits();
    // (command, key-spec flags, ACL categories where the server can set them: 7.2+, Valkey).
    let specs = [
        ("hot.publish", write, c"write fast"),
        ("hot.view", write, c"write"),
        ("hot.top", read, c"read"),
        ("hot.stats", read, c"read fast"),
        ("rank.create", write, c"write fast"),
        ("rank.incr", write, c"write fast"),
        ("rank.set", write, c"write fast"),
        ("rank.score", read, c"read fast"),
        ("rank.rank", read, c"read fast"),
        ("rank.range", read, c"read"),
        ("rank.rem", remove, c"write fast"),
        ("rank.card", read, c"read fast"),
        ("rank.around", read, c"read"),
        ("rank.rangebyscore", read, c"read"),
        ("rank.mincr", write, c"write"),
    ];
    // SAFETY: the API table is written once at load time and only read afterwards.
    let set_categories = unsafe { raw::RedisModule_SetCommandACLCategories };
    for (name, flags, categories) in specs {
        let spec = KeySpec::new(
            None,
            KeySpecFlags::from_bits_truncate(flags),
            BeginSearch::new_index(1),
            FindKeys::new_range(0, 1, 0),
        );
        let mut key_specs = redis_module::commands::get_redis_key_spec(vec![spec]);
        let cname = std::ffi::CString::new(name).expect("name");
        // SAFETY: ctx is the load-time context; the info struct and the key
        // spec array (zero-terminated) live until SetCommandInfo returns,
        // which copies them.
        let ok = unsafe {
            let cmd = get(ctx.ctx, cname.as_ptr());
            if cmd.is_null() {
                return Err(format!("no command {name}"));
            }
            let mut info: raw::RedisModuleCommandInfo = std::mem::zeroed();
            info.version = &VERSION;
            info.key_specs = key_specs.as_mut_ptr();
            set(cmd, &mut info)
        };
        if ok != raw::REDISMODULE_OK as i32 {
            return Err(format!("SetCommandInfo {name} failed"));
        }
        if let Some(set_cat) = set_categories {
            // SAFETY: as above; the command exists and the string is NUL-terminated.
            let ok = unsafe { set_cat(get(ctx.ctx, cname.as_ptr()), categories.as_ptr()) };
            if ok != raw::REDISMODULE_OK as i32 {
                return Err(format!("SetCommandACLCategories {name} failed"));
            }
        }
    }
    Ok(())
}

/// The score of `member` in a ZSET (`RedisModule_ZsetScore`): `None` when
/// the key or the member is missing. The caller has checked the key's type.
pub fn zset_score(ctx: &Context, name: &RedisString, member: &RedisString) -> Option<f64> {
    let key = RawKey::open(ctx, name)?;
    let mut score = 0.0;
    // SAFETY: key is an open handle, member a live string; ERR on a missing
    // member or a non-ZSET leaves `score` unused.
    let ok =
        unsafe { raw::RedisModule_ZsetScore.expect("zset API")(key.key, member.inner, &mut score) };
    (ok == raw::REDISMODULE_OK as i32).then_some(score)
}

/// `ZADD name score member` through the low-level API, with its effect
/// replicated as exactly that command (the score as its shortest exact
/// text) and a `zadd` keyspace event, as the ZADD command would send. The
/// caller has checked that the key is a ZSET or empty.
pub fn zadd_replicated(
    ctx: &Context,
    name: &RedisString,
    score: f64,
    member: &RedisString,
) -> Result<bool, String> {
    let key = RawKey::open_mode(
        ctx,
        name,
        (raw::REDISMODULE_READ | raw::REDISMODULE_WRITE) as i32,
    )
    .ok_or_else(|| "ERR cannot open the board key".to_string())?;
    let mut flags: i32 = 0;
    // SAFETY: key is open for writing; member is live; ZsetAdd copies it.
    let ok = unsafe {
        raw::RedisModule_ZsetAdd.expect("zset API")(key.key, score, member.inner, &mut flags)
    };
    drop(key); // Closing the key signals the change to WATCH.
    if ok != raw::REDISMODULE_OK as i32 {
        return Err("ERR could not add to the ZSET".into());
    }
    let text = crate::parse::format_score(score);
    // SAFETY: ctx is the running command's context; the format "sbs" takes a
    // string, a (pointer, length) buffer and a string, all live for the call.
    unsafe {
        raw::RedisModule_Replicate.expect("Replicate exists on every server")(
            ctx.ctx,
            c"ZADD".as_ptr(),
            c"sbs".as_ptr(),
            name.inner,
            text.as_ptr(),
            text.len(),
            member.inner,
        );
        if let Some(notify) = raw::RedisModule_NotifyKeyspaceEvent {
            notify(
                ctx.ctx,
                raw::REDISMODULE_NOTIFY_ZSET,
                c"zadd".as_ptr(),
                name.inner,
            );
        }
    }
    // Whether the member was new.
    Ok(flags & raw::REDISMODULE_ZADD_ADDED as i32 != 0)
}

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
