//! ACL, command-flag and out-of-memory tests of every `HOT.*` and `RANK.*`
//! command against a real server.
//!
//! - A user whose key pattern covers a board and its derived keys
//!   (`~hot:{a}*`) can run every command on it; a board outside its patterns
//!   is refused by the server itself (the declared key), with nothing written.
//! - A user whose pattern covers only the board key (`~hot:{c}`, no `*`) is
//!   refused by the module when it opens a derived key (`NOPERM …`), with
//!   nothing written.
//! - A user with read-only key permissions (`%R~`) can run the read-only
//!   commands and not the writing ones; a user with write access to the
//!   board key but only read access to the derived keys cannot write either.
//! - `COMMAND INFO` flags, and `maxmemory` with `noeviction`: deny-oom
//!   commands are refused with `OOM`, read-only ones (and RANK.REM) still answer.

mod common;
use common::*;
use redis::{Connection, Value};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn run(c: &mut Connection, args: &[&str]) -> redis::RedisResult<Value> {
    q(c, args)
}

fn ok(c: &mut Connection, args: &[&str]) -> Value {
    run(c, args).unwrap_or_else(|e| panic!("{args:?} failed: {e}"))
}

/// "CODE detail", as `common::err` formats it.
fn errtext(e: &redis::RedisError) -> String {
    format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""))
        .trim()
        .to_string()
}

fn dbsize(c: &mut Connection) -> i64 {
    redis::cmd("DBSIZE").query(c).expect("DBSIZE")
}

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::Int(i) => i.to_string(),
        other => panic!("expected a string, got {other:?}"),
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("expected an integer, got {other:?}"),
    }
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::Array(a) => a.iter().map(text).collect(),
        other => panic!("expected an array, got {other:?}"),
    }
}

/// A time `secs` before now, as unix seconds (writes with AT must not be in the future).
fn ago(secs: i64) -> String {
    (now_s() - secs).to_string()
}

/// Every command of the module, run on HOT board `hb` and RANK board `lb`,
/// as (name, args). Writes come first within each family so that the reads
/// find data; RANK.CREATE uses its own board `lb` + "new".
fn every_command(hb: &str, lb: &str, t: &str) -> Vec<Vec<String>> {
    let lbnew = format!("{lb}new");
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        v(&["HOT.PUBLISH", hb, "a1", t]),
        v(&["HOT.VIEW", hb, "a1", "u1"]),
        v(&["HOT.VIEW", hb, "a2", "u2", "AT", t]),
        v(&["HOT.TOP", hb]),
        v(&[
            "HOT.TOP",
            hb,
            "LIMIT",
            "5",
            "WINDOW",
            "72h",
            "WITHSCORES",
            "AT",
            t,
        ]),
        v(&["HOT.STATS", hb, "a1"]),
        v(&["HOT.STATS", hb, "a2", "AT", t]),
        v(&["RANK.CREATE", &lbnew, "RESOLUTION", "ms"]),
        v(&["RANK.INCR", lb, "m1", "5"]),
        v(&["RANK.INCR", lb, "m2", "7", "AT", t]),
        v(&["RANK.SET", lb, "m3", "3"]),
        v(&["RANK.MINCR", lb, "1", "m1", "m4"]),
        v(&["RANK.SCORE", lb, "m1"]),
        v(&["RANK.SCORE", lb, "m2", "WITHTIME"]),
        v(&["RANK.RANK", lb, "m1"]),
        v(&["RANK.RANK", lb, "m1", "TIES"]),
        v(&["RANK.RANGE", lb, "0", "-1", "WITHSCORES"]),
        v(&["RANK.AROUND", lb, "m1", "2"]),
        v(&[
            "RANK.RANGEBYSCORE",
            lb,
            "-inf",
            "+inf",
            "LIMIT",
            "0",
            "10",
            "WITHSCORES",
        ]),
        v(&["RANK.CARD", lb]),
        v(&["RANK.REM", lb, "m4"]),
    ]
}

