//! Compact dedup state: which (article, visitor) pairs had a counted view in
//! the last window. Pure Rust, no Redis.
//!
//! Instead of one `SET … NX EX` key per pair (about 100 bytes), pairs are
//! kept as 12-byte entries appended to a few shared strings: the view time
//! `t` falls in generation `g = t div W` (W = the dedup window), the pair's
//! 64-bit fingerprint picks one of `S` shards, and the entry
//! `fingerprint (8 bytes LE) | t - g·W in ms (4 bytes LE)` is appended to the
//! string of (g, shard). A counted view within the last W lies in generation
//! g or g-1, so a lookup scans two short strings. Each string expires 2·W
//! after it is created, so the state is bounded and clears itself.

/// Bytes per entry.
pub const ENTRY: usize = 12;
/// Longest dedup window this layout supports: offsets are u32 milliseconds.
pub const MAX_WINDOW_MS: i64 = u32::MAX as i64;

/// 64-bit FNV-1a fingerprint of a pair; the article is length-prefixed so
/// (ab, c) and (a, bc) differ. Stable across builds and platforms.
pub fn fingerprint(article: &[u8], visitor: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(&(article.len() as u64).to_le_bytes());
    eat(article);
    eat(visitor);
    h
}

/// The generation of a view time.
pub fn generation(t_ms: i64, window_ms: i64) -> i64 {
    t_ms.div_euclid(window_ms)
}

/// The shard of a fingerprint among `shards`. The fingerprint is mixed
/// first (the splitmix64 finalizer, Steele et al. 2014): FNV-1a's bits alone
/// spread pairs unevenly over shards.
pub fn shard(fp: u64, shards: u32) -> u32 {
    (finalize(fp) % u64::from(shards.max(1))) as u32
}

/// The splitmix64 finalizer (Steele, Lea and Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014).
fn finalize(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// One step of splitmix64: the next pseudo-random value after `x` (feed
/// the result back for a sequence). Deterministic: the same `x` gives the
/// same value on every server.
pub fn mix(x: u64) -> u64 {
    finalize(x.wrapping_add(0x9e37_79b9_7f4a_7c15))
}

/// The entry recording a counted view at `t_ms`.
pub fn entry(fp: u64, t_ms: i64, window_ms: i64) -> [u8; ENTRY] {
    let off = (t_ms - generation(t_ms, window_ms) * window_ms) as u32;
    let mut e = [0u8; ENTRY];
    e[..8].copy_from_slice(&fp.to_le_bytes());
    e[8..].copy_from_slice(&off.to_le_bytes());
    e
}

/// The counted views of `fp` recorded in a generation's shard string (ms).
fn times_of(
    shard_bytes: &[u8],
    fp: u64,
    gen: i64,
    window_ms: i64,
) -> impl Iterator<Item = i64> + '_ {
    let want = fp.to_le_bytes();
    shard_bytes
        .chunks_exact(ENTRY)
        .filter(move |e| e[..8] == want)
        .map(move |e| gen * window_ms + i64::from(u32::from_le_bytes([e[8], e[9], e[10], e[11]])))
}

/// Whether a shard string has the layout this module writes: whole
/// 12-byte entries. Anything else (a value written by hand under a dedup
/// key's name) must be refused, never read misaligned.
pub fn well_formed(shard_bytes: &[u8]) -> bool {
    shard_bytes.len().is_multiple_of(ENTRY)
}

/// The generations whose shards can hold a counted view within the window
/// of a view at `t_ms`: the view's own, the one before, and the one after
/// when it has begun by `now_ms` (a view with `AT` in the past can be older
/// than counted views; a view at the clock never is).
pub fn generations(t_ms: i64, window_ms: i64, now_ms: i64) -> ([i64; 3], usize) {
    let g = generation(t_ms, window_ms);
    let next_begun = (g + 1).saturating_mul(window_ms) <= now_ms;
    ([g, g - 1, g + 1], if next_begun { 3 } else { 2 })
}

