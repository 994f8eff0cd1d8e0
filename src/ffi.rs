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
pub struct ModuleAlloc;

// SAFETY: both branches delegate to a correct allocator; the choice cannot
// change between an allocation and its free (see above).
unsafe impl GlobalAlloc for ModuleAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if { raw::RedisModule_Alloc }.is_some() {
            redis_module::alloc::RedisAlloc.alloc(layout)
        } else {
            System.alloc(layout)
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if { raw::RedisModule_Free }.is_some() {
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

/// Checks the calling user's ACL key permissions on a key the command derives
/// itself (Redis checks only the declared board key). `write` asks for write
/// access, otherwise read access. Calls with no user attached (AOF loading,
/// replication stream) are allowed, as Redis allows them.
///
/// Error: `NOPERM this user has no permissions to access the '<key>' key`
/// (the shape of Redis's own message; the key is shown lossily as UTF-8).
pub fn check_key_acl(ctx: &Context, key: &RedisString, write: bool) -> Result<(), String> {
    // SAFETY: the API table is written once at load time and only read afterwards.
    let api = unsafe {
        (
            raw::RedisModule_GetCurrentUserName,
            raw::RedisModule_GetModuleUserFromUserName,
            raw::RedisModule_ACLCheckKeyPermissions,
            raw::RedisModule_FreeModuleUser,
        )
    };
    let (Some(get_name), Some(get_user), Some(check), Some(free_user)) = api else {
        return Ok(());
    };
    // SAFETY: ctx is the live context of the running command.
    let name = unsafe { get_name(ctx.ctx) };
    if name.is_null() {
        return Ok(());
    }
    // Owns the returned name so it is freed on every path.
    let name = RedisString::from_redis_module_string(ctx.ctx, name);
    // SAFETY: name is a valid RedisModuleString owned above.
    let user = unsafe { get_user(name.inner) };
    if user.is_null() {
        return Ok(());
    }
    let perm = if write {
        AclPermissions::INSERT | AclPermissions::UPDATE | AclPermissions::DELETE
    } else {
        AclPermissions::ACCESS
    };
    // SAFETY: user is a valid module user until freed below; key is a live string.
    let status = unsafe { check(user, key.inner, perm.bits()) };
    // SAFETY: user came from GetModuleUserFromUserName and is freed once.
    unsafe { free_user(user) };
    if status == raw::REDISMODULE_OK as i32 {
        Ok(())
    } else {
        Err(format!(
            "NOPERM this user has no permissions to access the '{}' key",
            String::from_utf8_lossy(key.as_slice())
        ))
    }
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
