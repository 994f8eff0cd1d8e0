//! The names of a HOT board's own keys (its record `K\0board`, the epoch
//! key, the trending ZSET, the publish and article indexes) are kept per
//! (board, epoch, kind) across commands (`commands::name_cache`); they are
//! still ACL-checked for each caller and the keys are still opened and read
//! by every command. These tests change what a board name holds under a
//! warm cache, by each way the server has, and check that the next command
//! reads and writes the keys of the board as it now is: HOT.DROP then
//! HOT.CREATE at a new epoch (twice), a RESTORE of a record from before the
//! drop (back to epoch 0), FLUSHALL, SWAPDB of two boards of one name at
//! different epochs, MODULE UNLOAD and LOAD, and more boards than the cache
//! holds; and that a restricted user is refused on the cached path, allowed
//! once its rules cover the keys, and refused again once they do not.
//!
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::*;
use redis::{Connection, Value};

/// View time (unix s): fixed, so nothing depends on today's date.
const T0: i64 = 1_700_000_000;

fn ok(c: &mut Connection, args: &[&str]) -> Value {
    q(c, args).unwrap_or_else(|e| panic!("{args:?} failed: {e}"))
}

/// A counted view of `article` by `visitor` at `T0`; its status.
fn view(c: &mut Connection, b: &str, article: &str, visitor: &str) -> String {
    let at = T0.to_string();
    let Value::Array(a) = ok(c, &["HOT.VIEW", b, article, visitor, "AT", &at]) else {
        panic!("HOT.VIEW reply")
    };
    reply_text(&a[3])
}

/// `HOT.TOP b [BY trending] AT T0`: the ids.
fn top(c: &mut Connection, b: &str, trending: bool) -> Vec<String> {
    let at = T0.to_string();
    let mut args = vec!["HOT.TOP", b];
    if trending {
        args.extend(["BY", "trending"]);
    }
    args.extend(["AT", &at]);
    let Value::Array(a) = ok(c, &args) else {
        panic!("HOT.TOP reply")
    };
    a.iter().map(reply_text).collect()
}

/// The key of kind `kind` of board `b` (tagged) at `epoch` (src/keys.rs).
fn key(b: &str, epoch: i64, kind: &str) -> Vec<u8> {
    let mut k = b.as_bytes().to_vec();
    k.push(0);
    if epoch != 0 {
        k.extend_from_slice(format!("~{epoch}:").as_bytes());
    }
    k.extend_from_slice(kind.as_bytes());
    k
}

fn zcard(c: &mut Connection, k: &[u8]) -> i64 {
    redis::cmd("ZCARD").arg(k).query(c).expect("ZCARD")
}

fn exists(c: &mut Connection, k: &[u8]) -> bool {
    let n: i64 = redis::cmd("EXISTS").arg(k).query(c).expect("EXISTS");
    n == 1
}

/// Board `b` keeps trending (1 h) and holds exactly `articles`, on both
/// rankings, in its keys of `epoch` (record, trending ZSET, publish and
/// article indexes), and the keys of `other` epochs hold none of it.
fn holds(c: &mut Connection, b: &str, epoch: i64, articles: &[&str], what: &str) {
    let mut want: Vec<String> = articles.iter().map(|s| s.to_string()).collect();
    want.sort();
    let mut got = top(c, b, false);
    got.sort();
    assert_eq!(got, want, "{what}: BY hot");
    let mut got = top(c, b, true);
    got.sort();
    assert_eq!(got, want, "{what}: BY trending");
    assert!(exists(c, &key(b, epoch, "board")), "{what}: record");
    for kind in ["tr", "pub", "ix"] {
        let n = zcard(c, &key(b, epoch, kind));
        assert_eq!(n, articles.len() as i64, "{what}: {kind} of epoch {epoch}");
    }
    for e in (0..4).filter(|&e| e != epoch) {
        for kind in ["tr", "pub"] {
            let n = zcard(c, &key(b, e, kind));
            assert_eq!(n, 0, "{what}: {kind} of epoch {e}");
        }
    }
}

fn create(c: &mut Connection, b: &str) {
    ok(c, &["HOT.CREATE", b, "TRENDING-HALF-LIFE", "1h"]);
}

