//! Edge cases of HOT.VIEW's replication and of the board epoch, found by
//! a review of the session-4 changes (upkeep replicated as effects after
//! the view's command, `SPARSE n`, a failed write still replicated, the
//! epoch-0 record looked up before the epoch key). Each was a bug, fixed
//! and guarded here:
//! 1. a suspicious view refused by ACL wrote on the replica in `commands`
//!    mode;
//! 2. a board record a user RESTOREd from before a HOT.DROP split HOT.VIEW
//!    from the reads (every command now resolves the epoch the same way,
//!    record first, and the drop's steps leave a board that lives again
//!    alone);
//! 3. an AOF of the previous `commands`-mode format loaded without its
//!    upkeep (a replicated view now starts with CLOCK, and one that does
//!    not runs upkeep as that version did).
//!
//! The other tests guard what was checked: the epoch invariant over every
//! HOT write, drops in MULTI/Lua replayed from the AOF, upkeep in MULTI/Lua
//! and after a lazy expiry. (In `effects` mode a replica runs the
//! replicated PFADD with its own `hll-sparse-max-bytes`, as for any PFADD;
//! the README says so.)
//! Run against Valkey with `HOTRANK_SERVER=/path/to/valkey-server`.

mod common;
use common::node::Node;
use common::repl::*;
use common::*;
use redis::Connection;

fn exists(c: &mut Connection, key: &[u8]) -> bool {
    redis::cmd("EXISTS")
        .arg(key)
        .query::<i64>(c)
        .expect("EXISTS")
        == 1
}

/// Every key (escaped) with its DUMP payload (no expiry times).
fn keys_and_values(c: &mut Connection) -> std::collections::BTreeMap<String, Vec<u8>> {
    keyspace(c)
        .into_iter()
        .map(|(k, (d, _))| (k.escape_ascii().to_string(), d))
        .collect()
}

/// Board `b` (`hot:{sus}`), where a visitor's second view is suspicious,
/// and a connection as user `lim`, allowed every key of the board but its
/// suspicious counters (`sus:*`).
fn sus_board_and_user(master: &Server, m: &mut Connection, b: &str) -> Connection {
    ok(
        m,
        &[
            "HOT.CREATE",
            b,
            "VISITOR-MAX-VIEWS",
            "1",
            "DEDUP-SECONDS",
            "0",
        ],
    );
    let mut cmd = redis::cmd("ACL");
    cmd.arg("SETUSER")
        .arg("lim")
        .arg("on")
        .arg(">pw")
        .arg("+@all")
        .arg(format!("~{b}"));
    for kind in [
        "board", "layout", "pub", "ix", "ep", "vv:*", "pv:*", "uv:*", "meta:*", "dd:*", "rm:*",
    ] {
        cmd.arg(format!("~{b}?{kind}"));
    }
    let () = cmd.query(m).expect("ACL SETUSER");
    master.conn_as("lim", "pw")
}

/// Finding 1. In `commands` mode a HOT.VIEW whose write step fails part
/// way still replicates its command (so the replica stops at the same
/// point). But the suspicious branch of the write step is where the view
/// first names and ACL-checks the article's suspicious counter (`sus`): a
/// user whose key patterns leave it out gets NOPERM on the master with
/// nothing written, while the replicated HOT.VIEW runs on the replica
/// without ACL and writes the suspicious counter, the visitor counter, ….
#[test]
fn commands_mode_suspicious_view_denied_by_acl_replicates_nothing() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let replica = replica_of(&master, true);
    let (mut m, mut r) = (master.conn(), replica.conn());
    config_set(&mut m, "hotrank.replicate", "commands");
    let b = "hot:{sus}";
    let t0 = now_s() * 1000 - 100_000;
    let mut lim = sus_board_and_user(&master, &mut m, b);
    ok(&mut lim, &["HOT.VIEW", b, "a1", "v", "AT", &ts(t0)]);
    // The visitor's second view is suspicious: its write needs `sus`.
    let e = q(&mut lim, &["HOT.VIEW", b, "a2", "v", "AT", &ts(t0 + 1)]).unwrap_err();
    assert!(e.to_string().to_lowercase().contains("noperm"), "{e}");
    wait_replica(&mut m);
    assert_eq!(
        keys_and_values(&mut r),
        keys_and_values(&mut m),
        "the replica wrote what the master refused"
    );
    assert_eq!(digest(&mut r), digest(&mut m), "replica digest differs");
}

