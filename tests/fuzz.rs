//! Live-server fuzzer of every `HOT.*` and `RANK.*` command.
//!
//! `fuzz_every_command_keeps_the_server_alive_and_replies_well_formed` sends
//! `HOTRANK_FUZZ_N` (default 1,000,000) random invocations, pipelined in
//! batches of 1000, alternating a RESP2 and a RESP3 connection. Half of them
//! are shaped like the command's syntax (then mutated), half are a random
//! arity (0–10) of random tokens: raw bytes, NaN/inf/1e400/2^63 and other
//! edge numbers, empty and space-padded strings, 64 KiB strings, option
//! words in random places, times in the past and the future, and keys of
//! other types (string, list, hash, set, plain ZSET, stream) or corrupt
//! derived keys (bad counters, bad HyperLogLogs, bad layouts, foreign ZSET
//! scores) under names the fuzzer uses as boards. Now and then it changes a
//! `hotrank.*` config. Checks: every reply parses (errors are fine; a
//! connection or parse error fails the test), the server answers PING after
//! every batch and its process is alive, no reply is the panic-guard error and
//! `INFO hotrank` `panics_caught` stays 0.
//!
//! `failed_and_read_only_commands_write_nothing` runs random invocations one
//! at a time between two `DEBUG DIGEST`s: a failed command and a read-only
//! command must leave the dataset digest unchanged.
//!
//! Seeded: the seed is printed; `HOTRANK_FUZZ_SEED` reruns one. On a failure
//! the offending batch is written to `target/fuzz-failure-<seed>-<batch>.txt`.

