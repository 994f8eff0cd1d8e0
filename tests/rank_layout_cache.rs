//! RANK.INCR and the RANK reads do not re-parse a board's layout on every
//! command: the last layout text parsed is kept with its settings and reused
//! while the layout key holds the same bytes (`parse_settings_cached`). The
//! cache is checked against the stored bytes on every command, so it can
//! never apply one board's layout to another. The layout key's *name* is
//! kept per board across commands (`commands::name_cache`), and is still
//! ACL-checked for each caller. These tests change what a board name holds
//! under it, by each way the server has, and check that the next command
//! uses the new layout: DEL, RENAME, RANK.DROP and RANK.CREATE, RESTORE, a
//! Lua script, expiry, eviction, FLUSHALL, SWAPDB, DEBUG RELOAD, MULTI, a
//! full resync of a replica, a failover, MODULE UNLOAD and LOAD, and more
//! boards than the name cache holds; and that a restricted user is refused
//! on the cached path as on the first command.
//!
//! The two layouts differ in every way a wrong one would show: `asc` with
//! scores in -100..=100 and millisecond times, against the default (desc,
//! seconds, a wide range). A score of 500 is refused by the first and taken
//! by the second, and RANK.RANGE orders them oppositely.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::*;
use redis::{Connection, Value};

const DEBUG_LOCAL: [&str; 2] = ["--enable-debug-command", "local"];
const NARROW: [&str; 6] = ["ORDER", "asc", "MIN", "-100", "MAX", "100"];

fn ok(c: &mut Connection, args: &[&str]) -> Value {
    q(c, args).unwrap_or_else(|e| panic!("{args:?} failed: {e}"))
}

fn range(c: &mut Connection, board: &str) -> Vec<String> {
    let v: Vec<String> = redis::cmd("RANK.RANGE")
        .arg(board)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(c)
        .expect("RANK.RANGE");
    v
}

/// Creates `board` with the narrow asc layout and members a=1, b=2 (a
/// first), having parsed (and cached) that layout.
fn narrow(c: &mut Connection, board: &str) {
    let mut args = vec!["RANK.CREATE", board];
    args.extend(NARROW);
    ok(c, &args);
    ok(c, &["RANK.INCR", board, "a", "1"]);
    ok(c, &["RANK.INCR", board, "b", "2"]);
    assert_eq!(range(c, board), ["a", "1", "b", "2"]);
}

/// Creates `board` with the default layout (desc): b=2 first, then a=1.
fn wide(c: &mut Connection, board: &str) {
    ok(c, &["RANK.INCR", board, "a", "1"]);
    ok(c, &["RANK.INCR", board, "b", "2"]);
    assert_eq!(range(c, board), ["b", "2", "a", "1"]);
}

/// `board` now behaves as the narrow asc board: 500 is refused, the order
/// is ascending, and the refused write changed nothing.
fn is_narrow(c: &mut Connection, board: &str, what: &str) {
    let e = err(c, &["RANK.INCR", board, "z", "500"]);
    assert!(
        e.contains("out of range") || e.contains("between"),
        "{what}: {e}"
    );
    let r = range(c, board);
    assert!(!r.contains(&"z".to_string()), "{what}: {r:?}");
    let scores: Vec<i64> = r
        .iter()
        .skip(1)
        .step_by(2)
        .map(|s| s.parse().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] <= w[1]), "{what}: asc {r:?}");
}

/// `board` now behaves as a default (desc) board: 500 is taken and ranks first.
fn is_wide(c: &mut Connection, board: &str, what: &str) {
    assert_eq!(
        ok(c, &["RANK.INCR", board, "z", "500"]),
        Value::Int(500),
        "{what}"
    );
    let r = range(c, board);
    assert_eq!(r[..2], ["z", "500"], "{what}: {r:?}");
    let scores: Vec<i64> = r
        .iter()
        .skip(1)
        .step_by(2)
        .map(|s| s.parse().unwrap())
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "{what}: desc {r:?}"
    );
}

