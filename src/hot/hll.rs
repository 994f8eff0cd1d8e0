//! A HyperLogLog in the server's own string format, so the module can do
//! `PFADD` and `PFCOUNT` on a key's bytes without calling the server, and
//! leave exactly the bytes the server would (Redis 7.0 and Valkey 9.1 agree).
//! Pure Rust, no Redis.
//!
//! Format (the header comment of Redis's `src/hyperloglog.c`):
//! - **Header**, 16 bytes: magic `HYLL`, encoding (0 dense, 1 sparse), 3
//!   unused bytes (kept as they are), the cached cardinality as 8 bytes little
//!   endian. The top bit of byte 15 set means "stale": `PFADD` sets it when it
//!   changes a register, `PFCOUNT` then recomputes and rewrites all 8 bytes.
//! - **Dense**: 16,384 registers of 6 bits, 12,288 bytes, register `i` at bit
//!   `6·i` counting from the least significant bit of byte 0.
//! - **Sparse**: a run-length code of the registers. `ZERO` `00xxxxxx` is
//!   1–64 zero registers, `XZERO` `01xxxxxx yyyyyyyy` 1–16,384 zero registers
//!   (14-bit length − 1, high bits first), `VAL` `1vvvvvxx` 1–4 registers
//!   (`xx` + 1) of value 1–32 (`vvvvv` + 1). A new key is `XZERO:16384`.
//! - **Element → register**: the 64-bit MurmurHash2 ([`murmur64a`]) with seed
//!   [`SEED`]; the low 14 bits pick the register, the value is 1 + the number
//!   of trailing zero bits of the rest with bit 50 forced to 1 (so 1..=51).
//! - **Sparse → dense** when a register needs a value above 32, or when an
//!   update would make the whole string longer than `hll-sparse-max-bytes`.
//! - **Estimate**: Otmar Ertl's improved estimator ("New cardinality
//!   estimation algorithms for HyperLogLog sketches", arXiv:1702.01284) over
//!   the register histogram, rounded half away from zero.
//!
//! Malformed sparse bodies (runs not summing to exactly 16,384, or a cut
//! `XZERO`) are refused by [`add`] with [`HllError::Corrupt`] and nothing is
//! written. The server refuses only some of them on `PFADD` (when the register
//! it needs lies past the damage, or on promotion) and rewrites the others;
//! on well-formed values the two agree byte for byte.

use std::sync::atomic::{AtomicU64, Ordering};

/// Seed of the element hash (`hllPatLen`).
pub const SEED: u64 = 0xadc8_3b19;
/// Header length in bytes.
pub const HEADER_LEN: usize = 16;
/// Number of registers (2^14).
pub const REGISTERS: usize = 1 << P;
/// Length of a dense value: header + 16,384 six-bit registers.
pub const DENSE_LEN: usize = HEADER_LEN + REGISTERS * 6 / 8;
/// The largest register value the sparse `VAL` opcode holds.
pub const SPARSE_VAL_MAX_VALUE: u8 = 32;
/// The server's default `hll-sparse-max-bytes`.
pub const DEFAULT_SPARSE_MAX_BYTES: usize = 3000;

const P: u32 = 14;
const Q: u32 = 64 - P;
const ENC_DENSE: u8 = 0;
const ENC_SPARSE: u8 = 1;
const STALE: u8 = 0x80;
const SPARSE_VAL_MAX_LEN: usize = 4;
const SPARSE_ZERO_MAX_LEN: usize = 64;

/// Why a value was refused. Nothing is written in either case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HllError {
    /// Not an HLL string at all (what `isHLLObjectOrReply` refuses): shorter
    /// than the header, wrong magic, unknown encoding, or a dense value of the
    /// wrong length. The server replies [`HllError::message`] (`WRONGTYPE …`).
    NotHll,
    /// A sparse value whose body is malformed. The server replies
    /// `INVALIDOBJ Corrupted HLL object detected` when it notices.
    Corrupt,
}

impl HllError {
    /// The server's error reply for this case, without the leading `-`.
    pub fn message(self) -> &'static str {
        match self {
            HllError::NotHll => "WRONGTYPE Key is not a valid HyperLogLog string value.",
            HllError::Corrupt => "INVALIDOBJ Corrupted HLL object detected",
        }
    }
}

impl std::fmt::Display for HllError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for HllError {}

/// MurmurHash64A (MurmurHash2, 64-bit), endian-neutral as the server has it.
/// The server passes the seed as a C `unsigned int`: use seeds below 2^32 to
/// match it (the HLL uses [`SEED`]).
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut chunks = data.chunks_exact(8);
    for ch in &mut chunks {
        // chunks_exact(8) yields 8-byte slices: the conversion cannot fail.
        let mut k = u64::from_le_bytes(ch.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element goes to and the value it offers (1..=51).
pub fn pattern(element: &[u8]) -> (usize, u8) {
    pattern_of_hash(murmur64a(element, SEED))
}

/// [`pattern`] from a hash.
pub fn pattern_of_hash(hash: u64) -> (usize, u8) {
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    let rest = (hash >> P) | (1u64 << Q);
    (index, 1 + rest.trailing_zeros() as u8)
}

/// An 8-byte element whose hash puts `count` (1..=51) in register `index`;
/// `salt` picks one of many such elements (ignored for 51, which has one).
/// For tests: MurmurHash64A is a bijection on 8-byte inputs, so this runs
/// the hash backwards.
pub fn crafted_element(index: usize, count: u8, salt: u64) -> [u8; 8] {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    assert!(index < REGISTERS && (1..=51).contains(&count));
    let c = u32::from(count);
    let mut target = index as u64;
    if c <= Q {
        target |= 1u64 << (P + c - 1);
        if P + c < 64 {
            target |= salt << (P + c);
        }
    }
    // The inverse of M modulo 2^64 (Newton's iteration doubles the bits).
    let mut inv = M;
    for _ in 0..6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(M.wrapping_mul(inv)));
    }
    let unshift = |x: u64| x ^ (x >> 47); // x ^= x >> 47 is its own inverse
    let h0 = SEED ^ 8u64.wrapping_mul(M);
    let h1 = unshift(unshift(target).wrapping_mul(inv));
    let k = h1.wrapping_mul(inv) ^ h0;
    let k = unshift(k.wrapping_mul(inv)).wrapping_mul(inv);
    k.to_le_bytes()
}

/// Checks the header as the server does before `PFADD`/`PFCOUNT`
/// (`isHLLObjectOrReply`). A sparse body is not looked at.
pub fn validate(bytes: &[u8]) -> Result<(), HllError> {
    if bytes.len() < HEADER_LEN || &bytes[..4] != b"HYLL" {
        return Err(HllError::NotHll);
    }
    match bytes[4] {
        ENC_DENSE if bytes.len() == DENSE_LEN => Ok(()),
        ENC_SPARSE => Ok(()),
        _ => Err(HllError::NotHll),
    }
}

