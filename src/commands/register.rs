//! Registers the command table ([`super::table::COMMANDS`]) with the server
//! through the generic primitives of [`crate::ffi`] (which knows nothing of
//! the table): creates each command, then sets its key spec, docs
//! ([`crate::docs`]) and ACL categories. Also defines [`crate::command!`],
//! the macro that makes one table row and its server callback.

use super::table::{KeyAccess, COMMANDS};
use crate::ffi;
use redis_module::Context;

/// A row of [`super::table::COMMANDS`]: `command!(name, handler, flags, key
/// access, ACL categories)`. It defines the row's callback, a function that
/// runs the handler behind the panic guard ([`super::guard`]: a panic
/// becomes an error reply, never an abort of the server) through
/// [`crate::ffi::dispatch`].
#[macro_export]
macro_rules! command {
    ($name:literal, $run:path, $flags:literal, $key:ident, $cats:literal) => {
        $crate::commands::table::Command {
            name: $name,
            flags: $flags,
            key: $key,
            categories: $cats,
            func: {
                extern "C" fn func(
                    ctx: *mut redis_module::raw::RedisModuleCtx,
                    argv: *mut *mut redis_module::raw::RedisModuleString,
                    argc: std::os::raw::c_int,
                ) -> std::os::raw::c_int {
                    $crate::ffi::dispatch(ctx, argv, argc, |c, a| {
                        let reply = $crate::commands::guard(c, a, $run);
                        if reply.is_ok() {
                            const COUNTER: Option<&std::sync::atomic::AtomicU64> =
                                $crate::commands::register::counter($name, $flags);
                            if let Some(counter) = COUNTER {
                                $crate::stats::add(counter, 1);
                            }
                        }
                        reply
                    })
                }
                func
            },
        }
    };
}

/// The INFO counter a command's successful calls add to, decided at compile
/// time from its name and flags: RANK commands count as reads when flagged
/// `readonly`, else as writes; other commands count nowhere here.
pub const fn counter(
    name: &str,
    flags: &std::ffi::CStr,
) -> Option<&'static std::sync::atomic::AtomicU64> {
    if !starts_with(name.as_bytes(), b"rank.") {
        return None;
    }
    if has_word(flags.to_bytes(), b"readonly") {
        Some(&crate::stats::RANK_READS)
    } else {
        Some(&crate::stats::RANK_WRITES)
    }
}

const fn starts_with(s: &[u8], prefix: &[u8]) -> bool {
    if s.len() < prefix.len() {
        return false;
    }
    let mut i = 0;
    while i < prefix.len() {
        if s[i] != prefix[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether the space-separated `words` hold `word`.
const fn has_word(words: &[u8], word: &[u8]) -> bool {
    let mut start = 0;
    while start < words.len() {
        let mut end = start;
        while end < words.len() && words[end] != b' ' {
            end += 1;
        }
        if end - start == word.len() {
            let (_, rest) = words.split_at(start);
            if starts_with(rest, word) {
                return true;
            }
        }
        start = end + 1;
    }
    false
}

/// Creates every command of the table. Error: the server refused one.
pub fn register_commands(ctx: &Context) -> Result<(), String> {
    for c in &COMMANDS {
        let keyed = c.key != KeyAccess::Keyless;
        ffi::create_command(ctx, c.name, c.func, c.flags, keyed)?;
    }
    Ok(())
}

/// Sets every command's key spec, tips, docs and ACL categories (see
/// [`ffi::set_command_info`]). Error: a command is missing or its key spec
/// refused.
pub fn set_command_info(ctx: &Context) -> Result<(), String> {
    for c in &COMMANDS {
        let docs = crate::docs::find(c.name);
        let flags = key_flags(c.key);
        ffi::set_command_info(ctx, c.name, flags, tips(c.key), docs, c.categories)?;
    }
    Ok(())
}

/// The command tips of a key access: a keyless command walks the keyspace
/// (HOT.BOARDS, RANK.BOARDS), so its output depends on the table's order
/// and it needs every node of a cluster to list everything: SCAN's own
/// tips.
fn tips(access: KeyAccess) -> Option<&'static std::ffi::CStr> {
    match access {
        KeyAccess::Keyless => {
            Some(c"nondeterministic_output request_policy:special response_policy:special")
        }
        _ => None,
    }
}

/// The board key's `KeySpecFlags` bits for a key access: read-only commands
/// read their board key (RO ACCESS), so a user with read-only key
/// permissions (`%R~`) may run them; without a spec the server derives RW
/// ACCESS UPDATE from first/last/step for every command.
/// `None` for a keyless command: no key spec.
fn key_flags(access: KeyAccess) -> Option<u32> {
    use redis_module::commands::KeySpecFlags as F;
    Some(match access {
        KeyAccess::Read => (F::READ_ONLY | F::ACCESS).bits(),
        KeyAccess::Write => (F::READ_WRITE | F::ACCESS | F::UPDATE).bits(),
        KeyAccess::Remove => (F::READ_WRITE | F::DELETE).bits(),
        KeyAccess::Delete => (F::REMOVE | F::DELETE).bits(),
        KeyAccess::Keyless => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_commands_count_as_reads_or_writes_by_their_flags() {
        let is = |c: Option<&std::sync::atomic::AtomicU64>, want: &std::sync::atomic::AtomicU64| {
            c.is_some_and(|c| std::ptr::eq(c, want))
        };
        assert!(is(
            counter("rank.range", c"readonly"),
            &crate::stats::RANK_READS
        ));
        assert!(is(
            counter("rank.score", c"readonly fast"),
            &crate::stats::RANK_READS
        ));
        assert!(is(
            counter("rank.incr", c"write deny-oom fast"),
            &crate::stats::RANK_WRITES
        ));
        assert!(counter("hot.top", c"readonly").is_none());
        assert!(!has_word(b"readonlyx fast", b"readonly"));
        assert!(has_word(b"fast readonly", b"readonly"));
    }
}
