//! Compact dedup state: which (article, visitor) pairs had a counted view in
//! the last window. Pure Rust, no Redis.
//!
//! Instead of one `SET … NX EX` key per pair (about 100 bytes), pairs are
//! kept as 12-byte records appended to a few shared strings, one per
//! *shard*: the pair's 64-bit fingerprint picks one of `S` shards.
//!
//! **The shard string** (this version) holds *sections*. A section is a
//! 12-byte marker (the top 16 bits of its first 8 bytes set, which no
//! entry's fingerprint has; the section's generation and its end, see
//! [`marker`]) followed by entries
//! `fingerprint (8 bytes LE) | t - g·W in ms (4 bytes LE)`, where the view
//! time `t` falls in generation `g = t div W` (W = the dedup window).
//! A section *ends* two windows of server time after it is opened, rounded
//! up to a second (the marker holds that time, in unix seconds). A counted
//! view appends its entry to the last section when that section is of its
//! generation and ends at least one window later, else a new marker and
//! its entry: every write is one `APPEND` of 12 or 24 bytes
//! ([`plan_write`]). The string's expiry is the latest end of its
//! sections, so it moves (one `PEXPIREAT`) only when a section is opened,
//! and it is never read from the key. An ended section is ignored, and the
//! next counted view of the shard drops it (one rewrite of the string,
//! [`rewrite`]). So an entry lives at least one window of server time after
//! it is written, a view scans one string whatever its `AT`, and views
//! replayed out of order dedup as views in order: sections are kept by
//! server time, not by view time.
//!
//! **The old layout** (up to hotrank 0.2.0; read only, for up to two
//! windows after an upgrade): one string per (generation, shard), of
//! entries only, expiring two windows after it was created; a view at `t`
//! read the strings of generations `g`, `g-1` and, when begun, `g+1`
//! ([`generations`], [`seen_near`]). A view reads them only while the new
//! string is missing or has a live section whose marker has
//! [`UPGRADED_BIT`] (old strings of the view's generations existed when
//! the new string was made).

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

/// The top 16 bits of a record that opens a section (see [`marker`]): no
/// entry stores a fingerprint with them ([`stored`]).
pub const MARK_TAG: u64 = 0xffff << 48;
/// The bit of a marker that says strings of the old layout existed when
/// the section was made: while that section lives, views also read them.
pub const UPGRADED_BIT: u64 = 1 << 47;
/// Bytes of a section marker (one record).
pub const MARKER: usize = ENTRY;
/// The longest single append: a marker and an entry.
pub const MAX_APPEND: usize = MARKER + ENTRY;
/// Bits of the generation in a marker (two's complement).
const GEN_BITS: u32 = 47;

/// Whether the first 8 bytes of a record (LE) make it a section marker.
pub fn is_marker(x: u64) -> bool {
    x & MARK_TAG == MARK_TAG
}

/// The fingerprint an entry of the shard string stores for a pair: its
/// fingerprint, except that one whose top 16 bits are all set (a chance of
/// 2⁻¹⁶) has bit 48 cleared, so no entry reads as a marker.
pub fn stored(fp: u64) -> u64 {
    if is_marker(fp) {
        fp & !(1 << 48)
    } else {
        fp
    }
}

/// The end of a section opened at server time `now_ms` with window
/// `window_ms`: two windows later, rounded up to a whole second (unix ms),
/// within what a marker holds (unix seconds as a u32, up to 2106).
pub fn section_end(now_ms: i64, window_ms: i64) -> i64 {
    let at = now_ms.saturating_add(window_ms.saturating_mul(2));
    at.div_euclid(1000)
        .saturating_add(i64::from(at.rem_euclid(1000) != 0))
        .clamp(0, i64::from(u32::MAX))
        * 1000
}

/// The marker of a section of generation `gen` that ends at `until` (unix
/// ms, server time, a whole second from [`section_end`]): one record,
/// `MARK_TAG | upgraded bit 47 | gen in bits 0–46 (8 bytes LE)` then
/// `until in unix seconds (4 bytes LE u32)`. A view time's generation
/// always fits 47 bits (`AT` stops at year 9999, the window is ≥ 1 s).
pub fn marker(gen: i64, until: i64, upgraded: bool) -> [u8; MARKER] {
    let g = (gen as u64) & ((1 << GEN_BITS) - 1);
    let head = MARK_TAG | if upgraded { UPGRADED_BIT } else { 0 } | g;
    let secs = until.div_euclid(1000).clamp(0, i64::from(u32::MAX)) as u32;
    let mut m = [0u8; MARKER];
    m[..8].copy_from_slice(&head.to_le_bytes());
    m[8..].copy_from_slice(&secs.to_le_bytes());
    m
}