/// Finding 1, effects mode: the same refused view writes nothing on the
/// master (the reply is an error, so nothing may be half-written).
#[test]
fn suspicious_view_denied_by_acl_writes_nothing() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let mut m = master.conn();
    let b = "hot:{sus}";
    let t0 = now_s() * 1000 - 100_000;
    let mut lim = sus_board_and_user(&master, &mut m, b);
    ok(&mut lim, &["HOT.VIEW", b, "a1", "v", "AT", &ts(t0)]);
    let before = keys_and_values(&mut m);
    let e = q(&mut lim, &["HOT.VIEW", b, "a2", "v", "AT", &ts(t0 + 1)]).unwrap_err();
    assert!(e.to_string().to_lowercase().contains("noperm"), "{e}");
    assert_eq!(keys_and_values(&mut m), before, "a refused view wrote");
}

/// The invariant HOT.VIEW's lookup rests on (`K\0board` exists ⇒ the
/// epoch is 0), checked after each step of drops, re-creations, settings
/// changes, takedowns and an epoch key that expires; and after each view
/// HOT.STATS (which reads the epoch key first) sees it. Passes: no module
/// path breaks the invariant.
#[test]
fn no_module_path_leaves_an_epoch_zero_record_beside_an_epoch_key() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let replica = replica_of(&master, true);
    let (mut m, mut r) = (master.conn(), replica.conn());
    // Short guard time: the epoch key expires 2 s after the steps.
    config_set(&mut m, "hotrank.dedup-seconds", "1");
    config_set(&mut m, "hotrank.visitor-window-seconds", "1");
    let b = "hot:{inv}";
    let rec0 = b"hot:{inv}\0board".as_slice();
    let ep = b"hot:{inv}\0ep".as_slice();
    let t0 = now_s() * 1000 - 100_000;
    let mut n = 0i64;
    let check = |c: &mut Connection, what: &str| {
        assert!(
            !(exists(c, rec0) && exists(c, ep)),
            "epoch-0 record beside the epoch key after {what}"
        );
    };
    let mut view = |c: &mut Connection, art: &str| {
        n += 1;
        ok(
            c,
            &["HOT.VIEW", b, art, &format!("v{n}"), "AT", &ts(t0 + n)],
        );
        let pv: redis::Value = ok(c, &["HOT.STATS", b, art]);
        assert!(
            !matches!(pv, redis::Value::Nil),
            "HOT.STATS does not see the view of {art}"
        );
    };
    for mode in ["effects", "commands"] {
        config_set(&mut m, "hotrank.replicate", mode);
        view(&mut m, "a");
        check(&mut m, "view");
        ok(&mut m, &["HOT.DROP", b]);
        check(&mut m, "drop");
        ok(&mut m, &["HOT.CREATE", b, "DEDUP-SECONDS", "0"]);
        check(&mut m, "create after drop");
        view(&mut m, "b");
        ok(&mut m, &["HOT.ALTER", b, "ALPHA", "2"]);
        ok(&mut m, &["HOT.PUBLISH", b, "c", &ts(t0)]);
        check(&mut m, "alter/publish");
        ok(&mut m, &["HOT.REM", b, "b"]);
        check(&mut m, "rem");
        ok(&mut m, &["HOT.DROP", b]);
        check(&mut m, "second drop");
        // Steps, then the epoch key expires (nothing written meanwhile).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while exists(&mut m, ep) {
            assert!(std::time::Instant::now() < deadline, "epoch key stays");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        view(&mut m, "d");
        check(&mut m, "view after the epoch key expired");
        ok(&mut m, &["HOT.DROP", b]);
        view(&mut m, "e");
        check(&mut m, "view after a third drop");
        wait_replica(&mut m);
        check(&mut r, "replication");
        ok(&mut m, &["HOT.DROP", b]);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while exists(&mut m, ep) {
            assert!(std::time::Instant::now() < deadline, "epoch key stays");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    wait_replica(&mut m);
    assert_eq!(digest(&mut r), digest(&mut m));
}

/// Finding 2 (user writes): the board record of epoch 0 put back by a user
/// (RESTORE from a backup taken before a HOT.DROP, or a key copy) beside
/// the epoch key. HOT.VIEW now trusts `K\0board` and writes epoch-0 keys,
/// while HOT.STATS/TOP/INFO read the epoch key first and look at epoch 1:
/// a counted view that HOT.STATS does not see. Before the change HOT.VIEW
/// also went to epoch 1 (the restored record was ignored).
#[test]
fn a_restored_pre_drop_record_does_not_split_views_from_reads() {
    let s = Server::start_with(&DEBUG_LOCAL, true);
    let mut c = s.conn();
    let b = "hot:{rs}";
    let rec0 = b"hot:{rs}\0board".as_slice();
    let t0 = now_s() * 1000 - 100_000;
    ok(&mut c, &["HOT.VIEW", b, "a", "v1", "AT", &ts(t0)]);
    let dump: Vec<u8> = redis::cmd("DUMP").arg(rec0).query(&mut c).expect("DUMP");
    ok(&mut c, &["HOT.DROP", b]);
    let () = redis::cmd("RESTORE")
        .arg(rec0)
        .arg(0)
        .arg(dump)
        .query(&mut c)
        .expect("RESTORE");
    ok(&mut c, &["HOT.VIEW", b, "z", "v2", "AT", &ts(t0 + 1)]);
    let stats = ok(&mut c, &["HOT.STATS", b, "z"]);
    assert!(
        !matches!(stats, redis::Value::Nil),
        "HOT.STATS does not see the counted view of z"
    );
    let top: Vec<String> = redis::cmd("HOT.TOP").arg(b).query(&mut c).expect("HOT.TOP");
    assert_eq!(top, vec!["z".to_string()]);
    // The first drop's steps (epoch 0's article keys) leave the restored
    // board alone, since it lives at epoch 0 again.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pv = |c: &mut Connection, art: &str| -> i64 {
        let stats: Vec<redis::Value> = redis::cmd("HOT.STATS")
            .arg(b)
            .arg(art)
            .query(c)
            .expect("HOT.STATS");
        match &stats[1] {
            redis::Value::Int(n) => *n,
            other => panic!("pv {other:?}"),
        }
    };
    assert_eq!(
        pv(&mut c, "z"),
        1,
        "the restored board's article was deleted"
    );
    // Dropped again: the next board is new, past both epochs.
    ok(&mut c, &["HOT.DROP", b]);
    ok(&mut c, &["HOT.VIEW", b, "z", "v2", "AT", &ts(t0 + 2)]);
    assert_eq!(pv(&mut c, "z"), 1, "a board after the second drop is new");
    let ep: String = redis::cmd("GET")
        .arg(b"hot:{rs}\0ep".as_slice())
        .query(&mut c)
        .expect("GET");
    assert_eq!(ep, "2");
}