/// The cached cardinality, exactly what `PFCOUNT` replies without
/// recomputing; `None` when the header is not an HLL's or the cache is stale.
pub fn cached_count(bytes: &[u8]) -> Option<u64> {
    validate(bytes).ok()?;
    let card = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
    (bytes[15] & STALE == 0).then_some(card)
}

/// What `PFADD key` (no element) stores for a missing key, replying 1:
/// sparse, one `XZERO:16384`, cached count 0 marked stale (the server marks
/// any PFADD that created or changed the key). Start a missing key's [`add`]
/// from this value: the bytes then match `PFADD key element`.
pub fn create() -> Vec<u8> {
    let mut v = Vec::with_capacity(64);
    v.extend_from_slice(b"HYLL");
    v.extend_from_slice(&[ENC_SPARSE, 0, 0, 0]);
    v.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, STALE]);
    push_xzero(&mut v, REGISTERS);
    v
}

/// `PFADD key element` on an existing key's value: returns whether the value
/// changed (`PFADD`'s 1/0). A change sets the stale bit of the cached count
/// and may promote a sparse value to dense (the `Vec` is then replaced).
/// `sparse_max_bytes` is the server's `hll-sparse-max-bytes` (whole string,
/// header included). For a missing key start from [`create`] (and reply 1
/// whatever this returns). On error nothing is written.
pub fn add(value: &mut Vec<u8>, element: &[u8], sparse_max_bytes: usize) -> Result<bool, HllError> {
    let (index, count) = pattern(element);
    set_register(value, index, count, sparse_max_bytes)
}

/// What [`add_counted`] did: `PFADD`'s reply and the count after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Added {
    /// Whether a register changed (`PFADD`'s 1/0).
    pub changed: bool,
    /// The cardinality after the add: the cached count when it is still
    /// valid, else the estimate `PFCOUNT` would compute.
    pub count: u64,
    /// Whether that estimate was written into the header (cache valid,
    /// stale bit cleared), as `PFCOUNT` would: only when [`worth_caching`].
    pub recounted: bool,
}

/// [`add`] then the count ([`count`] when the result is [`worth_caching`],
/// else [`estimate_of`]), in one walk of a sparse body: the walk that finds
/// the register also checks the whole body and takes the register
/// histogram, which the add then adjusts, so the estimate reads no register
/// again. Same bytes, replies and errors as the two calls; nothing is written
/// on error.
pub fn add_counted(
    value: &mut Vec<u8>,
    element: &[u8],
    sparse_max_bytes: usize,
) -> Result<Added, HllError> {
    let (index, count) = pattern(element);
    set_register_counted(value, index, count, sparse_max_bytes)
}

/// [`add_counted`] for a given register and value (see [`set_register`]).
pub fn set_register_counted(
    value: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max_bytes: usize,
) -> Result<Added, HllError> {
    add_core(value, index, count, sparse_max_bytes, false).map(|(a, _)| a)
}

/// [`add_counted`], and the estimate of the value before the add: the
/// number [`estimate_of`] gives for the bytes as they were (their cached
/// count when valid), taken from the same walk (the histogram before is the
/// one after with the one changed register moved back), so the body is not
/// read again.
pub fn add_counted_before(
    value: &mut Vec<u8>,
    element: &[u8],
    sparse_max_bytes: usize,
) -> Result<(Added, u64), HllError> {
    let (index, count) = pattern(element);
    set_register_counted_before(value, index, count, sparse_max_bytes)
}

/// [`add_counted_before`] for a given register and value.
pub fn set_register_counted_before(
    value: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max_bytes: usize,
) -> Result<(Added, u64), HllError> {
    let (a, before) = add_core(value, index, count, sparse_max_bytes, true)?;
    // No register changed: the estimate before is the one after.
    Ok((a, before.unwrap_or(a.count)))
}

/// The add and count of [`set_register_counted`]; with `want_before`, the
/// estimate before the add when a register changed (`None` when none did:
/// it is then the count after).
fn add_core(
    value: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max_bytes: usize,
    want_before: bool,
) -> Result<(Added, Option<u64>), HllError> {
    assert!(index < REGISTERS && (1..=63).contains(&count));
    validate(value)?;
    let cached_before = if want_before {
        cached_count(value)
    } else {
        None
    };
    if value[4] == ENC_DENSE {
        let old = dense_get(&value[HEADER_LEN..], index);
        let changed = dense_set(&mut value[HEADER_LEN..], index, count);
        if changed {
            value[15] |= STALE;
        }
        if want_before && changed && cached_before.is_none() {
            // Stale before and after: the histogram after, then moved back.
            let mut hist = dense_histogram(&value[HEADER_LEN..]);
            let card = estimate(&hist);
            value[8..16].copy_from_slice(&card.to_le_bytes());
            hist[usize::from(count)] -= 1;
            hist[usize::from(old)] += 1;
            let added = Added {
                changed,
                count: card,
                recounted: true,
            };
            // The register went down to `old`: no bin above the top after.
            return Ok((added, Some(estimate_from(&hist, top_of(&hist)))));
        }
        let (card, recounted) = count_dense(value);
        let added = Added {
            changed,
            count: card,
            recounted,
        };
        return Ok((added, cached_before.filter(|_| changed)));
    }
    let mut hist = [0u32; 64];
    let mut zeros = 0u32;
    let c = locate(&value[HEADER_LEN..], index, &mut zeros, &mut hist)?;
    let changed = sparse_set(value, &c, index, count, sparse_max_bytes);
    let mut before = None;
    // The top bin and register sum of the estimate before, when taken.
    let mut sum_before = None;
    if changed {
        if want_before {
            before = Some(cached_before.unwrap_or_else(|| {
                hist[0] = zeros;
                let top = top_of(&hist);
                let z = register_sum(&hist, top);
                sum_before = Some((top, z));
                estimate_of_sum(z, zeros)
            }));
        }
        value[15] |= STALE;
        // The register went from c.value to count: the only change.
        if c.value == 0 {
            zeros -= 1;
        } else {
            hist[usize::from(c.value)] -= 1;
        }
        hist[usize::from(count)] += 1;
    }
    if let Some(cached) = cached_count(value) {
        let added = Added {
            changed,
            count: cached,
            recounted: false,
        };
        return Ok((added, before));
    }
    hist[0] = zeros;
    let card = match sum_before {
        // The sum after is the sum before with the one register moved
        // (exact: see [`moved_sum`]), so the bins are not summed twice.
        Some((top, z)) if top.max(usize::from(count)) <= EXACT_TOP => {
            estimate_of_sum(moved_sum(z, c.value, count), zeros)
        }
        // Only the changed register's bin (`count`) can be above the top
        // before: the scan for the top is not made twice.
        Some((top, _)) => estimate_from(&hist, top.max(usize::from(count)).min(Q as usize)),
        None => estimate_from(&hist, top_of(&hist)),
    };
    let recounted = worth_caching(value);
    if recounted {
        value[8..16].copy_from_slice(&card.to_le_bytes());
    }
    let added = Added {
        changed,
        count: card,
        recounted,
    };
    Ok((added, before))
}