const WRITES: &[&str] = &[
    "HOT.PUBLISH",
    "HOT.VIEW",
    "RANK.CREATE",
    "RANK.INCR",
    "RANK.SET",
    "RANK.MINCR",
    "RANK.REM",
];

fn refs(args: &[String]) -> Vec<&str> {
    args.iter().map(|s| s.as_str()).collect()
}

/// The flags of a command's first key spec (`COMMAND INFO`, element 8), for messages.
fn key_spec_flags(c: &mut Connection, name: &str) -> String {
    let v = ok(c, &["COMMAND", "INFO", name]);
    let Value::Array(specs) = command_info_field(&v, 8) else {
        return "no key specs".into();
    };
    let Some(Value::Array(fields)) = specs.first() else {
        return "no key specs".into();
    };
    fields
        .chunks(2)
        .find(|p| matches!(&p[0], Value::BulkString(b) if b == b"flags"))
        .map(|p| match &p[1] {
            Value::Array(f) => f.iter().map(text).collect::<Vec<_>>().join(" "),
            other => format!("{other:?}"),
        })
        .unwrap_or_else(|| "no flags".into())
}

/// Element `i` of the single `COMMAND INFO` entry.
fn command_info_field(v: &Value, i: usize) -> Value {
    match v {
        Value::Array(outer) => match outer.first() {
            Some(Value::Array(info)) => info.get(i).cloned().unwrap_or(Value::Nil),
            other => panic!("unexpected COMMAND INFO entry {other:?}"),
        },
        other => panic!("unexpected COMMAND INFO reply {other:?}"),
    }
}

fn command_flags(c: &mut Connection, name: &str) -> Vec<String> {
    let v = ok(c, &["COMMAND", "INFO", name]);
    match command_info_field(&v, 2) {
        Value::Array(flags) => flags.iter().map(|f| text(f).to_lowercase()).collect(),
        Value::Set(flags) => flags.iter().map(|f| text(f).to_lowercase()).collect(),
        other => panic!("unexpected flags {other:?} for {name}"),
    }
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn user_with_board_patterns_runs_every_command_and_other_boards_are_refused() {
    let s = Server::start();
    let mut admin = s.conn();
    acl_setuser(
        &mut admin,
        &["alice", "on", ">pw", "~hot:{a}*", "~lb:{a}*", "+@all"],
    );
    let mut alice = s.conn_as("alice", "pw");
    let t = ago(600);

    // Every command works on alice's boards.
    for args in every_command("hot:{a}", "lb:{a}", &t) {
        let v = run(&mut alice, &refs(&args))
            .unwrap_or_else(|e| panic!("alice: {args:?} should work, got {e}"));
        match args[0].as_str() {
            "HOT.VIEW" => assert_eq!(text(&strings_or_panic(&v)[3]), "counted", "{args:?}"),
            "HOT.STATS" => assert!(
                matches!(v, Value::Array(_) | Value::Map(_)),
                "{args:?}: {v:?}"
            ),
            _ => {}
        }
    }
    // The results are those of the writes above.
    assert_eq!(strings(&ok(&mut alice, &["HOT.TOP", "hot:{a}"])).len(), 2);
    assert_eq!(int(&ok(&mut alice, &["RANK.SCORE", "lb:{a}", "m1"])), 6);
    assert_eq!(int(&ok(&mut alice, &["RANK.CARD", "lb:{a}"])), 3);
    assert_eq!(
        strings(&ok(&mut alice, &["RANK.RANGE", "lb:{a}", "0", "-1"])),
        ["m2", "m1", "m3"]
    );

    // Boards outside alice's patterns: the server refuses the declared key
    // before the module runs, and nothing is written.
    let before = keyspace(&mut admin);
    for args in every_command("hot:{b}", "lb:{b}", &t) {
        let e = err(&mut alice, &refs(&args));
        assert!(e.starts_with("NOPERM"), "alice: {args:?} on hot:{{b}}: {e}");
    }
    // A tagless board outside the patterns too.
    for args in every_command("hot:b", "lb:b", &t) {
        let e = err(&mut alice, &refs(&args));
        assert!(e.starts_with("NOPERM"), "alice: {args:?} on hot:b: {e}");
    }
    assert_eq!(
        keyspace(&mut admin),
        before,
        "a refused command wrote something"
    );
}

fn strings_or_panic(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        other => panic!("expected an array, got {other:?}"),
    }
}