/// The layout key of `board` (its name is the board's, a zero byte, then more).
fn layout_key(c: &mut Connection, board: &str) -> Vec<u8> {
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query(c).expect("KEYS");
    let mut prefix = board.as_bytes().to_vec();
    prefix.push(0);
    keys.into_iter()
        .find(|k| k.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no layout key for {board}"))
}

#[test]
fn del_of_the_board_keeps_its_layout_and_del_of_both_forgets_it() {
    let s = Server::start();
    let c = &mut s.conn();
    narrow(c, "lb:{a}");
    ok(c, &["DEL", "lb:{a}"]);
    ok(c, &["RANK.INCR", "lb:{a}", "a", "1"]);
    is_narrow(c, "lb:{a}", "after DEL of the ZSET");
    let lk = layout_key(c, "lb:{a}");
    let _: i64 = redis::cmd("DEL").arg("lb:{a}").arg(&lk).query(c).unwrap();
    wide(c, "lb:{a}");
    is_wide(c, "lb:{a}", "after DEL of the ZSET and its layout");
}

#[test]
fn rename_over_a_board_brings_the_other_layout() {
    let s = Server::start();
    let c = &mut s.conn();
    wide(c, "lb:{a}");
    narrow(c, "lb:{a}x");
    // The narrow board's layout was parsed last: move the wide one over it.
    let (from, to) = (layout_key(c, "lb:{a}"), layout_key(c, "lb:{a}x"));
    let _: () = redis::cmd("RENAME").arg(&from).arg(&to).query(c).unwrap();
    ok(c, &["RENAME", "lb:{a}", "lb:{a}x"]);
    is_wide(c, "lb:{a}x", "after RENAME");
    // And back the other way on a new pair.
    narrow(c, "lb:{b}");
    wide(c, "lb:{b}x");
    let (from, to) = (layout_key(c, "lb:{b}"), layout_key(c, "lb:{b}x"));
    let _: () = redis::cmd("RENAME").arg(&from).arg(&to).query(c).unwrap();
    ok(c, &["RENAME", "lb:{b}", "lb:{b}x"]);
    is_narrow(c, "lb:{b}x", "after RENAME back");
}

#[test]
fn flushall_and_swapdb_change_the_layout_under_the_name() {
    let s = Server::start();
    let c = &mut s.conn();
    narrow(c, "lb:{a}");
    ok(c, &["FLUSHALL"]);
    wide(c, "lb:{a}");
    is_wide(c, "lb:{a}", "after FLUSHALL");

    ok(c, &["FLUSHALL"]);
    ok(c, &["SELECT", "1"]);
    wide(c, "lb:{a}");
    ok(c, &["SELECT", "0"]);
    narrow(c, "lb:{a}");
    ok(c, &["SWAPDB", "0", "1"]);
    is_wide(c, "lb:{a}", "after SWAPDB (db 0 now holds the wide board)");
    ok(c, &["SELECT", "1"]);
    is_narrow(
        c,
        "lb:{a}",
        "after SWAPDB (db 1 now holds the narrow board)",
    );
}

#[test]
fn debug_reload_keeps_the_layout() {
    let s = Server::start_with(&DEBUG_LOCAL, true);
    let c = &mut s.conn();
    narrow(c, "lb:{a}");
    wide(c, "lb:{b}");
    ok(c, &["DEBUG", "RELOAD"]);
    is_narrow(c, "lb:{a}", "after DEBUG RELOAD");
    is_wide(c, "lb:{b}", "after DEBUG RELOAD");
}

#[test]
fn multi_sees_the_layout_change_inside_the_transaction() {
    let s = Server::start();
    let c = &mut s.conn();
    narrow(c, "lb:{a}");
    let lk = layout_key(c, "lb:{a}");
    let replies: Vec<Value> = redis::pipe()
        .atomic()
        .cmd("RANK.INCR")
        .arg("lb:{a}")
        .arg("a")
        .arg(1)
        .cmd("DEL")
        .arg("lb:{a}")
        .arg(&lk)
        .cmd("RANK.INCR")
        .arg("lb:{a}")
        .arg("y")
        .arg(400)
        .query(c)
        .expect("MULTI/EXEC");
    assert_eq!(replies[0], Value::Int(2));
    assert_eq!(
        replies[2],
        Value::Int(400),
        "the new default board takes 400"
    );
    is_wide(c, "lb:{a}", "after the transaction");
}

#[test]
fn full_resync_and_failover_bring_the_masters_layout() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let mc = &mut master.conn();
    narrow(mc, "lb:{a}");
    // The future replica holds the same name with the other layout, parsed
    // last, until the full resync replaces its data set.
    let replica = Server::start_with(&DEBUG_LOCAL, true);
    let rc = &mut replica.conn();
    wide(rc, "lb:{a}");
    ok(rc, &["REPLICAOF", "127.0.0.1", &master.port.to_string()]);
    wait_link_up(&replica);
    ok(mc, &["RANK.INCR", "lb:{a}", "c", "3"]);
    ok(mc, &["WAIT", "1", "5000"]);
    assert_eq!(
        range(rc, "lb:{a}"),
        range(mc, "lb:{a}"),
        "after the full resync"
    );
    assert_eq!(range(rc, "lb:{a}"), ["a", "1", "b", "2", "c", "3"]);
    // Failover: the replica becomes a master and writes with the board's layout.
    ok(rc, &["REPLICAOF", "NO", "ONE"]);
    is_narrow(rc, "lb:{a}", "on the promoted replica");
    ok(rc, &["RANK.INCR", "lb:{a}", "a", "-5"]);
    assert_eq!(range(rc, "lb:{a}")[..2], ["a", "-4"]);
}