/// The count of a dense value after an add: cached, or estimated and cached
/// (a dense value is always [`worth_caching`]).
fn count_dense(value: &mut [u8]) -> (u64, bool) {
    if let Some(c) = cached_count(value) {
        return (c, false);
    }
    let card = estimate(&dense_histogram(&value[HEADER_LEN..]));
    value[8..16].copy_from_slice(&card.to_le_bytes());
    (card, true)
}

/// [`add`] for a given register and value (1..=51): the register becomes
/// `max(old, count)`. Panics when `index >= REGISTERS` or `count` is 0 or
/// above 63.
pub fn set_register(
    value: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max_bytes: usize,
) -> Result<bool, HllError> {
    assert!(index < REGISTERS && (1..=63).contains(&count));
    validate(value)?;
    let changed = if value[4] == ENC_DENSE {
        dense_set(&mut value[HEADER_LEN..], index, count)
    } else {
        let mut zeros = 0;
        let mut hist = [0u32; 64];
        let c = locate(&value[HEADER_LEN..], index, &mut zeros, &mut hist)?;
        sparse_set(value, &c, index, count, sparse_max_bytes)
    };
    if changed {
        value[15] |= STALE;
    }
    Ok(changed)
}

/// `PFCOUNT key` on one existing key's value: the cached count when it is
/// valid (the body is then not read, as the server does not), otherwise the
/// estimate, written into the header (clearing the stale bit). Returns the
/// count and whether the bytes changed. On error nothing is written.
pub fn count(value: &mut [u8]) -> Result<(u64, bool), HllError> {
    if let Some(c) = cached_count(value) {
        return Ok((c, false));
    }
    validate(value)?;
    let card = estimate(&histogram(value)?);
    value[8..16].copy_from_slice(&card.to_le_bytes());
    Ok((card, true))
}

/// The estimate of a value without writing anything: the cached count when
/// it is valid, else the estimate `PFCOUNT` would compute (and cache).
pub fn estimate_of(value: &[u8]) -> Result<u64, HllError> {
    if let Some(c) = cached_count(value) {
        return Ok(c);
    }
    validate(value)?;
    Ok(estimate(&histogram(value)?))
}

/// Largest value (whole string, bytes) whose count a writer may leave
/// stale after an add, as `PFADD` leaves it. Counting a sparse value this
/// small costs less than replicating the `PFCOUNT` that would cache it; a
/// larger value, dense ones included (16,384 registers to read), is worth
/// caching.
pub const STALE_OK_BYTES: usize = 256;

/// Whether a writer should cache the count of `value` (see
/// [`STALE_OK_BYTES`]): `false` for a small sparse value, left as `PFADD`
/// leaves it.
pub fn worth_caching(value: &[u8]) -> bool {
    value.len() > STALE_OK_BYTES || value.get(4) == Some(&ENC_DENSE)
}

/// All 16,384 registers of a value, one byte each.
pub fn registers(value: &[u8]) -> Result<Vec<u8>, HllError> {
    validate(value)?;
    let body = &value[HEADER_LEN..];
    if value[4] == ENC_DENSE {
        return Ok((0..REGISTERS).map(|i| dense_get(body, i)).collect());
    }
    let mut regs = Vec::with_capacity(REGISTERS);
    for op in ops(body) {
        let (value, run) = op?;
        regs.resize(regs.len() + run, value);
    }
    Ok(regs)
}

/// The histogram of register values (64 buckets; values above 51 cannot be
/// produced by an add but are counted where they fall, as the server does).
fn histogram(value: &[u8]) -> Result<[u32; 64], HllError> {
    let body = &value[HEADER_LEN..];
    if value[4] == ENC_DENSE {
        return Ok(dense_histogram(body));
    }
    let mut h = [0u32; 64];
    {
        for op in ops(body) {
            let (value, run) = op?;
            h[usize::from(value)] += run as u32;
        }
    }
    Ok(h)
}

/// The histogram of a dense body's registers.
fn dense_histogram(body: &[u8]) -> [u32; 64] {
    let mut h = [0u32; 64];
    for b in body.chunks_exact(3) {
        let w = u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16;
        for s in [0, 6, 12, 18] {
            h[(w >> s & 63) as usize] += 1;
        }
    }
    h
}

/// The cardinality estimate from a register histogram (`hllCount`), to
/// the bit: two shortcuts leave every step's value as the server computes
/// it. With no register above `Q` the sum starts at `m · tau(1) = +0`, and
/// the steps of the empty bins above the highest non-empty one leave it
/// `+0`, so they are skipped. And `m · sigma(zeros / m)` is taken from
/// [`sigma_term`] (each value computed once).
fn estimate(h: &[u32; 64]) -> u64 {
    estimate_from(h, top_of(h))
}

/// The highest bin [`estimate`] must step through: `Q` when a register is
/// above `Q` (the sum does not start at `+0`), else the highest non-empty
/// bin of `1..=Q` (0 when there is none).
fn top_of(h: &[u32; 64]) -> usize {
    let q = Q as usize;
    let mut top = q;
    if h[q + 1] == 0 {
        while top > 0 && h[top] == 0 {
            top -= 1;
        }
    }
    top
}

/// [`estimate`] stepping through the bins from `top` down, for any `top`
/// from [`top_of`]`(h)` to `Q`: the steps of the empty bins in between
/// leave the sum `+0`, so every such `top` gives the same bits.
fn estimate_from(h: &[u32; 64], top: usize) -> u64 {
    estimate_of_sum(register_sum(h, top), h[0])
}

/// The estimate's sum over the register bins (`hllCount`'s `z` before
/// its sigma term), stepping from `top` down (see [`estimate_from`]).
fn register_sum(h: &[u32; 64], top: usize) -> f64 {
    let m = REGISTERS as f64;
    let q = Q as usize;
    debug_assert!(top_of(h) <= top && top <= q);
    let mut z = m * tau((m - f64::from(h[q + 1])) / m);
    for j in (1..=top).rev() {
        z += f64::from(h[j]);
        z *= 0.5;
    }
    z
}

/// The estimate from the register sum `z` ([`register_sum`]) and the
/// number of zero registers.
fn estimate_of_sum(z: f64, zeros: u32) -> u64 {
    let m = REGISTERS as f64;
    let z = z + sigma_term(zeros);
    // 0.5/ln(2), the constant the server writes as 0.721347520444481703680.
    const ALPHA_INF: f64 = 0.721_347_520_444_481_7;
    round_to_u64(ALPHA_INF * m * m / z)
}

/// The highest bin up to which [`register_sum`] is exact: with no register
/// above `Q` it starts at `+0` and each step `z = (z + h[j]) / 2` keeps
/// `z` a multiple of `2^-top` below `2^15` (at most 16,384 registers), 52
/// bits at most, so `z` is exactly `Σ h[j] · 2^-j`.
const EXACT_TOP: usize = 37;