/// Finding 3 (compatibility): an AOF written in `commands` mode by the
/// previous code holds `HOT.VIEW K a v AT t CLOCK c` with no upkeep effects
/// after it (the old replica/AOF load ran upkeep itself). The new code runs
/// no upkeep for a view from the AOF, and the old format cannot be told
/// from the new one, so such an AOF loads to an untrimmed board: here 40
/// articles on a board of MAX-ARTICLES 1, where the master that wrote the
/// AOF held at most 1 + 16 (trim slack).
#[test]
fn an_old_commands_mode_aof_loads_with_its_upkeep() {
    let mut n = Node::new("review-old-aof");
    let t0 = now_s() * 1000 - 100_000;
    let mut aof = Vec::new();
    let mut push = |args: &[String]| {
        aof.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
        for a in args {
            aof.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
        }
    };
    push(&["SELECT".into(), "0".into()]);
    push(&[
        "HOT.CREATE".into(),
        "hot:{old}".into(),
        "MAX-ARTICLES".into(),
        "1".into(),
        "DEDUP-SECONDS".into(),
        "0".into(),
    ]);
    for i in 0..40 {
        let t = ts(t0 + i);
        push(&[
            "HOT.VIEW".into(),
            "hot:{old}".into(),
            format!("a{i}"),
            "v".into(),
            "AT".into(),
            t,
            "CLOCK".into(),
            (t0 + i).to_string(),
        ]);
    }
    std::fs::write(n.dir.join("appendonly.aof"), &aof).expect("write AOF");
    n.start(&["--appendonly", "yes"]);
    let mut c = n.conn();
    let card: i64 = redis::cmd("ZCARD")
        .arg("hot:{old}")
        .query(&mut c)
        .expect("ZCARD");
    assert!(card <= 17, "board not trimmed on load: {card} articles");
}

