//! Derived key names: the one place that builds them. Pure Rust, no Redis.
//!
//! Layout: `<K>\0<kind>[:<parts>]`, where `K` is the board key and `\0` is a
//! zero byte; a board key with no hash tag gets its own name as the tag:
//! `<K>\0{<K>}<kind>…`. So:
//! - every derived key starts with `K`: an ACL key pattern such as
//!   `~hot:{news}*` that covers the board covers its derived keys;
//! - every derived key hashes to `K`'s cluster slot;
//! - names never collide: board keys may not contain a zero byte, so the first
//!   zero byte marks where `K` ends, and every part but the last is length
//!   prefixed, whatever bytes the ids hold (`:`, `{`, `}`, spaces, newlines…).
//!   A derived key is never itself a valid board key.

/// What a derived key holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Article page-view counter (string, INCRBY).
    Pv,
    /// Article unique visitors (HyperLogLog).
    Uv,
    /// Article meta hash: `publishedAt` (ms). PV and UV live only in the
    /// `pv` counter and the `uv` HyperLogLog.
    Meta,
    /// HOT board record (string `<maxViewAt>:<fp>`, see `hot::record`).
    HotBoard,
    /// RANK board layout (string).
    Layout,
    /// Compact dedup shard (string of sections of 12-byte records, see
    /// `hot::dedup`); one part: `<window s>:<shard>`. The layout before
    /// it, read for one window after an upgrade, had one string per
    /// generation: `<window s>:<generation>:<shard>`.
    Dedup,
    /// Views of one visitor in one window (string counter); parts:
    /// `<window s>:<window index>`, visitor.
    VisitorViews,
    /// Article's suspicious-view counter (string).
    Suspicious,
    /// HOT board's publish-time index (ZSET article → publish ms).
    PubIndex,
    /// RANK period board (ZSET, packed like the board); one part: the
    /// period id (`d2026-11-23`, `w2026-W48`, `m2026-11`, see
    /// `rank::period::Span::id`).
    Period,
    /// HOT takedown tombstone (string: the removal time, unix ms), set by
    /// HOT.REM with the retention expiry; one part: the article. While it
    /// lives, views of the article are not counted (status `removed`).
    Removed,
    /// HOT article index (ZSET article → sequence number): every article
    /// the board holds a key for (counters, meta, tombstone), in the order
    /// it was first seen. HOT.EXPORT's cursor, HOT.DROP's list of article
    /// keys, HOT.INFO's `articles_tracked`.
    Index,
    /// HOT board's trending ranking (ZSET article → stored forward-decay
    /// sum, see `hot::trending`): only on a board that keeps one.
    Trending,
    /// HOT board epoch (string: the epoch number, an integer ≥ 1): exists
    /// once a board of this name was dropped by HOT.DROP. The HOT keys of a
    /// board of epoch `e` ≥ 1 are named with `~<e>:` before their kind
    /// ([`derived_epoch_into`]), so the keys of a dropped board (deleted in
    /// steps, or expiring by themselves) are never read by a new board of
    /// the same name. Never itself epoch-named.
    Epoch,
}

impl Kind {
    /// Whether the key belongs to a HOT board and so carries the board's
    /// epoch in its name (not the RANK kinds, nor the epoch key itself).
    pub fn has_epoch(self) -> bool {
        !matches!(self, Kind::Layout | Kind::Period | Kind::Epoch)
    }
}

impl Kind {
    fn tag(self) -> &'static [u8] {
        match self {
            Kind::Pv => b"pv",
            Kind::Uv => b"uv",
            Kind::Meta => b"meta",
            Kind::HotBoard => b"board",
            Kind::Layout => b"layout",
            Kind::Dedup => b"dd",
            Kind::VisitorViews => b"vv",
            Kind::Suspicious => b"sus",
            Kind::PubIndex => b"pub",
            Kind::Period => b"period",
            Kind::Removed => b"rm",
            Kind::Index => b"ix",
            Kind::Trending => b"tr",
            Kind::Epoch => b"ep",
        }
    }
}