/// [`register_sum`] after one register went from `old` to `new` (`old <
/// new`, both at most [`EXACT_TOP`], as is the sum's top bin): `z + 2^-new
/// − 2^-old` (no `2^-old` for a zero register, which the sigma term
/// counts). Every partial result is a multiple of `2^-EXACT_TOP` below
/// `2^15`, so exact: the very bits of the sum taken again.
fn moved_sum(z: f64, old: u8, new: u8) -> f64 {
    let p = |v: u8| f64::from_bits((1023 - u64::from(v)) << 52);
    let z = z + p(new);
    if old == 0 {
        z
    } else {
        z - p(old)
    }
}

/// `x.round() as u64` (halves away from zero, saturating; NaN gives 0)
/// without the library call: below `2^52` the fraction `x − ⌊x⌋` is exact,
/// and from `2^52` on every double is a whole number.
fn round_to_u64(x: f64) -> u64 {
    let i = x as u64;
    if x - i as f64 >= 0.5 {
        // From 2^64 on (i saturated) the difference is >= 0.5 too.
        i.saturating_add(1)
    } else {
        i
    }
}

/// `m · sigma(zeros / m)` for each number of zero registers, kept once
/// computed (a pure function of `zeros`, so never stale; 0 bits: not yet
/// computed). 128 KiB, of which only the pages of the counts met are
/// touched: a small HyperLogLog's count is near 16,384.
static SIGMA_TERMS: [AtomicU64; REGISTERS + 1] = [const { AtomicU64::new(0) }; REGISTERS + 1];

/// `m · sigma(zeros / m)`, the same bits as computing it
/// ([`SIGMA_TERMS`]).
fn sigma_term(zeros: u32) -> f64 {
    let m = REGISTERS as f64;
    let Some(slot) = SIGMA_TERMS.get(zeros as usize) else {
        return m * sigma(f64::from(zeros) / m);
    };
    let kept = slot.load(Ordering::Relaxed);
    if kept != 0 {
        return f64::from_bits(kept);
    }
    let v = m * sigma(f64::from(zeros) / m);
    slot.store(v.to_bits(), Ordering::Relaxed);
    v
}

/// Ertl's sigma (`hllSigma`).
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let prev = z;
        z += x * y;
        y += y;
        if prev == z {
            return z;
        }
    }
}

/// Ertl's tau (`hllTau`). The server's `pow(1 - x, 2)` is a plain square.
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let prev = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if prev == z {
            return z / 3.0;
        }
    }
}

// ---- dense ---------------------------------------------------------------

fn dense_get(regs: &[u8], i: usize) -> u8 {
    let byte = i * 6 / 8;
    let fb = i * 6 % 8;
    let lo = u16::from(regs[byte]) >> fb;
    // A register starting at bit 0 or 2 fits in its first byte; the server
    // reads the next byte anyway (the sds terminator after the last one).
    let hi = if fb > 2 {
        u16::from(regs[byte + 1]) << (8 - fb)
    } else {
        0
    };
    ((lo | hi) & 63) as u8
}

fn dense_put(regs: &mut [u8], i: usize, v: u8) {
    let byte = i * 6 / 8;
    let fb = i * 6 % 8;
    regs[byte] &= !(63u8 << fb);
    regs[byte] |= v << fb;
    if fb > 2 {
        regs[byte + 1] &= !(63u8 >> (8 - fb));
        regs[byte + 1] |= v >> (8 - fb);
    }
}

fn dense_set(regs: &mut [u8], i: usize, count: u8) -> bool {
    if count > dense_get(regs, i) {
        dense_put(regs, i, count);
        true
    } else {
        false
    }
}

// ---- sparse --------------------------------------------------------------

/// Opcode kinds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Zero,
    XZero,
    Val,
}

fn op_at(body: &[u8], p: usize) -> Result<(Op, usize, u8), HllError> {
    let b = body[p];
    Ok(if b & 0x80 != 0 {
        (Op::Val, usize::from(b & 3) + 1, (b >> 2 & 0x1f) + 1)
    } else if b & 0x40 == 0 {
        (Op::Zero, usize::from(b & 0x3f) + 1, 0)
    } else {
        let lo = *body.get(p + 1).ok_or(HllError::Corrupt)?;
        (
            Op::XZero,
            (usize::from(b & 0x3f) << 8 | usize::from(lo)) + 1,
            0,
        )
    })
}

fn op_len(op: Op) -> usize {
    if op == Op::XZero {
        2
    } else {
        1
    }
}

/// The runs of a sparse body as (value, length), checking that they cover
/// exactly the 16,384 registers (an `Err` item ends the iteration).
fn ops(body: &[u8]) -> impl Iterator<Item = Result<(u8, usize), HllError>> + '_ {
    let mut p = 0;
    let mut covered = 0;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed {
            return None;
        }
        if p >= body.len() {
            if covered == REGISTERS {
                return None;
            }
            failed = true;
            return Some(Err(HllError::Corrupt));
        }
        match op_at(body, p) {
            Ok((op, run, value)) if covered + run <= REGISTERS => {
                p += op_len(op);
                covered += run;
                Some(Ok((value, run)))
            }
            _ => {
                failed = true;
                Some(Err(HllError::Corrupt))
            }
        }
    })
}

fn val_byte(value: u8, run: usize) -> u8 {
    0x80 | (value - 1) << 2 | (run - 1) as u8
}

fn push_xzero(v: &mut Vec<u8>, run: usize) {
    let l = run - 1;
    v.push(0x40 | (l >> 8) as u8);
    v.push((l & 0xff) as u8);
}

/// A short stack buffer for the replacement sequence (at most 5 bytes).
struct Seq {
    buf: [u8; 5],
    len: usize,
}

impl Seq {
    fn push(&mut self, b: u8) {
        self.buf[self.len] = b;
        self.len += 1;
    }

    fn zero_run(&mut self, run: usize) {
        if run > SPARSE_ZERO_MAX_LEN {
            let l = run - 1;
            self.push(0x40 | (l >> 8) as u8);
            self.push((l & 0xff) as u8);
        } else {
            self.push((run - 1) as u8);
        }
    }
}

/// The opcode of a sparse body covering a register: where it starts, where
/// the opcode before it starts, the first register it covers, its kind,
/// run length and value.
struct Covering {
    p: usize,
    prev: Option<usize>,
    first: usize,
    op: Op,
    run: usize,
    value: u8,
}

