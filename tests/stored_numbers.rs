//! Numbers the module reads from keys the server also parses (issue #25).
//!
//! A derived key that holds a number (an article's PV counter, its
//! suspicious-view counter, a visitor's view counter, the meta hash's
//! `publishedAt`) can be rewritten by hand or by an old tool. Effects
//! replication sends a relative change (`INCRBY … 1`) for a counter, which a
//! replica or an AOF load evaluates with the server's own rules; so the
//! module must accept a stored text exactly where the server's matching
//! command does, or master and replica split and a restart loses an
//! acknowledged view.
//!
//! - `stored_numbers_are_read_by_the_server_rule`: for every text of a
//!   corpus (leading zeros, `-0`, `+5`, spaces, empty, 20 digits, i64::MAX
//!   and MIN, overflow by one, `1e3`, `0x10`, a NUL byte …) and every
//!   numeric derived key, HOT.VIEW succeeds exactly when INCRBY (HINCRBY for
//!   the hash field) accepts the same text, refuses with the server's error
//!   otherwise and then writes nothing. A master with the module and
//!   `appendfsync always` and a replica without it end with equal
//!   `DEBUG DIGEST`; after `kill -9` and a restart from the AOF the master
//!   has the same digest and every acknowledged value.

mod common;
use common::node::Node;
use common::*;
use hotrank::keys::{derived, Kind};
use redis::{Connection, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// View times: 2026-01-01T00:00:00Z and later, unix seconds.
const T: i64 = 1_767_225_600;

/// Texts a user or an old tool may leave in a numeric key.
const CORPUS: &[&[u8]] = &[
    b"05",
    b"00",
    b"007",
    b"-0",
    b"-05",
    b"+5",
    b" 5",
    b"5 ",
    b"",
    b"12345678901234567890",
    b"9223372036854775807",
    b"-9223372036854775808",
    b"9223372036854775808",
    b"-9223372036854775809",
    b"1e3",
    b"0x10",
    b"5\x00",
    b"5",
    b"-3",
    b"0",
];

/// A numeric derived key of a board, and how a view reaches it.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// The article's PV counter: the next counted view increments it.
    Pv,
    /// The visitor's view counter: every view of the visitor increments it.
    VisitorViews,
    /// The article's suspicious-view counter: a suspicious view increments it.
    Suspicious,
    /// The meta hash's `publishedAt`: every view reads it.
    PublishedAt,
}

const SLOTS: [Slot; 4] = [
    Slot::Pv,
    Slot::VisitorViews,
    Slot::Suspicious,
    Slot::PublishedAt,
];

fn at(s: i64) -> String {
    (T + s).to_string()
}

fn view(c: &mut Connection, board: &[u8], article: &str, visitor: &str, s: i64) -> Value {
    redis::cmd("HOT.VIEW")
        .arg(board)
        .arg(article)
        .arg(visitor)
        .arg("AT")
        .arg(at(s))
        .query(c)
        .expect("first view")
}

/// The one key of `board` whose name has `kind`'s tag right after the
/// board key and its zero byte (visitor counters carry a window in their
/// name, so they are found rather than rebuilt here).
fn find_key(c: &mut Connection, board: &[u8], tag: &[u8]) -> Vec<u8> {
    let mut pattern = board.to_vec();
    pattern.push(0);
    pattern.extend_from_slice(tag);
    pattern.push(b'*');
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg(&pattern).query(c).expect("KEYS");
    assert_eq!(keys.len(), 1, "one {:?} key", String::from_utf8_lossy(tag));
    keys.into_iter().next().unwrap_or_default()
}

/// Every key and value of `board` (DUMP payloads), to prove a refused view
/// wrote nothing.
fn board_dump(c: &mut Connection, board: &[u8]) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut pattern = board.to_vec();
    pattern.push(b'*');
    let keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg(&pattern).query(c).expect("KEYS");
    keys.into_iter()
        .map(|k| {
            let d: Vec<u8> = redis::cmd("DUMP").arg(&k).query(c).expect("DUMP");
            (k, d)
        })
        .collect()
}

/// Whether the server's own command accepts `text` where `slot` holds it:
/// INCRBY by 1 for a counter (what the view does to it), HINCRBY by 0 for
/// the hash field (the view reads it as an integer). `Err` holds its error.
fn server_accepts(c: &mut Connection, slot: Slot, text: &[u8]) -> Result<(), String> {
    let r: redis::RedisResult<Value> = match slot {
        Slot::PublishedAt => {
            let _: () = redis::cmd("HSET")
                .arg("ref:h")
                .arg("f")
                .arg(text)
                .query(c)
                .expect("HSET");
            redis::cmd("HINCRBY").arg("ref:h").arg("f").arg(0).query(c)
        }
        _ => {
            let _: () = redis::cmd("SET")
                .arg("ref:s")
                .arg(text)
                .query(c)
                .expect("SET");
            redis::cmd("INCRBY").arg("ref:s").arg(1).query(c)
        }
    };
    let _: () = redis::cmd("DEL")
        .arg("ref:h")
        .arg("ref:s")
        .query(c)
        .expect("DEL");
    r.map(|_| ()).map_err(|e| error_text(&e))
}