/// The hash tag Redis Cluster would use for `key`: the bytes between the first
/// `{` and the first `}` after it, if non-empty; `None` when the whole key is hashed.
pub fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let close = key[open + 1..].iter().position(|&b| b == b'}')?;
    (close > 0).then(|| &key[open + 1..open + 1 + close])
}

/// Why a key cannot be a board key. `Display` gives the message without the
/// `ERR ` prefix (every message starts with `board key`); the command glue
/// sends it as `ERR <message>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoardKeyError {
    /// The key is empty.
    Empty,
    /// The key contains a zero byte (it ends a board key in derived names).
    ZeroByte,
    /// The key has a `{` or `}` but no hash tag.
    BraceWithoutTag,
}

impl std::fmt::Display for BoardKeyError {
    /// The message without the `ERR ` prefix.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BoardKeyError::Empty => "board key must not be empty",
            BoardKeyError::ZeroByte => "board key must not contain a zero byte",
            BoardKeyError::BraceWithoutTag => {
                "board key has a '{' or '}' but no hash tag: use a key such as hot:{news}"
            }
        })
    }
}

impl std::error::Error for BoardKeyError {}

/// Checks that `board` can be a board key: not empty, no zero byte, and a
/// key without a hash tag must not contain `{` or `}` (its derived keys use
/// it as their tag). Errors: [`BoardKeyError`].
pub fn check_board(board: &[u8]) -> Result<(), BoardKeyError> {
    if board.is_empty() {
        return Err(BoardKeyError::Empty);
    }
    if board.contains(&0) {
        return Err(BoardKeyError::ZeroByte);
    }
    if hash_tag(board).is_none() && board.iter().any(|&b| b == b'{' || b == b'}') {
        return Err(BoardKeyError::BraceWithoutTag);
    }
    Ok(())
}

/// Builds a derived key name. `parts` are ids (article, visitor). Call
/// [`check_board`] first; for a board that fails it the guarantees do not hold.
pub fn derived(board: &[u8], kind: Kind, parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::with_capacity(2 * board.len() + 16);
    derived_into(&mut out, board, kind, parts);
    out
}

/// [`derived`] into a buffer the caller reuses (cleared first), so a
/// command that names many keys allocates once.
pub fn derived_into(out: &mut Vec<u8>, board: &[u8], kind: Kind, parts: &[&[u8]]) {
    out.clear();
    out.extend_from_slice(board);
    out.push(0);
    if hash_tag(board).is_none() {
        out.push(b'{');
        out.extend_from_slice(board);
        out.push(b'}');
    }
    out.extend_from_slice(kind.tag());
    for (i, part) in parts.iter().enumerate() {
        out.push(b':');
        if i + 1 < parts.len() {
            out.extend_from_slice(crate::parse::IntText::new(part.len() as i64).as_bytes());
            out.push(b':');
        }
        out.extend_from_slice(part);
    }
}

/// [`derived_into`] for a HOT board of epoch `epoch`: the same name for
/// epoch 0 (a board never dropped), else with `~<epoch>:` before the kind
/// (`hot:{n}\0~2:pv:a1`). `~` starts no kind, so names of different epochs
/// never collide. Kinds without an epoch ([`Kind::has_epoch`]) ignore it.
pub fn derived_epoch_into(
    out: &mut Vec<u8>,
    board: &[u8],
    epoch: i64,
    kind: Kind,
    parts: &[&[u8]],
) {
    derived_into(out, board, kind, parts);
    if epoch != 0 && kind.has_epoch() {
        // After `K\0` and, for a board without a hash tag, `{K}`.
        let at = board.len() + 1 + hash_tag(board).map_or(board.len() + 2, |_| 0);
        let mut tag = vec![b'~'];
        tag.extend_from_slice(crate::parse::IntText::new(epoch).as_bytes());
        tag.push(b':');
        out.splice(at..at, tag);
    }
}