#[test]
fn drop_and_create_again_name_the_new_epochs_keys() {
    let s = Server::start();
    let c = &mut s.conn();
    let b = "hot:{n}";
    create(c, b);
    view(c, b, "a0", "u1");
    view(c, b, "a0", "u2");
    holds(c, b, 0, &["a0"], "epoch 0");
    for epoch in 1..=2 {
        ok(c, &["HOT.DROP", b]);
        assert!(top(c, b, false).is_empty(), "dropped, epoch {epoch}");
        create(c, b);
        let a = format!("a{epoch}");
        assert_eq!(view(c, b, &a, "u1"), "counted");
        holds(c, b, epoch, &[&a], &format!("made again at epoch {epoch}"));
        assert!(!exists(c, &key(b, 0, "board")), "no epoch-0 record");
    }
}

#[test]
fn a_restored_record_brings_the_board_back_to_epoch_0() {
    let s = Server::start();
    let c = &mut s.conn();
    let b = "hot:{r}";
    create(c, b);
    view(c, b, "old", "u1");
    let rec = key(b, 0, "board");
    let dump: Vec<u8> = redis::cmd("DUMP").arg(&rec).query(c).expect("DUMP");
    // Keep the epoch-0 keys the record speaks for (HOT.DROP deletes them).
    let saved: Vec<(Vec<u8>, Vec<u8>)> = ["tr", "pub", "ix"]
        .iter()
        .map(|k| {
            let d: Vec<u8> = redis::cmd("DUMP").arg(key(b, 0, k)).query(c).unwrap();
            (key(b, 0, k), d)
        })
        .collect();
    ok(c, &["HOT.DROP", b]);
    create(c, b);
    view(c, b, "new", "u1");
    holds(c, b, 1, &["new"], "epoch 1");
    let () = redis::cmd("RESTORE")
        .arg(&rec)
        .arg(0)
        .arg(&dump)
        .arg("REPLACE")
        .query(c)
        .expect("RESTORE record");
    for (k, d) in &saved {
        let () = redis::cmd("RESTORE")
            .arg(k)
            .arg(0)
            .arg(d)
            .arg("REPLACE")
            .query(c)
            .expect("RESTORE");
    }
    // The board ZSET is the epoch-1 board's ("new"); every derived key
    // named now is epoch 0's again.
    ok(c, &["DEL", b]);
    view(c, b, "old", "u2");
    assert_eq!(top(c, b, true), ["old"], "trending of epoch 0");
    assert_eq!(zcard(c, &key(b, 0, "tr")), 1);
    assert_eq!(zcard(c, &key(b, 1, "tr")), 1, "epoch 1's left as it was");
}

#[test]
fn flushall_and_swapdb_change_what_the_names_hold() {
    let s = Server::start();
    let c = &mut s.conn();
    let b = "hot:{s}";
    // db 0: a board at epoch 0; db 1: one of the same name at epoch 1.
    create(c, b);
    view(c, b, "zero", "u1");
    ok(c, &["SELECT", "1"]);
    create(c, b);
    view(c, b, "x", "u1");
    ok(c, &["HOT.DROP", b]);
    create(c, b);
    view(c, b, "one", "u1");
    holds(c, b, 1, &["one"], "db 1");
    ok(c, &["SELECT", "0"]);
    holds(c, b, 0, &["zero"], "db 0");
    ok(c, &["SWAPDB", "0", "1"]);
    view(c, b, "one", "u2");
    holds(c, b, 1, &["one"], "db 0 after SWAPDB");
    ok(c, &["SELECT", "1"]);
    view(c, b, "zero", "u2");
    holds(c, b, 0, &["zero"], "db 1 after SWAPDB");
    ok(c, &["FLUSHALL"]);
    assert!(top(c, b, false).is_empty(), "after FLUSHALL");
    create(c, b);
    view(c, b, "fresh", "u1");
    holds(c, b, 0, &["fresh"], "after FLUSHALL");
}

