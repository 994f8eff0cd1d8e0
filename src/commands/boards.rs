//! HOT.BOARDS and RANK.BOARDS: the boards of the node (and database) the
//! command runs on, listed with a SCAN-shaped cursor, so a client need not
//! SCAN every key and guess which ZSETs are boards.
//!
//! A board is recognised by its record, whose name says whose it is: a HOT
//! board by its [`Kind::HotBoard`] record (any epoch), a RANK board by its
//! [`Kind::Layout`] ([`keys::board_of_record`]). HOT.DROP and RANK.DROP
//! delete the record at once, so a record that exists is a live board. The
//! keyspace is walked with the module scan API ([`ffi::scan_from`]), not an
//! internal SCAN, so SLOWLOG and `INFO commandstats` show only the command.
//!
//! The commands are keyless (as SCAN): no key spec, no ACL key check of the
//! names returned (a user allowed the command sees every board name of the
//! database, whatever its key patterns), and in a cluster each node lists
//! its own boards.

use super::{bulk, Args, Fail, Res};
use crate::ffi;
use crate::keys::{self, Kind};
use crate::parse::parse_count;
use redis_module::{Context, RedisString, RedisValue};

/// Largest `COUNT` of HOT.BOARDS / RANK.BOARDS: keys one call may walk.
pub const BOARDS_MAX_COUNT: i64 = 100_000;

/// `COUNT` when none is given, as SCAN's.
pub const BOARDS_DEFAULT_COUNT: i64 = 10;

/// `HOT.BOARDS cursor [COUNT n]` → `[next-cursor, [board, …]]`: the HOT
/// boards of this node's selected database (see [`list_boards`]).
pub(super) fn hot_boards_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    list_boards(ctx, argv, Kind::HotBoard)
}

/// `RANK.BOARDS cursor [COUNT n]` → `[next-cursor, [board, …]]`: the RANK
/// boards (leaderboards with a layout) of this node's selected database
/// (see [`list_boards`]).
pub(super) fn rank_boards_impl(ctx: &Context, argv: &[RedisString]) -> Res<RedisValue> {
    list_boards(ctx, argv, Kind::Layout)
}

/// The cursor argument: the decimal digits of an unsigned 64-bit number
/// (SCAN's cursor). Error: `ERR invalid cursor`.
fn parse_cursor(raw: &[u8]) -> Res<u64> {
    let digits = !raw.is_empty() && raw.iter().all(u8::is_ascii_digit);
    std::str::from_utf8(raw)
        .ok()
        .filter(|_| digits)
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| Fail::Msg("ERR invalid cursor".into()))
}

/// `<CMD> cursor [COUNT n]`, shaped like SCAN: the reply is `[next-cursor
/// (bulk string), [board name, …]]`, the cursor `0` starts a walk and the
/// reply cursor is `0` when the walk is done. One call walks about `n` keys
/// of the keyspace (default 10, 1 to [`BOARDS_MAX_COUNT`], a hint as
/// SCAN's), so it may return no board with a non-zero cursor. SCAN's
/// guarantee: a board present during the whole walk is returned at least
/// once; a board may be returned more than once. Only records holding a
/// string (what hotrank writes) and not expired are listed.
///
/// Errors: arity, `ERR invalid cursor`, `ERR COUNT must be an integer
/// between 1 and 100000`, `ERR COUNT needs a value`, `ERR syntax error at
/// '<option>'`.
fn list_boards(ctx: &Context, argv: &[RedisString], kind: Kind) -> Res<RedisValue> {
    let mut args = Args::new(argv, 2, usize::MAX)?;
    let cursor = parse_cursor(args.next().ok_or(Fail::Arity)?)?;
    let mut count = BOARDS_DEFAULT_COUNT;
    while let Some(opt) = args.next() {
        match opt.to_ascii_uppercase().as_slice() {
            b"COUNT" => count = parse_count("COUNT", args.value_of("COUNT")?, BOARDS_MAX_COUNT)?,
            _ => return Err(Fail::syntax_at(opt)),
        }
    }
    // Record names seen by the walk, with the length of their board name
    // (a prefix of the record name); checked once the walk stopped (the
    // scan callback must not look keys up).
    let mut records: Vec<(Vec<u8>, usize)> = Vec::new();
    let next = ffi::scan_from(ctx, cursor, count as usize, |name| {
        if let Some(board) = keys::board_of_record(name, kind) {
            records.push((name.to_vec(), board.len()));
        }
    })?;
    let mut boards = Vec::with_capacity(records.len());
    for (record, board_len) in &records {
        let name = RedisString::create_from_slice(ctx.ctx, record);
        if ffi::Key::open_peek(ctx, &name).kind() != ffi::KeyKind::String {
            continue; // expired meanwhile, or not a value hotrank wrote
        }
        boards.push(bulk(&record[..*board_len]));
    }
    Ok(RedisValue::Array(vec![
        bulk(next.to_string()),
        RedisValue::Array(boards),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_unsigned_64_bit_decimals() {
        let ok = |s: &[u8]| parse_cursor(s).ok();
        assert_eq!(ok(b"0"), Some(0));
        assert_eq!(ok(b"0042"), Some(42));
        assert_eq!(ok(b"18446744073709551615"), Some(u64::MAX));
        for bad in [
            &b""[..],
            b"-1",
            b"+1",
            b" 1",
            b"1 ",
            b"1e3",
            b"0x10",
            b"18446744073709551616",
            b"abc",
            b"\xff",
        ] {
            assert!(ok(bad).is_none(), "{}", bad.escape_ascii());
        }
    }
}