/// The error of a board whose ZSET is here without its layout key.
fn is_lost(c: &mut Connection, board: &str, what: &str) {
    let e = err(c, &["RANK.INCR", board, "z", "5"]);
    assert!(e.contains("holds a ZSET but no"), "{what}: {e}");
}

#[test]
fn rank_drop_then_create_again_with_the_other_layout() {
    let s = Server::start();
    let c = &mut s.conn();
    narrow(c, "lb:{a}");
    ok(c, &["RANK.DROP", "lb:{a}"]);
    wide(c, "lb:{a}");
    is_wide(c, "lb:{a}", "after RANK.DROP and a first write");
    ok(c, &["RANK.DROP", "lb:{a}"]);
    narrow(c, "lb:{a}");
    is_narrow(c, "lb:{a}", "after RANK.DROP and RANK.CREATE");
}

#[test]
fn restore_and_a_script_replace_the_layout_key() {
    let s = Server::start();
    let c = &mut s.conn();
    narrow(c, "lb:{a}");
    wide(c, "lb:{b}");
    // RESTORE … REPLACE of the wide board's two keys over the narrow one's.
    let (la, lb) = (layout_key(c, "lb:{a}"), layout_key(c, "lb:{b}"));
    for (from, to) in [
        (lb.clone(), la.clone()),
        (b"lb:{b}".to_vec(), b"lb:{a}".to_vec()),
    ] {
        let dump: Vec<u8> = redis::cmd("DUMP").arg(&from).query(c).unwrap();
        let () = redis::cmd("RESTORE")
            .arg(&to)
            .arg(0)
            .arg(dump)
            .arg("REPLACE")
            .query(c)
            .unwrap();
    }
    is_wide(c, "lb:{a}", "after RESTORE");
    // A script sets the layout key to the narrow text and deletes the ZSET.
    narrow(c, "lb:{c}");
    let text: Vec<u8> = redis::cmd("GET")
        .arg(layout_key(c, "lb:{c}"))
        .query(c)
        .unwrap();
    let n: i64 = redis::cmd("EVAL")
        .arg("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('DEL', KEYS[2])")
        .arg(2)
        .arg(&la)
        .arg("lb:{a}")
        .arg(text)
        .query(c)
        .unwrap();
    assert_eq!(n, 1);
    ok(c, &["RANK.INCR", "lb:{a}", "a", "1"]);
    is_narrow(c, "lb:{a}", "after the script");
}