/// A marker record's (generation, end in unix ms, upgraded); `None` for an
/// entry.
fn decode_marker(rec: &[u8]) -> Option<(i64, i64, bool)> {
    let head = u64::from_le_bytes(le8(rec));
    if !is_marker(head) {
        return None;
    }
    let shift = 64 - GEN_BITS;
    let gen = ((head << shift) as i64) >> shift;
    let secs = u32::from_le_bytes([rec[8], rec[9], rec[10], rec[11]]);
    Some((gen, i64::from(secs) * 1000, head & UPGRADED_BIT != 0))
}

/// One section of a shard string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Section {
    gen: i64,
    until: i64,
    upgraded: bool,
    /// Byte range of the section (marker included) in the string.
    start: usize,
    end: usize,
}

/// The sections of a well-formed shard string, in order; `None` when the
/// string is not one this module writes (not whole records, or an entry
/// before the first marker).
fn sections(bytes: &[u8]) -> Option<Vec<Section>> {
    if !bytes.len().is_multiple_of(ENTRY) {
        return None;
    }
    let mut out: Vec<Section> = Vec::new();
    for (n, rec) in bytes.chunks_exact(ENTRY).enumerate() {
        let i = n * ENTRY;
        if let Some((gen, until, upgraded)) = decode_marker(rec) {
            if let Some(last) = out.last_mut() {
                last.end = i;
            }
            out.push(Section {
                gen,
                until,
                upgraded,
                start: i,
                end: bytes.len(),
            });
        } else if out.is_empty() {
            return None;
        }
    }
    Some(out)
}

fn le8(b: &[u8]) -> [u8; 8] {
    [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]
}

/// What a view found in its pair's shard string ([`scan`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// A live entry of the pair lies strictly within the window of the view.
    pub duplicate: bool,
    /// The generation and end (unix ms) of the last live section, if any.
    pub last: Option<(i64, i64)>,
    /// The latest end of a live section (unix ms): the string's expiry,
    /// which every write keeps there.
    pub max_until: Option<i64>,
    /// Some section has ended (its end ≤ the server clock): the next
    /// write drops it ([`rewrite`]).
    pub ended: bool,
    /// A live section says strings of the old layout may still exist.
    pub upgraded: bool,
}

/// Scans a shard string for a view of the pair `fp` at `t_ms` (unix ms)
/// with the server clock at `now_ms`; `window_ms` ≥ 1. `None` when the
/// string is not one this module writes: it must be refused, never read
/// misaligned nor appended to. One pass over the records, no allocation.
pub fn scan(bytes: &[u8], fp: u64, t_ms: i64, window_ms: i64, now_ms: i64) -> Option<Found> {
    if !bytes.len().is_multiple_of(ENTRY) {
        return None;
    }
    let want = stored(fp);
    let mut f = Found::default();
    let mut base: Option<i64> = None;
    let mut live = false;
    for rec in bytes.chunks_exact(ENTRY) {
        let x = u64::from_le_bytes(le8(rec));
        if is_marker(x) {
            let (gen, until, upgraded) = decode_marker(rec)?;
            live = until > now_ms;
            base = Some(gen.saturating_mul(window_ms));
            if live {
                f.last = Some((gen, until));
                f.max_until = Some(f.max_until.map_or(until, |m| m.max(until)));
                f.upgraded |= upgraded;
            } else {
                f.ended = true;
            }
            continue;
        }
        let b = base?;
        if live && x == want {
            let off = i64::from(u32::from_le_bytes([rec[8], rec[9], rec[10], rec[11]]));
            f.duplicate |= crate::hot::is_duplicate(Some(b.saturating_add(off)), t_ms, window_ms);
        }
    }
    Some(f)
}

/// How a counted view writes its entry into its pair's shard string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// The string is new: `SET name value PXAT expire_at`.
    Create { value: Vec<u8>, expire_at: i64 },
    /// `APPEND name bytes` (12 or 24 bytes), then `PEXPIREAT name at`
    /// when `expire_at` is set (a section that ends later was opened).
    Append {
        bytes: [u8; MAX_APPEND],
        len: usize,
        expire_at: Option<i64>,
    },
    /// Ended sections dropped: `SET name value PXAT expire_at`.
    Rewrite { value: Vec<u8>, expire_at: i64 },
}

