//! Board-level derived key names, kept from one command to the next: the
//! names of a board's keys that have no parts (the HOT board record
//! `K\0board` at epoch 0 and at the board's epoch, the epoch key, the
//! trending ZSET, the publish and article indexes, RANK's layout key…).
//! A command on a board seen before takes such a name from here (one more
//! reference to the same string) instead of building a new string and
//! freeing it after the command. Names with parts (an article's PV, UV and
//! meta keys, a dedup shard, a visitor's counter) are always built.
//!
//! **Never stale.** A kept name depends only on the board's name, the
//! key's kind and, for a kind that carries one ([`Kind::has_epoch`]), the
//! epoch ([`crate::keys::derived_epoch_into`]), and all three are the
//! entry's key. It never depends on what any key holds, so nothing a
//! command, an expiry, a flush, a SWAPDB, a RESTORE or a load does can make
//! an entry wrong: the key itself is still opened and read by every
//! command, as without the cache, and the epoch is still read from the
//! keys first (a board dropped and made again at a new epoch looks up
//! other entries).
//!
//! **Same permissions.** The caller ([`super::BoardCtx::derived`])
//! ACL-checks the name for the calling user on every command, hit or miss.
//!
//! The cache holds [`SLOTS`] names, each at the slot its (board, epoch,
//! kind) hashes to (a later name takes the slot of an earlier one with the
//! same hash): beyond that, names in use at the same time on one node may
//! miss, and are then built as without the cache.

use crate::ffi::KeptString;
use crate::keys::Kind;
use redis_module::RedisString;
use std::sync::Mutex;

/// Number of names kept (a few per board in use).
const SLOTS: usize = 256;

/// One kept name and what it is the name of.
struct Entry {
    board: Vec<u8>,
    /// The epoch in the name (0 for a kind without one).
    epoch: i64,
    kind: Kind,
    name: KeptString,
}

static CACHE: Mutex<[Option<Entry>; SLOTS]> = Mutex::new([const { None }; SLOTS]);

/// The slot of (`board`, `epoch`, `kind`): FNV-1a over the board's bytes,
/// then the epoch and the kind, each as one word.
fn slot(board: &[u8], epoch: i64, kind: Kind) -> usize {
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in board {
        h = (h ^ u64::from(b)).wrapping_mul(PRIME);
    }
    h = (h ^ epoch as u64).wrapping_mul(PRIME);
    h = (h ^ kind as u64).wrapping_mul(PRIME);
    (h ^ (h >> 32)) as usize % SLOTS
}

/// The name of `board`'s derived key of kind `kind` with no parts, at
/// `epoch` (ignored for a kind without one): the kept one, else the one
/// `build` makes (which must be that name), kept for the next command. Not
/// ACL-checked here: the caller checks it.
#[inline(never)]
pub fn board_name(
    board: &[u8],
    epoch: i64,
    kind: Kind,
    build: impl FnOnce() -> RedisString,
) -> RedisString {
    let epoch = if kind.has_epoch() { epoch } else { 0 };
    let i = slot(board, epoch, kind);
    // Never waits: the lock is only taken here and in `clear`, briefly, by
    // the thread holding the server's lock; if it is somehow busy, the name
    // is built.
    if let Ok(cache) = CACHE.try_lock() {
        let hit = cache[i]
            .as_ref()
            .filter(|e| e.kind == kind && e.epoch == epoch && e.board == board);
        if let Some(e) = hit {
            return e.name.share();
        }
    }
    let name = build();
    let entry = Entry {
        board: board.to_vec(),
        epoch,
        kind,
        name: KeptString::keep(&name),
    };
    let old = CACHE.try_lock().ok().map(|mut c| c[i].replace(entry));
    // Released outside the lock.
    drop(old);
    name
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
    fn slots_spread_boards_epochs_and_kinds() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..64 {
            let board = format!("lb:{{{i}}}");
            seen.insert(slot(board.as_bytes(), 0, Kind::Layout));
            seen.insert(slot(board.as_bytes(), 3, Kind::HotBoard));
        }
        assert!(seen.len() > 80, "{}", seen.len());
        assert!(seen.iter().all(|&s| s < SLOTS));
        // The epoch and the kind are part of the slot's key.
        let b = b"hot:{n}";
        let by_epoch: std::collections::HashSet<usize> =
            (0..16).map(|e| slot(b, e, Kind::HotBoard)).collect();
        assert!(by_epoch.len() > 8, "{}", by_epoch.len());
        assert_ne!(slot(b, 0, Kind::HotBoard), slot(b, 0, Kind::Trending));
    }
}