#[test]
fn expiry_and_eviction_of_the_layout_key_are_seen_at_once() {
    let s = Server::start();
    let c = &mut s.conn();
    narrow(c, "lb:{a}");
    let lk = layout_key(c, "lb:{a}");
    let _: i64 = redis::cmd("PEXPIRE").arg(&lk).arg(1).query(c).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    is_lost(c, "lb:{a}", "after the layout key expired");

    // volatile-ttl evicts the one key with an expiry: the layout key.
    narrow(c, "lb:{b}");
    let lk = layout_key(c, "lb:{b}");
    let _: i64 = redis::cmd("PEXPIRE")
        .arg(&lk)
        .arg(1_000_000)
        .query(c)
        .unwrap();
    is_narrow(c, "lb:{b}", "with an expiry on the layout key");
    config_set(c, "maxmemory-policy", "volatile-ttl");
    config_set(c, "maxmemory", "1");
    ok(c, &["PING"]);
    config_set(c, "maxmemory", "0");
    let n: i64 = redis::cmd("EXISTS").arg(&lk).query(c).unwrap();
    assert_eq!(n, 0, "the layout key was evicted");
    is_lost(c, "lb:{b}", "after the layout key was evicted");
}

#[test]
fn module_unload_and_load_again_keep_every_layout() {
    let s = Server::start_with(&["--enable-module-command", "yes"], true);
    let c = &mut s.conn();
    narrow(c, "lb:{a}");
    wide(c, "lb:{b}");
    ok(c, &["MODULE", "UNLOAD", "hotrank"]);
    let path = module_path().to_string_lossy().into_owned();
    ok(c, &["MODULE", "LOAD", &path]);
    is_narrow(c, "lb:{a}", "after MODULE UNLOAD and LOAD");
    is_wide(c, "lb:{b}", "after MODULE UNLOAD and LOAD");
}

#[test]
fn more_boards_than_the_cache_holds_keep_their_own_layouts() {
    let s = Server::start();
    let c = &mut s.conn();
    let boards: Vec<String> = (0..200).map(|i| format!("lb:{{{i}}}")).collect();
    for (i, b) in boards.iter().enumerate() {
        if i % 2 == 0 {
            narrow(c, b);
        } else {
            wide(c, b);
        }
    }
    for (i, b) in boards.iter().enumerate().rev() {
        if i % 2 == 0 {
            is_narrow(c, b, b);
        } else {
            is_wide(c, b, b);
        }
    }
}

/// The layout key's name comes from the cache once a board was used, and
/// is still ACL-checked for each caller: a user allowed the board key but
/// not its layout key is refused on every command, and a change of the
/// user's rules counts at once.
#[test]
fn a_restricted_user_is_checked_on_the_cached_path() {
    let s = Server::start();
    let c = &mut s.conn();
    narrow(c, "lb:{a}");
    // Only the board key, not the layout key beside it.
    acl_setuser(c, &["only", "on", ">pw", "+@all", "~lb:{a}"]);
    let u = &mut s.conn_as("only", "pw");
    for _ in 0..2 {
        assert!(err(u, &["RANK.INCR", "lb:{a}", "a", "1"]).starts_with("NOPERM"));
        assert!(err(u, &["RANK.SCORE", "lb:{a}", "a"]).starts_with("NOPERM"));
    }
    // Read access to the layout key: reads pass, writes do not.
    acl_setuser(c, &["only", "%R~lb:{a}*"]);
    assert_eq!(ok(u, &["RANK.SCORE", "lb:{a}", "a"]), Value::Int(1));
    assert!(err(u, &["RANK.INCR", "lb:{a}", "a", "1"]).starts_with("NOPERM"));
    // Every key of the board: writes pass.
    acl_setuser(c, &["only", "~lb:{a}*"]);
    assert_eq!(ok(u, &["RANK.INCR", "lb:{a}", "a", "1"]), Value::Int(2));
    // And the rights taken back count at the next command.
    acl_setuser(c, &["only", "resetkeys", "~lb:{a}"]);
    assert!(err(u, &["RANK.INCR", "lb:{a}", "a", "1"]).starts_with("NOPERM"));
    assert_eq!(ok(c, &["RANK.SCORE", "lb:{a}", "a"]), Value::Int(2));
}