/// Step 1 of `hllSparseSet` in one walk: finds the opcode covering `index`
/// and checks the whole body (every `XZERO` whole, runs covering exactly
/// [`REGISTERS`]), counting on the way the zero registers into `zeros` and
/// the others into `hist` (by value). On `Err` the counts are meaningless.
fn locate(
    body: &[u8],
    index: usize,
    zeros: &mut u32,
    hist: &mut [u32; 64],
) -> Result<Covering, HllError> {
    let n = body.len();
    let mut p = 0usize;
    let mut prev = None;
    let mut covered = 0usize;
    let mut z = 0usize;
    // Up to the opcode covering `index`.
    let found = loop {
        if p >= n {
            return Err(HllError::Corrupt);
        }
        let b = body[p];
        let (op, run, value, len) = if b & 0x80 != 0 {
            let v = (b >> 2 & 0x1f) + 1;
            (Op::Val, usize::from(b & 3) + 1, v, 1)
        } else if b & 0x40 == 0 {
            (Op::Zero, usize::from(b) + 1, 0, 1)
        } else {
            if p + 1 >= n {
                return Err(HllError::Corrupt);
            }
            let run = (usize::from(b & 0x3f) << 8 | usize::from(body[p + 1])) + 1;
            (Op::XZero, run, 0, 2)
        };
        if value == 0 {
            z += run;
        } else {
            hist[usize::from(value)] += run as u32;
        }
        if index < covered + run {
            if covered + run > REGISTERS {
                return Err(HllError::Corrupt);
            }
            let c = Covering {
                p,
                prev,
                first: covered,
                op,
                run,
                value,
            };
            covered += run;
            p += len;
            break c;
        }
        covered += run;
        prev = Some(p);
        p += len;
    };
    // The rest: only checked and counted.
    while p < n {
        let b = body[p];
        if b & 0x80 != 0 {
            let run = usize::from(b & 3) + 1;
            hist[usize::from((b >> 2 & 0x1f) + 1)] += run as u32;
            covered += run;
            p += 1;
        } else if b & 0x40 == 0 {
            let run = usize::from(b) + 1;
            z += run;
            covered += run;
            p += 1;
        } else {
            if p + 1 >= n {
                return Err(HllError::Corrupt);
            }
            let run = (usize::from(b & 0x3f) << 8 | usize::from(body[p + 1])) + 1;
            z += run;
            covered += run;
            p += 2;
        }
    }
    // Each run is at most 16,384, so `covered` cannot wrap on any body a
    // server stores (at most 512 MB of opcodes).
    if covered != REGISTERS {
        return Err(HllError::Corrupt);
    }
    *zeros = z as u32;
    Ok(found)
}

/// The reference step 1 (before [`locate`]): finds the opcode covering
/// `index`, checking the whole body, with the runs checked one by one.
#[cfg(test)]
fn covering(body: &[u8], index: usize) -> Result<Covering, HllError> {
    let (mut p, mut prev) = (0usize, None);
    let mut found = None;
    let mut covered = 0usize;
    while p < body.len() {
        let (op, run, value) = op_at(body, p)?;
        if covered + run > REGISTERS {
            return Err(HllError::Corrupt);
        }
        if found.is_none() {
            if index < covered + run {
                let first = covered;
                found = Some(Covering {
                    p,
                    prev,
                    first,
                    op,
                    run,
                    value,
                });
            } else {
                prev = Some(p);
            }
        }
        covered += run;
        p += op_len(op);
    }
    if covered != REGISTERS {
        return Err(HllError::Corrupt);
    }
    found.ok_or(HllError::Corrupt)
}

/// The general case of `hllSparseSet`: the opcodes (at most three) that
/// replace `c` once register `index` holds `count`.
fn split(c: &Covering, index: usize, count: u8) -> Seq {
    let last = c.first + c.run - 1;
    let mut seq = Seq {
        buf: [0; 5],
        len: 0,
    };
    if c.op == Op::Val {
        if index != c.first {
            seq.push(val_byte(c.value, index - c.first));
        }
        seq.push(val_byte(count, 1));
        if index != last {
            seq.push(val_byte(c.value, last - index));
        }
    } else {
        if index != c.first {
            seq.zero_run(index - c.first);
        }
        seq.push(val_byte(count, 1));
        if index != last {
            seq.zero_run(last - index);
        }
    }
    seq
}

/// `hllSparseSet` on a whole value (header included), once step 1 has found
/// `c` (which also checked the body).
fn sparse_set(
    value: &mut Vec<u8>,
    c: &Covering,
    index: usize,
    count: u8,
    sparse_max_bytes: usize,
) -> bool {
    if count > SPARSE_VAL_MAX_VALUE {
        promote(value, index, count);
        return true;
    }
    let at = HEADER_LEN + c.p;
    let merge_from = c.prev.map_or(HEADER_LEN, |q| HEADER_LEN + q);
    // Step 2: the trivial in-place cases.
    if c.op == Op::Val && c.value >= count {
        return false;
    }
    if (c.op == Op::Val || c.op == Op::Zero) && c.run == 1 {
        value[at] = val_byte(count, 1);
        merge_vals(value, merge_from);
        return true;
    }
    let seq = split(c, index, count);
    let old_len = op_len(c.op);
    if seq.len > old_len && value.len() + seq.len - old_len > sparse_max_bytes {
        promote(value, index, count);
        return true;
    }
    // Step 3: put the new sequence in place of the old opcode.
    let tail = at + old_len;
    if seq.len > old_len {
        let grow = seq.len - old_len;
        let n = value.len();
        value.resize(n + grow, 0);
        value.copy_within(tail..n, tail + grow);
    } else if seq.len < old_len {
        value.drain(at + seq.len..tail);
    }
    value[at..at + seq.len].copy_from_slice(&seq.buf[..seq.len]);
    // Step 4: merge adjacent VAL opcodes near the change.
    merge_vals(value, merge_from);
    true
}

/// The server's step 4: from the opcode before the change, look at up to 5
/// opcodes and merge each `VAL` with a following `VAL` of the same value when
/// the runs fit in one (a merge counts as one of the 5 and is retried in place).
fn merge_vals(value: &mut Vec<u8>, mut p: usize) {
    let mut scan = 5;
    while p < value.len() && scan > 0 {
        scan -= 1;
        let b = value[p];
        if b & 0x80 == 0 {
            p += if b & 0x40 != 0 { 2 } else { 1 };
            continue;
        }
        if let Some(&n) = value.get(p + 1) {
            if n & 0x80 != 0 && (b >> 2 & 0x1f) == (n >> 2 & 0x1f) {
                let run = usize::from(b & 3) + usize::from(n & 3) + 2;
                if run <= SPARSE_VAL_MAX_LEN {
                    value[p + 1] = val_byte((b >> 2 & 0x1f) + 1, run);
                    value.remove(p);
                    continue;
                }
            }
        }
        p += 1;
    }
}