/// The write of a counted view of pair `fp` at `t_ms`, server clock
/// `now_ms`, window `window_ms` ≥ 1. `existing`: the shard string and what
/// [`scan`] found in it, `None` when the string is missing. `upgraded`:
/// for a new string, whether old layout strings of the view's generations
/// exist (its section's marker then has [`UPGRADED_BIT`]).
///
/// The entry goes into the last live section when it is of the view's
/// generation and ends at least one window from now; otherwise a new
/// section is opened, ending two windows from now ([`section_end`]). The string's expiry is
/// kept at the latest end of its sections, so it moves only when a section
/// is opened, and an entry lives at least one window of server time.
/// Decided from these values only (not the key's TTL), so a replica or an
/// AOF load given the master's clock decides the same.
pub fn plan_write(
    existing: Option<(&[u8], Found)>,
    fp: u64,
    t_ms: i64,
    window_ms: i64,
    now_ms: i64,
    upgraded: bool,
) -> Write {
    let gen = generation(t_ms, window_ms);
    let e = entry(stored(fp), t_ms, window_ms);
    let ahead = section_end(now_ms, window_ms);
    let Some((bytes, found)) = existing else {
        let mut value = Vec::with_capacity(MAX_APPEND);
        value.extend_from_slice(&marker(gen, ahead, upgraded));
        value.extend_from_slice(&e);
        return Write::Create {
            value,
            expire_at: ahead,
        };
    };
    let opens = match found.last {
        Some((g, until)) => g != gen || until.saturating_sub(now_ms) < window_ms,
        None => true,
    };
    // The latest end after this write, and whether it moved.
    let (end, moved) = match (found.max_until, opens) {
        (Some(m), false) => (m, false),
        (Some(m), true) if m >= ahead => (m, false),
        _ => (ahead, true),
    };
    if found.ended {
        let mut value = rewrite(bytes, now_ms);
        if opens {
            value.extend_from_slice(&marker(gen, ahead, false));
        }
        value.extend_from_slice(&e);
        return Write::Rewrite {
            value,
            expire_at: end,
        };
    }
    let mut out = [0u8; MAX_APPEND];
    let mut len = 0;
    if opens {
        out[..MARKER].copy_from_slice(&marker(gen, ahead, false));
        len = MARKER;
    }
    out[len..len + ENTRY].copy_from_slice(&e);
    Write::Append {
        bytes: out,
        len: len + ENTRY,
        expire_at: moved.then_some(end),
    }
}

