//! The names of RANK boards' layout keys, kept from one command to the next:
//! a RANK command on a board seen before takes its layout key's name from
//! here (one more reference to the same string) instead of building a new
//! string and freeing it after the command.
//!
//! **Never stale.** A layout key's name depends only on the board's name
//! ([`crate::keys::derived`] of [`Kind::Layout`], epoch 0), never on what
//! any key holds, so nothing a command, an expiry, a flush or a load does
//! can make an entry wrong: the layout key itself is still opened and read
//! by every command, as without the cache.
//!
//! **Same permissions.** The name is ACL-checked for the caller on every
//! command, hit or miss.
//!
//! The cache holds [`SLOTS`] names, each at the slot its board's name
//! hashes to (a later board takes the slot of an earlier one with the same
//! hash): boards in use at the same time on one node beyond that may miss.

use super::{BoardCtx, Res};
use crate::ffi::KeptString;
use crate::keys::Kind;
use redis_module::RedisString;
use std::sync::Mutex;

/// Number of names kept.
const SLOTS: usize = 64;

/// One board's layout key name.
struct Entry {
    board: Vec<u8>,
    name: KeptString,
}

static CACHE: Mutex<[Option<Entry>; SLOTS]> = Mutex::new([const { None }; SLOTS]);

/// The slot of `board` (FNV-1a).
fn slot(board: &[u8]) -> usize {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in board {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    (h ^ (h >> 32)) as usize % SLOTS
}

/// The name of `b`'s layout key, ACL-checked for the caller (`write`: write
/// access, else read), as [`BoardCtx::derived`] gives it. Error: `NOPERM …`.
pub fn layout_name(b: &BoardCtx, write: bool) -> Res<RedisString> {
    // RANK boards have no epoch; only a HOT board's names carry one.
    if b.epoch() != 0 {
        return b.derived(Kind::Layout, &[], write);
    }
    let board = b.key.as_slice();
    let i = slot(board);
    // Never waits: the lock is only taken here, briefly, by the thread
    // holding the server's lock; if it is somehow busy, the name is built.
    if let Ok(cache) = CACHE.try_lock() {
        if let Some(e) = cache[i].as_ref().filter(|e| e.board == board) {
            let name = e.name.share();
            drop(cache);
            b.check(&name, write)?;
            return Ok(name);
        }
    }
    let name = b.derived(Kind::Layout, &[], write)?;
    let entry = Entry {
        board: board.to_vec(),
        name: KeptString::keep(&name),
    };
    let old = CACHE.try_lock().ok().map(|mut c| c[i].replace(entry));
    // Released outside the lock.
    drop(old);
    Ok(name)
}

/// Releases every kept name (MODULE UNLOAD).
pub fn clear() {
    let old = match CACHE.lock() {
        Ok(mut c) => std::mem::replace(&mut *c, [const { None }; SLOTS]),
        Err(e) => std::mem::replace(&mut *e.into_inner(), [const { None }; SLOTS]),
    };
    drop(old);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_spread_boards() {
        let seen: std::collections::HashSet<usize> = (0..64)
            .map(|i| slot(format!("lb:{{{i}}}").as_bytes()))
            .collect();
        assert!(seen.len() > 32, "{}", seen.len());
        assert!(seen.iter().all(|&s| s < SLOTS));
    }
}