/// The board whose record `name` is: `Some(K)` when `name` is exactly the
/// name of the record of kind `kind` (no parts) of a board `K`, at any
/// epoch for a kind that carries one ([`Kind::has_epoch`]). HOT.BOARDS
/// recognises HOT boards by their [`Kind::HotBoard`] record, RANK.BOARDS
/// RANK boards by their [`Kind::Layout`].
///
/// `K` is the bytes before the first zero byte; it must pass
/// [`check_board`], and the name rebuilt from it (and, for an epoch kind,
/// the epoch read after `~` in the name: an integer ≥ 1 in the server's
/// canonical form) must equal `name` byte for byte. So a key that merely
/// contains `\0board`, a derived key of another kind, and a record name
/// with a malformed or zero epoch (`~0:`, `~01:`) are all refused. Cheap on
/// the common miss: a name without a zero byte, or not ending with the
/// kind's tag, is refused without allocating.
pub fn board_of_record(name: &[u8], kind: Kind) -> Option<&[u8]> {
    let end = name.iter().position(|&b| b == 0)?;
    if !name.ends_with(kind.tag()) {
        return None;
    }
    let board = &name[..end];
    check_board(board).ok()?;
    let epoch = if kind.has_epoch() {
        // Where `~<e>:` would start: after `K\0` and, without a hash tag, `{K}`.
        let at = board.len() + 1 + hash_tag(board).map_or(board.len() + 2, |_| 0);
        match name.get(at..) {
            Some([b'~', rest @ ..]) => {
                let digits = &rest[..rest.iter().position(|&b| b == b':')?];
                match crate::parse::parse_i64("epoch", digits) {
                    Ok(e) if e >= 1 => e,
                    _ => return None,
                }
            }
            _ => 0,
        }
    } else {
        0
    };
    let mut rebuilt = Vec::with_capacity(name.len());
    derived_epoch_into(&mut rebuilt, board, epoch, kind, &[]);
    (rebuilt == name).then_some(board)
}

