//! The module returns what it allocates. Every Rust allocation of the module
//! and every string or call reply it takes from the server goes through the
//! server's allocator, so a leak shows up in `used_memory`: after many
//! commands (successes and errors) and FLUSHALL, used_memory must come back
//! to where it was after the same warm-up.
mod common;
use common::*;

fn used_memory(c: &mut redis::Connection) -> i64 {
    let info: String = redis::cmd("INFO").arg("memory").query(c).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("used_memory")
}

fn workload(c: &mut redis::Connection, round: u64) {
    let now = now_s();
    let mut p = redis::pipe();
    for i in 0..2000u64 {
        let art = format!("a{}", (i * 7 + round) % 300);
        let vis = format!("v{}", (i * 13) % 997);
        p.cmd("HOT.VIEW")
            .arg("hot:{m}")
            .arg(&art)
            .arg(&vis)
            .arg("AT")
            .arg(now - 5000 + (i as i64 % 4000))
            .ignore();
        p.cmd("HOT.TOP")
            .arg("hot:{m}")
            .arg("LIMIT")
            .arg(20)
            .arg("WINDOW")
            .arg("1h")
            .arg("WITHSCORES")
            .ignore();
        p.cmd("HOT.STATS").arg("hot:{m}").arg(&art).ignore();
        p.cmd("RANK.INCR")
            .arg("lb:{m}")
            .arg(&vis)
            .arg((i % 11) as i64 - 5)
            .ignore();
        p.cmd("RANK.AROUND").arg("lb:{m}").arg(&vis).arg(3).ignore();
        p.cmd("RANK.RANGEBYSCORE")
            .arg("lb:{m}")
            .arg(-3)
            .arg(3)
            .arg("WITHSCORES")
            .ignore();
        p.cmd("RANK.RANK")
            .arg("lb:{m}")
            .arg(&vis)
            .arg("TIES")
            .ignore();
        // Errors go through the same allocations.
        p.cmd("HOT.VIEW")
            .arg("hot:{m}")
            .arg(&art)
            .arg(&vis)
            .arg("AT")
            .arg("nan")
            .ignore();
        p.cmd("RANK.SET")
            .arg("lb:{m}")
            .arg(&vis)
            .arg("99999999999999")
            .ignore();
        p.cmd("HOT.TOP").arg("hot:{m}").arg("BOGUS").ignore();
    }
    // Replies include errors; the pipeline as a whole must go through.
    let _: redis::RedisResult<()> = p.query(c);
    let _: redis::Value = redis::cmd("PING").query(c).unwrap();
}

#[test]
fn used_memory_returns_to_its_baseline_after_many_commands() {
    let s = Server::start();
    let mut c = s.conn();
    // Warm-up: first use of every path allocates lasting things (statics,
    // the server's own caches), which are not leaks.
    workload(&mut c, 0);
    let _: () = redis::cmd("FLUSHALL").arg("SYNC").query(&mut c).unwrap();
    let base = used_memory(&mut c);
    for round in 1..=5 {
        workload(&mut c, round);
    }
    let _: () = redis::cmd("FLUSHALL").arg("SYNC").query(&mut c).unwrap();
    let after = used_memory(&mut c);
    // 5 rounds × 20,000 commands: leaking even 8 bytes per command would be
    // 800 KB; allow 64 KiB of noise (client buffers, allocator bins).
    assert!(
        after - base < 64 * 1024,
        "used_memory grew by {} bytes",
        after - base
    );
}