mod common;
use common::*;
#[path = "common/fuzz_gen.rs"]
mod fuzz_gen;
use fuzz_gen::*;
#[path = "common/fuzz_server.rs"]
mod fuzz_server;
use fuzz_server::*;
use redis::Value;
use std::collections::BTreeMap;
use std::time::Instant;

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[test]
fn fuzz_every_command_keeps_the_server_alive_and_replies_well_formed() {
    let total: usize = std::env::var("HOTRANK_FUZZ_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let seed = seed();
    println!("fuzz seed {seed} (HOTRANK_FUZZ_SEED={seed} reruns it), {total} invocations");
    let mut server = Server::start();
    let mut c2 = server.conn();
    let mut c3 = redis::Client::open(format!("{}?protocol=resp3", server.url()))
        .expect("client")
        .get_connection()
        .expect("RESP3 connection");
    set_defaults(&mut c2);
    plant(&mut c2);
    let mut g = Gen::new(seed);

    const BATCH: usize = 1000;
    let started = Instant::now();
    let mut sent = 0usize;
    let mut batch_no = 0usize;
    let mut codes: BTreeMap<String, u64> = BTreeMap::new();
    let mut per_cmd_ok: BTreeMap<String, u64> = BTreeMap::new();
    let mut panics: Vec<String> = Vec::new();
    while sent < total {
        let n = BATCH.min(total - sent);
        let cmds: Vec<Vec<Vec<u8>>> = (0..n).map(|_| g.invocation()).collect();
        let mut pipe = redis::pipe();
        for a in &cmds {
            pipe.add_command(cmd_of(a));
        }
        let conn = if batch_no.is_multiple_of(2) {
            &mut c2
        } else {
            &mut c3
        };
        let replies: Vec<Value> = match pipe.ignore_errors().query(conn) {
            Ok(r) => r,
            Err(e) => {
                let alive = server.alive();
                let path = dump_batch(seed, batch_no, &cmds, &format!("{e}"));
                panic!(
                    "batch {batch_no} (seed {seed}): the pipeline failed: {e}; server alive: {alive}; \
                     batch written to {path}"
                );
            }
        };
        assert_eq!(replies.len(), n, "batch {batch_no}: reply count");
        for (v, a) in replies.iter().zip(&cmds) {
            match error_code(v) {
                Some(code) => {
                    *codes.entry(code).or_default() += 1;
                    if error_text(v).contains("caught a panic") {
                        panics.push(show(a));
                    }
                }
                None => {
                    *per_cmd_ok
                        .entry(String::from_utf8_lossy(&a[0]).to_uppercase())
                        .or_default() += 1
                }
            }
        }
        let pong: String = redis::cmd("PING")
            .query(conn)
            .unwrap_or_else(|e| panic!("batch {batch_no} (seed {seed}): PING failed: {e}"));
        assert_eq!(pong, "PONG");
        assert!(
            server.alive(),
            "batch {batch_no} (seed {seed}): the server died"
        );
        assert!(
            panics.is_empty(),
            "seed {seed}, batch {batch_no}: caught panics on:\n  {}\n(batch written to {})",
            panics.join("\n  "),
            dump_batch(seed, batch_no, &cmds, "caught panic")
        );
        sent += n;
        batch_no += 1;
        trim_boards(&mut c2);
        if batch_no.is_multiple_of(100) {
            assert_eq!(
                info_hotrank(&mut c2).get("panics_caught").copied(),
                Some(0),
                "seed {seed}: panics_caught after batch {batch_no}"
            );
            // A fresh start now and then: boards are created again, layouts too.
            if batch_no.is_multiple_of(300) {
                let () = redis::cmd("FLUSHALL").query(&mut c2).expect("FLUSHALL");
                set_defaults(&mut c2);
                plant(&mut c2);
            }
        }
        if batch_no.is_multiple_of(20) {
            // Back to sane configs after the fuzzer changed them for a while,
            // and the planted keys again (views may have deleted some).
            set_defaults(&mut c2);
            plant(&mut c2);
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let info = info_hotrank(&mut c2);
    println!(
        "{sent} invocations in {elapsed:.1} s ({:.0}/s); successes by command: {per_cmd_ok:?}; \
         errors by code: {codes:?}; INFO hotrank: {info:?}",
        sent as f64 / elapsed
    );
    assert_eq!(info.get("panics_caught").copied(), Some(0), "seed {seed}");
    // Every error is one the module documents.
    for code in codes.keys() {
        assert!(
            ["ERR", "WRONGTYPE", "INVALIDOBJ"].contains(&code.as_str()),
            "seed {seed}: unexpected error code {code} ({codes:?})"
        );
    }
    // The fuzzer reached the real work of every command, not only its errors.
    for cmd in COMMANDS {
        assert!(
            per_cmd_ok.get(cmd).copied().unwrap_or(0) > 0,
            "seed {seed}: {cmd} never succeeded ({per_cmd_ok:?})"
        );
    }
    assert!(info.get("views_counted").copied().unwrap_or(0) > 0);
    assert!(
        info.get("trims").copied().unwrap_or(0) > 0,
        "no trim ran: {info:?}"
    );
}

#[test]
fn failed_and_read_only_commands_write_nothing() {
    let n: usize = std::env::var("HOTRANK_FUZZ_N")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map(|v| (v / 50).max(100))
        .unwrap_or(20_000);
    let raw_seed = seed();
    let seed = raw_seed ^ 0x5a5a;
    println!("digest fuzz: HOTRANK_FUZZ_SEED={raw_seed} reruns it, {n} invocations");
    let mut server = Server::start_with(&["--enable-debug-command", "yes"], true);
    let mut c = server.conn();
    // The server's own expiry cycle (serverCron, between two commands of a
    // pipeline) deletes keys whose TTL passed: a change no command made, which
    // a slow machine turned into a failure of whatever command ran beside it
    // (`RANK.REM … -> ERR corrupt RANK layout key`, "no change on replay").
    // Only the commands' own (lazy) expiry is left.
    let () = redis::cmd("DEBUG")
        .arg("SET-ACTIVE-EXPIRE")
        .arg(0)
        .query(&mut c)
        .expect("DEBUG SET-ACTIVE-EXPIRE 0");
    set_defaults(&mut c);
    plant(&mut c);
    let mut g = Gen::new(seed);
    let mut done = 0;
    let mut checked_failures = 0;
    let mut checked_reads = 0;
    let mut problems = Vec::new();
    while done < n {
        let k = 200.min(n - done);
        let mut cmds = Vec::with_capacity(k);
        while cmds.len() < k {
            let a = g.invocation();
            if a[0] != b"CONFIG" {
                cmds.push(a);
            }
        }
        let start = keyspace(&mut c);
        let mut pipe = redis::pipe();
        pipe.cmd("DEBUG").arg("DIGEST");
        for a in &cmds {
            pipe.add_command(cmd_of(a));
            pipe.cmd("DEBUG").arg("DIGEST");
        }
        let r: Vec<Value> = pipe
            .ignore_errors()
            .query(&mut c)
            .unwrap_or_else(|e| panic!("seed {seed}: pipeline failed: {e}"));
        for (i, a) in cmds.iter().enumerate() {
            let (before, reply, after) = (&r[2 * i], &r[2 * i + 1], &r[2 * i + 2]);
            let name = String::from_utf8_lossy(&a[0]).to_uppercase();
            let failed = matches!(reply, Value::ServerError(_));
            let read_only = READ_ONLY.contains(&name.as_str());
            if failed {
                checked_failures += 1;
            } else if read_only {
                checked_reads += 1;
            }
            if (failed || read_only) && before != after && problems.len() < 10 {
                problems.push((
                    format!(
                        "{} -> {}",
                        show(a),
                        if failed {
                            error_text(reply)
                        } else {
                            format!("{reply:?}")
                        }
                    ),
                    start.clone(),
                    cmds[..=i].to_vec(),
                ));
            }
        }
        assert!(server.alive());
        done += k;
        // A small dataset keeps DEBUG DIGEST cheap.
        if done % 2000 == 0 {
            let () = redis::cmd("FLUSHALL").query(&mut c).expect("FLUSHALL");
            plant(&mut c);
        }
    }
    println!("{checked_failures} failed and {checked_reads} read-only invocations checked");
    assert!(checked_failures > n / 4 && checked_reads > n / 20);
    // Replays each offending invocation from the snapshot taken before its
    // batch, to show which keys it changed.
    let mut report = Vec::new();
    for (what, snap, prefix) in &problems {
        let (last, before_it) = prefix.split_last().unwrap();
        restore_snapshot(&mut c, snap);
        for a in before_it {
            let _: redis::RedisResult<Value> = cmd_of(a).query(&mut c);
        }
        let before = keyspace(&mut c);
        let _: redis::RedisResult<Value> = cmd_of(last).query(&mut c);
        let after = keyspace(&mut c);
        report.push(format!("{what}\n      replayed: {}", diff(&before, &after)));
    }
    assert!(
        problems.is_empty(),
        "HOTRANK_FUZZ_SEED={raw_seed}: {} invocations changed the dataset although they failed \
         or are read-only:\n  {}",
        problems.len(),
        report.join("\n  ")
    );
}