#[test]
fn module_unload_and_load_again_keep_every_board() {
    let s = Server::start_with(&["--enable-module-command", "yes"], true);
    let c = &mut s.conn();
    create(c, "hot:{u0}");
    view(c, "hot:{u0}", "a", "u1");
    create(c, "hot:{u1}");
    ok(c, &["HOT.DROP", "hot:{u1}"]);
    create(c, "hot:{u1}");
    view(c, "hot:{u1}", "b", "u1");
    ok(c, &["MODULE", "UNLOAD", "hotrank"]);
    let path = module_path().to_string_lossy().into_owned();
    ok(c, &["MODULE", "LOAD", &path]);
    view(c, "hot:{u0}", "a", "u2");
    view(c, "hot:{u1}", "b", "u2");
    holds(c, "hot:{u0}", 0, &["a"], "epoch 0 after MODULE LOAD");
    holds(c, "hot:{u1}", 1, &["b"], "epoch 1 after MODULE LOAD");
}

#[test]
fn more_boards_than_the_cache_holds_keep_their_own_keys() {
    let s = Server::start();
    let c = &mut s.conn();
    // 256 names are kept; each board uses four or more.
    let boards: Vec<String> = (0..300).map(|i| format!("hot:{{m{i}}}")).collect();
    let mut pipe = redis::pipe();
    for (i, b) in boards.iter().enumerate() {
        pipe.cmd("HOT.CREATE")
            .arg(b)
            .arg("TRENDING-HALF-LIFE")
            .arg("1h");
        if i % 3 == 0 {
            pipe.cmd("HOT.DROP").arg(b);
            pipe.cmd("HOT.CREATE")
                .arg(b)
                .arg("TRENDING-HALF-LIFE")
                .arg("1h");
        }
        pipe.cmd("HOT.VIEW")
            .arg(b)
            .arg(format!("a{i}"))
            .arg("u1")
            .arg("AT")
            .arg(T0);
    }
    let _: Vec<Value> = pipe.query(c).expect("pipeline");
    // Twice over, in the other order: every name is met again after others
    // took its slot.
    for round in 0..2 {
        for (i, b) in boards.iter().enumerate().rev() {
            view(c, b, &format!("a{i}"), &format!("v{round}"));
            let epoch = i64::from(i % 3 == 0);
            holds(c, b, epoch, &[&format!("a{i}")], b);
        }
    }
}

/// The board's own names come from the cache once the board was used, and
/// are still ACL-checked for each caller: a user allowed the board key but
/// not its record is refused on every command, and a change of the user's
/// rules counts at once.
#[test]
fn a_restricted_user_is_checked_on_the_cached_path() {
    let s = Server::start();
    let c = &mut s.conn();
    let b = "hot:{a}";
    create(c, b);
    view(c, b, "x", "u1");
    acl_setuser(c, &["only", "on", ">pw", "+@all", "~hot:{a}"]);
    let u = &mut s.conn_as("only", "pw");
    let at = T0.to_string();
    let v = ["HOT.VIEW", b, "x", "u2", "AT", &at];
    let t = ["HOT.TOP", b, "BY", "trending", "AT", &at];
    for _ in 0..2 {
        assert!(err(u, &v).starts_with("NOPERM"));
        assert!(err(u, &t).starts_with("NOPERM"));
    }
    // Read access to every key: reads pass, views do not.
    acl_setuser(c, &["only", "%R~hot:{a}*"]);
    assert_eq!(top(u, b, true), ["x"]);
    assert!(err(u, &v).starts_with("NOPERM"));
    // Every key but the trending ZSET: views are refused, nothing written.
    acl_setuser(c, &["only", "resetkeys", "~hot:{a}", "~hot:{a}?[^t]*"]);
    let before = keyspace(c);
    assert!(err(u, &v).starts_with("NOPERM"));
    assert_eq!(keyspace(c), before);
    // Every key of the board: views pass.
    acl_setuser(c, &["only", "~hot:{a}*"]);
    assert_eq!(view(u, b, "x", "u2"), "counted");
    // At a new epoch, the epoch key and the new names are checked too.
    ok(c, &["HOT.DROP", b]);
    create(c, b);
    view(c, b, "y", "u1");
    assert_eq!(view(u, b, "y", "u2"), "counted");
    // And the rights taken back count at the next command.
    acl_setuser(c, &["only", "resetkeys", "~hot:{a}"]);
    for _ in 0..2 {
        assert!(err(u, &v).starts_with("NOPERM"));
        assert!(err(u, &t).starts_with("NOPERM"));
    }
    assert_eq!(top(c, b, true), ["y"]);
}