#[test]
fn derived_keys_outside_the_pattern_are_refused_by_the_module_and_nothing_is_written() {
    let s = Server::start();
    let mut admin = s.conn();
    // Existing boards, filled by the admin, so every read has something to read.
    let t = ago(600);
    for args in every_command("hot:{c}", "lb:{c}", &t) {
        ok(&mut admin, &refs(&args));
    }
    // carol's patterns match the board keys exactly, not the derived keys.
    acl_setuser(
        &mut admin,
        &[
            "carol",
            "on",
            ">pw",
            "~hot:{c}",
            "~lb:{c}",
            "~lb:{c}new",
            "~hot:{e}",
            "~lb:{e}",
            "~lb:{e}new",
            "+@all",
        ],
    );
    let mut carol = s.conn_as("carol", "pw");
    let before = keyspace(&mut admin);
    let size = dbsize(&mut admin);
    for args in every_command("hot:{c}", "lb:{c}", &t) {
        let e = err(&mut carol, &refs(&args));
        assert!(
            e.starts_with("NOPERM") && e.contains("\\x00"),
            "carol: {args:?} should be refused on a derived key, got {e}"
        );
    }
    // Boards that do not exist yet: writes are refused before creating anything.
    for args in every_command("hot:{e}", "lb:{e}", &t) {
        if !WRITES.contains(&args[0].as_str()) {
            continue;
        }
        let e = err(&mut carol, &refs(&args));
        assert!(
            e.starts_with("NOPERM"),
            "carol: {args:?} on a new board: {e}"
        );
    }
    assert_eq!(dbsize(&mut admin), size);
    assert_eq!(
        keyspace(&mut admin),
        before,
        "a refused command wrote something"
    );
}

#[test]
fn write_access_to_the_board_key_alone_does_not_allow_writing_derived_keys() {
    let s = Server::start();
    let mut admin = s.conn();
    let t = ago(600);
    for args in every_command("hot:{d}", "lb:{d}", &t) {
        ok(&mut admin, &refs(&args));
    }
    // dave may write the board keys, but may only read the derived keys.
    acl_setuser(
        &mut admin,
        &[
            "dave",
            "on",
            ">pw",
            "~hot:{d}",
            "~lb:{d}",
            "~lb:{d}new",
            "%R~hot:{d}?*",
            "%R~lb:{d}?*",
            "+@all",
        ],
    );
    let mut dave = s.conn_as("dave", "pw");
    let before = keyspace(&mut admin);
    for args in every_command("hot:{d}", "lb:{d}", &t) {
        let r = run(&mut dave, &refs(&args));
        // RANK.REM writes only the board key, which dave may write.
        if WRITES.contains(&args[0].as_str()) && args[0] != "RANK.REM" {
            let e = match r {
                Ok(v) => panic!("dave: {args:?} should be refused, got {v:?}"),
                Err(e) => errtext(&e),
            };
            assert!(e.starts_with("NOPERM"), "dave: {args:?}: {e}");
        } else {
            r.unwrap_or_else(|e| panic!("dave: read {args:?} should work, got {e}"));
        }
    }
    assert_eq!(
        keyspace(&mut admin),
        before,
        "a refused command wrote something"
    );
}