/// Whether a view at `t_ms` repeats a counted view of `fp` in one of the
/// given (generation, shard bytes) strings: see [`crate::hot::is_duplicate`]
/// for the rule (strictly less than the window before or after it).
pub fn seen_near(shards: &[(i64, &[u8])], fp: u64, t_ms: i64, window_ms: i64) -> bool {
    shards.iter().any(|(gen, bytes)| {
        times_of(bytes, fp, *gen, window_ms)
            .any(|c| crate::hot::is_duplicate(Some(c), t_ms, window_ms))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn fingerprint_separates_the_article_from_the_visitor() {
        assert_ne!(fingerprint(b"ab", b"c"), fingerprint(b"a", b"bc"));
        assert_eq!(fingerprint(b"a", b"v"), fingerprint(b"a", b"v"));
    }

    #[test]
    fn shards_are_evenly_used() {
        // 100,000 pairs over 512 shards: about 195 each; none more than twice that.
        let mut counts = vec![0u32; 512];
        for a in 0..100u32 {
            for v in 0..1000u32 {
                let fp = fingerprint(format!("art:{a}").as_bytes(), format!("vis:{v}").as_bytes());
                counts[shard(fp, 512) as usize] += 1;
            }
        }
        assert!(
            counts.iter().all(|&c| c > 100 && c < 400),
            "{:?}",
            counts.iter().max()
        );
    }

    #[test]
    fn entries_decode_to_their_view_time() {
        let w = 900_000;
        let t = 1_700_000_123_456;
        let fp = fingerprint(b"a", b"v");
        let e = entry(fp, t, w);
        let g = generation(t, w);
        assert_eq!(times_of(&e, fp, g, w).collect::<Vec<_>>(), vec![t]);
        assert_eq!(times_of(&e, fp ^ 1, g, w).count(), 0);
    }

    /// Simulates the generational store against the one-key-per-pair model.
    fn store_decides(views: &[(u8, u8, i64)], w: i64, shards: u32) -> Vec<bool> {
        let mut store: HashMap<(i64, u32), Vec<u8>> = HashMap::new();
        let mut out = Vec::new();
        let mut now = i64::MIN;
        for &(a, v, t) in views {
            now = now.max(t);
            let fp = fingerprint(&[a], &[v]);
            let s = shard(fp, shards);
            let (gens, n) = generations(t, w, now);
            let found: Vec<(i64, &[u8])> = gens[..n]
                .iter()
                .filter_map(|g| store.get(&(*g, s)).map(|b| (*g, b.as_slice())))
                .collect();
            let dup = seen_near(&found, fp, t, w);
            if !dup {
                store
                    .entry((generation(t, w), s))
                    .or_default()
                    .extend_from_slice(&entry(fp, t, w));
            }
            out.push(dup);
        }
        out
    }

    #[test]
    fn views_in_decreasing_time_are_duplicates_of_the_first() {
        let w = 900_000;
        let t = 1_700_000_000_000;
        let views: Vec<(u8, u8, i64)> = (0..20).map(|i| (1, 1, t - 1000 * i)).collect();
        let d = store_decides(&views, w, 16);
        assert!(!d[0]);
        assert!(d[1..].iter().all(|&x| x), "{d:?}");
    }

    #[test]
    fn a_shard_of_odd_length_is_not_well_formed() {
        assert!(well_formed(b""));
        assert!(well_formed(&[0u8; 24]));
        assert!(!well_formed(&[0u8; 13]));
    }

    proptest! {
        /// In any order of view times, the compact store decides exactly
        /// as a per-pair model holding every counted view time would: a
        /// view is a duplicate when it lies strictly within the window
        /// before or after any counted view of its pair.
        #[test]
        fn compact_store_matches_per_pair_model(
            views in prop::collection::vec((0u8..4, 0u8..4, 0i64..10_000_000), 1..200),
            w in 1i64..3_000_000,
            shards in 1u32..8,
        ) {
            let mut counted: HashMap<(u8, u8), Vec<i64>> = HashMap::new();
            let mut want = Vec::new();
            for &(a, v, t) in &views {
                let c = counted.entry((a, v)).or_default();
                let dup = c.iter().any(|&x| (t - x).abs() < w);
                if !dup { c.push(t); }
                want.push(dup);
            }
            prop_assert_eq!(store_decides(&views, w, shards), want);
        }
    }
}