/// The live sections of a well-formed shard string (those whose end is
/// after `now_ms`), in order: the string with its ended sections dropped.
pub fn rewrite(bytes: &[u8], now_ms: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + MAX_APPEND);
    for s in sections(bytes).unwrap_or_default() {
        if s.until > now_ms {
            out.extend_from_slice(&bytes[s.start..s.end]);
        }
    }
    out
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

    /// The per-pair model: a view is a duplicate when it lies strictly
    /// within the window before or after a counted view of its pair.
    fn model_decides(views: impl Iterator<Item = (u8, u8, i64)>, w: i64) -> Vec<bool> {
        let mut counted: HashMap<(u8, u8), Vec<i64>> = HashMap::new();
        views
            .map(|(a, v, t)| {
                let c = counted.entry((a, v)).or_default();
                let dup = c.iter().any(|&x| (t - x).abs() < w);
                if !dup {
                    c.push(t);
                }
                dup
            })
            .collect()
    }

    /// Shard → (string, expiry in unix ms).
    type Strings = HashMap<u32, (Vec<u8>, i64)>;

    /// Simulates the one-string-per-shard store: `views` are
    /// (article, visitor, view time, server clock); returns each view's
    /// decision and the strings at the end. A string's expiry is kept as
    /// the server would: a string whose expiry has passed reads as missing.
    fn shard_store_decides(
        views: &[(u8, u8, i64, i64)],
        w: i64,
        shards: u32,
    ) -> (Vec<bool>, Strings) {
        let mut store: Strings = HashMap::new();
        let mut out = Vec::new();
        for &(a, v, t, now) in views {
            let fp = fingerprint(&[a], &[v]);
            let s = shard(fp, shards);
            if store.get(&s).is_some_and(|(_, at)| *at <= now) {
                store.remove(&s);
            }
            let found = store
                .get(&s)
                .map(|(b, _)| scan(b, fp, t, w, now).expect("well formed"));
            let dup = found.is_some_and(|f| f.duplicate);
            if !dup {
                let existing = store
                    .get(&s)
                    .map(|(b, _)| (b.as_slice(), found.unwrap_or_default()));
                let (value, at) = match plan_write(existing, fp, t, w, now, false) {
                    Write::Create { value, expire_at } | Write::Rewrite { value, expire_at } => {
                        (value, expire_at)
                    }
                    Write::Append {
                        bytes,
                        len,
                        expire_at,
                    } => {
                        let (mut b, at) = store.get(&s).cloned().expect("appended to");
                        b.extend_from_slice(&bytes[..len]);
                        (b, expire_at.unwrap_or(at))
                    }
                };
                store.insert(s, (value, at));
            }
            out.push(dup);
        }
        (out, store)
    }

    #[test]
    fn markers_round_trip_and_stored_fingerprints_avoid_them() {
        for (gen, until, up) in [
            (-3, 1_700_000_000_000, true),
            ((1 << 46) - 1, i64::from(u32::MAX) * 1000, false),
            (-(1 << 46), 0, true),
        ] {
            let m = marker(gen, until, up);
            let s = sections(&m).expect("a marker alone is a section");
            assert_eq!(s.len(), 1);
            assert_eq!((s[0].gen, s[0].until, s[0].upgraded), (gen, until, up));
        }
        let reserved = MARK_TAG | 5;
        assert!(is_marker(reserved) && !is_marker(stored(reserved)));
        assert_eq!(stored(reserved), reserved & !(1 << 48));
        assert_eq!(stored(7), 7);
        assert_eq!(section_end(1_000, 900_000), 1_801_000);
        assert_eq!(section_end(1_001, 900_000), 1_802_000);
        assert_eq!(section_end(i64::MAX, 900_000), i64::from(u32::MAX) * 1000);
    }

    #[test]
    fn strings_not_made_of_sections_are_refused() {
        let (w, t, now) = (900_000, 1_700_000_000_000, 1_700_000_000_000);
        let fp = fingerprint(b"a", b"v");
        assert!(scan(b"", fp, t, w, now).is_some());
        // Not whole records; an entry before any marker; a marker cut short.
        assert!(scan(&[0u8; 13], fp, t, w, now).is_none());
        assert!(scan(&entry(fp, t, w), fp, t, w, now).is_none());
        assert!(sections(&entry(fp, t, w)).is_none());
        let mut ok = marker(generation(t, w), now + w, false).to_vec();
        ok.extend_from_slice(&entry(stored(fp), t, w));
        let f = scan(&ok, fp, t + 1, w, now).expect("well formed");
        assert!(f.duplicate);
        assert_eq!(f.last, Some((generation(t, w), now + w)));
    }

    #[test]
    fn appends_open_a_section_only_for_a_new_generation() {
        let w = 1000;
        let now = 10_000;
        let (d, store) = shard_store_decides(
            &[
                (1, 1, 10_000, now),
                (2, 2, 10_500, now),
                (3, 3, 9_000, now),
                (4, 4, 9_500, now),
            ],
            w,
            1,
        );
        assert_eq!(d, vec![false; 4]);
        let (bytes, at) = &store[&0];
        // Marker + 2 entries (gen 10), marker + 2 entries (gen 9).
        assert_eq!(bytes.len(), 2 * (MARKER + 2 * ENTRY));
        assert_eq!(*at, now + 2 * w);
    }

    #[test]
    fn ended_sections_are_dropped_and_the_expiry_moves_when_less_than_a_window_is_left() {
        let w = 10_000;
        let fp = fingerprint(b"a", b"v");
        let create = plan_write(None, fp, 0, w, 0, false);
        let Write::Create { value, expire_at } = create else {
            panic!("{create:?}")
        };
        assert_eq!(expire_at, 2 * w);
        // Half a window later, same generation: a 12-byte append, no expiry move.
        let f = scan(&value, fp, 5_000, w, 5_000).expect("ok");
        assert!(f.duplicate);
        let fp2 = fingerprint(b"a", b"w");
        let f = scan(&value, fp2, 5_000, w, 5_000).expect("ok");
        match plan_write(Some((&value, f)), fp2, 5_000, w, 5_000, false) {
            Write::Append { len, expire_at, .. } => assert_eq!((len, expire_at), (ENTRY, None)),
            other => panic!("{other:?}"),
        }
        // 1.5 windows later: the next generation, less than a window left.
        let f = scan(&value, fp2, 15_000, w, 15_000).expect("ok");
        match plan_write(Some((&value, f)), fp2, 15_000, w, 15_000, false) {
            Write::Append { len, expire_at, .. } => {
                assert_eq!((len, expire_at), (MAX_APPEND, Some(15_000 + 2 * w)))
            }
            other => panic!("{other:?}"),
        }
        // Same generation, but its section ends in less than a window: a
        // new section, and the expiry moves to its end.
        let f = scan(&value, fp2, 9_990, w, 12_000).expect("ok");
        match plan_write(Some((&value, f)), fp2, 9_990, w, 12_000, false) {
            Write::Append { len, expire_at, .. } => {
                assert_eq!((len, expire_at), (MAX_APPEND, Some(12_000 + 2 * w)))
            }
            other => panic!("{other:?}"),
        }
        // Two windows later the first section has ended: a rewrite without it.
        let mut two = value.clone();
        two.extend_from_slice(&marker(1, 15_000 + 2 * w, false));
        two.extend_from_slice(&entry(stored(fp2), 15_000, w));
        let f = scan(&two, fp, 21_000, w, 21_000).expect("ok");
        assert!(f.ended && !f.duplicate);
        assert_eq!((f.last, f.max_until), (Some((1, 35_000)), Some(35_000)));
        // Into the live section of generation 1 (14 s left).
        let f = scan(&two, fp, 16_000, w, 21_000).expect("ok");
        match plan_write(Some((&two, f)), fp, 16_000, w, 21_000, false) {
            Write::Rewrite { value, expire_at } => {
                assert_eq!(expire_at, 35_000);
                assert_eq!(&value[..MARKER + ENTRY], &two[MARKER + ENTRY..]);
                assert_eq!(value.len(), MARKER + 2 * ENTRY);
            }
            other => panic!("{other:?}"),
        }
        // Generation 2: a new section after it, and the expiry at its end.
        let f = scan(&two, fp, 21_000, w, 21_000).expect("ok");
        match plan_write(Some((&two, f)), fp, 21_000, w, 21_000, false) {
            Write::Rewrite { value, expire_at } => {
                assert_eq!(expire_at, 41_000);
                assert_eq!(&value[..MARKER + ENTRY], &two[MARKER + ENTRY..]);
                assert_eq!(
                    &value[MARKER + ENTRY..2 * MARKER + ENTRY],
                    &marker(2, 41_000, false)
                );
                assert_eq!(value.len(), 2 * (MARKER + ENTRY));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_upgraded_mark_lives_with_its_section() {
        let w = 1000;
        let fp = fingerprint(b"a", b"v");
        let Write::Create { value, .. } = plan_write(None, fp, 0, w, 0, true) else {
            panic!()
        };
        assert!(scan(&value, fp, 0, w, 1999).expect("ok").upgraded);
        assert!(!scan(&value, fp, 0, w, 2000).expect("ok").upgraded);
    }

    proptest! {
        /// Views at the clock (AT = now), the clock moving forward by any
        /// steps: the store decides as the per-pair model (a counted view
        /// is kept at least one window), and a string never holds an entry
        /// older than three windows of server time.
        #[test]
        fn shard_store_at_the_clock_matches_the_model_and_stays_bounded(
            steps in prop::collection::vec((0u8..3, 0u8..3, 0i64..1_500), 1..300),
            w in 1i64..1_000,
        ) {
            let mut now = 1_000_000i64;
            let mut views = Vec::new();
            for &(a, v, dt) in &steps {
                now += dt;
                views.push((a, v, now, now));
            }
            let want = model_decides(views.iter().map(|&(a, v, t, _)| (a, v, t)), w);
            let (got, store) = shard_store_decides(&views, w, 2);
            prop_assert_eq!(got, want);
            for (bytes, at) in store.values() {
                if *at <= now { continue; }
                for s in sections(bytes).expect("well formed") {
                    prop_assert!(s.until > now - 2 * w - 1_500, "{:?}", s);
                    prop_assert!(s.gen * w > now - 4 * w - 3_000, "{:?}", s);
                }
            }
        }
    }

    proptest! {
        /// In any order of view times, the compact stores (the old layout's
        /// and the one-string one) decide exactly as a per-pair model
        /// holding every counted view time would: a view is a duplicate
        /// when it lies strictly within the window before or after any
        /// counted view of its pair.
        #[test]
        fn compact_store_matches_per_pair_model(
            views in prop::collection::vec((0u8..4, 0u8..4, 0i64..10_000_000), 1..200),
            w in 1i64..3_000_000,
            shards in 1u32..8,
        ) {
            let want = model_decides(views.iter().copied(), w);
            prop_assert_eq!(&store_decides(&views, w, shards), &want);
            // The one-string store too, the server clock standing still (a
            // replay much faster than the window).
            let timed: Vec<_> = views.iter().map(|&(a, v, t)| (a, v, t, 5_000_000)).collect();
            prop_assert_eq!(shard_store_decides(&timed, w, shards).0, want);
        }
    }
}