#[test]
fn read_only_user_can_read_boards_but_not_write_them() {
    let s = Server::start();
    let mut admin = s.conn();
    let t = ago(600);
    for args in every_command("hot:{a}", "lb:{a}", &t) {
        ok(&mut admin, &refs(&args));
    }
    acl_setuser(
        &mut admin,
        &["reader", "on", ">pw", "%R~hot:{a}*", "%R~lb:{a}*", "+@all"],
    );
    let mut reader = s.conn_as("reader", "pw");
    let before = keyspace(&mut admin);
    let mut problems = Vec::new();
    for args in every_command("hot:{a}", "lb:{a}", &t) {
        let name = args[0].as_str();
        let r = run(&mut reader, &refs(&args));
        let write = WRITES.contains(&name);
        match (write, r) {
            (true, Ok(v)) => problems.push(format!("{args:?} (a write) answered {v:?}")),
            (true, Err(e)) if !errtext(&e).starts_with("NOPERM") => problems.push(format!(
                "{args:?} (a write) failed without NOPERM: {}",
                errtext(&e)
            )),
            (false, Err(e)) => problems.push(format!(
                "{args:?} (read-only) refused: {}; key-spec flags of {name}: {}",
                errtext(&e),
                key_spec_flags(&mut admin, name)
            )),
            (false, Ok(v)) => {
                // Same answer as the admin gets (unless it depends on the clock).
                let clock =
                    matches!(name, "HOT.TOP" | "HOT.STATS") && !args.iter().any(|a| a == "AT");
                if !clock {
                    let mine = ok(&mut admin, &refs(&args));
                    if mine != v {
                        problems.push(format!("{args:?}: reader got {v:?}, admin {mine:?}"));
                    }
                }
            }
            _ => {}
        }
    }
    assert_eq!(
        keyspace(&mut admin),
        before,
        "a refused command wrote something"
    );
    assert!(
        problems.is_empty(),
        "a user with read-only key permissions (%R~hot:{{a}}* %R~lb:{{a}}*):\n  {}\n\
         (module commands registered with first/last/step only get the key-spec flags \
         RW ACCESS UPDATE, so the server requires write permission on the board key even \
         for read-only commands; the read-only commands need a key spec with RO ACCESS, \
         set with RedisModule_SetCommandInfo)",
        problems.join("\n  ")
    );
}

#[test]
fn command_info_flags_match_what_each_command_does() {
    let s = Server::start();
    let mut c = s.conn();
    let writes_deny_oom = [
        "hot.publish",
        "hot.view",
        "rank.create",
        "rank.incr",
        "rank.set",
        "rank.mincr",
    ];
    for name in writes_deny_oom {
        let f = command_flags(&mut c, name);
        assert!(
            f.contains(&"write".into()) && f.contains(&"denyoom".into()),
            "{name}: {f:?}"
        );
        assert!(!f.contains(&"readonly".into()), "{name}: {f:?}");
    }
    // RANK.REM and RANK.DROP only delete: allowed under OOM.
    for name in ["rank.rem", "rank.drop"] {
        let f = command_flags(&mut c, name);
        assert!(
            f.contains(&"write".into()) && !f.contains(&"denyoom".into()),
            "{name}: {f:?}"
        );
    }
    for &name in ["hot.top", "hot.stats"].iter().chain(RANK_READS) {
        let f = command_flags(&mut c, name);
        assert!(f.contains(&"readonly".into()), "{name}: {f:?}");
        assert!(
            !f.contains(&"write".into()) && !f.contains(&"denyoom".into()),
            "{name}: {f:?}"
        );
    }
    // Every command declares its first argument as its (only) key.
    for name in ["hot.view", "hot.top", "rank.mincr", "rank.rem"] {
        let v = ok(&mut c, &["COMMAND", "INFO", name]);
        let pos: Vec<i64> = (3..6).map(|i| int(&command_info_field(&v, i))).collect();
        assert_eq!(pos, [1, 1, 1], "{name}: first/last/step");
    }
    let keys: Vec<String> = redis::cmd("COMMAND")
        .arg("GETKEYS")
        .arg("HOT.VIEW")
        .arg("hot:{x}")
        .arg("a")
        .arg("v")
        .query(&mut c)
        .expect("COMMAND GETKEYS");
    assert_eq!(keys, ["hot:{x}"]);
}