/// An error reply as the client saw it: code and message.
fn error_text(e: &redis::RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        _ => e.to_string(),
    }
}

/// Sets up `board` so that `slot`'s key exists, writes `text` into it, and
/// runs the view that reads it. Returns the view's reply or error text.
fn case(c: &mut Connection, board: &[u8], slot: Slot, text: &[u8]) -> Result<Value, String> {
    // visitor-max-views is 1: a visitor's second view is suspicious.
    view(c, board, "a1", "u1", 0);
    let (key, field): (Vec<u8>, Option<&str>) = match slot {
        Slot::Pv => (derived(board, Kind::Pv, &[b"a1"]), None),
        Slot::VisitorViews => (find_key(c, board, b"vv"), None),
        Slot::Suspicious => (derived(board, Kind::Suspicious, &[b"a1"]), None),
        Slot::PublishedAt => (derived(board, Kind::Meta, &[b"a1"]), Some("publishedAt")),
    };
    let _: () = match field {
        Some(f) => redis::cmd("HSET").arg(&key).arg(f).arg(text).query(c),
        None => redis::cmd("SET")
            .arg(&key)
            .arg(text)
            .arg("KEEPTTL")
            .query(c),
    }
    .expect("write the text");
    // The view that reads the slot: a new visitor for the PV counter and the
    // hash field (counted), the same visitor for the two others (its second
    // view: suspicious).
    let visitor = match slot {
        Slot::Pv | Slot::PublishedAt => "u2",
        Slot::VisitorViews | Slot::Suspicious => "u1",
    };
    let before = board_dump(c, board);
    let r: redis::RedisResult<Value> = redis::cmd("HOT.VIEW")
        .arg(board)
        .arg("a1")
        .arg(visitor)
        .arg("AT")
        .arg(at(1))
        .query(c);
    match r {
        Ok(v) => Ok(v),
        Err(e) => {
            assert_eq!(
                board_dump(c, board),
                before,
                "{slot:?} {:?}: a refused view wrote nothing",
                text.escape_ascii().to_string()
            );
            Err(error_text(&e))
        }
    }
}

fn digest(c: &mut Connection) -> String {
    redis::cmd("DEBUG")
        .arg("DIGEST")
        .query(c)
        .expect("DEBUG DIGEST")
}

/// Waits (at most 30 s) until the replica has applied everything the
/// master sent.
fn wait_synced(master: &mut Connection, replica: &mut Connection) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let offset = |c: &mut Connection, field: &str| -> i64 {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query(c)
            .expect("INFO");
        info.lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(-1)
    };
    loop {
        let m = offset(master, "master_repl_offset:");
        let r = offset(replica, "slave_repl_offset:");
        if m >= 0 && m == r {
            return;
        }
        assert!(Instant::now() < deadline, "replica behind: {r} < {m}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn stored_numbers_are_read_by_the_server_rule() {
    let debug = ["--enable-debug-command", "yes"];
    let mut master = Node::new("numbers");
    let mut args = vec!["--appendonly", "yes", "--appendfsync", "always"];
    args.extend(debug);
    master.start(&args);
    let port = master.port.to_string();
    let mut replica_args = vec!["--replicaof", "127.0.0.1", &port];
    replica_args.extend(debug);
    let replica = Server::start_with(&replica_args, false);
    wait_link_up(&replica);
    let m = &mut master.conn();
    config_set(m, "hotrank.visitor-max-views", "1");

    let mut acknowledged = Vec::new();
    for (i, text) in CORPUS.iter().enumerate() {
        for (j, slot) in SLOTS.iter().enumerate() {
            let board = format!("hot:{{n{i}s{j}}}").into_bytes();
            let shown = text.escape_ascii().to_string();
            let want = server_accepts(m, *slot, text);
            let got = case(m, &board, *slot, text);
            match (&want, &got) {
                (Ok(()), Ok(reply)) => acknowledged.push((board.clone(), reply.clone())),
                (Err(w), Err(g)) => assert_eq!(g, w, "{slot:?} {shown:?}: the server's error"),
                _ => panic!("{slot:?} {shown:?}: server {want:?}, module {got:?}"),
            }
        }
    }
    assert!(acknowledged.len() >= 4 * 3, "some texts are numbers");

    let r = &mut replica.conn();
    wait_synced(m, r);
    let before = digest(m);
    assert_eq!(
        digest(r),
        before,
        "a replica without the module ends byte-identical"
    );

    master.kill9();
    master.start(&args);
    let m = &mut master.conn();
    assert_eq!(
        digest(m),
        before,
        "the AOF restart holds every acknowledged view"
    );
    // And each acknowledged PV is what the view replied.
    for (board, reply) in acknowledged {
        let Value::Array(items) = reply else {
            panic!("view reply {reply:?}")
        };
        let pv: i64 = redis::cmd("GET")
            .arg(derived(&board, Kind::Pv, &[b"a1"]))
            .query(m)
            .expect("GET pv");
        assert_eq!(Value::Int(pv), items[0], "{}", board.escape_ascii());
    }
}