/// Upkeep (trim, retention front sweep, index sweep) replicated after the
/// view inside MULTI/EXEC and Lua, in both modes, and a front article
/// whose counter the master expires lazily in the middle of the view:
/// replica and master keep the same digest. Passes.
#[test]
fn upkeep_inside_multi_and_lua_and_after_a_lazy_expiry_replicates_in_order() {
    let master = Server::start_with(&DEBUG_LOCAL, true);
    let replica = replica_of(&master, true);
    let (mut m, mut r) = (master.conn(), replica.conn());
    let t0 = now_s() * 1000 - 100_000;
    ok(&mut m, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    for (mode, b) in [("effects", "hot:{up1}"), ("commands", "hot:{up2}")] {
        config_set(&mut m, "hotrank.replicate", mode);
        ok(
            &mut m,
            &["HOT.CREATE", b, "MAX-ARTICLES", "1", "DEDUP-SECONDS", "0"],
        );
        let mut pipe = redis::pipe();
        pipe.atomic();
        for i in 0..20 {
            pipe.cmd("HOT.VIEW")
                .arg(b)
                .arg(format!("m{i}"))
                .arg("v")
                .arg("AT")
                .arg(ts(t0 + i));
        }
        let _: redis::Value = pipe.query(&mut m).expect("MULTI");
        let script = "for i = 1, 20 do redis.call('HOT.VIEW', KEYS[1], 'l' .. i, 'v', 'AT', ARGV[1]) end return 1";
        let _: i64 = redis::cmd("EVAL")
            .arg(script)
            .arg(1)
            .arg(b)
            .arg(ts(t0 + 100))
            .query(&mut m)
            .expect("EVAL");
        wait_replica(&mut m);
        assert_eq!(digest(&mut r), digest(&mut m), "{mode}: MULTI/Lua");
        // The lowest article's counters expire (on the master's clock);
        // the next new article's upkeep finds it lazily and forgets it.
        let low: Vec<String> = redis::cmd("ZRANGE")
            .arg(b)
            .arg(0)
            .arg(0)
            .query(&mut m)
            .expect("ZRANGE");
        let pv = [b.as_bytes(), b"\0pv:", low[0].as_bytes()].concat();
        let _: i64 = redis::cmd("PEXPIRE")
            .arg(pv.as_slice())
            .arg(1)
            .query(&mut m)
            .expect("PEXPIRE");
        std::thread::sleep(std::time::Duration::from_millis(20));
        ok(&mut m, &["HOT.VIEW", b, "late", "v", "AT", &ts(t0 + 200)]);
        let on: Option<f64> = redis::cmd("ZSCORE")
            .arg(b)
            .arg(&low[0])
            .query(&mut m)
            .expect("ZSCORE");
        assert_eq!(on, None, "{mode}: the expired front article stays");
        wait_replica(&mut m);
        assert_eq!(keys_and_values(&mut r), keys_and_values(&mut m), "{mode}");
        assert_eq!(digest(&mut r), digest(&mut m), "{mode}: lazy expiry");
    }
}

/// HOT.DROP between views inside one MULTI/EXEC and a Lua script, in
/// `commands` mode: the views after the drop go to epoch 1 (HOT.STATS sees
/// them, the epoch-0 record is gone) and an AOF replay after `kill -9`
/// gives the same digest. Passes.
#[test]
fn commands_mode_drop_between_views_in_multi_and_lua_replays() {
    let mut n = Node::new("review-drop-multi");
    let extra = AOF_ALWAYS;
    n.start(&extra);
    let mut c = n.conn();
    config_set(&mut c, "hotrank.replicate", "commands");
    let b = "hot:{dm}";
    let t0 = now_s() * 1000 - 100_000;
    let mut pipe = redis::pipe();
    pipe.atomic();
    pipe.cmd("HOT.VIEW")
        .arg(b)
        .arg("a")
        .arg("v")
        .arg("AT")
        .arg(ts(t0));
    pipe.cmd("HOT.DROP").arg(b);
    pipe.cmd("HOT.VIEW")
        .arg(b)
        .arg("b")
        .arg("v")
        .arg("AT")
        .arg(ts(t0 + 1));
    let _: redis::Value = pipe.query(&mut c).expect("MULTI");
    let script = "redis.call('HOT.DROP', KEYS[1]) redis.call('HOT.VIEW', KEYS[1], 'c', 'v', 'AT', ARGV[1]) return 1";
    let _: i64 = redis::cmd("EVAL")
        .arg(script)
        .arg(1)
        .arg(b)
        .arg(ts(t0 + 2))
        .query(&mut c)
        .expect("EVAL");
    let ep: String = redis::cmd("GET")
        .arg(b"hot:{dm}\0ep".as_slice())
        .query(&mut c)
        .expect("GET ep");
    assert_eq!(ep, "2");
    assert!(!exists(&mut c, b"hot:{dm}\0board"));
    let stats = ok(&mut c, &["HOT.STATS", b, "c"]);
    assert!(!matches!(stats, redis::Value::Nil));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while exists(&mut c, b"hot:{dm}\0ix") || exists(&mut c, b"hot:{dm}\0~1:ix") {
        assert!(std::time::Instant::now() < deadline, "steps did not finish");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let d = digest(&mut c);
    n.kill9();
    n.start(&extra);
    let mut c = n.conn();
    assert_eq!(digest(&mut c), d, "AOF replay differs");
}