#[test]
fn under_maxmemory_noeviction_writes_are_refused_with_oom_and_reads_answer() {
    let s = Server::start();
    let mut c = s.conn();
    let t = ago(600);
    for args in every_command("hot:{m}", "lb:{m}", &t) {
        ok(&mut c, &refs(&args));
    }
    let top_before = ok(&mut c, &["HOT.TOP", "hot:{m}", "WITHSCORES", "AT", &t]);
    ok(&mut c, &["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
    ok(&mut c, &["CONFIG", "SET", "maxmemory", "1"]);
    let before = keyspace(&mut c);

    let denied: &[&[&str]] = &[
        &["HOT.VIEW", "hot:{m}", "a1", "u9"],
        &["HOT.VIEW", "hot:{m}", "a3", "u9", "AT", &t],
        &["HOT.VIEW", "hot:{n}", "a1", "u1"],
        &["HOT.PUBLISH", "hot:{m}", "a1", &t],
        &["RANK.CREATE", "lb:{n}"],
        &["RANK.INCR", "lb:{m}", "m1", "1"],
        &["RANK.SET", "lb:{m}", "m9", "1"],
        &["RANK.MINCR", "lb:{m}", "1", "m1"],
    ];
    for args in denied {
        let e = err(&mut c, args);
        assert!(e.starts_with("OOM"), "{args:?} under maxmemory: {e}");
    }
    assert_eq!(
        keyspace(&mut c),
        before,
        "a refused command wrote something"
    );

    // Reads still answer, with the same results.
    assert_eq!(
        ok(&mut c, &["HOT.TOP", "hot:{m}", "WITHSCORES", "AT", &t]),
        top_before
    );
    assert_eq!(strings(&ok(&mut c, &["HOT.TOP", "hot:{m}"])).len(), 2);
    for args in every_command("hot:{m}", "lb:{m}", &t) {
        if WRITES.contains(&args[0].as_str()) {
            continue;
        }
        run(&mut c, &refs(&args)).unwrap_or_else(|e| panic!("{args:?} under maxmemory: {e}"));
    }
    // RANK.REM only frees memory: allowed.
    assert_eq!(int(&ok(&mut c, &["RANK.REM", "lb:{m}", "m3"])), 1);

    // Back under the limit, writes work again.
    ok(&mut c, &["CONFIG", "SET", "maxmemory", "0"]);
    let v = ok(&mut c, &["HOT.VIEW", "hot:{m}", "a1", "u9"]);
    assert_eq!(text(&strings_or_panic(&v)[3]), "counted");
    assert_eq!(int(&ok(&mut c, &["RANK.INCR", "lb:{m}", "m1", "1"])), 7);
}

#[test]
fn module_noperm_errors_on_binary_ids_are_well_formed() {
    // The module's NOPERM error names the derived key, which holds the
    // article id: bytes that are not printable ASCII must reach the client
    // as a well-formed error (the redis crate refuses an error that is not
    // UTF-8), escaped like the zero byte is.
    let s = Server::start();
    let mut admin = s.conn();
    acl_setuser(
        &mut admin,
        &["erin", "on", ">pw", "~hot:{c}", "~lb:{c}", "+@all"],
    );
    for article in [&b"caf\xc3\xa9"[..], b"\xff\xfe", b"x\r\ny"] {
        // A fresh connection each time: a reply the client cannot parse would
        // leave the connection unusable.
        let mut erin = s.conn_as("erin", "pw");
        let r: redis::RedisResult<Value> = redis::cmd("HOT.VIEW")
            .arg("hot:{c}")
            .arg(article)
            .arg("v")
            .query(&mut erin);
        let e = match r {
            Ok(v) => panic!("HOT.VIEW as erin answered {v:?}"),
            Err(e) => e,
        };
        assert!(
            errtext(&e).starts_with("NOPERM") && errtext(&e).contains("\\x00"),
            "article {:?}: the NOPERM error did not arrive well formed: {e} (kind {:?}); \
             the redis-module crate writes each char of an error message as one byte, \
             so the key name must be escaped to ASCII (src/ffi.rs AclUser::check)",
            article.escape_ascii().to_string(),
            e.kind()
        );
    }
    assert_eq!(dbsize(&mut admin), 0);
}
