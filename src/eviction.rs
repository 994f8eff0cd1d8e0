//! Which `maxmemory-policy` can evict a board's identity keys, and the
//! module's view of the server's policy. Pure Rust, no Redis: the glue
//! (`config::follow_eviction`) reads `maxmemory-policy` and `maxmemory` at
//! load time and after every CONFIG SET of either, and stores the result
//! here; commands read it from an atomic, never with a CONFIG GET.
//!
//! A board is several keys. Its **identity keys** say how to read its data:
//! the HOT board record `K\0board` (settings, formula fingerprint), the RANK
//! layout `K\0layout` (resolution, range, order, periods) and the HOT epoch
//! key `K\0ep` of a board made again after HOT.DROP. None has a TTL. So:
//! - `noeviction`, or no `maxmemory`: nothing is evicted (writes fail with
//!   OOM instead);
//! - `volatile-*`: only keys with a TTL are evicted: per-article counters,
//!   HyperLogLogs and meta hashes, dedup shards, visitor counters, takedown
//!   tombstones, RANK period boards; never an identity key (nor a board
//!   ZSET, unless a user gave it a TTL);
//! - `allkeys-*` (and any policy this module does not know): any key,
//!   identity keys included, apart from the data they describe.
//!
//! See docs/eviction.md.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Which keys a policy may evict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// None: `noeviction`, or `maxmemory` is 0 (no limit).
    Nothing,
    /// Only keys with a TTL (`volatile-lru`, `volatile-lfu`,
    /// `volatile-random`, `volatile-ttl`).
    Volatile,
    /// Any key (`allkeys-lru`, `allkeys-lfu`, `allkeys-random`, and any
    /// policy not listed above, conservatively).
    AllKeys,
}

impl Reach {
    /// The keys `policy` (as CONFIG GET shows it, any case) may evict with
    /// `maxmemory` bytes set (0: no limit, nothing is evicted).
    pub fn of(policy: &str, maxmemory: u64) -> Reach {
        let p = policy.to_ascii_lowercase();
        if maxmemory == 0 || p == "noeviction" {
            Reach::Nothing
        } else if p.starts_with("volatile-") {
            Reach::Volatile
        } else {
            Reach::AllKeys
        }
    }

    /// Whether the policy may evict a board's identity keys apart from its
    /// data: then hotrank creates no board implicitly (see docs/eviction.md).
    pub fn unsafe_for_boards(self) -> bool {
        self == Reach::AllKeys
    }
}

/// The server's policy as last read, whether it is unsafe for boards, and
/// whether it may evict anything at all.
static UNSAFE: AtomicBool = AtomicBool::new(false);
static EVICTS: AtomicBool = AtomicBool::new(false);
static POLICY: Mutex<String> = Mutex::new(String::new());

/// Stores the policy read from the server. Returns whether the warning
/// should be logged now: the policy became unsafe, or changed to another
/// unsafe one (so the warning is logged once per change, not per read).
pub fn store(policy: &str, maxmemory: u64) -> bool {
    let reach = Reach::of(policy, maxmemory);
    EVICTS.store(reach != Reach::Nothing, Ordering::Relaxed);
    let unsafe_now = reach.unsafe_for_boards();
    let was_unsafe = UNSAFE.swap(unsafe_now, Ordering::Relaxed);
    let mut p = POLICY.lock().unwrap_or_else(|e| e.into_inner());
    let changed = *p != policy;
    *p = policy.to_string();
    unsafe_now && (!was_unsafe || changed)
}

/// Whether the server's policy may evict board identity keys (one atomic
/// load: cheap enough for every write).
pub fn is_unsafe() -> bool {
    UNSAFE.load(Ordering::Relaxed)
}

/// Whether the server's policy may evict keys at all (a `volatile-*` or
/// `allkeys-*` one with `maxmemory` set): then an article's counters may
/// go before retention expires them (one atomic load).
pub fn may_evict() -> bool {
    EVICTS.load(Ordering::Relaxed)
}

/// The server's `maxmemory-policy` as last read (empty before load).
pub fn policy() -> String {
    POLICY.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The warning logged when the policy becomes unsafe for boards.
pub fn warning(policy: &str) -> String {
    format!(
        "maxmemory-policy {policy} with maxmemory set may evict a board's identity keys \
         (HOT board record, RANK layout) apart from its data; such a board then refuses reads and \
         writes until HOT.REPAIR / RANK.REPAIR, and boards are not created implicitly \
         (use HOT.CREATE / RANK.CREATE). Use noeviction or a volatile-* policy to keep boards \
         whole (docs/eviction.md)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allkeys_policies_with_a_limit_are_unsafe() {
        for (p, m, want) in [
            ("noeviction", 1 << 20, Reach::Nothing),
            ("allkeys-lru", 0, Reach::Nothing),
            ("volatile-lru", 1 << 20, Reach::Volatile),
            ("volatile-lfu", 1, Reach::Volatile),
            ("volatile-random", 1, Reach::Volatile),
            ("volatile-ttl", 1, Reach::Volatile),
            ("allkeys-lru", 1, Reach::AllKeys),
            ("allkeys-lfu", 1, Reach::AllKeys),
            ("allkeys-random", 1, Reach::AllKeys),
            ("ALLKEYS-LRU", 1, Reach::AllKeys),
            ("some-future-policy", 1, Reach::AllKeys),
        ] {
            assert_eq!(Reach::of(p, m), want, "{p} {m}");
            assert_eq!(Reach::of(p, m).unsafe_for_boards(), want == Reach::AllKeys);
        }
    }

    #[test]
    fn the_warning_is_due_once_per_change() {
        assert!(!store("noeviction", 100));
        assert!(!is_unsafe());
        assert!(store("allkeys-lru", 100));
        assert!(is_unsafe());
        assert!(!store("allkeys-lru", 200), "same policy: no second warning");
        assert!(store("allkeys-lfu", 200), "another unsafe policy");
        assert!(!store("allkeys-lfu", 0), "no limit: safe");
        assert!(!is_unsafe());
        assert!(store("allkeys-lfu", 10), "unsafe again");
        assert_eq!(policy(), "allkeys-lfu");
        assert!(warning("allkeys-lru").contains("allkeys-lru"));
    }
}