/// Sparse → dense (`hllSparseToDense`, then the dense set), for a
/// well-formed body. The header is kept but for the encoding byte.
fn promote(value: &mut Vec<u8>, index: usize, count: u8) {
    let mut dense = vec![0u8; DENSE_LEN];
    dense[..HEADER_LEN].copy_from_slice(&value[..HEADER_LEN]);
    dense[4] = ENC_DENSE;
    let regs = &mut dense[HEADER_LEN..];
    let mut i = 0;
    for op in ops(&value[HEADER_LEN..]) {
        // Cannot fail: every caller has walked the whole body with op_at
        // (refusing a corrupt one) before promoting.
        let (v, run) = op.expect("checked by the caller");
        if v != 0 {
            for r in i..i + run {
                dense_put(regs, r, v);
            }
        }
        i += run;
    }
    let changed = dense_set(regs, index, count);
    debug_assert!(changed, "a promotion always raises the register");
    *value = dense;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A dense value with the given registers, cache valid and 0.
    fn dense_of(regs: &[u8]) -> Vec<u8> {
        let mut v = create()[..HEADER_LEN].to_vec();
        v[4] = ENC_DENSE;
        v[15] = 0;
        v.resize(DENSE_LEN, 0);
        for (i, &r) in regs.iter().enumerate() {
            dense_put(&mut v[HEADER_LEN..], i, r);
        }
        v
    }

    #[test]
    fn crafted_elements_land_where_asked() {
        for (i, c, salt) in [
            (0, 1, 0),
            (5, 33, 7),
            (16_383, 51, 9),
            (77, 50, 1),
            (1234, 32, u64::MAX),
        ] {
            assert_eq!(pattern(&crafted_element(i, c, salt)), (i, c));
        }
        assert_ne!(crafted_element(5, 33, 1), crafted_element(5, 33, 2));
    }

    #[test]
    fn new_key_is_one_xzero_with_a_stale_zero_cache() {
        let mut v = create();
        assert_eq!(v, b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80\x7f\xff");
        assert_eq!(cached_count(&v), None);
        assert_eq!(count(&mut v), Ok((0, true)));
        assert_eq!(registers(&v).unwrap(), vec![0; REGISTERS]);
    }

    #[test]
    fn estimate_of_writes_nothing_and_equals_count() {
        let mut v = create();
        for i in 0..200u32 {
            add(&mut v, &i.to_le_bytes(), DEFAULT_SPARSE_MAX_BYTES).unwrap();
            let before = v.clone();
            let e = estimate_of(&v).unwrap();
            assert_eq!(v, before);
            let mut c = v.clone();
            assert_eq!(count(&mut c).unwrap().0, e);
            assert_eq!(estimate_of(&c), Ok(e));
        }
    }

    #[test]
    fn only_small_sparse_values_may_stay_stale() {
        let mut v = create();
        assert!(!worth_caching(&v));
        let mut i = 0u32;
        while v.len() <= STALE_OK_BYTES {
            add(&mut v, &i.to_le_bytes(), DEFAULT_SPARSE_MAX_BYTES).unwrap();
            i += 1;
        }
        assert!(worth_caching(&v));
        assert!(worth_caching(&dense_of(&[])));
    }

    #[test]
    fn validate_refuses_what_the_server_refuses() {
        assert_eq!(validate(b""), Err(HllError::NotHll));
        assert_eq!(
            validate(b"HYLL\x01\0\0\0\0\0\0\0\0\0\0"),
            Err(HllError::NotHll)
        );
        assert_eq!(
            validate(b"HYLX\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff"),
            Err(HllError::NotHll)
        );
        assert_eq!(
            validate(b"HYLL\x02\0\0\0\0\0\0\0\0\0\0\0\x7f\xff"),
            Err(HllError::NotHll)
        );
        let mut d = dense_of(&[]);
        assert_eq!(validate(&d), Ok(()));
        d.push(0);
        assert_eq!(validate(&d), Err(HllError::NotHll));
        // A header-only sparse value passes the header check: its body is corrupt.
        let head = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80".to_vec();
        assert_eq!(validate(&head), Ok(()));
        assert_eq!(count(&mut head.clone()), Err(HllError::Corrupt));
        assert_eq!(add(&mut head.clone(), b"x", 3000), Err(HllError::Corrupt));
    }

    #[test]
    fn corrupt_sparse_bodies_are_refused_and_left_alone() {
        let head = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80";
        for body in [
            &b"\x7f\xfe"[..],        // 16,383 registers
            b"\x7f\xff\x00",         // 16,385
            b"\x7f\xf5\x84\x08\x55", // a stray opcode after the 16,384
            b"\x7f\xfe\x40",         // a cut XZERO
        ] {
            let v = [&head[..], body].concat();
            let mut a = v.clone();
            assert_eq!(add(&mut a, b"x", 3000), Err(HllError::Corrupt));
            assert_eq!(a, v);
            assert_eq!(count(&mut a), Err(HllError::Corrupt));
            assert_eq!(a, v);
        }
    }

    #[test]
    fn add_sets_the_stale_bit_and_count_clears_it() {
        let mut v = create();
        assert!(add(&mut v, b"a", 3000).unwrap());
        assert_eq!(v[15], STALE);
        assert_eq!(cached_count(&v), None);
        assert!(!add(&mut v, b"a", 3000).unwrap(), "same element again");
        assert_eq!(count(&mut v), Ok((1, true)));
        assert_eq!(count(&mut v), Ok((1, false)));
        assert_eq!(cached_count(&v), Some(1));
    }

    #[test]
    fn small_sets_count_exactly() {
        let mut v = create();
        for n in 1..=200u32 {
            add(&mut v, format!("e{n}").as_bytes(), 3000).unwrap();
            let (c, _) = count(&mut v).unwrap();
            assert!(
                (c as i64 - n as i64).abs() <= 1 + n as i64 / 100,
                "{n}: {c}"
            );
        }
    }

    #[test]
    fn promotes_by_size_at_the_configured_limit() {
        let mut v = create();
        let mut n = 0;
        while v[4] == ENC_SPARSE {
            let before = v.len();
            add(&mut v, format!("e{n}").as_bytes(), 300).unwrap();
            if v[4] == ENC_SPARSE {
                assert!(v.len() <= 300);
            } else {
                assert!(before > 300 - 3, "promoted early at {before} bytes");
            }
            n += 1;
        }
        assert_eq!(v.len(), DENSE_LEN);
        assert!(n > 50 && n < 300, "{n}");
    }

    #[test]
    fn promotes_by_value_above_32_only() {
        let mut v = create();
        set_register(&mut v, 100, 32, 3000).unwrap();
        assert_eq!(v[4], ENC_SPARSE);
        assert_eq!(registers(&v).unwrap()[100], 32);
        set_register(&mut v, 100, 33, 3000).unwrap();
        assert_eq!(v.len(), DENSE_LEN);
        let regs = registers(&v).unwrap();
        assert_eq!(regs[100], 33);
        assert_eq!(regs.iter().filter(|&&r| r != 0).count(), 1);
        assert_eq!(v[15], STALE);
    }

    #[test]
    fn promotion_keeps_the_header_bytes() {
        let mut v = create();
        v[5..8].copy_from_slice(b"abc");
        v[8..16].copy_from_slice(&7u64.to_le_bytes());
        set_register(&mut v, 0, 40, 3000).unwrap();
        assert_eq!(&v[..4], b"HYLL");
        assert_eq!(&v[4..8], b"\0abc");
        assert_eq!(&v[8..16], &[7, 0, 0, 0, 0, 0, 0, 0x80]);
    }

    #[test]
    fn neighbouring_equal_values_merge_into_one_val() {
        let mut v = create();
        for i in 10..14 {
            set_register(&mut v, i, 3, 3000).unwrap();
        }
        // XZERO:10, VAL:3×4, XZERO:16370.
        assert_eq!(&v[HEADER_LEN..], &[0x09, 0x80 | 2 << 2 | 3, 0x7f, 0xf1]);
    }

    #[test]
    fn last_dense_register_does_not_spill() {
        let mut v = dense_of(&[]);
        set_register(&mut v, REGISTERS - 1, 63, 3000).unwrap();
        assert_eq!(registers(&v).unwrap()[REGISTERS - 1], 63);
        assert_eq!(v[DENSE_LEN - 1], 63 << 2);
    }

    #[test]
    fn estimator_of_an_empty_hll_is_zero() {
        let mut h = [0u32; 64];
        h[0] = REGISTERS as u32;
        assert_eq!(estimate(&h), 0);
    }

    /// Register updates: (index, value).
    fn updates() -> impl Strategy<Value = Vec<(usize, u8)>> {
        prop::collection::vec(
            prop_oneof![
                (0usize..REGISTERS, 1u8..=51),
                (0usize..40, 1u8..=4), // clustered: many VAL splits and merges
                (16_340usize..REGISTERS, 1u8..=6),
            ],
            0..400,
        )
    }

    proptest! {
        /// Sparse and dense agree on every register and on the count, and the
        /// registers are the running maximum.
        #[test]
        fn sparse_and_dense_agree(ups in updates(), max in prop_oneof![Just(40usize), Just(300), Just(3000)]) {
            let mut sparse = create();
            let mut dense = dense_of(&[]);
            let mut want = vec![0u8; REGISTERS];
            for &(i, c) in &ups {
                let expect = c > want[i];
                want[i] = want[i].max(c);
                prop_assert_eq!(set_register(&mut sparse, i, c, max), Ok(expect));
                prop_assert_eq!(set_register(&mut dense, i, c, max), Ok(expect));
                if sparse[4] == ENC_SPARSE {
                    prop_assert!(sparse.len() <= max.max(18));
                }
            }
            prop_assert_eq!(registers(&sparse).unwrap(), want.clone());
            prop_assert_eq!(registers(&dense).unwrap(), want);
            prop_assert_eq!(count(&mut sparse).unwrap().0, count(&mut dense).unwrap().0);
        }

        /// With no size limit a sparse value stays sparse (values up to 32)
        /// and its opcodes always cover exactly the 16,384 registers.
        #[test]
        fn sparse_values_decode_to_exactly_all_registers(ups in updates()) {
            let mut v = create();
            for &(i, c) in &ups {
                set_register(&mut v, i, c.min(32), 1 << 20).unwrap();
            }
            prop_assert_eq!(v[4], ENC_SPARSE);
            let total: usize = ops(&v[HEADER_LEN..]).map(|o| o.unwrap().1).sum();
            prop_assert_eq!(total, REGISTERS);
        }
    }

    /// The reference add + count (the path before [`add_counted`]): the
    /// reference walk [`covering`], the in-place set, then [`count`] or
    /// [`estimate_of`] walking the body again.
    fn reference_add_counted(
        value: &mut Vec<u8>,
        index: usize,
        count_: u8,
        max: usize,
    ) -> Result<Added, HllError> {
        validate(value)?;
        let changed = if value[4] == ENC_DENSE {
            dense_set(&mut value[HEADER_LEN..], index, count_)
        } else {
            let c = covering(&value[HEADER_LEN..], index)?;
            sparse_set(value, &c, index, count_, max)
        };
        if changed {
            value[15] |= STALE;
        }
        let (n, recounted) = if worth_caching(value) {
            count(value)?
        } else {
            (estimate_of(value)?, false)
        };
        Ok(Added {
            changed,
            count: n,
            recounted,
        })
    }

    /// Sparse bodies from a random walk of adds, optionally damaged: a byte
    /// changed, cut, or one added.
    fn bodies() -> impl Strategy<Value = Vec<u8>> {
        (
            updates(),
            0u8..4,
            any::<usize>(),
            any::<u8>(),
            any::<bool>(),
        )
            .prop_map(|(ups, damage, at, byte, stale)| {
                let mut v = create();
                for &(i, c) in &ups {
                    set_register(&mut v, i, c.min(32), 1 << 20).unwrap();
                }
                if !stale {
                    count(&mut v).unwrap();
                }
                let body = v.len() - HEADER_LEN;
                match damage {
                    1 => v[HEADER_LEN + at % body] = byte,
                    2 => v.truncate(HEADER_LEN + at % body),
                    3 => v.insert(HEADER_LEN + at % (body + 1), byte),
                    _ => {}
                }
                v
            })
    }

    #[test]
    fn one_walk_refuses_what_the_reference_refuses() {
        let head = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80";
        for body in [
            &b""[..],
            b"\x7f\xfe",
            b"\x7f\xff\x00",
            b"\x7f\xf5\x84\x08\x55",
            b"\x7f\xfe\x40",
            b"\x40",
            b"\x7f\xff\x7f\xff",
        ] {
            let v = [&head[..], body].concat();
            for index in [0, 1, 11, 16_382, 16_383] {
                let mut a = v.clone();
                assert_eq!(
                    set_register_counted(&mut a, index, 3, 3000),
                    Err(HllError::Corrupt)
                );
                assert_eq!(a, v, "nothing written");
            }
        }
        // Not an HLL at all: the header check comes first.
        let mut x = b"HYLL\x02\0\0\0\0\0\0\0\0\0\0\0\x7f\xff".to_vec();
        assert_eq!(add_counted(&mut x, b"a", 3000), Err(HllError::NotHll));
    }

    proptest! {
        /// The one-walk add and count leaves the same bytes, replies and
        /// errors as the reference two-walk path, on well-formed and damaged
        /// sparse bodies, small and dense values, at any size limit.
        #[test]
        fn one_walk_matches_the_reference(
            v in bodies(),
            index in prop_oneof![0usize..REGISTERS, 0usize..40, 16_340usize..REGISTERS],
            c in prop_oneof![1u8..=5, 1u8..=51],
            max in prop_oneof![Just(40usize), Just(300), Just(3000)],
        ) {
            let mut a = v.clone();
            let mut b = v.clone();
            let got = set_register_counted(&mut a, index, c, max);
            let want = reference_add_counted(&mut b, index, c, max);
            prop_assert_eq!(got, want);
            if got.is_ok() {
                prop_assert_eq!(&a, &b);
            } else {
                prop_assert_eq!(&a, &v);
            }
        }

        /// The estimate before an add, taken from the add's own walk, is the
        /// number `estimate_of` gives for the bytes before it, and the add
        /// itself (bytes, reply, count) is the one of `set_register_counted`,
        /// on well-formed and damaged sparse bodies and dense values.
        #[test]
        fn before_from_the_walk_is_estimate_of_the_old_bytes(
            v in bodies(),
            index in prop_oneof![0usize..REGISTERS, 0usize..40, 16_340usize..REGISTERS],
            c in prop_oneof![1u8..=5, 1u8..=51],
            max in prop_oneof![Just(40usize), Just(300), Just(3000)],
        ) {
            let mut a = v.clone();
            let mut b = v.clone();
            let got = set_register_counted_before(&mut a, index, c, max);
            let want = set_register_counted(&mut b, index, c, max);
            prop_assert_eq!(got.map(|(x, _)| x), want);
            prop_assert_eq!(&a, &b);
            if let Ok((_, before)) = got {
                prop_assert_eq!(before, estimate_of(&v).unwrap());
            }
        }

        /// The same along sequences of adds, through promotion to dense,
        /// with the count cached (by `count`) or stale before each add.
        #[test]
        fn before_from_the_walk_along_sequences(
            ups in updates(), max in prop_oneof![Just(40usize), Just(300), Just(3000)],
            cache in proptest::collection::vec(any::<bool>(), 64),
        ) {
            let mut a = create();
            for (k, &(i, c)) in ups.iter().enumerate() {
                if cache[k % cache.len()] {
                    count(&mut a).unwrap();
                }
                let old = a.clone();
                let mut b = a.clone();
                let (got, before) = set_register_counted_before(&mut a, i, c, max).unwrap();
                prop_assert_eq!(got, set_register_counted(&mut b, i, c, max).unwrap());
                prop_assert_eq!(&a, &b);
                prop_assert_eq!(before, estimate_of(&old).unwrap());
            }
        }

        /// A sequence of one-walk adds on one value equals the reference,
        /// through promotion to dense.
        #[test]
        fn one_walk_sequences_match_the_reference(ups in updates(), max in prop_oneof![Just(40usize), Just(300), Just(3000)]) {
            let mut a = create();
            let mut b = create();
            for &(i, c) in &ups {
                prop_assert_eq!(
                    set_register_counted(&mut a, i, c, max),
                    reference_add_counted(&mut b, i, c, max)
                );
                prop_assert_eq!(&a, &b);
            }
        }
    }

    /// `hllCount` step by step, as the server writes it (no shortcut).
    fn reference_estimate(h: &[u32; 64]) -> u64 {
        let m = REGISTERS as f64;
        let q = Q as usize;
        let mut z = m * tau((m - f64::from(h[q + 1])) / m);
        for j in (1..=q).rev() {
            z += f64::from(h[j]);
            z *= 0.5;
        }
        z += m * sigma(f64::from(h[0]) / m);
        (0.721_347_520_444_481_7 * m * m / z).round() as u64
    }

    /// Histograms of 16,384 registers: mostly small values (a sparse
    /// value's), or any of the 64 bins, registers above `Q` included.
    fn histograms() -> impl Strategy<Value = [u32; 64]> {
        let values = prop_oneof![0usize..8, 0usize..64, 40usize..64];
        proptest::collection::vec((values, 1u32..3000), 0..40).prop_map(|runs| {
            let mut h = [0u32; 64];
            let mut left = REGISTERS as u32;
            for (v, n) in runs {
                let n = n.min(left);
                h[v] += n;
                left -= n;
            }
            h[0] += left;
            h
        })
    }

    proptest! {
        /// The estimate with its shortcuts (the empty top bins skipped,
        /// the sigma term kept) is `hllCount`'s to the bit, asked twice
        /// (computed, then kept).
        #[test]
        fn estimate_is_hllcount_to_the_bit(h in histograms()) {
            let want = reference_estimate(&h);
            prop_assert_eq!(estimate(&h), want);
            prop_assert_eq!(estimate(&h), want);
        }
    }

    proptest! {
        /// Any top bin from `top_of` to `Q` gives the estimate's bits.
        #[test]
        fn estimate_from_any_top_above_the_highest_bin(h in histograms(), extra in 0usize..60) {
            let want = reference_estimate(&h);
            let top = (top_of(&h) + extra).min(Q as usize);
            prop_assert_eq!(estimate_from(&h, top), want);
        }

        /// The rounding without the library call is `f64::round`'s.
        #[test]
        fn round_to_u64_is_the_library_round(
            x in prop_oneof![
                0.0f64..1e6, 0.0f64..1e20, (0u64..1 << 40).prop_map(|n| n as f64 + 0.5),
                (0u64..1 << 53).prop_map(|n| n as f64 / 2.0), any::<f64>(),
            ],
        ) {
            prop_assert_eq!(round_to_u64(x), x.round() as u64);
        }
    }

    proptest! {
        /// The sum with one register moved is the sum taken again, to the
        /// bit, for histograms of a sparse value's range (registers up to
        /// 32) and any move up within [`EXACT_TOP`].
        #[test]
        fn moved_sum_is_the_sum_taken_again(
            runs in proptest::collection::vec((1usize..=32, 1u32..3000), 0..30),
            old in 0u8..=32, up in 1u8..=37,
        ) {
            let mut h = [0u32; 64];
            let mut left = REGISTERS as u32 - 1;
            for (v, n) in runs {
                let n = n.min(left);
                h[v] += n;
                left -= n;
            }
            h[0] += left;
            h[usize::from(old)] += 1;
            let new = (old + up).min(EXACT_TOP as u8);
            prop_assume!(new > old);
            let z = register_sum(&h, top_of(&h));
            let mut after = h;
            after[usize::from(old)] -= 1;
            after[usize::from(new)] += 1;
            let want = register_sum(&after, top_of(&after));
            prop_assert_eq!(moved_sum(z, old, new).to_bits(), want.to_bits());
            prop_assert_eq!(estimate_of_sum(moved_sum(z, old, new), after[0]), reference_estimate(&after));
        }
    }

    #[test]
    fn rounding_edges_are_the_library_round() {
        for x in [
            0.0,
            -0.0,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            1.8446744073709552e19,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -0.5,
            -1.5,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(round_to_u64(x), x.round() as u64, "{x:e}");
        }
    }

    #[test]
    fn estimate_edge_histograms_are_hllcount_to_the_bit() {
        let mut all = vec![[0u32; 64]];
        for v in [0usize, 1, 5, 49, 50, 51, 52, 63] {
            let mut h = [0u32; 64];
            h[v] = REGISTERS as u32;
            all.push(h);
            let mut h2 = [0u32; 64];
            h2[0] = REGISTERS as u32 - 1;
            h2[v] += 1;
            all.push(h2);
        }
        for h in all {
            assert_eq!(estimate(&h), reference_estimate(&h), "{h:?}");
            assert_eq!(estimate(&h), reference_estimate(&h), "{h:?}");
        }
    }
}