/// CRC16/XMODEM as used by Redis Cluster, for tests of slot placement.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The Redis Cluster slot (0..16384) of `key`.
pub fn slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key).unwrap_or(key)) % 16384
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn crc16_matches_redis_reference_value() {
        // From the Redis Cluster spec: CRC16 of "123456789" is 0x31C3.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"{user1000}.following"), slot(b"user1000"));
    }

    #[test]
    fn derived_key_is_readable() {
        assert_eq!(
            derived(b"hot:{news}", Kind::Pv, &[b"a1"]),
            b"hot:{news}\0pv:a1"
        );
        assert_eq!(derived(b"lb", Kind::Layout, &[]), b"lb\0{lb}layout");
        assert_eq!(
            derived(b"lb", Kind::Period, &[b"w2026-W48"]),
            b"lb\0{lb}period:w2026-W48"
        );
        assert_eq!(
            derived(b"hot:{n}", Kind::VisitorViews, &[b"a:1", b"v"]),
            b"hot:{n}\0vv:3:a:1:v"
        );
    }

    #[test]
    fn epoch_names() {
        let mut out = Vec::new();
        derived_epoch_into(&mut out, b"hot:{n}", 2, Kind::Pv, &[b"a1"]);
        assert_eq!(out, b"hot:{n}\0~2:pv:a1");
        derived_epoch_into(&mut out, b"hot:n", 3, Kind::VisitorViews, &[b"w:1", b"v"]);
        assert_eq!(out, b"hot:n\0{hot:n}~3:vv:3:w:1:v");
        derived_epoch_into(&mut out, b"hot:{n}", 0, Kind::Pv, &[b"a1"]);
        assert_eq!(out, b"hot:{n}\0pv:a1");
        derived_epoch_into(&mut out, b"hot:{n}", 5, Kind::Epoch, &[]);
        assert_eq!(out, b"hot:{n}\0ep");
        derived_epoch_into(&mut out, b"hot:{n}", 2, Kind::Trending, &[]);
        assert_eq!(out, b"hot:{n}\0~2:tr");
    }

    #[test]
    fn derived_keys_start_with_the_board_key() {
        for b in [&b"hot:news"[..], b"hot:{news}"] {
            assert!(derived(b, Kind::Meta, &[b"x"]).starts_with(b));
        }
    }

    #[test]
    fn board_with_closing_brace_and_no_tag_is_refused() {
        for b in [&b"a}b"[..], b"a{}b", b"a{b"] {
            assert_eq!(check_board(b), Err(BoardKeyError::BraceWithoutTag));
        }
        assert_eq!(check_board(b"a\0b"), Err(BoardKeyError::ZeroByte));
        assert_eq!(check_board(b""), Err(BoardKeyError::Empty));
        for e in [
            BoardKeyError::Empty,
            BoardKeyError::ZeroByte,
            BoardKeyError::BraceWithoutTag,
        ] {
            assert!(e.to_string().starts_with("board key "), "{e}");
        }
        assert!(check_board(b"hot:{x}").is_ok());
        assert!(check_board(b"hot:{x}}{").is_ok());
        assert!(check_board(b"hot:news").is_ok());
    }

    #[test]
    fn records_name_their_board() {
        fn hot(n: &[u8]) -> Option<&[u8]> {
            board_of_record(n, Kind::HotBoard)
        }
        fn rank(n: &[u8]) -> Option<&[u8]> {
            board_of_record(n, Kind::Layout)
        }
        assert_eq!(hot(b"hot:{n}\0board"), Some(&b"hot:{n}"[..]));
        assert_eq!(hot(b"hot:n\0{hot:n}board"), Some(&b"hot:n"[..]));
        assert_eq!(hot(b"hot:{n}\0~2:board"), Some(&b"hot:{n}"[..]));
        assert_eq!(hot(b"hot:n\0{hot:n}~12:board"), Some(&b"hot:n"[..]));
        assert_eq!(rank(b"lb\0{lb}layout"), Some(&b"lb"[..]));
        assert_eq!(rank(b"lb:{x}\0layout"), Some(&b"lb:{x}"[..]));
        for bad in [
            &b"hot:{n}"[..],
            b"hot:{n}board",
            b"hot:{n}\0pv:board",
            b"hot:n\0board",        // no tag: `{K}` is missing
            b"hot:n\0{other}board", // another tag
            b"hot:{n}\0~0:board",   // epoch 0 is never written
            b"hot:{n}\0~01:board",  // not canonical
            b"hot:{n}\0~-1:board",
            b"hot:{n}\0~x:board",
            b"hot:{n}\0~2board",
            b"hot:{n}\0~2:~2:board",
            b"hot:{n}\0board\0board",
            b"\0board",         // empty board key
            b"a{b\0{a{b}board", // not a valid board key
            b"hot:{n}\0xboard",
            b"hot:{n}\0ep",
        ] {
            assert_eq!(hot(bad), None, "{}", bad.escape_ascii());
        }
        // RANK layouts carry no epoch.
        assert_eq!(rank(b"lb:{x}\0~2:layout"), None);
        assert_eq!(rank(b"lb:{x}\0board"), None);
        assert_eq!(hot(b"lb:{x}\0layout"), None);
    }

    fn any_kind() -> impl Strategy<Value = Kind> {
        prop_oneof![
            Just(Kind::Pv),
            Just(Kind::Uv),
            Just(Kind::Meta),
            Just(Kind::HotBoard),
            Just(Kind::Layout),
            Just(Kind::Dedup),
            Just(Kind::VisitorViews),
            Just(Kind::Suspicious),
            Just(Kind::PubIndex),
            Just(Kind::Period),
            Just(Kind::Removed),
            Just(Kind::Index),
            Just(Kind::Trending),
            Just(Kind::Epoch)
        ]
    }

    fn id() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop_oneof![Just(b':'), Just(b'{'), Just(b'}'), Just(b' '), any::<u8>()],
            0..12,
        )
    }

    fn parts_for(kind: Kind) -> impl Strategy<Value = Vec<Vec<u8>>> {
        let n = match kind {
            Kind::HotBoard
            | Kind::Layout
            | Kind::PubIndex
            | Kind::Index
            | Kind::Trending
            | Kind::Epoch => 0,
            Kind::VisitorViews => 2,
            _ => 1,
        };
        prop::collection::vec(id(), n..=n)
    }

    fn entry() -> impl Strategy<Value = (Vec<u8>, Kind, Vec<Vec<u8>>)> {
        (
            id().prop_filter("board", |b| check_board(b).is_ok()),
            any_kind(),
        )
            .prop_flat_map(|(b, k)| (Just(b), Just(k), parts_for(k)))
    }

    proptest! {
        #[test]
        fn derived_keys_stay_in_the_board_slot((board, kind, parts) in entry()) {
            let p: Vec<&[u8]> = parts.iter().map(|v| v.as_slice()).collect();
            prop_assert_eq!(slot(&derived(&board, kind, &p)), slot(&board));
        }

        #[test]
        fn epoch_names_never_collide(a in entry(), b in entry(), ea in 0i64..4, eb in 0i64..4) {
            let pa: Vec<&[u8]> = a.2.iter().map(|v| v.as_slice()).collect();
            let pb: Vec<&[u8]> = b.2.iter().map(|v| v.as_slice()).collect();
            let (mut na, mut nb) = (Vec::new(), Vec::new());
            derived_epoch_into(&mut na, &a.0, ea, a.1, &pa);
            derived_epoch_into(&mut nb, &b.0, eb, b.1, &pb);
            prop_assert_eq!(slot(&na), slot(&a.0));
            prop_assert!(na.starts_with(&a.0));
            let ea = if a.1.has_epoch() { ea } else { 0 };
            let eb = if b.1.has_epoch() { eb } else { 0 };
            prop_assert_eq!(na == nb, a == b && ea == eb);
        }

        #[test]
        fn every_record_name_is_recognised(
            board in id().prop_filter("board", |b| check_board(b).is_ok()),
            epoch in 0i64..1_000_000,
        ) {
            let mut name = Vec::new();
            derived_epoch_into(&mut name, &board, epoch, Kind::HotBoard, &[]);
            prop_assert_eq!(board_of_record(&name, Kind::HotBoard), Some(board.as_slice()));
            prop_assert_eq!(board_of_record(&name, Kind::Layout), None);
            let layout = derived(&board, Kind::Layout, &[]);
            prop_assert_eq!(board_of_record(&layout, Kind::Layout), Some(board.as_slice()));
            prop_assert_eq!(board_of_record(&layout, Kind::HotBoard), None);
        }

        #[test]
        fn only_record_names_are_recognised((board, kind, parts) in entry(), epoch in 0i64..4) {
            let p: Vec<&[u8]> = parts.iter().map(|v| v.as_slice()).collect();
            let mut name = Vec::new();
            derived_epoch_into(&mut name, &board, epoch, kind, &p);
            for want in [Kind::HotBoard, Kind::Layout] {
                let hit = board_of_record(&name, want);
                prop_assert_eq!(hit.is_some(), kind == want, "{}", name.escape_ascii());
            }
        }

        #[test]
        fn arbitrary_bytes_are_recognised_only_when_rebuilt_exactly(name in prop::collection::vec(
            prop_oneof![Just(0u8), Just(b'~'), Just(b':'), Just(b'{'), Just(b'}'), Just(b'1'), any::<u8>()],
            0..24,
        ), suffix in prop_oneof![Just(&b"board"[..]), Just(&b"layout"[..])]) {
            let mut name = name;
            name.extend_from_slice(suffix);
            for kind in [Kind::HotBoard, Kind::Layout] {
                if let Some(board) = board_of_record(&name, kind) {
                    prop_assert!(check_board(board).is_ok());
                    prop_assert!(name.starts_with(board));
                    prop_assert_eq!(slot(&name), slot(board));
                }
            }
        }

        #[test]
        fn derived_keys_never_collide(a in entry(), b in entry()) {
            prop_assume!(a != b);
            let pa: Vec<&[u8]> = a.2.iter().map(|v| v.as_slice()).collect();
            let pb: Vec<&[u8]> = b.2.iter().map(|v| v.as_slice()).collect();
            prop_assert_ne!(derived(&a.0, a.1, &pa), derived(&b.0, b.1, &pb));
        }
    }
}
